"""Append-only token shards: ``shards/<id>/tokens.bin`` (+ ``scales.bin`` for int8).

A shard is raw row-major token rows, (n_rows, dim) fp16 or int8; int8 rows have one fp32
scale each in ``scales.bin`` (token = scale * int8 row). Readers map the committed prefix
(``np.memmap`` copy-on-write, so torch can wrap it without a copy or a write to disk).
"""
from __future__ import annotations

import os
import pathlib
from dataclasses import dataclass
from typing import Optional

import numpy as np
import torch

from docray.engine.errors import Corrupt

NP_DTYPES = {"fp16": np.float16, "int8": np.int8}


def quantize_int8(tokens: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-token symmetric int8: (n_tok, dim) float -> (int8 (n_tok, dim), fp32 scales (n_tok,))."""
    x = tokens.astype(np.float32, copy=False)
    scales = np.maximum(np.abs(x).max(axis=1, initial=0.0), 1e-12) / 127.0  # (n_tok,)
    q = np.clip(np.rint(x / scales[:, None]), -127, 127).astype(np.int8)  # (n_tok, dim)
    return q, scales.astype(np.float32)


def encode(tokens: np.ndarray, dtype: str) -> tuple[np.ndarray, Optional[np.ndarray]]:
    """Storage form of one page's tokens -> (rows, scales or None)."""
    if dtype == "int8":
        return quantize_int8(tokens)
    return np.ascontiguousarray(tokens, dtype=np.float16), None


@dataclass
class ShardFiles:
    folder: pathlib.Path
    dtype: str
    dim: int

    @property
    def tokens_path(self) -> pathlib.Path:
        return self.folder / "tokens.bin"

    @property
    def scales_path(self) -> pathlib.Path:
        return self.folder / "scales.bin"

    @property
    def row_bytes(self) -> int:
        return self.dim * np.dtype(NP_DTYPES[self.dtype]).itemsize

    def append(self, committed_rows: int, rows: list[np.ndarray], scales: list[np.ndarray]) -> None:
        """Truncate to the committed prefix (drops bytes of a crashed append), append, fsync."""
        self.folder.mkdir(parents=True, exist_ok=True)
        self._append(self.tokens_path, committed_rows * self.row_bytes, rows)
        if self.dtype == "int8":
            self._append(self.scales_path, committed_rows * 4, scales)

    @staticmethod
    def _append(path: pathlib.Path, keep: int, parts: list[np.ndarray]) -> None:
        with open(path, "ab") as fh:
            size = fh.seek(0, os.SEEK_END)
            if size < keep:
                raise Corrupt(str(path), f"holds {size} bytes but the catalog commits {keep}; the shard is truncated")
            fh.truncate(keep)
            fh.seek(keep)
            for part in parts:
                fh.write(part.tobytes())
            fh.flush()
            os.fsync(fh.fileno())

    def open(self, n_rows: int) -> tuple[torch.Tensor, Optional[torch.Tensor]]:
        """Map the first ``n_rows`` rows -> (tokens (n_rows, dim), scales (n_rows,) or None)."""
        tokens = self._map(self.tokens_path, NP_DTYPES[self.dtype], n_rows, (n_rows, self.dim))
        scales = self._map(self.scales_path, np.float32, n_rows, (n_rows,)) if self.dtype == "int8" else None
        return tokens, scales

    @staticmethod
    def _map(path: pathlib.Path, dtype, n_rows: int, shape: tuple) -> torch.Tensor:
        if n_rows == 0:
            return torch.from_numpy(np.zeros(shape, dtype=dtype))
        need = int(np.prod(shape)) * np.dtype(dtype).itemsize
        size = path.stat().st_size if path.exists() else -1
        if size < need:
            raise Corrupt(str(path), f"holds {max(size, 0)} bytes but the catalog commits {need}; "
                                     "the shard is missing or truncated")
        return torch.from_numpy(np.memmap(path, dtype=dtype, mode="c", shape=shape))
