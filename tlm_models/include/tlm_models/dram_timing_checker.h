// Earliest legal issue time of each DRAM command on one channel, from the commands already
// issued. A bank's own constraints are registers that its commands push forward (a bank works
// through its commands in order):
//   ACT: tRC, tRP (after PRE), refresh (tRFC / tRFCpb);  PRE: tRAS, tRTP, tWR;  RD: tRCD;
//   WR: tRCD (tRCDWR where the standard has it)
// The constraints between banks are kept as lists of issue times (dram_time_list.h) and hold in
// both directions, so a command may go into a gap left between commands issued before it as
// long as it keeps its distance to both sides:
//   ACT: tRRD_S/L, tFAW;  RD/WR: tCCD_S/L, the data bus, tRTW (RD before WR), tWTR_S/L (write
//   data before RD);  every command: its command bus (tCK x its cycles; HBM's two-cycle ACT)
// A request that reaches the controller after others were decided thus takes the slots they
// left free: a bank that stalls (a row conflict, a refresh) holds up only its own commands.
#ifndef TLM_MODELS_DRAM_TIMING_CHECKER_H
#define TLM_MODELS_DRAM_TIMING_CHECKER_H

#include <algorithm>
#include <cstdint>
#include <memory>
#include <utility>
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
      : t_(t), bank_(banks), groups_(bank_groups),
        lists_(kChannelLists + bank_groups * kGroupLists), checks_(kCommands * bank_groups) {
    // Nothing issued longer ago than this can constrain a command: the widest zone.
    horizon_ = t_.faw + t_.rrd_l + t_.rrd_s + t_.ccd_l + t_.ccd_s + t_.rtw + t_.cl + t_.cwl +
               2 * t_.burst + t_.wtr_l + t_.wtr_s +
               t_.ck * (t_.act_cycles + t_.row_cycles + t_.column_cycles);
    for (unsigned c = 0; c < kCommands; ++c)
      for (unsigned g = 0; g < bank_groups; ++g) build_checks(static_cast<DramCommand>(c), g);
  }

  const DramTiming& timing() const { return t_; }

  // Command buses shared with other pseudo-channels of the channel (dram_command_bus.h), this
  // checker being sharer `s` of them; without, the buses are this checker's own. The checks
  // are built anew: the bus zones then go to the shared buses instead of this checker's lists.
  void share_command_bus(std::shared_ptr<DramCommandBus> bus, unsigned s) {
    shared_bus_ = std::move(bus);
    sharer_ = s;
    for (std::vector<Check>& k : checks_) k.clear();
    for (unsigned c = 0; c < kCommands; ++c)
      for (unsigned g = 0; g < groups_; ++g) build_checks(static_cast<DramCommand>(c), g);
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
    // Each check moves t to the earliest time >= t it allows, so applying them in any order
    // until all of them hold at once ends at the earliest time they all allow. Round robin,
    // stopping once every check has held since t last moved: a check that held at the final t
    // is not asked again (a full confirming pass asked each one twice).
    const std::vector<Check>& checks = checks_[static_cast<unsigned>(c) * groups_ + group];
    const std::size_t n = checks.size();
    Ticks t = std::max(from, floor_);
    for (std::size_t i = 0, held = 0; held < n; i = i + 1 == n ? 0 : i + 1) {
      const Ticks next = apply(checks[i], t);
      if (next != t) {
        t = next;
        held = 1;
      } else {
        ++held;
      }
    }
    return t;
  }

  // Issues `c` at `at` (a time earliest() allowed): records it on every resource it constrains.
  // For RD/WR returns the end of the burst's data on the bus; otherwise `at`.
  Ticks issue(DramCommand c, unsigned bank, unsigned group, Ticks at) {
    Bank& b = bank_[bank];
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
        list(group, group_acts).insert(at);
        list(acts).insert(at);
        return at;
      case DramCommand::pre:
      case DramCommand::ref_pb:
        // A row command of one bank: its next ACT waits tRP after a PRE, tRFCpb after a REFpb.
        b.next_act = std::max(b.next_act, add_ticks(at, c == DramCommand::pre ? t_.rp : t_.rfc_pb));
        list(row_commands).insert(at);
        return at;
      case DramCommand::rd:
      case DramCommand::wr: {
        const bool read = c == DramCommand::rd;
        const Ticks latency = read ? t_.cl : t_.cwl;
        const Ticks end = add_ticks(add_ticks(at, latency), t_.burst);
        column(group, at, add_ticks(at, latency));
        list(group, read ? group_reads : group_writes).insert(at);
        list(read ? reads : writes).insert(at);
        // The row may close tRTP after a read command, tWR after a write's last data.
        b.next_pre = std::max(b.next_pre, read ? add_ticks(at, t_.rtp) : add_ticks(end, t_.wr));
        bus_free_ = std::max(bus_free_, end);
        return end;
      }
      case DramCommand::ref:
        for (Bank& x : bank_) x.next_act = std::max(x.next_act, add_ticks(at, t_.rfc));
        ref_ready_ = add_ticks(at, t_.rfc);
        list(row_commands).insert(at);
        return at;
    }
    return at;
  }

  // No command will be asked for before `t` any more (every later request arrives at or after
  // it): issue times too old to constrain one are dropped.
  void forget_before(Ticks t) {
    ++forgets_;
    if (shared_bus_) shared_bus_->forget_before(sharer_, t);
    if (t <= horizon_) return;
    const Ticks old = t - horizon_;
    for (DramTimeList& l : lists_) l.forget_before(old);
  }

  // When the data bus is free again (end of the latest burst given to it).
  Ticks bus_free() const { return bus_free_; }

  // How often history was dropped (or the floor raised). Issued commands only ever add
  // constraints, so a time that was not allowed before is not allowed later either, and a
  // search may resume from its last result; dropping history may allow it again: a caller
  // that resumes checks that this count has not moved.
  std::uint64_t forgets() const { return forgets_; }

 private:
  struct Bank {
    Ticks next_act = 0, next_pre = 0, next_rd = 0, next_wr = 0;
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

  // The lists of issue times: the channel's, then four per bank group.
  enum List : unsigned { acts, columns, reads, writes, data, row_commands, kChannelLists };
  enum GroupList : unsigned { group_acts, group_columns, group_reads, group_writes, kGroupLists };
  static constexpr unsigned kCommands = 6;  // DramCommand's values
  DramTimeList& list(List l) { return lists_[l]; }
  DramTimeList& list(unsigned group, GroupList l) {
    return lists_[kChannelLists + group * kGroupLists + l];
  }
  unsigned index(unsigned group, GroupList l) const {
    return kChannelLists + group * kGroupLists + l;
  }

  // One constraint between banks a command must keep: clear of the zones (e - before,
  // e + after) around the times e of one list, the command `shift` later (a burst's data on
  // the bus: its CL or CWL); or, for `window` > 0, tFAW over the ACT list; or, with
  // `shared_bus`, command `bus_command`'s bus time on the command buses shared with other
  // pseudo-channels.
  struct Check {
    unsigned list = 0;
    Ticks before = 0, after = 0, shift = 0, window = 0;
    bool shared_bus = false;
    DramCommand bus_command = DramCommand::act;
  };

  Ticks apply(const Check& k, Ticks t) const {
    if (k.shared_bus) return shared_bus_->clear_of(k.bus_command, t);
    const DramTimeList& l = lists_[k.list];
    if (k.window) return l.clear_of_windows(t, 4, k.window);
    if (k.shift == 0) return l.clear_of(t, k.before, k.after);
    return l.clear_of(add_ticks(t, k.shift), k.before, k.after) - k.shift;
  }

  // The checks of `c` to a bank of `group`: its constraints between banks
  //   ACT: tRRD_S/L, tFAW;  RD/WR: tCCD_S/L, the data bus, tRTW (RD before WR), tWTR_S/L (write
  //   data before RD)
  // and its command bus (each command holds it for its cycles). Two zones around the same
  // list's times become one when their union is one interval (it covers e itself, or both
  // lie on the same side of it), so a list is searched once per check.
  void build_checks(DramCommand c, unsigned g) {
    std::vector<Check>& out = checks_[static_cast<unsigned>(c) * groups_ + g];
    auto zone = [&out](unsigned l, Ticks before, Ticks after, Ticks shift = 0) {
      if (before == 0 && after == 0) return;  // no zone
      for (Check& k : out) {
        if (k.list != l || k.window || k.shared_bus || k.shift != shift) continue;
        const Ticks b = std::max(k.before, before), a = std::max(k.after, after);
        const bool one = (k.before && k.after) || (before && after) || b == 0 || a == 0;
        if (!one) continue;
        k.before = b;
        k.after = a;
        return;
      }
      out.push_back(Check{l, before, after, shift, 0});
    };
    const Ticks write_end = t_.cwl + t_.burst;  // WR to the end of its data
    switch (c) {
      case DramCommand::act:
        zone(acts, t_.rrd_s, t_.rrd_s);
        zone(index(g, group_acts), t_.rrd_l, t_.rrd_l);
        if (t_.faw) out.push_back(Check{acts, 0, 0, 0, t_.faw});
        break;
      case DramCommand::rd:
        zone(columns, t_.ccd_s, t_.ccd_s);
        zone(index(g, group_columns), t_.ccd_l, t_.ccd_l);
        zone(data, t_.burst, t_.burst, t_.cl);
        // A WR after this RD waits tRTW; this RD after a WR waits for its data + tWTR.
        zone(writes, t_.rtw, write_end + t_.wtr_s);
        zone(index(g, group_writes), t_.rtw, write_end + t_.wtr_l);
        break;
      case DramCommand::wr:
        zone(columns, t_.ccd_s, t_.ccd_s);
        zone(index(g, group_columns), t_.ccd_l, t_.ccd_l);
        zone(data, t_.burst, t_.burst, t_.cwl);
        zone(reads, write_end + t_.wtr_s, t_.rtw);
        zone(index(g, group_reads), write_end + t_.wtr_l, t_.rtw);
        break;
      default:
        break;
    }
    if (t_.ck == 0) return;
    if (shared_bus_) {
      out.push_back(Check{0, 0, 0, 0, 0, true, c});
      return;
    }
    const Ticks act = t_.ck * t_.act_cycles, row = t_.ck * t_.row_cycles,
                col = t_.ck * t_.column_cycles;
    const Ticks own = c == DramCommand::act ? act : is_row(c) ? row : col;
    if (t_.shared_command_bus || is_row(c)) {
      zone(acts, own, act);
      zone(row_commands, own, row);
    }
    if (t_.shared_command_bus || !is_row(c)) zone(columns, own, col);
  }

  void column(unsigned group, Ticks at, Ticks data_start) {
    list(group, group_columns).insert(at);
    list(columns).insert(at);
    list(data).insert(data_start);
  }

  DramTiming t_;
  Ticks horizon_ = 0;
  std::vector<Bank> bank_;
  unsigned groups_;
  // The channel's ACT, RD/WR, RD, WR, data start (each burst's data on the bus) and row
  // command (PRE, REF, REFpb: command bus) times, then per bank group ACT, RD/WR, RD, WR.
  std::vector<DramTimeList> lists_;
  std::vector<std::vector<Check>> checks_;  // per command and bank group
  std::uint64_t forgets_ = 0;
  Ticks bus_free_ = 0;
  Ticks ref_ready_ = 0;  // previous REF + tRFC
  Ticks latest_ = 0;     // the latest command decided
  Ticks floor_ = 0;      // latest_ - reorder_window, moved in steps of an eighth of it
  std::shared_ptr<DramCommandBus> shared_bus_;  // null: the buses are this checker's own
  unsigned sharer_ = 0;
};

}  // namespace tlm_models

#endif  // TLM_MODELS_DRAM_TIMING_CHECKER_H
