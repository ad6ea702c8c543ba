"""Context building for generative answerers: modality delimiters and token budgets."""
from __future__ import annotations

from docray.engine.synthesize import Passage


def approx_tokens(text: str) -> int:
    """Cheap token estimate (≈ 0.75 words per token).

    >>> approx_tokens("one two three")
    4
    """
    return int(len(text.split()) / 0.75 + 0.5)


def build_context(passages: list[Passage], budget_tokens: int = 3000,
                  entities: list[str] | None = None, relations: list[str] | None = None,
                  entity_share: float = 0.15) -> str:
    """Entities, relations and chunks with modality delimiters, each under its budget.

    >>> from docray.engine.model import Chunk
    >>> p = Passage(Chunk(chunk_id="c", doc_id="d", text="Revenue was 5.", pages=[2],
    ...             modality="table"), [], 1.0, "r.pdf")
    >>> print(build_context([p], 100))
    [1] <table source="r.pdf" page="2">
    Revenue was 5.
    </table>
    """
    parts: list[str] = []
    graph_budget = int(budget_tokens * entity_share)
    used = 0
    for title, items in (("entities", entities or []), ("relations", relations or [])):
        lines = []
        for item in items:
            cost = approx_tokens(item)
            if used + cost > graph_budget:
                break
            lines.append(f"- {item}")
            used += cost
        if lines:
            parts.append(f"<{title}>\n" + "\n".join(lines) + f"\n</{title}>")
    for i, p in enumerate(passages, 1):
        tag = p.chunk.modality if p.chunk.modality in ("table", "image", "equation") else "text"
        body = p.chunk.text
        cost = approx_tokens(body)
        if used + cost > budget_tokens:
            words = body.split()[: max(0, int((budget_tokens - used) * 0.75))]
            if not words:
                break
            body, cost = " ".join(words) + " …", budget_tokens - used
        page = p.chunk.pages[0] if p.chunk.pages else 1
        parts.append(f"[{i}] <{tag} source=\"{p.filename or p.chunk.doc_id}\" page=\"{page}\">"
                     f"\n{body}\n</{tag}>")
        used += cost
    return "\n".join(parts)
