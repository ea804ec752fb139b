// Busy intervals of one resource (a memory channel, a port) for a timeline track. Recording is
// off until enabled with a time window and an entry cap, so a long simulation cannot grow it
// without bound; back-to-back intervals merge into one entry.
#ifndef TLM_MODELS_ACTIVITY_LOG_H
#define TLM_MODELS_ACTIVITY_LOG_H

#include <algorithm>
#include <cstddef>
#include <vector>

#include "tlm_models/time_ticks.h"

namespace tlm_models {

struct BusyInterval {
  Ticks start;
  Ticks end;
};

class ActivityLog {
 public:
  void enable(Ticks from, Ticks to, std::size_t max_entries) {
    enabled_ = max_entries > 0 && to > from;
    from_ = from;
    to_ = to;
    max_entries_ = max_entries;
    entries_.clear();
    dropped_ = 0;
  }
  void disable() { enabled_ = false; }
  bool enabled() const { return enabled_; }

  // Intervals are clipped to the window. Intervals are expected in nondecreasing start order
  // (a bandwidth server produces them so); one that starts at or before the last entry's end
  // extends that entry.
  void record(Ticks start, Ticks end) {
    if (!enabled_) return;
    start = std::max(start, from_);
    end = std::min(end, to_);
    if (end <= start) return;
    if (!entries_.empty() && start <= entries_.back().end) {
      entries_.back().end = std::max(entries_.back().end, end);
      return;
    }
    if (entries_.size() >= max_entries_) {
      ++dropped_;
      return;
    }
    entries_.push_back(BusyInterval{start, end});
  }

  const std::vector<BusyInterval>& entries() const { return entries_; }
  // Intervals not recorded because the cap was reached.
  std::size_t dropped() const { return dropped_; }

 private:
  bool enabled_ = false;
  Ticks from_ = 0;
  Ticks to_ = 0;
  std::size_t max_entries_ = 0;
  std::vector<BusyInterval> entries_;
  std::size_t dropped_ = 0;
};

}  // namespace tlm_models

#endif  // TLM_MODELS_ACTIVITY_LOG_H
