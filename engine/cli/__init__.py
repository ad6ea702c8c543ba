"""The ``docray`` command: one module per command, all on one Typer app.

``parse`` (parse.py), ``ingest`` and ``delete`` (ingest.py), ``query`` (query.py),
``demo`` (demo.py), ``serve`` (serve.py). Importing a command module registers it; the
heavy imports (Ray, models, stores) happen inside the commands.
"""
from __future__ import annotations

import sys

from docray.engine.cli import demo, ingest, parse, query, serve  # noqa: F401  (registers)
from docray.engine.cli.base import app, err

__all__ = ["app", "main"]


def main() -> None:
    """Console-script entry point."""
    try:
        app()
    except KeyboardInterrupt:
        err.print("interrupted")
        sys.exit(130)
