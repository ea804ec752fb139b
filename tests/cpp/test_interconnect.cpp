// Interconnect: routing with address translation, link width and hop latency, output-port
// contention, error responses, debug transport, DMI and invalidation translation, statistics.
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "check.h"
#include "protocol_checks.h"
#include "tlm_models/hbm.h"
#include "tlm_models/interconnect.h"
#include "tlm_models/sram.h"

using namespace sc_core;
using tlm_models::HbmMemory;
using tlm_models::Interconnect;
using tlm_models::Sram;

namespace {

constexpr std::uint64_t kHbmBase = 0x2000'0000;
constexpr std::uint64_t kHbmSize = 1 << 20;
constexpr std::uint64_t kSramBase = 0x1'0000'0000;
constexpr std::uint64_t kSramSize = 512 * 1024;

// Two initiators -> noc -> {HBM with storage at kHbmBase, wide SRAM at kSramBase}.
struct Platform {
  Interconnect noc;
  HbmMemory hbm;
  Sram sram;
  check::TestInitiator i0, i1;

  static HbmMemory::Params hbm_params() {
    HbmMemory::Params p;
    p.size = kHbmSize;
    p.storage = true;
    return p;
  }
  static Sram::Params sram_params() {
    Sram::Params p;
    p.port_width = 4096;
    p.ports = 4;
    return p;
  }

  Platform(std::function<void(check::TestInitiator&)> b0,
           std::function<void(check::TestInitiator&)> b1 = [](check::TestInitiator&) {})
      : noc("noc", Interconnect::Params{}), hbm("hbm", hbm_params()), sram("sram", sram_params()),
        i0("i0", std::move(b0)), i1("i1", std::move(b1)) {
    i0.socket.bind(noc.in);
    i1.socket.bind(noc.in);
    noc.out.bind(hbm.target);
    noc.out.bind(sram.target);
    noc.add_route(kHbmBase, kHbmSize, 0);
    noc.add_route(kSramBase, kSramSize, 1);
  }
  void run() {
    sc_start();
    CHECK(i0.finished() && i1.finished());
  }
  tlm_models::StatsGroup stats() const {
    tlm_models::StatsGroup g("noc");
    noc.collect_stats(g);
    return g;
  }
};

std::vector<std::unique_ptr<sc_module>> modules;  // built inside a test case, alive until exit

double value(const tlm_models::StatsGroup& g, const std::string& name) {
  const tlm_models::Stat* s = g.find(name);
  CHECK(s != nullptr);
  return s ? s->value : -1.0;
}

}  // namespace

TEST_CASE(hop_latency_each_way_around_the_target) {
  Platform p([](check::TestInitiator& ini) {
    // 64 B: one link cycle (1 ns). HBM sees it at 1 ns: 1 + 8 + 100 = 109 ns; back: + 1 ns.
    CHECK_EQ(ini.read_delay(kHbmBase, 64), sc_time(110, SC_NS));
  });
  p.run();
}

TEST_CASE(link_width_limits_throughput_per_output) {
  Platform p([](check::TestInitiator& ini) {
    // 1024 B over a 64 B/cycle link: 16 ns, longer than the SRAM's 1 cycle + 1 ns.
    CHECK_EQ(ini.read_delay(kSramBase, 1024), sc_time(0 + 1 + 16 + 1, SC_NS));
    // Same output: granted at 16 ns.
    CHECK_EQ(ini.read_delay(kSramBase + 4096, 1024), sc_time(16 + 1 + 16 + 1, SC_NS));
    // Another output does not wait for that link.
    CHECK_EQ(ini.read_delay(kHbmBase, 64), sc_time(110, SC_NS));
  });
  p.run();
  auto g = p.stats();
  CHECK_EQ(value(g.child("out1"), "busy_time"), 32.0);
  CHECK_EQ(value(g.child("out1"), "wait_time"), 16.0);
  CHECK_EQ(value(g.child("out1"), "bytes"), 2048.0);
  CHECK_EQ(value(g.child("out0"), "requests"), 1.0);
  CHECK_EQ(value(g.child("in0"), "requests"), 3.0);
  CHECK_EQ(value(g.child("in0"), "bytes"), 2112.0);
  CHECK_EQ(value(g.child("in1"), "requests"), 0.0);
  CHECK_EQ(value(g, "byte_hops"), 2112.0);  // every forwarded byte crosses one link
}

TEST_CASE(inputs_contend_only_on_a_shared_output) {
  sc_time a, b;
  Platform p([&](check::TestInitiator& ini) { a = ini.read_delay(kSramBase, 640); },
             [&](check::TestInitiator& ini) {
               wait(SC_ZERO_TIME);
               b = ini.read_delay(kSramBase + 8192, 640);
             });
  p.run();
  CHECK_EQ(a, sc_time(1 + 10 + 1, SC_NS));
  CHECK_EQ(b, sc_time(10 + 1 + 10 + 1, SC_NS));
}

TEST_CASE(targets_see_offsets_from_the_route_base) {
  Interconnect noc("noc", Interconnect::Params{});
  check::RecordingTarget t0("t0"), t1("t1");
  check::TestInitiator ini("ini", [](check::TestInitiator& i) {
    unsigned char buf[8];
    i.read(0x1000, buf, 8);
    i.read(0x1fff - 7, buf, 8);
    i.write(0x8000'0040, buf, 8);
    CHECK_EQ(i.read(0x2000, buf, 8).status, tlm::TLM_ADDRESS_ERROR_RESPONSE);  // past the end
    CHECK_EQ(i.read(0x1ffc, buf, 8).status, tlm::TLM_ADDRESS_ERROR_RESPONSE);  // straddles it
    CHECK_EQ(i.read(0x0, buf, 8).status, tlm::TLM_ADDRESS_ERROR_RESPONSE);     // below all routes
    // The link is busy until 2 ns, so this waits: grant 2, target at 3 answers 10 ns later.
    CHECK_EQ(i.read_delay(0x1000, 8), sc_time(2 + 1 + 10 + 1, SC_NS));
    // An idle link: the target sees it one hop after arrival.
    CHECK_EQ(i.read_delay(0x1000, 8, sc_time(100, SC_NS)), sc_time(100 + 1 + 10 + 1, SC_NS));
    // Debug transport is translated and clipped at the route's end.
    CHECK_EQ(i.debug(tlm::TLM_READ_COMMAND, 0x1ff0, buf, 8), 8u);
    CHECK_EQ(i.debug(tlm::TLM_READ_COMMAND, 0x1ffc, buf, 8), 4u);
    CHECK_EQ(i.debug(tlm::TLM_READ_COMMAND, 0x3000, buf, 8), 0u);
  });
  ini.socket.bind(noc.in);
  noc.out.bind(t0.target);
  noc.out.bind(t1.target);
  noc.add_route(0x8000'0000, 0x1000, 1);
  noc.add_route(0x1000, 0x1000, 0);
  sc_start();
  CHECK(ini.finished());
  std::vector<std::uint64_t> seen0 = {0x0, 0xff8, 0x0, 0x0, 0xff0, 0xffc};
  CHECK(t0.addresses == seen0);
  std::vector<unsigned> dbg_lengths = {8, 4};
  CHECK(t0.debug_lengths == dbg_lengths);
  CHECK(t1.addresses == std::vector<std::uint64_t>{0x40});
  tlm_models::StatsGroup g("noc");
  noc.collect_stats(g);
  CHECK_EQ(value(g, "unmapped"), 3.0);
}

TEST_CASE(overlapping_routes_are_rejected_by_name) {
  Interconnect noc("noc", Interconnect::Params{});
  noc.add_route(0x1000, 0x1000, 0);
  std::string msg;
  try {
    noc.add_route(0x1800, 0x1000, 1);
  } catch (const sc_report& r) {
    msg = r.get_msg();
  }
  CHECK(msg.find("[0x1800, 0x2800) -> out[1]") != std::string::npos);
  CHECK(msg.find("[0x1000, 0x2000) -> out[0]") != std::string::npos);
  noc.add_route(0x2000, 0x10, 1);  // adjacent is fine
  noc.add_route(0x0, 0x1000, 2);
  CHECK_EQ(noc.routes().size(), 3u);
  CHECK_EQ(noc.routes()[0].base, 0u);
  bool thrown = false;
  try {
    noc.add_route(0x100, 0, 0);
  } catch (const sc_report&) {
    thrown = true;
  }
  CHECK(thrown);
}

TEST_CASE(base_protocol_through_the_interconnect) {
  Platform p([](check::TestInitiator& ini) {
    check::check_base_protocol(ini, {kSramBase + kSramSize, kSramBase + 256, true});
    check::check_base_protocol(ini, {kHbmBase + kHbmSize, kHbmBase + 70000, true});
  });
  p.run();
}

TEST_CASE(dmi_ranges_are_translated_and_clipped) {
  Interconnect noc("noc", Interconnect::Params{});
  HbmMemory hbm("hbm", Platform::hbm_params());
  Sram sram("sram", Sram::Params{});
  check::TestInitiator ini("ini", [&](check::TestInitiator& i) {
    tlm::tlm_dmi dmi;
    CHECK(i.dmi(kHbmBase + 70000, tlm::TLM_READ_COMMAND, dmi));
    CHECK_EQ(dmi.get_start_address(), kHbmBase + 65536);
    CHECK_EQ(dmi.get_end_address(), kHbmBase + 131071);
    CHECK_EQ(dmi.get_read_latency(), sc_time(102, SC_NS));
    unsigned char* ptr = dmi.get_dmi_ptr() + (70000 - 65536);
    *ptr = 77;
    unsigned char v = 0;
    i.debug(tlm::TLM_READ_COMMAND, kHbmBase + 70000, &v, 1);
    CHECK_EQ(int(v), 77);
    // The SRAM is reachable only through a 4 KiB window: its whole-capacity grant is clipped.
    CHECK(i.dmi(kSramBase + 16, tlm::TLM_WRITE_COMMAND, dmi));
    CHECK_EQ(dmi.get_start_address(), kSramBase);
    CHECK_EQ(dmi.get_end_address(), kSramBase + 4095);
    // Unmapped: denied over the whole gap between routes.
    CHECK(!i.dmi(0x5000'0000, tlm::TLM_READ_COMMAND, dmi));
    CHECK_EQ(dmi.get_start_address(), kHbmBase + kHbmSize);
    CHECK_EQ(dmi.get_end_address(), kSramBase - 1);
    // Invalidation from the HBM reaches every initiator in the initiators' addresses.
    hbm.clear_storage();
    CHECK_EQ(i.invalidations.size(), 1u);
    CHECK_EQ(i.invalidations[0].first, kHbmBase);
    CHECK_EQ(i.invalidations[0].second, kHbmBase + kHbmSize - 1);
  });
  ini.socket.bind(noc.in);
  noc.out.bind(hbm.target);
  noc.out.bind(sram.target);
  noc.add_route(kHbmBase, kHbmSize, 0);
  noc.add_route(kSramBase, 4096, 1);
  sc_start();
  CHECK(ini.finished());
}

TEST_CASE(route_to_an_unbound_output_is_an_error) {
  Interconnect noc("noc", Interconnect::Params{});
  check::RecordingTarget t0("t0");
  check::TestInitiator ini("ini", [](check::TestInitiator&) {});
  ini.socket.bind(noc.in);
  noc.out.bind(t0.target);
  noc.add_route(0, 0x1000, 3);
  bool thrown = false;
  try {
    sc_start();
  } catch (const sc_report& r) {
    thrown = std::string(r.get_msg()).find("output 3") != std::string::npos;
  }
  CHECK(thrown);
}

TEST_CASE(invalid_params_are_named) {
  Interconnect::Params p;
  CHECK(p.check().empty());
  p.width = 0;
  CHECK(p.check().find("width") != std::string::npos);
}

// Tick sums are checked (time_ticks.h): a request whose link grant + hop would pass 2^64 ps
// stops with an error naming the figure instead of wrapping to an early time that looks valid
// (before, it wrapped past 0). Behind the interconnect a target that adds its 10 ns
// unchecked, so the interconnect's own sum is the one that must catch it; crossbar and mesh.
TEST_CASE(tick_sums_past_the_time_range_stop_with_an_error) {
  for (const char* topology : {"crossbar", "mesh"}) {
    Interconnect::Params p;
    p.topology = topology;
    auto noc = std::make_unique<Interconnect>(sc_gen_unique_name("noc"), p);
    auto target = std::make_unique<check::RecordingTarget>(sc_gen_unique_name("target"));
    auto ini = std::make_unique<check::TestInitiator>(
        sc_gen_unique_name("ini"), [](check::TestInitiator& i) {
          unsigned char buf[64] = {};
          // Arrives 1 ps before the end of the range; grant + 1 ns hop passes it.
          CHECK(check::stops_past_time_range(
              [&] { i.read(0x100, buf, 64, sc_time::from_value(~std::uint64_t{0} - 1)); }));
        });
    ini->socket.bind(noc->in);
    noc->out.bind(target->target);
    noc->add_route(0, 0x1000, 0);
    modules.push_back(std::move(noc));
    modules.push_back(std::move(target));
    modules.push_back(std::move(ini));
  }
  sc_start();
  CHECK(tlm_models::time_range_exceeded());
}

CHECK_MAIN
