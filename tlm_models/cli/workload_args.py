"""The workload options, declared once for ``run``, ``bounds`` and ``sweep`` (docs/workloads.md).

``--batch B --heads Hq --kv-heads Hkv --seq-len Nq --kv-len Nk --head-dim d --mask
none|causal|sliding:W --phase prefill|decode --model NAME --model-config FILE --layers L``.
Defaults: B = 1, Hq = 1, Hkv = Hq, Nk = Nq, mask none, prefill, one layer. Decode takes
Nq = 1 unless given and needs --kv-len. ``--model`` (or ``--model-config``) fills Hq, Hkv, d and
the mask: causal, or ``sliding:W`` with the model's window when that is shorter than the keys
(a window covering every key is the causal mask), none for a single query row (the last row
sees every key); ``--layers model`` is the model's layer
count. Explicit options override the model. A sweep takes comma-separated lists for B, Hq,
Hkv, Nq, Nk, d and the mask.
"""

from __future__ import annotations

import argparse

from tlm_models.errors import UserError
from tlm_models.run.config import mask_text, parse_int_list
from tlm_models.study.grid import GridSpec
from tlm_models.workload.model_presets import MODELS, ModelAttention, model_preset
from tlm_models.workload.spec import PHASES, parse_count, parse_mask

__all__ = ["add_workload_args", "workload_grid"]


def add_workload_args(parser: argparse.ArgumentParser, *, lists: bool = False) -> None:
    """Adds the workload options; ``lists`` (sweep) makes B, Hq, Hkv, Nq, Nk, d and the mask
    comma-separated lists, spelled ``--seq-lens``, ``--kv-lens``, ``--head-dims``."""
    many = " (a comma-separated list sweeps it)" if lists else ""

    def plural_in_sweeps(flag: str, metavar: str, text: str) -> None:
        """An option a sweep spells in the plural (``--seq-lens``), into the singular's dest."""
        dest = flag.removeprefix("--").replace("-", "_")
        parser.add_argument(flag + ("s" if lists else ""), dest=dest, metavar=metavar, help=text)

    plural_in_sweeps(
        "--seq-len",
        "NQ",
        f"query rows Nq per sequence, e.g. 8192 or 8K{many}; decode: 1 unless given",
    )
    plural_in_sweeps("--head-dim", "D", f"head dimension d{many} (default: the model's)")
    parser.add_argument(
        "--heads",
        metavar="HQ",
        help=f"query heads Hq per sequence (default 1, or the model's){many}",
    )
    parser.add_argument(
        "--kv-heads", metavar="HKV",
        help=f"K/V heads Hkv, a divisor of Hq: = Hq is MHA, 1 is MQA (default Hq){many}",
    )  # fmt: skip
    plural_in_sweeps(
        "--kv-len", "NK", f"keys Nk per sequence: the KV-cache length in decode (default Nq){many}"
    )
    parser.add_argument("--batch", metavar="B", help=f"sequences in the batch (default 1){many}")
    parser.add_argument(
        "--mask", metavar="MASK",
        help="none, causal or sliding:W (W keys, e.g. sliding:4K); the last query row sits at "
        f"the last key (default none, or the model's){many}",
    )  # fmt: skip
    parser.add_argument(
        "--phase", choices=PHASES, default="prefill",
        help="prefill (Nq = Nk by default) or decode (Nq = 1 by default, --kv-len needed)",
    )  # fmt: skip
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--model", metavar="NAME",
        help=f"a public model's attention shape: {', '.join(MODELS)} (docs/workloads.md)",
    )  # fmt: skip
    group.add_argument(
        "--model-config", metavar="FILE",
        help="a Hugging Face config.json: num_attention_heads, num_key_value_heads, "
        "hidden_size or head_dim, sliding_window, num_hidden_layers",
    )  # fmt: skip
    parser.add_argument(
        "--layers", default="1", metavar="L",
        help="identical layers run back to back: one is simulated and time, bytes and energy "
        "are also given times L ('model': the model's layer count; default 1)",
    )  # fmt: skip


def _ints(text: str | None, what: str, flag: str, lists: bool) -> tuple[int, ...]:
    if text is None:
        return ()
    if lists:
        return parse_int_list(text, what)
    try:
        return (parse_count(text, what),)
    except UserError:
        shown = text if len(text) <= 40 else text[:40] + "..."
        raise UserError(f"{flag} must be a positive integer (K = 1024), found '{shown}'") from None


def _model_of(args: argparse.Namespace) -> ModelAttention | None:
    if getattr(args, "model", None):
        return model_preset(args.model)
    if getattr(args, "model_config", None):
        from tlm_models.workload.hf_config import read_model_config

        return read_model_config(args.model_config)
    return None


def _layers(text: str, model: ModelAttention | None) -> int:
    if text.strip().lower() == "model":
        if model is None:
            raise UserError("--layers model needs --model NAME or --model-config FILE")
        return model.layers
    return _ints(text, "layer count", "--layers", False)[0]


def workload_grid(args: argparse.Namespace, *, lists: bool = False) -> GridSpec:
    """The workload axes of parsed ``add_workload_args`` options, as a grid with no dataflow
    yet (the caller sets dataflows, platforms and settings with ``dataclasses.replace``)."""
    model = _model_of(args)
    seq_lens = _ints(args.seq_len, "sequence length", "--seq-len", lists)
    kv_lens = _ints(args.kv_len, "key length", "--kv-len", lists)
    if args.phase == "decode":
        if not kv_lens:
            raise UserError(
                "--phase decode needs --kv-len NK: the KV-cache length each query row reads"
            )
        seq_lens = seq_lens or (1,)
    elif not seq_lens:
        raise UserError("--seq-len NQ is needed (query rows per sequence, e.g. 8K)")
    head_dims = _ints(args.head_dim, "head dim", "--head-dim", lists)
    if not head_dims:
        if model is None:
            raise UserError("--head-dim D is needed (or --model NAME, which sets it)")
        head_dims = (model.head_dim,)
    heads = _ints(args.heads, "query head count", "--heads", lists)
    kv_heads = _ints(args.kv_heads, "K/V head count", "--kv-heads", lists)
    if model is not None:  # an option given overrides the model's value for that option only
        kv_heads = kv_heads or (model.kv_heads,)
        heads = heads or (model.heads,)
    masks: tuple[str, ...] = ()
    if args.mask is not None:
        texts = [t.strip() for t in args.mask.split(",")] if lists else [args.mask]
        masks = tuple(mask_text(*parse_mask(t)) for t in texts)
        if len(set(masks)) != len(masks):
            raise UserError(f"--mask {args.mask!r}: a mask is listed twice")
    return GridSpec(
        dataflows=(),
        seq_lens=seq_lens,
        head_dims=head_dims,
        heads=heads or 1,
        batches=_ints(args.batch, "batch size", "--batch", lists) or (1,),
        kv_heads=kv_heads,
        kv_lens=kv_lens,
        masks=masks,
        phase=args.phase,
        layers=_layers(args.layers, model),
        model=model.name if model else "",
        model_window=model.window if model else -1,
    )
