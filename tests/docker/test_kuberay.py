"""docker/kuberay-rayservice.yaml: the fields KubeRay's RayService requires, and that its
Serve config builds docray's application from the configs the image holds."""
from __future__ import annotations

import re
import tomllib
from pathlib import Path
from urllib.parse import urlparse

import pytest
import yaml
from deploy_files import DOCKER, REPO

from docray.engine.config import load_config

MANIFEST = DOCKER / "kuberay-rayservice.yaml"
IMAGE_ROOT = "/app"  # WORKDIR of docker/Dockerfile.gpu


@pytest.fixture(scope="module")
def rs():
    return yaml.safe_load(MANIFEST.read_text())


@pytest.fixture(scope="module")
def serve_config(rs):
    return yaml.safe_load(rs["spec"]["serveConfigV2"])


def _groups(rs):
    cluster = rs["spec"]["rayClusterConfig"]
    return [("head", cluster["headGroupSpec"])] + [(g["groupName"], g)
                                                  for g in cluster["workerGroupSpecs"]]


def _repo_path(path: str) -> Path:
    return REPO / Path(path).relative_to(IMAGE_ROOT)


def test_kind_version_and_autoscaling(rs):
    assert rs["apiVersion"] == "ray.io/v1" and rs["kind"] == "RayService"
    assert rs["metadata"]["name"]
    cluster = rs["spec"]["rayClusterConfig"]
    assert cluster["enableInTreeAutoscaling"] is True
    pins = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    (ray_pin,) = [re.search(r"==([\d.]+)", d).group(1) for d in pins if d.startswith("ray[")]
    assert cluster["rayVersion"] == ray_pin


def test_groups_have_what_kuberay_requires(rs):
    groups = _groups(rs)
    assert [n for n, _ in groups][:1] == ["head"] and len(groups) >= 3
    images = set()
    for name, g in groups:
        params = g["rayStartParams"]
        assert isinstance(params, dict) and all(isinstance(v, str) for v in params.values()), name
        if name != "head":
            assert g["groupName"] and 0 <= g["minReplicas"] <= g["replicas"] <= g["maxReplicas"]
        (container, *_) = g["template"]["spec"]["containers"]
        assert container["name"] and container["image"]
        images.add(container["image"])
        res = container["resources"]
        assert res["limits"]["cpu"] and res["limits"]["memory"] and res["requests"]
        mounts = {m["mountPath"]: m["name"] for m in container.get("volumeMounts", [])}
        vols = {v["name"] for v in g["template"]["spec"].get("volumes", [])}
        assert set(mounts.values()) <= vols, name
    assert len(images) == 1, f"one image (one Ray and Python version) for every group: {images}"


def test_gpu_group_asks_kubernetes_for_the_gpus_ray_advertises(rs):
    gpu = [g for n, g in _groups(rs) if "num-gpus" in g["rayStartParams"]]
    assert len(gpu) == 1
    (g,) = gpu
    (container, *_) = g["template"]["spec"]["containers"]
    n = int(g["rayStartParams"]["num-gpus"])
    assert n >= 1 and container["resources"]["limits"]["nvidia.com/gpu"] == n
    assert g["maxReplicas"] >= 1
    for name, other in _groups(rs):  # no other group claims GPUs it does not have
        if other is not g:
            lim = other["template"]["spec"]["containers"][0]["resources"]["limits"]
            assert "nvidia.com/gpu" not in lim, name
    cfg = load_config(REPO / "configs" / "cluster.yaml", env={})
    assert 0 < cfg.ingest.num_gpus_per_actor <= n


def test_serve_config_names_an_app_builder_that_resolves(serve_config):
    from ray._common.utils import import_attr

    apps = serve_config["applications"]
    assert apps and len({a["name"] for a in apps}) == len(apps)
    for app in apps:
        assert app["import_path"].startswith("docray.serve_apps.")
        builder = import_attr(app["import_path"])
        assert callable(builder)
        for key in ("config", "serve_config"):
            assert _repo_path(app["args"][key]).is_file(), app["args"][key]
    assert serve_config["http_options"]["port"] == 8000


def test_serve_config_builds_the_application_as_serve_would(serve_config, monkeypatch):
    """What Serve's controller does with the import path and args, without a cluster."""
    from ray._common.utils import import_attr
    from ray.serve._private.api import call_user_app_builder_with_args_if_necessary
    from ray.serve._private.build_app import build_app
    from ray.serve.deployment import Application

    (app,) = serve_config["applications"]
    args = {k: str(_repo_path(v)) for k, v in app["args"].items()}
    monkeypatch.chdir(REPO.parent)  # a Ray worker's cwd is not the image's WORKDIR
    built = call_user_app_builder_with_args_if_necessary(import_attr(app["import_path"]), args)
    assert isinstance(built, Application)
    deployments = {d.name: d for d in build_app(built, name=app["name"]).deployments}
    assert set(deployments) == {"Ingress", "GraphWalk", "DenseSearch", "PageRetrieval",
                                "Rerank", "Synthesis", "Documents"}
    assert deployments["PageRetrieval"].ray_actor_options["num_gpus"] == 0.25  # gpu.yaml


def test_data_dir_and_models_are_mounted_in_every_group(rs):
    cfg = load_config(REPO / "configs" / "cluster.yaml", env={})
    for name, g in _groups(rs):
        mounts = [m["mountPath"] for m in g["template"]["spec"]["containers"][0]["volumeMounts"]]
        assert str(cfg.paths.data_dir) in mounts, name
        assert any(str(cfg.embed.page.model_dir).startswith(m + "/") for m in mounts), name


def test_the_configs_service_names_are_in_the_manifests_namespace(rs):
    cfg = load_config(REPO / "configs" / "cluster.yaml", env={})
    hosts = {urlparse(u).hostname for u in (cfg.milvus.uri, cfg.describe.vlm_url,
                                            cfg.synthesize.url, cfg.embed.text.url)}
    for host in hosts:
        _svc, ns, kind = host.split(".")
        assert (ns, kind) == (rs["metadata"]["namespace"], "svc"), host
