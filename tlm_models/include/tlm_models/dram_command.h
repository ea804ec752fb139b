// The DRAM commands a controller issues (JEDEC names).
#ifndef TLM_MODELS_DRAM_COMMAND_H
#define TLM_MODELS_DRAM_COMMAND_H

#include <cstdint>

namespace tlm_models {

enum class DramCommand { act, pre, rd, wr, ref, ref_pb };

inline const char* command_name(DramCommand c) {
  static const char* const names[] = {"ACT", "PRE", "RD", "WR", "REF", "REFpb"};
  return names[static_cast<int>(c)];
}

// One issued command, for command traces and tests.
struct DramCommandRecord {
  DramCommand command;
  unsigned bank;
  std::uint64_t at;  // ticks
};

}  // namespace tlm_models

#endif  // TLM_MODELS_DRAM_COMMAND_H
