// Per-operation timing of a replay inside a chosen time window, capped in entries so that a long
// trace cannot exhaust memory; records beyond the cap are counted, not kept.
#ifndef TLM_MODELS_TIMELINE_RECORDER_H
#define TLM_MODELS_TIMELINE_RECORDER_H

#include <cstdint>
#include <cstring>
#include <vector>

#include "tlm_models/time_ticks.h"

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
    from_ = from;
    to_ = to;
    max_entries_ = max_entries;
    records_.clear();
    dropped_ = 0;
  }

  void on_issue(std::uint64_t index, std::uint8_t engine, std::uint8_t kind, Ticks start, Ticks done) {
    if (start >= to_ || done < from_) return;
    if (records_.size() >= max_entries_) {
      ++dropped_;
      return;
    }
    records_.push_back(TimelineRecord{index, engine, kind, 0, 0, ticks_to_ns(start), ticks_to_ns(done)});
  }

  const std::vector<TimelineRecord>& records() const { return records_; }
  std::uint64_t dropped() const { return dropped_; }
  void copy_to(void* out) const {
    if (!records_.empty()) std::memcpy(out, records_.data(), records_.size() * sizeof(TimelineRecord));
  }

 private:
  Ticks from_ = 0;
  Ticks to_ = 0;
  std::uint64_t max_entries_ = 0;
  std::vector<TimelineRecord> records_;
  std::uint64_t dropped_ = 0;
};

}  // namespace tlm_models

#endif  // TLM_MODELS_TIMELINE_RECORDER_H
