"""The element types of the accelerator's values as numpy arrays: FP16, BF16 and FP32 (the PE
array's and the Exp unit's ``number_format``, 2-, 2- and 4-byte little-endian elements), encoded
and decoded as functional mode stores them (round to nearest even, ``functional_ops.h``)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["ELEMENT_BYTES", "decode", "element_format", "encode"]

#: Bytes per element of each number format.
ELEMENT_BYTES = {"fp16": 2, "bf16": 2, "fp32": 4}


def element_format(number_format: str, elem_bytes: int) -> str | None:
    """The format a platform's elements are held in: its ``number_format`` when the width
    agrees, FP16 for other 2-byte platforms, FP32 for 4-byte; None for other widths."""
    if ELEMENT_BYTES.get(number_format) == elem_bytes:
        return number_format
    return {2: "fp16", 4: "fp32"}.get(elem_bytes)


def encode(values: npt.ArrayLike, number_format: str) -> bytes:
    """``values`` as little-endian elements of ``number_format``, rounded to nearest even."""
    v = np.asarray(values)
    if number_format == "fp16":
        return v.astype("<f2").tobytes()
    if number_format == "fp32":
        return v.astype("<f4").tobytes()
    if number_format == "bf16":
        x = v.astype(np.float32)  # BF16 is FP32's upper half: round to FP32 first
        bits = x.view(np.uint32).astype(np.uint64)
        rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
        nan = np.isnan(x)
        rounded[nan] = (bits[nan] >> 16) | 0x40
        return rounded.astype("<u2").tobytes()
    raise ValueError(f"number format '{number_format}' is not fp16, bf16 or fp32")


def decode(data: bytes, number_format: str) -> npt.NDArray[np.float64]:
    """Little-endian elements of ``number_format`` as float64 values (exact)."""
    if number_format == "fp16":
        return np.frombuffer(data, dtype="<f2").astype(np.float64)
    if number_format == "fp32":
        return np.frombuffer(data, dtype="<f4").astype(np.float64)
    if number_format == "bf16":
        bits = np.frombuffer(data, dtype="<u2").astype(np.uint32) << 16
        return bits.view(np.float32).astype(np.float64)
    raise ValueError(f"number format '{number_format}' is not fp16, bf16 or fp32")
