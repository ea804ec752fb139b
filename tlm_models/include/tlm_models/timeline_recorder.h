// Per-operation timing of a replay inside a chosen time window, capped in entries so that a long
// trace cannot exhaust memory; records beyond the cap are counted, not kept.
#ifndef TLM_MODELS_TIMELINE_RECORDER_H
#define TLM_MODELS_TIMELINE_RECORDER_H

#include <cstdint>
#include <cstring>
#include <vector>

#include "tlm_models/time_ticks.h"
#include "tlm_models/windowed_log.h"

namespace tlm_models {

// The record layout that timeline_copy() writes (32 bytes, little-endian, no implicit padding);
// Python reads it as a numpy structured array with the same fields.
struct TimelineRecord {
  std::uint64_t index;  // trace position of the operation
  std::uint8_t engine;  // TraceOp::engine
  std::uint8_t kind;    // TraceOp::kind
  std::uint16_t pad0;
  std::uint32_t pad1;
  double start_ns;
  double end_ns;  // the operation's done time
};
static_assert(sizeof(TimelineRecord) == 32, "timeline records are 32 bytes");

class TimelineRecorder {
 public:
  // Keeps operations in flight at some time in [from, to): start < to and done >= from.
  void configure(Ticks from, Ticks to, std::uint64_t max_entries) {
    log_.reset(from, to, max_entries);
  }

  void on_issue(std::uint64_t index, std::uint8_t engine, std::uint8_t kind, Ticks start, Ticks done) {
    if (start >= log_.to() || done < log_.from()) return;
    log_.append(TimelineRecord{index, engine, kind, 0, 0, ticks_to_ns(start), ticks_to_ns(done)});
  }

  const std::vector<TimelineRecord>& records() const { return log_.entries(); }
  std::uint64_t dropped() const { return log_.dropped(); }
  void copy_to(void* out) const {
    const std::vector<TimelineRecord>& records = log_.entries();
    if (!records.empty()) std::memcpy(out, records.data(), records.size() * sizeof(TimelineRecord));
  }

 private:
  WindowedLog<TimelineRecord> log_;
};

}  // namespace tlm_models

#endif  // TLM_MODELS_TIMELINE_RECORDER_H
