"""`platform_area`: every component's area and leakage at the platform's `technology:`.

How each type is built (docs/models/area.md has the derivations):
- pe_array: rows x cols PEs, each an FP multiplier, an FP adder and its registers (broadcast:
  an operand and a partial sum; systolic mappings: two pass-through operands and a partial
  sum), elem_bytes wide; the arithmetic is Horowitz's FP16 (an elem_bytes other than 2 B
  scales it linearly with the width, a stated approximation).
- exp_unit: lanes x one exponential module, exp(x) = 2^(x log2 e) with 2^frac as a cubic in
  Horner form: 4 multipliers, 3 adders and a register after each of the 7 stages.
- sram: CACTI 7.0 macros (sram.py).
- dma: per channel a descriptor of three 64-bit registers (source, destination, length), one
  96-bit entry (address, length) per outstanding burst, and a 64-bit address adder.
- interconnect: per output link and bit, a mux tree over the inputs (inputs - 1 two-input
  muxes, at least one); wires run over the logic and add no area.
- the accelerator top (a row named `top`, on a platform with engines): the stored registers
  of the AttentionAccelerator's register map (docs/integration.md): CTRL, COMMAND_BASE,
  COMMAND_COUNT, WINDOW, STATUS, ERROR_CODE, ERROR_INDEX, eight 64-bit counters and two 64-bit
  counters per engine, each counter with a 64-bit incrementer; read-only constants are wires.
- off-chip memories (hbm): not on this die; their PHY is not modelled.
- traffic_generator: a test stimulus, not hardware.
"""

from __future__ import annotations

from tlm_models.errors import UserError
from tlm_models.platform.area.logic import ZERO, Estimate, block
from tlm_models.platform.area.report import AreaReport, ComponentArea
from tlm_models.platform.area.sources import (
    ADDER_32,
    ALADDIN,
    FP16_ADD,
    FP16_MUL,
    HOROWITZ,
    MUX2_BIT,
    NANGATE,
    REGISTER_BIT,
    STILLMAKER,
)
from tlm_models.platform.area.sram import sram
from tlm_models.platform.area.technology import Technology
from tlm_models.platform.compose import Platform
from tlm_models.platform.schema import ComponentConfig, PlatformConfig

#: The accelerator top's stored register bits besides the counters: CTRL (2), COMMAND_BASE (64),
#: COMMAND_COUNT, WINDOW, ERROR_CODE, ERROR_INDEX (32 each), STATUS (3: state and IRQ pending).
TOP_CONTROL_BITS = 2 + 64 + 4 * 32 + 3
#: 64-bit counters: CYCLES, BYTES_READ/WRITTEN, OPS, STALL/EXEC/FETCH_CYCLES, FETCH_BYTES.
TOP_COUNTERS = 8
#: The exp module's arithmetic: range reduction (1 multiply) and a Horner cubic (3 multiply-adds).
EXP_MULS, EXP_ADDS = 4, 3
DESCRIPTOR_BITS = 3 * 64
OUTSTANDING_ENTRY_BITS = 64 + 32
SCALED = f"scaled: {STILLMAKER}"


def _int(comp: ComponentConfig, name: str) -> int:
    value = comp.params[name]
    assert isinstance(value, (int, float))
    return int(value)


def pe(comp: ComponentConfig, tech: Technology) -> tuple[Estimate, str]:
    width = _int(comp, "elem_bytes") / 2  # Horowitz's units are FP16
    registers = 2 if comp.params["mapping"] == "broadcast" else 3
    bits = registers * 8 * _int(comp, "elem_bytes")
    count = _int(comp, "rows") * _int(comp, "cols")
    one = block(((FP16_MUL, width), (FP16_ADD, width), (REGISTER_BIT, bits)), tech)
    return one * count, (
        f"{count} PEs x (FP mul + FP add: {HOROWITZ}; {bits} register bits: {ALADDIN}); {SCALED}"
    )


def exp(comp: ComponentConfig, tech: Technology) -> tuple[Estimate, str]:
    width = _int(comp, "elem_bytes") / 2
    bits = (EXP_MULS + EXP_ADDS) * 8 * _int(comp, "elem_bytes")
    lanes = _int(comp, "lanes")
    one = block(
        ((FP16_MUL, EXP_MULS * width), (FP16_ADD, EXP_ADDS * width), (REGISTER_BIT, bits)), tech
    )
    return one * lanes, (
        f"{lanes} lanes x ({EXP_MULS} FP mul + {EXP_ADDS} FP add: {HOROWITZ}; "
        f"{bits} register bits: {ALADDIN}); {SCALED}"
    )


def dma(comp: ComponentConfig, tech: Technology) -> tuple[Estimate, str]:
    channels = _int(comp, "channels")
    bits = DESCRIPTOR_BITS + _int(comp, "max_outstanding") * OUTSTANDING_ENTRY_BITS
    one = block(((REGISTER_BIT, bits), (ADDER_32, 2)), tech)
    return one * channels, (
        f"{channels} channels x ({bits} register bits + a 64-bit adder: {ALADDIN}); {SCALED}"
    )


def interconnect(
    comp: ComponentConfig, config: PlatformConfig, tech: Technology
) -> tuple[Estimate, str]:
    inputs = sum(1 for b in config.bindings if b.target.component == comp.name)
    outputs = sum(1 for b in config.bindings if b.initiator.component == comp.name)
    bits = 8 * _int(comp, "width")
    muxes = outputs * bits * max(inputs - 1, 1)
    return block(((MUX2_BIT, muxes),), tech), (
        f"{inputs} in x {outputs} out x {bits} bit links: {muxes} 2:1 muxes ({NANGATE}; "
        f"leakage: {ALADDIN}); {SCALED}"
    )


def top(config: PlatformConfig, tech: Technology) -> ComponentArea:
    """The register file of the accelerator top (docs/integration.md's register map)."""
    counters = TOP_COUNTERS + 2 * len(config.engines)  # ENGINE_BUSY and ENGINE_STALL each
    bits = TOP_CONTROL_BITS + 64 * counters
    estimate = block(((REGISTER_BIT, bits), (ADDER_32, 2 * counters)), tech)
    return ComponentArea(
        "top", "accelerator_top", estimate.area_mm2, estimate.leakage_w,
        f"register map: {bits} register bits, {counters} 64-bit counter incrementers "
        f"({ALADDIN}); {SCALED}",
    )  # fmt: skip


def _component(comp: ComponentConfig, config: PlatformConfig, tech: Technology) -> ComponentArea:
    estimate, source = ZERO, ""
    if comp.type == "pe_array":
        estimate, source = pe(comp, tech)
    elif comp.type == "exp_unit":
        estimate, source = exp(comp, tech)
    elif comp.type == "sram":
        estimate, source = sram(
            _int(comp, "capacity"), _int(comp, "banks"), _int(comp, "ports"),
            _int(comp, "port_width"), tech,
        )  # fmt: skip
    elif comp.type == "dma":
        estimate, source = dma(comp, tech)
    elif comp.type == "interconnect":
        estimate, source = interconnect(comp, config, tech)
    elif comp.spec.memory == "offchip":
        source = "off-chip memory: not on this die; its PHY is not modelled (excluded)"
    elif comp.type == "traffic_generator":
        source = "test stimulus, not hardware"
    else:
        source = f"no area model for type '{comp.type}' (excluded)"
    return ComponentArea(comp.name, comp.type, estimate.area_mm2, estimate.leakage_w, source)


def _config(platform: Platform | PlatformConfig) -> PlatformConfig:
    return platform.config if isinstance(platform, Platform) else platform


def platform_area(platform: Platform | PlatformConfig) -> AreaReport:
    """Every component's area and leakage; a platform without `technology:` is an error."""
    config = _config(platform)
    tech = config.technology
    if tech is None:
        raise UserError(
            f"{config.source or config.name}: platform '{config.name}' states no technology; "
            "add 'technology: {node: 22 nm, voltage: 0.8 V}' or --set technology.node=22nm "
            "--set technology.voltage=0.8V"
        )
    clocks = [float(c.params["clock"]) for c in config.components.values() if "clock" in c.params]
    where = config.source or config.name
    components: list[ComponentArea] = []
    for comp in config.components.values():
        try:
            components.append(_component(comp, config, tech))
        except UserError as exc:
            # The estimate's message names the parameter; this names the file and component.
            key = "" if str(exc).startswith("technology.") else f"{comp.name}."
            raise UserError(f"{where}: {key}{exc}") from None
    if config.engines:
        components.append(top(config, tech))
    return AreaReport(tech.node_nm, tech.voltage_v, max(clocks, default=0.0), tuple(components))


def area_if_stated(platform: Platform | PlatformConfig) -> AreaReport | None:
    """The area of a platform with a `technology:` section that the tables cover, else None:
    a run then records `area_mm2: null` and charges no model leakage (`attn-tlm area` says
    why)."""
    if _config(platform).technology is None:
        return None
    try:
        return platform_area(platform)
    except UserError:
        return None


def run_area(
    platform: Platform | PlatformConfig,
) -> tuple[float | None, dict[str, tuple[str, float]]]:
    """What a run's result takes from the area model: `area_mm2` and each component's type and
    leakage (W), charged as static energy where its energy table has no `leak` entry."""
    report = area_if_stated(platform)
    if report is None:
        return None, {}
    return report.total_mm2, {c.name: (c.kind, c.leakage_w) for c in report.components}
