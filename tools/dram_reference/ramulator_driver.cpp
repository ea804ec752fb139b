// Plays a request trace into Ramulator 2 used as a library (its `External` front end), built
// outside the project tree by build_ramulator.sh against the reference's own headers. Not part
// of the project's build.
//
//   ramulator_driver CONFIG TRACE OUT
// CONFIG: the reference's configuration (JSON, a YAML subset) with an External front end.
// TRACE:  one request a line, "<0 read | 1 write> <hex byte address>", played in order.
// OUT:    one line per request, in trace order: "<accepted tick> <completion tick>": for a read
//         its departure (RD issue + the read latency), for a write the tick its WR issued.
// Requests enter as the reference's trace front ends feed it: the next one is offered once per
// memory tick until the controller accepts it (its read or write buffer has room), in order.
// Prints the tick the last request completed.
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "ramulator/base/config.h"
#include "ramulator/base/factory.h"
#include "ramulator/base/request.h"
#include "ramulator/frontend/i_frontend.h"
#include "ramulator/memory_system/i_memory_system.h"

namespace {

struct Access {
  int type;
  std::int64_t addr;
};

std::vector<Access> read_trace(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("ramulator_driver: cannot open trace " + path);
  std::vector<Access> trace;
  std::string op, addr;
  std::size_t line = 0;
  while (in >> op >> addr) {
    ++line;
    if (op != "0" && op != "1")
      throw std::runtime_error(path + " line " + std::to_string(line) + ": expected 0 or 1, got " + op);
    trace.push_back({op == "1" ? 1 : 0, static_cast<std::int64_t>(std::stoull(addr, nullptr, 16))});
  }
  return trace;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: ramulator_driver CONFIG TRACE OUT\n";
    return 2;
  }
  try {
    const std::vector<Access> trace = read_trace(argv[2]);
    Ramulator::ConfigNode config = Ramulator::Config::parse_config_file(argv[1]);
    std::unique_ptr<Ramulator::IFrontEnd> frontend(Ramulator::Factory::create_frontend(config));
    std::unique_ptr<Ramulator::IMemorySystem> memory(Ramulator::Factory::create_memory_system(config));
    frontend->connect_memory_system(memory.get());
    memory->connect_frontend(frontend.get());
    const int tx_bytes = memory->get_tx_bytes();

    std::vector<std::int64_t> accepted(trace.size(), -1), completed(trace.size(), -1);
    std::int64_t tick = 0;  // the controller's clock: it counts one up at the start of each tick
    std::size_t next = 0, done = 0;
    bool ticking = false;
    while (done < trace.size()) {
      if (next < trace.size()) {
        const std::size_t i = next;
        auto callback = [&, i](Ramulator::Request& req) {
          // A read departs at req.depart; a write is answered when its WR issues, in this tick
          // (or at once when it merges with a queued write to the same address).
          completed[i] = trace[i].type == 0 ? req.depart : (ticking ? tick + 1 : tick);
          ++done;
        };
        accepted[i] = tick;
        if (frontend->receive_external_requests(trace[i].type, trace[i].addr, 0, callback, tx_bytes))
          ++next;
        else
          accepted[i] = -1;
      }
      ticking = true;
      memory->tick();
      ticking = false;
      ++tick;
    }
    frontend->finalize();
    memory->finalize();
    std::ofstream out(argv[3]);
    std::int64_t last = 0;
    for (std::size_t i = 0; i < trace.size(); ++i) {
      out << accepted[i] << ' ' << completed[i] << '\n';
      if (completed[i] > last) last = completed[i];
    }
    memory->print_stats(std::cout);
    std::cout << "last_completion_tick: " << last << '\n';
  } catch (const std::exception& e) {
    std::cerr << "ramulator_driver: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
