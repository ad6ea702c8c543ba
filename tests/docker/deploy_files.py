"""Readers for the deployment files under docker/: Dockerfiles, compose.yaml, .dockerignore.

Small on purpose: a Dockerfile is read as (instruction, arguments) pairs after joining
continuation lines, which is all the tests need to compare it with the configs.
"""
from __future__ import annotations

import fnmatch
import json
import re
import shlex
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[2]
DOCKER = REPO / "docker"


def dockerfile(name: str) -> list[tuple[str, str]]:
    """``[(INSTRUCTION, args), ...]`` of ``docker/<name>``; comments and blank lines dropped."""
    out, buf = [], ""
    for line in (DOCKER / name).read_text().splitlines():
        if not buf and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if buf and line.lstrip().startswith("#"):  # a comment inside a continued command
            continue
        if line.rstrip().endswith("\\"):
            buf += line.rstrip()[:-1] + " "
            continue
        full = (buf + line).strip()
        buf = ""
        instr, _, args = full.partition(" ")
        out.append((instr.upper(), args.strip()))
    return out


def instructions(df: list[tuple[str, str]], name: str) -> list[str]:
    return [a for i, a in df if i == name]


def exec_form(args: str) -> list[str]:
    """``["a", "b"]`` (exec form) as a list; shell form is split like a shell would."""
    args = args.strip()
    return json.loads(args) if args.startswith("[") else shlex.split(args)


def env_of(df: list[tuple[str, str]]) -> dict[str, str]:
    """Every ``ENV k=v`` (several per instruction) of a Dockerfile, later ones winning."""
    env: dict[str, str] = {}
    for args in instructions(df, "ENV"):
        for tok in shlex.split(args):
            key, sep, value = tok.partition("=")
            if sep:
                env[key] = value
    return env


def healthcheck_cmd(args: str) -> list[str]:
    """The command of a ``HEALTHCHECK [--opts] CMD [...]`` instruction."""
    _, sep, cmd = args.partition("CMD ")
    assert sep, f"HEALTHCHECK without CMD: {args}"
    return exec_form(cmd)


def compose() -> dict[str, Any]:
    """docker/compose.yaml with its anchors and merge keys resolved (PyYAML does both)."""
    return yaml.safe_load((DOCKER / "compose.yaml").read_text())


def interpolate(text: str) -> str:
    """Compose's ``${VAR:-default}`` with every variable unset: the defaults."""
    return re.sub(r"\$\{[A-Z0-9_]+:-([^}]*)\}", r"\1", text)


def command_args(service: dict[str, Any]) -> list[str]:
    """``entrypoint + command`` of a service as one argv (``sh -c`` scripts split too)."""
    argv: list[str] = []
    for key in ("entrypoint", "command"):
        part = service.get(key) or []
        parts = [part] if isinstance(part, str) else part
        for p in parts:
            argv += shlex.split(interpolate(p))
    return argv


def flag(argv: list[str], name: str) -> str | None:
    """The value of ``--name=value`` or ``--name value`` (the last one given)."""
    value = None
    for i, tok in enumerate(argv):
        if tok.startswith(name + "="):
            value = tok.split("=", 1)[1]
        elif tok == name and i + 1 < len(argv):
            value = argv[i + 1]
    return value


def mounts(service: dict[str, Any]) -> dict[str, str]:
    """Container path -> source (named volume or host path) of a service's volumes."""
    out = {}
    for v in service.get("volumes", []):
        parts = interpolate(v).split(":")
        out[parts[1]] = parts[0]
    return out


def dockerignore() -> list[str]:
    lines = (REPO / ".dockerignore").read_text().splitlines()
    return [ln.strip() for ln in lines if ln.strip() and not ln.lstrip().startswith("#")]


def ignored(path: str, patterns: list[str]) -> bool:
    """Whether ``path`` (relative to the build context) is left out of the context.
    Docker's rules for the patterns used here: a match of the path or of any parent;
    ``**/`` matches at any depth."""
    parts = Path(path).parts
    prefixes = ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]
    for pat in patterns:
        bare = pat[3:] if pat.startswith("**/") else None
        for p in prefixes:
            if fnmatch.fnmatchcase(p, pat):
                return True
            if bare and any(fnmatch.fnmatchcase(seg, bare) for seg in Path(p).parts):
                return True
    return False
