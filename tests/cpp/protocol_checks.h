// Shared by the target tests: a test initiator that runs a test body in an SC_THREAD, and checks
// of the TLM-2.0 base-protocol rules that every memory-like target must keep.
#ifndef TLM_MODELS_TESTS_PROTOCOL_CHECKS_H
#define TLM_MODELS_TESTS_PROTOCOL_CHECKS_H

#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "check.h"

namespace check {

// Sets every attribute of a plain read/write/ignore of `len` bytes (no byte enables, streaming
// width = length) and resets the response status, as the base protocol asks of an initiator.
inline void prepare(tlm::tlm_generic_payload& t, tlm::tlm_command cmd, std::uint64_t addr,
                    unsigned char* data, unsigned len) {
  t.set_command(cmd);
  t.set_address(addr);
  t.set_data_ptr(data);
  t.set_data_length(len);
  t.set_streaming_width(len);
  t.set_byte_enable_ptr(nullptr);
  t.set_byte_enable_length(0);
  t.set_dmi_allowed(false);
  t.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
}

// Owns payloads for AT traffic: a target may hold one (acquire) past the call that passed it.
class PayloadPool : public tlm::tlm_mm_interface {
 public:
  tlm::tlm_generic_payload* get() {
    if (free_.empty()) {
      all_.push_back(std::make_unique<tlm::tlm_generic_payload>(this));
      return all_.back().get();
    }
    tlm::tlm_generic_payload* t = free_.back();
    free_.pop_back();
    return t;
  }
  void free(tlm::tlm_generic_payload* t) override {
    t->reset();
    free_.push_back(t);
  }
  std::size_t in_use() const { return all_.size() - free_.size(); }

 private:
  std::vector<std::unique_ptr<tlm::tlm_generic_payload>> all_;
  std::vector<tlm::tlm_generic_payload*> free_;
};

struct TransportResult {
  tlm::tlm_response_status status;
  sc_core::sc_time delay;  // the annotated delay after the call
  bool dmi_allowed;
};

// Counts payload releases so a test sees whether a target kept a reference (acquire without a
// matching release before b_transport returned).
class CountingMm : public tlm::tlm_mm_interface {
 public:
  void free(tlm::tlm_generic_payload*) override { ++frees; }
  int frees = 0;
};

class TestInitiator : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<TestInitiator> socket;
  std::vector<std::pair<sc_dt::uint64, sc_dt::uint64>> invalidations;

  TestInitiator(sc_core::sc_module_name name, std::function<void(TestInitiator&)> body)
      : sc_core::sc_module(name), socket("socket"), body_(std::move(body)) {
    socket.register_invalidate_direct_mem_ptr(this, &TestInitiator::invalidate);
    SC_HAS_PROCESS(TestInitiator);
    SC_THREAD(run);
  }

  bool finished() const { return finished_; }

  // One b_transport; checks that the status was set and that no reference was kept.
  TransportResult transport(tlm::tlm_command cmd, std::uint64_t addr, unsigned char* data,
                            unsigned len, sc_core::sc_time delay = sc_core::SC_ZERO_TIME,
                            unsigned char* be = nullptr, unsigned be_len = 0,
                            unsigned streaming_width = 0) {
    CountingMm mm;
    tlm::tlm_generic_payload t(&mm);
    t.set_command(cmd);
    t.set_address(addr);
    t.set_data_ptr(data);
    t.set_data_length(len);
    t.set_streaming_width(streaming_width ? streaming_width : len);
    t.set_byte_enable_ptr(be);
    t.set_byte_enable_length(be_len);
    t.set_dmi_allowed(false);
    t.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    socket->b_transport(t, delay);
    CHECK(t.get_response_status() != tlm::TLM_INCOMPLETE_RESPONSE);
    CHECK_EQ(t.get_ref_count(), 0);
    CHECK_EQ(mm.frees, 0);
    TransportResult r{t.get_response_status(), delay, t.is_dmi_allowed()};
    t.set_mm(nullptr);  // the payload's destructor must not hand a stack object to `mm`
    return r;
  }

  TransportResult read(std::uint64_t addr, unsigned char* data, unsigned len,
                       sc_core::sc_time delay = sc_core::SC_ZERO_TIME) {
    return transport(tlm::TLM_READ_COMMAND, addr, data, len, delay);
  }
  TransportResult write(std::uint64_t addr, unsigned char* data, unsigned len,
                        sc_core::sc_time delay = sc_core::SC_ZERO_TIME) {
    return transport(tlm::TLM_WRITE_COMMAND, addr, data, len, delay);
  }
  // Reads `len` bytes and returns the annotated delay, expecting an OK response.
  sc_core::sc_time read_delay(std::uint64_t addr, unsigned len,
                              sc_core::sc_time delay = sc_core::SC_ZERO_TIME) {
    std::vector<unsigned char> buf(len);
    TransportResult r = read(addr, buf.data(), len, delay);
    CHECK_EQ(r.status, tlm::TLM_OK_RESPONSE);
    return r.delay;
  }

  unsigned debug(tlm::tlm_command cmd, std::uint64_t addr, unsigned char* data, unsigned len) {
    tlm::tlm_generic_payload t;
    t.set_command(cmd);
    t.set_address(addr);
    t.set_data_ptr(data);
    t.set_data_length(len);
    t.set_streaming_width(len);
    return socket->transport_dbg(t);
  }

  bool dmi(std::uint64_t addr, tlm::tlm_command cmd, tlm::tlm_dmi& out) {
    tlm::tlm_generic_payload t;
    t.set_command(cmd);
    t.set_address(addr);
    out.init();
    return socket->get_direct_mem_ptr(t, out);
  }

 private:
  void run() {
    body_(*this);
    finished_ = true;
  }
  void invalidate(sc_dt::uint64 start, sc_dt::uint64 end) { invalidations.emplace_back(start, end); }

  std::function<void(TestInitiator&)> body_;
  bool finished_ = false;
};

// A target that records every request and answers OK after a fixed 10 ns; for checking what
// initiators and interconnects send.
struct RecordingTarget : sc_core::sc_module {
  tlm_utils::simple_target_socket<RecordingTarget> target;
  std::vector<std::uint64_t> addresses;
  std::vector<tlm::tlm_command> commands;
  std::vector<sc_core::sc_time> arrivals;
  std::vector<unsigned> debug_lengths;

  explicit RecordingTarget(sc_core::sc_module_name n) : sc_core::sc_module(n), target("target") {
    target.register_b_transport(this, &RecordingTarget::b_transport);
    target.register_transport_dbg(this, &RecordingTarget::transport_dbg);
  }
  void b_transport(tlm::tlm_generic_payload& t, sc_core::sc_time& delay) {
    addresses.push_back(t.get_address());
    commands.push_back(t.get_command());
    arrivals.push_back(sc_core::sc_time_stamp() + delay);
    delay += sc_core::sc_time(10, sc_core::SC_NS);
    t.set_response_status(tlm::TLM_OK_RESPONSE);
  }
  unsigned transport_dbg(tlm::tlm_generic_payload& t) {
    addresses.push_back(t.get_address());
    debug_lengths.push_back(t.get_data_length());
    return t.get_data_length();
  }
};

// What the checks need to know about the target under test.
struct TargetUnderTest {
  std::uint64_t size;      // first address past the target's range
  std::uint64_t addr;      // an address where 64 bytes may be read and written
  bool storage;            // reads return what was written
};

inline void check_every_command_sets_status(TestInitiator& ini, const TargetUnderTest& tut) {
  unsigned char buf[16] = {};
  CHECK_EQ(ini.transport(tlm::TLM_READ_COMMAND, tut.addr, buf, 16).status, tlm::TLM_OK_RESPONSE);
  CHECK_EQ(ini.transport(tlm::TLM_WRITE_COMMAND, tut.addr, buf, 16).status, tlm::TLM_OK_RESPONSE);
  CHECK_EQ(ini.transport(tlm::TLM_IGNORE_COMMAND, tut.addr, buf, 16).status, tlm::TLM_OK_RESPONSE);
}

inline void check_address_errors(TestInitiator& ini, const TargetUnderTest& tut) {
  unsigned char buf[16] = {};
  CHECK_EQ(ini.read(tut.size, buf, 16).status, tlm::TLM_ADDRESS_ERROR_RESPONSE);
  CHECK_EQ(ini.write(tut.size - 8, buf, 16).status, tlm::TLM_ADDRESS_ERROR_RESPONSE);
  CHECK_EQ(ini.read(~std::uint64_t{0} - 4, buf, 16).status, tlm::TLM_ADDRESS_ERROR_RESPONSE);
}

// Streaming width below the data length is either rejected or honoured: then the data array
// wraps over the first `streaming_width` addresses (the last beat's bytes remain).
inline void check_streaming_width(TestInitiator& ini, const TargetUnderTest& tut) {
  unsigned char data[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  TransportResult r =
      ini.transport(tlm::TLM_WRITE_COMMAND, tut.addr, data, 8, sc_core::SC_ZERO_TIME, nullptr, 0, 4);
  CHECK(r.status == tlm::TLM_BURST_ERROR_RESPONSE || r.status == tlm::TLM_OK_RESPONSE);
  if (r.status == tlm::TLM_OK_RESPONSE && tut.storage) {
    unsigned char back[4] = {};
    ini.read(tut.addr, back, 4);
    CHECK_EQ(int(back[0]), 5);
    CHECK_EQ(int(back[3]), 8);
  }
}

// Byte enables are either rejected or honoured: disabled bytes neither written nor read.
inline void check_byte_enables(TestInitiator& ini, const TargetUnderTest& tut) {
  unsigned char ones[8], fives[8];
  for (int i = 0; i < 8; ++i) ones[i] = 0xAA, fives[i] = 0x55;
  CHECK_EQ(ini.write(tut.addr, ones, 8).status, tlm::TLM_OK_RESPONSE);
  unsigned char mask[2] = {TLM_BYTE_ENABLED, TLM_BYTE_DISABLED};
  TransportResult w = ini.transport(tlm::TLM_WRITE_COMMAND, tut.addr, fives, 8,
                                    sc_core::SC_ZERO_TIME, mask, 2);
  CHECK(w.status == tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE || w.status == tlm::TLM_OK_RESPONSE);
  if (w.status != tlm::TLM_OK_RESPONSE) return;
  unsigned char back[8];
  for (auto& b : back) b = 0x11;
  TransportResult r = ini.transport(tlm::TLM_READ_COMMAND, tut.addr, back, 8,
                                    sc_core::SC_ZERO_TIME, mask, 2);
  CHECK_EQ(r.status, tlm::TLM_OK_RESPONSE);
  for (int i = 0; i < 8; ++i) {
    int expected = i % 2 ? 0x11 : (tut.storage ? 0x55 : 0x00);
    CHECK_EQ(int(back[i]), expected);
  }
}

// Debug transport moves the bytes without timing; without storage reads return zeros.
inline void check_debug_transport(TestInitiator& ini, const TargetUnderTest& tut) {
  unsigned char data[32], back[32];
  for (int i = 0; i < 32; ++i) data[i] = static_cast<unsigned char>(i * 7 + 3), back[i] = 0xEE;
  sc_core::sc_time before = sc_core::sc_time_stamp();
  CHECK_EQ(ini.debug(tlm::TLM_WRITE_COMMAND, tut.addr, data, 32), 32u);
  CHECK_EQ(ini.debug(tlm::TLM_READ_COMMAND, tut.addr, back, 32), 32u);
  for (int i = 0; i < 32; ++i) CHECK_EQ(int(back[i]), tut.storage ? int(data[i]) : 0);
  CHECK_EQ(ini.debug(tlm::TLM_READ_COMMAND, tut.size, back, 4), 0u);
  CHECK(ini.debug(tlm::TLM_READ_COMMAND, tut.size - 2, back, 4) <= 2u);
  CHECK_EQ(sc_core::sc_time_stamp(), before);
  if (tut.storage) {  // debug writes are visible to b_transport and vice versa
    unsigned char via_bt[32];
    ini.read(tut.addr, via_bt, 32);
    for (int i = 0; i < 32; ++i) CHECK_EQ(int(via_bt[i]), int(data[i]));
  }
}

// DMI is granted exactly when there is storage; a granted pointer aliases b_transport data.
inline void check_dmi(TestInitiator& ini, const TargetUnderTest& tut) {
  tlm::tlm_dmi dmi;
  bool granted = ini.dmi(tut.addr, tlm::TLM_WRITE_COMMAND, dmi);
  CHECK_EQ(granted, tut.storage);
  CHECK(dmi.get_start_address() <= tut.addr && tut.addr <= dmi.get_end_address());
  if (!granted) return;
  CHECK(dmi.is_read_write_allowed());
  unsigned char* p = dmi.get_dmi_ptr() + (tut.addr - dmi.get_start_address());
  for (int i = 0; i < 16; ++i) p[i] = static_cast<unsigned char>(0xC0 + i);
  unsigned char back[16] = {};
  TransportResult r = ini.read(tut.addr, back, 16);
  CHECK(r.dmi_allowed);
  for (int i = 0; i < 16; ++i) CHECK_EQ(int(back[i]), 0xC0 + i);
  unsigned char data[4] = {9, 8, 7, 6};
  ini.write(tut.addr, data, 4);
  CHECK_EQ(int(p[0]), 9);
  CHECK_EQ(int(p[3]), 6);
}

inline void check_base_protocol(TestInitiator& ini, const TargetUnderTest& tut) {
  check_every_command_sets_status(ini, tut);
  check_address_errors(ini, tut);
  check_streaming_width(ini, tut);
  check_byte_enables(ini, tut);
  check_debug_transport(ini, tut);
  check_dmi(ini, tut);
}

}  // namespace check

#endif  // TLM_MODELS_TESTS_PROTOCOL_CHECKS_H
