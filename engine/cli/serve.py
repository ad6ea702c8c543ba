"""``docray serve``: start the Serve app, print its URL, run until Ctrl-C."""
from __future__ import annotations

import time
from pathlib import Path
from typing import Optional

from rich.console import Console

out = Console()


def run_serve(config: Optional[Path], serve_config: Optional[Path], host: Optional[str],
              port: Optional[int]) -> None:
    from docray.engine.config import load_config
    from docray.serve_apps.runner import ServeRunner
    from docray.serve_apps.settings import load_serve_settings

    cfg = load_config(config)
    if host:
        cfg.serve.host = host
    if port:
        cfg.serve.port = port
    settings = load_serve_settings(serve_config or cfg.serve.config_file)
    runner = ServeRunner(cfg, settings)
    url = runner.start()
    out.print(f"docray serving at [bold]{url}[/bold]  (API docs: {url}/docs; Ctrl-C stops)",
              highlight=False)
    if runner.milvus is not None:
        out.print(f"milvus-lite server: {runner.milvus.uri} (db {runner.milvus.db})",
                  highlight=False)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        out.print("stopping…")
    finally:
        runner.stop()
