// The parts by which third-party virtual prototypes differ from this library's own, to run the
// accelerator through the adapters each family needs (docs/integration.md, section 8):
// - TranslatingBus: a system bus that hands each target its local address (address - base) on
//   every path and knows no extension, as riscv-vp's and VCML's buses do; it adds no time.
// - UnsetStatus: passes transactions to a memory and leaves the response status as it was on
//   entry (TLM_INCOMPLETE_RESPONSE), as riscv-vp's RAM does.
// - InterruptController: takes interrupts as function calls (a PLIC gateway, a VCML GPIO
//   socket's callback) and drives the CPU's interrupt line.
#ifndef ATTN_TLM_EXAMPLES_VP_VP_FAMILIES_H
#define ATTN_TLM_EXAMPLES_VP_VP_FAMILIES_H

#include <cstdint>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_initiator_socket.h>
#include <tlm_utils/multi_passthrough_target_socket.h>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "tlm_models/irq_adapters.h"

struct TranslatingBus : sc_core::sc_module {
  tlm_utils::multi_passthrough_target_socket<TranslatingBus> in;
  tlm_utils::multi_passthrough_initiator_socket<TranslatingBus> out;

  explicit TranslatingBus(sc_core::sc_module_name name) : sc_core::sc_module(name), in("in"), out("out") {
    in.register_b_transport(this, &TranslatingBus::b_transport);
    in.register_transport_dbg(this, &TranslatingBus::transport_dbg);
    in.register_get_direct_mem_ptr(this, &TranslatingBus::get_dmi);
  }

  // [base, base + size) goes to output `out_index`, which sees address - base.
  void map(std::uint64_t base, std::uint64_t size, unsigned out_index) {
    ranges_.push_back(Range{base, size, out_index});
  }

 private:
  struct Range {
    std::uint64_t base, size;
    unsigned out;
  };

  const Range* find(std::uint64_t addr) const {
    for (const Range& r : ranges_)
      if (addr >= r.base && addr - r.base < r.size) return &r;
    return nullptr;
  }

  void b_transport(int, tlm::tlm_generic_payload& t, sc_core::sc_time& delay) {
    const Range* r = find(t.get_address());
    if (!r) {
      t.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
      return;
    }
    t.set_address(t.get_address() - r->base);
    out[static_cast<int>(r->out)]->b_transport(t, delay);
  }

  unsigned transport_dbg(int, tlm::tlm_generic_payload& t) {
    const Range* r = find(t.get_address());
    if (!r) return 0;
    t.set_address(t.get_address() - r->base);
    return out[static_cast<int>(r->out)]->transport_dbg(t);
  }

  bool get_dmi(int, tlm::tlm_generic_payload& t, tlm::tlm_dmi& dmi) {
    const Range* r = find(t.get_address());
    if (!r) return false;
    t.set_address(t.get_address() - r->base);
    const bool ok = out[static_cast<int>(r->out)]->get_direct_mem_ptr(t, dmi);
    dmi.set_start_address(dmi.get_start_address() + r->base);
    dmi.set_end_address(dmi.get_end_address() + r->base);
    return ok;
  }

  std::vector<Range> ranges_;
};

struct UnsetStatus : sc_core::sc_module {
  tlm_utils::simple_target_socket<UnsetStatus> in;
  tlm_utils::simple_initiator_socket<UnsetStatus> out;

  explicit UnsetStatus(sc_core::sc_module_name name) : sc_core::sc_module(name), in("in"), out("out") {
    in.register_b_transport(this, &UnsetStatus::b_transport);
    in.register_transport_dbg(this, &UnsetStatus::transport_dbg);
  }

 private:
  void b_transport(tlm::tlm_generic_payload& t, sc_core::sc_time& delay) {
    const tlm::tlm_response_status entry = t.get_response_status();
    out->b_transport(t, delay);
    if (t.get_response_status() == tlm::TLM_OK_RESPONSE) t.set_response_status(entry);
  }
  unsigned transport_dbg(tlm::tlm_generic_payload& t) { return out->transport_dbg(t); }
};

// A function-call interrupt input (trigger(level)) driving the CPU's line `cpu_irq`.
struct InterruptController : sc_core::sc_module {
  tlm_models::IrqToSignal cpu_line{"cpu_line"};
  explicit InterruptController(sc_core::sc_module_name name) : sc_core::sc_module(name) {}
  void trigger(bool level) {
    ++calls;
    cpu_line.set(level);
  }
  unsigned calls = 0;
};

#endif  // ATTN_TLM_EXAMPLES_VP_VP_FAMILIES_H
