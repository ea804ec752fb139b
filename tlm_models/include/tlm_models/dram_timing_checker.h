// Earliest legal issue time of each DRAM command on one channel, from the commands already
// issued (DRAMSys-style checker). Every constraint is a register "earliest next X" that issued
// commands push forward, so the check is O(1) and a command never violates one of:
//   ACT: tRC, tRP (after PRE), tRRD_S/L, tFAW, refresh (tRFC / tRFCpb)
//   PRE: tRAS, tRTP, tWR (after the write data)
//   RD:  tRCD, tCCD_S/L, tWTR_S/L (after the write data), data bus free at RD + tCL
//   WR:  tRCD, tCCD_S/L, tRTW, data bus free at WR + tCWL
// Column commands of one channel therefore issue in the order they are checked, and their
// data occupies the bus in that order (no data slot is taken before one already given).
#ifndef TLM_MODELS_DRAM_TIMING_CHECKER_H
#define TLM_MODELS_DRAM_TIMING_CHECKER_H

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "tlm_models/dram_command.h"
#include "tlm_models/dram_timing.h"

namespace tlm_models {

class DramTimingChecker {
 public:
  DramTimingChecker(const DramTiming& t, unsigned banks, unsigned bank_groups)
      : t_(t), bank_(banks), group_(bank_groups) {}

  const DramTiming& timing() const { return t_; }

  Ticks earliest(DramCommand c, unsigned bank, unsigned group) const {
    const Bank& b = bank_[bank];
    const Group& g = group_[group];
    switch (c) {
      case DramCommand::act:
        return std::max({b.next_act, g.next_act, next_act_,
                         acts_ >= faw_.size() ? faw_[faw_head_] + t_.faw : Ticks{0}});
      case DramCommand::pre:
        return b.next_pre;
      case DramCommand::rd:
        return std::max({b.next_col, g.next_rd, sub(bus_free_, t_.cl)});
      case DramCommand::wr:
        return std::max({b.next_col, g.next_wr, next_wr_, sub(bus_free_, t_.cwl)});
      case DramCommand::ref: {
        // Every bank precharged for tRP and past tRC (both in next_act), the last REF done.
        Ticks t = ref_ready_;
        for (const Bank& x : bank_) t = std::max(t, x.next_act);
        return t;
      }
      case DramCommand::ref_pb:
        return b.next_act;
    }
    return 0;
  }

  // Issues `c` at `at` (>= earliest(c, ...)): pushes every register it constrains. For RD/WR
  // returns the end of the burst's data on the bus; otherwise `at`.
  Ticks issue(DramCommand c, unsigned bank, unsigned group, Ticks at) {
    Bank& b = bank_[bank];
    Group& g = group_[group];
    switch (c) {
      case DramCommand::act:
        b.next_act = std::max(b.next_act, at + t_.rc);
        b.next_pre = std::max(b.next_pre, at + t_.ras);
        b.next_col = std::max(b.next_col, at + t_.rcd);
        g.next_act = std::max(g.next_act, at + t_.rrd_l);
        next_act_ = std::max(next_act_, at + t_.rrd_s);
        faw_[faw_head_] = at;
        faw_head_ = (faw_head_ + 1) % faw_.size();
        ++acts_;
        return at;
      case DramCommand::pre:
        b.next_act = std::max(b.next_act, at + t_.rp);
        return at;
      case DramCommand::rd: {
        Ticks data = at + t_.cl;
        bus_free_ = data + t_.burst;
        column(g, at);
        next_wr_ = std::max(next_wr_, at + t_.rtw);
        b.next_pre = std::max(b.next_pre, at + t_.rtp);
        return bus_free_;
      }
      case DramCommand::wr: {
        Ticks data = at + t_.cwl;
        bus_free_ = data + t_.burst;
        column(g, at);
        Ticks end = bus_free_;
        for (Group& other : group_) other.next_rd = std::max(other.next_rd, end + t_.wtr_s);
        g.next_rd = std::max(g.next_rd, end + t_.wtr_l);
        b.next_pre = std::max(b.next_pre, end + t_.wr);
        return end;
      }
      case DramCommand::ref:
        for (Bank& x : bank_) x.next_act = std::max(x.next_act, at + t_.rfc);
        ref_ready_ = at + t_.rfc;
        return at;
      case DramCommand::ref_pb:
        b.next_act = std::max(b.next_act, at + t_.rfc_pb);
        return at;
    }
    return at;
  }

  // When the data bus is free again (end of the last burst given to it).
  Ticks bus_free() const { return bus_free_; }

 private:
  struct Bank {
    Ticks next_act = 0, next_pre = 0, next_col = 0;
  };
  struct Group {
    Ticks next_act = 0, next_rd = 0, next_wr = 0;
  };

  static Ticks sub(Ticks a, Ticks b) { return a > b ? a - b : 0; }

  void column(Group& g, Ticks at) {
    for (Group& other : group_) {
      other.next_rd = std::max(other.next_rd, at + t_.ccd_s);
      other.next_wr = std::max(other.next_wr, at + t_.ccd_s);
    }
    g.next_rd = std::max(g.next_rd, at + t_.ccd_l);
    g.next_wr = std::max(g.next_wr, at + t_.ccd_l);
  }

  DramTiming t_;
  std::vector<Bank> bank_;
  std::vector<Group> group_;
  Ticks next_act_ = 0;            // tRRD_S
  Ticks next_wr_ = 0;    // channel-wide: last RD + tRTW
  Ticks bus_free_ = 0;
  Ticks ref_ready_ = 0;  // previous REF + tRFC
  std::array<Ticks, 4> faw_{};    // the last four ACT times, oldest at faw_head_
  std::size_t faw_head_ = 0;
  std::uint64_t acts_ = 0;
};

}  // namespace tlm_models

#endif  // TLM_MODELS_DRAM_TIMING_CHECKER_H
