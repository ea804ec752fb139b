"""A Hugging Face ``config.json`` read as a model's attention shape (``--model-config FILE``).

Keys read (docs/workloads.md): ``num_attention_heads`` (Hq), ``num_key_value_heads`` (Hkv;
absent: = Hq, or 1 when ``multi_query`` is true as in Falcon), ``head_dim`` or else
``hidden_size`` / Hq (d), ``sliding_window`` (ignored when ``use_sliding_window`` is false, as
Qwen2 ships it) and ``num_hidden_layers``. GPT-2-style spellings (``n_head``, ``n_embd``,
``n_layer``) are read when the long ones are absent.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tlm_models.errors import UserError
from tlm_models.files.bounded_input import printable, read_json
from tlm_models.workload.model_presets import ModelAttention

__all__ = ["MAX_CONFIG_BYTES", "read_model_config"]

#: A Hugging Face config.json is a few KiB (Llama-3-405B's: 1 KiB); 1 MiB is far above any.
MAX_CONFIG_BYTES = 1 << 20

_SPELLINGS = {
    "num_attention_heads": ("num_attention_heads", "n_head"),
    "hidden_size": ("hidden_size", "n_embd"),
    "num_hidden_layers": ("num_hidden_layers", "n_layer"),
}


def _positive(path: Path, key: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise UserError(f"{path}: '{key}' must be a positive integer, found {value!r}")
    return value


def _required(path: Path, data: dict[str, Any], name: str) -> int:
    for key in _SPELLINGS[name]:
        if key in data:
            return _positive(path, key, data[key])
    raise UserError(
        f"{path}: missing key '{name}' (a Hugging Face config.json states the attention "
        "heads, hidden size and layer count)"
    )


def read_model_config(file: str | Path) -> ModelAttention:
    """The attention shape a config.json describes; UserError naming the file and key."""
    path = Path(file)
    data = read_json(path, "model config", MAX_CONFIG_BYTES)
    if not isinstance(data, dict):
        raise UserError(f"{path}: expected a JSON object (a config.json), found {data!r:.40}")
    heads = _required(path, data, "num_attention_heads")
    if "num_key_value_heads" in data and data["num_key_value_heads"] is not None:
        kv_heads = _positive(path, "num_key_value_heads", data["num_key_value_heads"])
    else:
        kv_heads = 1 if data.get("multi_query") is True else heads
    if heads % kv_heads:
        raise UserError(
            f"{path}: num_attention_heads ({heads}) is not a multiple of num_key_value_heads "
            f"({kv_heads})"
        )
    if data.get("head_dim") is not None:
        head_dim = _positive(path, "head_dim", data["head_dim"])
    else:
        hidden = _required(path, data, "hidden_size")
        if hidden % heads:
            raise UserError(
                f"{path}: hidden_size ({hidden}) is not a multiple of num_attention_heads "
                f"({heads}) and there is no 'head_dim' key"
            )
        head_dim = hidden // heads
    window = 0
    if data.get("sliding_window") is not None and data.get("use_sliding_window") is not False:
        window = _positive(path, "sliding_window", data["sliding_window"])
    layers = _required(path, data, "num_hidden_layers")
    # Echoed in summaries and reports: no terminal escape sequence of the file reaches a terminal.
    name = printable(str(data.get("_name_or_path") or data.get("model_type") or path.stem))[:200]
    return ModelAttention(
        name=name, title=name, heads=heads, kv_heads=kv_heads, head_dim=head_dim, layers=layers,
        window=window, source=str(path),
    )  # fmt: skip
