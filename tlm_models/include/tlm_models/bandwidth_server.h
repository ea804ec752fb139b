// A resource that serves one transfer at a time at a fixed rate: an HBM channel's data bus, an
// SRAM port, an interconnect output link. Requests are served first come, first served in
// call order; the caller passes the arrival time and the service duration.
#ifndef TLM_MODELS_BANDWIDTH_SERVER_H
#define TLM_MODELS_BANDWIDTH_SERVER_H

#include <algorithm>

#include "tlm_models/activity_log.h"
#include "tlm_models/time_ticks.h"

namespace tlm_models {

class BandwidthServer {
 public:
  // Returns the start of service: max(arrival, busy_until). A request whose arrival is earlier
  // than the end of work already accepted (an out-of-order caller) simply queues behind it.
  Ticks serve(Ticks arrival, Ticks duration) {
    Ticks start = std::max(arrival, busy_until_);
    busy_until_ = start + duration;
    busy_ticks_ += duration;
    wait_ticks_ += start - arrival;
    ++requests_;
    activity_.record(start, busy_until_);
    return start;
  }

  Ticks busy_until() const { return busy_until_; }
  Ticks busy_ticks() const { return busy_ticks_; }
  Ticks wait_ticks() const { return wait_ticks_; }
  std::uint64_t requests() const { return requests_; }
  ActivityLog& activity() { return activity_; }
  const ActivityLog& activity() const { return activity_; }

  // Clears the accumulated statistics; the queue state (busy_until) is timing, not statistics.
  void reset_stats() {
    busy_ticks_ = 0;
    wait_ticks_ = 0;
    requests_ = 0;
  }

 private:
  Ticks busy_until_ = 0;
  Ticks busy_ticks_ = 0;
  Ticks wait_ticks_ = 0;
  std::uint64_t requests_ = 0;
  ActivityLog activity_;
};

}  // namespace tlm_models

#endif  // TLM_MODELS_BANDWIDTH_SERVER_H
