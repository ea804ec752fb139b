// DramController: each timing constraint on a hand-built command sequence with its exact
// expected issue time, the scheduler, page policies, write phases, backpressure and refresh.
// Times are in ns; bank b is in bank group b % 4.
#include <algorithm>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "check.h"
#include "tlm_models/dram_command_bus.h"
#include "tlm_models/dram_controller.h"
#include "tlm_models/dram_scheduler_fcfs.h"
#include "tlm_models/dram_scheduler_frfcfs.h"

using tlm_models::DramCommand;
using tlm_models::DramCommandRecord;
using tlm_models::DramController;
using tlm_models::Ticks;

namespace {

Ticks ns(double v) { return static_cast<Ticks>(v * 1000); }  // 1 ps resolution

// Distinct values, so that each expected time names the constraint that set it.
DramController::Config config() {
  DramController::Config c;
  tlm_models::DramTiming& t = c.timing;
  t.rcd = ns(14);
  t.rp = ns(15);
  t.ras = ns(33);
  t.rc = ns(50);  // above tRAS + tRP = 48, so that a same-bank ACT -> ACT shows tRC
  t.rrd_s = ns(4);
  t.rrd_l = ns(6);
  t.faw = ns(30);
  t.ccd_s = ns(2);
  t.ccd_l = ns(4);
  t.cl = ns(14);
  t.cwl = ns(4);
  t.wr = ns(16);
  t.wtr_s = ns(3);
  t.wtr_l = ns(8);
  t.rtw = ns(18);
  t.rtp = ns(5);
  t.burst = ns(2);
  c.banks = 16;
  c.bank_groups = 4;
  c.queue_depth = 8;
  return c;
}

struct Ctl {
  DramController ctl;
  std::vector<Ticks> done;
  std::vector<DramCommandRecord> log;
  explicit Ctl(const DramController::Config& c, bool frfcfs = true, unsigned cap = 16)
      : ctl(c, frfcfs ? std::shared_ptr<const tlm_models::DramScheduler>(
                            std::make_shared<tlm_models::FrFcfsScheduler>(cap))
                      : std::make_shared<tlm_models::FcfsScheduler>()) {
    done.resize(64);
    ctl.set_completion_sink(&done);
    ctl.set_command_log(&log);
  }
  // Queues a request of `bursts` bursts; the tag is the submission index.
  unsigned submit(double arrival_ns, unsigned bank, std::uint64_t row, bool write = false,
                  std::uint32_t bursts = 1) {
    ctl.submit(ns(arrival_ns), bank, row, bursts, bursts * 32, write, next_tag);
    return next_tag++;
  }
  // Completion (ns) of request `tag` after draining.
  double run(unsigned tag) {
    ctl.drain();
    return static_cast<double>(done[tag]) / 1000.0;
  }
  // Issue time (ns) of the n-th command `c` to `bank` in the log.
  double at(DramCommand c, unsigned bank, unsigned n = 0) const {
    for (const auto& r : log)
      if (r.command == c && r.bank == bank && n-- == 0) return static_cast<double>(r.at) / 1000.0;
    return -1;
  }
  unsigned next_tag = 0;
};

}  // namespace

TEST_CASE(trcd_tcl_and_burst_on_a_closed_bank) {
  Ctl c(config());
  unsigned r = c.submit(0, 0, 7);
  CHECK_EQ(c.run(r), 14.0 + 14 + 2);  // ACT 0, RD at tRCD, data tCL later for one burst
  CHECK_EQ(c.at(DramCommand::act, 0), 0.0);
  CHECK_EQ(c.at(DramCommand::rd, 0), 14.0);
  CHECK_EQ(c.ctl.stats().row_misses, 1u);
}

// HBM's own ACT-to-WR time (tRCDWR): a write to a closed bank goes tRCDWR after its ACT, a read
// still tRCD. Without one (zero) writes wait tRCD too.
TEST_CASE(trcdwr_times_a_write_after_its_activate) {
  for (double rcd_wr : {0.0, 7.0}) {
    auto cfg = config();
    cfg.timing.rcd_wr = ns(rcd_wr);
    Ctl c(cfg);
    const unsigned w = c.submit(0, 0, 7, true);
    const unsigned r = c.submit(0, 1, 7);
    c.run(r);
    const double wr_at = rcd_wr > 0 ? 7.0 : 14.0;
    CHECK_EQ(c.at(DramCommand::wr, 0), wr_at);
    CHECK_EQ(c.done[w], ns(wr_at + 4 + 2));  // tCWL, one burst
    CHECK_EQ(c.at(DramCommand::act, 1), 4.0);  // tRRD_S
    // The read: tRCD after its ACT (18), and tWTR_S after the write's data (WR + tCWL + burst
    // + 3: 16 after a WR at 7, 23 after one at 14).
    CHECK_EQ(c.at(DramCommand::rd, 1), rcd_wr > 0 ? 18.0 : 23.0);
  }
}

TEST_CASE(same_bank_conflict_waits_tras_then_trp_and_trc) {
  Ctl c(config());
  c.submit(0, 0, 1);
  unsigned r = c.submit(0, 0, 2);
  CHECK_EQ(c.run(r), 50.0 + 14 + 14 + 2);
  CHECK_EQ(c.at(DramCommand::pre, 0), 33.0);  // tRAS after the ACT (tRTP: 14 + 5 = 19)
  CHECK_EQ(c.at(DramCommand::act, 0, 1), 50.0);  // tRC (PRE + tRP would allow 48)
  CHECK_EQ(c.ctl.stats().row_conflicts, 1u);
}

TEST_CASE(trp_binds_when_trc_is_shorter) {
  auto cfg = config();
  cfg.timing.rc = ns(40);
  Ctl c(cfg);
  c.submit(0, 0, 1);
  c.submit(0, 0, 2);
  c.run(1);
  CHECK_EQ(c.at(DramCommand::act, 0, 1), 33.0 + 15);
}

TEST_CASE(trtp_delays_the_precharge_after_a_read) {
  auto cfg = config();
  cfg.timing.ras = 0;
  cfg.timing.rc = 0;
  Ctl c(cfg);
  c.submit(0, 0, 1);
  c.submit(0, 0, 2);
  c.run(1);
  CHECK_EQ(c.at(DramCommand::pre, 0), 14.0 + 5);  // RD + tRTP
  CHECK_EQ(c.at(DramCommand::act, 0, 1), 19.0 + 15);
}

TEST_CASE(trrd_short_and_long) {
  Ctl c(config());
  c.submit(0, 0, 0);  // group 0
  c.submit(0, 1, 0);  // group 1: tRRD_S after bank 0
  c.submit(0, 4, 0);  // group 0: tRRD_L after bank 0, tRRD_S after bank 1
  c.run(2);
  CHECK_EQ(c.at(DramCommand::act, 0), 0.0);
  CHECK_EQ(c.at(DramCommand::act, 1), 4.0);
  CHECK_EQ(c.at(DramCommand::act, 4), 8.0);  // max(0 + 6, 4 + 4)
  Ctl d(config());
  d.submit(0, 0, 0);
  d.submit(0, 4, 0);
  d.run(1);
  CHECK_EQ(d.at(DramCommand::act, 4), 6.0);
}

TEST_CASE(tfaw_limits_a_fifth_activate) {
  Ctl c(config());
  for (unsigned b : {0u, 1u, 2u, 3u, 5u}) c.submit(0, b, 0);
  c.run(4);
  CHECK_EQ(c.at(DramCommand::act, 3), 12.0);
  CHECK_EQ(c.at(DramCommand::act, 5), 30.0);  // tRRD would allow 16; the window began at 0
}

TEST_CASE(tccd_short_and_long_between_reads) {
  Ctl c(config());
  c.submit(0, 0, 0);
  c.submit(0, 1, 0);
  c.submit(0, 4, 0);
  c.run(2);
  // Rows open (ACT 0, 4, 8). Now three hits at 100 ns: banks 0, 1 (other group), 4 (group 0).
  unsigned a = c.submit(100, 0, 0), b = c.submit(100, 1, 0), d = c.submit(100, 4, 0);
  c.run(d);
  CHECK_EQ(c.at(DramCommand::rd, 0, 1), 100.0);
  CHECK_EQ(c.at(DramCommand::rd, 1, 1), 102.0);  // tCCD_S = burst
  CHECK_EQ(c.at(DramCommand::rd, 4, 1), 104.0);  // tCCD_L after bank 0 (group 0)
  CHECK_EQ(c.done[a], ns(116));
  CHECK_EQ(c.done[b], ns(118));
  CHECK_EQ(c.done[d], ns(120));
  CHECK_EQ(c.ctl.stats().row_hits, 3u);
}

TEST_CASE(data_bus_occupancy_spaces_bursts) {
  auto cfg = config();
  cfg.timing.burst = ns(8);  // longer than tCCD_L
  Ctl c(cfg);
  unsigned r = c.submit(0, 0, 0, false, 4);
  CHECK_EQ(c.run(r), 14.0 + 14 + 4 * 8);
  CHECK_EQ(c.at(DramCommand::rd, 0, 1), 22.0);
  CHECK_EQ(c.ctl.stats().busy_time, ns(32));
}

TEST_CASE(twtr_short_and_long_after_a_write) {
  for (unsigned other : {1u, 4u}) {
    Ctl c(config());
    c.submit(0, 0, 0);
    c.submit(0, other, 0);
    c.run(1);
    unsigned w = c.submit(100, 0, 0, true);
    CHECK_EQ(c.run(w), 100.0 + 4 + 2);  // WR, tCWL, one burst
    unsigned r = c.submit(100, other, 0);
    c.run(r);
    // Write data ends at 106; a read waits tWTR_S (other group) or tWTR_L (same group).
    CHECK_EQ(c.at(DramCommand::rd, other, 1), other == 1 ? 109.0 : 114.0);
    CHECK_EQ(c.ctl.stats().write_to_read, 1u);
  }
}

TEST_CASE(trtw_between_a_read_and_a_write) {
  Ctl c(config());
  c.submit(0, 0, 0);
  c.submit(0, 1, 0);
  c.run(1);
  c.submit(100, 0, 0);
  c.run(2);
  unsigned w = c.submit(100, 1, 0, true);
  CHECK_EQ(c.run(w), 118.0 + 4 + 2);
  CHECK_EQ(c.at(DramCommand::wr, 1), 118.0);
  CHECK_EQ(c.ctl.stats().read_to_write, 1u);
}

TEST_CASE(twr_delays_the_precharge_after_a_write) {
  Ctl c(config());
  unsigned w = c.submit(0, 0, 0, true);
  CHECK_EQ(c.run(w), 14.0 + 4 + 2);
  c.submit(0, 0, 1);
  c.run(1);
  CHECK_EQ(c.at(DramCommand::pre, 0), 20.0 + 16);  // write data end + tWR (tRAS: 33)
}

TEST_CASE(all_bank_refresh_blocks_every_bank_for_trfc) {
  auto cfg = config();
  cfg.timing.refi = ns(1000);
  cfg.timing.rfc = ns(100);
  Ctl c(cfg);
  c.submit(0, 0, 0);
  c.run(0);
  // Due at 1000: bank 0 is precharged at 1000, REF after tRP, every bank blocked for tRFC.
  unsigned a = c.submit(1000, 0, 0), b = c.submit(1050, 5, 0);
  c.run(b);
  CHECK_EQ(c.at(DramCommand::pre, 0), 1000.0);
  CHECK_EQ(c.at(DramCommand::ref, 0), 1015.0);
  CHECK_EQ(c.done[a], ns(1115 + 14 + 14 + 2));  // the refresh closed the row: a miss
  CHECK_EQ(c.at(DramCommand::act, 5), 1115.0 + 4);  // blocked too (then tRRD_S after bank 0)
  CHECK_EQ(c.ctl.stats().refreshes, 1u);
  CHECK_EQ(c.ctl.stats().refresh_time, ns(100));
  CHECK_EQ(c.ctl.stats().row_misses, 3u);
}

TEST_CASE(per_bank_refresh_blocks_only_its_bank) {
  auto cfg = config();
  cfg.refresh = tlm_models::DramRefresh::Mode::per_bank;
  cfg.timing.refi = ns(1600);  // 16 banks: one REFpb every 100 ns, bank 0 first
  cfg.timing.rfc_pb = ns(50);
  Ctl c(cfg);
  unsigned a = c.submit(100, 0, 0), b = c.submit(100, 1, 0);
  c.run(b);
  CHECK_EQ(c.at(DramCommand::ref_pb, 0), 100.0);
  CHECK_EQ(c.at(DramCommand::act, 1), 100.0);  // bank 1 is not refreshing
  CHECK_EQ(c.at(DramCommand::act, 0), 150.0);  // REFpb + tRFCpb
  CHECK_EQ(c.done[a], ns(150 + 14 + 14 + 2));
}

TEST_CASE(frfcfs_serves_a_younger_hit_first_and_fcfs_does_not) {
  for (bool frfcfs : {true, false}) {
    Ctl c(config(), frfcfs);
    c.submit(0, 0, 0);
    c.run(0);
    unsigned miss = c.submit(100, 0, 1), hit = c.submit(100, 0, 0);
    c.run(hit);
    if (frfcfs) {
      CHECK_EQ(c.done[hit], ns(100 + 14 + 2));
      CHECK(c.done[miss] > c.done[hit]);
    } else {
      CHECK(c.done[hit] > c.done[miss]);
      CHECK_EQ(c.ctl.stats().row_conflicts, 2u);  // the hit found the other row open again
    }
  }
}

TEST_CASE(frfcfs_cap_ends_bypassing_of_the_oldest) {
  Ctl c(config(), true, 2);
  c.submit(0, 0, 0);
  c.run(0);
  unsigned miss = c.submit(100, 0, 1);
  unsigned h1 = c.submit(100, 0, 0), h2 = c.submit(100, 0, 0), h3 = c.submit(100, 0, 0);
  c.run(h3);
  CHECK(c.done[h1] < c.done[miss]);
  CHECK(c.done[h2] < c.done[miss]);
  CHECK(c.done[h3] > c.done[miss]);  // two bypasses, then the oldest goes
}

TEST_CASE(closed_page_precharges_after_each_access) {
  auto cfg = config();
  cfg.page_policy = tlm_models::DramPagePolicy::closed;
  Ctl c(cfg);
  c.submit(0, 0, 0);
  c.run(0);
  CHECK_EQ(c.at(DramCommand::pre, 0), 33.0);  // auto-precharge at tRAS
  CHECK(!c.ctl.row_open(0));
  unsigned r = c.submit(100, 0, 0);
  CHECK_EQ(c.run(r), 100.0 + 14 + 14 + 2);  // the same row is a miss again
  CHECK_EQ(c.ctl.stats().row_misses, 2u);
}

TEST_CASE(adaptive_page_closes_only_for_a_waiting_other_row) {
  auto cfg = config();
  cfg.page_policy = tlm_models::DramPagePolicy::adaptive;
  Ctl c(cfg);
  c.submit(0, 0, 0);
  c.run(0);
  CHECK(c.ctl.row_open(0));  // nothing else queued: stays open
  c.submit(100, 0, 0);
  c.submit(100, 0, 3);
  c.run(2);
  CHECK_EQ(c.ctl.stats().row_hits, 1u);
  CHECK_EQ(c.at(DramCommand::pre, 0), 100.0 + 5);  // closed right after the hit: RD + tRTP
  CHECK_EQ(c.ctl.stats().row_misses, 2u);  // so the other row finds the bank closed
  CHECK_EQ(c.ctl.stats().row_conflicts, 0u);
}

TEST_CASE(writes_wait_for_the_high_watermark) {
  for (unsigned high : {2u, 3u}) {
    auto cfg = config();
    cfg.write_drain = tlm_models::DramWriteDrain::watermark;
    cfg.write_high = high;
    cfg.write_low = 0;
    Ctl c(cfg);
    c.submit(0, 0, 0);
    c.submit(0, 1, 0);
    c.run(1);
    unsigned r = c.submit(100, 0, 0), w1 = c.submit(100, 1, 0, true), w2 = c.submit(100, 1, 0, true);
    c.run(w2);
    if (high == 2) {
      CHECK(c.done[w2] < c.done[r]);  // two writes reach the watermark: drained first
    } else {
      CHECK(c.done[r] < c.done[w1]);  // below it the read goes first
    }
  }
}

// Four reads of bank 0 and five writes of bank 1 (other group), all queued at 0, write_low 1:
// checks each request's completion (ns; reads, then writes) and the turnarounds.
void check_read_write_mix(unsigned write_high, const std::vector<double>& done,
                          std::uint64_t write_to_read, std::uint64_t read_to_write) {
  auto cfg = config();
  cfg.write_drain = tlm_models::DramWriteDrain::watermark;
  cfg.write_high = write_high;
  cfg.write_low = 1;
  Ctl c(cfg);
  for (unsigned i = 0; i < 4; ++i) c.submit(0, 0, 0);
  for (unsigned i = 0; i < 5; ++i) c.submit(0, 1, 0, true);
  c.ctl.drain();
  for (unsigned i = 0; i < 9; ++i) CHECK_EQ(c.done[i], ns(done[i]));
  CHECK_EQ(c.ctl.stats().write_to_read, write_to_read);
  CHECK_EQ(c.ctl.stats().read_to_write, read_to_write);
}

// write_high 3: five writes reach it, so writes go first until one is left (W0-W3: ACT 0, WR at
// 14, 18, 22, 26 by tCCD_L, data ends 20-32); then the reads (ACT at tRRD_S = 4, first RD at
// write data end 32 + tWTR_S 3 = 35, then 39, 43, 47, data ends 51-63); then the last write
// (WR at RD 47 + tRTW 18 = 65, data to 71): one turnaround each way.
TEST_CASE(write_drain_goes_from_the_high_to_the_low_watermark) {
  check_read_write_mix(3, {51, 55, 59, 63, 20, 24, 28, 32, 71}, 1, 1);
}

// write_high 6: the five writes stay below it and wait while reads are queued (RDs 14-26, data
// to 42); then all five (ACT at 4, first WR at RD 26 + tRTW = 44, then every tCCD_L, data to
// 66): a single turnaround.
TEST_CASE(writes_below_the_high_watermark_wait_for_the_reads) {
  check_read_write_mix(6, {30, 34, 38, 42, 50, 54, 58, 62, 66}, 0, 1);
}

// run_until decides only what is due: a hit enqueued at 25 ns still overtakes a conflict that
// was queued at 20 but whose PRE (tRAS: ACT 0 + 33) was not due yet.
TEST_CASE(run_until_leaves_later_decisions_open) {
  Ctl c(config());
  c.ctl.enqueue(0, 0, 0, 0, 1, 32, false, 0);
  CHECK_EQ(c.ctl.run_until(0), ns(14));        // ACT at 0; the RD is due at tRCD
  CHECK_EQ(c.ctl.run_until(ns(14)), tlm_models::DramController::never_ready());
  c.ctl.enqueue(ns(20), ns(20), 0, 1, 1, 32, false, 1);  // conflict
  CHECK_EQ(c.ctl.run_until(ns(20)), ns(33));   // its PRE waits for tRAS
  c.ctl.enqueue(ns(25), ns(25), 0, 0, 1, 32, false, 2);  // hit
  CHECK_EQ(c.ctl.run_until(ns(25)), ns(33));   // the hit's RD went at 25
  c.ctl.run_until(ns(1000));
  CHECK_EQ(c.done[2], ns(25 + 14 + 2));
  // PRE at max(33, RD 25 + tRTP 5) = 33, ACT at max(33 + tRP 15, ACT 0 + tRC 50) = 50.
  CHECK_EQ(c.done[1], ns(50 + 14 + 14 + 2));
  CHECK_EQ(c.ctl.stats().row_hits, 1u);
}

TEST_CASE(a_full_bank_queue_applies_backpressure) {
  auto cfg = config();
  cfg.queue_depth = 2;
  Ctl c(cfg);
  c.submit(0, 0, 0);
  c.submit(0, 0, 0);
  unsigned third = c.submit(0, 0, 0);  // enters when the first leaves (its RD at 14)
  c.run(third);
  CHECK_EQ(c.ctl.stats().backpressured, 1u);
  CHECK_EQ(c.ctl.stats().backpressure_time, ns(14));
  CHECK_EQ(c.done[third], ns(14 + 4 + 4 + 14 + 2));  // RDs at 14, 18, 22 (tCCD_L)
}

// In-order admission: D (bank 1, arriving at 0) comes after C, which waits for a slot of
// bank 0's full queue (depth 2) until A leaves at its RD (14): D enters at 14 too, ACT 14, RD
// 28, data to 44. Admitted per bank, D enters at 0 and its ACT goes at tRRD_S = 4.
TEST_CASE(in_order_admission_holds_later_requests_behind_a_full_queue) {
  for (bool in_order : {true, false}) {
    auto cfg = config();
    cfg.queue_depth = 2;
    cfg.in_order_admission = in_order;
    Ctl c(cfg);
    c.submit(0, 0, 0);
    c.submit(0, 0, 0);
    c.submit(0, 0, 0);
    const unsigned d = c.submit(0, 1, 0);
    c.run(d);
    CHECK_EQ(c.at(DramCommand::act, 1), in_order ? 14.0 : 4.0);
    CHECK_EQ(c.ctl.stats().backpressured, in_order ? 2u : 1u);
    if (in_order) CHECK_EQ(c.done[d], ns(14 + 14 + 14 + 2));
  }
}

// In-order admission follows arrival, not call order: with a queue of 1, B (bank 0, arriving
// at 100) enters when A leaves at its RD, 114. C (bank 1), called later but arriving at 50,
// is not held by it: ACT at 50. D (bank 2) arriving at 105, after A and B, enters at 114 with
// B: ACT 114.
TEST_CASE(in_order_admission_follows_arrival_order) {
  auto cfg = config();
  cfg.queue_depth = 1;
  Ctl c(cfg);
  c.submit(100, 0, 0);
  c.submit(100, 0, 0);
  c.submit(50, 1, 0);
  const unsigned d = c.submit(105, 2, 0);
  c.run(d);
  CHECK_EQ(c.at(DramCommand::act, 0), 100.0);
  CHECK_EQ(c.at(DramCommand::act, 1), 50.0);
  CHECK_EQ(c.at(DramCommand::act, 2), 114.0);
}

TEST_CASE(latency_percentiles_and_queue_occupancy) {
  Ctl c(config());
  for (unsigned i = 0; i < 10; ++i) c.submit(i * 1000.0, 0, 0);
  c.run(9);
  const auto& s = c.ctl.stats();
  // First a miss (30 ns), then nine hits (16 ns); a percentile is its bucket's upper edge,
  // at most 1/128 above the value.
  auto near = [](Ticks got, Ticks want) { return got >= want && got <= want + want / 128; };
  CHECK(near(s.read_latency.percentile(0.5), ns(16)));
  CHECK(near(s.read_latency.percentile(0.9), ns(16)));
  CHECK(near(s.read_latency.percentile(0.99), ns(30)));
  CHECK_EQ(s.residence, ns(14));  // only the miss waited (for its ACT) before its RD
}

// A request decided after others takes the slots they left free: bank 0 is busy with a row
// conflict (A: ACT 0, RD 14; B: PRE 33 by tRAS, ACT 50 by tRC, RD 64, data to 80), and C to
// bank 1 (group 1), arriving at 0 but drained after both, needs none of bank 0's slots: ACT at
// tRRD_S = 4, RD at 18 (tCCD_S after 14 and clear of 64), data 32-34 between A's and B's.
TEST_CASE(a_stalled_bank_holds_up_only_its_own_requests) {
  Ctl c(config());
  const unsigned a = c.submit(0, 0, 0);
  c.run(a);
  const unsigned b = c.submit(0, 0, 1);
  CHECK_EQ(c.run(b), 80.0);
  const unsigned late = c.submit(0, 1, 0);
  CHECK_EQ(c.run(late), 34.0);
  CHECK_EQ(c.at(DramCommand::act, 1), 4.0);
  CHECK_EQ(c.at(DramCommand::rd, 1), 18.0);
  // A WR placed in a gap keeps its distance both ways: bank 2 (group 2), arriving at 0, ACT at
  // 8 (tRRD_S after 4); WR at 36 = tRTW after the RD at 18, its data (40-42) + tWTR_S = 45
  // before B's RD at 64.
  const unsigned w = c.submit(0, 2, 0, true);
  c.run(w);
  CHECK_EQ(c.at(DramCommand::act, 2), 8.0);
  CHECK_EQ(c.at(DramCommand::wr, 2), 36.0);
  CHECK_EQ(c.done[w], ns(36 + 4 + 2));
}

// Without write phases (write_drain none) the oldest request goes first whatever its kind: W
// (bank 1) submitted before R (bank 0), both at 0: ACT 1 at 0, ACT 0 at tRRD_S = 4; WR at 14,
// data to 20; RD at 20 + tWTR_S 3 = 23, data to 39. With watermarks (16 / 4) the read phase
// comes first: RD at 14 (data to 30), then WR at RD + tRTW = 32 (data to 38).
TEST_CASE(write_drain_none_serves_reads_and_writes_by_age) {
  for (auto drain : {tlm_models::DramWriteDrain::none, tlm_models::DramWriteDrain::watermark}) {
    auto cfg = config();
    cfg.write_drain = drain;
    Ctl c(cfg);
    const unsigned w = c.submit(0, 1, 0, true), r = c.submit(0, 0, 0);
    c.ctl.drain();
    const bool none = drain == tlm_models::DramWriteDrain::none;
    CHECK_EQ(c.done[w], ns(none ? 20 : 38));
    CHECK_EQ(c.done[r], ns(none ? 39 : 30));
  }
}

// A bank remembers the request it opened a row for: R's ACT issues at 0 (run_until stops
// before its RD at 14); then two writes to another row of the bank start a write phase
// (write_high 2). R still gets its RD at 14 (data to 30); the writes follow: PRE at tRAS 33,
// ACT at tRC 50, WR at 64 and 68 (tCCD_L), data to 74. Two ACTs, not three.
TEST_CASE(a_bank_serves_the_request_it_opened_the_row_for) {
  auto cfg = config();
  cfg.write_drain = tlm_models::DramWriteDrain::watermark;
  cfg.write_high = 2;
  cfg.write_low = 0;
  Ctl c(cfg);
  c.ctl.enqueue(0, 0, 0, 0, 1, 32, false, 0);
  CHECK_EQ(c.ctl.run_until(0), ns(14));
  c.ctl.enqueue(ns(5), ns(5), 0, 1, 1, 32, true, 1);
  c.ctl.enqueue(ns(5), ns(5), 0, 1, 1, 32, true, 2);
  c.ctl.drain();
  CHECK_EQ(c.done[0], ns(30));
  CHECK_EQ(c.done[2], ns(74));
  CHECK_EQ(c.ctl.stats().activates, 2u);
}

// The command bus (tCK 2 ns; rRRD 1 ns so that only the bus separates ACTs). Reads of banks 0
// and 1 (groups 0, 1) at 0: a two-cycle ACT holds the row bus 4 ns, so ACT 1 at 4, RD 18, data
// to 34 (no bus: ACT 1 at 1, RD at 16 by tCCD_S, data to 32).
TEST_CASE(a_two_cycle_act_holds_the_row_command_bus) {
  for (Ticks ck : {Ticks{0}, ns(2)}) {
    auto cfg = config();
    cfg.timing.rrd_s = cfg.timing.rrd_l = ns(1);
    cfg.timing.ck = ck;
    cfg.timing.act_cycles = 2;
    cfg.timing.shared_command_bus = false;
    Ctl c(cfg);
    c.submit(0, 0, 0);
    const unsigned second = c.submit(0, 1, 0);
    CHECK_EQ(c.run(second), ck ? 34.0 : 32.0);
    CHECK_EQ(c.at(DramCommand::act, 1), ck ? 4.0 : 1.0);
  }
}

// Row and column commands share one bus (DDR4, LPDDR4) or not (HBM): R0 to bank 0 (ACT 0, RD
// due at 14) and R1 to bank 1 arriving at 13: its ACT goes at 13. Split: R0's RD at 14, data
// to 30. Shared: the ACT holds the bus 13-17, so R0's RD waits until 17 (data to 33).
TEST_CASE(a_shared_command_bus_serialises_row_and_column_commands) {
  for (bool shared : {false, true}) {
    auto cfg = config();
    cfg.timing.ck = ns(2);
    cfg.timing.act_cycles = 2;
    cfg.timing.shared_command_bus = shared;
    Ctl c(cfg);
    const unsigned r0 = c.submit(0, 0, 0), r1 = c.submit(13, 1, 0);
    c.ctl.drain();
    CHECK_EQ(c.at(DramCommand::act, 1), 13.0);
    CHECK_EQ(c.done[r0], ns(shared ? 33 : 30));
    CHECK_EQ(c.done[r1], ns(13 + 14 + 14 + 2));
  }
}

// Two pseudo-channels of one channel (tCK 2 ns, split buses, two-cycle ACT), each a
// controller of its own, with their command buses shared (JESD235) or not.
struct PseudoChannels {
  Ctl a, b;
  explicit PseudoChannels(bool shared)
      : a(bus_config()), b(bus_config()) {
    if (!shared) return;
    auto bus = std::make_shared<tlm_models::DramCommandBus>(bus_config().timing, 2);
    a.ctl.share_command_bus(bus, 0);
    b.ctl.share_command_bus(bus, 1);
  }
  static DramController::Config bus_config() {
    auto cfg = config();
    cfg.timing.ck = ns(2);
    cfg.timing.act_cycles = 2;
    cfg.timing.shared_command_bus = false;
    return cfg;
  }
};

// A read to bank 0 of each pseudo-channel at 0. Own buses: both ACT at 0, RD at 14 (tRCD),
// data to 30. Shared: the second ACT waits for the first's two cycles (4), RD at 18, data to
// 34. Then a row hit on each at 100: RD 100 on both, or 100 and 102 (one column cycle).
TEST_CASE(pseudo_channels_sharing_command_buses_take_turns_on_them) {
  for (bool shared : {false, true}) {
    PseudoChannels pc(shared);
    const unsigned a0 = pc.a.submit(0, 0, 0), b0 = pc.b.submit(0, 0, 0);
    CHECK_EQ(pc.a.run(a0), 30.0);
    CHECK_EQ(pc.b.run(b0), shared ? 34.0 : 30.0);
    CHECK_EQ(pc.b.at(DramCommand::act, 0), shared ? 4.0 : 0.0);
    CHECK_EQ(pc.b.at(DramCommand::rd, 0), shared ? 18.0 : 14.0);
    const unsigned a1 = pc.a.submit(100, 0, 0), b1 = pc.b.submit(100, 0, 0);
    CHECK_EQ(pc.a.run(a1), 116.0);
    CHECK_EQ(pc.b.run(b1), shared ? 118.0 : 116.0);
  }
}

// The shared bus holds in both directions: pseudo-channel A decides ACTs at 0 and 20 first;
// B's ACT decided after them fits the gap when it is done before A's at 20 (arrival 15:
// 15 + 4 <= 20), and goes after A's when it is not (arrival 17: B's tRRD_S after its ACT at 15
// gives 19, A's ACT holds the row bus 20-24: at 24; own buses: at 19).
TEST_CASE(a_shared_command_bus_keeps_a_gap_on_both_sides) {
  PseudoChannels pc(true);
  pc.a.run(pc.a.submit(0, 0, 0));
  pc.a.run(pc.a.submit(20, 1, 0));
  CHECK_EQ(pc.a.at(DramCommand::act, 1), 20.0);
  pc.b.run(pc.b.submit(15, 0, 0));
  pc.b.run(pc.b.submit(17, 1, 0));
  CHECK_EQ(pc.b.at(DramCommand::act, 0), 15.0);
  CHECK_EQ(pc.b.at(DramCommand::act, 1), 24.0);
}

// In time order (run_until, a scheduler per pseudo-channel): both requests arrive at 0; A's
// scheduler runs first and issues its ACT at 0, so B's is due at 4 (the first two cycles).
TEST_CASE(shared_command_buses_in_time_order) {
  PseudoChannels pc(true);
  pc.a.ctl.enqueue(0, 0, 0, 0, 1, 32, false, 0);
  pc.b.ctl.enqueue(0, 0, 0, 0, 1, 32, false, 0);
  CHECK_EQ(pc.a.ctl.run_until(0), ns(14));
  CHECK_EQ(pc.b.ctl.run_until(0), ns(4));
  CHECK_EQ(pc.b.ctl.run_until(ns(4)), ns(18));
  CHECK_EQ(pc.b.at(DramCommand::act, 0), 4.0);
}

// History is dropped only where neither sharer may place a command: A forgets everything
// before 100 us, B (still at 0) does not, so A's ACT at 0 still keeps B's ACT at 1 out until 4.
TEST_CASE(a_shared_command_bus_keeps_what_a_sharer_still_needs) {
  PseudoChannels pc(true);
  pc.a.run(pc.a.submit(0, 0, 0));
  pc.a.ctl.forget_before(ns(100000));
  pc.b.run(pc.b.submit(1, 0, 0));
  CHECK_EQ(pc.b.at(DramCommand::act, 0), 4.0);
}

// The shared buses answer with a time clear of all their commands at once (the checker stops
// once every check holds, so each check must hold at its own answer): an ACT asked for at 4
// with a PRE at 5 (row bus 5-7: an ACT must end by 5 or start at 7) and an ACT at 10 (an ACT
// must end by 10 or start at 14) is pushed by the PRE to 7, which the ACT at 10 rules out,
// so 14. One pass over the lists would answer 7.
TEST_CASE(a_shared_command_bus_answers_a_time_clear_of_every_list) {
  const auto t = PseudoChannels::bus_config().timing;  // tCK 2 ns: ACT 4 ns, PRE 2 ns
  tlm_models::DramCommandBus bus(t, 2);
  bus.record(DramCommand::act, ns(10));
  bus.record(DramCommand::pre, ns(5));
  CHECK_EQ(bus.clear_of(DramCommand::act, ns(4)), ns(14));
  CHECK_EQ(bus.clear_of(DramCommand::act, ns(1)), ns(1));   // ends at 5, before the PRE
  CHECK_EQ(bus.clear_of(DramCommand::rd, ns(5)), ns(5));    // the column bus is free
}

// FR-FCFS across requests decided one after another: A0 opens row 0 of bank 0 (ACT 0, RD
// 14), B0 conflicts (PRE 33, ACT 50, RD 64). Later requests to row 0 that arrived at 0 are hits
// a controller would have served before that PRE: they take RDs at 18, 22, 26 (tCCD_L) in
// row 0's past interval, each leaving tRTP (5 ns) before the PRE at 33. The next, at 30, would
// not (35 > 33): a conflict after B0 (PRE at ACT 50 + tRAS = 83, ACT 100 by tRC, RD 114).
TEST_CASE(a_later_request_hits_a_row_before_the_precharge_that_closed_it) {
  Ctl c(config());
  c.run(c.submit(0, 0, 0));
  CHECK_EQ(c.run(c.submit(0, 0, 1)), 80.0);
  for (double rd : {18.0, 22.0, 26.0}) CHECK_EQ(c.run(c.submit(0, 0, 0)), rd + 16);
  CHECK_EQ(c.ctl.stats().row_hits, 3u);
  CHECK_EQ(c.run(c.submit(0, 0, 0)), 130.0);
  CHECK_EQ(c.at(DramCommand::pre, 0, 1), 83.0);
  CHECK_EQ(c.ctl.stats().row_conflicts, 2u);
  CHECK_EQ(c.ctl.stats().activates, 3u);
}

// The command timing sums are checked: a request arriving 5 ns before the end of SystemC's time
// range (2^64 ps) activates there, and its tRCD passes the range: the controller stops with an
// error naming the figure (before, the sums wrapped past 0 and the request completed at an
// early time that looked valid).
TEST_CASE(command_timing_past_the_time_range_stops_with_an_error) {
  Ctl c(config());
  c.ctl.submit(~Ticks{0} - ns(5), 0, 7, 1, 32, false, 0);
  CHECK(check::stops_past_time_range([&] { c.ctl.drain(); }));
  CHECK(tlm_models::time_range_exceeded());
}

// A timing parameter of 10^7 s (1e19 ps, within the range): later commands land past 2^64 ps.
// Before, the sums wrapped (here: no error; a FlashAttention-2 run at bank level with
// `--set hbm.t_rcd=10000000s` hung in the search for a free slot between other commands); now
// the run stops with the error.
TEST_CASE(a_timing_parameter_near_the_time_range_stops_instead_of_hanging) {
  DramController::Config cfg = config();
  cfg.timing.rcd = Ticks{10'000'000} * 1'000'000'000'000;
  Ctl c(cfg);
  c.submit(0, 0, 1);
  c.submit(0, 1, 1);
  c.submit(0, 0, 2);
  CHECK(check::stops_past_time_range([&] { c.ctl.drain(); }));
}

// The tFAW search scans the zones the list's runs of four ACTs forbid (dram_time_list.h); here
// against the definition on small random lists: the earliest t >= from at which, with t
// added, every five consecutive times that hold t span at least the window.
TEST_CASE(the_four_activate_window_search_matches_its_definition) {
  std::mt19937 rng(7);
  const Ticks window = 30;
  for (int round = 0; round < 300; ++round) {
    tlm_models::DramTimeList list;
    std::vector<Ticks> times;
    const int n = static_cast<int>(rng() % 12);
    for (int i = 0; i < n; ++i) {
      const Ticks t = rng() % 120;
      times.push_back(t);
      list.insert(t);  // out of order: the insert's search places it
    }
    std::sort(times.begin(), times.end());
    // (The random list itself may break the window: only runs that hold t count.)
    auto fits = [&](Ticks t) {
      std::vector<Ticks> all = times;
      const auto pos = all.insert(std::upper_bound(all.begin(), all.end(), t), t);
      const std::ptrdiff_t at = pos - all.begin();
      for (std::ptrdiff_t i = std::max<std::ptrdiff_t>(0, at - 4);
           i <= at && i + 4 < static_cast<std::ptrdiff_t>(all.size()); ++i)
        if (all[static_cast<std::size_t>(i + 4)] - all[static_cast<std::size_t>(i)] < window)
          return false;
      return true;
    };
    const Ticks from = rng() % 140;
    Ticks expected = from;
    while (!fits(expected)) ++expected;
    CHECK_EQ(list.clear_of_windows(from, 4, window), expected);
  }
}

// The controller re-times a waiting bank's choice by resuming the search from the time found
// before (DramController::time_choice): issued commands only add constraints, so no earlier
// time can have become allowed. Random commands on a checker with every constraint and a
// command bus: a search resumed from its last result always gives what a search from the
// request's start gives, and the probes do move (else nothing was checked).
TEST_CASE(a_search_resumed_from_its_last_result_finds_the_same_time) {
  DramController::Config cfg = config();
  cfg.timing.ck = ns(1);
  cfg.timing.act_cycles = 2;
  tlm_models::DramTimingChecker checker(cfg.timing, cfg.banks, cfg.bank_groups);
  struct Probe {
    DramCommand c;
    unsigned group;
    Ticks from, at;
  };
  std::vector<Probe> probes;
  std::mt19937 rng(11);
  const DramCommand kinds[] = {DramCommand::act, DramCommand::pre, DramCommand::rd,
                               DramCommand::wr};
  Ticks latest = 0;
  unsigned moved = 0;
  for (int i = 0; i < 4000; ++i) {
    const DramCommand c = kinds[rng() % 4];
    const unsigned bank = rng() % cfg.banks, group = bank % cfg.bank_groups;
    const Ticks from = latest > ns(60) ? latest - ns(60) + rng() % ns(80) : rng() % ns(80);
    if (rng() % 3 == 0) {
      probes.push_back(Probe{c, group, from, checker.earliest_among_banks(c, group, from)});
    } else {
      const Ticks at = checker.earliest(c, bank, group, from);
      checker.issue(c, bank, group, at);
      latest = std::max(latest, at);
    }
    for (Probe& p : probes) {
      const Ticks resumed = checker.earliest_among_banks(p.c, p.group, p.at);
      CHECK_EQ(resumed, checker.earliest_among_banks(p.c, p.group, p.from));
      moved += resumed != p.at;
      p.at = resumed;
    }
    if (probes.size() > 8) probes.erase(probes.begin());
  }
  CHECK(moved > 100);
}

CHECK_MAIN
