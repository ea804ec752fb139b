// A configurable memory target for the engine tests and benchmarks: an address map of regions,
// each a set of interleaved channels that serve requests at a fixed bandwidth after a fixed
// latency, optionally with storage so tests can check that data really moved.
//
// Timing of a request arriving at t = sc_time_stamp() + delay, split at interleave boundaries:
// each piece on channel c starts at max(t, busy_until[c]) and occupies the channel for
// bytes / channel_bandwidth; the request completes `latency` after its last piece.
#ifndef TLM_MODELS_TESTS_TEST_TARGET_H
#define TLM_MODELS_TESTS_TEST_TARGET_H

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <utility>
#include <vector>

#include <systemc>
#include <sysc/kernel/sc_dynamic_processes.h>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>

#include "tlm_models/time_ticks.h"

namespace tlm_models {

class TestMemory : public sc_core::sc_module {
 public:
  struct Region {
    std::uint64_t base = 0;
    std::uint64_t size = 1 << 20;
    unsigned channels = 1;
    double channel_bandwidth = 8e9;  // bytes/s
    std::uint64_t interleave = 256;  // bytes
    sc_core::sc_time latency = sc_core::sc_time(100, sc_core::SC_NS);
    bool storage = true;
  };

  tlm_utils::simple_target_socket<TestMemory> target;

  explicit TestMemory(sc_core::sc_module_name name) : sc_core::sc_module(name), target("target") {
    target.register_b_transport(this, &TestMemory::b_transport);
    target.register_transport_dbg(this, &TestMemory::transport_dbg);
  }

  // Returns the region's index.
  unsigned add_region(const Region& r) {
    regions_.push_back(State{r, std::vector<Ticks>(r.channels, 0),
                             std::vector<unsigned char>(r.storage ? r.size : 0, 0)});
    return static_cast<unsigned>(regions_.size() - 1);
  }

  unsigned char* data(unsigned region) { return regions_[region].bytes.data(); }
  std::uint64_t reads() const { return reads_; }
  std::uint64_t writes() const { return writes_; }
  std::uint64_t bytes_read() const { return bytes_read_; }
  std::uint64_t bytes_written() const { return bytes_written_; }

 private:
  struct State {
    Region r;
    std::vector<Ticks> busy_until;
    std::vector<unsigned char> bytes;
  };

  State* find(std::uint64_t addr, std::uint64_t len) {
    for (auto& s : regions_)
      if (addr >= s.r.base && addr + len <= s.r.base + s.r.size) return &s;
    return nullptr;
  }

  void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    const std::uint64_t addr = gp.get_address();
    const std::uint32_t len = gp.get_data_length();
    State* s = find(addr, len);
    if (!s) {
      gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
      return;
    }
    if (gp.get_byte_enable_ptr()) {
      gp.set_response_status(tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
      return;
    }
    if (gp.get_streaming_width() < len) {
      gp.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
      return;
    }
    const Ticks arrival = to_ticks(sc_core::sc_time_stamp() + delay);
    Ticks last = arrival;
    std::uint64_t offset = addr - s->r.base;
    std::uint64_t left = len;
    while (left > 0) {
      const std::uint64_t piece = std::min(left, s->r.interleave - offset % s->r.interleave);
      Ticks& busy = s->busy_until[(offset / s->r.interleave) % s->r.channels];
      const Ticks begin = busy > arrival ? busy : arrival;
      busy = begin + transfer_ticks(piece, s->r.channel_bandwidth);
      if (busy > last) last = busy;
      offset += piece;
      left -= piece;
    }
    last += to_ticks(s->r.latency);
    move_data(*s, gp);
    if (gp.is_read()) {
      ++reads_;
      bytes_read_ += len;
    } else if (gp.is_write()) {
      ++writes_;
      bytes_written_ += len;
    }
    delay = from_ticks(last) - sc_core::sc_time_stamp();
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
  }

  unsigned int transport_dbg(tlm::tlm_generic_payload& gp) {
    State* s = find(gp.get_address(), gp.get_data_length());
    if (!s || !s->r.storage) {
      gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
      return 0;
    }
    move_data(*s, gp);
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
    return gp.get_data_length();
  }

  static void move_data(State& s, tlm::tlm_generic_payload& gp) {
    if (!s.r.storage) return;
    unsigned char* mem = s.bytes.data() + (gp.get_address() - s.r.base);
    if (gp.is_read())
      std::memcpy(gp.get_data_ptr(), mem, gp.get_data_length());
    else if (gp.is_write())
      std::memcpy(mem, gp.get_data_ptr(), gp.get_data_length());
  }

  std::vector<State> regions_;
  std::uint64_t reads_ = 0, writes_ = 0, bytes_read_ = 0, bytes_written_ = 0;
};

// Runs `body` as a SystemC thread (engines issue transactions, which needs bound sockets and a
// running kernel) and simulates until no events remain.
inline void simulate(std::function<void()> body) {
  sc_core::sc_spawn(std::move(body), "test_body");
  sc_core::sc_start();
}

}  // namespace tlm_models

#endif  // TLM_MODELS_TESTS_TEST_TARGET_H
