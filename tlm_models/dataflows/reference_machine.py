"""The AttenIO paper's machine as a PlatformInfo built from constants (no YAML needed)."""

from __future__ import annotations

from tlm_models.platform.info import MemoryRegion, PlatformInfo


def attenio_machine(
    sram_bytes: int = 512 << 10, kv_bytes: int | None = 256, two_dmas: bool = True
) -> PlatformInfo:
    """HBM 8 GiB at 0x0 (128 GB/s), 512 KiB SRAM, 256 B KV buffer, PE 64x32 and 128 exp lanes
    at 1 GHz; SRAM and KV buffer resizable for studies and tests."""
    engines = {"dma0": "dma", "dma1": "dma", "pe": "pe", "exp": "exp"}
    if not two_dmas:
        del engines["dma1"]
    kv = None if kv_bytes is None else MemoryRegion("kv_buffer", 0x2_0000_0000, kv_bytes)
    return PlatformInfo(
        name="attenio",
        offchip=MemoryRegion("hbm", 0x0, 8 << 30),
        scratchpad=MemoryRegion("sram", 0x1_0000_0000, sram_bytes),
        engines=engines,
        pe_rows=64,
        pe_cols=32,
        pe_clock_hz=1e9,
        exp_lanes=128,
        exp_clock_hz=1e9,
        offchip_bandwidth=128e9,
        kv_buffer=kv,
        # platforms/attenio.yaml: broadcast mapping, the PE's and Exp unit's default latencies
        extra={"pe_broadcast": 1.0, "pe_latency": 2.0, "exp_latency": 4.0},
    )
