// Division by a number fixed when a model is built (a bank word, a port's or a link's width).
// The SRAM and the interconnect divide by such widths several times per request; a power of two,
// the usual case, divides by a shift and a mask instead of a 64-bit division, which costs tens
// of cycles. The quotients and remainders are the same either way.
#ifndef TLM_MODELS_FIXED_DIVISOR_H
#define TLM_MODELS_FIXED_DIVISOR_H

#include <cstdint>

namespace tlm_models {

class FixedDivisor {
 public:
  explicit FixedDivisor(std::uint64_t d = 1)
      : d_(d == 0 ? 1 : d), pow2_((d_ & (d_ - 1)) == 0),
        shift_(pow2_ ? static_cast<unsigned>(__builtin_ctzll(d_)) : 0) {}

  std::uint64_t value() const { return d_; }
  std::uint64_t div(std::uint64_t a) const { return pow2_ ? a >> shift_ : a / d_; }
  std::uint64_t mod(std::uint64_t a) const { return pow2_ ? a & (d_ - 1) : a % d_; }
  // ceil(a / d), as ceil_div (time_ticks.h).
  std::uint64_t ceil(std::uint64_t a) const { return div(a) + (mod(a) != 0 ? 1 : 0); }

 private:
  std::uint64_t d_;
  bool pow2_;
  unsigned shift_;
};

}  // namespace tlm_models

#endif  // TLM_MODELS_FIXED_DIVISOR_H
