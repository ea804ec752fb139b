// The requests a memory received, in arrival order of the calls: arrival time, address,
// length and direction, for exporting a run's off-chip stream as an STL trace that other DRAM
// simulators replay. Off until enabled with an entry cap; requests past the cap are counted.
#ifndef TLM_MODELS_REQUEST_LOG_H
#define TLM_MODELS_REQUEST_LOG_H

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "tlm_models/time_ticks.h"

namespace tlm_models {

// 24 bytes, laid out as the numpy dtype that reads it (tlm_models/replay/replayer.py REQUEST_DTYPE).
struct LoggedRequest {
  std::uint64_t arrival;  // ticks
  std::uint64_t address;
  std::uint32_t length;   // bytes
  std::uint32_t is_write;
};

class RequestLog {
 public:
  void enable(std::size_t max_entries) {
    enabled_ = max_entries > 0;
    max_ = max_entries;
    entries_.clear();
    dropped_ = 0;
  }
  bool enabled() const { return enabled_; }

  void record(Ticks arrival, std::uint64_t address, std::uint64_t length, bool write) {
    if (entries_.size() >= max_) {
      ++dropped_;
      return;
    }
    entries_.push_back({arrival, address, static_cast<std::uint32_t>(length), write ? 1u : 0u});
  }

  std::size_t size() const { return entries_.size(); }
  std::size_t dropped() const { return dropped_; }
  // Copies the entries to `out` (room for size() LoggedRequest records).
  void copy(void* out) const {
    std::copy(entries_.begin(), entries_.end(), static_cast<LoggedRequest*>(out));
  }

 private:
  bool enabled_ = false;
  std::size_t max_ = 0;
  std::vector<LoggedRequest> entries_;
  std::size_t dropped_ = 0;
};

}  // namespace tlm_models

#endif  // TLM_MODELS_REQUEST_LOG_H
