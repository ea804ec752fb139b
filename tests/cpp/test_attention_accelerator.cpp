// AttentionAccelerator as a memory-mapped device: every register's reset value and access rule,
// the exact TLM response of each illegal access, debug transport, and command streams that run
// to completion (interrupt, consistent counters, data really moved through sys_port) or fail
// with the documented error code; streams longer than a fetch block execute while they are
// fetched, and errors in the middle of a stream leave the rest of the SoC running.
#include <cstdint>
#include <cstring>
#include <vector>

#include <systemc>
#include <tlm>

#include "accelerator_soc.h"
#include "check.h"
#include "protocol_checks.h"
#include "tlm_models/attention_accelerator.h"
#include "tlm_models/hbm.h"
#include "tlm_models/interconnect.h"
#include "tlm_models/protocol_checker.h"

namespace {

using tlm_models::AttentionAccelerator;
using tlm_models::TraceOp;
using Acc = AttentionAccelerator;

constexpr std::uint64_t kSram = std::uint64_t{1} << 32;
constexpr std::uint64_t kStream = 0x8000;  // command stream in system memory
constexpr std::uint64_t kQ = 0x10000, kK = 0x20000, kP = 0x30000, kQCopy = 0x40000;

using Soc = AcceleratorSoc<check::TestInitiator>;
constexpr std::uint64_t kRegs = Soc::kRegs;  // the accelerator's registers on the bus

// Register accesses wait for their annotated delay, as a CPU model that syncs on device
// accesses does, so side effects have happened when the next access is issued.
tlm::tlm_response_status write32(check::TestInitiator& cpu, std::uint32_t off, std::uint32_t v,
                                 unsigned len = 4) {
  unsigned char b[8] = {};
  std::memcpy(b, &v, 4);
  const check::TransportResult r = cpu.write(kRegs + off, b, len);
  sc_core::wait(r.delay);
  return r.status;
}

std::uint32_t read32(check::TestInitiator& cpu, std::uint32_t off) {
  unsigned char b[4] = {};
  const check::TransportResult r = cpu.read(kRegs + off, b, 4);
  CHECK_EQ(r.status, tlm::TLM_OK_RESPONSE);
  sc_core::wait(r.delay);
  std::uint32_t v;
  std::memcpy(&v, b, 4);
  return v;
}

std::uint64_t read64(check::TestInitiator& cpu, std::uint32_t lo_off) {
  return read32(cpu, lo_off) | std::uint64_t{read32(cpu, lo_off + 4)} << 32;
}

TraceOp op(tlm_models::OpKind kind, std::uint8_t engine, std::uint32_t m, std::uint32_t n,
           std::uint32_t k, std::uint64_t src0, std::uint64_t src1, std::uint64_t dst,
           std::uint32_t dep0 = 0, std::uint32_t dep1 = 0) {
  TraceOp o = tlm_models::make_op(kind, engine, m, n, k, src0, src1, dst);
  o.deps[0] = dep0;
  o.deps[1] = dep1;
  return o;
}

// Engines of the default accelerator: dma0 = 0, dma1 = 1, pe = 2, exp = 3.
// S = Q K^T on a 16 x 64 block, P = exp(S - rowmax S), P and a copy of Q stored back.
// Loads 2 x 2048 B; stores 512 + 2048 B.
std::vector<TraceOp> attention_block() {
  using tlm_models::OpKind;
  const std::uint64_t qs = kSram, ks = kSram + 0x1000, s = kSram + 0x2000, m = kSram + 0x3000,
                      p = kSram + 0x4000;
  std::vector<TraceOp> t;
  t.push_back(op(OpKind::load, 0, 16, 128, 0, kQ, 0, qs));
  t.back().tensor = 0;
  t.push_back(op(OpKind::load, 0, 16, 128, 0, kK, 0, ks));
  t.back().tensor = 1;
  t.push_back(op(OpKind::matmul, 2, 16, 16, 64, qs, ks, s, 2, 1));
  t.back().code = tlm_models::kMatmulTransB;
  t.push_back(op(OpKind::vector, 2, 16, 16, 0, s, 0, m, 1));
  t.back().code = static_cast<std::uint8_t>(tlm_models::VectorOp::rowmax);
  t.push_back(op(OpKind::vector, 2, 16, 16, 0, s, m, s, 1));
  t.back().code = static_cast<std::uint8_t>(tlm_models::VectorOp::sub) |
                  static_cast<std::uint8_t>(tlm_models::Broadcast::row) << tlm_models::kBroadcastShift;
  t.push_back(op(OpKind::exp, 3, 16, 16, 0, s, 0, p, 1));
  t.push_back(op(OpKind::store, 1, 16, 32, 0, p, 0, kP, 1));
  t.back().tensor = 2;
  t.push_back(op(OpKind::store, 1, 16, 128, 0, qs, 0, kQCopy, 7));
  t.back().tensor = 0;
  return t;
}

void put_stream(check::TestInitiator& cpu, const std::vector<TraceOp>& ops) {
  std::vector<unsigned char> bytes(ops.size() * sizeof(TraceOp));
  std::memcpy(bytes.data(), ops.data(), bytes.size());
  CHECK_EQ(cpu.write(kStream, bytes.data(), static_cast<unsigned>(bytes.size())).status,
           tlm::TLM_OK_RESPONSE);
}

void put_tensors(check::TestInitiator& cpu) {
  std::vector<unsigned char> q(2048), k(2048);
  for (unsigned i = 0; i < 2048; ++i) {
    q[i] = static_cast<unsigned char>(i * 7 + 1);
    k[i] = static_cast<unsigned char>(i * 3 + 5);
  }
  cpu.write(kQ, q.data(), 2048);
  cpu.write(kK, k.data(), 2048);
}

// Programs and starts a stream, then waits for the interrupt (at most 1 ms).
bool run_stream(check::TestInitiator& cpu, Soc& soc, std::uint32_t count) {
  CHECK_EQ(write32(cpu, Acc::kCommandBaseLo, static_cast<std::uint32_t>(kStream)), tlm::TLM_OK_RESPONSE);
  CHECK_EQ(write32(cpu, Acc::kCommandBaseHi, 0), tlm::TLM_OK_RESPONSE);
  CHECK_EQ(write32(cpu, Acc::kCommandCount, count), tlm::TLM_OK_RESPONSE);
  CHECK_EQ(write32(cpu, Acc::kCtrl, Acc::kCtrlStart | Acc::kCtrlIrqEnable), tlm::TLM_OK_RESPONSE);
  if (!soc.irq.read()) sc_core::wait(sc_core::sc_time(1, sc_core::SC_MS), soc.irq.posedge_event());
  return soc.irq.read();
}

void acknowledge(check::TestInitiator& cpu, Soc& soc) {
  CHECK_EQ(write32(cpu, Acc::kIrqAck, 1), tlm::TLM_OK_RESPONSE);
  sc_core::wait(10, sc_core::SC_NS);

  CHECK(!soc.irq.read());
  CHECK_EQ(read32(cpu, Acc::kStatus) & Acc::kStatusIrqPending, 0u);
}

const std::uint32_t kCounterPairs[] = {Acc::kCyclesLo,       Acc::kBytesReadLo,   Acc::kBytesWrittenLo,
                                       Acc::kOpsLo,          Acc::kStallCyclesLo, Acc::kExecCyclesLo,
                                       Acc::kFetchBytesLo,   Acc::kFetchCyclesLo};

// `blocks` copies of attention_block() back to back (its dependencies stay inside a copy).
std::vector<TraceOp> repeated_blocks(unsigned blocks) {
  std::vector<TraceOp> ops;
  for (unsigned i = 0; i < blocks; ++i) {
    const std::vector<TraceOp> b = attention_block();
    ops.insert(ops.end(), b.begin(), b.end());
  }
  return ops;
}

}  // namespace

TEST_CASE(reset_values) {
  Soc* soc = nullptr;
  Soc s([&soc](check::TestInitiator& cpu) {
    CHECK_EQ(read32(cpu, Acc::kId), 0x4154544Eu);
    CHECK_EQ(read32(cpu, Acc::kVersion), 0x00010001u);
    CHECK_EQ(read32(cpu, Acc::kCtrl), Acc::kCtrlIrqEnable);
    CHECK_EQ(read32(cpu, Acc::kStatus), 0u);
    CHECK_EQ(read32(cpu, Acc::kErrorCode), 0u);
    CHECK_EQ(read32(cpu, Acc::kErrorIndex), 0xFFFFFFFFu);
    CHECK_EQ(read32(cpu, Acc::kDmaChannels), 2u);
    CHECK_EQ(read32(cpu, Acc::kCommandBaseLo), 0u);
    CHECK_EQ(read32(cpu, Acc::kCommandBaseHi), 0u);
    CHECK_EQ(read32(cpu, Acc::kCommandCount), 0u);
    CHECK_EQ(read32(cpu, Acc::kWindow), 65536u);
    CHECK_EQ(read32(cpu, Acc::kSramBaseLo), 0u);
    CHECK_EQ(read32(cpu, Acc::kSramBaseHi), 1u);
    CHECK_EQ(read32(cpu, Acc::kSramSize), 512u * 1024u);
    CHECK_EQ(read32(cpu, Acc::kOffchipSizeLo), 0u);
    CHECK_EQ(read32(cpu, Acc::kOffchipSizeHi), 1u);
    for (std::uint32_t lo : kCounterPairs) CHECK_EQ(read64(cpu, lo), 0u);
    for (std::uint32_t e = 0; e < 4; ++e) {
      CHECK_EQ(read64(cpu, Acc::kEngineBusyLo + 8 * e), 0u);
      CHECK_EQ(read64(cpu, Acc::kEngineStallLo + 8 * e), 0u);
    }
    CHECK(!soc->irq.read());
  });
  soc = &s;
  s.run();
}

TEST_CASE(read_write_registers) {
  Soc s([](check::TestInitiator& cpu) {
    const std::uint32_t rw[] = {Acc::kCommandBaseLo, Acc::kCommandBaseHi, Acc::kCommandCount,
                                Acc::kWindow};
    std::uint32_t value = 0x12345678;
    for (std::uint32_t off : rw) {
      CHECK_EQ(write32(cpu, off, value), tlm::TLM_OK_RESPONSE);
      CHECK_EQ(read32(cpu, off), value);
      value += 0x01010101;
    }
    // CTRL: IRQ_EN reads back, START reads as 0 and other bits are dropped.
    CHECK_EQ(write32(cpu, Acc::kCtrl, 0xFFFFFFF0u), tlm::TLM_OK_RESPONSE);
    CHECK_EQ(read32(cpu, Acc::kCtrl), 0u);
    CHECK_EQ(write32(cpu, Acc::kCtrl, Acc::kCtrlIrqEnable), tlm::TLM_OK_RESPONSE);
    CHECK_EQ(read32(cpu, Acc::kCtrl), Acc::kCtrlIrqEnable);
  });
  s.run();
}

TEST_CASE(read_only_and_write_only_registers) {
  Soc s([](check::TestInitiator& cpu) {
    const std::uint32_t ro[] = {Acc::kId,         Acc::kVersion,    Acc::kStatus,
                                Acc::kErrorCode,  Acc::kErrorIndex, Acc::kDmaChannels,
                                Acc::kSramBaseLo, Acc::kSramBaseHi, Acc::kSramSize,
                                Acc::kOffchipSizeLo, Acc::kOffchipSizeHi};
    for (std::uint32_t off : ro) {
      const std::uint32_t before = read32(cpu, off);
      CHECK_EQ(write32(cpu, off, ~before), tlm::TLM_COMMAND_ERROR_RESPONSE);
      CHECK_EQ(read32(cpu, off), before);
    }
    for (std::uint32_t lo : kCounterPairs) {
      CHECK_EQ(write32(cpu, lo, 1), tlm::TLM_COMMAND_ERROR_RESPONSE);
      CHECK_EQ(write32(cpu, lo + 4, 1), tlm::TLM_COMMAND_ERROR_RESPONSE);
    }
    CHECK_EQ(write32(cpu, Acc::kEngineBusyLo + 8 * 3 + 4, 1), tlm::TLM_COMMAND_ERROR_RESPONSE);
    CHECK_EQ(write32(cpu, Acc::kEngineStallLo, 1), tlm::TLM_COMMAND_ERROR_RESPONSE);
    unsigned char b[4];
    CHECK_EQ(cpu.read(kRegs + Acc::kIrqAck, b, 4).status, tlm::TLM_COMMAND_ERROR_RESPONSE);
    CHECK_EQ(write32(cpu, Acc::kIrqAck, 1), tlm::TLM_OK_RESPONSE);
  });
  s.run();
}

TEST_CASE(illegal_accesses) {
  Soc s([](check::TestInitiator& cpu) {
    unsigned char b[8] = {};
    // width other than 4 bytes
    CHECK_EQ(cpu.read(kRegs + Acc::kId, b, 8).status, tlm::TLM_BURST_ERROR_RESPONSE);
    CHECK_EQ(cpu.read(kRegs + Acc::kId, b, 2).status, tlm::TLM_BURST_ERROR_RESPONSE);
    CHECK_EQ(write32(cpu, Acc::kCommandCount, 5, 8), tlm::TLM_BURST_ERROR_RESPONSE);
    CHECK_EQ(read32(cpu, Acc::kCommandCount), 0u);
    // streaming (width below the length) is a burst error too
    CHECK_EQ(cpu.transport(tlm::TLM_READ_COMMAND, kRegs + Acc::kId, b, 4, sc_core::SC_ZERO_TIME,
                           nullptr, 0, 2).status,
             tlm::TLM_BURST_ERROR_RESPONSE);
    // unmapped and misaligned offsets
    const std::uint32_t holes[] = {0x03C, 0x048, 0x0FC, 0x140, 0x220, 0x320, 0x3FC, 0x400, 0xFFC};
    for (std::uint32_t off : holes) {
      CHECK_EQ(cpu.read(kRegs + off, b, 4).status, tlm::TLM_ADDRESS_ERROR_RESPONSE);
      CHECK_EQ(write32(cpu, off, 1), tlm::TLM_ADDRESS_ERROR_RESPONSE);
    }
    CHECK_EQ(cpu.read(kRegs + 2, b, 4).status, tlm::TLM_ADDRESS_ERROR_RESPONSE);
    // byte enables
    unsigned char be[4] = {0xff, 0xff, 0, 0};
    CHECK_EQ(cpu.transport(tlm::TLM_WRITE_COMMAND, kRegs + Acc::kWindow, b, 4,
                           sc_core::SC_ZERO_TIME, be, 4).status,
             tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
    CHECK_EQ(read32(cpu, Acc::kWindow), 65536u);
    // TLM_IGNORE_COMMAND is accepted and does nothing
    CHECK_EQ(cpu.transport(tlm::TLM_IGNORE_COMMAND, kRegs + Acc::kCommandCount, b, 4).status,
             tlm::TLM_OK_RESPONSE);
  });
  s.run();
}

TEST_CASE(register_access_takes_time) {
  Soc s([](check::TestInitiator& cpu) {
    unsigned char b[4];
    const sc_core::sc_time d = cpu.read(kRegs + Acc::kId, b, 4).delay;
    // the bus's hops plus the register latency
    CHECK(d >= sc_core::sc_time(1, sc_core::SC_NS));
  });
  s.run();
}

TEST_CASE(debug_transport) {
  Soc* soc = nullptr;
  Soc s([&soc](check::TestInitiator& cpu) {
    unsigned char b[8] = {};
    CHECK_EQ(cpu.debug(tlm::TLM_READ_COMMAND, kRegs + Acc::kId, b, 8), 8u);
    std::uint32_t id, version;
    std::memcpy(&id, b, 4);
    std::memcpy(&version, b + 4, 4);
    CHECK_EQ(id, 0x4154544Eu);
    CHECK_EQ(version, 0x00010001u);
    std::uint32_t v = 77;
    std::memcpy(b, &v, 4);
    CHECK_EQ(cpu.debug(tlm::TLM_WRITE_COMMAND, kRegs + Acc::kCommandCount, b, 4), 4u);
    CHECK_EQ(read32(cpu, Acc::kCommandCount), 77u);
    // read-only registers are not written, and a debug START starts nothing
    CHECK_EQ(cpu.debug(tlm::TLM_WRITE_COMMAND, kRegs + Acc::kId, b, 4), 0u);
    v = Acc::kCtrlStart | Acc::kCtrlIrqEnable;
    std::memcpy(b, &v, 4);
    CHECK_EQ(cpu.debug(tlm::TLM_WRITE_COMMAND, kRegs + Acc::kCtrl, b, 4), 4u);
    sc_core::wait(1, sc_core::SC_US);
    CHECK_EQ(read32(cpu, Acc::kStatus), 0u);
    CHECK(soc->acc.state() == Acc::State::idle);
    // a debug read answers in full, a hole reading as 0 (tests/cpp/test_vp_robustness.cpp)
    CHECK_EQ(cpu.debug(tlm::TLM_READ_COMMAND, kRegs + 0x038, b, 8), 8u);
    std::memcpy(&v, b + 4, 4);
    CHECK_EQ(v, 0u);
  });
  soc = &s;
  s.run();
}

TEST_CASE(stream_runs_to_completion) {
  Soc* soc = nullptr;
  Soc s([&soc](check::TestInitiator& cpu) {
    const std::vector<TraceOp> ops = attention_block();
    put_tensors(cpu);
    put_stream(cpu, ops);
    const sc_core::sc_time started = sc_core::sc_time_stamp();
    CHECK(run_stream(cpu, *soc, static_cast<std::uint32_t>(ops.size())));
    const sc_core::sc_time raised = sc_core::sc_time_stamp();
    CHECK_EQ(read32(cpu, Acc::kStatus),
             static_cast<std::uint32_t>(Acc::State::done) | Acc::kStatusIrqPending);
    CHECK_EQ(read32(cpu, Acc::kErrorCode), 0u);

    std::uint64_t loads = 0, stores = 0;
    for (const TraceOp& o : ops)
      (o.kind == static_cast<std::uint8_t>(tlm_models::OpKind::load) ? loads : stores) +=
          o.kind <= 2 ? tlm_models::transfer_bytes(o) : 0;
    CHECK_EQ(loads, 4096u);
    CHECK_EQ(read64(cpu, Acc::kBytesReadLo), loads);
    CHECK_EQ(read64(cpu, Acc::kBytesWrittenLo), stores);
    CHECK_EQ(read64(cpu, Acc::kOpsLo), ops.size());

    const std::uint64_t cycles = read64(cpu, Acc::kCyclesLo);
    const std::uint64_t exec = read64(cpu, Acc::kExecCyclesLo);
    const std::uint64_t stall = read64(cpu, Acc::kStallCyclesLo);
    CHECK(cycles > 0);
    CHECK(exec > 0 && exec <= cycles);
    CHECK(stall > 0 && stall < exec);  // the loads come before any compute
    // CYCLES spans START to the interrupt, at 1 GHz
    CHECK(sc_core::sc_time(static_cast<double>(cycles), sc_core::SC_NS) <= raised - started);
    std::uint64_t busy_sum = 0;
    for (std::uint32_t e = 0; e < 4; ++e) {
      const std::uint64_t busy = read64(cpu, Acc::kEngineBusyLo + 8 * e);
      CHECK(busy > 0);
      CHECK(busy <= exec);
      CHECK(read64(cpu, Acc::kEngineStallLo + 8 * e) <= exec);
      busy_sum += busy;
    }
    CHECK(busy_sum >= exec);  // every instant of the execution has some engine busy
    // the exact measurements agree with the registers
    const auto& m = soc->acc.metrics();
    CHECK_EQ(m.offchip_read(), loads);
    CHECK_EQ(m.engine(2).ops, 3u);
    CHECK_EQ(m.tensor(0).read, 2048u);
    CHECK_EQ(m.tensor(0).write, 2048u);

    // data moved through sys_port: the stored copy of Q equals Q
    std::vector<unsigned char> q(2048), copy(2048);
    cpu.read(kQ, q.data(), 2048);
    cpu.read(kQCopy, copy.data(), 2048);
    CHECK(q == copy);
    CHECK_EQ(int(copy[5]), 36);

    acknowledge(cpu, *soc);
    CHECK_EQ(read32(cpu, Acc::kStatus), static_cast<std::uint32_t>(Acc::State::done));
    CHECK_EQ(read64(cpu, Acc::kBytesReadLo), loads);  // counters stay latched

    // one command stream per simulation
    CHECK(run_stream(cpu, *soc, static_cast<std::uint32_t>(ops.size())));
    CHECK_EQ(read32(cpu, Acc::kErrorCode), static_cast<std::uint32_t>(Acc::Error::spent));
    CHECK_EQ(read32(cpu, Acc::kStatus) & 3u, static_cast<std::uint32_t>(Acc::State::error));
  });
  soc = &s;
  s.run();
}

TEST_CASE(rejected_command_then_a_good_stream) {
  Soc* soc = nullptr;
  Soc s([&soc](check::TestInitiator& cpu) {
    std::vector<TraceOp> ops = attention_block();
    put_tensors(cpu);
    std::vector<TraceOp> bad = ops;
    bad[5].engine = 1;  // an exp on a DMA channel
    put_stream(cpu, bad);
    CHECK(run_stream(cpu, *soc, static_cast<std::uint32_t>(bad.size())));
    CHECK_EQ(read32(cpu, Acc::kStatus),
             static_cast<std::uint32_t>(Acc::State::error) | Acc::kStatusIrqPending);
    CHECK_EQ(read32(cpu, Acc::kErrorCode), static_cast<std::uint32_t>(Acc::Error::bad_command));
    CHECK_EQ(read32(cpu, Acc::kErrorIndex), 5u);
    CHECK(soc->acc.error_message().find("cannot run on dma1") != std::string::npos);
    acknowledge(cpu, *soc);

    bad = ops;
    bad[3].dst = 0x100;  // a PE result outside the SRAM
    put_stream(cpu, bad);
    CHECK(run_stream(cpu, *soc, static_cast<std::uint32_t>(bad.size())));
    CHECK_EQ(read32(cpu, Acc::kErrorCode), static_cast<std::uint32_t>(Acc::Error::bad_command));
    CHECK_EQ(read32(cpu, Acc::kErrorIndex), 3u);
    acknowledge(cpu, *soc);

    put_stream(cpu, ops);
    CHECK(run_stream(cpu, *soc, static_cast<std::uint32_t>(ops.size())));
    CHECK_EQ(read32(cpu, Acc::kErrorCode), 0u);
    CHECK_EQ(read32(cpu, Acc::kErrorIndex), 0xFFFFFFFFu);
    CHECK_EQ(read64(cpu, Acc::kBytesReadLo), 4096u);
  });
  soc = &s;
  s.run();
}

TEST_CASE(bad_configuration_and_fetch_errors) {
  Soc* soc = nullptr;
  Soc s([&soc](check::TestInitiator& cpu) {
    CHECK(run_stream(cpu, *soc, 0));  // COMMAND_COUNT 0
    CHECK_EQ(read32(cpu, Acc::kErrorCode), static_cast<std::uint32_t>(Acc::Error::bad_config));
    acknowledge(cpu, *soc);
    CHECK_EQ(write32(cpu, Acc::kWindow, 0), tlm::TLM_OK_RESPONSE);
    CHECK(run_stream(cpu, *soc, 4));
    CHECK_EQ(read32(cpu, Acc::kErrorCode), static_cast<std::uint32_t>(Acc::Error::bad_config));
    acknowledge(cpu, *soc);
    CHECK_EQ(write32(cpu, Acc::kWindow, 16), tlm::TLM_OK_RESPONSE);
    // a stream outside the off-chip window: the fetch gets an address error
    CHECK_EQ(write32(cpu, Acc::kCommandBaseLo, 0), tlm::TLM_OK_RESPONSE);
    CHECK_EQ(write32(cpu, Acc::kCommandBaseHi, 0x100), tlm::TLM_OK_RESPONSE);
    CHECK_EQ(write32(cpu, Acc::kCommandCount, 4), tlm::TLM_OK_RESPONSE);
    CHECK_EQ(write32(cpu, Acc::kCtrl, Acc::kCtrlStart | Acc::kCtrlIrqEnable), tlm::TLM_OK_RESPONSE);
    sc_core::wait(sc_core::sc_time(1, sc_core::SC_MS), soc->irq.posedge_event());
    CHECK(soc->irq.read());
    CHECK_EQ(read32(cpu, Acc::kErrorCode), static_cast<std::uint32_t>(Acc::Error::fetch));
    CHECK_EQ(read32(cpu, Acc::kErrorIndex), 0u);
  });
  soc = &s;
  s.run();
}

TEST_CASE(interrupt_enable_masks_the_line) {
  Soc* soc = nullptr;
  Soc s([&soc](check::TestInitiator& cpu) {
    const std::vector<TraceOp> ops = attention_block();
    put_stream(cpu, ops);
    CHECK_EQ(write32(cpu, Acc::kCommandBaseLo, static_cast<std::uint32_t>(kStream)), tlm::TLM_OK_RESPONSE);
    CHECK_EQ(write32(cpu, Acc::kCommandCount, static_cast<std::uint32_t>(ops.size())), tlm::TLM_OK_RESPONSE);
    CHECK_EQ(write32(cpu, Acc::kCtrl, Acc::kCtrlStart), tlm::TLM_OK_RESPONSE);
    CHECK_EQ(read32(cpu, Acc::kStatus), static_cast<std::uint32_t>(Acc::State::busy));
    while ((read32(cpu, Acc::kStatus) & 3u) == static_cast<std::uint32_t>(Acc::State::busy))
      sc_core::wait(100, sc_core::SC_NS);
    CHECK_EQ(read32(cpu, Acc::kStatus),
             static_cast<std::uint32_t>(Acc::State::done) | Acc::kStatusIrqPending);
    CHECK(!soc->irq.read());
    CHECK_EQ(write32(cpu, Acc::kCtrl, Acc::kCtrlIrqEnable), tlm::TLM_OK_RESPONSE);
    sc_core::wait(10, sc_core::SC_NS);
    CHECK(soc->irq.read());
    acknowledge(cpu, *soc);
  });
  soc = &s;
  s.run();
}

// 25 x 8 = 200 records, four fetch blocks of 64: execution begins after the first block and
// the later blocks are fetched while it runs.
TEST_CASE(streamed_fetch_overlaps_execution) {
  Soc* soc = nullptr;
  Soc s([&soc](check::TestInitiator& cpu) {
    const std::vector<TraceOp> ops = repeated_blocks(25);
    put_tensors(cpu);
    put_stream(cpu, ops);
    CHECK(run_stream(cpu, *soc, static_cast<std::uint32_t>(ops.size())));
    CHECK_EQ(read32(cpu, Acc::kStatus),
             static_cast<std::uint32_t>(Acc::State::done) | Acc::kStatusIrqPending);
    CHECK_EQ(read32(cpu, Acc::kErrorCode), 0u);
    CHECK_EQ(read64(cpu, Acc::kOpsLo), 200u);
    CHECK_EQ(read64(cpu, Acc::kBytesReadLo), 25u * 4096u);
    CHECK_EQ(read64(cpu, Acc::kBytesWrittenLo), 25u * (512u + 2048u));
    CHECK_EQ(read64(cpu, Acc::kFetchBytesLo), 200u * 64u);
    const std::uint64_t cycles = read64(cpu, Acc::kCyclesLo);
    const std::uint64_t exec = read64(cpu, Acc::kExecCyclesLo);
    const std::uint64_t fetch = read64(cpu, Acc::kFetchCyclesLo);
    CHECK(fetch > 0);
    // Fetch-then-execute would take at least fetch + exec.
    CHECK(cycles < fetch + exec);
    const Acc& acc = soc->acc;
    // The first command started before the fetch had taken all of its time: while blocks
    // 2..4 were still to be read.
    const sc_core::sc_time first = tlm_models::from_ticks(acc.metrics().first_start());
    CHECK(first > acc.start_time());
    CHECK(first - acc.start_time() < sc_core::sc_time(static_cast<double>(fetch), sc_core::SC_NS));
    CHECK_EQ(acc.metrics().engine(2).ops, 75u);
    tlm_models::StatsGroup g("acc");
    acc.collect_stats(g);
    CHECK_EQ(g.find("commands")->value, 200.0);
    CHECK_EQ(g.find("fetch_bytes")->value, 12800.0);
    std::vector<unsigned char> q(2048), copy(2048);
    cpu.read(kQ, q.data(), 2048);
    cpu.read(kQCopy, copy.data(), 2048);
    CHECK(q == copy);
    acknowledge(cpu, *soc);
  });
  soc = &s;
  s.run();
}

// A record rejected in the third fetch block: the 150 commands before it execute, then the
// error is reported; the stream has started, so the accelerator is spent.
TEST_CASE(rejected_command_mid_stream) {
  Soc* soc = nullptr;
  Soc s([&soc](check::TestInitiator& cpu) {
    std::vector<TraceOp> ops = repeated_blocks(25);
    ops[150].engine = 3;  // pattern position 6, a store, on the Exp unit
    put_tensors(cpu);
    put_stream(cpu, ops);
    CHECK(run_stream(cpu, *soc, static_cast<std::uint32_t>(ops.size())));
    CHECK_EQ(read32(cpu, Acc::kStatus),
             static_cast<std::uint32_t>(Acc::State::error) | Acc::kStatusIrqPending);
    CHECK_EQ(read32(cpu, Acc::kErrorCode), static_cast<std::uint32_t>(Acc::Error::bad_command));
    CHECK_EQ(read32(cpu, Acc::kErrorIndex), 150u);
    CHECK_EQ(soc->acc.error_message(), std::string("a store cannot run on exp"));
    CHECK_EQ(read64(cpu, Acc::kOpsLo), 150u);
    CHECK_EQ(read64(cpu, Acc::kFetchBytesLo), 192u * 64u);  // three blocks were read
    acknowledge(cpu, *soc);
    CHECK(run_stream(cpu, *soc, static_cast<std::uint32_t>(ops.size())));
    CHECK_EQ(read32(cpu, Acc::kErrorCode), static_cast<std::uint32_t>(Acc::Error::spent));
  });
  soc = &s;
  s.run();
}

// A load from an address inside the off-chip window that nothing on the system bus answers
// (the test SoC maps 1 GiB): the DMA fails while executing record 72. ERROR_CODE and ERROR_INDEX
// say so, the interrupt rises, and the simulation goes on: the CPU reads the registers, and
// later ones, at its own pace.
TEST_CASE(execution_error_mid_stream_keeps_the_soc_running) {
  Soc* soc = nullptr;
  Soc s([&soc](check::TestInitiator& cpu) {
    std::vector<TraceOp> ops = repeated_blocks(25);
    ops[72].src0 = std::uint64_t{2} << 30;
    put_tensors(cpu);
    put_stream(cpu, ops);
    CHECK(run_stream(cpu, *soc, static_cast<std::uint32_t>(ops.size())));
    const sc_core::sc_time raised = sc_core::sc_time_stamp();
    CHECK_EQ(read32(cpu, Acc::kStatus),
             static_cast<std::uint32_t>(Acc::State::error) | Acc::kStatusIrqPending);
    CHECK_EQ(read32(cpu, Acc::kErrorCode), static_cast<std::uint32_t>(Acc::Error::execution));
    CHECK_EQ(read32(cpu, Acc::kErrorIndex), 72u);
    CHECK(soc->acc.error_message().find("record 72 (load on dma0)") == 0);
    CHECK(soc->acc.error_message().find("0x80000000") != std::string::npos);
    const std::uint64_t done_ops = read64(cpu, Acc::kOpsLo);
    // dma0 runs its loads in order, ahead of the compute (loads depend on nothing): every load
    // before record 72 (two per block of 8) completed, and nothing after 72 on dma0 ran.
    CHECK_EQ(soc->acc.metrics().engine(0).ops, 18u);
    CHECK(done_ops >= 18 && done_ops < 200);
    acknowledge(cpu, *soc);
    sc_core::wait(5, sc_core::SC_US);
    CHECK_EQ(read32(cpu, Acc::kId), Acc::kIdValue);
    CHECK(sc_core::sc_time_stamp() > raised + sc_core::sc_time(5, sc_core::SC_US));
    CHECK(sc_core::sc_get_status() == sc_core::SC_RUNNING);
  });
  soc = &s;
  s.run();
}

// fetch_ahead = 1 with 8-record blocks: the fetch waits for the scheduler, and a stream of many
// blocks still completes with the same operations and bytes.
TEST_CASE(small_fetch_blocks_and_a_shallow_fifo) {
  Acc::Params ap;
  ap.fetch_block = 8;
  ap.fetch_ahead = 1;
  Soc* soc = nullptr;
  Soc s(
      [&soc](check::TestInitiator& cpu) {
        const std::vector<TraceOp> ops = repeated_blocks(12);
        put_tensors(cpu);
        put_stream(cpu, ops);
        CHECK(run_stream(cpu, *soc, static_cast<std::uint32_t>(ops.size())));
        CHECK_EQ(read32(cpu, Acc::kErrorCode), 0u);
        CHECK_EQ(read64(cpu, Acc::kOpsLo), 96u);
        CHECK_EQ(read64(cpu, Acc::kBytesReadLo), 12u * 4096u);
        CHECK_EQ(read64(cpu, Acc::kFetchBytesLo), 96u * 64u);
      },
      ap);
  soc = &s;
  s.run();
}

CHECK_MAIN
