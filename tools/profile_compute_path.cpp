// Native harness for the compute path of platforms/attenio.yaml: the same modules and bindings
// as that platform (HBM, DMA with two channels, dma_noc, compute_noc, SRAM, KV buffer, PE
// array, Exp unit) driven by the Replayer with a binary trace written by attn-tlm's emitter,
// fed in chunks through the same pause/feed loop the Python driver uses. Prints ops/s and the
// figures that must not change when the models are optimised (simulated time, SRAM and
// interconnect statistics), so a before/after pair can be compared exactly.
//
//   .venv/bin/python -c "from tlm_models.dataflows import emit;
//     from tlm_models.workload.spec import Workload;
//     from tlm_models.platform import load_platform; from tlm_models.trace.io import write_trace;
//     e = emit('attenio', Workload(seq_len=8192, head_dim=64),
//              load_platform('platforms/attenio.yaml').info());
//     write_trace('build/attenio.bin', e.header, e.chunks, 'binary')"   (one line)
//   g++ -std=c++17 -O2 -g -Wall -Wextra -Werror -I tlm_models/include
//       tools/profile_compute_path.cpp -o build/profile_compute_path -lsystemc
//   SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1 build/profile_compute_path build/attenio.bin
//       [max_ops=all] [sram_traffic=1]
//   valgrind --tool=callgrind --callgrind-out-file=build/cg.out build/profile_compute_path
//       build/attenio.bin 100000 && callgrind_annotate --inclusive=yes build/cg.out | head -60
//
// The trace's engine table must be dma0, dma1, pe, exp (what the AttenIO emitter writes).
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <systemc>

#include "tlm_models/dma.h"
#include "tlm_models/exp_unit.h"
#include "tlm_models/hbm.h"
#include "tlm_models/interconnect.h"
#include "tlm_models/pe_array.h"
#include "tlm_models/replayer.h"
#include "tlm_models/sram.h"
#include "tlm_models/stats.h"
#include "tlm_models/trace_op.h"

namespace {

struct Trace {
  std::uint32_t window = 65536;
  std::vector<tlm_models::TraceOp> ops;
};

// Binary trace: "ATTNTRC\0", u32 version, u32 header length, JSON header, 64-byte records.
Trace read_trace(const char* path, std::uint64_t max_ops) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error(std::string("cannot open ") + path);
  char magic[8];
  std::uint32_t version = 0, length = 0;
  f.read(magic, 8);
  f.read(reinterpret_cast<char*>(&version), 4);
  f.read(reinterpret_cast<char*>(&length), 4);
  if (!f || std::memcmp(magic, "ATTNTRC", 8) != 0) throw std::runtime_error("not a binary trace");
  std::string header(length, '\0');
  f.read(&header[0], length);
  Trace t;
  const auto w = header.rfind("\"window\":");  // the top-level key follows the params
  if (w != std::string::npos) t.window = static_cast<std::uint32_t>(std::strtoul(header.c_str() + w + 9, nullptr, 10));
  if (header.find("\"engines\":[\"dma0\",\"dma1\",\"pe\",\"exp\"]") == std::string::npos)
    throw std::runtime_error("expected the engine table dma0, dma1, pe, exp");
  tlm_models::TraceOp op;
  while (t.ops.size() < max_ops && f.read(reinterpret_cast<char*>(&op), sizeof op)) t.ops.push_back(op);
  return t;
}

}  // namespace

int sc_main(int argc, char** argv) {
  using namespace tlm_models;
  using sc_core::sc_time;
  using sc_core::SC_NS;
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s trace.bin [max_ops] [sram_traffic=1]\n", argv[0]);
    return 2;
  }
  const std::uint64_t max_ops = argc > 2 && std::strtoull(argv[2], nullptr, 10) > 0
                                    ? std::strtoull(argv[2], nullptr, 10)
                                    : ~std::uint64_t{0};
  const bool traffic = argc > 3 ? std::atoi(argv[3]) != 0 : true;
  const Trace trace = read_trace(argv[1], max_ops);

  // platforms/attenio.yaml
  HbmMemory::Params hp;  // 16 x 8 GB/s, 100 ns, 256 B interleave, 8 GiB (parts/hbm-spec.yaml)
  hp.storage = false;
  HbmMemory hbm("hbm", hp);
  Sram::Params sp;
  sp.capacity = 512 * 1024;
  sp.banks = 16;
  sp.ports = 2;
  sp.port_width = 4096;
  Sram sram("sram", sp);
  Sram::Params kp;
  kp.capacity = 256;
  kp.banks = 1;
  kp.ports = 2;
  kp.port_width = 256;
  Sram kvbuf("kvbuf", kp);
  Interconnect::Params dnp;
  dnp.width = 256;
  Interconnect dma_noc("dma_noc", dnp);
  Interconnect::Params cnp;
  cnp.width = 8192;
  Interconnect compute_noc("compute_noc", cnp);
  DmaEngine::Params dp;
  dp.channels = 2;
  dp.max_burst = 8192;
  dp.max_outstanding = 8;
  DmaEngine dma("dma", dp);
  PeArray::Params pp;
  pp.mapping = "broadcast";
  pp.sram_traffic = traffic;
  PeArray pe("pe", pp);
  ExpUnit::Params ep;
  ep.sram_traffic = traffic;
  ExpUnit exp("exp", ep);

  dma.mem_port.bind(dma_noc.in);
  dma_noc.out.bind(hbm.target);
  dma_noc.out.bind(sram.target);
  dma_noc.out.bind(kvbuf.target);
  pe.sram_port.bind(compute_noc.in);
  exp.sram_port.bind(compute_noc.in);
  compute_noc.out.bind(sram.target);
  compute_noc.out.bind(kvbuf.target);
  const std::uint64_t sram_base = std::uint64_t{1} << 32, kv_base = 0x100100000;
  dma_noc.add_route(0, std::uint64_t{4} << 30, 0);
  dma_noc.add_route(sram_base, sp.capacity, 1);
  dma_noc.add_route(kv_base, kp.capacity, 2);
  compute_noc.add_route(sram_base, sp.capacity, 0);
  compute_noc.add_route(kv_base, kp.capacity, 1);

  Replayer replayer("replayer");
  replayer.set_window(trace.window);
  replayer.set_lookahead(std::uint64_t{1} << 21);
  replayer.bind_engine(0, &dma.channel(0), "dma0", EngineKind::dma);
  replayer.bind_engine(1, &dma.channel(1), "dma1", EngineKind::dma);
  replayer.bind_engine(2, &pe, "pe", EngineKind::pe);
  replayer.bind_engine(3, &exp, "exp", EngineKind::exp);

  const std::uint64_t chunk = std::uint64_t{1} << 20;
  std::uint64_t fed = 0;
  const auto t0 = std::chrono::steady_clock::now();
  while (!replayer.finished()) {
    if (replayer.wants_input()) {
      if (fed < trace.ops.size()) {
        const std::uint64_t n = std::min<std::uint64_t>(chunk, trace.ops.size() - fed);
        replayer.feed(trace.ops.data() + fed, n);
        fed += n;
      } else {
        replayer.end_of_input();
      }
    }
    sc_core::sc_start(sc_time(100, sc_core::SC_US));
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (replayer.failed()) {
    std::printf("FAILED: %s\n", replayer.error().c_str());
    return 1;
  }
  const auto& m = replayer.metrics();
  std::printf("ops          %" PRIu64 " (PE/Exp SRAM traffic %s)\n", m.ops(), traffic ? "on" : "off");
  std::printf("wall         %.3f s\n", wall);
  std::printf("ops/s        %.2f M\n", static_cast<double>(m.ops()) / wall / 1e6);
  // Exact results, for comparing builds: simulated time and the models' statistics.
  std::printf("sim_time_ps  %" PRIu64 "\n", static_cast<std::uint64_t>(m.sim_time()));
  for (const StatsProvider* p : {static_cast<const StatsProvider*>(&sram),
                                 static_cast<const StatsProvider*>(&kvbuf),
                                 static_cast<const StatsProvider*>(&compute_noc),
                                 static_cast<const StatsProvider*>(&dma_noc),
                                 static_cast<const StatsProvider*>(&pe),
                                 static_cast<const StatsProvider*>(&exp)}) {
    StatsGroup g(dynamic_cast<const sc_core::sc_object*>(p)->name());
    p->collect_stats(g);
    std::printf("%s\n", g.to_json().c_str());
  }
  std::printf("%s\n", replayer.result_json().c_str());
  return 0;
}
