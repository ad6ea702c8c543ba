"""serve_apps/build.py app_builder: the Serve application builder a RayService names.
Building the Application graph needs no Ray cluster."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from ray.serve.deployment import Application

from docray.engine.errors import ConfigError
from docray.serve_apps.build import app_builder

REPO = Path(__file__).resolve().parents[2]
CLUSTER = REPO / "configs" / "cluster.yaml"


def _ingress_options(app: Application) -> dict:
    return app._bound_deployment.ray_actor_options


def test_builds_from_the_cluster_config_and_its_serve_settings(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # the serve config is found beside configs/, not via the cwd
    app = app_builder({"config": str(CLUSTER)})
    assert isinstance(app, Application)
    assert app._bound_deployment.name == "Ingress"
    assert _ingress_options(app)["num_cpus"] == 0.5  # configs/serve/gpu.yaml, not local.yaml


def test_explicit_serve_config_wins(monkeypatch):
    monkeypatch.chdir(REPO)
    app = app_builder({"config": str(CLUSTER),
                       "serve_config": str(REPO / "configs" / "serve" / "load.yaml")})
    assert _ingress_options(app)["num_cpus"] == 0.1


def test_a_milvus_lite_file_is_refused_with_the_field(tmp_path):
    cfg = yaml.safe_load(CLUSTER.read_text())
    cfg["milvus"]["uri"] = "milvus.db"
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(cfg))
    with pytest.raises(ConfigError, match="milvus.uri='milvus.db'"):
        app_builder({"config": str(path), "serve_config": str(REPO / "configs/serve/gpu.yaml")})


def test_unknown_args_are_named():
    with pytest.raises(ConfigError, match="confg"):
        app_builder({"confg": str(CLUSTER)})
