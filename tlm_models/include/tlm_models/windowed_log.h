// Entries recorded for a time window [from, to), kept up to a cap: a long simulation cannot
// exhaust memory, and entries past the cap are counted, not kept. The owner decides what falls
// in the window and what an entry is.
#ifndef TLM_MODELS_WINDOWED_LOG_H
#define TLM_MODELS_WINDOWED_LOG_H

#include <cstdint>
#include <vector>

#include "tlm_models/time_ticks.h"

namespace tlm_models {

template <typename Entry>
class WindowedLog {
 public:
  // Starts over with a new window and cap.
  void reset(Ticks from, Ticks to, std::uint64_t max_entries) {
    from_ = from;
    to_ = to;
    max_entries_ = max_entries;
    entries_.clear();
    dropped_ = 0;
  }

  Ticks from() const { return from_; }
  Ticks to() const { return to_; }

  // Keeps `e`, or counts it as dropped once the cap is reached.
  void append(const Entry& e) {
    if (entries_.size() >= max_entries_) {
      ++dropped_;
      return;
    }
    entries_.push_back(e);
  }

  std::vector<Entry>& entries() { return entries_; }
  const std::vector<Entry>& entries() const { return entries_; }
  // Entries not kept because the cap was reached.
  std::uint64_t dropped() const { return dropped_; }

 private:
  Ticks from_ = 0;
  Ticks to_ = 0;
  std::uint64_t max_entries_ = 0;
  std::vector<Entry> entries_;
  std::uint64_t dropped_ = 0;
};

}  // namespace tlm_models

#endif  // TLM_MODELS_WINDOWED_LOG_H
