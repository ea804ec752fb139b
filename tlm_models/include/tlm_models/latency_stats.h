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
    if (ticks_per_second_ == 0) set_rate(ticks_per_second());
    ++hist_[latency < exact_below_ ? table_bucket(latency) : bucket(latency, ticks_per_second_)];
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
  // Without floating point: when a nanosecond is a whole number of ticks (t of them), the
  // bucket of a latency below 2^53 / 1e9 ticks is the bit width of floor(latency / t), since
  // there latency * 1e9 is exact in a double and the rounded quotient truncates to the same
  // integer. Latencies of bit width w lie in [2^(w-1), 2^w), which holds at most one bucket
  // edge (edges are t * 2^k): their bucket is lo_[w], or lo_[w] + 1 from edge_[w] on.
  __attribute__((noinline, cold)) void set_rate(double tps) {  // once: keeps record() small
    ticks_per_second_ = tps;
    exact_below_ = 0;
    const double t = tps / 1e9;
    if (!(t >= 1) || t != static_cast<double>(static_cast<std::uint64_t>(t)) || t > 1e6) return;
    const auto tick_ns = static_cast<std::uint64_t>(t);
    if (static_cast<double>(tick_ns) * 1e9 != tps) return;
    auto exact_bucket = [tick_ns](std::uint64_t ticks) {
      const std::uint64_t ns = ticks / tick_ns;
      if (ns == 0) return 0u;
      const auto width = static_cast<unsigned>(64 - __builtin_clzll(ns));
      return width < kBuckets - 1 ? width : kBuckets - 1;
    };
    exact_below_ = std::uint64_t{9007199};  // < 2^53 / 1e9
    for (unsigned w = 1; w < 64; ++w) {
      const std::uint64_t low = std::uint64_t{1} << (w - 1);
      lo_[w] = static_cast<std::uint8_t>(exact_bucket(low));
      edge_[w] = ~std::uint64_t{0};
      if (lo_[w] + 1u < kBuckets) {
        const std::uint64_t e = tick_ns << lo_[w];  // first latency of bucket lo_[w] + 1
        if (e < (low << 1)) edge_[w] = e;
      }
    }
  }
  unsigned table_bucket(Ticks latency) const {
    if (latency == 0) return 0;
    const auto w = static_cast<unsigned>(64 - __builtin_clzll(latency));
    return lo_[w] + (latency >= edge_[w] ? 1u : 0u);
  }

  std::uint64_t count_ = 0;
  Ticks sum_ = 0;
  Ticks max_ = 0;
  std::array<std::uint64_t, kBuckets> hist_{};
  double ticks_per_second_ = 0;  // cached on first use
  Ticks exact_below_ = 0;        // latencies below this take table_bucket
  std::array<std::uint8_t, 64> lo_{};
  std::array<std::uint64_t, 64> edge_{};
};

}  // namespace tlm_models

#endif  // TLM_MODELS_LATENCY_STATS_H
