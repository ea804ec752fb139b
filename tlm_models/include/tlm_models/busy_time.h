// Busy time of an engine as the union of its operation intervals. Engines receive operations in
// nondecreasing start time, so the union is kept with one "covered until" mark instead of an
// interval list: an interval overlapping the previous ones only adds its uncovered tail.
#ifndef TLM_MODELS_BUSY_TIME_H
#define TLM_MODELS_BUSY_TIME_H

#include "tlm_models/time_ticks.h"

namespace tlm_models {

class BusyTime {
 public:
  // Requires start >= the start of every interval added before (the replay order).
  void add(Ticks start, Ticks end) {
    if (end <= covered_until_) return;
    total_ += end - (start > covered_until_ ? start : covered_until_);
    covered_until_ = end;
  }

  Ticks total() const { return total_; }
  // The end of the union so far (0 before the first interval).
  Ticks covered_until() const { return covered_until_; }
  void reset() { total_ = 0; }

 private:
  Ticks total_ = 0;
  Ticks covered_until_ = 0;
};

}  // namespace tlm_models

#endif  // TLM_MODELS_BUSY_TIME_H
