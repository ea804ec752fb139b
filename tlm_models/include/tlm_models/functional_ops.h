// Functional mode of the compute engines: the values of a matmul, vector or exp record computed
// on the on-chip memory's contents, so that the accelerator in a virtual prototype writes the
// real attention output O = softmax(mask(Q K^T / sqrt(d))) V (docs/integration.md, "Functional
// mode"). The loads and stores need nothing of it: the DMA's timed transactions already move
// the bytes between system memory and the SRAM.
//
// The engine calls run() when the replayer issues the operation, before its timing is computed.
// Issue order respects every dependency of the stream, so running each record whole at its
// issue gives the values of a sequential execution (what the Python reference executor checks
// the dataflows against, tlm_models/replay/reference.py); forwarding changes only when the hardware
// would have them. Operands and results travel as debug transactions (transport_dbg) on the
// engine's SRAM port: they take no simulated time and book nothing, so the timing of every
// operation is that of timing-only mode, to the picosecond.
//
// Arithmetic: elements are stored in the number format (FP16, BF16 or FP32, little-endian);
// each operation converts its operands to FP32, computes in FP32 (a matmul accumulates its k
// products in one FP32 sum in order; exp is std::exp of the FP32 value) and rounds its result to
// the format, to nearest even, when it writes it back — as an array with FP32 accumulators that
// holds every intermediate in the SRAM in the element type.
#ifndef TLM_MODELS_FUNCTIONAL_OPS_H
#define TLM_MODELS_FUNCTIONAL_OPS_H

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <tlm>

#include "tlm_models/op_executor.h"
#include "tlm_models/trace_op.h"

namespace tlm_models {

enum class NumberFormat { fp16, bf16, fp32, unknown };

inline NumberFormat number_format_of(const std::string& name) {
  if (name == "fp16") return NumberFormat::fp16;
  if (name == "bf16") return NumberFormat::bf16;
  if (name == "fp32") return NumberFormat::fp32;
  return NumberFormat::unknown;
}

inline std::uint64_t format_bytes(NumberFormat f) { return f == NumberFormat::fp32 ? 4 : 2; }

// The engines' check of (functional, number_format, elem_bytes): "" when consistent.
inline std::string check_number_format(const std::string& name, bool functional,
                                       std::uint64_t elem_bytes) {
  const NumberFormat f = number_format_of(name);
  if (f == NumberFormat::unknown) return "number_format must be fp16, bf16 or fp32, not '" + name + "'";
  if (functional && format_bytes(f) != elem_bytes)
    return "functional: number_format " + name + " has " + std::to_string(format_bytes(f)) +
           "-byte elements but elem_bytes is " + std::to_string(elem_bytes);
  return "";
}

inline std::uint32_t float_bits(float f) {
  std::uint32_t x;
  std::memcpy(&x, &f, 4);
  return x;
}
inline float bits_float(std::uint32_t x) {
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

// IEEE 754 binary16, round to nearest even; NaN stays NaN, overflow goes to infinity.
inline std::uint16_t float_to_fp16(float f) {
  const std::uint32_t x = float_bits(f);
  const auto sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
  const std::uint32_t a = x & 0x7fffffffu;
  if (a >= 0x7f800000u) return static_cast<std::uint16_t>(sign | (a > 0x7f800000u ? 0x7e00u : 0x7c00u));
  if (a >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // >= 65520: rounds up to inf
  if (a < 0x38800000u) {
    // Below 2^-14: a subnormal half, in units of 2^-24 (exact scaling; the rounding mode is the
    // default, to nearest even). 1024 units is the smallest normal, whose encoding is the same.
    const float units = std::nearbyint(bits_float(a) * 16777216.0f);
    return static_cast<std::uint16_t>(sign | static_cast<std::uint16_t>(units));
  }
  std::uint32_t h = ((((a >> 23) - 127 + 15) << 10) | ((a & 0x7fffffu) >> 13));
  const std::uint32_t rest = a & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;  // a carry moves into the exponent
  return static_cast<std::uint16_t>(sign | h);
}

inline float fp16_to_float(std::uint16_t h) {
  const std::uint32_t sign = std::uint32_t{h & 0x8000u} << 16;
  const std::uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0) {
    const float v = static_cast<float>(m) * (1.0f / 16777216.0f);  // subnormal: m * 2^-24, exact
    return sign ? -v : v;
  }
  if (e == 0x1f) return bits_float(sign | 0x7f800000u | (m << 13));
  return bits_float(sign | ((e - 15 + 127) << 23) | (m << 13));
}

// bfloat16: the upper half of an FP32, round to nearest even; NaN stays a (quiet) NaN.
inline std::uint16_t float_to_bf16(float f) {
  const std::uint32_t x = float_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);
  return static_cast<std::uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}
inline float bf16_to_float(std::uint16_t b) { return bits_float(std::uint32_t{b} << 16); }

// A value as the format holds it (the rounding a write to the SRAM applies).
inline float round_to(NumberFormat f, float v) {
  switch (f) {
    case NumberFormat::fp16: return fp16_to_float(float_to_fp16(v));
    case NumberFormat::bf16: return bf16_to_float(float_to_bf16(v));
    default: return v;
  }
}

class FunctionalOps {
 public:
  FunctionalOps(tlm::tlm_initiator_socket<>& port, std::string owner, NumberFormat format)
      : port_(port), owner_(std::move(owner)), format_(format), eb_(format_bytes(format)) {}

  NumberFormat format() const { return format_; }

  // The values of a matmul, vector or exp record (trace_op.h), read and written on the port.
  void run(const TraceOp& op) {
    switch (static_cast<OpKind>(op.kind)) {
      case OpKind::matmul: return matmul(op);
      case OpKind::vector: return vector(op);
      case OpKind::exp: {
        const std::uint64_t mn = std::uint64_t{op.m} * op.n;
        std::vector<float> a = read(op.src0, mn);
        for (float& v : a) v = std::exp(v);
        return write(op.dst, a);
      }
      default: return;  // loads and stores: the DMA moves the bytes
    }
  }

 private:
  void matmul(const TraceOp& op) {
    const std::uint64_t m = op.m, n = op.n, k = op.k;
    const std::vector<float> a = read(op.src0, m * k);
    const std::vector<float> b = read(op.src1, k * n);
    const bool trans_b = op.code & kMatmulTransB;  // B stored n x k
    const bool scale = op.code & kMatmulScaleRows;
    const bool accumulate = scale || (op.code & kMatmulAccumulate);
    std::vector<float> c = accumulate ? read(op.dst, m * n) : std::vector<float>(m * n, 0.0f);
    const std::vector<float> alpha = scale ? read(src2(op), m) : std::vector<float>();
    for (std::uint64_t i = 0; i < m; ++i) {
      for (std::uint64_t j = 0; j < n; ++j) {
        float sum = 0.0f;
        for (std::uint64_t p = 0; p < k; ++p)
          sum += a[i * k + p] * (trans_b ? b[j * k + p] : b[p * n + j]);
        float& out = c[i * n + j];
        out = scale ? alpha[i] * out + sum : accumulate ? out + sum : sum;
      }
    }
    write(op.dst, c);
  }

  void vector(const TraceOp& op) {
    const std::uint64_t m = op.m, n = op.n, mn = m * n;
    const VectorOp vop = vector_op(op);
    if (vop == VectorOp::rowmax || vop == VectorOp::rowsum) {
      const std::vector<float> a = read(op.src0, mn);
      std::vector<float> r(m);
      for (std::uint64_t i = 0; i < m; ++i) {
        float acc = vop == VectorOp::rowmax ? -INFINITY : 0.0f;
        for (std::uint64_t j = 0; j < n; ++j)
          acc = vop == VectorOp::rowmax ? std::fmax(acc, a[i * n + j]) : acc + a[i * n + j];
        r[i] = acc;
      }
      return write(op.dst, r);
    }
    if (vop == VectorOp::mask) return mask(op);
    if (op.code & kVectorLazyRows) {
      // Rows whose factor is exactly 1 are left as they are (x * 1 = x): only the others are
      // read, multiplied and written, as the engine's timing charges.
      const std::vector<float> f = read(op.src1, m);
      for (std::uint64_t i = 0; i < m; ++i) {
        if (f[i] == 1.0f) continue;
        std::vector<float> row = read(op.src0 + i * n * eb_, n);
        for (float& v : row) v *= f[i];
        write(op.dst + i * n * eb_, row);
      }
      return;
    }
    const std::vector<float> a = read(op.src0, mn);
    std::vector<float> s1;
    const Broadcast bc = broadcast(op);
    if (vop != VectorOp::copy) {
      if (bc == Broadcast::full) s1 = read(op.src1, mn);
      else if (bc == Broadcast::row) s1 = read(op.src1, m);
      else if (bc == Broadcast::col) s1 = read(op.src1, n);
    }
    const float scalar = bits_float(op.k);
    std::vector<float> out = vop == VectorOp::fma ? read(op.dst, mn) : std::vector<float>(mn);
    for (std::uint64_t e = 0; e < mn; ++e) {
      const float x = a[e];
      const float y = vop == VectorOp::copy          ? 0.0f
                      : bc == Broadcast::full        ? s1[e]
                      : bc == Broadcast::row         ? s1[e / n]
                      : bc == Broadcast::col         ? s1[e % n]
                                                     : scalar;
      switch (vop) {
        case VectorOp::copy: out[e] = x; break;
        case VectorOp::add: out[e] = x + y; break;
        case VectorOp::sub: out[e] = x - y; break;
        case VectorOp::mul: out[e] = x * y; break;
        case VectorOp::div: out[e] = x / y; break;
        case VectorOp::max: out[e] = std::fmax(x, y); break;
        case VectorOp::fma: out[e] = x * y + out[e]; break;
        default:
          throw OpError(owner_ + ": functional mode has no vector op " +
                        std::to_string(static_cast<unsigned>(vop)));
      }
    }
    write(op.dst, out);
  }

  // dst = src0 where row i sees column j, else the fill (trace_op.h, VectorOp::mask).
  void mask(const TraceOp& op) {
    const std::uint64_t m = op.m, n = op.n;
    std::vector<float> a = read(op.src0, m * n);
    const std::int64_t diag = mask_diagonal(op), window = mask_window(op);
    const std::int64_t period = mask_period(op), phase = mask_phase(op);
    const float fill = bits_float(op.k);
    for (std::uint64_t i = 0; i < m; ++i) {
      const auto row = static_cast<std::int64_t>(i);
      const std::int64_t t = period == 0 ? row : (phase + row) % period - phase;
      const std::int64_t last = diag + t;
      for (std::uint64_t j = 0; j < n; ++j) {
        const auto col = static_cast<std::int64_t>(j);
        const bool visible = col <= last && (window == 0 || col > last - window);
        if (!visible) a[i * n + j] = fill;
      }
    }
    write(op.dst, a);
  }

  std::vector<float> read(std::uint64_t address, std::uint64_t elements) {
    bytes_.resize(elements * eb_);
    transfer(tlm::TLM_READ_COMMAND, address);
    std::vector<float> v(elements);
    const unsigned char* p = bytes_.data();
    for (std::uint64_t e = 0; e < elements; ++e, p += eb_) {
      if (format_ == NumberFormat::fp32) {
        std::uint32_t x = 0;
        for (unsigned b = 0; b < 4; ++b) x |= std::uint32_t{p[b]} << (8 * b);
        v[e] = bits_float(x);
      } else {
        const auto x = static_cast<std::uint16_t>(p[0] | (p[1] << 8));
        v[e] = format_ == NumberFormat::fp16 ? fp16_to_float(x) : bf16_to_float(x);
      }
    }
    return v;
  }

  void write(std::uint64_t address, const std::vector<float>& v) {
    bytes_.resize(v.size() * eb_);
    unsigned char* p = bytes_.data();
    for (float f : v) {
      const std::uint32_t x = format_ == NumberFormat::fp32   ? float_bits(f)
                              : format_ == NumberFormat::fp16 ? float_to_fp16(f)
                                                              : float_to_bf16(f);
      for (unsigned b = 0; b < eb_; ++b) *p++ = static_cast<unsigned char>(x >> (8 * b));
    }
    transfer(tlm::TLM_WRITE_COMMAND, address);
  }

  void transfer(tlm::tlm_command cmd, std::uint64_t address) {
    if (bytes_.empty()) return;
    tlm::tlm_generic_payload t;
    t.set_command(cmd);
    t.set_address(address);
    t.set_data_ptr(bytes_.data());
    t.set_data_length(static_cast<unsigned>(bytes_.size()));
    t.set_streaming_width(static_cast<unsigned>(bytes_.size()));
    t.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    const unsigned done = port_->transport_dbg(t);
    if (done != bytes_.size())
      throw OpError(owner_ + ": functional " + (cmd == tlm::TLM_READ_COMMAND ? "read" : "write") +
                    " of " + std::to_string(bytes_.size()) + " B at " + std::to_string(address) +
                    " moved " + std::to_string(done) + " B (the operand is not in a memory with storage)");
  }

  tlm::tlm_initiator_socket<>& port_;
  std::string owner_;
  NumberFormat format_;
  unsigned eb_;
  std::vector<unsigned char> bytes_;
};

}  // namespace tlm_models

#endif  // TLM_MODELS_FUNCTIONAL_OPS_H
