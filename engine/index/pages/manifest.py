"""``manifest.json`` of a page store: what wrote it, checked on every open.

Fields: ``schema_version`` (layout of the files below; a different one is refused),
``engine_version`` (docray that last wrote it; informational), ``encoder`` (page encoder
name), ``dim`` (token width), ``dtype`` (``fp16`` or ``int8`` with per-token fp32 scales),
``count`` (live pages at the last write; refreshed from the catalog, which is authoritative).
"""
from __future__ import annotations

import json
import logging
import os
import pathlib
from dataclasses import asdict, dataclass
from importlib import metadata
from typing import Optional

from docray.engine.errors import Corrupt

logger = logging.getLogger(__name__)

SCHEMA_VERSION = 1
DTYPES = ("fp16", "int8")
FILENAME = "manifest.json"


def engine_version() -> str:
    try:
        return metadata.version("docray")
    except metadata.PackageNotFoundError:  # pragma: no cover - running from a bare checkout
        return "0+unknown"


@dataclass
class Manifest:
    encoder: str
    dim: int
    dtype: str
    count: int = 0
    schema_version: int = SCHEMA_VERSION
    engine_version: str = ""

    def write(self, folder: pathlib.Path) -> None:
        """Atomic replace: write a temp file, fsync, rename over the old manifest."""
        self.engine_version = engine_version()
        tmp = folder / (FILENAME + ".tmp")
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(asdict(self), fh, indent=2, sort_keys=True)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, folder / FILENAME)


def read_manifest(folder: pathlib.Path) -> Manifest:
    """Parse ``folder/manifest.json``; anything unreadable or malformed is :class:`Corrupt`."""
    path = folder / FILENAME
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        fields = {k: raw[k] for k in ("encoder", "dim", "dtype", "count", "schema_version", "engine_version")}
        return Manifest(**fields)
    except FileNotFoundError as exc:
        raise Corrupt(str(path), "manifest.json is missing; this folder is not a page store") from exc
    except (ValueError, KeyError, TypeError) as exc:
        raise Corrupt(str(path), f"manifest.json is unreadable or incomplete ({exc!r})") from exc


def check_manifest(
    found: Manifest, folder: pathlib.Path, encoder: Optional[str], dim: Optional[int], dtype: Optional[str]
) -> None:
    """Raise :class:`Corrupt` naming the field when the store does not match what opens it."""
    path = str(folder / FILENAME)
    if found.schema_version != SCHEMA_VERSION:
        raise Corrupt(path, f"schema_version {found.schema_version} is not supported (this docray reads "
                            f"{SCHEMA_VERSION}); re-index the pages or open with a matching docray")
    if found.dtype not in DTYPES:
        raise Corrupt(path, f"dtype {found.dtype!r} is not one of {DTYPES}")
    wanted = {"encoder": encoder, "dim": dim, "dtype": dtype}
    for field, want in wanted.items():
        have = getattr(found, field)
        if want is not None and have != want:
            raise Corrupt(path, f"{field} mismatch: the store holds {have!r} but {want!r} was requested; "
                                f"open it with {field}={have!r} or index into a new folder")
    if found.engine_version != engine_version():
        logger.info("page store %s was written by docray %s (this is %s)", folder, found.engine_version,
                    engine_version())
