// The K/V stream of FLAT at N = 128K on the paper machine, without the rest of the dataflow:
// one DMA channel loads `GiB` from the HBM into a 256 KiB SRAM ring through the off-chip
// crossbar, as loads of 1022 rows x 128 B (FLAT's staging tile at N = 128K, d = 64: 16 bursts
// of 8 KiB, the last one short), each started when the channel is free; burst trains on and
// off. Prints simulated time (equal), wall time and bursts per second of each.
//
//   g++ -std=c++17 -O2 -Wall -Wextra -Werror -I tlm_models/include tools/bench_dma_trains.cpp
//       -o build/bench_dma_trains -lsystemc
//   SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1 build/bench_dma_trains [GiB, default 1]
#include <chrono>
#include <cstdio>
#include <ctime>
#include <cstdlib>
#include <memory>
#include <string>

#include <systemc>

#include "tlm_models/dma.h"
#include "tlm_models/hbm.h"
#include "tlm_models/interconnect.h"
#include "tlm_models/sram.h"

using namespace tlm_models;

namespace {

constexpr std::uint64_t kSram = std::uint64_t{1} << 32;
constexpr std::uint64_t kSramSize = 512 * 1024;
constexpr std::uint32_t kRows = 1022, kRowBytes = 128;

// platforms/attenio.yaml's off-chip path.
struct Machine {
  Interconnect noc;
  HbmMemory hbm;
  Sram sram;
  DmaEngine dma;
  explicit Machine(const std::string& n, bool trains)
      : noc((n + "_noc").c_str(), noc_params()), hbm((n + "_hbm").c_str(), HbmMemory::Params{}),
        sram((n + "_sram").c_str(), sram_params()), dma((n + "_dma").c_str(), dma_params(trains)) {
    dma.mem_port.bind(noc.in);
    noc.out.bind(hbm.target);
    noc.out.bind(sram.target);
    noc.add_route(0, std::uint64_t{4} << 30, 0);
    noc.add_route(kSram, kSramSize, 1);
  }
  static Interconnect::Params noc_params() {
    Interconnect::Params p;
    p.width = 256;
    return p;
  }
  static Sram::Params sram_params() {
    Sram::Params p;
    p.capacity = kSramSize;
    p.port_width = 4096;
    return p;
  }
  static DmaEngine::Params dma_params(bool trains) {
    DmaEngine::Params p;
    p.max_burst = 8192;
    p.max_outstanding = 8;
    p.burst_trains = trains;
    return p;
  }
};

struct Stream {
  double wall = 0, cpu = 0;  // s
  sc_core::sc_time start, done;
  std::uint64_t bursts = 0;
};

Stream stream(Machine& m, std::uint64_t bytes) {
  DmaChannel& ch = m.dma.dma_channel(0);
  const std::uint64_t tile = std::uint64_t{kRows} * kRowBytes;
  const auto t0 = std::chrono::steady_clock::now();
  const std::clock_t c0 = std::clock();
  Stream s;
  s.start = s.done = sc_core::sc_time_stamp();
  Ticks start = now_ticks();
  for (std::uint64_t off = 0; off + tile <= bytes; off += tile) {
    const DmaDescriptor d{off, kSram + (off / tile % 2) * 2 * tile, kRows, kRowBytes, 0, 0};
    const OpTiming t = ch.transfer(d, start);
    start = to_ticks(t.engine_free);
    if (t.done > s.done) s.done = t.done;
    sc_core::wait(t.engine_free - sc_core::sc_time_stamp());
  }
  s.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  s.cpu = static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
  s.bursts = ch.bursts();
  return s;
}

}  // namespace

int sc_main(int argc, char** argv) {
  const double gib = argc > 1 ? std::atof(argv[1]) : 1.0;
  const auto bytes = static_cast<std::uint64_t>(gib * (1 << 30));
  Machine on("on", true), off("off", false);
  Stream a, b;
  sc_core::sc_spawn([&] {
    a = stream(on, bytes);
    b = stream(off, bytes);
  });
  sc_core::sc_start();
  std::printf("DMA stream of %.2f GiB as %u x %u B loads through the crossbar (attenio.yaml):\n", gib,
              kRows, kRowBytes);
  for (const auto& [name, s] : {std::pair{"on ", a}, std::pair{"off", b}})
    std::printf("  burst trains %s: %.3f s wall, %.3f s CPU, %.2f M bursts per CPU second, simulated %s\n",
                name, s.wall, s.cpu, s.bursts / s.cpu / 1e6, (s.done - s.start).to_string().c_str());
  std::printf("  CPU time off / on: %.2fx\n", b.cpu / a.cpu);
  return 0;
}
