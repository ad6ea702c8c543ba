"""A vision-language model on vLLM's CPU backend takes docray's image parts.

The answerer's request (numbered sources, then the cited crops as image parts, at most
``llm.max_images``) goes to a real vLLM engine running a tiny random-init LLaVA with the
engine arguments docray's ``llm`` section builds. Each image part becomes the model's 16
image tokens, the cap holds, and the image reaches the vision tower: two crops of different
colours give different first-token log-probabilities, the same crop the same ones.
"""
from __future__ import annotations

import io

import pytest

pytest.importorskip("vllm")
pytestmark = [pytest.mark.slow, pytest.mark.own_process]
IMAGE_TOKENS = 16  # (56 / 14) ** 2 patches of the tiny CLIP tower


class _Crops:
    """An artifact store stand-in holding PNG crops by id (the answerer only reads)."""

    def __init__(self, colours: dict[str, tuple[int, int, int]]):
        from PIL import Image

        self.data = {}
        for key, colour in colours.items():
            buf = io.BytesIO()
            Image.new("RGB", (64, 64), colour).save(buf, format="PNG")
            self.data[key] = buf.getvalue()

    def read(self, artifact_id: str) -> bytes:
        return self.data[artifact_id]


@pytest.fixture(scope="module")
def engine(tmp_path_factory, monkeypatch_module):
    from tiny_models import vllm_cpu_config
    from tiny_vlm import tiny_llava

    from docray.engine.config_llm import VLLMConfig

    monkeypatch_module.setenv("VLLM_CPU_KVCACHE_SPACE", "1")
    monkeypatch_module.setenv("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
    model = tiny_llava(tmp_path_factory.mktemp("llava"), weights=True)
    v = VLLMConfig.model_validate(vllm_cpu_config(
        model, load_format="auto", vision=True, max_images=2, max_model_len=2048,
        engine_kwargs={"model_impl": "transformers", "runner": "generate"}))
    from vllm import LLM

    args = v.engine_args()
    args.pop("served_model_name")
    llm = LLM(model=str(model), **args)
    yield llm, v
    del llm


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as mp:
        yield mp


def _payloads(**kwargs):
    """The answerer's request builder; the test sends the requests to the engine itself."""
    from docray.engine.synthesize.openai_chat import ChatAnswerer

    class Payloads(ChatAnswerer):
        async def _complete(self, payload):
            raise AssertionError("the test sends the payload itself")

        def _stream(self, payload):
            raise AssertionError("the test sends the payload itself")

    return Payloads(**kwargs)


def _passage(i: int, artifact: str | None):
    from docray.engine.model import Chunk, Unit
    from docray.engine.synthesize import Passage

    unit = Unit(unit_id=f"u{i}", doc_id="d", page=1, bbox=(0.1, 0.1, 0.5, 0.5), modality="image",
                text=f"Figure {i}",
                artifact_id=artifact)
    return Passage(Chunk(chunk_id=f"c{i}", doc_id="d", text=f"Figure {i} shows the pump.",
                         pages=[1], modality="image", unit_ids=[unit.unit_id]),
                   [unit], 1.0, "r.pdf")


def _run(llm, answerer, passages):
    from vllm import SamplingParams

    messages = answerer.payload("What does the figure show?", passages, False)["messages"]
    out = llm.chat([messages], SamplingParams(max_tokens=1, temperature=0, logprobs=5))[0]
    first = sorted((k, round(p.logprob, 4)) for k, p in out.outputs[0].logprobs[0].items())
    return len(out.prompt_token_ids), first


def test_image_parts_reach_the_vision_tower_capped(engine):
    llm, v = engine
    crops = _Crops({"red": (255, 0, 0), "blue": (0, 0, 255)})
    answerer = _payloads(model=v.served_name, artifacts=crops, max_images=v.max_images,
                         budget_tokens=200, max_tokens=8)
    text_only = _payloads(model=v.served_name, artifacts=None, max_images=0, budget_tokens=200)
    n_text, _ = _run(llm, text_only, [_passage(0, "red")])
    n_red, red = _run(llm, answerer, [_passage(0, "red")])
    n_blue, blue = _run(llm, answerer, [_passage(0, "blue")])
    _, blue_again = _run(llm, answerer, [_passage(0, "blue")])
    assert n_red == n_blue == n_text + IMAGE_TOKENS + 1  # the image tokens and their newline
    assert red != blue and blue == blue_again
    three = [_passage(i, c) for i, c in enumerate(["red", "blue", "red"])]
    n_three, _ = _run(llm, answerer, three)
    n_three_text, _ = _run(llm, text_only, three)
    assert n_three == n_three_text + 2 * (IMAGE_TOKENS + 1)  # capped at llm.max_images
