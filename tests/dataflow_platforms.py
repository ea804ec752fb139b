"""PlatformInfo objects for dataflow tests: the AttenIO machine and small-SRAM variants."""

from __future__ import annotations

from tlm_models.dataflows.reference_machine import attenio_machine

KIB = 1 << 10

__all__ = ["KIB", "attenio_machine"]
