"""A tiny random-init ColPali checkpoint built with colpali-engine's and transformers' own
classes (no hub): a 1-layer PaliGemma (SigLIP vision tower + Gemma decoder), a word-level
tokenizer trained on a few sentences with ``tokenizers``, and transformers'
``SiglipImageProcessorPil`` (the PIL image path: no torchvision), saved with
``save_pretrained`` so :class:`~docray.engine.embed.colpali.ColPaliPageEncoder` loads it the
way it loads a real ColPali model dir.
"""
from __future__ import annotations

from pathlib import Path

IMAGE_SIZE, PATCH = 64, 8
N_PATCHES = (IMAGE_SIZE // PATCH) ** 2  # image tokens per page: 64
SENTENCES = [
    "Describe the image.",
    "What was the revenue growth in the annual report table?",
    "Which model reaches the best accuracy on the benchmark?",
    "net income operating cash flow figure shows results per year",
]
SPECIAL = ["<pad>", "<eos>", "<bos>", "<unk>", "<image>"]


def tiny_colpali(path: Path, seed: int = 0) -> Path:
    """Save a tiny ColPali model + processor at ``path``; returns ``path``."""
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import PaliGemmaConfig, PreTrainedTokenizerFast
    from transformers.models.siglip.image_processing_pil_siglip import SiglipImageProcessorPil

    from docray.kernels.maxsim.colpali_compat import import_module

    colpali = import_module("colpali_engine.models.paligemma.colpali")
    tok = Tokenizer(models.WordLevel(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.train_from_iterator(SENTENCES, trainers.WordLevelTrainer(special_tokens=SPECIAL))
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>",
                                        eos_token="<eos>", bos_token="<bos>", unk_token="<unk>")
    images = SiglipImageProcessorPil(size={"height": IMAGE_SIZE, "width": IMAGE_SIZE})
    images.image_seq_length = N_PATCHES
    processor = colpali.ColPaliProcessor(image_processor=images, tokenizer=tokenizer)
    config = PaliGemmaConfig(
        vision_config=dict(model_type="siglip_vision_model", hidden_size=32,
                           intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
                           image_size=IMAGE_SIZE, patch_size=PATCH, projection_dim=32),
        text_config=dict(model_type="gemma", hidden_size=32, intermediate_size=64,
                         num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1,
                         head_dim=16, vocab_size=len(processor.tokenizer)),
        image_token_index=processor.image_token_id, projection_dim=32, hidden_size=32)
    torch.manual_seed(seed)
    colpali.ColPali(config).save_pretrained(path)
    processor.save_pretrained(path)
    return path
