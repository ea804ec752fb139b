// One request as a DRAM channel controller queues it: a run of bursts to one bank and row.
#ifndef TLM_MODELS_DRAM_REQUEST_H
#define TLM_MODELS_DRAM_REQUEST_H

#include <cstdint>

#include "tlm_models/time_ticks.h"

namespace tlm_models {

struct DramRequest {
  Ticks arrival = 0;       // when the initiator's request reached the controller
  Ticks admitted = 0;      // when it entered its bank queue (later when the queue was full)
  std::uint64_t row = 0;
  std::uint64_t seq = 0;   // age: smaller is older
  std::uint32_t bursts = 0;  // column commands still to issue
  std::uint32_t bytes = 0;   // bytes the initiator asked for (statistics)
  std::uint32_t tag = 0;     // the caller's index for the completion time
  bool write = false;
  bool classified = false;   // counted as row hit / miss / conflict
};

}  // namespace tlm_models

#endif  // TLM_MODELS_DRAM_REQUEST_H
