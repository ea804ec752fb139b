// Latency distribution with percentiles: a log-linear histogram of tick values, 128 buckets per
// power of two above 128 ticks (exact below), so a reported percentile is the upper edge of its
// bucket and at most 1/128 (0.8 %) above the true value. Memory grows with the largest value
// only (at most ~7.5 k counters).
#ifndef TLM_MODELS_PERCENTILE_HISTOGRAM_H
#define TLM_MODELS_PERCENTILE_HISTOGRAM_H

#include <cstdint>
#include <vector>

#include "tlm_models/time_ticks.h"

namespace tlm_models {

class PercentileHistogram {
 public:
  static constexpr unsigned kSubBits = 7;
  static constexpr std::uint64_t kSub = std::uint64_t{1} << kSubBits;

  void record(Ticks v) {
    std::size_t i = index(v);
    if (i >= counts_.size()) counts_.resize(i + 1, 0);
    ++counts_[i];
    ++count_;
  }

  std::uint64_t count() const { return count_; }

  // Smallest bucket upper edge (ticks) with at least fraction q of the values at or below it.
  Ticks percentile(double q) const {
    if (count_ == 0) return 0;
    auto need = static_cast<std::uint64_t>(q * static_cast<double>(count_) + 0.999999999);
    if (need == 0) need = 1;
    std::uint64_t seen = 0;
    for (std::size_t i = 0; i < counts_.size(); ++i) {
      seen += counts_[i];
      if (seen >= need) return upper(i);
    }
    return upper(counts_.size() - 1);
  }

  void reset() {
    counts_.clear();
    count_ = 0;
  }

 private:
  static std::size_t index(Ticks v) {
    if (v < kSub) return static_cast<std::size_t>(v);
    unsigned e = static_cast<unsigned>(63 - __builtin_clzll(v)) - kSubBits;  // v >> e in [128, 256)
    return static_cast<std::size_t>((e + 1) * kSub + ((v >> e) - kSub));
  }

  // The largest value of bucket i.
  static Ticks upper(std::size_t i) {
    if (i < kSub) return i;
    std::uint64_t e = i / kSub - 1;
    std::uint64_t mantissa = kSub + i % kSub;
    return ((mantissa + 1) << e) - 1;
  }

  std::vector<std::uint64_t> counts_;
  std::uint64_t count_ = 0;
};

}  // namespace tlm_models

#endif  // TLM_MODELS_PERCENTILE_HISTOGRAM_H
