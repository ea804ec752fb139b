// The small memories the transport tests put behind their initiators: an HBM of 1 MiB over four
// channels with storage (bandwidth level, bank level, or bank level with queued requests) and a
// 64 KiB two-port SRAM.
#ifndef TLM_MODELS_TESTS_SMALL_MEMORIES_H
#define TLM_MODELS_TESTS_SMALL_MEMORIES_H

#include <cstdint>

#include "tlm_models/hbm.h"
#include "tlm_models/sram.h"

namespace check {

inline tlm_models::HbmMemory::Params small_hbm_params(bool bank_level, bool queued = false) {
  tlm_models::HbmMemory::Params p;
  p.channels = 4;
  p.size = std::uint64_t{1} << 20;
  p.storage = true;
  if (bank_level) p.fidelity = "bank";
  if (queued) p.request_mode = "queued";
  return p;
}

inline tlm_models::Sram::Params small_sram_params() {
  tlm_models::Sram::Params p;
  p.capacity = std::uint64_t{1} << 16;
  p.ports = 2;
  return p;
}

}  // namespace check

#endif  // TLM_MODELS_TESTS_SMALL_MEMORIES_H
