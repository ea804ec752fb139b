// Results still in flight in a pipelined compute engine (PE array, Exp unit). Such an engine
// takes its next operation before the current one's result is written back, so an operation
// that reads, or overwrites, a block an earlier operation of the same engine is still producing
// waits until that result is done: the interlock of an in-order pipeline. A trace orders the
// operations of one engine by their position alone, so a consumer on the same engine as its
// producer need not name it; the scoreboard keeps such traces correctly timed.
#ifndef TLM_MODELS_RESULT_SCOREBOARD_H
#define TLM_MODELS_RESULT_SCOREBOARD_H

#include <cstdint>
#include <vector>

#include "tlm_models/time_ticks.h"

namespace tlm_models {

class ResultScoreboard {
 public:
  // Forgets the results done by `now`; operations arrive in nondecreasing start time, so no
  // later operation can wait for them.
  void retire(Ticks now) {
    std::size_t kept = 0;
    for (const Pending& p : pending_)
      if (p.done > now) pending_[kept++] = p;
    pending_.resize(kept);
  }

  // The latest done of the pending results overlapping [address, address + bytes), or `at`
  // when none is later.
  Ticks clear_after(Ticks at, std::uint64_t address, std::uint64_t bytes) const {
    if (bytes == 0) return at;
    const std::uint64_t end = address + bytes;
    for (const Pending& p : pending_)
      if (p.address < end && address < p.end && p.done > at) at = p.done;
    return at;
  }

  // For a streamed operation: raises `start` to the first-granule time and `inputs_done` to the
  // done of every pending result overlapping [address, address + bytes).
  void stream_after(Ticks& start, Ticks& inputs_done, std::uint64_t address,
                    std::uint64_t bytes) const {
    if (bytes == 0) return;
    const std::uint64_t end = address + bytes;
    for (const Pending& p : pending_) {
      if (!(p.address < end && address < p.end)) continue;
      if (p.first > start) start = p.first;
      if (p.done > inputs_done) inputs_done = p.done;
    }
  }

  void add(std::uint64_t address, std::uint64_t bytes, Ticks done) { add(address, bytes, done, done); }
  void add(std::uint64_t address, std::uint64_t bytes, Ticks done, Ticks first) {
    if (bytes != 0) pending_.push_back(Pending{address, address + bytes, done, first});
  }

 private:
  struct Pending {
    std::uint64_t address;
    std::uint64_t end;
    Ticks done;
    Ticks first;  // when the first granule of the result is out (forwarding), <= done
  };
  std::vector<Pending> pending_;
};

}  // namespace tlm_models

#endif  // TLM_MODELS_RESULT_SCOREBOARD_H
