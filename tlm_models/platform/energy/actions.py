"""The actions each component type counts, declared once: their names, what one action is,
and where its count is in the component's statistics.

Names follow Accelergy's conventions (`read`, `write`, `leak`, `mac_random`, ...), so exported
counts and imported energy reference tables (ERT) line up without a mapping. An action with a
`width` moves that many bytes, so its energy may be given per byte (`pJ/B`, `pJ/bit`) and is
multiplied by the width; `leak` is static power in watts, charged over the simulated time.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from tlm_models.platform.registry import ParamValue

Stats = Mapping[str, Any]  # a statistics-tree group: {"name", "stats", "children"}
Params = Mapping[str, ParamValue]

#: The static-power action of every type: watts over the simulated time.
LEAK = "leak"
#: The trace's vector ops (pe_array.h, VectorOp), each counted per element.
VECTOR_OPS = ("copy", "add", "sub", "mul", "div", "max", "fma", "rowmax", "rowsum", "mask")


class MissingCount(LookupError):
    """A model's statistics lack a count that an energy action is declared to read."""


def _value(group: Stats, name: str) -> int:
    stat = group["stats"].get(name)
    if stat is None:
        raise MissingCount(
            f"statistics group '{group['name']}' has no '{name}', which energy counts read "
            "(the model and tlm_models/platform/energy/actions.py disagree; docs/energy.md)"
        )
    value = stat["value"]
    return int(value) if value is not None else 0


def _child(group: Stats, name: str) -> Stats | None:
    return next((c for c in group["children"] if c["name"] == name), None)


def _stat(name: str) -> Callable[[Stats], int]:
    return lambda group: _value(group, name)


def _channel_sum(name: str) -> Callable[[Stats], int]:
    """A per-channel statistic summed over the channels (HBM command and burst counts)."""

    def count(group: Stats) -> int:
        return sum(_value(c, name) for c in group["children"] if c["name"].startswith("channel"))

    return count


def _child_stat(child: str, name: str) -> Callable[[Stats], int]:
    def count(group: Stats) -> int:
        sub = _child(group, child)
        return _value(sub, name) if sub is not None and name in sub["stats"] else 0

    return count


def _param_bytes(param: str) -> Callable[[Params], int]:
    def width(params: Params) -> int:
        value = params[param]
        assert isinstance(value, int)
        return value

    return width


@dataclass(frozen=True)
class ActionSpec:
    """One countable action of a component type."""

    name: str
    description: str  # what one action is, with its unit
    count: Callable[[Stats], int]
    #: Bytes one action moves (per-byte energies are multiplied by it); None = not a transfer.
    width: Callable[[Params], int] | None = None


def _one_byte(_: Params) -> int:
    return 1


ACTIONS: dict[str, tuple[ActionSpec, ...]] = {
    "hbm": (
        ActionSpec("read", "one read burst of burst_bytes", _channel_sum("read_bursts"),
                   _param_bytes("burst_bytes")),
        ActionSpec("write", "one write burst of burst_bytes", _channel_sum("write_bursts"),
                   _param_bytes("burst_bytes")),
        ActionSpec("activate", "one ACT command (bank fidelity)", _channel_sum("activates")),
        ActionSpec("precharge", "one PRE command (bank fidelity)", _channel_sum("precharges")),
        ActionSpec("refresh", "one all-bank refresh (bank fidelity)", _channel_sum("refreshes")),
    ),
    "sram": (
        ActionSpec("read", "one read of port_width bytes", _stat("read_accesses"),
                   _param_bytes("port_width")),
        ActionSpec("write", "one write of port_width bytes", _stat("write_accesses"),
                   _param_bytes("port_width")),
    ),
    "interconnect": (
        ActionSpec("transfer", "one byte across one link", _stat("byte_hops"), _one_byte),
    ),
    "dma": (ActionSpec("descriptor", "one transfer set up and run", _stat("descriptors")),),
    "pe_array": (
        ActionSpec("mac_random", "one multiply-accumulate of a matmul", _stat("macs")),
        ActionSpec("scale", "one row-scaling multiply of a scaled matmul (diag(s) C)",
                   _stat("scaled_elements")),
        *(
            ActionSpec(op, f"one element of a vector {op}", _child_stat("vector_elements", op))
            for op in VECTOR_OPS
        ),
    ),
    "exp_unit": (ActionSpec("exp", "one exponential", _stat("exps")),),
}  # fmt: skip


def actions_of(type_name: str) -> tuple[ActionSpec, ...]:
    """The counted actions of a component type (none for types without a declaration)."""
    return ACTIONS.get(type_name, ())


def action_names(type_name: str) -> tuple[str, ...]:
    """Every name an energy table of this type may hold: its actions and `leak`."""
    return (*(a.name for a in actions_of(type_name)), LEAK)
