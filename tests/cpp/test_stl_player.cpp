// StlPlayer against HbmMemory (defaults: 16 channels x 8 GB/s, latency 100 ns, interleave 256 B):
// absolute and relative issue times, per-request latency, statistics, error responses.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "check.h"
#include "tlm_models/hbm.h"
#include "tlm_models/stl_player.h"

using namespace sc_core;
using tlm_models::HbmMemory;
using tlm_models::StlPlayer;

namespace {

struct Trace {
  std::vector<std::uint64_t> time_ps, address;
  std::vector<std::uint8_t> is_write;
  std::vector<std::uint32_t> length;

  void add(std::uint64_t t, bool write, std::uint64_t a, std::uint32_t n) {
    time_ps.push_back(t);
    is_write.push_back(write ? 1 : 0);
    address.push_back(a);
    length.push_back(n);
  }
  void feed(StlPlayer& p) const {
    p.feed(time_ps.data(), is_write.data(), address.data(), length.data(), time_ps.size());
  }
};

HbmMemory::Params small_hbm() {
  HbmMemory::Params p;
  p.size = 1 << 20;
  return p;
}

// One HBM2 channel at bank level (the hbm defaults: tRCD = tCL = 14 ns, tRAS 34, tRC 48, tRTP 4,
// tCCD_L 8, bursts of 32 B in 4 ns), no refresh, latency 0, rows filling bank 0 first: address
// row << 14 | column. Queued: b_transport waits in the controller's queue.
HbmMemory::Params queued_channel(const std::string& scheduler, unsigned cap = 16) {
  HbmMemory::Params p;
  p.channels = 1;
  p.pseudo_channels = 1;
  p.size = 1 << 30;
  p.fidelity = "bank";
  p.latency = SC_ZERO_TIME;
  p.t_refi = SC_ZERO_TIME;
  p.address_mapping = "row:15 bank:2 bankgroup:2 column:10";
  p.scheduler = scheduler;
  p.frfcfs_cap = cap;
  p.request_mode = "queued";
  return p;
}

std::vector<std::uint64_t> latencies(const StlPlayer& p) {
  std::vector<std::uint64_t> out(p.completed());
  p.latency_copy(out.data());
  return out;
}

}  // namespace

TEST_CASE(two_reads_to_one_channel_queue) {
  // 0x0 and 0x1000: (0x1000 / 256) % 16 = 0, both on channel 0, both issued at 0.
  // first: transfer 64 B / 8 GB/s = 8 ns, ready 8 + 100 = 108 ns
  // second: channel busy until 8, busy [8, 16], ready 116 ns
  Trace t;
  t.add(0, false, 0x0, 64);
  t.add(0, true, 0x1000, 64);
  StlPlayer::Params pp;
  StlPlayer player("player", pp);
  HbmMemory mem("hbm", small_hbm());
  player.socket.bind(mem.target);
  t.feed(player);
  sc_start();
  CHECK(player.finished());
  CHECK(!player.failed());
  CHECK_EQ(player.completed(), 2u);
  CHECK_EQ(player.reads(), 1u);
  CHECK_EQ(player.writes(), 1u);
  CHECK_EQ(player.bytes_read(), 64u);
  CHECK_EQ(player.bytes_written(), 64u);
  CHECK_EQ(player.last_completion(), sc_time(116, SC_NS));
  CHECK_EQ(sc_time_stamp(), sc_time(116, SC_NS));
  std::vector<std::uint64_t> lat = latencies(player);
  CHECK_EQ(lat.size(), 2u);
  CHECK_EQ(lat[0], 108000u);
  CHECK_EQ(lat[1], 116000u);
  CHECK_EQ(player.latency().max(), 116000u);
  CHECK_EQ(player.latency().mean_ns(), 112.0);
  CHECK_EQ(player.achieved_bandwidth(), 128.0 / 116e-9);
}

TEST_CASE(absolute_times_are_issue_times) {
  // Second request at 500 ns on another channel: ready 500 + 8 + 100 = 608 ns.
  Trace t;
  t.add(0, false, 0x0, 64);
  t.add(500000, false, 0x100, 64);
  StlPlayer player("player", StlPlayer::Params());
  HbmMemory mem("hbm", small_hbm());
  player.socket.bind(mem.target);
  t.feed(player);
  sc_start();
  CHECK_EQ(player.last_completion(), sc_time(608, SC_NS));
  CHECK_EQ(latencies(player)[1], 108000u);
}

TEST_CASE(relative_times_follow_the_previous_completion) {
  // .rstl: first at 20 ns -> done 128 ns; second 10 ns after that -> issued 138, done 246 ns.
  Trace t;
  t.add(20000, false, 0x0, 64);
  t.add(10000, false, 0x0, 64);
  StlPlayer::Params pp;
  pp.relative = true;
  StlPlayer player("player", pp);
  HbmMemory mem("hbm", small_hbm());
  player.socket.bind(mem.target);
  t.feed(player);
  sc_start();
  CHECK_EQ(player.first_issue(), sc_time(20, SC_NS));
  CHECK_EQ(player.last_completion(), sc_time(246, SC_NS));
  CHECK_EQ(latencies(player)[1], 108000u);
}

TEST_CASE(error_response_stops_and_names_the_request) {
  Trace t;
  t.add(0, false, 0x0, 64);
  t.add(0, false, 1 << 20, 64);  // the first byte past the 1 MiB memory
  t.add(0, false, 0x0, 64);
  StlPlayer player("player", StlPlayer::Params());
  HbmMemory mem("hbm", small_hbm());
  player.socket.bind(mem.target);
  t.feed(player);
  sc_start();
  CHECK(player.failed());
  CHECK_EQ(player.completed(), 1u);
  CHECK(player.error().find("request 1: read of 64 B at 0x100000 failed") == 0);
}

TEST_CASE(empty_trace_finishes_at_zero) {
  StlPlayer player("player", StlPlayer::Params());
  HbmMemory mem("hbm", small_hbm());
  player.socket.bind(mem.target);
  sc_start();
  CHECK(player.finished());
  CHECK_EQ(player.completed(), 0u);
  CHECK_EQ(player.achieved_bandwidth(), 0.0);
}

// Row 0 of bank 0 opened by A (ACT 0, RD 14, data to 32). B (row 1, a conflict) arrives at
// 20 ns, but its PRE must wait for tRAS (ACT 0 + 34). C (row 0, a hit) arrives at 25 ns, while
// B still waits, and both are outstanding (three issuing threads).
//   FR-FCFS: C's RD at 25 (tCCD_L after A's RD at 14 allows 22), data to 25 + 14 + 4 = 43;
//            B: PRE at max(34, RD 25 + tRTP 4) = 34, ACT at 34 + tRP 14 = 48 (= ACT 0 + tRC),
//            RD at 62, data to 80.
//   FCFS:    B first (PRE 34, ACT 48, RD 62, data to 80); C then finds row 1 open: PRE at
//            max(ACT 48 + tRAS 34, RD 62 + tRTP 4) = 82, ACT 96, RD 110, data to 128.
struct Played {
  std::vector<std::uint64_t> latency;  // ps, trace order
  tlm_models::DramChannelStats stats;
  sc_time last;
};

// Plays A, B, C (and C2 at 26 ns when `second_hit`) with all of them outstanding.
Played play_hit_and_conflict(const std::string& scheduler, unsigned cap, bool second_hit) {
  Trace t;
  t.add(0, false, 0x0, 32);         // A: row 0
  t.add(20000, false, 0x4000, 32);  // B: row 1
  t.add(25000, false, 0x20, 32);    // C: row 0
  if (second_hit) t.add(26000, false, 0x40, 32);
  StlPlayer::Params pp;
  pp.max_outstanding = 4;
  StlPlayer player("player", pp);
  HbmMemory mem("hbm", queued_channel(scheduler, cap));
  player.socket.bind(mem.target);
  t.feed(player);
  sc_start();
  CHECK(player.finished());
  return Played{latencies(player), mem.controller(0).stats(), player.last_completion()};
}

// A and B end alike under both schedulers; C ends at `c_end` ns.
void check_hit_and_conflict(const Played& r, std::uint64_t c_end, std::uint64_t hits) {
  CHECK_EQ(r.latency[0], 32000u);
  CHECK_EQ(r.latency[1], 80000u - 20000);
  CHECK_EQ(r.latency[2], c_end * 1000 - 25000);
  CHECK_EQ(r.stats.row_hits, hits);
  CHECK_EQ(r.stats.row_conflicts, 2u - hits);
  CHECK_EQ(r.last, sc_time(static_cast<double>(std::max<std::uint64_t>(c_end, 80)), SC_NS));
}

TEST_CASE(queued_frfcfs_serves_a_younger_hit_ahead_of_an_older_conflict) {
  check_hit_and_conflict(play_hit_and_conflict("frfcfs", 16, false), 43, 1);
}

TEST_CASE(queued_fcfs_serves_the_older_conflict_first) {
  check_hit_and_conflict(play_hit_and_conflict("fcfs", 16, false), 128, 0);
}

// The same with a second hit C2 at 26 ns. Cap 16: C2's RD at max(26, C's RD 25 + tCCD_L 8) =
// 33, data to 51; B's PRE moves to RD 33 + tRTP = 37, ACT 51, RD 65, data to 83. Cap 1: C took
// the one bypass, so at 34 B's PRE goes (ACT 48, RD 62, data 80) and C2 becomes a conflict:
// PRE 82, ACT 96, RD 110, data to 128.
TEST_CASE(queued_frfcfs_lets_hits_bypass_up_to_the_cap) {
  Played r = play_hit_and_conflict("frfcfs", 16, true);
  CHECK_EQ(r.latency[2], 43000u - 25000);
  CHECK_EQ(r.latency[3], 51000u - 26000);
  CHECK_EQ(r.latency[1], 83000u - 20000);
  CHECK_EQ(r.stats.row_hits, 2u);
}

TEST_CASE(queued_frfcfs_cap_bounds_the_bypassing_of_an_older_conflict) {
  Played r = play_hit_and_conflict("frfcfs", 1, true);
  CHECK_EQ(r.latency[2], 43000u - 25000);
  CHECK_EQ(r.latency[3], 128000u - 26000);
  CHECK_EQ(r.latency[1], 80000u - 20000);
  CHECK_EQ(r.stats.row_hits, 1u);
  CHECK_EQ(r.stats.row_conflicts, 2u);
}

// With one request outstanding the player waits for each completion: B is issued at A's (32 ns),
// C at B's (80 ns), a conflict then; so a window is what lets the controller reorder.
TEST_CASE(queued_with_one_outstanding_issues_after_each_completion) {
  Trace t;
  t.add(0, false, 0x0, 32);
  t.add(20000, false, 0x4000, 32);
  t.add(25000, false, 0x20, 32);
  StlPlayer player("player", StlPlayer::Params());
  HbmMemory mem("hbm", queued_channel("frfcfs"));
  player.socket.bind(mem.target);
  t.feed(player);
  sc_start();
  std::vector<std::uint64_t> lat = latencies(player);
  // B at 32: PRE 34, ACT 48, RD 62, data to 80. C at 80: PRE at max(48 + 34, 62 + 4) = 82,
  // ACT 96, RD 110, data to 128.
  CHECK_EQ(lat[1], 80000u - 32000);
  CHECK_EQ(lat[2], 128000u - 80000);
  CHECK_EQ(mem.controller(0).stats().row_conflicts, 2u);
}

// A full bank queue holds the issuing thread in b_transport: queue_depth 2, five reads of bank
// 0 row 0 at time 0 with five threads. ACT 0, RDs at 14, 22, 30, 38, 46 (tCCD_L 8); the third
// enters when the first leaves (its RD at 14), the fourth at 22, the fifth at 30.
TEST_CASE(queued_full_bank_queue_backpressures_the_caller) {
  Trace t;
  for (unsigned i = 0; i < 5; ++i) t.add(0, false, 0x20 * i, 32);
  StlPlayer::Params pp;
  pp.max_outstanding = 5;
  StlPlayer player("player", pp);
  HbmMemory::Params hp = queued_channel("frfcfs");
  hp.queue_depth = 2;
  HbmMemory mem("hbm", hp);
  player.socket.bind(mem.target);
  t.feed(player);
  sc_start();
  std::vector<std::uint64_t> lat = latencies(player);
  for (unsigned i = 0; i < 5; ++i) CHECK_EQ(lat[i], (14u + 8 * i + 14 + 4) * 1000);
  const auto& s = mem.controller(0).stats();
  CHECK_EQ(s.backpressured, 3u);
  CHECK_EQ(s.backpressure_time, (14u + 22 + 30) * 1000);
}

TEST_CASE(relative_times_take_one_outstanding_request) {
  StlPlayer::Params pp;
  pp.relative = true;
  pp.max_outstanding = 2;
  CHECK(pp.check().find("absolute times") != std::string::npos);
  HbmMemory::Params hp;
  hp.request_mode = "queued";
  CHECK(hp.check().find("needs fidelity 'bank'") != std::string::npos);
}

CHECK_MAIN
