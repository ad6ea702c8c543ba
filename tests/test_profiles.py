"""configs/gpu.yaml and configs/cluster.yaml load and dry-build every backend they name.

"Dry-build": each backend's class is chosen from the config alone and constructed with its
own sub-config, without loading weights or calling a server. Backends that are HTTP
clients (vLLM describer, extractor, answerer, OpenAI-compatible embeddings) and the MinerU
parser construct outright; backends that load local weights (sentence-transformers,
ColPali, the cross-encoder) are built up to the weight load, which must fail with
:class:`Unavailable` naming the configured path: these machines have no /models. Their real
libraries run on tiny checkpoints in their own tests (tests/engine/embed/test_colpali.py,
tests/engine/retrieve/test_rerank.py). The Serve app is composed (bound, not run).

A backend another engineer is still building is tested as it exists: a text-encoder or
reranker kind this table does not list must at least resolve from its registry and either
construct or fail with an ``Unavailable`` that names its configured model or URL.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from docray.engine.config import DocrayConfig, load_config
from docray.engine.errors import Unavailable

REPO = Path(__file__).resolve().parents[1]
PROFILES = ["gpu", "cluster"]


@pytest.fixture(params=PROFILES)
def profile(request) -> DocrayConfig:
    cfg = load_config(REPO / "configs" / f"{request.param}.yaml", env={})
    assert cfg.profile == request.param
    return cfg


def _built(build, *names: str):
    """``build()``'s object, or its Unavailable when that names one of ``names``."""
    try:
        return build()
    except Unavailable as err:
        assert any(str(n) in str(err) for n in names if n), f"{err!r} names none of {names}"
        return err


def test_parser_is_mineru_at_a_model_tier(profile):
    from docray.engine.parse import get_parser
    from docray.engine.parse.mineru import MinerUParser

    parser = get_parser(profile.parse)
    assert isinstance(parser, MinerUParser) and parser.config.mineru_tier == "standard"


def test_describer_and_extractor_are_vllm(profile):
    """gpu: passes on ray.data.llm (the processor builds from the llm section); cluster:
    clients of a vLLM service."""
    if profile.describe.backend == "vllm":
        from docray.engine.describe.vllm_batch import describe_schema
        from docray.engine.ingest.stages.llm_pass import build_llm_processor

        assert profile.extract.backend == "vllm" and profile.llm.model.startswith("/models/")
        assert profile.llm.bundles() == [{"CPU": 1.0, "GPU": 1.0}]
        assert type(build_llm_processor(profile, describe_schema(64))).__name__ == "Processor"
        return
    from docray.engine.describe import get_describer
    from docray.engine.describe.base import Describer
    from docray.engine.graph.extract import Extractor, make_extractor

    describer = get_describer(profile.describe)
    extractor = make_extractor(profile.extract)
    assert type(describer).__name__ == "VLMDescriber" and isinstance(describer, Describer)
    assert type(extractor).__name__ == "LLMExtractor" and isinstance(extractor, Extractor)
    assert describer.url.startswith(profile.describe.vlm_url.rstrip("/"))
    assert extractor.url.startswith(profile.extract.llm_url.rstrip("/"))


def test_text_encoder_builds_from_its_config(profile):
    from docray.engine.embed import TextEncoder, get_text_encoder
    from docray.engine.registry import TEXT_ENCODERS

    text = profile.embed.text
    assert text.backend in TEXT_ENCODERS.names()
    encoder = _built(lambda: get_text_encoder(text), text.model, text.url)
    if text.backend in ("minilm", "sentence_transformers"):  # local weights: not here
        assert isinstance(encoder, Unavailable) and text.model in str(encoder)
    elif text.backend == "openai":  # an HTTP client: constructs, calls nothing
        assert isinstance(encoder, TextEncoder) and encoder.dim == text.dim == 1024
        assert encoder.url.startswith(text.url.rstrip("/"))


def test_page_encoder_is_colpali_and_asks_for_its_model_dir(profile):
    from docray.engine.embed import get_page_encoder
    from docray.engine.embed.colpali import ColPaliPageEncoder
    from docray.engine.ingest.stages.pages import needs_page_stage
    from docray.engine.registry import PAGE_ENCODERS

    page = profile.embed.page
    assert PAGE_ENCODERS.resolve(page.backend) is ColPaliPageEncoder and page.dim == 128
    assert needs_page_stage(profile) and profile.ingest.page_actors >= 1
    assert profile.ingest.page_num_gpus > 0  # the ColPali actors hold a GPU share
    with pytest.raises(Unavailable, match=f"model_dir={page.model_dir}"):
        get_page_encoder(page)


def test_reranker_builds_from_its_config(profile):
    from docray.engine.retrieve.parts import make_reranker

    r = profile.retrieve
    reranker = _built(lambda: make_reranker(profile, None), r.cross_encoder_model)
    if r.reranker == "cross-encoder":  # bge-reranker-v2-m3 is not on this machine
        assert isinstance(reranker, Unavailable)


def test_answerer_is_vllm_or_an_openai_client(profile):
    from docray.engine.errors import ConfigError
    from docray.engine.retrieve.parts import make_answerer
    from docray.engine.synthesize.openai_chat import OpenAIChatAnswerer

    if profile.synthesize.answerer == "vllm":  # the Serve stage hosts it; not in-process
        from docray.serve_apps.settings import load_serve_settings
        from docray.serve_apps.synthesis.llm import synthesis_llm_config

        with pytest.raises(ConfigError, match="docray serve"):
            make_answerer(profile)
        llm = synthesis_llm_config(profile, load_serve_settings(REPO / profile.serve.config_file))
        assert llm.model_loading_config.model_source == "/models/Qwen2.5-VL-7B-Instruct"
        assert llm.engine_kwargs["tensor_parallel_size"] == 2
        assert llm.placement_group_config["bundles"] == [{"CPU": 1.0, "GPU": 1.0}] * 2
        assert llm.engine_kwargs["limit_mm_per_prompt"] == {"image": 4}
        return

    answerer = make_answerer(profile)
    assert isinstance(answerer, OpenAIChatAnswerer)
    assert answerer.url == profile.synthesize.url.rstrip("/")


def test_serve_app_composes_with_the_profiles_serve_config(profile):
    from ray.serve import Application

    from docray.serve_apps.build import build_app
    from docray.serve_apps.milvus_server import is_file_uri
    from docray.serve_apps.settings import load_serve_settings

    settings = load_serve_settings(REPO / profile.serve.config_file)
    assert settings.stage("pages").num_gpus > 0  # the page index sits in GPU memory
    assert isinstance(build_app(profile, settings), Application)
    assert not is_file_uri(profile.milvus.uri)  # several processes: a Milvus server


def test_cpu_vllm_profile_gives_the_synthesis_stage_cpus():
    from docray.serve_apps.settings import load_serve_settings
    from docray.serve_apps.synthesis.llm import synthesis_llm_config

    cfg = load_config(REPO / "configs" / "cpu-vllm.yaml", env={})
    llm = synthesis_llm_config(cfg, load_serve_settings(REPO / cfg.serve.config_file))
    assert llm.accelerator_config.kind == "cpu"
    assert llm.placement_group_config["bundles"] == [{"CPU": 1.0}]
    assert llm.runtime_env["env_vars"]["VLLM_CPU_KVCACHE_SPACE"] == "2"


def test_page_candidates_come_from_faiss(profile):
    """Large shards: faiss IVF picks the prefilter's candidates (GPU where faiss-gpu sees
    CUDA, faiss-cpu here)."""
    from docray.engine.index.pages.faiss_index import FaissCandidateIndex

    pc = profile.pages
    assert pc.candidate_index == "faiss-ivf"
    index = FaissCandidateIndex(pc.candidate_index, nprobe=pc.faiss_nprobe,
                                ef_search=pc.faiss_ef_search, per_token=pc.faiss_per_token,
                                nlist=pc.faiss_nlist, hnsw_m=pc.faiss_hnsw_m,
                                device=pc.faiss_device)
    assert index.device in ("cpu", "gpu")
