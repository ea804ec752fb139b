// A train of bursts booked in one call: a DMA channel hands the memory side of up to
// max_outstanding bursts (their addresses, sizes and issue times) to the interconnect and the
// HBM in one b_transport instead of one per burst. Each component books the bursts in order
// exactly as it would book them one call at a time, so timing and statistics are unchanged;
// only the calls, payload set-ups and per-call splitting are saved. Formulas and the conditions
// under which a DMA channel uses it: docs/models/dma.md ("Burst trains").
//
// Two uses of the same extension:
// - probe (transport_dbg, data length 0): every train-aware component on the path to
//   [address, address + span) appends the resources it would book to `path`; the memory at the
//   end sets `capable` when it can serve a train there. A component that cannot take part (a
//   mesh, a bank-level HBM) sets `blocked`, and so does one reached through a part that
//   translated the address without taking part (`at`, reached()).
// - train (b_transport): the payload describes the first burst (so a checker on the way sees a
//   well-formed transaction); `bursts` lists all of them. Each component rewrites every burst's
//   `arrival` to the time the next one sees it, and the memory fills in each `done`; on return,
//   `done` is the time the response reaches the initiator. The memory sets `served`.
#ifndef TLM_MODELS_BURST_TRAIN_H
#define TLM_MODELS_BURST_TRAIN_H

#include <cstdint>
#include <vector>

#include <tlm>

#include "tlm_models/time_ticks.h"

namespace tlm_models {

class BurstTrain : public tlm::tlm_extension<BurstTrain> {
 public:
  struct Burst {
    std::uint64_t offset = 0;  // from the payload's address
    std::uint32_t bytes = 0;
    Ticks arrival = 0;  // absolute request time at the component being called
    Ticks done = 0;     // absolute response time, filled on the way back
  };

  // Train.
  std::vector<Burst> bursts;
  bool served = false;

  // Probe.
  std::uint64_t span = 0;
  bool capable = false;
  bool blocked = false;
  std::vector<const void*> path;  // the links and memories the transfer would occupy
  // The addresses (the caller's view, inclusive) around the probed range that take the same
  // path with the same answer: each component narrows it to its route or its size, so the
  // caller may reuse the answer for any range inside it.
  std::uint64_t first = 0, last = ~std::uint64_t{0};

  // The address the next train-aware component must see: the initiator's, rewritten by each
  // such component to the address it forwards. A component that finds another one sits behind
  // a part that translated the address without taking part in the probe (a third-party bus):
  // the windows narrowed so far are then in another address space, so reached() blocks the
  // train and the initiator keeps sending bursts.
  std::uint64_t at = 0;

  void start_probe(std::uint64_t address, std::uint64_t bytes) {
    at = address;
    span = bytes;
    capable = blocked = false;
    path.clear();
    first = 0;
    last = ~std::uint64_t{0};
  }
  void narrow(std::uint64_t lo, std::uint64_t hi) {
    if (lo > first) first = lo;
    if (hi < last) last = hi;
  }
  // Called by each train-aware component with the address it was asked at; false (and the
  // probe blocked) when a part before it translated the address.
  bool reached(std::uint64_t address) {
    if (address != at) blocked = true;
    return !blocked;
  }
  bool usable() const { return capable && !blocked; }
  // Whether two probed paths occupy a common resource.
  static bool paths_meet(const std::vector<const void*>& a, const std::vector<const void*>& b) {
    for (const void* x : a)
      for (const void* y : b)
        if (x == y) return true;
    return false;
  }

  tlm::tlm_extension_base* clone() const override { return new BurstTrain(*this); }
  void copy_from(const tlm::tlm_extension_base& e) override {
    *this = static_cast<const BurstTrain&>(e);
  }
};

}  // namespace tlm_models

#endif  // TLM_MODELS_BURST_TRAIN_H
