"""A C++ header of ``Params`` initialisers from a platform YAML: the configuration a C++ virtual
prototype builds its components from, the same values the Python builder hands to the models.

``attn-tlm config --params PLATFORM`` prints it. Each component becomes an inline function of the
platform's namespace returning its filled ``Params`` (``attenio::hbm()``); a platform with the
accelerator's structure (one DMA engine, PE array and Exp unit, a scratchpad SRAM, the
interconnects the DMA and the PE array are bound to, optionally a KV buffer) also gets
``accelerator()``, an ``AttentionAccelerator::Params`` with those components and the address
map's windows (docs/integration.md, "One configuration for both sides").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tlm_models.platform.registry import ParamSpec, ParamValue
from tlm_models.platform.schema import ComponentConfig, PlatformConfig

__all__ = ["AcceleratorLayout", "accelerator_layout", "params_header"]


def _literal(spec: ParamSpec, value: ParamValue) -> str:
    """``value`` as a C++ expression of the field's type (times are held in picoseconds)."""
    if spec.kind == "time":
        return f"sc_core::sc_time({int(value)}.0, sc_core::SC_PS)"
    if spec.kind in ("bandwidth", "frequency"):
        return repr(float(value))
    if spec.kind in ("choice", "text"):
        escaped = str(value).replace("\\", "\\\\").replace('"', '\\"')
        return f'"{escaped}"'
    if spec.kind == "bool":
        return "true" if value else "false"
    if spec.kind == "count":
        return f"{int(value)}u"
    return f"{int(value):#x}ull" if spec.kind == "address" else f"{int(value)}ull"


def _identifier(name: str) -> str:
    ident = re.sub(r"\W", "_", name)
    return f"p_{ident}" if ident[:1].isdigit() or not ident else ident


def _component_function(comp: ComponentConfig) -> list[str]:
    cls = comp.spec.qualified_class
    lines = [f"inline {cls}::Params {_identifier(comp.name)}() {{", f"  {cls}::Params p;"]
    for spec in comp.spec.params:
        lines.append(f"  p.{spec.name} = {_literal(spec, comp.params[spec.name])};")
    lines += ["  return p;", "}"]
    return lines


def _single(config: PlatformConfig, type_name: str, role: str | None = None) -> str | None:
    """The one component of ``type_name`` (and ``role``), or None when there is not exactly one."""
    found = [
        c.name
        for c in config.components.values()
        if c.type == type_name and (role is None or c.role == role)
    ]
    return found[0] if len(found) == 1 else None


def _bound_to(config: PlatformConfig, component: str, socket: str) -> str | None:
    for b in config.bindings:
        if b.initiator.component == component and b.initiator.socket == socket:
            return b.target.component
    return None


def _window(config: PlatformConfig, target: str) -> tuple[int, int] | None:
    for r in config.address_map:
        if r.target == target:
            return r.base, r.size
    return None


@dataclass(frozen=True)
class AcceleratorLayout:
    """Which components of a platform make up tlm_models::AttentionAccelerator, and its windows."""

    dma: str
    pe: str
    exp: str
    sram: str
    dma_noc: str
    compute_noc: str
    sram_base: int
    offchip_size: int
    kv_buffer: str | None = None
    kv_buffer_base: int = 0


def accelerator_layout(config: PlatformConfig) -> AcceleratorLayout | None:
    """The accelerator's structure in ``config`` (one DMA engine, PE array, Exp unit and
    scratchpad SRAM, the interconnects the DMA and the PE array are bound to, an off-chip memory
    mapped at 0, optionally a KV buffer), or None when the platform does not have it."""
    dma, pe, exp = _single(config, "dma"), _single(config, "pe_array"), _single(config, "exp_unit")
    sram = _single(config, "sram", "scratchpad")
    if dma is None or pe is None or exp is None or sram is None:
        return None
    dma_noc, compute_noc = _bound_to(config, dma, "mem_port"), _bound_to(config, pe, "sram_port")
    if dma_noc is None or compute_noc is None or dma_noc == compute_noc:
        return None
    sram_window = _window(config, sram)
    offchip = [
        r
        for r in config.address_map
        if config.components[r.target].spec.memory == "offchip" and r.base == 0
    ]
    if sram_window is None or len(offchip) != 1:
        return None
    kv = _single(config, "sram", "kv_buffer")
    kv_window = _window(config, kv) if kv is not None else None
    return AcceleratorLayout(
        dma=dma,
        pe=pe,
        exp=exp,
        sram=sram,
        dma_noc=dma_noc,
        compute_noc=compute_noc,
        sram_base=sram_window[0],
        offchip_size=offchip[0].size,
        kv_buffer=kv if kv_window is not None else None,
        kv_buffer_base=kv_window[0] if kv_window is not None else 0,
    )


def _accelerator_function(config: PlatformConfig) -> list[str]:
    """``accelerator()`` when the platform has the accelerator's structure, else nothing."""
    a = accelerator_layout(config)
    if a is None:
        return []
    cls = "tlm_models::AttentionAccelerator"
    lines = [
        "// The accelerator (tlm_models/attention_accelerator.h) with this platform's components.",
        f"inline {cls}::Params accelerator() {{",
        f"  {cls}::Params p;",
        f"  p.clock = {float(config.components[a.pe].params['clock'])!r};  // the PE array's",
        f"  p.sram_base = {a.sram_base:#x}ull;",
        f"  p.offchip_size = {a.offchip_size}ull;",
        *(
            f"  p.{field} = {_identifier(name)}();"
            for field, name in (
                ("dma", a.dma),
                ("pe", a.pe),
                ("exp", a.exp),
                ("sram", a.sram),
                ("dma_noc", a.dma_noc),
                ("compute_noc", a.compute_noc),
            )
        ),
    ]
    if a.kv_buffer is not None:
        lines += [
            "  p.has_kv_buffer = true;",
            f"  p.kv_buffer_base = {a.kv_buffer_base:#x}ull;",
            f"  p.kv_buffer = {_identifier(a.kv_buffer)}();",
        ]
    else:
        lines.append("  p.has_kv_buffer = false;")
    lines += ["  return p;", "}"]
    return lines


def params_header(config: PlatformConfig, source: str) -> str:
    """The header text for ``config`` (read from ``source``, named in its first line)."""
    namespace = _identifier(config.name)
    guard = f"ATTN_TLM_PLATFORM_{namespace.upper()}_PARAMS_H"
    headers = sorted({c.spec.header for c in config.components.values()})
    accelerator = _accelerator_function(config)
    if accelerator:
        headers.append("tlm_models/attention_accelerator.h")
    lines = [
        f"// Generated by `attn-tlm config --params {source}`: the Params of platform"
        f" '{config.name}'.",
        "// Regenerate it when the platform changes; do not edit.",
        f"#ifndef {guard}",
        f"#define {guard}",
        "",
        "#include <systemc>",
        "",
        *(f'#include "{h}"' for h in sorted(set(headers))),
        "",
        f"namespace {namespace} {{",
    ]
    for comp in config.components.values():
        lines += ["", *_component_function(comp)]
    if accelerator:
        lines += ["", *accelerator]
    lines += ["", f"}}  // namespace {namespace}", "", f"#endif  // {guard}", ""]
    return "\n".join(lines)
