"""Package discovery for the three mapped folders (engine/, serve_apps/, kernels/).

pyproject.toml cannot list packages dynamically under a package-dir mapping, so this
file walks each folder and maps it to ``docray.<name>``. ``docray`` itself is an
implicit namespace, so no generic top-level import name is installed.
"""
from pathlib import Path

from setuptools import setup

ROOT = Path(__file__).parent
MAPPED = {"engine": "docray.engine", "serve_apps": "docray.serve_apps", "kernels": "docray.kernels"}


def _packages() -> list[str]:
    found = []
    for folder, name in MAPPED.items():
        for init in sorted((ROOT / folder).rglob("__init__.py")):
            rel = init.parent.relative_to(ROOT / folder).parts
            found.append(".".join((name, *rel)))
    return found


# the web page the ingress serves at / (serve_apps/ingress/web: plain HTML, JS, CSS)
setup(packages=_packages(), package_data={
    "docray.engine": ["describe/prompts/*.txt"],
    "docray.serve_apps": ["ingress/web/*.html", "ingress/web/*.js", "ingress/web/*.css"]})
