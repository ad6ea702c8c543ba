"""Tiny random-init checkpoints the tests build (no hub): a BERT-style cross-encoder with a
WordPiece tokenizer trained on a few sentences, saved with ``save_pretrained``."""
from __future__ import annotations

from pathlib import Path

SENTENCES = [
    "The pump delivers 58.9 litres per minute at full load.",
    "Servo motors drive the valve actuator of the press.",
    "Revenue grew in 2021 by ten percent over the prior year.",
    "Table 2 lists the torque of each motor and its rated speed.",
    "Figure 3 shows the pressure curve of the hydraulic circuit.",
]
SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def wordpiece_tokenizer(max_length: int = 128):
    """A BERT WordPiece tokenizer over the words of :data:`SENTENCES`, with [CLS]/[SEP] pairs."""
    from tokenizers import BertWordPieceTokenizer, normalizers, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    # A vocabulary built, not trained: the trainer numbers (and even picks) its word pieces
    # in a per-process hash order, so a seeded model saw other ids in every run (CI once
    # drew two sentences with equal scores). Every word of SENTENCES, then every character
    # alone and as a continuation, in one fixed order.
    norm, split = normalizers.BertNormalizer(lowercase=True), pre_tokenizers.BertPreTokenizer()
    words = {w for text in SENTENCES
             for w, _ in split.pre_tokenize_str(norm.normalize_str(text))}
    chars = sorted({c for w in words for c in w})
    pieces = [*SPECIAL, *sorted(words - set(chars)), *chars, *(f"##{c}" for c in chars)]
    tok = BertWordPieceTokenizer({p: i for i, p in enumerate(pieces)}, lowercase=True)
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok._tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls), ("[SEP]", sep)])
    return PreTrainedTokenizerFast(tokenizer_object=tok._tokenizer, unk_token="[UNK]",
                                   pad_token="[PAD]", cls_token="[CLS]", sep_token="[SEP]",
                                   mask_token="[MASK]", model_max_length=max_length)


def tiny_cross_encoder(path: Path, seed: int = 0) -> Path:
    """A 2-layer, 32-wide BertForSequenceClassification (one label) saved at ``path``."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    tokenizer = wordpiece_tokenizer()
    torch.manual_seed(seed)
    config = BertConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=64,
                        max_position_embeddings=128, num_labels=1)
    BertForSequenceClassification(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


CHAT_TEMPLATE = ("{% for m in messages %}<|{{ m['role'] }}|>"
                 "{% if m['content'] is string %}{{ m['content'] }}"
                 "{% else %}{% for part in m['content'] %}{% if part['type'] == 'text' %}"
                 "{{ part['text'] }}{% endif %}{% endfor %}{% endif %}\n{% endfor %}"
                 "{% if add_generation_prompt %}<|assistant|>{% endif %}")


def bpe_tokenizer(vocab_size: int = 512, image_token: str | None = None,
                  template: str = CHAT_TEMPLATE):
    """A byte-level BPE tokenizer trained on :data:`SENTENCES`, with a chat template (and,
    for a vision model, an image placeholder token)."""
    from tokenizers import ByteLevelBPETokenizer
    from transformers import PreTrainedTokenizerFast

    specials = ["<s>", "</s>", "<pad>", *([image_token] if image_token else [])]
    tok = ByteLevelBPETokenizer()
    tok.train_from_iterator(SENTENCES * 4, vocab_size=vocab_size, min_frequency=1,
                            special_tokens=specials)
    extra = {"extra_special_tokens": {"image_token": image_token}} if image_token else {}
    fast = PreTrainedTokenizerFast(tokenizer_object=tok._tokenizer, bos_token="<s>",
                                   eos_token="</s>", pad_token="<pad>", model_max_length=2048,
                                   **extra)
    fast.chat_template = template
    return fast


def tiny_llama(path: Path) -> Path:
    """A 2-layer Llama (hidden 128, head_dim 64: the CPU attention refuses 16) as a
    ``config.json`` + tokenizer; vLLM gives it random weights (``load_format="dummy"``)."""
    from transformers import LlamaConfig

    tokenizer = bpe_tokenizer()
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=128, intermediate_size=256,
                         num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=2,
                         head_dim=64, max_position_embeddings=4096,
                         bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
                         pad_token_id=tokenizer.pad_token_id, tie_word_embeddings=True,
                         torch_dtype="bfloat16")
    path.mkdir(parents=True, exist_ok=True)
    config.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def vllm_cpu_config(model: Path, **over) -> dict:
    """The ``llm`` section that runs the tiny model on vLLM's CPU backend on 2 cores."""
    return {"model": str(model), "accelerator": "cpu", "load_format": "dummy",
            "dtype": "bfloat16", "max_model_len": 4096, "kv_cache_space_gb": 1,
            "gpu_memory_utilization": 0.05, "enforce_eager": True, "num_cpus": 0.5, **over}
