// Busy intervals of one resource (a memory channel, a port) for a timeline track. Recording is
// off until enabled with a time window and an entry cap, so a long simulation cannot grow it
// without bound; back-to-back intervals merge into one entry.
#ifndef TLM_MODELS_ACTIVITY_LOG_H
#define TLM_MODELS_ACTIVITY_LOG_H

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <vector>

#include "tlm_models/time_ticks.h"
#include "tlm_models/windowed_log.h"

namespace tlm_models {

struct BusyInterval {
  Ticks start;
  Ticks end;
};

class ActivityLog {
 public:
  void enable(Ticks from, Ticks to, std::size_t max_entries) {
    enabled_ = max_entries > 0 && to > from;
    log_.reset(from, to, max_entries);
  }
  void disable() { enabled_ = false; }
  bool enabled() const { return enabled_; }

  // Intervals are clipped to the window and kept sorted and disjoint: overlapping or touching
  // ones merge. They mostly arrive in start order (appended); a bandwidth server that fills a
  // gap before work it booked earlier produces one out of order, which is inserted in place.
  void record(Ticks start, Ticks end) {
    if (!enabled_) return;
    start = std::max(start, log_.from());
    end = std::min(end, log_.to());
    if (end <= start) return;
    std::vector<BusyInterval>& entries = log_.entries();
    if (entries.empty() || start >= entries.back().start) {
      if (!entries.empty() && start <= entries.back().end) {
        entries.back().end = std::max(entries.back().end, end);
        return;
      }
      log_.append(BusyInterval{start, end});
      return;
    }
    auto it = std::upper_bound(entries.begin(), entries.end(), start,
                               [](Ticks t, const BusyInterval& b) { return t < b.start; });
    if (it != entries.begin() && std::prev(it)->end >= start) {
      --it;  // extends its predecessor
      it->end = std::max(it->end, end);
    } else {
      it = entries.insert(it, BusyInterval{start, end});
    }
    auto next = std::next(it);
    while (next != entries.end() && next->start <= it->end) {
      it->end = std::max(it->end, next->end);
      next = entries.erase(next);
    }
  }

  const std::vector<BusyInterval>& entries() const { return log_.entries(); }
  // Intervals not recorded because the cap was reached.
  std::size_t dropped() const { return log_.dropped(); }

 private:
  bool enabled_ = false;
  WindowedLog<BusyInterval> log_;
};

}  // namespace tlm_models

#endif  // TLM_MODELS_ACTIVITY_LOG_H
