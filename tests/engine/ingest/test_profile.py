"""What an ingestion run records for its profile: CPU seconds per stage, and per document
its pages, OCR pages and parse CPU of text-layer vs OCR pages (in-process, no Ray)."""
from __future__ import annotations

from docray.engine.ingest import ingest_local


def test_summary_records_stage_cpu_and_per_document_profile(cfg, small_pdfs):
    summary = ingest_local(small_pdfs, cfg, "prof")
    assert summary.ok == len(small_pdfs)
    for stage in ("parse", "describe", "chunk", "graph", "encode", "write", "commit"):
        assert summary.stage_cpu_seconds[stage] >= 0.0, stage
    assert summary.stage_cpu_seconds["parse"] > 0 and summary.stage_cpu_seconds["encode"] > 0
    assert len(summary.documents) == len(small_pdfs)
    for doc in summary.documents:
        assert doc["pages"] == 2 and doc["ocr_pages"] == 0  # text-layer pages only
        assert doc["parse_text_cpu"] > 0 and doc["parse_ocr_cpu"] == 0
        assert doc["cpu"]["parse"] >= doc["parse_text_cpu"] * 0.5
        assert set(doc["timings"]) == set(doc["cpu"])
        assert "text" in doc["parse_parts"]
    assert "documents" in summary.to_dict()
