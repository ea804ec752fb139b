"""Published figures the area model is built from, each with its source. Nothing here is fitted
to a platform or a paper's totals (docs/models/area.md explains each use).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path


@dataclass(frozen=True)
class LogicCell:
    """A logic block: area (um^2) at `node_nm`, and its leakage density (W per um^2) at
    `leak_node_nm` and `leak_voltage_v`."""

    name: str
    area_um2: float
    node_nm: float
    leak_w_per_um2: float
    leak_node_nm: float
    leak_voltage_v: float
    source: str


HOROWITZ = "Horowitz ISSCC 2014"
ALADDIN = "Aladdin ISCA 2014"
NANGATE = "NanGate 45 nm library"

#: Aladdin's 40 nm function units (area um^2, leakage mW), as its released power/area tables
#: give them: 32-bit FP add 4.36e3 / 5.31e-2, 32-bit FP multiply 8.97e3 / 1.20e-1, one
#: register bit 5.98 / 7.40e-5, one bitwise gate (bit) 50.4 / 6.11e-4. Their leakage per area
#: is what the FP16 units of Horowitz's table are charged. Aladdin states no supply for its
#: 40 nm library; 0.9 V, the nominal core supply of 40 nm processes, is assumed.
ALADDIN_VOLTAGE_V = 0.9
_FP_ADD_LEAK = 5.31e-5 / 4.36e3  # W per um^2
_FP_MUL_LEAK = 1.20e-4 / 8.97e3
_REG_LEAK = 7.40e-8 / 5.98
_BIT_LEAK = 6.11e-7 / 50.4

#: FP16 adder and multiplier: Horowitz's 45 nm area table (1360 um^2, 1640 um^2; energies
#: 0.4 pJ and 1.1 pJ). A flip-flop bit: Aladdin's register. A 2:1 multiplexer bit: the
#: library's MUX2_X1 (7 sites of 0.19 um x 1.4 um = 1.862 um^2).
FP16_ADD = LogicCell("fp16 add", 1360.0, 45.0, _FP_ADD_LEAK, 40.0, ALADDIN_VOLTAGE_V, HOROWITZ)
FP16_MUL = LogicCell("fp16 mul", 1640.0, 45.0, _FP_MUL_LEAK, 40.0, ALADDIN_VOLTAGE_V, HOROWITZ)
REGISTER_BIT = LogicCell("register bit", 5.98, 40.0, _REG_LEAK, 40.0, ALADDIN_VOLTAGE_V, ALADDIN)
ADDER_32 = LogicCell("32-bit add", 278.0, 40.0, 2.25e-6 / 278.0, 40.0, ALADDIN_VOLTAGE_V, ALADDIN)
MUX2_BIT = LogicCell("2:1 mux bit", 1.862, 45.0, _BIT_LEAK, 40.0, ALADDIN_VOLTAGE_V, NANGATE)

#: Stillmaker & Baas, "Scaling equations for the accurate prediction of CMOS device
#: performance from 180 nm to 7 nm", Integration 58 (2017): area relative to 45 nm
#: (their area-scaling table's 45 nm row). Nodes between entries interpolate log-log.
STILLMAKER = "Stillmaker & Baas 2017"
AREA_VS_45NM: tuple[tuple[float, float], ...] = (
    (130.0, 6.4),
    (90.0, 2.8),
    (65.0, 1.5),
    (45.0, 1.0),
    (32.0, 0.46),
    (20.0, 0.21),
    (16.0, 0.19),
    (14.0, 0.17),
    (10.0, 0.1),
    (7.0, 0.059),
)

#: CACTI 7.0 single-bank SRAM macros (tools/cacti_sram_table.py writes the file).
CACTI = "CACTI 7.0"
CACTI_TABLE = Path(__file__).with_name("cacti_sram.json")


@dataclass(frozen=True)
class CactiMacro:
    node_nm: float
    ports: int
    bytes: int
    area_mm2: float
    leakage_w: float


@dataclass(frozen=True)
class CactiTable:
    line_bytes: int
    vdd_v: dict[float, float]  # CACTI's supply at each node
    macros: tuple[CactiMacro, ...]

    @property
    def nodes(self) -> tuple[float, ...]:
        return tuple(sorted({m.node_nm for m in self.macros}))

    def series(self, node_nm: float, ports: int) -> tuple[CactiMacro, ...]:
        """The macros of one node and port count, by capacity."""
        rows = (m for m in self.macros if m.node_nm == node_nm and m.ports == ports)
        return tuple(sorted(rows, key=lambda m: m.bytes))


@cache
def cacti_table() -> CactiTable:
    data = json.loads(CACTI_TABLE.read_text())
    return CactiTable(
        line_bytes=int(data["line_bytes"]),
        vdd_v={float(k): float(v) for k, v in data["vdd_v"].items()},
        macros=tuple(
            CactiMacro(
                float(m["node_nm"]), int(m["ports"]), int(m["bytes"]), float(m["area_mm2"]),
                float(m["leakage_mw"]) / 1000.0,
            )
            for m in data["macros"]
        ),
    )  # fmt: skip
