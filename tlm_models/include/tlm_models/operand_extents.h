// The bytes each operand of a trace record spans: the one statement of the operand-extent
// rules (docs/internals.md, "Trace records"). The accelerator's command decoder checks its
// commands with it, and the Python trace validator's vectorised copy is compared with it
// record for record through cppyy (tests/test_record_contract.py).
#ifndef TLM_MODELS_OPERAND_EXTENTS_H
#define TLM_MODELS_OPERAND_EXTENTS_H

#include <cstdint>

#include "tlm_models/trace_op.h"

namespace tlm_models {

// Bytes from the operand's address to its last byte; 0 = the record does not use the operand.
struct OperandExtents {
  std::uint64_t src0 = 0, src1 = 0, dst = 0;
};

// A load/store row-pitched block: m - 1 pitches (0 = n, rows packed) plus one row of n bytes.
inline std::uint64_t pitched_extent(const TraceOp& op, std::uint32_t stride) {
  if (op.m == 0 || op.n == 0) return 0;
  return std::uint64_t{op.m - 1} * (stride ? stride : op.n) + op.n;
}

// Vector ops that read a second operand (copy, rowmax, rowsum and mask read only src0; a
// mask's src1 holds its row wrap, not an address).
inline bool vector_reads_src1(VectorOp v) {
  return v != VectorOp::copy && v != VectorOp::rowmax && v != VectorOp::rowsum &&
         v != VectorOp::mask;
}

// `elem_bytes` is the element width of the engine running the record (compute records).
inline OperandExtents operand_extents(const TraceOp& op, std::uint64_t elem_bytes) {
  const std::uint64_t m = op.m, n = op.n, k = op.k, e = elem_bytes;
  OperandExtents x;
  switch (static_cast<OpKind>(op.kind)) {
    case OpKind::load:
    case OpKind::store:
      x.src0 = pitched_extent(op, op.src_stride);
      x.dst = pitched_extent(op, op.dst_stride);
      break;
    case OpKind::matmul:
      x.src0 = m * k * e;
      x.src1 = k * n * e;
      x.dst = m * n * e;
      break;
    case OpKind::vector: {
      const VectorOp v = vector_op(op);
      const Broadcast b = broadcast(op);
      x.src0 = m * n * e;
      if (vector_reads_src1(v))
        x.src1 = (b == Broadcast::full ? m * n : b == Broadcast::row ? m : b == Broadcast::col ? n : 0) * e;
      x.dst = (v == VectorOp::rowmax || v == VectorOp::rowsum ? m : m * n) * e;
      break;
    }
    case OpKind::exp:
      x.src0 = m * n * e;
      x.dst = m * n * e;
      break;
  }
  return x;
}

}  // namespace tlm_models

#endif  // TLM_MODELS_OPERAND_EXTENTS_H
