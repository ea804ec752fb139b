// A user's memory target for tests/test_python_systemc.py: no storage, every access takes a
// fixed latency plus its bytes at a fixed width per cycle:
//   delay += latency + ceil(length / bytes_per_cycle) / clock
#ifndef USER_MODELS_PACED_MEMORY_H
#define USER_MODELS_PACED_MEMORY_H

#include <cstdint>
#include <string>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>

#include "tlm_models/stats.h"

namespace user_models {

class PacedMemory : public sc_core::sc_module, public tlm_models::StatsProvider {
 public:
  struct Params {
    std::uint64_t size = 1 << 16;
    sc_core::sc_time latency = sc_core::sc_time(20, sc_core::SC_NS);
    std::uint64_t bytes_per_cycle = 64;
    sc_core::sc_time cycle = sc_core::sc_time(1, sc_core::SC_NS);
    std::string check() const {
      if (size == 0) return "size must be at least 1 B";
      if (bytes_per_cycle == 0) return "bytes_per_cycle must be at least 1";
      return "";
    }
  };

  tlm_utils::simple_target_socket<PacedMemory> target;

  PacedMemory(sc_core::sc_module_name name, const Params& p)
      : sc_core::sc_module(name), target("target"), p_(p) {
    target.register_b_transport(this, &PacedMemory::b_transport);
    target.register_transport_dbg(this, &PacedMemory::transport_dbg);
  }

  void collect_stats(tlm_models::StatsGroup& g) const override {
    g.add("reads", static_cast<double>(reads_), "requests", "reads served");
    g.add("writes", static_cast<double>(writes_), "requests", "writes served");
    g.add("bytes", static_cast<double>(bytes_), "B", "bytes transferred");
    g.add("last_address", static_cast<double>(last_address_), "B", "address of the last access");
  }
  void reset_stats() override { reads_ = writes_ = bytes_ = 0; }

 private:
  bool in_range(const tlm::tlm_generic_payload& t) const {
    return t.get_address() + t.get_data_length() <= p_.size;
  }
  void b_transport(tlm::tlm_generic_payload& t, sc_core::sc_time& delay) {
    if (!in_range(t)) {
      t.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
      return;
    }
    std::uint64_t cycles = (t.get_data_length() + p_.bytes_per_cycle - 1) / p_.bytes_per_cycle;
    delay += p_.latency + p_.cycle * static_cast<double>(cycles);
    ++(t.is_write() ? writes_ : reads_);
    bytes_ += t.get_data_length();
    last_address_ = t.get_address();
    t.set_response_status(tlm::TLM_OK_RESPONSE);
  }
  unsigned transport_dbg(tlm::tlm_generic_payload& t) {
    t.set_response_status(in_range(t) ? tlm::TLM_OK_RESPONSE : tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return 0;
  }

  Params p_;
  std::uint64_t reads_ = 0, writes_ = 0, bytes_ = 0, last_address_ = 0;
};

}  // namespace user_models

#endif  // USER_MODELS_PACED_MEMORY_H
