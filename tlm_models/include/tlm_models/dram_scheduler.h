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

// Which requests a bank may serve now: in a read or write phase only that kind, without
// phases (write_drain "none") any.
enum class DramServe { reads, writes, both };

inline bool serves(DramServe s, const DramRequest& r) {
  return s == DramServe::both || r.write == (s == DramServe::writes);
}

class DramScheduler {
 public:
  virtual ~DramScheduler() = default;
  // Index in `bank.queue` of the request to serve next among those `kind` admits, or -1 when
  // the bank has none of them.
  virtual int pick(const DramBankView& bank, DramServe kind) const = 0;
  // Whether a request that hits a row serves before older ones that would close it (then a
  // request decided late may take a column slot in its row's past open interval).
  virtual bool hits_first() const { return false; }
};

// The oldest request `kind` admits (its queue position).
inline int oldest_of_kind(const std::vector<DramRequest>& queue, DramServe kind) {
  for (std::size_t i = 0; i < queue.size(); ++i)
    if (serves(kind, queue[i])) return static_cast<int>(i);
  return -1;
}

}  // namespace tlm_models

#endif  // TLM_MODELS_DRAM_SCHEDULER_H
