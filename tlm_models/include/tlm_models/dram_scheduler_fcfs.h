// First come, first served: each bank serves its requests in arrival order.
#ifndef TLM_MODELS_DRAM_SCHEDULER_FCFS_H
#define TLM_MODELS_DRAM_SCHEDULER_FCFS_H

#include "tlm_models/dram_scheduler.h"

namespace tlm_models {

class FcfsScheduler : public DramScheduler {
 public:
  int pick(const DramBankView& bank, DramServe kind) const override {
    return oldest_of_kind(bank.queue, kind);
  }
};

}  // namespace tlm_models

#endif  // TLM_MODELS_DRAM_SCHEDULER_FCFS_H
