// A compute engine (PE array, Exp unit) whose SRAM port is bound to a stand-in SRAM: one channel
// at 64 B/ns with 1 ns latency, 1 MiB at address 0 — fast and simple enough that each engine
// test can state the operand-traffic time it expects.
#ifndef TLM_MODELS_TESTS_SRAM_ENGINE_BENCH_H
#define TLM_MODELS_TESTS_SRAM_ENGINE_BENCH_H

#include <systemc>

#include "test_target.h"

namespace tlm_models {

template <typename Engine>
struct SramEngineBench {
  TestMemory mem{"mem"};
  Engine engine;

  SramEngineBench(const char* name, const typename Engine::Params& p) : engine(name, p) {
    TestMemory::Region r;
    r.channel_bandwidth = 64e9;
    r.interleave = 1 << 20;
    r.latency = sc_core::sc_time(1, sc_core::SC_NS);
    mem.add_region(r);
    engine.sram_port.bind(mem.target);
  }
};

}  // namespace tlm_models

#endif  // TLM_MODELS_TESTS_SRAM_ENGINE_BENCH_H
