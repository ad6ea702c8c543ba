"""Fixtures for ingestion tests: a config rooted in tmp_path and small generated PDFs."""
from __future__ import annotations

from pathlib import Path

import pytest

from docray.engine.config import config_from_dict
from docray.engine.samples import write_samples
from ingest_fixtures import make_pdf


@pytest.fixture()
def cfg(tmp_path):
    return config_from_dict({
        "paths": {"data_dir": str(tmp_path / "data")},
        "ray": {"num_cpus": 2, "object_store_mb": 256},
        "parse": {"ocr": "auto"},
        "ingest": {"parse_concurrency": 1, "encoder_actors": 1},
    })


@pytest.fixture(scope="session")
def sample_pdfs(tmp_path_factory) -> list[Path]:
    return write_samples(tmp_path_factory.mktemp("samples"))


@pytest.fixture()
def small_pdfs(tmp_path) -> list[Path]:
    topics = ["Solar panels convert sunlight into electricity using photovoltaic cells. "
              "Efficiency reached 23 percent in 2022.",
              "Wind turbines generate power from moving air. Offshore farms grew 15 percent.",
              "Battery storage smooths supply from renewables. Lithium prices fell in 2023."]
    out = []
    for i, t in enumerate(topics):
        out.append(make_pdf(tmp_path / f"doc{i}.pdf", [t, t.replace("percent", "per cent")]))
    return out
