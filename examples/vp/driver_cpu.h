// A CPU-like initiator running the accelerator's driver sequence: write the tensors and the
// command stream to system memory, program the registers, sleep until the interrupt, read the
// counters. Every access waits for its annotated delay, as an in-order core would.
#ifndef ATTN_TLM_EXAMPLES_VP_DRIVER_CPU_H
#define ATTN_TLM_EXAMPLES_VP_DRIVER_CPU_H

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "tlm_models/attention_accelerator.h"
#include "tlm_models/trace_op.h"

struct DriverJob {
  std::uint64_t regs = 0;            // bus address of the accelerator's registers
  std::uint64_t stream_base = 0;     // where the command stream is placed in system memory
  std::uint32_t window = 1u << 16;
  std::vector<tlm_models::TraceOp> commands;
  std::vector<std::pair<std::uint64_t, std::vector<unsigned char>>> tensors;  // address, bytes
};

class DriverCpu : public sc_core::sc_module {
 public:
  using Acc = tlm_models::AttentionAccelerator;

  tlm_utils::simple_initiator_socket<DriverCpu> socket;
  sc_core::sc_in<bool> irq;

  DriverCpu(sc_core::sc_module_name name, DriverJob job)
      : sc_core::sc_module(name), socket("socket"), irq("irq"), job_(std::move(job)) {
    SC_HAS_PROCESS(DriverCpu);
    SC_THREAD(run);
  }

  // Leave the streaming width of every payload at 0, as the CPU models of some open-source VPs do.
  bool zero_streaming_width = false;
  // Take a response left at TLM_INCOMPLETE_RESPONSE as OK, as such VPs' CPUs do with their RAM.
  bool accept_incomplete_response = false;

  // Register values read after the interrupt, by register name.
  const std::map<std::string, std::uint64_t>& results() const { return results_; }
  bool completed() const { return completed_; }
  // Notified when the START write has completed.
  const sc_core::sc_event& started() const { return started_; }

 private:
  void run() {
    for (const auto& t : job_.tensors) write_block(t.first, t.second.data(), t.second.size());
    write_block(job_.stream_base, reinterpret_cast<const unsigned char*>(job_.commands.data()),
                job_.commands.size() * sizeof(tlm_models::TraceOp));
    if (reg(Acc::kId) != Acc::kIdValue) throw std::runtime_error("no accelerator at the register base");
    set_reg(Acc::kCommandBaseLo, static_cast<std::uint32_t>(job_.stream_base));
    set_reg(Acc::kCommandBaseHi, static_cast<std::uint32_t>(job_.stream_base >> 32));
    set_reg(Acc::kCommandCount, static_cast<std::uint32_t>(job_.commands.size()));
    set_reg(Acc::kWindow, job_.window);
    set_reg(Acc::kCtrl, Acc::kCtrlStart | Acc::kCtrlIrqEnable);
    started_.notify();
    if (!irq.read()) sc_core::wait(irq.posedge_event());
    const std::uint32_t status = reg(Acc::kStatus);
    results_["status"] = status & 3u;
    results_["error_code"] = reg(Acc::kErrorCode);
    results_["cycles"] = reg64(Acc::kCyclesLo);
    results_["exec_cycles"] = reg64(Acc::kExecCyclesLo);
    results_["bytes_read"] = reg64(Acc::kBytesReadLo);
    results_["bytes_written"] = reg64(Acc::kBytesWrittenLo);
    results_["ops"] = reg64(Acc::kOpsLo);
    results_["stall_cycles"] = reg64(Acc::kStallCyclesLo);
    results_["fetch_bytes"] = reg64(Acc::kFetchBytesLo);
    results_["fetch_cycles"] = reg64(Acc::kFetchCyclesLo);
    const std::uint32_t engines = reg(Acc::kDmaChannels) + 2;
    for (std::uint32_t e = 0; e < engines; ++e) {
      results_["busy_cycles." + std::to_string(e)] = reg64(Acc::kEngineBusyLo + 8 * e);
      results_["stall_cycles." + std::to_string(e)] = reg64(Acc::kEngineStallLo + 8 * e);
    }
    set_reg(Acc::kIrqAck, 1);
    completed_ = true;
  }

  tlm::tlm_response_status access(tlm::tlm_command cmd, std::uint64_t addr, unsigned char* data,
                                  unsigned len) {
    tlm::tlm_generic_payload t;
    t.set_command(cmd);
    t.set_address(addr);
    t.set_data_ptr(data);
    t.set_data_length(len);
    t.set_streaming_width(zero_streaming_width ? 0 : len);
    t.set_byte_enable_ptr(nullptr);
    t.set_dmi_allowed(false);
    t.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    socket->b_transport(t, delay);
    sc_core::wait(delay);
    if (accept_incomplete_response && t.get_response_status() == tlm::TLM_INCOMPLETE_RESPONSE)
      t.set_response_status(tlm::TLM_OK_RESPONSE);
    if (t.get_response_status() != tlm::TLM_OK_RESPONSE)
      throw std::runtime_error(std::string(name()) + ": access failed: " + t.get_response_string());
    return t.get_response_status();
  }

  void write_block(std::uint64_t addr, const unsigned char* data, std::size_t bytes) {
    constexpr std::size_t kChunk = 4096;
    std::vector<unsigned char> buf(kChunk);
    for (std::size_t off = 0; off < bytes; off += kChunk) {
      const std::size_t n = std::min(kChunk, bytes - off);
      std::memcpy(buf.data(), data + off, n);
      access(tlm::TLM_WRITE_COMMAND, addr + off, buf.data(), static_cast<unsigned>(n));
    }
  }

  std::uint32_t reg(std::uint32_t off) {
    unsigned char b[4];
    access(tlm::TLM_READ_COMMAND, job_.regs + off, b, 4);
    return std::uint32_t{b[0]} | std::uint32_t{b[1]} << 8 | std::uint32_t{b[2]} << 16 |
           std::uint32_t{b[3]} << 24;
  }
  std::uint64_t reg64(std::uint32_t lo_off) {
    const std::uint64_t lo = reg(lo_off);
    return lo | std::uint64_t{reg(lo_off + 4)} << 32;
  }
  void set_reg(std::uint32_t off, std::uint32_t v) {
    unsigned char b[4] = {static_cast<unsigned char>(v), static_cast<unsigned char>(v >> 8),
                          static_cast<unsigned char>(v >> 16), static_cast<unsigned char>(v >> 24)};
    access(tlm::TLM_WRITE_COMMAND, job_.regs + off, b, 4);
  }

  DriverJob job_;
  std::map<std::string, std::uint64_t> results_;
  bool completed_ = false;
  sc_core::sc_event started_;
};

#endif  // ATTN_TLM_EXAMPLES_VP_DRIVER_CPU_H
