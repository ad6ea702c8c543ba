"""Fixtures: the sample PDFs ingested once per session (Ray Data pipeline)."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from docray.engine.config import DocrayConfig, config_from_dict


@pytest.fixture(scope="session")
def sample_data(tmp_path_factory, ray_cluster) -> Path:
    """A data dir with the two sample PDFs ingested into workspace ``default``.

    Ingestion runs as ``docray ingest`` in a child process joined to the session's Ray
    cluster: the process that ingests keeps the milvus-lite db locked, and the app (its
    own milvus-lite server) must be able to open it afterwards.
    """
    from docray.engine.samples import write_samples

    root = tmp_path_factory.mktemp("serve_samples")
    pdfs = write_samples(root / "samples")
    data = root / "data"
    cfg = root / "docray.yaml"
    cfg.write_text(yaml.safe_dump({"paths": {"data_dir": str(data)},
                                   "ray": {"address": ray_cluster.get_runtime_context().gcs_address}}))
    out = subprocess.run([sys.executable, "-m", "docray.engine.cli", "ingest", *map(str, pdfs),
                          "--config", str(cfg), "--json"], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout.strip().splitlines()[-1])["ok"] == 2, out.stdout
    return data


@pytest.fixture()
def copy_of(tmp_path_factory, sample_data):
    def make() -> DocrayConfig:
        dst = tmp_path_factory.mktemp("copy") / "data"
        shutil.copytree(sample_data, dst)
        return config_from_dict({"paths": {"data_dir": str(dst)}})
    return make
