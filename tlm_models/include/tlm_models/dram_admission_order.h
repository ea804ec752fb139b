// In-order admission for requests decided in call order: a request may not enter its bank queue
// before any request that arrived no later than it has entered (one in-order request port).
// Calls from several initiators come in call order, not arrival order (temporal decoupling),
// so the bound for a request arriving at `a` is the latest admission among the requests that
// arrived at or before `a`: a non-decreasing step function of the arrival time, kept as its
// breakpoints.
#ifndef TLM_MODELS_DRAM_ADMISSION_ORDER_H
#define TLM_MODELS_DRAM_ADMISSION_ORDER_H

#include <iterator>
#include <map>

#include "tlm_models/time_ticks.h"

namespace tlm_models {

class DramAdmissionOrder {
 public:
  // The earliest admission a request arriving at `arrival` may have (0: no bound).
  Ticks bound(Ticks arrival) const {
    auto it = steps_.upper_bound(arrival);
    return it == steps_.begin() ? 0 : std::prev(it)->second;
  }

  // A request that arrived at `arrival` entered its queue at `admitted`. One admitted on
  // arrival bounds nothing (a later arrival enters no earlier than it arrives), so only
  // requests that waited leave a step.
  void record(Ticks arrival, Ticks admitted) {
    if (admitted <= arrival || bound(arrival) >= admitted) return;
    auto it = steps_.insert_or_assign(arrival, admitted).first;
    // Later arrivals bounded by less now inherit this admission.
    for (auto next = std::next(it); next != steps_.end() && next->second <= admitted;)
      next = steps_.erase(next);
  }

  // No request will arrive before `t` any more: the steps before the one in force at `t` go.
  void forget_before(Ticks t) {
    auto it = steps_.upper_bound(t);
    if (it == steps_.begin()) return;
    steps_.erase(steps_.begin(), std::prev(it));
  }

 private:
  std::map<Ticks, Ticks> steps_;  // arrival -> admission bound from that arrival on
};

}  // namespace tlm_models

#endif  // TLM_MODELS_DRAM_ADMISSION_ORDER_H
