// Which class of engine runs which operation kinds. The replayer uses the class of each bound
// engine to check records and to sort time into the I/O and compute metric classes.
#ifndef TLM_MODELS_ENGINE_KIND_H
#define TLM_MODELS_ENGINE_KIND_H

#include <cstdint>

#include "tlm_models/trace_op.h"

namespace tlm_models {

enum class EngineKind : std::uint8_t {
  dma = 0,  // a DMA channel: load and store (off-chip I/O)
  pe = 1,   // the PE array: matmul and vector (compute)
  exp = 2,  // the Exp unit: exp (compute)
};

inline const char* engine_kind_name(EngineKind k) {
  switch (k) {
    case EngineKind::dma: return "dma";
    case EngineKind::pe: return "pe";
    case EngineKind::exp: return "exp";
  }
  return "?";
}

// nullptr for a byte that is not an OpKind, so callers can reject corrupt records.
inline const char* op_kind_name(std::uint8_t kind) {
  switch (static_cast<OpKind>(kind)) {
    case OpKind::load: return "load";
    case OpKind::store: return "store";
    case OpKind::matmul: return "matmul";
    case OpKind::vector: return "vector";
    case OpKind::exp: return "exp";
  }
  return nullptr;
}

inline bool runs_on(std::uint8_t kind, EngineKind engine) {
  switch (static_cast<OpKind>(kind)) {
    case OpKind::load:
    case OpKind::store: return engine == EngineKind::dma;
    case OpKind::matmul:
    case OpKind::vector: return engine == EngineKind::pe;
    case OpKind::exp: return engine == EngineKind::exp;
  }
  return false;
}

}  // namespace tlm_models

#endif  // TLM_MODELS_ENGINE_KIND_H
