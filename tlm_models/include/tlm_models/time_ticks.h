// Exact time arithmetic for the timing models. Shared resources keep their "busy until" state
// as integer ticks of the SystemC time resolution (1 ps by default), so that durations such as
// 1 MiB / 8 GB/s = 131072 ns come out exact instead of accumulating floating-point error.
#ifndef TLM_MODELS_TIME_TICKS_H
#define TLM_MODELS_TIME_TICKS_H

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include <systemc>

namespace tlm_models {

using Ticks = std::uint64_t;

inline Ticks to_ticks(const sc_core::sc_time& t) { return t.value(); }

// One tick as an sc_time (reading it, like from_value of a non-zero value, fixes the time
// resolution). Inlined: every annotated delay goes through it.
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
inline const sc_core::sc_time& one_tick() {
  static const sc_core::sc_time tick = sc_core::sc_time::from_value(1);
  return tick;
}

// sc_time::from_value(v), without a call into the SystemC library on the per-request path: one
// tick scaled by v (sc_time's inline operator*=) is exact below 2^52 ticks, where v + 0.5 is
// representable and the product is truncated back to v.
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
inline sc_core::sc_time from_ticks(Ticks v) {
  if (v == 0) return sc_core::sc_time();
  if (v < (Ticks{1} << 52)) return one_tick() * static_cast<double>(v);
  return sc_core::sc_time::from_value(v);
}

// to_ticks(sc_core::sc_time_stamp()), inlined (sc_time_stamp() is a library call).
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
inline Ticks now_ticks() {
  // sc_get_curr_simcontext() is inline but too large to be inlined (it may create the
  // context); once the context exists it is this pointer.
  sc_core::sc_simcontext* context = sc_core::sc_curr_simcontext;
  if (context == nullptr) context = sc_core::sc_get_curr_simcontext();
  return context->time_stamp().value();
}

// Ticks in one second at the current time resolution (1e12 for the default 1 ps).
inline double ticks_per_second() {
  return std::round(1.0 / sc_core::sc_get_time_resolution().to_seconds());
}

// Rounds an exact-in-principle tick count: values within a relative 1e-9 of an integer are
// taken as that integer (they are exact and only suffer representation error); others round
// up, so a resource is never modelled as faster than its parameters.
inline Ticks round_ticks(long double exact) {
  long double nearest = std::llround(exact);
  long double tol = 1e-9L * (exact > 1.0L ? exact : 1.0L);
  if (std::fabs(exact - nearest) <= tol) return static_cast<Ticks>(nearest);
  return static_cast<Ticks>(std::ceil(exact));
}

// Time to move `bytes` at `bytes_per_second`.
inline Ticks transfer_ticks(std::uint64_t bytes, double bytes_per_second) {
  return round_ticks(static_cast<long double>(bytes) * ticks_per_second() / bytes_per_second);
}

// One clock period; a period that is not a whole number of ticks rounds up.
inline Ticks period_ticks(double hz) { return round_ticks(ticks_per_second() / static_cast<long double>(hz)); }

// A transfer rate with the per-byte cost precomputed, for the per-request path.
class ByteRate {
 public:
  ByteRate() = default;
  explicit ByteRate(double bytes_per_second)
      : ticks_per_byte_(static_cast<long double>(ticks_per_second()) / bytes_per_second) {}
  Ticks ticks(std::uint64_t bytes) const {
    return round_ticks(static_cast<long double>(bytes) * ticks_per_byte_);
  }

 private:
  long double ticks_per_byte_ = 0;
};

// Set once a model's time went beyond SystemC's range: the session reports the run's end as the
// platform's doing (a user error), not as a crash (native/session_api.cpp).
inline bool& time_range_exceeded() {
  static bool exceeded = false;
  return exceeded;
}

// The error add_ticks raises, out of line and marked cold: add_ticks itself is then a sum and a
// compare that inlines everywhere (with the throw inside, GCC kept it a call, through the PLT
// in the model library, on the DRAM controller's hottest path).
__attribute__((noreturn, noinline, cold)) inline void time_range_overflow() {
  time_range_exceeded() = true;
  throw std::overflow_error(
      "simulated time passed 2^64 ticks of the " + sc_core::sc_get_time_resolution().to_string() +
      " time resolution (213.5 days at 1 ps, the most SystemC can hold) at " +
      sc_core::sc_time_stamp().to_string() +
      "; the platform's latencies or clocks make the run longer than that");
}

// a + b for times in ticks, where the sum would wrap past 2^64 ticks (213.5 days at 1 ps, the
// most SystemC's time holds) and become an early time that looks valid: the run stops with an
// error naming the figure instead.
inline Ticks add_ticks(Ticks a, Ticks b) {
  const Ticks sum = a + b;
  if (__builtin_expect(sum < a, 0)) time_range_overflow();
  return sum;
}

// start + cycles * period, checked like add_ticks (a slow clock times a long operation).
inline Ticks after_cycles(Ticks start, std::uint64_t cycles, Ticks period) {
  if (period != 0 && cycles > ~Ticks{0} / period) return add_ticks(~Ticks{0}, 1);  // throws
  return add_ticks(start, cycles * period);
}

inline std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return a / b + (a % b != 0); }

inline double ticks_to_ns(Ticks t) { return static_cast<double>(t) * 1e9 / ticks_per_second(); }
inline double ticks_to_seconds(Ticks t) { return static_cast<double>(t) / ticks_per_second(); }

}  // namespace tlm_models

#endif  // TLM_MODELS_TIME_TICKS_H
