"""The table a passage leads into, when retrieval ranked the lead-in and not the table.

"The table below presents future minimum rental payments" is the passage that names what
the question asks about; the table it introduces is a unit of its own chunk, which may not
be among the top passages. A passage that holds no table and says "the table below",
"the following table" or "as follows" takes the tables of its page as units, so the
answerer reads their cells; the passage (and its citation) is unchanged otherwise.

>>> bool(LEAD_IN.search("The table below presents our commitments."))
True
>>> bool(LEAD_IN.search("Net sales of products by category were as follows:"))
True
>>> bool(LEAD_IN.search("See Table 3 for the full list."))
False
"""
from __future__ import annotations

import re
from dataclasses import replace

from docray.engine.synthesize import Passage

LEAD_IN = re.compile(r"\b(?:tables?|schedules?) (?:below|above)\b|\bfollowing (?:tables?|"
                     r"schedules?)\b|\b(?:were|are|was|is) as follows\b", re.I)


def with_led_tables(passages: list[Passage], content) -> list[Passage]:
    """``passages``, each lead-in without a table given the tables of its pages (those no
    other passage already holds)."""
    held = {u.unit_id for p in passages for u in p.units if u.table is not None}
    out = []
    for p in passages:
        if any(u.table is not None for u in p.units) or not LEAD_IN.search(p.chunk.text):
            out.append(p)
            continue
        ch = p.chunk
        led = [u for page in ch.pages for u in content.page_units(ch.workspace, ch.doc_id, page)
               if u.table is not None and u.unit_id not in held]
        held.update(u.unit_id for u in led)
        out.append(replace(p, units=p.units + led) if led else p)
    return out
