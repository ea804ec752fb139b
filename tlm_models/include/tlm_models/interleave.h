// Splitting an address range over units interleaved at a fixed granule (HBM channels, SRAM
// banks): unit(a) = (a / granule) % units. Works in O(units) however long the range is.
#ifndef TLM_MODELS_INTERLEAVE_H
#define TLM_MODELS_INTERLEAVE_H

#include <algorithm>
#include <cstdint>
#include <vector>

namespace tlm_models {

// Adds to bytes[u] the number of bytes of [addr, addr + len) that fall in unit u.
// `bytes` must hold `units` entries.
inline void add_interleaved_bytes(std::uint64_t addr, std::uint64_t len, std::uint64_t granule,
                                  unsigned units, std::uint64_t* bytes) {
  if (len == 0) return;
  std::uint64_t first = addr / granule;
  std::uint64_t last = (addr + len - 1) / granule;
  if (first == last) {
    bytes[first % units] += len;
    return;
  }
  // Partial head and tail granules, then whole granules shared out round robin.
  bytes[first % units] += (first + 1) * granule - addr;
  bytes[last % units] += addr + len - last * granule;
  std::uint64_t whole = last - first - 1;
  std::uint64_t rounds = whole / units;
  std::uint64_t extra = whole % units;
  if (rounds)
    for (unsigned u = 0; u < units; ++u) bytes[u] += rounds * granule;
  auto u = static_cast<unsigned>((first + 1) % units);
  for (std::uint64_t i = 0; i < extra; ++i) {
    bytes[u] += granule;
    if (++u == units) u = 0;
  }
}

inline void add_interleaved_bytes(std::uint64_t addr, std::uint64_t len, std::uint64_t granule,
                                  unsigned units, std::vector<std::uint64_t>& bytes) {
  add_interleaved_bytes(addr, len, granule, units, bytes.data());
}

}  // namespace tlm_models

#endif  // TLM_MODELS_INTERLEAVE_H
