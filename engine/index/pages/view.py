"""One shard of the page store as the searcher sees it, and the exact scan of it: which
pages a query selects (workspace, documents, named keys) and their MaxSim scores over the
shard's memory map (:func:`docray.kernels.maxsim.maxsim`)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Optional

import numpy as np
import torch

from docray.kernels.maxsim import maxsim

if TYPE_CHECKING:
    from .store import PageRef


@dataclass
class ShardView:
    """One shard as the searcher sees it: mapped tokens and per-page columns sorted by start."""

    tokens: torch.Tensor  # (n_rows, dim)
    scales: Optional[torch.Tensor]  # (n_rows,) or None
    starts: np.ndarray  # (n_pages,)
    lengths: np.ndarray  # (n_pages,)
    live: np.ndarray  # (n_pages,) bool
    refs: list[PageRef]
    ids: np.ndarray  # (n_pages,) catalog row ids
    workspaces: np.ndarray = field(init=False)  # (n_pages,) str, for vectorised selection
    docs: np.ndarray = field(init=False)  # (n_pages,) str
    keys: np.ndarray = field(init=False)  # (n_pages,) str page keys

    def __post_init__(self) -> None:
        self.workspaces = np.array([r.workspace for r in self.refs], dtype=object)
        self.docs = np.array([r.doc_id for r in self.refs], dtype=object)
        self.keys = np.array([r.key for r in self.refs], dtype=object)

    def page_tokens(self, i: int) -> torch.Tensor:
        """Page ``i``'s tokens in fp32 (n_tok, dim), int8 rows rescaled."""
        a, n = int(self.starts[i]), int(self.lengths[i])
        tok = self.tokens[a:a + n].float()
        return tok if self.scales is None else tok * self.scales[a:a + n, None]


def merge_runs(starts: np.ndarray, lengths: np.ndarray) -> list[tuple[int, int]]:
    """(start, length) runs of sorted adjacent pages merged: fewer, larger copies.

    >>> merge_runs(np.array([0, 5, 9, 20]), np.array([5, 4, 2, 3]))
    [(0, 11), (20, 3)]
    """
    runs: list[tuple[int, int]] = []
    for a, n in zip(starts.tolist(), lengths.tolist()):
        if runs and runs[-1][0] + runs[-1][1] == a:
            runs[-1] = (runs[-1][0], runs[-1][1] + n)
        else:
            runs.append((a, n))
    return runs


def gather(rows: torch.Tensor, runs: list[tuple[int, int]]) -> torch.Tensor:
    """The rows of ``runs`` in order: a view of the memory map when they are one run (a
    scoped query's document is one run), a copy otherwise."""
    if len(runs) == 1:
        a, n = runs[0]
        return rows[a:a + n]
    return torch.cat([rows[a:a + n] for a, n in runs])


def select_rows(view: ShardView, rows: np.ndarray, workspace: Optional[str],
                docs: Optional[set]) -> np.ndarray:
    """The pages among ``rows`` (named by key) that are in ``workspace`` and ``docs``, as a
    mask over the shard's pages."""
    ok = np.ones(len(rows), dtype=bool)  # (n_rows_named,)
    if workspace is not None:
        ok &= view.workspaces[rows] == workspace
    if docs is not None:
        ok &= np.fromiter((d in docs for d in view.docs[rows]), bool, len(rows))
    sel = np.zeros(len(view.live), dtype=bool)  # (n_pages,)
    sel[rows[ok]] = True
    return sel


def select(view: ShardView, workspace: Optional[str], docs: Optional[set]) -> np.ndarray:
    """The live pages of the shard in ``workspace`` and ``docs`` (None: any), as a mask."""
    sel = view.live.copy()  # (n_pages,)
    if workspace is not None:
        sel &= view.workspaces == workspace
    if docs is not None:
        sel &= np.fromiter((d in docs for d in view.docs), bool, len(sel))
    return sel


def score_selected(view: ShardView, qs: list[torch.Tensor], sel: np.ndarray, compute: str
                   ) -> torch.Tensor:
    """Scores of the selected pages of one shard -> (n_queries, n_sel)."""
    idx = np.nonzero(sel)[0]
    if view.lengths[idx].sum() * 2 >= view.lengths.sum():  # most of the shard: score it whole
        offsets = np.append(view.starts, view.starts[-1] + view.lengths[-1])  # (n_pages + 1,)
        return maxsim(qs, view.tokens, offsets, view.scales, compute=compute)[:, idx]
    runs = merge_runs(view.starts[idx], view.lengths[idx])
    tokens = gather(view.tokens, runs)  # (n_sel_tok, dim)
    scales = gather(view.scales, runs) if view.scales is not None else None
    offsets = np.concatenate([[0], np.cumsum(view.lengths[idx])])  # (n_sel + 1,)
    return maxsim(qs, tokens, offsets, scales, compute=compute)
