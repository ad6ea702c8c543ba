"""``docray serve``: start the Serve app, print its URL, stop gracefully on a signal.

SIGTERM (systemd, Docker, Kubernetes) and SIGINT (Ctrl-C) both start a graceful stop:
the Ingress replicas refuse new work with 503 + Retry-After, the requests and upload jobs
already admitted finish (bounded by ``limits.drain_timeout_s``), then Serve stops, then
Ray if this process started it, then the milvus-lite server. The exit code is 0. A second
signal while draining skips the wait.
"""
from __future__ import annotations

import signal
import threading
from pathlib import Path
from typing import Optional

import typer

from docray.engine.cli.base import CONFIG_OPTION, app, err, friendly, load, out


class StopSignal:
    """Turns SIGTERM/SIGINT into events the main thread waits on."""

    def __init__(self):
        self.first, self.second = threading.Event(), threading.Event()

    def _handle(self, signum, _frame) -> None:
        (self.second if self.first.is_set() else self.first).set()
        err.print(f"{signal.Signals(signum).name}: "
                  f"{'stopping now' if self.second.is_set() else 'draining, then stopping'}")

    def install(self) -> None:
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, self._handle)


def run_serve(config: Optional[Path], serve_config: Optional[Path], host: Optional[str],
              port: Optional[int]) -> None:
    from docray.serve_apps.runner import ServeRunner
    from docray.serve_apps.settings import load_serve_settings

    cfg = load(config)
    if host:
        cfg.serve.host = host
    if port:
        cfg.serve.port = port
    settings = load_serve_settings(serve_config or cfg.serve.config_file)
    runner = ServeRunner(cfg, settings)
    stop = StopSignal()
    stop.install()
    # Ray's init sets its own SIGTERM handlers (Python's sys.exit, then its C++ abort):
    # take SIGTERM back as soon as Ray is up. A signal during start-up stops once it is up.
    url = runner.start(after_ray=stop.install)
    out.print(f"docray serving at [bold]{url}[/bold]  (API docs: {url}/docs; "
              "Ctrl-C or SIGTERM stops)", highlight=False)
    if runner.milvus is not None:
        out.print(f"milvus-lite server: {runner.milvus.uri} (db {runner.milvus.db})",
                  highlight=False)
    try:
        while not stop.first.wait(0.5):
            pass
        drainer = threading.Thread(target=runner.drain, daemon=True)
        drainer.start()
        while drainer.is_alive() and not stop.second.is_set():
            drainer.join(0.1)
    finally:
        runner.stop()
    out.print("stopped")


@app.command()
@friendly
def serve(config: Optional[Path] = CONFIG_OPTION,
          serve_config: Optional[Path] = typer.Option(
              None, "--serve-config", help="Deployment settings (default: the config's "
              "serve.config_file, configs/serve/local.yaml)."),
          host: Optional[str] = typer.Option(None, "--host", help="Bind address (default "
                                             "serve.host, 127.0.0.1)."),
          port: Optional[int] = typer.Option(None, "--port", min=1, max=65535,
                                             help="HTTP port (default serve.port, 8000).")):
    """Serve the query API (Ray Serve): one deployment per stage, until SIGTERM/Ctrl-C."""
    run_serve(config, serve_config, host, port)
