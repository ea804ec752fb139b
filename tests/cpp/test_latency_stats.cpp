// LatencyStats: the histogram bucket of every recorded latency is the one the floating-point
// formula (bucket(latency, ticks_per_second)) gives, at several time resolutions, for latencies
// on both sides of every bucket edge and of the integer path's limit; FixedDivisor gives the
// quotients, remainders and ceilings of plain division.
#include <cstdint>
#include <vector>

#include <systemc>

#include "check.h"
#include "tlm_models/fixed_divisor.h"
#include "tlm_models/latency_stats.h"

using tlm_models::LatencyStats;
using tlm_models::Ticks;

namespace {

// Records each latency and checks that the bucket the formula names is the one that grew.
void check_buckets_match_the_formula() {
  const double tps = tlm_models::ticks_per_second();
  std::vector<Ticks> latencies;
  for (Ticks l = 0; l < 70000; ++l) latencies.push_back(l);
  const auto tick_ns = static_cast<Ticks>(tps / 1e9 >= 1 ? tps / 1e9 : 1);
  for (unsigned k = 0; k < 64; ++k) {  // around every power-of-two number of nanoseconds
    const Ticks edge = k < 44 ? (Ticks{1} << k) * tick_ns : Ticks{1} << k;
    for (Ticks d = 0; d < 3; ++d) {
      latencies.push_back(edge + d);
      if (edge >= d) latencies.push_back(edge - d);
    }
  }
  for (Ticks l = 9007199 - 2000; l < 9007199 + 2000; ++l) latencies.push_back(l);  // the limit
  std::uint64_t seed = 12345;
  for (int i = 0; i < 100000; ++i) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    latencies.push_back((seed >> 11) >> (seed % 50));
  }
  LatencyStats s;
  for (Ticks l : latencies) {
    const unsigned b = LatencyStats::bucket(l, tps);
    const std::uint64_t before = s.bucket_count(b);
    s.record(l);
    CHECK_EQ(s.bucket_count(b), before + 1);
  }
  CHECK_EQ(s.count(), static_cast<std::uint64_t>(latencies.size()));
}

}  // namespace

TEST_CASE(buckets_at_a_picosecond_resolution) { check_buckets_match_the_formula(); }

TEST_CASE(buckets_at_a_nanosecond_resolution) {
  sc_core::sc_set_time_resolution(1, sc_core::SC_NS);
  check_buckets_match_the_formula();
}

TEST_CASE(buckets_at_a_ten_picosecond_resolution) {
  sc_core::sc_set_time_resolution(10, sc_core::SC_PS);
  check_buckets_match_the_formula();
}

TEST_CASE(buckets_at_a_femtosecond_resolution) {
  sc_core::sc_set_time_resolution(1, sc_core::SC_FS);
  check_buckets_match_the_formula();
}

TEST_CASE(buckets_at_a_microsecond_resolution) {  // coarser than a nanosecond: the formula only
  sc_core::sc_set_time_resolution(1, sc_core::SC_US);
  check_buckets_match_the_formula();
}

TEST_CASE(fixed_divisor_equals_plain_division) {
  std::uint64_t seed = 99;
  for (std::uint64_t d : {1ull, 2ull, 3ull, 7ull, 64ull, 100ull, 256ull, 4096ull, 8192ull, 1000000007ull,
                          1ull << 40, (1ull << 63) + 1}) {
    const tlm_models::FixedDivisor f(d);
    CHECK_EQ(f.value(), d);
    for (int i = 0; i < 20000; ++i) {
      seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
      const std::uint64_t a = i < 300 ? static_cast<std::uint64_t>(i) : seed >> (seed % 60);
      CHECK_EQ(f.div(a), a / d);
      CHECK_EQ(f.mod(a), a % d);
      CHECK_EQ(f.ceil(a), tlm_models::ceil_div(a, d));
    }
  }
}

CHECK_MAIN
