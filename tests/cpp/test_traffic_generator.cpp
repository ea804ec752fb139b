// TrafficGenerator: the outstanding-request formula against HbmMemory, address patterns,
// statistics and error counting.
#include <set>
#include <string>
#include <vector>

#include "check.h"
#include "protocol_checks.h"
#include "tlm_models/hbm.h"
#include "tlm_models/traffic_generator.h"

using namespace sc_core;
using tlm_models::HbmMemory;
using tlm_models::TrafficGenerator;

namespace {

using check::RecordingTarget;

HbmMemory::Params one_channel() {
  HbmMemory::Params p;
  p.channels = 1;
  p.size = 16 << 20;
  return p;
}

sc_time run_against_one_channel(unsigned max_outstanding) {
  TrafficGenerator::Params g;
  g.requests = 1024;
  g.request_size = 64;
  g.max_outstanding = max_outstanding;
  TrafficGenerator gen("gen", g);
  HbmMemory mem("hbm", one_channel());
  gen.socket.bind(mem.target);
  sc_start();
  CHECK(gen.done());
  CHECK_EQ(gen.completed(), 1024u);
  CHECK_EQ(gen.bytes(), 1024u * 64u);
  CHECK_EQ(sc_time_stamp(), gen.last_completion());
  return gen.last_completion();
}

}  // namespace

TEST_CASE(enough_outstanding_requests_reach_channel_bandwidth) {
  // latency + requests * request_size / bandwidth = 100 ns + 65536 B / 8 GB/s
  CHECK_EQ(run_against_one_channel(1024), sc_time(100 + 8192, SC_NS));
}

TEST_CASE(sixteen_outstanding_cover_the_latency) {
  // 16 x 8 ns of transfer exceed the 108 ns round trip, so the channel never idles.
  CHECK_EQ(run_against_one_channel(16), sc_time(100 + 8192, SC_NS));
}

TEST_CASE(four_outstanding_are_latency_bound) {
  // Groups of four issue every 108 ns round trip: completion(i) = 108 (i/4 + 1) + 8 (i%4) ns.
  CHECK_EQ(run_against_one_channel(4), sc_time(108 * 256 + 24, SC_NS));
}

TEST_CASE(one_outstanding_serialises_round_trips) {
  CHECK_EQ(run_against_one_channel(1), sc_time(1024 * 108, SC_NS));
}

TEST_CASE(statistics_report_bandwidth_and_latency) {
  TrafficGenerator::Params g;
  g.requests = 1024;
  g.max_outstanding = 1024;
  TrafficGenerator gen("gen", g);
  HbmMemory mem("hbm", one_channel());
  gen.socket.bind(mem.target);
  sc_start();
  tlm_models::StatsGroup s("gen");
  gen.collect_stats(s);
  CHECK_EQ(s.find("bytes")->value, 65536.0);
  CHECK_EQ(s.find("last_completion")->value, 8292.0);
  CHECK_EQ(s.find("first_issue")->value, 0.0);
  CHECK_EQ(s.find("achieved_bandwidth")->value, 65536.0 / 8292e-9);
  // Request i completes at 100 + 8 (i + 1) ns, all issued at 0: mean = 100 + 8 * 512.5.
  CHECK_EQ(s.find("latency_mean")->value, 100.0 + 8 * 512.5);
  CHECK_EQ(s.find("latency_max")->value, 8292.0);
  CHECK_EQ(s.find("errors")->value, 0.0);
}

TEST_CASE(sequential_pattern_wraps_within_range_and_writes) {
  TrafficGenerator::Params g;
  g.requests = 6;
  g.request_size = 128;
  g.base = 0x1000;
  g.range = 512;
  g.command = "write";
  g.max_outstanding = 2;
  TrafficGenerator gen("gen", g);
  RecordingTarget tgt("tgt");
  gen.socket.bind(tgt.target);
  sc_start();
  std::vector<std::uint64_t> expected = {0x1000, 0x1080, 0x1100, 0x1180, 0x1000, 0x1080};
  CHECK(tgt.addresses == expected);
  for (auto c : tgt.commands) CHECK_EQ(c, tlm::TLM_WRITE_COMMAND);
  // Two in flight, 10 ns each: pairs issue at 0, 10, 20 ns.
  std::vector<sc_time> arrivals = {SC_ZERO_TIME, SC_ZERO_TIME, sc_time(10, SC_NS),
                                   sc_time(10, SC_NS), sc_time(20, SC_NS), sc_time(20, SC_NS)};
  CHECK(tgt.arrivals == arrivals);
  CHECK_EQ(gen.last_completion(), sc_time(30, SC_NS));
}

TEST_CASE(random_pattern_is_aligned_seeded_and_deterministic) {
  TrafficGenerator::Params g;
  g.requests = 500;
  g.request_size = 64;
  g.base = 1 << 20;
  g.range = 64 * 1000;
  g.pattern = "random";
  g.seed = 7;
  g.max_outstanding = 8;
  TrafficGenerator gen("gen", g);
  RecordingTarget tgt("tgt");
  gen.socket.bind(tgt.target);
  sc_start();
  CHECK_EQ(tgt.addresses.size(), 500u);
  std::set<std::uint64_t> distinct;
  for (auto a : tgt.addresses) {
    CHECK(a >= g.base && a + 64 <= g.base + g.range);
    CHECK_EQ(a % 64, 0u);
    distinct.insert(a);
  }
  CHECK(distinct.size() > 300);  // 500 draws from 1000 slots: ~393 distinct expected
  std::mt19937_64 rng(7);
  for (std::size_t i = 0; i < 500; ++i) CHECK_EQ(gen.address_of(i, rng), tgt.addresses[i]);
  std::mt19937_64 other(8);
  bool differs = false;
  for (std::size_t i = 0; i < 500; ++i) differs |= gen.address_of(i, other) != tgt.addresses[i];
  CHECK(differs);
}

TEST_CASE(error_responses_are_counted_not_timed) {
  TrafficGenerator::Params g;
  g.requests = 10;
  g.range = 32 << 20;  // the second half lies beyond the 16 MiB memory
  g.request_size = 4 << 20;
  g.max_outstanding = 10;
  TrafficGenerator gen("gen", g);
  HbmMemory mem("hbm", one_channel());
  gen.socket.bind(mem.target);
  sc_start();
  CHECK_EQ(gen.completed(), 10u);
  // Eight 4 MiB slots: requests 4..7 fall beyond the memory, 8 and 9 wrap to slots 0 and 1.
  CHECK_EQ(gen.errors(), 4u);
  CHECK_EQ(gen.bytes(), 6u * (4u << 20));
}

TEST_CASE(invalid_params_are_named) {
  TrafficGenerator::Params g;
  CHECK(g.check().empty());
  g.pattern = "strided";
  CHECK(g.check().find("pattern") != std::string::npos);
  g = TrafficGenerator::Params{};
  g.range = 32;
  CHECK(g.check().find("range") != std::string::npos);
  g = TrafficGenerator::Params{};
  g.max_outstanding = 0;
  CHECK(!g.check().empty());
  sc_report_handler::set_actions(SC_FATAL, SC_DISPLAY | SC_THROW);
  bool thrown = false;
  try {
    TrafficGenerator bad("bad", g);
  } catch (const sc_report&) {
    thrown = true;
  }
  CHECK(thrown);
}

// A memory whose b_transport waits (bank level, request_mode queued) returns at the completion
// with a zero delay: the generator's one thread then has one request in flight. One channel,
// rows filling bank 0 first, latency 0, no refresh: the first 32 B read opens the row (ACT 0,
// RD 14, data to 32 ns), the second is issued at 32 and hits (RD 32, data to 50).
TEST_CASE(a_memory_that_waits_in_b_transport_is_timed_from_its_return) {
  TrafficGenerator::Params g;
  g.requests = 2;
  g.request_size = 32;
  g.max_outstanding = 4;
  TrafficGenerator gen("gen", g);
  HbmMemory::Params hp = one_channel();
  hp.fidelity = "bank";
  hp.pseudo_channels = 1;
  hp.latency = SC_ZERO_TIME;
  hp.t_refi = SC_ZERO_TIME;
  hp.address_mapping = "row:12 bank:2 bankgroup:2 column:10";
  hp.request_mode = "queued";
  HbmMemory mem("hbm", hp);
  gen.socket.bind(mem.target);
  sc_start();
  CHECK_EQ(gen.completed(), 2u);
  CHECK_EQ(gen.last_completion(), sc_time(50, SC_NS));
  CHECK_EQ(mem.controller(0).stats().row_hits, 1u);
}

CHECK_MAIN
