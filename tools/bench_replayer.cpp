// Replayer throughput and memory: a synthetic attention-like trace (tests/cpp/mock_engines.h)
// through closed-form mock engines, fed in chunks through the same pause/feed loop the Python
// driver uses. Prints ops/s with and without the time spent generating records, and peak RSS.
//
//   g++ -std=c++17 -O2 -Wall -Wextra -Werror -I tlm_models/include -I tests/cpp
//       tools/bench_replayer.cpp -o build/bench_replayer -lsystemc
//   SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1 build/bench_replayer [ops=10000000] [chunk=65536]
//       [window=65536] [idle_engine=0]
// idle_engine=1 binds a fifth engine that the trace never uses: the replayer then keeps reading
// ahead to its cap looking for that engine's next operation, the worst case for memory.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "mock_engines.h"
#include "tlm_models/replayer.h"

int sc_main(int argc, char** argv) {
  using sc_core::sc_time;
  using sc_core::SC_NS;
  using sc_core::SC_PS;
  using tlm_models::EngineKind;
  const std::uint64_t total = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 10'000'000;
  const std::uint64_t chunk_ops = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 65'536;
  const auto window = static_cast<std::uint32_t>(argc > 3 ? std::strtoul(argv[3], nullptr, 10) : 65'536);
  const bool idle_engine = argc > 4 && std::atoi(argv[4]) != 0;

  // 8 GB/s channels with 100 ns latency; PE 250 ps per MAC or element; Exp 500 ps per element.
  mock::DmaChannel dma0{sc_time(125, SC_PS), sc_time(100, SC_NS)};
  mock::DmaChannel dma1{sc_time(125, SC_PS), sc_time(100, SC_NS)};
  mock::ComputeEngine pe{sc_time(250, SC_PS), sc_time(250, SC_PS)};
  mock::ComputeEngine exp{sc_time(500, SC_PS), sc_time(500, SC_PS)};
  tlm_models::Replayer replayer("replayer");
  replayer.bind_engine(0, &dma0, "dma0", EngineKind::dma);
  replayer.bind_engine(1, &dma1, "dma1", EngineKind::dma);
  replayer.bind_engine(2, &pe, "pe", EngineKind::pe);
  replayer.bind_engine(3, &exp, "exp", EngineKind::exp);
  mock::ComputeEngine unused{sc_time(1, SC_NS), sc_time(1, SC_NS)};
  if (idle_engine) replayer.bind_engine(4, &unused, "exp1", EngineKind::exp);
  replayer.set_window(window);

  mock::SyntheticTrace gen;
  std::vector<tlm_models::TraceOp> chunk;
  chunk.reserve(chunk_ops);
  std::uint64_t fed = 0, slices = 0;
  double gen_s = 0;
  const auto t0 = std::chrono::steady_clock::now();
  while (!replayer.finished()) {
    if (replayer.wants_input()) {
      if (fed < total) {
        const auto g0 = std::chrono::steady_clock::now();
        chunk.clear();
        gen.next(chunk, std::min(chunk_ops, total - fed));
        gen_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - g0).count();
        replayer.feed(chunk.data(), chunk.size());
        fed += chunk.size();
      } else {
        replayer.end_of_input();
      }
    }
    sc_core::sc_start(sc_time(100, sc_core::SC_US));
    ++slices;
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  const auto& m = replayer.metrics();
  if (replayer.failed()) {
    std::printf("FAILED: %s\n", replayer.error().c_str());
    return 1;
  }
  std::printf("ops                 %llu\n", static_cast<unsigned long long>(m.ops()));
  std::printf("chunk               %llu ops, %llu sc_start slices\n",
              static_cast<unsigned long long>(chunk_ops), static_cast<unsigned long long>(slices));
  std::printf("wall                %.3f s (generating records %.3f s)\n", wall, gen_s);
  std::printf("ops/s               %.2f M (replay only: %.2f M)\n", m.ops() / wall / 1e6,
              m.ops() / (wall - gen_s) / 1e6);
  std::printf("peak RSS            %.1f MiB\n", ru.ru_maxrss / 1024.0);
  std::printf("buffer              %llu slots\n", static_cast<unsigned long long>(replayer.buffer_capacity()));
  std::printf("sim_time            %.3f us\n", tlm_models::ticks_to_ns(m.sim_time()) / 1e3);
  std::printf("overlap_efficiency  %.4f\n", m.overlap_efficiency());
  std::printf("lookahead_limited   %llu\n", static_cast<unsigned long long>(replayer.lookahead_limited()));
  return 0;
}
