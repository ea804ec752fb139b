// The choice a channel controller delegates: which queued request of a bank goes next. The
// controller asks every bank with work and issues the command that can go earliest, so bank
// parallelism comes from the controller and request order from the scheduler.
#ifndef TLM_MODELS_DRAM_SCHEDULER_H
#define TLM_MODELS_DRAM_SCHEDULER_H

#include <cstdint>
#include <vector>

#include "tlm_models/dram_request.h"

namespace tlm_models {

// What a scheduler sees of one bank: its queue (oldest first) and its row buffer.
struct DramBankView {
  const std::vector<DramRequest>& queue;
  bool open;
  std::uint64_t open_row;
  unsigned bypasses;  // column commands given to younger requests since the oldest was served
};

class DramScheduler {
 public:
  virtual ~DramScheduler() = default;
  // Index in `bank.queue` of the request to serve next among those with write == `writes`,
  // or -1 when the bank has none of that kind.
  virtual int pick(const DramBankView& bank, bool writes) const = 0;
};

// The oldest request of the kind (its queue position).
inline int oldest_of_kind(const std::vector<DramRequest>& queue, bool writes) {
  for (std::size_t i = 0; i < queue.size(); ++i)
    if (queue[i].write == writes) return static_cast<int>(i);
  return -1;
}

}  // namespace tlm_models

#endif  // TLM_MODELS_DRAM_SCHEDULER_H
