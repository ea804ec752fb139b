// Earliest legal issue time of each DRAM command on one channel, from the commands already
// issued. A bank's own constraints are registers that its commands push forward (a bank works
// through its commands in order):
//   ACT: tRC, tRP (after PRE), refresh (tRFC / tRFCpb);  PRE: tRAS, tRTP, tWR;  RD: tRCD;
//   WR: tRCD (tRCDWR where the standard has it)
// The constraints between banks are kept as lists of issue times (dram_time_list.h) and hold in
// both directions, so a command may go into a gap left between commands issued before it as
// long as it keeps its distance to both sides:
//   ACT: tRRD_S/L, tFAW;  RD/WR: tCCD_S/L, the data bus, tRTW (RD before WR), tWTR_S/L (write
//   data before RD);  every command: its command bus (tCK x its cycles; HBM's two-cycle ACT),
//   this checker's own or shared with the channel's other pseudo-channels (dram_command_bus.h)
// A request that reaches the controller after others were decided thus takes the slots they
// left free: a bank that stalls (a row conflict, a refresh) holds up only its own commands.
#ifndef TLM_MODELS_DRAM_TIMING_CHECKER_H
#define TLM_MODELS_DRAM_TIMING_CHECKER_H

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "tlm_models/dram_command.h"
#include "tlm_models/dram_command_bus.h"
#include "tlm_models/dram_time_list.h"
#include "tlm_models/dram_timing.h"
#include "tlm_models/time_ticks.h"

namespace tlm_models {

class DramTimingChecker {
 public:
  DramTimingChecker(const DramTiming& t, unsigned banks, unsigned bank_groups)
      : t_(t), bank_(banks), group_(bank_groups) {
    // Nothing issued longer ago than this can constrain a command: the widest zone.
    horizon_ = t_.faw + t_.rrd_l + t_.rrd_s + t_.ccd_l + t_.ccd_s + t_.rtw + t_.cl + t_.cwl +
               2 * t_.burst + t_.wtr_l + t_.wtr_s +
               t_.ck * (t_.act_cycles + t_.row_cycles + t_.column_cycles);
  }

  const DramTiming& timing() const { return t_; }

  // Command buses shared with other pseudo-channels of the channel (dram_command_bus.h), this
  // checker being sharer `s` of them; without, the buses are this checker's own.
  void share_command_bus(std::shared_ptr<DramCommandBus> bus, unsigned s) {
    shared_bus_ = std::move(bus);
    sharer_ = s;
  }

  // The earliest time >= `from` at which `c` to `bank` (in `group`) may issue.
  Ticks earliest(DramCommand c, unsigned bank, unsigned group, Ticks from = 0) const {
    return earliest_among_banks(c, group, std::max(from, bank_register(c, bank)));
  }

  // No command goes earlier than this: reorder_window behind the latest one decided.
  Ticks floor() const { return floor_; }

  // The earliest time >= `from` that keeps `c` clear of every other command, its bank's own
  // registers aside (for a column command placed in a row's past open interval).
  Ticks earliest_among_banks(DramCommand c, unsigned group, Ticks from) const {
    Ticks t = std::max(from, floor_);
    for (;;) {
      const Ticks start = t;
      t = between_banks(c, group, t);
      t = on_command_bus(c, t);
      if (t == start) return t;
    }
  }

  // Issues `c` at `at` (a time earliest() allowed): records it on every resource it constrains.
  // For RD/WR returns the end of the burst's data on the bus; otherwise `at`.
  Ticks issue(DramCommand c, unsigned bank, unsigned group, Ticks at) {
    Bank& b = bank_[bank];
    Group& g = group_[group];
    if (shared_bus_) shared_bus_->record(c, at);
    if (t_.reorder_window && at > latest_) {
      latest_ = at;
      const Ticks w = t_.reorder_window;
      if (latest_ > w && latest_ - w > floor_ + w / 8) {
        floor_ = latest_ - w;
        forget_before(floor_);
      }
    }
    switch (c) {
      case DramCommand::act:
        b.next_act = std::max(b.next_act, add_ticks(at, t_.rc));
        b.next_pre = std::max(b.next_pre, add_ticks(at, t_.ras));
        b.next_rd = std::max(b.next_rd, add_ticks(at, t_.act_to_column(false)));
        b.next_wr = std::max(b.next_wr, add_ticks(at, t_.act_to_column(true)));
        g.acts.insert(at);
        acts_.insert(at);
        return at;
      case DramCommand::pre:
      case DramCommand::ref_pb:
        // A row command of one bank: its next ACT waits tRP after a PRE, tRFCpb after a REFpb.
        b.next_act = std::max(b.next_act, add_ticks(at, c == DramCommand::pre ? t_.rp : t_.rfc_pb));
        row_commands_.insert(at);
        return at;
      case DramCommand::rd:
      case DramCommand::wr: {
        const bool read = c == DramCommand::rd;
        const Ticks latency = read ? t_.cl : t_.cwl;
        const Ticks end = add_ticks(add_ticks(at, latency), t_.burst);
        column(g, at, add_ticks(at, latency));
        (read ? g.reads : g.writes).insert(at);
        (read ? reads_ : writes_).insert(at);
        // The row may close tRTP after a read command, tWR after a write's last data.
        b.next_pre = std::max(b.next_pre, read ? add_ticks(at, t_.rtp) : add_ticks(end, t_.wr));
        bus_free_ = std::max(bus_free_, end);
        return end;
      }
      case DramCommand::ref:
        for (Bank& x : bank_) x.next_act = std::max(x.next_act, add_ticks(at, t_.rfc));
        ref_ready_ = add_ticks(at, t_.rfc);
        row_commands_.insert(at);
        return at;
    }
    return at;
  }

  // No command will be asked for before `t` any more (every later request arrives at or after
  // it): issue times too old to constrain one are dropped.
  void forget_before(Ticks t) {
    if (shared_bus_) shared_bus_->forget_before(sharer_, t);
    if (t <= horizon_) return;
    const Ticks old = t - horizon_;
    for (Group& g : group_)
      for (DramTimeList* l : {&g.acts, &g.columns, &g.reads, &g.writes}) l->forget_before(old);
    for (DramTimeList* l : {&acts_, &columns_, &reads_, &writes_, &data_, &row_commands_})
      l->forget_before(old);
  }

  // When the data bus is free again (end of the latest burst given to it).
  Ticks bus_free() const { return bus_free_; }

 private:
  struct Bank {
    Ticks next_act = 0, next_pre = 0, next_rd = 0, next_wr = 0;
  };
  struct Group {
    DramTimeList acts, columns, reads, writes;
  };

  static bool is_row(DramCommand c) { return c != DramCommand::rd && c != DramCommand::wr; }

  Ticks bank_register(DramCommand c, unsigned bank) const {
    const Bank& b = bank_[bank];
    switch (c) {
      case DramCommand::act:
      case DramCommand::ref_pb:
        return b.next_act;
      case DramCommand::pre:
        return b.next_pre;
      case DramCommand::rd:
        return b.next_rd;
      case DramCommand::wr:
        return b.next_wr;
      case DramCommand::ref: {
        // Every bank precharged for tRP and past tRC (both in next_act), the last REF done.
        Ticks t = ref_ready_;
        for (const Bank& x : bank_) t = std::max(t, x.next_act);
        return t;
      }
    }
    return 0;
  }

  // The earliest time >= t that keeps `c` clear of the other banks' commands.
  Ticks between_banks(DramCommand c, unsigned group, Ticks t) const {
    const Group& g = group_[group];
    const Ticks write_end = t_.cwl + t_.burst;  // WR to the end of its data
    switch (c) {
      case DramCommand::act:
        t = acts_.clear_of(t, t_.rrd_s, t_.rrd_s);
        t = g.acts.clear_of(t, t_.rrd_l, t_.rrd_l);
        return four_activate_window(t);
      case DramCommand::rd:
        t = columns_.clear_of(t, t_.ccd_s, t_.ccd_s);
        t = g.columns.clear_of(t, t_.ccd_l, t_.ccd_l);
        t = data_bus(t, t_.cl);
        // A WR after this RD waits tRTW; this RD after a WR waits for its data + tWTR.
        t = writes_.clear_of(t, t_.rtw, write_end + t_.wtr_s);
        return g.writes.clear_of(t, t_.rtw, write_end + t_.wtr_l);
      case DramCommand::wr:
        t = columns_.clear_of(t, t_.ccd_s, t_.ccd_s);
        t = g.columns.clear_of(t, t_.ccd_l, t_.ccd_l);
        t = data_bus(t, t_.cwl);
        t = reads_.clear_of(t, write_end + t_.wtr_s, t_.rtw);
        return g.reads.clear_of(t, write_end + t_.wtr_l, t_.rtw);
      default:
        return t;
    }
  }

  // A burst's data starting `latency` after its command must not overlap another's.
  Ticks data_bus(Ticks t, Ticks latency) const {
    return data_.clear_of(add_ticks(t, latency), t_.burst, t_.burst) - latency;
  }

  // At most four ACTs in any tFAW: every five consecutive ACTs, this one among them, span at
  // least tFAW. A window that fails moves t to its first ACT + tFAW: every time before that is
  // within tFAW of four ACTs from that first one on.
  Ticks four_activate_window(Ticks t) const {
    if (t_.faw == 0) return t;
    for (;;) {
      acts_.around(t, 4, below_, above_);
      Ticks next = t;
      for (std::size_t k = 0; k <= 4; ++k) {  // k ACTs before (or at) t, 4 - k after it
        if (below_.size() < k || above_.size() < 4 - k) continue;
        const Ticks first = k > 0 ? below_[k - 1] : t;
        const Ticks last = k < 4 ? above_[3 - k] : t;
        if (last - first >= t_.faw) continue;
        next = std::max(next, add_ticks(first, t_.faw));
      }
      if (next == t) return t;
      t = next;
    }
  }

  // The command bus: each command holds it for its cycles.
  Ticks on_command_bus(DramCommand c, Ticks t) const {
    if (t_.ck == 0) return t;
    if (shared_bus_) return shared_bus_->clear_of(c, t);
    const Ticks act = t_.ck * t_.act_cycles, row = t_.ck * t_.row_cycles,
                col = t_.ck * t_.column_cycles;
    const Ticks own = c == DramCommand::act ? act : is_row(c) ? row : col;
    if (t_.shared_command_bus || is_row(c)) {
      t = acts_.clear_of(t, own, act);
      t = row_commands_.clear_of(t, own, row);
    }
    if (t_.shared_command_bus || !is_row(c)) t = columns_.clear_of(t, own, col);
    return t;
  }

  void column(Group& g, Ticks at, Ticks data) {
    g.columns.insert(at);
    columns_.insert(at);
    data_.insert(data);
  }

  DramTiming t_;
  Ticks horizon_ = 0;
  std::vector<Bank> bank_;
  std::vector<Group> group_;
  DramTimeList acts_, columns_, reads_, writes_;  // the channel's, every group
  DramTimeList data_;                             // start of each burst's data on the bus
  DramTimeList row_commands_;                     // PRE, REF, REFpb (command bus)
  Ticks bus_free_ = 0;
  Ticks ref_ready_ = 0;  // previous REF + tRFC
  Ticks latest_ = 0;     // the latest command decided
  Ticks floor_ = 0;      // latest_ - reorder_window, moved in steps of an eighth of it
  mutable std::vector<Ticks> below_, above_;
  std::shared_ptr<DramCommandBus> shared_bus_;  // null: the buses are this checker's own
  unsigned sharer_ = 0;
};

}  // namespace tlm_models

#endif  // TLM_MODELS_DRAM_TIMING_CHECKER_H
