"""Registry of component types: what a YAML `type:` means in C++ and which parameters it takes.

The builder elaborates a component by looking up its type here: the C++ class (and header) to
construct, the `Params` fields to set (one per parameter, same name), and the sockets to bind.
Users add their own models with :func:`register_component_type` (see docs/platforms.md).

Each parameter is declared once, here: name, kind (hence its C++ type and SI unit), display
unit, default, bounds (minimum, choices) and doc line. The C++ side follows from it: the
built-in models' ``Params`` fields, defaults and bounds checks are generated into
``include/tlm_models/params_generated.h`` (``tlm_models.platform.cpp_fields``), the compiled
library's factory asserts each field's C++ type (``tlm_models.runtime.aot``), and the
docs/models parameter tables are generated too (``tlm_models.platform.param_docs``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

ParamKind = Literal[
    "count", "size", "bandwidth", "frequency", "time", "choice", "bool", "address", "text"
]
ParamValue = int | float | str | bool
PARAM_KINDS: tuple[ParamKind, ...] = (
    "count",
    "size",
    "bandwidth",
    "frequency",
    "time",
    "choice",
    "bool",
    "address",
    "text",
)
#: The unit each kind's value is held in (sizes bytes, time picoseconds, ...); "" = unitless.
KIND_UNITS: dict[ParamKind, str] = {
    "count": "",
    "size": "B",
    "bandwidth": "B/s",
    "frequency": "Hz",
    "time": "ps",
    "choice": "",
    "bool": "",
    "address": "B",
    "text": "",
}
#: The C++ type of a `Params` field of each kind (docs/internals.md, "C++ component conventions").
CPP_TYPES: dict[ParamKind, str] = {
    "count": "unsigned",
    "size": "std::uint64_t",
    "bandwidth": "double",
    "frequency": "double",
    "time": "sc_core::sc_time",
    "choice": "std::string",
    "bool": "bool",
    "address": "std::uint64_t",
    "text": "std::string",
}
#: Largest value each C++ type holds, in the kind's unit (sc_time: 64-bit ticks of 1 ps);
#: None where the type is not an integer.
_CPP_MAX: dict[str, int] = {
    "unsigned": 2**32 - 1,
    "std::uint64_t": 2**64 - 1,
    "sc_core::sc_time": 2**64 - 1,
}
#: Units shown in docs tables for each kind (time values are written with their own unit).
_DISPLAY_UNITS: dict[ParamKind, str] = {**KIND_UNITS, "time": "s"}


@dataclass(frozen=True)
class ParamSpec:
    """One parameter: its kind, default (in the YAML spelling, e.g. '8 GB/s') and valid range."""

    name: str
    kind: ParamKind
    default: object = None
    description: str = ""
    required: bool = False
    choices: tuple[str, ...] = ()
    #: Smallest accepted value in the kind's unit; sizes, bandwidths and frequencies must be > 0.
    minimum: int = 0
    #: What one unit of the value counts when the kind's SI unit does not say it ("cycles",
    #: "MACs", "B per cycle"); empty = the kind's unit.
    unit: str = ""

    @property
    def cpp_type(self) -> str:
        """The C++ type of the `Params` field of the same name."""
        return CPP_TYPES[self.kind]

    @property
    def cpp_max(self) -> int | None:
        """Largest value the C++ field holds (in the kind's unit); None for non-integers."""
        return _CPP_MAX.get(self.cpp_type)

    @property
    def display_unit(self) -> str:
        return self.unit or _DISPLAY_UNITS[self.kind]


@dataclass(frozen=True)
class SocketSpec:
    """A socket: initiator or target; `multi` sockets take several bindings (indexed `x[i]`)."""

    name: str
    role: Literal["initiator", "target"]
    multi: bool = False
    required: bool = True
    description: str = ""


@dataclass(frozen=True)
class ExecutorSpec:
    """How a component executes trace operations: the module itself, or channels of it."""

    kind: str  # the engine kind emitters see: "dma", "pe", "exp", ...
    channel_accessor: str | None = None  # C++ method returning OpExecutor& for a channel index
    channel_count_param: str | None = None  # the count parameter bounding the channel index


@dataclass(frozen=True)
class ComponentType:
    """A YAML component type and the C++ model that implements it."""

    name: str
    cpp_class: str  # unqualified names live in namespace tlm_models
    header: str  # include path, e.g. "tlm_models/hbm.h", or an absolute path
    params: tuple[ParamSpec, ...]
    sockets: tuple[SocketSpec, ...]
    description: str = ""
    #: "offchip" or "onchip" for memories that the address map may point at; None otherwise.
    memory: Literal["offchip", "onchip"] | None = None
    size_param: str | None = None  # the parameter holding a memory's size in bytes
    executor: ExecutorSpec | None = None
    #: Interconnects get routes from the address map (add_route(base, size, out_index)).
    routes: bool = False
    include_dirs: tuple[Path, ...] = field(default_factory=tuple)

    def param(self, name: str) -> ParamSpec | None:
        return next((p for p in self.params if p.name == name), None)

    def socket(self, name: str) -> SocketSpec | None:
        return next((s for s in self.sockets if s.name == name), None)

    @property
    def qualified_class(self) -> str:
        return self.cpp_class if "::" in self.cpp_class else f"tlm_models::{self.cpp_class}"


_REGISTRY: dict[str, ComponentType] = {}


def register_component_type(component_type: ComponentType, *, replace: bool = False) -> None:
    """Makes `component_type` usable as `type:` in platform files."""
    if component_type.name in _REGISTRY and not replace:
        raise ValueError(f"component type '{component_type.name}' is already registered")
    kinds = set(PARAM_KINDS)
    for p in component_type.params:
        if p.kind not in kinds:
            raise ValueError(f"{component_type.name}.{p.name}: unknown parameter kind {p.kind}")
        if p.kind == "choice" and not p.choices:
            raise ValueError(f"{component_type.name}.{p.name}: a choice needs its choices")
    if component_type.size_param and not component_type.param(component_type.size_param):
        raise ValueError(f"{component_type.name}: size_param names no parameter")
    _REGISTRY[component_type.name] = component_type


def unregister_component_type(name: str) -> None:
    """Removes a user type again (tests, notebooks that redefine a model)."""
    _REGISTRY.pop(name, None)


def component_type(name: str) -> ComponentType | None:
    return _REGISTRY.get(name)


def component_types() -> dict[str, ComponentType]:
    return dict(_REGISTRY)


def _p(
    name: str,
    kind: ParamKind,
    default: object,
    description: str,
    *,
    minimum: int | None = None,
    choices: tuple[str, ...] = (),
    unit: str = "",
) -> ParamSpec:
    if minimum is None:
        minimum = 1 if kind in ("size", "bandwidth", "frequency") else 0
    return ParamSpec(name, kind, default, description, choices=choices, minimum=minimum, unit=unit)


def _hbm_bank_level_params() -> tuple[ParamSpec, ...]:
    """The bank fidelity's organisation, controller and JEDEC timing set (docs/models/hbm.md).

    Defaults: platforms/parts/hbm2-attenio.yaml, HBM2 at the paper machine's 1 Gb/s per pin
    (8 GB/s, tCK = 2 ns); a zero time turns that constraint off.
    """
    times = (
        ("t_rcd", "14 ns", "ACT to RD/WR, same bank"),
        ("t_rcd_wr", "0 ns", "ACT to WR where the standard has its own (HBM tRCDWR); 0: t_rcd"),
        ("t_rp", "14 ns", "PRE to ACT, same bank"),
        ("t_ras", "34 ns", "ACT to PRE, same bank"),
        ("t_rc", "48 ns", "ACT to ACT, same bank"),
        ("t_rrd_s", "4 ns", "ACT to ACT, different bank group"),
        ("t_rrd_l", "6 ns", "ACT to ACT, same bank group"),
        ("t_faw", "30 ns", "window holding at most four ACTs"),
        ("t_ccd_s", "4 ns", "column to column, different bank group"),
        ("t_ccd_l", "8 ns", "column to column, same bank group"),
        ("t_cl", "14 ns", "RD to first data (CAS latency)"),
        ("t_cwl", "4 ns", "WR to first data (write latency)"),
        ("t_wr", "16 ns", "end of write data to PRE (write recovery)"),
        ("t_wtr_s", "4 ns", "end of write data to RD, different bank group"),
        ("t_wtr_l", "8 ns", "end of write data to RD, same bank group"),
        ("t_rtw", "18 ns", "RD to WR (bus turnaround)"),
        ("t_rtp", "4 ns", "RD to PRE, same bank"),
        ("t_refi", "3900 ns", "refresh interval (0 = refresh off)"),
        ("t_rfc", "350 ns", "all-bank refresh: REF to the next command"),
        ("t_rfc_pb", "160 ns", "per-bank refresh: REFpb to the next command to that bank"),
    )
    return (
        _p("banks", "count", 16, "banks per channel, all bank groups (bank fidelity)", minimum=1),
        _p("bank_groups", "count", 4, "bank groups per channel (bank fidelity)", minimum=1),
        _p("row_size", "size", "1 KiB", "row (page) size of a bank"),
        _p("burst_bytes", "size", "32 B", "bytes one RD/WR moves (bank fidelity)"),
        _p(
            "address_mapping",
            "text",
            "",
            "bit-level mapping `field:bits ...`, most significant first; empty: the default",
        ),
        _p("scheduler", "choice", "frfcfs", "`frfcfs` or `fcfs`", choices=("frfcfs", "fcfs")),
        _p(
            "frfcfs_cap",
            "count",
            16,
            "column commands younger row hits may take while the oldest request waits",
            minimum=1,
            unit="commands",
        ),
        _p(
            "page_policy",
            "choice",
            "open",
            "`open`, `closed` or `adaptive`",
            choices=("open", "closed", "adaptive"),
        ),
        _p("queue_depth", "count", 8, "requests per bank queue", minimum=1, unit="requests"),
        _p(
            "request_mode",
            "choice",
            "immediate",
            "`immediate` (each call served alone, at once) or `queued` (calls wait in the "
            "controller's queues, so outstanding requests are reordered; bank fidelity)",
            choices=("immediate", "queued"),
        ),
        _p(
            "split_requests",
            "bool",
            False,
            "bandwidth fidelity: a request may be served across the gaps between requests booked "
            "before it (a channel interleaving transfers) instead of in one gap that holds it "
            "whole, so requests a long quantum delivers out of time order do not wait behind "
            "runs of short ones (no burst trains)",
        ),
        _p(
            "admission",
            "choice",
            "in_order",
            "`in_order` (requests enter the bank queues in arrival order: one whose bank queue "
            "is full holds up the channel's later requests, as DRAMSys' controller) or "
            "`per_bank` (a full bank queue delays only its own requests)",
            choices=("in_order", "per_bank"),
        ),
        _p(
            "write_drain",
            "choice",
            "none",
            "`none` (reads and writes compete under the scheduler alone, as DRAMSys' default "
            "FR-FCFS) or `watermark` (read and write phases by the watermarks below)",
            choices=("none", "watermark"),
        ),
        _p(
            "write_high_watermark",
            "count",
            16,
            "queued writes that start a write phase",
            unit="requests",
        ),
        _p(
            "write_low_watermark",
            "count",
            4,
            "queued writes at which a write phase may end",
            unit="requests",
        ),
        _p(
            "refresh",
            "choice",
            "all_bank",
            "`all_bank` (REF) or `per_bank` (REFpb)",
            choices=("all_bank", "per_bank"),
        ),
        *(_p(name, "time", default, desc) for name, default, desc in times),
        _p(
            "command_bus",
            "choice",
            "split",
            "`split` (HBM: row and column command buses), `shared` (DDR4, LPDDR4: one bus) or "
            "`none` (commands take no bus time)",
            choices=("split", "shared", "none"),
        ),
        _p("t_ck", "time", "2 ns", "command clock period (one command bus cycle)"),
        _p("act_cycles", "count", 2, "command bus cycles of an ACT", minimum=1, unit="cycles"),
        _p(
            "row_cycles",
            "count",
            1,
            "command bus cycles of a PRE, REF or REFpb",
            minimum=1,
            unit="cycles",
        ),
        _p(
            "column_cycles",
            "count",
            1,
            "command bus cycles of a RD or WR",
            minimum=1,
            unit="cycles",
        ),
        # JESD235 (HBM2) pseudo-channel mode: the two pseudo-channels of a channel share its
        # row and column command pins (a PC bit names the target), as DRAMSys' HBM2 checker
        # keeps one row and one column bus per channel. Default 2: the defaults are an HBM2
        # pseudo-channel (hbm2-attenio.yaml).
        _p(
            "pseudo_channels",
            "count",
            2,
            "pseudo-channels per JEDEC channel: this many consecutive channels (the `channels` "
            "count is pseudo-channels) share one set of command buses; 1: each channel has its "
            "own (bank fidelity; `channels` must be a multiple)",
            minimum=1,
        ),
    )


def _compute_engine(
    name: str,
    cpp_class: str,
    description: str,
    engine: str,
    shape: tuple[ParamSpec, ...],
    own: tuple[ParamSpec, ...],
    *,
    pipeline_latency: int,
    peer: str,
    traffic: str,
) -> ComponentType:
    """A compute engine (the PE array, the Exp unit; its model in ``tlm_models/<name>.h``)
    executing ``engine`` operations through its SRAM port. Parameters: its ``shape`` (rows and
    columns, lanes), the clock, its ``own`` parameters, then the streaming engine's (pipeline
    depth, forwarding granule, element width shared with its ``peer``, SRAM traffic)."""
    params = (
        *shape,
        _p("clock", "frequency", "1 GHz", "one cycle = 1 / clock"),
        *own,
        _p(
            "pipeline_latency",
            "count",
            pipeline_latency,
            "added once per operation; overlaps the next operation",
            unit="cycles",
        ),
        _p(
            "forward_granularity",
            "count",
            128,
            "elements per forwarded granule of streamed operations",
            minimum=1,
            unit="elements",
        ),
        _p("elem_bytes", "size", "2 B", f"bytes per element (FP16 = 2); must equal {peer}"),
        _p("sram_traffic", "bool", True, traffic),
        # Functional mode (functional_ops.h, docs/integration.md "Functional mode"): the PE
        # array and the Exp unit compute values, with the same setting on both.
        _p(
            "functional",
            "bool",
            False,
            "compute each operation's values on the SRAM's contents (timing unchanged; the "
            "PE array's and the Exp unit's must be equal)",
        ),
        _p(
            "number_format",
            "choice",
            "fp16",
            "element type of the values: `fp16` (IEEE binary16) or `bf16` (bfloat16) for "
            "2-byte elements, `fp32` for 4-byte; functional mode only",
            choices=("fp16", "bf16", "fp32"),
        ),
    )
    return ComponentType(
        name=name,
        cpp_class=cpp_class,
        header=f"tlm_models/{name}.h",
        description=description,
        executor=ExecutorSpec(engine),
        params=params,
        sockets=(SocketSpec("sram_port", "initiator", description="operand traffic"),),
    )


def _register_builtins() -> None:
    register_component_type(
        ComponentType(
            name="hbm",
            cpp_class="HbmMemory",
            header="tlm_models/hbm.h",
            description="off-chip DRAM/HBM: channels with a bandwidth each, optional bank timing",
            memory="offchip",
            size_param="size",
            params=(
                _p("channels", "count", 16, "independent channels", minimum=1),
                _p("channel_bandwidth", "bandwidth", "8 GB/s", "data rate of one channel"),
                _p(
                    "latency",
                    "time",
                    "100 ns",
                    "fixed controller + PHY latency added to every response",
                ),
                _p("interleave", "size", "256 B", "granule of the channel interleave"),
                _p("size", "size", "8 GiB", "addressable bytes (`0 .. size-1`)"),
                _p(
                    "fidelity",
                    "choice",
                    "bandwidth",
                    "timing model: `bandwidth` or `bank`",
                    choices=("bandwidth", "bank"),
                ),
                *_hbm_bank_level_params(),
                _p("storage", "bool", False, "keep the data (sparse, 64 KiB pages)"),
            ),
            sockets=(SocketSpec("target", "target", description="memory port"),),
        )
    )
    register_component_type(
        ComponentType(
            name="sram",
            cpp_class="Sram",
            header="tlm_models/sram.h",
            description="on-chip scratchpad: banks and ports of a fixed width per cycle",
            memory="onchip",
            size_param="capacity",
            params=(
                _p("capacity", "size", "512 KiB", "addressable bytes (`0 .. capacity-1`)"),
                _p("banks", "count", 16, "banks (accounting)", minimum=1),
                _p("ports", "count", 2, "ports shared by all initiators", minimum=1),
                _p(
                    "port_width",
                    "size",
                    "64 B",
                    "bytes one port moves per cycle",
                    unit="B per cycle per port",
                ),
                _p("clock", "frequency", "1 GHz", "port clock"),
                _p("latency", "time", "1 ns", "access latency added after the transfer"),
                _p("storage", "bool", True, "keep the data (a flat array of `capacity` bytes)"),
            ),
            sockets=(
                SocketSpec("target", "target", multi=True, description="several initiators bind"),
            ),
        )
    )
    register_component_type(
        ComponentType(
            name="interconnect",
            cpp_class="Interconnect",
            header="tlm_models/interconnect.h",
            description="address-decoding bus/NoC; routes come from the platform's address map",
            routes=True,
            params=(
                _p("clock", "frequency", "1 GHz", "link clock"),
                _p("width", "size", "64 B", "width of each output link", unit="B per cycle"),
                _p("hop_latency", "time", "1 ns", "one traversal, charged each way"),
                _p(
                    "topology",
                    "choice",
                    "crossbar",
                    "`crossbar` (one output link per target) or `mesh` (2-D, XY routing)",
                    choices=("crossbar", "mesh"),
                ),
                _p(
                    "mesh_columns",
                    "count",
                    4,
                    "mesh: routers per row; input i sits at router i",
                    minimum=1,
                ),
                _p(
                    "split_requests",
                    "bool",
                    False,
                    "a request may cross a link in the gaps between requests booked before it "
                    "instead of in one gap that holds it whole, so requests a long quantum "
                    "delivers out of time order do not wait behind runs of short ones (no burst "
                    "trains)",
                ),
            ),
            sockets=(
                SocketSpec("in", "target", multi=True, description="initiators bind here"),
                SocketSpec("out", "initiator", multi=True, description="bound in index order"),
            ),
        )
    )
    register_component_type(
        ComponentType(
            name="dma",
            cpp_class="DmaEngine",
            header="tlm_models/dma.h",
            description="DMA engine: independent channels executing load/store operations",
            executor=ExecutorSpec("dma", "channel", "channels"),
            params=(
                _p(
                    "channels",
                    "count",
                    2,
                    "independent channels (`dma.channel[i]` in a platform's `engines:`)",
                    minimum=1,
                ),
                _p("max_burst", "size", "256 B", "largest burst; 1 B .. 4 GiB"),
                _p(
                    "max_outstanding",
                    "count",
                    16,
                    "bursts in flight per channel",
                    minimum=1,
                    unit="bursts",
                ),
                _p(
                    "setup_latency", "time", "10 ns", "from a descriptor's start to its first burst"
                ),
                _p(
                    "burst_trains",
                    "bool",
                    True,
                    "book a bandwidth-level HBM's side of each max_outstanding bursts in one call "
                    "(same timing and statistics; false: one call per burst)",
                ),
            ),
            sockets=(SocketSpec("mem_port", "initiator", description="memory traffic"),),
        )
    )
    register_component_type(
        _compute_engine(
            "pe_array",
            "PeArray",
            "MAC array executing matmul and vector operations",
            "pe",
            (
                _p("rows", "count", 64, "array rows", minimum=1, unit="MACs"),
                _p("cols", "count", 32, "array columns", minimum=1, unit="MACs"),
            ),
            (
                _p(
                    "mapping",
                    "choice",
                    "output_stationary",
                    "dataflow mapping onto the array: systolic `output_stationary`, "
                    "`weight_stationary`, `input_stationary` (SCALE-Sim v3's folds), or "
                    "`broadcast` (a vector array)",
                    choices=(
                        "output_stationary",
                        "weight_stationary",
                        "input_stationary",
                        "broadcast",
                    ),
                ),
                _p(
                    "fold_overlap",
                    "bool",
                    False,
                    "systolic: double-buffered PE registers hide each fold's fill and drain "
                    "(paid once per operation, not per fold)",
                ),
                _p(
                    "split_k",
                    "bool",
                    False,
                    "broadcast: outputs smaller than the array split k over idle MACs",
                ),
                _p(
                    "scale_accumulate",
                    "bool",
                    True,
                    "each MAC scales its partial sum and adds its product in one step (a "
                    "scale_rows matmul costs an accumulate's cycles; false: one more step "
                    "per pass)",
                ),
            ),
            pipeline_latency=2,
            peer="the Exp unit's",
            traffic="issue operand/result transactions",
        )
    )
    register_component_type(
        _compute_engine(
            "exp_unit",
            "ExpUnit",
            "exponent unit: lanes computing exp() element-wise",
            "exp",
            (_p("lanes", "count", 128, "exponent modules", minimum=1, unit="exps/cycle"),),
            (),
            pipeline_latency=4,
            peer="the PE array's",
            traffic="issue the read of src0 and the write of dst",
        )
    )
    register_component_type(
        ComponentType(
            name="traffic_generator",
            cpp_class="TrafficGenerator",
            header="tlm_models/traffic_generator.h",
            description="synthetic requests for calibrating memories and interconnects",
            params=(
                _p("requests", "count", 1024, "requests to issue"),
                _p("request_size", "size", "64 B", "bytes per request (< 4 GiB)"),
                _p(
                    "command",
                    "choice",
                    "read",
                    "request command: `read` or `write`",
                    choices=("read", "write"),
                ),
                _p(
                    "pattern",
                    "choice",
                    "sequential",
                    "address pattern: `sequential` or `random`",
                    choices=("sequential", "random"),
                ),
                _p("base", "address", 0, "start of the address range"),
                _p("range", "size", "1 MiB", "length of the range (>= `request_size`)"),
                _p("max_outstanding", "count", 1, "requests in flight", minimum=1),
                _p("seed", "count", 1, "random pattern seed"),
            ),
            sockets=(SocketSpec("socket", "initiator", description="request port"),),
        )
    )


_register_builtins()
