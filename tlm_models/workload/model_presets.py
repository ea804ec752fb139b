"""Attention configurations of public language models, for ``--model NAME`` (docs/workloads.md).

Each entry holds what an attention layer needs, query heads Hq, K/V heads Hkv, head dim d, the
sliding window (0: none) and the layer count, with where the figures were published. Every
model here is a decoder: its attention is causal, within the window when it has one.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from tlm_models.errors import UserError

__all__ = ["MODELS", "ModelAttention", "model_preset"]


@dataclass(frozen=True)
class ModelAttention:
    """One model's attention layer shape and where it was published."""

    name: str  # the --model spelling
    title: str
    heads: int  # Hq
    kv_heads: int  # Hkv (= heads: MHA; 1: MQA)
    head_dim: int  # d
    layers: int  # attention layers in the model
    window: int  # sliding window in keys; 0 = full causal attention
    source: str  # paper or model card / config.json URL

    @property
    def kind(self) -> str:
        """MHA, GQA or MQA."""
        if self.kv_heads == self.heads:
            return "MHA"
        return "MQA" if self.kv_heads == 1 else "GQA"


def _hf(repo: str) -> str:
    return f"https://huggingface.co/{repo}/blob/main/config.json"


#: The shipped presets, by name. d is hidden_size / num_attention_heads unless the config
#: states head_dim (Gemma).
MODELS: dict[str, ModelAttention] = {
    m.name: m
    for m in (
        ModelAttention(
            "gpt3-175b", "GPT-3 175B", 96, 96, 128, 96, 0,
            "Brown et al., Language Models are Few-Shot Learners, arXiv:2005.14165, Table 2.1",
        ),
        ModelAttention(
            "llama2-7b", "Llama-2 7B", 32, 32, 128, 32, 0, _hf("meta-llama/Llama-2-7b-hf")
        ),
        ModelAttention(
            "llama2-70b", "Llama-2 70B", 64, 8, 128, 80, 0, _hf("meta-llama/Llama-2-70b-hf")
        ),
        ModelAttention(
            "llama3-8b", "Llama-3 8B", 32, 8, 128, 32, 0, _hf("meta-llama/Meta-Llama-3-8B")
        ),
        ModelAttention(
            "llama3-70b", "Llama-3 70B", 64, 8, 128, 80, 0, _hf("meta-llama/Meta-Llama-3-70B")
        ),
        ModelAttention(
            "mistral-7b", "Mistral 7B (v0.1)", 32, 8, 128, 32, 4096,
            _hf("mistralai/Mistral-7B-v0.1") + "; Jiang et al., Mistral 7B, arXiv:2310.06825, "
            "Table 1",
        ),
        ModelAttention("falcon-7b", "Falcon-7B", 71, 1, 64, 32, 0, _hf("tiiuae/falcon-7b")),
        ModelAttention(
            "gemma-2b", "Gemma 2B", 8, 1, 256, 18, 0,
            _hf("google/gemma-2b") + "; Gemma Team, arXiv:2403.08295, Table 1",
        ),
        ModelAttention(
            "gemma-7b", "Gemma 7B", 16, 16, 256, 28, 0,
            _hf("google/gemma-7b") + "; Gemma Team, arXiv:2403.08295, Table 1",
        ),
        ModelAttention("qwen2-7b", "Qwen2 7B", 28, 4, 128, 28, 0, _hf("Qwen/Qwen2-7B")),
    )
}  # fmt: skip


def model_preset(name: str) -> ModelAttention:
    """The preset ``name`` (case-insensitive); UserError with a did-you-mean otherwise."""
    key = name.strip().lower()
    if key in MODELS:
        return MODELS[key]
    close = difflib.get_close_matches(key, MODELS, n=1, cutoff=0.5)
    hint = f"; did you mean '{close[0]}'?" if close else ""
    raise UserError(
        f"unknown model '{name}' (known: {', '.join(MODELS)}; or --model-config FILE for a "
        f"Hugging Face config.json){hint}"
    )
