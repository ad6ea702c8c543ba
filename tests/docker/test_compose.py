"""docker/compose.yaml against the configs it runs: configs/cluster.yaml plus the
``DOCRAY__SECTION__FIELD`` variables compose sets, read by engine/config.py's loader."""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from urllib.parse import urlparse

import pytest
from deploy_files import (DOCKER, REPO, command_args, compose, dockerfile, flag,
                          instructions, interpolate, mounts)

from docray.engine.config import ENV_PREFIX, DocrayConfig, load_config
from docray.serve_apps.settings import load_serve_settings

RAY_NODES = ("ray-head", "ray-gpu-worker", "docray")  # every process that joins the cluster
MODEL_SERVERS = ("vllm", "embed")


@pytest.fixture(scope="module")
def spec():
    return compose()


@pytest.fixture(scope="module")
def services(spec):
    return spec["services"]


def workdir() -> str:
    (wd,) = instructions(dockerfile("Dockerfile.gpu"), "WORKDIR")
    return wd


def in_repo(container_path: str) -> Path:
    """The repo file a path inside docray:gpu comes from (``COPY configs ./configs``)."""
    rel = Path(container_path).relative_to(workdir())
    copied = {a.split()[-1].lstrip("./") for a in instructions(dockerfile("Dockerfile.gpu"),
                                                                "COPY")}
    assert rel.parts[0] in copied, f"{container_path}: {rel.parts[0]} is not copied into the image"
    return REPO / rel


def node_env(services, name: str) -> dict[str, str]:
    return {k: interpolate(str(v)) for k, v in services[name].get("environment", {}).items()}


def effective_config(services, name: str = "docray") -> DocrayConfig:
    env = node_env(services, name)
    env["DOCRAY_CONFIG"] = str(in_repo(env["DOCRAY_CONFIG"]))
    return load_config(env=env)


def listening_ports(service) -> set[int]:
    """Ports a service's container listens on: its ``--port``/``--dashboard-port`` flags and
    the container side of its ``ports`` mappings."""
    argv = command_args(service)
    found = {int(v) for f in ("--port", "--dashboard-port") if (v := flag(argv, f))}
    for p in service.get("ports", []):
        found.add(int(str(p).split(":")[-1].split("/")[0]))
    return found


def test_the_services_of_the_cluster_profile_are_there(services):
    assert set(services) >= {"etcd", "minio", "milvus", "ray-head", "ray-gpu-worker", "docray",
                             *MODEL_SERVERS}


def test_every_docray_variable_names_a_config_field_and_changes_it(services):
    base = load_config(REPO / "configs" / "cluster.yaml", env={})
    for name in RAY_NODES:
        env = node_env(services, name)
        assert env["DOCRAY_CONFIG"] == "/app/configs/cluster.yaml"
        cfg = effective_config(services, name)  # unknown fields would raise ConfigError
        for key, raw in env.items():
            if not key.startswith(ENV_PREFIX):
                continue
            assert key == key.upper(), key
            node, base_node = cfg, base
            for part in key[len(ENV_PREFIX):].lower().split("__"):
                node, base_node = getattr(node, part), getattr(base_node, part)
            assert str(node) == raw, f"{key}={raw!r} set {node!r}"
            assert node != base_node, f"{key} repeats cluster.yaml's value"


def test_every_url_the_config_calls_is_a_service_here_on_its_port(services):
    cfg = effective_config(services)
    urls = {"milvus.uri": cfg.milvus.uri, "describe.vlm_url": cfg.describe.vlm_url,
            "extract.llm_url": cfg.extract.llm_url, "synthesize.url": cfg.synthesize.url,
            "embed.text.url": cfg.embed.text.url}
    dumped = cfg.model_dump_json()
    assert not re.search(r"\.svc[:/]", dumped), "a Kubernetes service name is left"
    for field, url in urls.items():
        u = urlparse(url)
        assert u.hostname in services, f"{field}={url}: no service {u.hostname}"
        assert u.port in listening_ports(services[u.hostname]), f"{field}={url}: wrong port"


def test_model_names_sent_to_each_server_are_the_names_it_serves(services):
    cfg = effective_config(services)
    wanted = [(cfg.describe.vlm_url, cfg.describe.vlm_model),
              (cfg.extract.llm_url, cfg.extract.llm_model),
              (cfg.synthesize.url, cfg.synthesize.model),
              (cfg.embed.text.url, cfg.embed.text.model)]
    for url, model in wanted:
        svc = services[urlparse(url).hostname]
        argv = command_args(svc)
        assert argv[:2] == ["vllm", "serve"]
        assert flag(argv, "--served-model-name") == model, (url, model)
        model_dir = argv[2]
        assert any(model_dir.startswith(m + "/") for m in mounts(svc)), model_dir


def test_ray_nodes_share_one_image_built_here_and_find_the_head(services):
    head_port = int(flag(command_args(services["ray-head"]), "--port"))
    images = {services[n]["image"] for n in RAY_NODES}
    assert len(images) == 1, f"Ray needs one Ray/Python version on every node: {images}"
    for name in (*RAY_NODES, *MODEL_SERVERS):
        build = services[name]["build"]
        assert (DOCKER / build["context"]).resolve() == REPO
        assert (REPO / build["dockerfile"]).is_file()
    for name in ("ray-gpu-worker", "docray"):
        assert flag(command_args(services[name]), "--address") == f"ray-head:{head_port}"
    cfg = effective_config(services)
    assert cfg.ray.address == "auto"  # docray serve attaches to the node it started


def test_third_party_images_are_pinned_and_milvus_has_bm25(services):
    for name, svc in services.items():
        image = svc["image"]
        assert ":" in image and not image.endswith(":latest"), f"{name}: {image} is not pinned"
    major, minor = map(int, re.match(r"milvusdb/milvus:v(\d+)\.(\d+)",
                                     services["milvus"]["image"]).groups())
    assert (major, minor) >= (2, 5), "engine/index/dense.py needs Milvus >= 2.5 (BM25)"
    env = services["milvus"]["environment"]
    assert env["ETCD_ENDPOINTS"].split(":")[0] == "etcd"
    assert env["MINIO_ADDRESS"].split(":")[0] == "minio"


def test_data_dir_and_models_are_shared_volumes_on_every_node(spec, services):
    cfg = effective_config(services)
    data_dir = str(cfg.paths.data_dir)
    sources = set()
    for name in RAY_NODES:
        m = mounts(services[name])
        assert data_dir in m, f"{name} does not mount {data_dir}"
        sources.add(m[data_dir])
        assert any(str(cfg.embed.page.model_dir).startswith(p + "/") for p in m), name
    (volume,) = sources  # one volume: ingest on the worker, queries on the others
    assert volume in spec["volumes"]
    for name, path in (("etcd", "/etcd"), ("minio", "/minio_data"), ("milvus", "/var/lib/milvus")):
        assert mounts(services[name])[path] in spec["volumes"]


def test_healthchecks_and_start_order(services):
    for name, svc in services.items():
        assert svc.get("healthcheck", {}).get("test"), f"{name} has no healthcheck"
        for dep, cond in svc.get("depends_on", {}).items():
            assert cond == {"condition": "service_healthy"}, (name, dep)
            assert "healthcheck" in services[dep]
    cfg = effective_config(services)
    probe = " ".join(services["docray"]["healthcheck"]["test"])
    assert f"127.0.0.1:{cfg.serve.port}/healthz" in probe
    assert set(services["docray"]["depends_on"]) >= {"milvus", "ray-head", "ray-gpu-worker",
                                                     *MODEL_SERVERS}


def test_docray_serve_runs_the_config_on_its_published_port(services):
    svc = services["docray"]
    argv = command_args(svc)
    serve_at = argv.index("serve")
    assert argv[serve_at - 2:serve_at] == ["exec", "docray"]  # SIGTERM reaches docray serve
    cfg = effective_config(services)
    assert flag(argv, "--config") == node_env(services, "docray")["DOCRAY_CONFIG"]
    port = int(flag(argv, "--port"))
    assert port == cfg.serve.port and port in listening_ports(svc)
    assert flag(argv, "--host") == "0.0.0.0"
    settings = load_serve_settings(in_repo(f"{workdir()}/{cfg.serve.config_file}"))
    assert settings.stage("dense").num_gpus > 0  # the GPU stage settings, not the CPU ones


def test_published_ports_bind_loopback_only(services):
    for name, svc in services.items():
        for p in svc.get("ports", []):
            assert str(p).startswith("127.0.0.1:"), f"{name} publishes {p} on every interface"


def test_gpu_worker_reserves_the_gpus_ray_advertises(services):
    svc = services["ray-gpu-worker"]
    (device,) = svc["deploy"]["resources"]["reservations"]["devices"]
    assert device["driver"] == "nvidia" and "gpu" in device["capabilities"]
    gpus = int(flag(command_args(svc), "--num-gpus"))
    assert gpus == device["count"] >= 1
    assert int(flag(command_args(services["ray-head"]), "--num-gpus")) == 0
    cfg = effective_config(services)
    assert 0 < cfg.ingest.num_gpus_per_actor <= gpus


def _compose_cli() -> list[str] | None:
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    if shutil.which("docker") and subprocess.run(["docker", "compose", "version"],
                                                 capture_output=True).returncode == 0:
        return ["docker", "compose"]
    return None


@pytest.mark.skipif(_compose_cli() is None, reason="no docker compose / docker-compose CLI")
def test_compose_cli_accepts_the_file():
    """Compose's own validation (no daemon needed), where its CLI is installed."""
    res = subprocess.run([*_compose_cli(), "-f", str(DOCKER / "compose.yaml"), "config", "-q"],
                         capture_output=True, text=True, cwd=DOCKER)
    assert res.returncode == 0, res.stderr
