// FedTrafficGenerator: requests fed in chunks by a host callback, the outstanding-request
// formula against one HBM channel, results written back, a failing host, error responses.
#include <cstdint>
#include <vector>

#include "check.h"
#include "tlm_models/fed_traffic_generator.h"
#include "tlm_models/hbm.h"

using namespace sc_core;
using tlm_models::FedRequest;
using tlm_models::FedTrafficGenerator;
using tlm_models::HbmMemory;

namespace {

HbmMemory::Params one_channel() {
  HbmMemory::Params p;
  p.channels = 1;
  p.size = 16 << 20;
  return p;
}

std::vector<FedRequest> reads(unsigned count, std::uint64_t first, std::uint32_t length) {
  std::vector<FedRequest> out(count, FedRequest{});
  for (unsigned i = 0; i < count; ++i) {
    out[i].address = first + i * length;
    out[i].length = length;
  }
  return out;
}

// A host that feeds `chunks` one after the other, then ends the stream (or fails: -1).
struct Host {
  FedTrafficGenerator& gen;
  std::vector<std::vector<FedRequest>>& chunks;
  int at_end = 0;
  std::size_t next = 0;
  int operator()() {
    if (next == chunks.size()) return at_end;
    auto& c = chunks[next++];
    gen.feed(reinterpret_cast<std::uintptr_t>(c.data()), c.size());
    return 1;
  }
};

}  // namespace

TEST_CASE(four_outstanding_over_two_chunks) {
  FedTrafficGenerator::Params g;
  g.max_outstanding = 4;
  FedTrafficGenerator gen("gen", g);
  HbmMemory mem("hbm", one_channel());
  gen.socket.bind(mem.target);
  std::vector<std::vector<FedRequest>> chunks{reads(8, 0, 64), reads(8, 512, 64)};
  gen.set_refill(Host{gen, chunks});
  sc_start();
  CHECK(gen.done());
  CHECK(!gen.failed());
  CHECK_EQ(gen.requests(), 16u);
  CHECK_EQ(gen.chunks(), 2u);
  CHECK_EQ(gen.bytes_read(), 16u * 64u);
  // Groups of four issue every 108 ns round trip (100 ns + 64 B / 8 GB/s), as TrafficGenerator:
  // completion(i) = 108 (i / 4 + 1) + 8 (i % 4) ns, written back into each record.
  for (unsigned i = 0; i < 16; ++i) {
    const FedRequest& r = chunks[i / 8][i % 8];
    CHECK_EQ(r.done_ps, std::uint64_t{(108 * (i / 4 + 1) + 8 * (i % 4)) * 1000});
    CHECK_EQ(r.status, static_cast<std::int32_t>(tlm::TLM_OK_RESPONSE));
  }
  CHECK_EQ(sc_time_stamp(), sc_time(108 * 4 + 24, SC_NS));
}

TEST_CASE(issue_times_hold_requests_back) {
  FedTrafficGenerator gen("gen", FedTrafficGenerator::Params{});
  HbmMemory mem("hbm", one_channel());
  gen.socket.bind(mem.target);
  std::vector<std::vector<FedRequest>> chunks{reads(2, 0, 64)};
  chunks[0][0].issue_ps = 1'000'000;  // 1 us
  chunks[0][1].write = 1;
  gen.set_refill(Host{gen, chunks});
  sc_start();
  tlm_models::StatsGroup s("gen");
  gen.collect_stats(s);
  CHECK_EQ(s.find("first_issue")->value, 1000.0);
  CHECK_EQ(s.find("last_completion")->value, 1000.0 + 2 * 108);
  CHECK_EQ(s.find("reads")->value, 1.0);
  CHECK_EQ(s.find("writes")->value, 1.0);
  CHECK_EQ(s.find("bytes_written")->value, 64.0);
}

TEST_CASE(a_failing_host_stops_the_simulation) {
  FedTrafficGenerator gen("gen", FedTrafficGenerator::Params{});
  HbmMemory mem("hbm", one_channel());
  gen.socket.bind(mem.target);
  std::vector<std::vector<FedRequest>> chunks{reads(3, 0, 64)};
  Host host{gen, chunks};
  host.at_end = -1;
  gen.set_refill(host);
  sc_start();
  CHECK(gen.failed());
  CHECK(!gen.done());
  CHECK_EQ(gen.requests(), 3u);
  CHECK_EQ(sc_get_status(), SC_STOPPED);
}

TEST_CASE(error_responses_are_counted_and_written_back) {
  FedTrafficGenerator gen("gen", FedTrafficGenerator::Params{});
  HbmMemory mem("hbm", one_channel());
  gen.socket.bind(mem.target);
  std::vector<std::vector<FedRequest>> chunks{reads(1, 16 << 20, 64)};  // past the memory
  gen.set_refill(Host{gen, chunks});
  sc_start();
  CHECK_EQ(gen.errors(), 1u);
  CHECK_EQ(gen.bytes_read(), 0u);
  CHECK_EQ(chunks[0][0].status, static_cast<std::int32_t>(tlm::TLM_ADDRESS_ERROR_RESPONSE));
}

CHECK_MAIN
