"""MinerU 4 backend (``parse.backend: mineru``; install the ``mineru`` extra).

Runs MinerU's local parser SDK at the configured tier (``flash`` reads the text layer
offline; higher tiers need local models), saves its artifacts to a scratch directory and
imports the ``*content_list.json`` it writes through :mod:`.content_list`, so MinerU
output becomes ordinary docray units. The native parser remains the fallback.
"""
from __future__ import annotations

import logging
import tempfile
from pathlib import Path
from typing import Any

from docray.engine.errors import BadInput, Unavailable
from docray.engine.model import Document, file_doc_id
from docray.engine.parse.content_list import load_content_list

log = logging.getLogger(__name__)


class MinerUParser:
    name = "mineru"

    def __init__(self, config: Any, artifacts: Any = None):
        self.config, self.artifacts = config, artifacts

    def _sdk(self):
        try:
            from mineru.parser import MinerUParser as _Sdk
            from mineru.parser.writer import FileBasedDataWriter
        except ImportError as err:
            raise Unavailable(f"parse.backend=mineru needs the 'mineru' extra ({err})") from None
        return _Sdk, FileBasedDataWriter

    def parse(self, path: Path, doc_id: str | None = None) -> Document:
        path = Path(path)
        if not path.is_file():
            raise BadInput(str(path), "file does not exist")
        sdk, writer = self._sdk()
        doc_id = doc_id or file_doc_id(path)
        with tempfile.TemporaryDirectory(prefix="docray-mineru-") as tmp:
            with sdk(tier=self.config.mineru_tier, parse_mode="auto") as parser:
                result = parser.parse(str(path))
                result.save(writer(tmp))
            found = sorted(Path(tmp).rglob("*content_list.json"))
            if not found:
                raise BadInput(str(path), "MinerU produced no content_list.json")
            doc = load_content_list(found[0], doc_id)
        log.info("mineru parsed %s: %d units", path.name, len(doc.units))
        return doc.model_copy(update={"source": str(path), "filename": path.name})
