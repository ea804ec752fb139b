// The command buses of one JEDEC channel shared by its pseudo-channels (JESD235 pseudo-channel
// mode: the two pseudo-channels of an HBM2 channel share its row and column command pins, a
// PC bit naming the target). Each pseudo-channel keeps its own controller and timing checker
// (tRRD, tFAW, tCCD, its data bus, its banks); only the occupancy of the row bus (ACT, PRE,
// REF, REFpb) and the column bus (RD, WR) -- or of the one bus of a `shared` command bus -- is
// kept here, where every sharer consults and records it. The occupancy is a set of two-sided
// lists as the checker's own: a command may go into a gap between commands decided before it,
// whichever pseudo-channel decided them, as long as it keeps its bus time clear of both sides.
// History is dropped only before the earliest time a sharer may still place a command.
#ifndef TLM_MODELS_DRAM_COMMAND_BUS_H
#define TLM_MODELS_DRAM_COMMAND_BUS_H

#include <algorithm>
#include <vector>

#include "tlm_models/dram_command.h"
#include "tlm_models/dram_time_list.h"
#include "tlm_models/dram_timing.h"
#include "tlm_models/time_ticks.h"

namespace tlm_models {

class DramCommandBus {
 public:
  // Buses of tCK `t.ck` with the command lengths of `t` (row and column apart unless
  // t.shared_command_bus), shared by `sharers` controllers numbered 0 .. sharers - 1.
  DramCommandBus(const DramTiming& t, unsigned sharers)
      : act_(t.ck * t.act_cycles), row_(t.ck * t.row_cycles), column_(t.ck * t.column_cycles),
        one_bus_(t.shared_command_bus), until_(sharers, 0) {}

  // The earliest time >= t at which `c` holds its bus clear of every command recorded: each
  // list's zones are passed in turn until none moves t (a later list may move t into an earlier
  // list's zone), so the answer holds for all of them at once, as the checker's round of
  // checks requires of each check.
  Ticks clear_of(DramCommand c, Ticks t) const {
    const bool row = c != DramCommand::rd && c != DramCommand::wr;
    const Ticks own = c == DramCommand::act ? act_ : row ? row_ : column_;
    for (;;) {
      const Ticks start = t;
      if (one_bus_ || row) {
        t = acts_.clear_of(t, own, act_);
        t = rows_.clear_of(t, own, row_);
      }
      if (one_bus_ || !row) t = columns_.clear_of(t, own, column_);
      if (t == start) return t;
    }
  }

  // `c` issued at `at` by any sharer.
  void record(DramCommand c, Ticks at) {
    if (c == DramCommand::act)
      acts_.insert(at);
    else if (c == DramCommand::rd || c == DramCommand::wr)
      columns_.insert(at);
    else
      rows_.insert(at);
  }

  // Sharer `s` places no command before `t` any more: what no sharer can still need goes.
  void forget_before(unsigned s, Ticks t) {
    until_[s] = std::max(until_[s], t);
    const Ticks least = *std::min_element(until_.begin(), until_.end());
    // A zone reaches at most one command's bus time (the longest: ACT, row, column) past its
    // command; both bounds together keep a margin.
    const Ticks reach = act_ + row_ + column_;
    if (least <= reach) return;
    for (DramTimeList* l : {&acts_, &rows_, &columns_}) l->forget_before(least - reach);
  }

 private:
  Ticks act_, row_, column_;  // bus time of an ACT, another row command, a column command
  bool one_bus_;              // row and column commands on one bus (DDR4, LPDDR4)
  DramTimeList acts_, rows_, columns_;
  std::vector<Ticks> until_;  // per sharer: no command of it before this any more
};

}  // namespace tlm_models

#endif  // TLM_MODELS_DRAM_COMMAND_BUS_H
