"""The public HTTP contract: pydantic request/response models.

``QueryResponse`` is the same JSON that ``docray query --json`` prints:
``{answer, abstained, reason, evidence: [{doc, page, bbox, modality, score, text, unit_id}],
timings}``.
"""
from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Mode = Literal["hybrid", "chunk-only", "graph-only", "page-only", "no-rerank"]
MAX_QUESTION_CHARS = 2000


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class QueryRequest(_Strict):
    question: str = Field(..., min_length=1, max_length=MAX_QUESTION_CHARS)
    doc: str | None = Field(None, description="Restrict to one document (id or file name).")
    mode: Mode = "hybrid"
    top_k: int = Field(5, ge=1, le=50)


class EvidenceOut(BaseModel):
    doc: str
    doc_id: str = ""
    page: int
    bbox: tuple[float, float, float, float] | None = None
    modality: str
    score: float
    text: str
    artifact_id: str | None = None
    unit_id: str | None = Field(None, description=(
        "The unit the box belongs to: GET /v1/graph?unit=<id> shows its neighbourhood."))


class QueryResponse(BaseModel):
    id: str | None = None
    answer: str
    abstained: bool
    reason: str = ""
    evidence: list[EvidenceOut] = Field(default_factory=list)
    timings: dict[str, float] = Field(default_factory=dict)


class ChatMessage(BaseModel):
    role: Literal["system", "user", "assistant", "tool"]
    content: str | list[dict[str, Any]] | None = None


class ChatRequest(BaseModel):
    model_config = ConfigDict(extra="allow")  # OpenAI clients send many optional fields
    model: str = "docray"
    messages: list[ChatMessage] = Field(..., min_length=1)
    stream: bool = False


class DocumentStatus(BaseModel):
    doc_id: str
    filename: str
    status: str
    error: str | None = None
    n_pages: int = 0
    n_units: int = 0


class JobStatus(BaseModel):
    job_id: str
    status: Literal["queued", "running", "done", "failed"]
    documents: list[DocumentStatus] = Field(default_factory=list)
    error: str | None = None
    graph: dict[str, int] = Field(default_factory=dict, description=(
        "The workspace's own graph (nodes, edges, docs) once the job has run."))


class ErrorBody(BaseModel):
    error: str
    field: str | None = None
    retryable: bool = False


class DeleteResponse(BaseModel):
    doc_id: str
    deleted: bool


class PageUnit(BaseModel):
    unit_id: str
    modality: str
    bbox: tuple[float, float, float, float] = Field(description=(
        "(x0, y0, x1, y1), page-relative 0..1, origin top-left: multiply by the render's "
        "width and height for pixels."))
    text: str = ""


class PageView(BaseModel):
    """One page for a person to look at: its render and the boxes of its units."""

    doc_id: str
    filename: str
    page: int
    n_pages: int
    artifact_id: str | None = Field(None, description="The render; None when none is stored.")
    image_url: str | None = Field(None, description="GET with the same key (PNG).")
    width: int = Field(0, description="Render width in pixels.")
    height: int = Field(0, description="Render height in pixels.")
    dpi: int = Field(description="Render resolution (parse.dpi): points = pixels * 72 / dpi.")
    page_width_pt: float = 0.0
    page_height_pt: float = 0.0
    units: list[PageUnit] = Field(default_factory=list)


class GraphNodeOut(BaseModel):
    id: str
    kind: str
    name: str
    doc_id: str | None = None
    unit_id: str | None = None
    page: int | None = None
    seed: bool = Field(False, description="A node of the asked units (not reached by a hop).")


class GraphEdgeOut(BaseModel):
    src: str
    dst: str
    type: str
    weight: float = 1.0


class GraphView(BaseModel):
    nodes: list[GraphNodeOut] = Field(default_factory=list)
    edges: list[GraphEdgeOut] = Field(default_factory=list)
