"""Ray Data ingestion: see :mod:`.pipeline` for the flow and :mod:`.stages` for the stages."""
from docray.engine.ingest.pipeline import ingest, ingest_local  # noqa: F401
