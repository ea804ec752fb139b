// The direct path of timing-only accesses (timed_path.h): the same accesses booked through the
// sockets and through the path give the same completion times and the same statistics of
// every component, a component in between that must see the transactions (a protocol checker)
// keeps the sockets, and the probe is answered only where the path holds.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>

#include "check.h"
#include "tlm_models/block_access.h"
#include "tlm_models/interconnect.h"
#include "tlm_models/operand_port.h"
#include "tlm_models/protocol_checker.h"
#include "tlm_models/sram.h"
#include "tlm_models/timed_path.h"

using namespace sc_core;
using tlm_models::BlockAccess;
using tlm_models::Interconnect;
using tlm_models::Sram;
using tlm_models::Ticks;

namespace {

constexpr std::uint64_t kSramBase = 0x1'0000'0000;
constexpr std::uint64_t kSramSize = 64 * 1024;
constexpr std::uint64_t kBufBase = 0x1'0010'0000;
constexpr std::uint64_t kBufSize = 256;
constexpr std::uint64_t kAliasBase = 0x1'0020'0000;  // a second window onto the buffer

// Issues a fixed pseudo-random mix of timing-only reads and writes, some annotated into the
// future and out of order, to two SRAMs behind an interconnect; records every completion time.
// With `operands`, the accesses go through an engine's OperandPort in groups at one start time
// (an operation's operand reads and result write), as the compute engines issue them.
struct Driver : sc_module {
  tlm_utils::simple_initiator_socket<Driver> socket;
  BlockAccess access;
  tlm_models::OperandPort port;
  bool operands;
  std::vector<Ticks> done;
  std::uint64_t seed;

  Driver(sc_module_name name, std::uint64_t s, bool through_port)
      : sc_module(name), socket("socket"), access(socket, "driver", /*timing_only=*/true),
        port(socket, "driver.port", /*elem_bytes=*/1, /*enabled=*/true), operands(through_port), seed(s) {
    SC_THREAD(run);
  }
  SC_HAS_PROCESS(Driver);

  std::uint64_t next() {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return seed >> 33;
  }

  void run() {
    std::vector<unsigned char> buf(kSramSize);
    for (int i = 0; i < 3000; ++i) {
      const bool to_buf = next() % 5 == 0;
      // Three ranges: the initiator's two cached paths (block_access.h) are replaced now and then.
      const bool to_alias = to_buf && next() % 2 == 0;
      const std::uint64_t size = to_buf ? kBufSize : kSramSize;
      const auto bytes = static_cast<std::uint32_t>(1 + next() % (to_buf ? kBufSize : 9000));
      const std::uint64_t offset = next() % (size - bytes + 1);
      const Ticks at = tlm_models::now_ticks() + (next() % 4) * 700'000;  // 0-2.1 ns ahead
      const std::uint64_t address = (to_alias ? kAliasBase : to_buf ? kBufBase : kSramBase) + offset;
      if (operands) {
        if (i % 3 == 0) port.begin(at);  // groups of three accesses at one start
        if (next() % 3 == 0)
          port.write(address, bytes);
        else
          port.read(address, bytes);
        done.push_back(port.completion());
        done.push_back(port.read_completion());
      } else {
        done.push_back(next() % 3 == 0 ? access.write(address, buf.data(), bytes, at)
                                       : access.read(address, buf.data(), bytes, at));
      }
      if (next() % 4 == 0 && (!operands || i % 3 == 2))  // an operation's accesses without waiting
        wait(sc_time(static_cast<double>(next() % 3000), SC_PS));
    }
  }
};

// Driver -> [checker ->] noc -> {sram, buf}.
struct Platform {
  Driver driver;
  std::unique_ptr<tlm_models::ProtocolChecker> checker;
  Interconnect noc;
  Sram sram, buf;

  static Interconnect::Params noc_params(const std::string& topology) {
    Interconnect::Params p;
    p.width = 256;
    p.topology = topology;
    p.mesh_columns = 2;
    return p;
  }
  static Sram::Params sram_params(std::uint64_t capacity, unsigned banks, std::uint64_t width) {
    Sram::Params p;
    p.capacity = capacity;
    p.banks = banks;
    p.ports = 2;
    p.port_width = width;
    p.storage = false;
    return p;
  }

  Platform(const std::string& prefix, bool with_checker, const std::string& topology, bool operands = false)
      : driver((prefix + "_driver").c_str(), 12345, operands),
        noc((prefix + "_noc").c_str(), noc_params(topology)),
        sram((prefix + "_sram").c_str(), sram_params(kSramSize, 16, 4096)),
        buf((prefix + "_buf").c_str(), sram_params(kBufSize, 1, 256)) {
    if (with_checker) {
      checker = std::make_unique<tlm_models::ProtocolChecker>((prefix + "_checker").c_str());
      driver.socket.bind(checker->in);
      checker->out.bind(noc.in);
    } else {
      driver.socket.bind(noc.in);
    }
    noc.out.bind(sram.target);
    noc.out.bind(buf.target);
    noc.add_route(kSramBase, kSramSize, 0);
    noc.add_route(kBufBase, kBufSize, 1);
    noc.add_route(kAliasBase, kBufSize, 1);
  }

  std::string stats() const {
    std::string out;
    for (const tlm_models::StatsProvider* p : {static_cast<const tlm_models::StatsProvider*>(&noc),
                                               static_cast<const tlm_models::StatsProvider*>(&sram),
                                               static_cast<const tlm_models::StatsProvider*>(&buf)}) {
      tlm_models::StatsGroup g("component");
      p->collect_stats(g);
      out += g.to_json() + "\n";
    }
    return out;
  }
};

void same_with_and_without_the_path(const std::string& topology, bool operands = false) {
  Platform direct("direct", false, topology, operands), checked("checked", true, topology, operands);
  sc_start();
  CHECK_EQ(direct.driver.done.size(), operands ? 6000u : 3000u);
  CHECK(direct.driver.done == checked.driver.done);
  CHECK_EQ(direct.stats(), checked.stats());
  // The checker saw every access (nothing bypassed it) and found nothing wrong.
  CHECK_EQ(checked.checker->transactions(), 3000u);
  CHECK_EQ(checked.checker->violations(), 0u);
  // The direct platform took the path, the checked one did not.
  const tlm_models::TimedPathProbe open = tlm_models::ask_timed_path(*direct.driver.socket.operator->(), kSramBase);
  CHECK(open.target == static_cast<tlm_models::TimedTarget*>(&direct.noc));
  CHECK_EQ(open.first, kSramBase);
  CHECK_EQ(open.last, kSramBase + kSramSize - 1);
  const tlm_models::TimedPathProbe shut = tlm_models::ask_timed_path(*checked.driver.socket.operator->(), kSramBase);
  CHECK(shut.target == nullptr);
}

}  // namespace

TEST_CASE(crossbar_books_the_same_through_the_path_and_the_sockets) { same_with_and_without_the_path("crossbar"); }

TEST_CASE(mesh_books_the_same_through_the_path_and_the_sockets) { same_with_and_without_the_path("mesh"); }

// OperandPort takes the path inline (BlockAccess::timed) and the sockets otherwise.
TEST_CASE(operand_port_books_the_same_through_the_path_and_the_sockets) {
  same_with_and_without_the_path("crossbar", /*operands=*/true);
}

// The interconnect's answer names the route its range lies in (timed_access needs no route
// search); a route added while the simulation runs moves the others in its table, and the
// accesses after it find theirs by address. Both give the sockets' times and statistics.
TEST_CASE(a_route_added_later_leaves_the_path_booking_the_same) {
  Platform direct("direct", false, "crossbar"), checked("checked", true, "crossbar");
  sc_start(sc_time(400, SC_NS));  // part of the accesses, every path answered
  CHECK(!direct.driver.done.empty());
  CHECK(direct.driver.done.size() < 3000u);
  for (Platform* p : {&direct, &checked}) p->noc.add_route(0x8000'0000, 4096, 0);  // first in the table
  sc_start();
  CHECK_EQ(direct.driver.done.size(), 3000u);
  CHECK(direct.driver.done == checked.driver.done);
  CHECK_EQ(direct.stats(), checked.stats());
}

TEST_CASE(unmapped_addresses_have_no_path) {
  Platform p("p", false, "crossbar");
  sc_start(SC_ZERO_TIME);
  const tlm_models::TimedPathProbe gap = tlm_models::ask_timed_path(*p.driver.socket.operator->(), 0x1000);
  CHECK(gap.target == nullptr);
  CHECK_EQ(gap.first, 0u);
  CHECK_EQ(gap.last, kSramBase - 1);
}

CHECK_MAIN
