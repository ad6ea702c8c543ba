"""The one Typer app every ``docray`` command registers on, and what they share.

User-facing output (rich) lives in this package and only here. Every command turns
:class:`~docray.engine.errors.DocrayError` into a one-line message on stderr and a
non-zero exit code — no tracebacks for bad input.
"""
from __future__ import annotations

import logging
from functools import wraps
from pathlib import Path
from typing import Callable, Optional

import typer
from rich.console import Console

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="docray: multimodal document RAG on Ray.")
out = Console()
err = Console(stderr=True)
CONFIG_OPTION = typer.Option(None, "--config", help="YAML config (default: configs/local.yaml "
                             "or DOCRAY_CONFIG).")


def friendly(fn: Callable) -> Callable:
    """Turn docray's own errors into one line on stderr and exit code 2."""
    from docray.engine.errors import DocrayError

    @wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except DocrayError as e:
            err.print(f"[red]error:[/red] {e}", highlight=False, soft_wrap=True)
            raise typer.Exit(2) from None
    return wrapper


def load(path: Optional[Path]):
    """The validated config from ``--config`` (or the loader's defaults)."""
    from docray.engine.config import load_config

    return load_config(path)


@app.callback()
def _main(verbose: bool = typer.Option(False, "--verbose", "-v", help="Debug logging.")):
    logging.basicConfig(level=logging.DEBUG if verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
