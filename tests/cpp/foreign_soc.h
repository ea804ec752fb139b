// Stand-ins for the parts of third-party virtual prototypes that the models meet at their
// sockets, with the habits found in widely used open-source VPs: a system bus that translates
// addresses (the target sees address - base) and knows no extension (the example VP's,
// vp_families.h), a RAM that copies bytes but leaves the response status as it found it, and a
// CPU whose payloads carry streaming width 0. They exist to test the models' tolerance of those habits, not as models.
#ifndef TLM_MODELS_TESTS_FOREIGN_SOC_H
#define TLM_MODELS_TESTS_FOREIGN_SOC_H

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "vp_families.h"

namespace foreign {

// A bus that hands each target address - base and adds no time (examples/vp/vp_families.h).
using TranslatingBus = ::TranslatingBus;

// A RAM that copies bytes in b_transport and transport_dbg; with `sets_status` false it never
// touches the response status (a payload it serves comes back TLM_INCOMPLETE_RESPONSE).
struct Ram : sc_core::sc_module {
  tlm_utils::simple_target_socket<Ram> target;
  std::vector<unsigned char> bytes;
  bool sets_status;
  unsigned calls = 0;

  Ram(sc_core::sc_module_name name, std::size_t size, bool sets_status_)
      : sc_core::sc_module(name), target("target"), bytes(size), sets_status(sets_status_) {
    target.register_b_transport(this, &Ram::b_transport);
    target.register_transport_dbg(this, &Ram::transport_dbg);
  }

 private:
  void b_transport(tlm::tlm_generic_payload& t, sc_core::sc_time& delay) {
    ++calls;
    copy(t);
    delay += sc_core::sc_time(5, sc_core::SC_NS);
    if (sets_status) t.set_response_status(tlm::TLM_OK_RESPONSE);
  }
  unsigned transport_dbg(tlm::tlm_generic_payload& t) { return copy(t); }

  unsigned copy(tlm::tlm_generic_payload& t) {
    const std::uint64_t addr = t.get_address();
    if (addr >= bytes.size() || t.get_data_length() == 0) return 0;
    const std::size_t n = std::min<std::uint64_t>(t.get_data_length(), bytes.size() - addr);
    if (t.get_command() == tlm::TLM_WRITE_COMMAND)
      std::memcpy(&bytes[addr], t.get_data_ptr(), n);
    else if (t.get_command() == tlm::TLM_READ_COMMAND)
      std::memcpy(t.get_data_ptr(), &bytes[addr], n);
    return static_cast<unsigned>(n);
  }
};

// A CPU-like initiator whose payloads leave the streaming width at 0; `body` runs in its thread.
struct Cpu : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<Cpu> socket;

  Cpu(sc_core::sc_module_name name, std::function<void(Cpu&)> body)
      : sc_core::sc_module(name), socket("socket"), body_(std::move(body)) {
    SC_HAS_PROCESS(Cpu);
    SC_THREAD(run);
  }

  bool finished() const { return finished_; }

  // One access that waits for its annotated delay; returns the response status.
  tlm::tlm_response_status access(tlm::tlm_command cmd, std::uint64_t addr, unsigned char* data,
                                  unsigned len) {
    tlm::tlm_generic_payload t;
    t.set_command(cmd);
    t.set_address(addr);
    t.set_data_ptr(data);
    t.set_data_length(len);
    t.set_streaming_width(0);
    t.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    socket->b_transport(t, delay);
    sc_core::wait(delay);
    return t.get_response_status();
  }
  std::uint32_t read32(std::uint64_t addr) {
    unsigned char b[4] = {};
    last_status = access(tlm::TLM_READ_COMMAND, addr, b, 4);
    return std::uint32_t{b[0]} | std::uint32_t{b[1]} << 8 | std::uint32_t{b[2]} << 16 |
           std::uint32_t{b[3]} << 24;
  }
  tlm::tlm_response_status write32(std::uint64_t addr, std::uint32_t v) {
    unsigned char b[4] = {static_cast<unsigned char>(v), static_cast<unsigned char>(v >> 8),
                          static_cast<unsigned char>(v >> 16), static_cast<unsigned char>(v >> 24)};
    return access(tlm::TLM_WRITE_COMMAND, addr, b, 4);
  }

  tlm::tlm_response_status last_status = tlm::TLM_INCOMPLETE_RESPONSE;

 private:
  void run() {
    body_(*this);
    finished_ = true;
  }
  std::function<void(Cpu&)> body_;
  bool finished_ = false;
};

}  // namespace foreign

#endif  // TLM_MODELS_TESTS_FOREIGN_SOC_H
