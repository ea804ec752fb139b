// StlPlayer against HbmMemory (defaults: 16 channels x 8 GB/s, latency 100 ns, interleave 256 B):
// absolute and relative issue times, per-request latency, statistics, error responses.
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

CHECK_MAIN
