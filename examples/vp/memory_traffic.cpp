// The smallest complete chain: a traffic generator reading (or writing) an HBM through TLM-2.0
// sockets, in a plain C++ sc_main. The same design built from tests/data/platforms/
// traffic_direct.yaml in Python reports the same simulated time and bytes
// (tests/test_memory_traffic_chain.py).
//
//   memory_traffic REQUESTS REQUEST_BYTES MAX_OUTSTANDING CHANNELS CHANNEL_GBPS LATENCY_NS
//
// prints `key value` lines: sim_time_ps, last_completion_ps, bytes, completed, errors.
#include <cstdio>
#include <cstdlib>

#include <systemc>

#include "tlm_models/hbm.h"
#include "tlm_models/traffic_generator.h"

int sc_main(int argc, char** argv) {
  if (argc != 7) {
    std::fprintf(stderr,
                 "usage: %s REQUESTS REQUEST_BYTES MAX_OUTSTANDING CHANNELS CHANNEL_GBPS "
                 "LATENCY_NS\n",
                 argv[0]);
    return 2;
  }
  tlm_models::TrafficGenerator::Params gp;
  gp.requests = static_cast<unsigned>(std::strtoul(argv[1], nullptr, 10));
  gp.request_size = std::strtoull(argv[2], nullptr, 10);
  gp.max_outstanding = static_cast<unsigned>(std::strtoul(argv[3], nullptr, 10));
  gp.range = std::uint64_t{gp.requests} * gp.request_size;
  tlm_models::HbmMemory::Params hp;
  hp.channels = static_cast<unsigned>(std::strtoul(argv[4], nullptr, 10));
  hp.channel_bandwidth = std::strtod(argv[5], nullptr) * 1e9;
  hp.latency = sc_core::sc_time(std::strtod(argv[6], nullptr), sc_core::SC_NS);

  tlm_models::TrafficGenerator gen("gen", gp);
  tlm_models::HbmMemory hbm("hbm", hp);
  gen.socket.bind(hbm.target);
  sc_core::sc_start();

  std::printf("sim_time_ps %llu\n",
              static_cast<unsigned long long>(sc_core::sc_time_stamp().value()));
  std::printf("last_completion_ps %llu\n",
              static_cast<unsigned long long>(gen.last_completion().value()));
  std::printf("bytes %llu\n", static_cast<unsigned long long>(gen.bytes()));
  std::printf("completed %llu\n", static_cast<unsigned long long>(gen.completed()));
  std::printf("errors %llu\n", static_cast<unsigned long long>(gen.errors()));
  return gen.errors() == 0 ? 0 : 1;
}
