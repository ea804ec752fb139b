// The accelerator's test SoC: CPU -> our bus -> {system memory (HBM with storage) at
// [0, 1 GiB), protocol checker -> accelerator.ctrl at kRegs}; accelerator.sys_port -> bus;
// accelerator.irq -> a signal. `CpuT` is check::TestInitiator or a foreign CPU
// (foreign_soc.h): a module with a `socket` whose thread runs `body`.
#ifndef TLM_MODELS_TESTS_ACCELERATOR_SOC_H
#define TLM_MODELS_TESTS_ACCELERATOR_SOC_H

#include <cstdint>
#include <functional>
#include <utility>

#include <systemc>

#include "check.h"
#include "tlm_models/attention_accelerator.h"
#include "tlm_models/hbm.h"
#include "tlm_models/interconnect.h"
#include "tlm_models/protocol_checker.h"

template <class CpuT>
struct AcceleratorSoc {
  using Acc = tlm_models::AttentionAccelerator;
  static constexpr std::uint64_t kRegs = 0x2'0000'0000;  // the accelerator's registers on the bus
  tlm_models::Interconnect bus{"bus", tlm_models::Interconnect::Params{}};
  tlm_models::HbmMemory mem{"mem", mem_params()};
  tlm_models::ProtocolChecker checker{"checker"};
  Acc acc;
  sc_core::sc_signal<bool> irq{"irq"};
  CpuT cpu;

  explicit AcceleratorSoc(std::function<void(CpuT&)> body, const Acc::Params& ap = Acc::Params{})
      : acc("acc", ap), cpu("cpu", std::move(body)) {
    cpu.socket.bind(bus.in);
    acc.sys_port.bind(bus.in);
    bus.out.bind(mem.target);
    bus.out.bind(checker.in);
    checker.out.bind(acc.ctrl);
    bus.add_route(0, std::uint64_t{1} << 30, 0);
    bus.add_route(kRegs, 0x1000, 1);
    acc.irq.bind(irq);
  }

  static tlm_models::HbmMemory::Params mem_params() {
    tlm_models::HbmMemory::Params p;
    p.size = std::uint64_t{1} << 30;
    p.storage = true;
    return p;
  }

  // Runs to the end; the CPU's body must have finished and the checker seen no violation.
  void run() {
    sc_core::sc_start();
    CHECK(cpu.finished());
    CHECK_EQ(checker.violations(), 0u);
  }
};

#endif  // TLM_MODELS_TESTS_ACCELERATOR_SOC_H
