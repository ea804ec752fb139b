// Engine benchmark: execute() calls per second for each engine on small operations, and DMA
// streaming bandwidth from HbmMemory (16 channels x 8 GB/s, 256 B interleave) into an
// SRAM-like target versus max_outstanding and max_burst.
//
//   g++ -std=c++17 -O2 -Wall -Wextra -Werror -I tlm_models/include -I tests/cpp
//       tools/bench_engines.cpp -o build/bench_engines -lsystemc
//   SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1 build/bench_engines [MiB per stream, default 64]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_target_socket.h>
#include <tlm_utils/simple_initiator_socket.h>

#include "test_target.h"
#include "tlm_models/dma.h"
#include "tlm_models/exp_unit.h"
#include "tlm_models/hbm.h"
#include "tlm_models/pe_array.h"

using namespace tlm_models;
using sc_core::sc_time;
using sc_core::SC_NS;

namespace {

constexpr std::uint64_t kSramBase = std::uint64_t{1} << 32;
constexpr std::uint64_t kSramSize = 1 << 20;

// Two-way address decoder standing in for the platform interconnect: below kSramBase to the
// HBM, above to the SRAM (with the base removed); no latency of its own.
class AddressSplit : public sc_core::sc_module {
 public:
  tlm_utils::multi_passthrough_target_socket<AddressSplit> in;
  tlm_utils::simple_initiator_socket<AddressSplit> to_hbm;
  tlm_utils::simple_initiator_socket<AddressSplit> to_sram;

  explicit AddressSplit(sc_core::sc_module_name name)
      : sc_core::sc_module(name), in("in"), to_hbm("to_hbm"), to_sram("to_sram") {
    in.register_b_transport(this, &AddressSplit::b_transport);
  }

 private:
  void b_transport(int, tlm::tlm_generic_payload& gp, sc_time& delay) {
    const std::uint64_t addr = gp.get_address();
    if (addr >= kSramBase) {
      gp.set_address(addr - kSramBase);
      to_sram->b_transport(gp, delay);
      gp.set_address(addr);
    } else {
      to_hbm->b_transport(gp, delay);
    }
  }
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Calls execute() n times back to back (each op starts when the engine is free) and returns
// calls per second of wall-clock time; `last_done` collects the latest completion.
double execute_rate(OpExecutor& e, const TraceOp& op, unsigned n, sc_time& last_done) {
  sc_time start = sc_core::sc_time_stamp();
  const auto t0 = std::chrono::steady_clock::now();
  for (unsigned i = 0; i < n; ++i) {
    OpTiming t = e.execute(op, start);
    start = t.engine_free;
    if (t.done > last_done) last_done = t.done;
  }
  return n / seconds_since(t0);
}

struct StreamResult {
  double bandwidth;  // B/s of simulated time
  double wall;       // s
};

// Streams `bytes` from HBM address 0 into a 256 KiB SRAM ring as 64 KiB loads, each starting
// when the channel is free (advancing SystemC time to it, as the replayer does).
StreamResult stream(OpExecutor& ch, std::uint64_t bytes) {
  constexpr std::uint32_t kDesc = 64 << 10;
  const sc_time first = sc_core::sc_time_stamp();
  sc_time start = first, done = first;
  const auto t0 = std::chrono::steady_clock::now();
  for (std::uint64_t off = 0; off < bytes; off += kDesc) {
    if (start > sc_core::sc_time_stamp()) sc_core::wait(start - sc_core::sc_time_stamp());
    TraceOp op = make_op(OpKind::load, 0, 1, kDesc, 0, off, 0, kSramBase + off % (256 << 10));
    OpTiming t = ch.execute(op, start);
    start = t.engine_free;
    if (t.done > done) done = t.done;
  }
  const double wall = seconds_since(t0);
  if (done > sc_core::sc_time_stamp()) sc_core::wait(done - sc_core::sc_time_stamp());
  return StreamResult{static_cast<double>(bytes) / (done - first).to_seconds(), wall};
}

}  // namespace

int sc_main(int argc, char** argv) {
  const std::uint64_t mib = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 64;
  const unsigned outstanding[] = {1, 2, 4, 8, 16, 32};
  const unsigned bursts[] = {64, 128, 256, 512, 1024, 2048, 4096};

  HbmMemory hbm("hbm", HbmMemory::Params{});
  TestMemory sram("sram");
  TestMemory::Region r;
  r.size = kSramSize;
  r.channel_bandwidth = 512e9;  // well above the HBM peak, so the HBM is the bottleneck
  r.interleave = kSramSize;
  r.latency = sc_time(1, SC_NS);
  sram.add_region(r);
  AddressSplit split("split");
  split.to_hbm.bind(hbm.target);
  split.to_sram.bind(sram.target);

  // Engines for the execute() rate; their SRAM traffic goes to SRAM-like targets of their own.
  TestMemory pe_sram("pe_sram"), exp_sram("exp_sram");
  pe_sram.add_region(r);
  exp_sram.add_region(r);
  PeArray pe("pe", PeArray::Params{});
  pe.sram_port.bind(pe_sram.target);
  ExpUnit exp("exp", ExpUnit::Params{});
  exp.sram_port.bind(exp_sram.target);
  DmaEngine small_dma("small_dma", DmaEngine::Params{});
  small_dma.mem_port.bind(split.in);

  std::vector<std::unique_ptr<DmaEngine>> dmas;
  for (unsigned o : outstanding)
    for (unsigned b : bursts) {
      DmaEngine::Params p;
      p.channels = 1;
      p.max_outstanding = o;
      p.max_burst = b;
      char name[32];
      std::snprintf(name, sizeof name, "dma_o%u_b%u", o, b);
      dmas.push_back(std::make_unique<DmaEngine>(name, p));
      dmas.back()->mem_port.bind(split.in);
    }

  sc_core::sc_spawn([&] {
    constexpr unsigned kCalls = 500000;
    sc_time drained = sc_core::SC_ZERO_TIME;
    std::printf("execute() calls per second (%u calls each):\n", kCalls);
    std::printf("  pe matmul 16x16x16, sram traffic  %8.2f M/s\n",
                execute_rate(pe, make_op(OpKind::matmul, 0, 16, 16, 16, 0, 0x10000, 0x20000), kCalls, drained) / 1e6);
    TraceOp vec = make_op(OpKind::vector, 0, 8, 64, 0, 0, 0x10000, 0x20000);
    vec.code = static_cast<std::uint8_t>(VectorOp::add);
    std::printf("  pe vector add 8x64, sram traffic  %8.2f M/s\n", execute_rate(pe, vec, kCalls, drained) / 1e6);
    std::printf("  exp 1x128, sram traffic           %8.2f M/s\n",
                execute_rate(exp, make_op(OpKind::exp, 0, 1, 128, 0, 0, 0, 0x20000), kCalls, drained) / 1e6);
    std::printf("  dma load 256 B (1 burst)          %8.2f M/s\n",
                execute_rate(small_dma.channel(0), make_op(OpKind::load, 0, 1, 256, 0, 0, 0, kSramBase), kCalls, drained) / 1e6);
    std::printf("  dma load 1 KiB (4 bursts)         %8.2f M/s\n",
                execute_rate(small_dma.channel(1), make_op(OpKind::load, 0, 1, 1024, 0, 0, 0, kSramBase), kCalls, drained) / 1e6);
    // Let the HBM drain so every stream starts on idle channels.
    sc_core::wait(drained - sc_core::sc_time_stamp());

    std::printf("\nDMA stream of %llu MiB, HBM 16 x 8 GB/s (peak 128 GB/s), achieved GB/s:\n",
                static_cast<unsigned long long>(mib));
    std::printf("  outstanding \\ burst");
    for (unsigned b : bursts) std::printf(" %7u", b);
    std::printf("\n");
    double wall = 0, transactions = 0;
    std::size_t i = 0;
    for (unsigned o : outstanding) {
      std::printf("  %19u", o);
      for (unsigned b : bursts) {
        StreamResult res = stream(dmas[i++]->channel(0), mib << 20);
        wall += res.wall;
        transactions += 2.0 * static_cast<double>(mib << 20) / b;
        std::printf(" %7.1f", res.bandwidth / 1e9);
        std::fflush(stdout);
      }
      std::printf("\n");
    }
    std::printf("\nstreaming: %.0f transactions in %.2f s = %.2f M transactions/s\n",
                transactions, wall, transactions / wall / 1e6);
  });
  sc_core::sc_start();
  return 0;
}
