// Orders the operations of several replayers that share components (the tiles of one chip) by
// their simulated start time, ties by replayer index (docs/models/tiles.md, "Replay").
//
// Each replayer issues its own operations in nondecreasing start time, but the replayers are
// separate SystemC threads that run ahead of the kernel's time, so without coordination the
// order in which their operations reach a shared bandwidth server (and so who gets the earlier
// gap) is the host's order of the threads, which depends on when the kernel paused for input.
// The gate makes it a function of simulated time only: a replayer may execute its operation
// starting at `start` once (start, index) is the least of every member's bound, where a
// member's bound is the start of the operation it last asked for (its next one cannot start
// earlier: picks are nondecreasing) and a finished member's is infinite. Only the members' own
// threads call it; a member that is not the least waits on its own event, and whoever moves the
// least to another member wakes that one. The kernel's time never passes a bound: only the
// least member runs, and it waits in time only up to its own start.
//
// The least member comes from a tournament tree (min_tournament.h): a changed bound costs
// log2(members) comparisons instead of a scan over every member at each operation.
#ifndef TLM_MODELS_ISSUE_GATE_H
#define TLM_MODELS_ISSUE_GATE_H

#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
#include <vector>

#include <systemc>

#include "tlm_models/min_tournament.h"
#include "tlm_models/time_ticks.h"

namespace tlm_models {

class IssueGate {
 public:
  explicit IssueGate(unsigned members)
      : members_(members), bounds_(members == 0 ? 1 : members) {
    if (members == 0) throw std::invalid_argument("IssueGate: needs at least one member");
    for (unsigned i = 0; i < members; ++i)
      members_[i].wake = std::make_unique<sc_core::sc_event>();
  }

  // Blocks the calling member's thread until its operation starting at `start` is the least.
  void acquire(unsigned member, Ticks start) {
    Member& me = members_.at(member);
    bounds_.set(member, start);
    for (;;) {
      const unsigned least = bounds_.least();
      if (least == member) return;
      wake(least);
      ++handoffs_;
      me.waiting = true;
      sc_core::wait(*me.wake);
      me.waiting = false;
    }
  }

  // The member issues no more operations (its replay ended, successfully or not).
  void leave(unsigned member) {
    bounds_.set(member, kNever);
    const unsigned least = bounds_.least();
    if (bounds_.key(least) != kNever) wake(least);
  }

  // A member that left (parked on another tile's store, tile_sync.h) is back with `bound`, a
  // lower bound of its next start; called by the running member, which it may now precede.
  void rejoin(unsigned member, Ticks bound) { bounds_.set(member, bound); }

  // Times a member gave way to another (each one a thread switch).
  std::uint64_t handoffs() const { return handoffs_; }

 private:
  static constexpr Ticks kNever = std::numeric_limits<Ticks>::max();

  struct Member {
    bool waiting = false;
    std::unique_ptr<sc_core::sc_event> wake;
  };

  void wake(unsigned member) {
    if (members_[member].waiting) members_[member].wake->notify();  // runs in this delta
  }

  std::vector<Member> members_;
  // Per member, the start its next operation cannot precede (nothing asked yet: 0; finished:
  // kNever).
  MinTournament bounds_;
  std::uint64_t handoffs_ = 0;
};

}  // namespace tlm_models

#endif  // TLM_MODELS_ISSUE_GATE_H
