"""Plan an ingestion run: expand paths, hash files, decide what to do per document.

* ``done`` in the catalog → skipped (re-ingesting the same bytes is a no-op);
* ``running`` (a crash or Ctrl-C mid-run) or ``failed`` → its partial rows are removed
  from every store, then it is ingested again;
* new → ingested.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from docray.engine.model import file_doc_id

log = logging.getLogger(__name__)

SUPPORTED = {".pdf", ".png", ".jpg", ".jpeg", ".tif", ".tiff", ".txt", ".md", ".json"}


@dataclass
class Plan:
    todo: list[dict] = field(default_factory=list)
    skipped: list[dict] = field(default_factory=list)
    failed: list[dict] = field(default_factory=list)


def expand(paths: list[str | Path]) -> list[Path]:
    """Files under the given paths (directories one level and below), sorted, deduplicated."""
    seen: dict[Path, None] = {}
    for p in map(Path, paths):
        if p.is_dir():
            for f in sorted(p.rglob("*")):
                if f.is_file() and f.suffix.lower() in SUPPORTED:
                    seen.setdefault(f.resolve(), None)
        else:
            seen.setdefault(p.resolve() if p.exists() else p, None)
    return list(seen)


def make_plan(paths: list[str | Path], workspace: str, stores) -> Plan:
    plan = Plan()
    by_id: dict[str, Path] = {}
    for path in expand(paths):
        row = {"path": str(path), "workspace": workspace, "filename": path.name}
        try:
            row["doc_id"] = file_doc_id(path)
        except OSError as err:
            row.update(doc_id=f"missing-{path.name}", status="failed",
                       error=f"cannot read file: {err.strerror or err}")
            plan.failed.append(row)
            continue
        if row["doc_id"] in by_id:
            log.info("%s has the same bytes as %s; skipped", path, by_id[row["doc_id"]])
            plan.skipped.append(row)
            continue
        by_id[row["doc_id"]] = path
        prior = stores.catalog.get(workspace, row["doc_id"])
        if prior and prior["status"] == "done":
            plan.skipped.append(row)
            continue
        if prior:  # running (crashed) or failed: clear partial rows before redoing
            stores.delete_doc(workspace, row["doc_id"], keep_catalog=True)
        stores.catalog.upsert(workspace, row["doc_id"], str(path), path.name, "running")
        plan.todo.append(row)
    return plan
