// A second CPU that stores to system memory while the accelerator runs, as software sharing the
// accelerator's memory does: a posted 4-byte store every `interval` of its local time, running ahead
// of the kernel by up to the global quantum (tlm_utils::tlm_quantumkeeper), as an instruction-set
// simulator does. With it the example VP measures how the accelerator's time depends on the
// quantum under contention (docs/integration.md, "The global quantum and CPU contention").
#ifndef ATTN_TLM_EXAMPLES_VP_STORING_CPU_H
#define ATTN_TLM_EXAMPLES_VP_STORING_CPU_H

#include <cstdint>
#include <stdexcept>
#include <string>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/tlm_quantumkeeper.h>

class StoringCpu : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<StoringCpu> socket;

  // `stores` stores to consecutive words from `address`, the first when `start` is notified.
  StoringCpu(sc_core::sc_module_name name, const sc_core::sc_event& start, std::uint64_t address,
             std::uint64_t stores, const sc_core::sc_time& interval)
      : sc_core::sc_module(name), socket("socket"), start_(start), address_(address), stores_(stores),
        interval_(interval) {
    SC_HAS_PROCESS(StoringCpu);
    SC_THREAD(run);
  }

  std::uint64_t stores_done() const { return done_; }

 private:
  void run() {
    if (stores_ == 0) return;
    sc_core::wait(start_);
    tlm_utils::tlm_quantumkeeper keeper;
    keeper.reset();
    unsigned char word[4] = {0x5a, 0x5a, 0x5a, 0x5a};
    tlm::tlm_generic_payload t;
    for (std::uint64_t i = 0; i < stores_; ++i) {
      t.set_command(tlm::TLM_WRITE_COMMAND);
      t.set_address(address_ + 4 * i);
      t.set_data_ptr(word);
      t.set_data_length(4);
      t.set_streaming_width(4);
      t.set_byte_enable_ptr(nullptr);
      t.set_dmi_allowed(false);
      t.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
      sc_core::sc_time delay = keeper.get_local_time();
      socket->b_transport(t, delay);
      if (t.get_response_status() != tlm::TLM_OK_RESPONSE)
        throw std::runtime_error(std::string(name()) + ": store failed: " + t.get_response_string());
      keeper.inc(interval_);  // posted: the next store issues `interval` later, not after the answer
      ++done_;
      if (keeper.need_sync()) keeper.sync();
    }
    keeper.sync();
  }

  const sc_core::sc_event& start_;
  std::uint64_t address_;
  std::uint64_t stores_;
  sc_core::sc_time interval_;
  std::uint64_t done_ = 0;
};

#endif  // ATTN_TLM_EXAMPLES_VP_STORING_CPU_H
