// First ready, first come first served (Rixner et al., ISCA 2000): a bank serves the oldest
// request that hits its open row before older requests that would close it. After `cap`
// column commands given to younger hits while an older request waits, the oldest goes next,
// so a stream of hits cannot starve a miss.
#ifndef TLM_MODELS_DRAM_SCHEDULER_FRFCFS_H
#define TLM_MODELS_DRAM_SCHEDULER_FRFCFS_H

#include "tlm_models/dram_scheduler.h"

namespace tlm_models {

class FrFcfsScheduler : public DramScheduler {
 public:
  explicit FrFcfsScheduler(unsigned cap) : cap_(cap) {}

  bool hits_first() const override { return true; }

  int pick(const DramBankView& bank, DramServe kind) const override {
    const int oldest = oldest_of_kind(bank.queue, kind);
    if (oldest < 0 || !bank.open || bank.bypasses >= cap_) return oldest;
    for (std::size_t i = static_cast<std::size_t>(oldest); i < bank.queue.size(); ++i) {
      const DramRequest& r = bank.queue[i];
      if (serves(kind, r) && r.row == bank.open_row) return static_cast<int>(i);
    }
    return oldest;
  }

 private:
  unsigned cap_;
};

}  // namespace tlm_models

#endif  // TLM_MODELS_DRAM_SCHEDULER_FRFCFS_H
