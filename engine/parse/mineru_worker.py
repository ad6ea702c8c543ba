"""Run MinerU's local parser on one file and write ``content_list.json`` beside its output.

A standalone script (standard library + ``mineru`` only, no docray imports), so it runs
under whichever interpreter has MinerU installed: ``parse.mineru_python`` (a separate
virtual environment when MinerU's pins do not fit the main one) or the current one.
Usage: ``python mineru_worker.py FILE OUT_DIR TIER OCR_MODE``. Writes ``OUT_DIR``/
``middle_json.json``, ``images/*``, ``content_list.json`` (MinerU's Content List V1) and
prints one JSON line ``{"pages": n, "blocks": n}``.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

# This folder holds docray's own mineru.py: off the path, so `import mineru` is MinerU's.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]


def main(argv: list[str]) -> int:
    from mineru.parser import MinerUParser, ParseResult
    from mineru.parser.writer import FileBasedDataWriter
    from mineru.render.content_list import render_content_list

    path, out, tier, mode = argv
    out_dir = Path(out)
    with MinerUParser(tier=tier, parse_mode=mode) as parser:
        result = parser.parse(path)
        result.save(FileBasedDataWriter(str(out_dir)))  # images/ written, paths relative
    saved = ParseResult.from_json((out_dir / "middle_json.json").read_text(encoding="utf-8"))
    blocks = render_content_list(saved.middle_json)
    (out_dir / "content_list.json").write_text(json.dumps(blocks, ensure_ascii=False),
                                               encoding="utf-8")
    sys.stdout.write(json.dumps({"pages": len(saved.pages), "blocks": len(blocks)}) + "\n")
    return 0


if __name__ == "__main__":  # MinerU starts worker processes: spawn re-imports this module
    sys.exit(main(sys.argv[1:]))
