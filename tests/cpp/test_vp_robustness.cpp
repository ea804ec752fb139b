// The accelerator inside virtual prototypes built from third-party parts (foreign_soc.h): CPUs
// that leave the streaming width at 0, RAMs that never set a response status, buses that
// translate addresses, interrupt controllers that take a function call; and the register
// file's answers to debuggers and the interrupt's timing after an execution error.
#include <cstdint>
#include <cstring>
#include <vector>

#include <systemc>
#include <tlm>

#include "accelerator_soc.h"
#include "check.h"
#include "foreign_soc.h"
#include "protocol_checks.h"
#include "tlm_models/attention_accelerator.h"
#include "tlm_models/hbm.h"
#include "tlm_models/interconnect.h"
#include "tlm_models/irq_adapters.h"
#include "tlm_models/payload_access.h"
#include "tlm_models/protocol_checker.h"
#include "tlm_models/sram.h"

namespace {

using tlm_models::AttentionAccelerator;
using tlm_models::OpKind;
using tlm_models::TraceOp;
using Acc = AttentionAccelerator;

constexpr std::uint64_t kSram = std::uint64_t{1} << 32;  // the accelerator's SRAM (default)

TraceOp transfer(OpKind kind, std::uint8_t channel, std::uint32_t rows, std::uint32_t row_bytes,
                 std::uint64_t src, std::uint64_t dst, std::uint32_t dep = 0) {
  TraceOp o = tlm_models::make_op(kind, channel, rows, row_bytes, 0, src, 0, dst);
  o.deps[0] = dep;
  return o;
}

std::vector<unsigned char> as_bytes(const std::vector<TraceOp>& ops) {
  std::vector<unsigned char> b(ops.size() * sizeof(TraceOp));
  std::memcpy(b.data(), ops.data(), b.size());
  return b;
}

// The driver sequence through a foreign CPU: program, start, wait for the interrupt (at most
// 1 ms). Returns whether the line rose.
bool start_and_wait(foreign::Cpu& cpu, std::uint64_t regs, std::uint64_t stream, std::uint32_t count,
                    const sc_core::sc_signal<bool>& irq) {
  CHECK_EQ(cpu.write32(regs + Acc::kCommandBaseLo, static_cast<std::uint32_t>(stream)), tlm::TLM_OK_RESPONSE);
  CHECK_EQ(cpu.write32(regs + Acc::kCommandBaseHi, static_cast<std::uint32_t>(stream >> 32)),
           tlm::TLM_OK_RESPONSE);
  CHECK_EQ(cpu.write32(regs + Acc::kCommandCount, count), tlm::TLM_OK_RESPONSE);
  CHECK_EQ(cpu.write32(regs + Acc::kCtrl, Acc::kCtrlStart | Acc::kCtrlIrqEnable), tlm::TLM_OK_RESPONSE);
  if (!irq.read()) sc_core::wait(sc_core::sc_time(1, sc_core::SC_MS), irq.value_changed_event());
  return irq.read();
}

std::uint64_t read64(foreign::Cpu& cpu, std::uint64_t addr) {
  const std::uint64_t lo = cpu.read32(addr);
  return lo | std::uint64_t{cpu.read32(addr + 4)} << 32;
}

}  // namespace

// Streaming width 0 is taken as "equal to the data length" by the registers and the memories:
// every access succeeds, each target counts them, and one warning is issued per simulation; the
// protocol checker still reports each one on its link.
TEST_CASE(streaming_width_zero_is_the_data_length) {
  using WidthZeroSoc = AcceleratorSoc<foreign::Cpu>;
  sc_core::sc_report_handler::set_actions(tlm_models::kZeroStreamingWidthMsg, sc_core::SC_LOG);
  sc_core::sc_report_handler::set_actions(tlm_models::kProtocolCheckerMsg, sc_core::SC_LOG);
  WidthZeroSoc* soc = nullptr;
  WidthZeroSoc s([&soc](foreign::Cpu& cpu) {
    CHECK_EQ(cpu.read32(WidthZeroSoc::kRegs + Acc::kId), Acc::kIdValue);
    CHECK_EQ(cpu.last_status, tlm::TLM_OK_RESPONSE);
    CHECK_EQ(cpu.write32(WidthZeroSoc::kRegs + Acc::kCommandCount, 9), tlm::TLM_OK_RESPONSE);
    CHECK_EQ(cpu.read32(WidthZeroSoc::kRegs + Acc::kCommandCount), 9u);
    CHECK_EQ(cpu.write32(0x1000, 0xA5A5F00Du), tlm::TLM_OK_RESPONSE);
    CHECK_EQ(cpu.read32(0x1000), 0xA5A5F00Du);
    CHECK_EQ(soc->acc.zero_streaming_width_payloads(), 3u);
    CHECK_EQ(soc->mem.zero_streaming_width_payloads(), 2u);
  });
  soc = &s;
  sc_core::sc_start();
  CHECK(s.cpu.finished());
  CHECK_EQ(sc_core::sc_report_handler::get_count(tlm_models::kZeroStreamingWidthMsg), 1);
  CHECK_EQ(s.checker.violations(), 3u);
}

// Told to tolerate streaming width 0, the checker counts the same three payloads instead.
TEST_CASE(checker_tolerates_streaming_width_zero_when_told) {
  using WidthZeroSoc = AcceleratorSoc<foreign::Cpu>;
  sc_core::sc_report_handler::set_actions(tlm_models::kZeroStreamingWidthMsg, sc_core::SC_DO_NOTHING);
  WidthZeroSoc s([](foreign::Cpu& cpu) {
    CHECK_EQ(cpu.read32(WidthZeroSoc::kRegs + Acc::kId), Acc::kIdValue);
    CHECK_EQ(cpu.write32(WidthZeroSoc::kRegs + Acc::kCommandCount, 9), tlm::TLM_OK_RESPONSE);
    CHECK_EQ(cpu.read32(WidthZeroSoc::kRegs + Acc::kCommandCount), 9u);
  });
  tlm_models::ProtocolChecker::Tolerance tolerance;
  tolerance.zero_streaming_width = true;
  s.checker.set_tolerance(tolerance);
  s.run();
  CHECK_EQ(s.checker.tolerated(), 3u);
}

// The SRAM takes streaming width 0 the same way; a width below the length is still a burst error.
TEST_CASE(sram_streaming_width_zero) {
  sc_core::sc_report_handler::set_actions(tlm_models::kZeroStreamingWidthMsg, sc_core::SC_LOG);
  tlm_models::Sram sram("sram", tlm_models::Sram::Params{});
  check::TestInitiator* self = nullptr;
  check::TestInitiator cpu("cpu", [&](check::TestInitiator&) {
    tlm::tlm_generic_payload t;
    unsigned char b[64] = {1, 2, 3};
    t.set_command(tlm::TLM_WRITE_COMMAND);
    t.set_address(64);
    t.set_data_ptr(b);
    t.set_data_length(64);
    t.set_streaming_width(0);
    t.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    self->socket->b_transport(t, d);
    CHECK_EQ(t.get_response_status(), tlm::TLM_OK_RESPONSE);
    t.set_streaming_width(32);
    t.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    self->socket->b_transport(t, d);
    CHECK_EQ(t.get_response_status(), tlm::TLM_BURST_ERROR_RESPONSE);
    CHECK_EQ(sram.zero_streaming_width_payloads(), 1u);
  });
  self = &cpu;
  cpu.socket.bind(sram.target);
  sc_core::sc_start();
  CHECK(cpu.finished());
}

namespace {

// Foreign CPU -> our bus -> {foreign RAM at [0, 16 MiB) (the command stream, tensors),
// accelerator registers}; the accelerator's memory port on the same bus.
struct ForeignRamSoc {
  static constexpr std::uint64_t kRegs = 0x4000'0000;
  static constexpr std::uint64_t kStream = 0x8000, kA = 0x10000, kB = 0x20000;
  tlm_models::Interconnect bus{"bus", tlm_models::Interconnect::Params{}};
  foreign::Ram ram;
  Acc acc;
  sc_core::sc_signal<bool> irq{"irq"};
  foreign::Cpu cpu;

  ForeignRamSoc(const Acc::Params& ap, bool ram_sets_status, std::function<void(foreign::Cpu&)> body)
      : ram("ram", 16u << 20, ram_sets_status), acc("acc", ap), cpu("cpu", std::move(body)) {
    cpu.socket.bind(bus.in);
    acc.sys_port.bind(bus.in);
    bus.out.bind(ram.target);
    bus.out.bind(acc.ctrl);
    bus.add_route(0, 16u << 20, 0);
    bus.add_route(kRegs, 0x1000, 1);
    acc.irq.bind(irq);
  }

  // Copies 2 KiB from kA to kB through the SRAM.
  static std::vector<TraceOp> copy_job() {
    return {transfer(OpKind::load, 0, 16, 128, kA, kSram),
            transfer(OpKind::store, 1, 16, 128, kSram, kB, 1)};
  }
  void place_job() {
    const std::vector<unsigned char> s = as_bytes(copy_job());
    std::memcpy(&ram.bytes[kStream], s.data(), s.size());
    for (unsigned i = 0; i < 2048; ++i) ram.bytes[kA + i] = static_cast<unsigned char>(i * 13 + 7);
  }
};

void sc_start_quietly() {
  sc_core::sc_report_handler::set_actions(tlm_models::kZeroStreamingWidthMsg, sc_core::SC_DO_NOTHING);
  sc_core::sc_start();
}

}  // namespace

// A RAM that leaves the response status INCOMPLETE: an error by default (the fetch fails,
// ERROR_CODE 2), served when the compatibility flag is set.
TEST_CASE(incomplete_response_is_an_error_by_default) {
  ForeignRamSoc* soc = nullptr;
  ForeignRamSoc s(Acc::Params{}, false, [&soc](foreign::Cpu& cpu) {
    CHECK(start_and_wait(cpu, ForeignRamSoc::kRegs, ForeignRamSoc::kStream, 2, soc->irq));
    CHECK_EQ(cpu.read32(ForeignRamSoc::kRegs + Acc::kErrorCode), static_cast<std::uint32_t>(Acc::Error::fetch));
    CHECK(soc->acc.error_message().find("TLM_INCOMPLETE_RESPONSE") != std::string::npos);
  });
  soc = &s;
  s.place_job();
  sc_start_quietly();
  CHECK(s.cpu.finished());
}

TEST_CASE(incomplete_response_accepted_with_the_compatibility_flag) {
  Acc::Params ap;
  ap.accept_incomplete_response = true;
  ForeignRamSoc* soc = nullptr;
  ForeignRamSoc s(ap, false, [&soc](foreign::Cpu& cpu) {
    CHECK(start_and_wait(cpu, ForeignRamSoc::kRegs, ForeignRamSoc::kStream, 2, soc->irq));
    CHECK_EQ(cpu.read32(ForeignRamSoc::kRegs + Acc::kErrorCode), 0u);
    CHECK_EQ(read64(cpu, ForeignRamSoc::kRegs + Acc::kBytesReadLo), 2048u);
    // 128 B of commands, 2 KiB read, 2 KiB written: each at least one transaction left INCOMPLETE
    CHECK(soc->acc.incomplete_responses() >= 3u);
  });
  soc = &s;
  s.place_job();
  sc_start_quietly();
  CHECK(s.cpu.finished());
  CHECK(std::memcmp(&s.ram.bytes[ForeignRamSoc::kA], &s.ram.bytes[ForeignRamSoc::kB], 2048) == 0);
}

// The interrupt as a function call (a PLIC-style gateway) and a function-call source as a signal.
TEST_CASE(irq_to_callback_and_back) {
  std::vector<std::pair<double, bool>> calls;
  tlm_models::IrqToCallback to_call("to_call", [&calls](bool level) {
    calls.emplace_back(sc_core::sc_time_stamp().to_seconds() * 1e9, level);
  });
  sc_core::sc_signal<bool> line("line");
  tlm_models::IrqToSignal to_signal("to_signal");
  to_signal.irq.bind(line);
  ForeignRamSoc* soc = nullptr;
  Acc::Params ap;
  ForeignRamSoc s(ap, true, [&](foreign::Cpu& cpu) {
    const std::uint64_t regs = ForeignRamSoc::kRegs;
    CHECK_EQ(cpu.write32(regs + Acc::kCommandBaseLo, static_cast<std::uint32_t>(ForeignRamSoc::kStream)),
             tlm::TLM_OK_RESPONSE);
    CHECK_EQ(cpu.write32(regs + Acc::kCommandCount, 2), tlm::TLM_OK_RESPONSE);
    CHECK_EQ(cpu.write32(regs + Acc::kCtrl, Acc::kCtrlStart | Acc::kCtrlIrqEnable), tlm::TLM_OK_RESPONSE);
    while (calls.empty()) sc_core::wait(10, sc_core::SC_NS);
    CHECK_EQ(calls.size(), 1u);
    CHECK(calls[0].second);
    CHECK_EQ(calls[0].first, soc->acc.completion_time().to_seconds() * 1e9);
    CHECK_EQ(cpu.write32(regs + Acc::kIrqAck, 1), tlm::TLM_OK_RESPONSE);
    sc_core::wait(10, sc_core::SC_NS);
    CHECK_EQ(calls.size(), 2u);
    CHECK(!calls.back().second);
    to_signal.set(true);
    sc_core::wait(sc_core::SC_ZERO_TIME);
    sc_core::wait(sc_core::SC_ZERO_TIME);
    CHECK(line.read());
    to_signal.set(false);
    sc_core::wait(1, sc_core::SC_NS);
    CHECK(!line.read());
  });
  soc = &s;
  to_call.irq.bind(s.irq);
  s.place_job();
  sc_start_quietly();
  CHECK(s.cpu.finished());
}

namespace {

// riscv-vp's layout: a foreign bus that translates addresses, the accelerator's memory port
// bound straight to it, a timing-only HBM (no storage) at 0x0800_0000 of 256 MiB, a foreign
// RAM at 0 with the command stream and a tensor.
struct TranslatingSoc {
  static constexpr std::uint64_t kRegs = 0x2000'0000;
  static constexpr std::uint64_t kHbm = 0x0800'0000, kHbmSize = 256u << 20;
  static constexpr std::uint64_t kStream = 0x8000, kA = 0x10000, kB = 0x20000;
  foreign::TranslatingBus bus{"bus"};
  foreign::Ram ram{"ram", 16u << 20, true};
  tlm_models::HbmMemory hbm{"hbm", hbm_params()};
  Acc acc;
  sc_core::sc_signal<bool> irq{"irq"};
  foreign::Cpu cpu;

  TranslatingSoc(const Acc::Params& ap, std::function<void(foreign::Cpu&)> body)
      : acc("acc", ap), cpu("cpu", std::move(body)) {
    cpu.socket.bind(bus.in);
    acc.sys_port.bind(bus.in);
    bus.out.bind(ram.target);
    bus.out.bind(hbm.target);
    bus.out.bind(acc.ctrl);
    bus.map(0, 16u << 20, 0);
    bus.map(kHbm, kHbmSize, 1);
    bus.map(kRegs, 0x1000, 2);
    acc.irq.bind(irq);
    // 8 KiB from the HBM (32 bursts: a burst train), 2 KiB from the RAM, 2 KiB back to the RAM
    // and 8 KiB to the HBM.
    const std::vector<TraceOp> job = {
        transfer(OpKind::load, 0, 64, 128, kHbm, kSram),
        transfer(OpKind::load, 0, 16, 128, kA, kSram + 0x2000),
        transfer(OpKind::store, 1, 16, 128, kSram + 0x2000, kB, 1),
        transfer(OpKind::store, 1, 64, 128, kSram, kHbm + 0x10'0000, 3)};
    const std::vector<unsigned char> s = as_bytes(job);
    std::memcpy(&ram.bytes[kStream], s.data(), s.size());
    for (unsigned i = 0; i < 2048; ++i) ram.bytes[kA + i] = static_cast<unsigned char>(i * 5 + 1);
  }
  static tlm_models::HbmMemory::Params hbm_params() {
    tlm_models::HbmMemory::Params p;
    p.size = kHbmSize;
    p.storage = false;
    return p;
  }
};

// Runs the job with 256 B bursts, 16 in flight (so that a transfer is many bursts and may go as
// a burst train), and returns CYCLES (0 on an error).
std::uint64_t run_translating_job(Acc::Params ap) {
  ap.dma.max_burst = 256;
  ap.dma.max_outstanding = 16;
  std::uint64_t cycles = 0;
  TranslatingSoc* soc = nullptr;
  TranslatingSoc s(ap, [&](foreign::Cpu& cpu) {
    CHECK(start_and_wait(cpu, TranslatingSoc::kRegs, TranslatingSoc::kStream, 4, soc->irq));
    CHECK_EQ(cpu.read32(TranslatingSoc::kRegs + Acc::kErrorCode), 0u);
    CHECK_EQ(read64(cpu, TranslatingSoc::kRegs + Acc::kBytesReadLo), 10240u);
    CHECK_EQ(read64(cpu, TranslatingSoc::kRegs + Acc::kBytesWrittenLo), 10240u);
    cycles = read64(cpu, TranslatingSoc::kRegs + Acc::kCyclesLo);
  });
  soc = &s;
  sc_start_quietly();
  CHECK(s.cpu.finished());
  CHECK(std::memcmp(&s.ram.bytes[TranslatingSoc::kA], &s.ram.bytes[TranslatingSoc::kB], 2048) == 0);
  if (!s.acc.error_message().empty()) std::fprintf(stderr, "%s\n", s.acc.error_message().c_str());
  return cycles;
}

}  // namespace

// The burst-train probe behind a bus that translates addresses: the job completes (it failed
// with ERROR_CODE 4 when the probe took the HBM's local window for the bus's), in the cycles of
// the same job with burst trains off, the case below: trains never change timing.
constexpr std::uint64_t kTranslatingJobCycles = 627;
TEST_CASE(burst_trains_behind_a_translating_bus) {
  CHECK_EQ(run_translating_job(Acc::Params{}), kTranslatingJobCycles);
}

TEST_CASE(burst_trains_off_behind_a_translating_bus) {
  Acc::Params ap;
  ap.dma.burst_trains = false;
  CHECK_EQ(run_translating_job(ap), kTranslatingJobCycles);
}

namespace {

using CheckedSoc = AcceleratorSoc<check::TestInitiator>;

std::uint32_t word(const unsigned char* b) {
  std::uint32_t v;
  std::memcpy(&v, b, 4);
  return v;
}

}  // namespace

// A debugger's read of any length over the register file answers in full: write-only and
// unmapped words read as 0, and nothing has a side effect.
TEST_CASE(debug_reads_answer_in_full) {
  CheckedSoc* soc = nullptr;
  CheckedSoc s([&soc](check::TestInitiator& cpu) {
    unsigned char b[64];
    std::memset(b, 0xEE, sizeof b);
    CHECK_EQ(cpu.debug(tlm::TLM_READ_COMMAND, CheckedSoc::kRegs, b, 32), 32u);
    CHECK_EQ(word(b + Acc::kId), Acc::kIdValue);
    CHECK_EQ(word(b + Acc::kVersion), Acc::kVersionValue);
    CHECK_EQ(word(b + Acc::kCtrl), Acc::kCtrlIrqEnable);
    CHECK_EQ(word(b + Acc::kIrqAck), 0u);  // write-only
    CHECK_EQ(word(b + Acc::kErrorIndex), Acc::kNoIndex);
    CHECK_EQ(word(b + Acc::kDmaChannels), 2u);
    // unaligned, odd lengths, across holes (0x03C, 0x048..0x0FC)
    CHECK_EQ(cpu.debug(tlm::TLM_READ_COMMAND, CheckedSoc::kRegs + 1, b, 3), 3u);
    CHECK_EQ(int(b[0]), 0x54);  // bytes 1..3 of "ATTN" = 0x4154544E
    CHECK_EQ(int(b[2]), 0x41);
    CHECK_EQ(cpu.debug(tlm::TLM_READ_COMMAND, CheckedSoc::kRegs + 0x038, b, 20), 20u);
    CHECK_EQ(word(b), 512u * 1024u);
    CHECK_EQ(word(b + 4), 0u);  // hole
    CHECK_EQ(word(b + 8), 0u);  // OFFCHIP_SIZE_LO
    CHECK_EQ(word(b + 12), 1u);
    CHECK_EQ(word(b + 16), 0u);  // hole
    // up to the end of the register file, not beyond
    CHECK_EQ(cpu.debug(tlm::TLM_READ_COMMAND, CheckedSoc::kRegs + 0x3F0, b, 64), 16u);
    CHECK(soc->acc.state() == Acc::State::idle);
    CHECK(!soc->irq.read());
  });
  soc = &s;
  sc_core::sc_start();
  CHECK(s.cpu.finished());
  CHECK_EQ(s.checker.violations(), 0u);
}

// After an execution error the interrupt waits for every command counted as done: CYCLES is at
// least EXEC_CYCLES. Record 0 loads 8 KiB (hundreds of ns); record 1, on the other channel,
// reads outside the mapped memory and fails at once.
TEST_CASE(interrupt_after_an_execution_error_follows_counted_work) {
  CheckedSoc* soc = nullptr;
  sc_core::sc_time raised;
  CheckedSoc s([&](check::TestInitiator& cpu) {
    const std::vector<TraceOp> job = {transfer(OpKind::load, 0, 64, 128, 0x10000, kSram),
                                      transfer(OpKind::load, 1, 16, 128, std::uint64_t{2} << 30,
                                               kSram + 0x4000)};
    std::vector<unsigned char> bytes = as_bytes(job);
    CHECK_EQ(cpu.write(0x8000, bytes.data(), static_cast<unsigned>(bytes.size())).status, tlm::TLM_OK_RESPONSE);
    auto w = [&cpu](std::uint32_t off, std::uint32_t v) {
      unsigned char b[4];
      std::memcpy(b, &v, 4);
      const check::TransportResult r = cpu.write(CheckedSoc::kRegs + off, b, 4);
      CHECK_EQ(r.status, tlm::TLM_OK_RESPONSE);
      sc_core::wait(r.delay);
    };
    auto r64 = [&cpu](std::uint32_t off) {
      unsigned char b[8];
      cpu.read(CheckedSoc::kRegs + off, b, 4);
      cpu.read(CheckedSoc::kRegs + off + 4, b + 4, 4);
      std::uint64_t v;
      std::memcpy(&v, b, 8);
      return v;
    };
    w(Acc::kCommandBaseLo, 0x8000);
    w(Acc::kCommandCount, 2);
    w(Acc::kCtrl, Acc::kCtrlStart | Acc::kCtrlIrqEnable);
    if (!soc->irq.read()) sc_core::wait(sc_core::sc_time(1, sc_core::SC_MS), soc->irq.posedge_event());
    CHECK(soc->irq.read());
    raised = sc_core::sc_time_stamp();
    const Acc& acc = soc->acc;
    CHECK(acc.error_code() == Acc::Error::execution);
    CHECK_EQ(acc.metrics().engine(0).ops, 1u);
    const std::uint64_t cycles = r64(Acc::kCyclesLo), exec = r64(Acc::kExecCyclesLo);
    CHECK(exec > 100);
    CHECK(cycles >= exec);
    CHECK(acc.completion_time() >= tlm_models::from_ticks(acc.metrics().last_done()));
    CHECK(raised >= acc.completion_time());
  });
  soc = &s;
  sc_core::sc_start();
  CHECK(s.cpu.finished());
}

CHECK_MAIN
