"""OpenAI-compatible chat completions over the query path (``/v1/chat/completions``).

The last user message is the question; evidence rides along in an extra ``evidence``
field (the openai client keeps unknown fields on the response object).
"""
from __future__ import annotations

import json
import time
import uuid
from typing import Any, AsyncIterator

from docray.engine.errors import BadInput
from docray.serve_apps.protocol import MAX_QUESTION_CHARS, ChatRequest


def question_of(req: ChatRequest) -> str:
    for msg in reversed(req.messages):
        if msg.role != "user":
            continue
        content = msg.content
        if isinstance(content, list):
            content = " ".join(str(p.get("text", "")) for p in content
                               if isinstance(p, dict) and p.get("type", "text") == "text")
        text = (content or "").strip()
        if not text:
            raise BadInput("messages", "the last user message has no text")
        if len(text) > MAX_QUESTION_CHARS:
            raise BadInput("messages", f"the question exceeds {MAX_QUESTION_CHARS} characters")
        return text
    raise BadInput("messages", "no message with role 'user'")


def completion(req: ChatRequest, result: dict[str, Any]) -> dict[str, Any]:
    text = result["answer"] if not result["abstained"] else \
        f"Not answerable from the documents: {result['reason']}"
    return {"id": f"chatcmpl-{uuid.uuid4().hex[:24]}", "object": "chat.completion",
            "created": int(time.time()), "model": req.model,
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": 0, "completion_tokens": len(text.split()),
                      "total_tokens": len(text.split())},
            "evidence": result["evidence"], "abstained": result["abstained"],
            "timings": result["timings"]}


def _chunk(cid: str, model: str, delta: dict, finish: str | None, **extra) -> str:
    body = {"id": cid, "object": "chat.completion.chunk", "created": int(time.time()),
            "model": model, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            **extra}
    return f"data: {json.dumps(body)}\n\n"


async def stream_chunks(req: ChatRequest, events: AsyncIterator[dict]) -> AsyncIterator[str]:
    """SSE chunks in the OpenAI streaming format, ``[DONE]`` last."""
    cid = f"chatcmpl-{uuid.uuid4().hex[:24]}"
    yield _chunk(cid, req.model, {"role": "assistant", "content": ""}, None)
    async for ev in events:
        if "token" in ev:
            yield _chunk(cid, req.model, {"content": ev["token"]}, None)
        else:
            yield _chunk(cid, req.model, {}, "stop", evidence=ev["evidence"])
    yield "data: [DONE]\n\n"
