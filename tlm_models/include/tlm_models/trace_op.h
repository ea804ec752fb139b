// One operation of an attn-tlm trace: the 64-byte little-endian record that the binary trace
// format stores, that Python hands over by pointer (numpy structured array, zero-copy), and
// that engines execute. Field meaning per kind is specified in traces/README.md.
#ifndef TLM_MODELS_TRACE_OP_H
#define TLM_MODELS_TRACE_OP_H

#include <cstddef>
#include <cstdint>

namespace tlm_models {

enum class OpKind : std::uint8_t {
  load = 1,    // off-chip -> SRAM through a DMA channel
  store = 2,   // SRAM -> off-chip through a DMA channel
  matmul = 3,  // PE array: C[m x n] (+)= A[m x k] * B[k x n]
  vector = 4,  // PE array: element-wise / row-reduction op on an m x n block
  exp = 5,     // Exp unit: dst = exp(src0) on an m x n block
};

// matmul flags (TraceOp::code)
constexpr std::uint8_t kMatmulTransB = 0x1;      // B is stored n x k (row-major), i.e. B^T
constexpr std::uint8_t kMatmulAccumulate = 0x2;  // C += A * B instead of C = A * B
// C = diag(alpha) C + A * B: each row of C is scaled by alpha[i] before accumulating; the
// m-element alpha vector is at src2(op) (the stride fields, unused by compute records).
constexpr std::uint8_t kMatmulScaleRows = 0x4;
// vector, exp and matmul: the operation streams from its producers (forwarding): it may
// start once they have written their first elements instead of their whole results.
constexpr std::uint8_t kStreamed = 0x80;
// exp: the operation is part of the online-softmax correction (the exp of m_old - m). A
// statistics tag only: it changes no timing, so that the time an engine spends rescaling can be
// told apart from the softmax it would do anyway. On vector records the same bit is
// kVectorLazyRows (below): the rescale of O, which is rescaling by construction.
constexpr std::uint8_t kRescale = 0x40;

// vector op codes: low 4 bits of TraceOp::code
enum class VectorOp : std::uint8_t {
  copy = 0,    // dst = src0
  add = 1,     // dst = src0 + s1
  sub = 2,     // dst = src0 - s1
  mul = 3,     // dst = src0 * s1
  div = 4,     // dst = src0 / s1
  max = 5,     // dst = max(src0, s1)
  fma = 6,     // dst = src0 * s1 + dst
  rowmax = 7,  // dst[i] = max_j src0[i, j]   (dst is m x 1)
  rowsum = 8,  // dst[i] = sum_j src0[i, j]   (dst is m x 1)
  // dst[i, j] = src0[i, j] where row i sees column j, else the fill (float32 bits in k,
  // broadcast scalar). Row i sits t(i) query positions after row 0: t = i, or
  // ((phase + i) mod period) - phase when period > 0; it sees columns j <= diag + t(i) and,
  // when window > 0, j > diag + t(i) - window. diag (int32) is src_stride, window dst_stride,
  // period | phase << 32 is src1 (mask_diagonal() etc. below). Causal and sliding masks.
  mask = 9,
};
// how the second operand s1 is formed: bits 4-5 of TraceOp::code
enum class Broadcast : std::uint8_t {
  full = 0,    // s1 = src1[i, j], an m x n block
  row = 1,     // s1 = src1[i], one value per row (m x 1)
  col = 2,     // s1 = src1[j], one value per column (1 x n)
  scalar = 3,  // s1 = the float32 whose bits are stored in TraceOp::k
};
constexpr std::uint8_t kVectorOpMask = 0x0f;
// vector mul with Broadcast::row only: the rescale of O by its rows' factors. Rows whose factor
// src1[i] is exactly 1 are left as they are (multiplying by 1 changes nothing), and k holds how
// many rows have a factor other than 1 (a lazy rescale: an online softmax's rows whose running
// max rose; every row, k = m, for a rescale that scales them all): the rows the engine reads,
// multiplies and writes back.
constexpr std::uint8_t kVectorLazyRows = 0x40;
constexpr unsigned kBroadcastShift = 4;

constexpr unsigned kMaxDeps = 4;
constexpr std::uint8_t kNoTensor = 0xff;

#pragma pack(push, 1)
struct TraceOp {
  std::uint8_t kind;     // OpKind
  std::uint8_t engine;   // index into the trace header's engine table
  std::uint8_t tensor;   // load/store: index into the tensor table (kNoTensor = none)
  std::uint8_t code;     // matmul flags / vector op + broadcast
  std::uint32_t deps[kMaxDeps];  // back-distances to earlier ops (1 = previous op); 0 = unused
  std::uint32_t m;       // rows (load/store: rows of the 2-D transfer)
  std::uint32_t n;       // columns (load/store: bytes per row)
  std::uint32_t k;       // matmul inner dimension; vector scalar operand bits
  std::uint64_t src0;    // load: off-chip address; store: SRAM address; compute: operand A
  std::uint64_t src1;    // compute: operand B (matmul) or second operand (vector)
  std::uint64_t dst;     // load: SRAM address; store: off-chip address; compute: result
  std::uint32_t src_stride;  // load/store: source row pitch in bytes (0 = n)
  std::uint32_t dst_stride;  // load/store: destination row pitch in bytes (0 = n)
};
#pragma pack(pop)

static_assert(sizeof(TraceOp) == 64, "trace records are 64 bytes");
static_assert(offsetof(TraceOp, src0) == 32, "record layout is part of the file format");

// The online-softmax correction: an exp tagged kRescale or a vector rescale of O's rows.
inline bool is_rescale(const TraceOp& op) {
  const auto kind = static_cast<OpKind>(op.kind);
  if (kind == OpKind::exp) return (op.code & kRescale) != 0;
  return kind == OpKind::vector && (op.code & kVectorLazyRows) != 0;
}
inline VectorOp vector_op(const TraceOp& op) { return static_cast<VectorOp>(op.code & kVectorOpMask); }
// A mask record's geometry (VectorOp::mask): the fields an element-wise op leaves unused.
inline std::int32_t mask_diagonal(const TraceOp& op) { return static_cast<std::int32_t>(op.src_stride); }
inline std::uint32_t mask_window(const TraceOp& op) { return op.dst_stride; }
inline std::uint32_t mask_period(const TraceOp& op) { return static_cast<std::uint32_t>(op.src1); }
inline std::uint32_t mask_phase(const TraceOp& op) { return static_cast<std::uint32_t>(op.src1 >> 32); }
inline Broadcast broadcast(const TraceOp& op) {
  return static_cast<Broadcast>((op.code >> kBroadcastShift) & 0x3);
}
inline bool is_streamed(const TraceOp& op) {
  const auto kind = static_cast<OpKind>(op.kind);
  return (op.code & kStreamed) != 0 &&
         (kind == OpKind::vector || kind == OpKind::exp || kind == OpKind::matmul);
}
// A compute record's third source (the row scales of a kMatmulScaleRows matmul): the two
// stride fields, which only load and store records use, as one 64-bit address.
inline std::uint64_t src2(const TraceOp& op) {
  return (static_cast<std::uint64_t>(op.dst_stride) << 32) | op.src_stride;
}
inline void set_src2(TraceOp& op, std::uint64_t address) {
  op.src_stride = static_cast<std::uint32_t>(address);
  op.dst_stride = static_cast<std::uint32_t>(address >> 32);
}
// A record of `kind` on `engine` over an m x n (x k) block, with no tensor tag and no
// dependencies; callers add deps, tensor, code or strides as they need.
inline TraceOp make_op(OpKind kind, std::uint8_t engine, std::uint32_t m, std::uint32_t n,
                       std::uint32_t k = 0, std::uint64_t src0 = 0, std::uint64_t src1 = 0,
                       std::uint64_t dst = 0) {
  TraceOp op{};
  op.kind = static_cast<std::uint8_t>(kind);
  op.engine = engine;
  op.tensor = kNoTensor;
  op.m = m;
  op.n = n;
  op.k = k;
  op.src0 = src0;
  op.src1 = src1;
  op.dst = dst;
  return op;
}

inline std::uint64_t transfer_bytes(const TraceOp& op) {
  return static_cast<std::uint64_t>(op.m) * op.n;
}

}  // namespace tlm_models

#endif  // TLM_MODELS_TRACE_OP_H
