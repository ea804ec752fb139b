// Request latency statistics with a fixed power-of-two histogram, so results from different
// runs and platforms are directly comparable.
//
// Buckets (latency L in ns): bucket 0 holds L < 1 ns; bucket k (1 <= k < kBuckets - 1) holds
// 2^(k-1) ns <= L < 2^k ns; the last bucket holds L >= 2^(kBuckets-2) ns (about 524 us).
// The statistics name a bucket by its lower edge: "ge_0ns", "ge_1ns", "ge_2ns", ... "ge_524288ns".
#ifndef TLM_MODELS_LATENCY_STATS_H
#define TLM_MODELS_LATENCY_STATS_H

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>

#include "tlm_models/stats.h"
#include "tlm_models/time_ticks.h"

namespace tlm_models {

class LatencyStats {
 public:
  static constexpr unsigned kBuckets = 21;

  void record(Ticks latency) {
    ++count_;
    sum_ += latency;
    max_ = std::max(max_, latency);
    // ticks_per_second() is fixed once it has been read (reading it fixes the time resolution).
    if (ticks_per_second_ == 0) ticks_per_second_ = ticks_per_second();
    ++hist_[bucket(latency, ticks_per_second_)];
  }

  static unsigned bucket(Ticks latency) { return bucket(latency, ticks_per_second()); }

  // The bucket index is the bit width of the whole nanoseconds (as ticks_to_ns computes them).
  static unsigned bucket(Ticks latency, double ticks_per_second) {
    auto ns = static_cast<std::uint64_t>(static_cast<double>(latency) * 1e9 / ticks_per_second);
    if (ns == 0) return 0;
    const auto width = static_cast<unsigned>(64 - __builtin_clzll(ns));
    return width < kBuckets - 1 ? width : kBuckets - 1;
  }

  static std::string bucket_name(unsigned b) {
    std::uint64_t lower = b == 0 ? 0 : (std::uint64_t{1} << (b - 1));
    return "ge_" + std::to_string(lower) + "ns";
  }

  std::uint64_t count() const { return count_; }
  Ticks max() const { return max_; }
  double mean_ns() const { return count_ ? ticks_to_ns(sum_) / static_cast<double>(count_) : 0.0; }
  std::uint64_t bucket_count(unsigned b) const { return hist_[b]; }

  void collect(StatsGroup& g) const {
    g.add("latency_mean", mean_ns(), "ns", "mean request latency, arrival to response");
    g.add("latency_max", ticks_to_ns(max_), "ns", "largest request latency");
    StatsGroup& h = g.child("latency_histogram");
    for (unsigned b = 0; b < kBuckets; ++b)
      h.add(bucket_name(b), static_cast<double>(hist_[b]), "requests",
            "requests whose latency falls in this power-of-two bucket");
  }

  void reset() { *this = LatencyStats(); }

 private:
  std::uint64_t count_ = 0;
  Ticks sum_ = 0;
  Ticks max_ = 0;
  std::array<std::uint64_t, kBuckets> hist_{};
  double ticks_per_second_ = 0;  // cached on first use
};

}  // namespace tlm_models

#endif  // TLM_MODELS_LATENCY_STATS_H
