// The attention accelerator as a memory-mapped device of a virtual prototype: software places a
// command stream (64-byte trace records, trace_op.h) in system memory, programs the control
// registers on `ctrl`, and starts it; the accelerator fetches the stream through `sys_port` in
// blocks, checks every record, and executes it on its own DMA engine, PE array and Exp unit
// (driven by a Replayer) while later blocks are still being fetched; it latches performance
// counters and raises `irq`. Errors, also mid-stream, are reported through the registers and the
// interrupt; the rest of the virtual prototype keeps running. The register map, the command
// rules and the driver sequence are in docs/integration.md.
//
// Inside: DMA channels and the command fetcher share `dma_noc`, which routes the off-chip
// window [0, offchip_size) unchanged to `sys_port`, [sram_base, sram_base + capacity) to the
// internal SRAM and the KV buffer's window to the KV buffer; the PE array and the Exp unit reach
// both through `compute_noc` — the structure of platforms/attenio.yaml, whose parameters are
// Params{}'s defaults.
#ifndef TLM_MODELS_ATTENTION_ACCELERATOR_H
#define TLM_MODELS_ATTENTION_ACCELERATOR_H

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "tlm_models/block_access.h"
#include "tlm_models/dma.h"
#include "tlm_models/engine_kind.h"
#include "tlm_models/exp_unit.h"
#include "tlm_models/interconnect.h"
#include "tlm_models/operand_extents.h"
#include "tlm_models/params_check.h"
#include "tlm_models/payload_access.h"
#include "tlm_models/pe_array.h"
#include "tlm_models/replayer.h"
#include "tlm_models/sram.h"
#include "tlm_models/stats.h"
#include "tlm_models/time_ticks.h"
#include "tlm_models/trace_op.h"

namespace tlm_models {

class AttentionAccelerator : public sc_core::sc_module, public StatsProvider {
 public:
  struct Params {
    double clock = 1e9;  // Hz: the unit of the cycle counters
    std::uint64_t sram_base = std::uint64_t{1} << 32;  // bus address of the internal SRAM
    std::uint64_t offchip_size = std::uint64_t{4} << 30;  // off-chip window [0, offchip_size)
    unsigned fetch_block = 64;  // records per command-fetch read
    unsigned fetch_ahead = 2;   // fetched blocks the scheduler may not have taken yet
    unsigned max_commands = 1u << 20;  // largest COMMAND_COUNT accepted (64 B of buffer each)
    sc_core::sc_time register_latency = sc_core::sc_time(1, sc_core::SC_NS);
    // Compatibility: take a response that system memory left at TLM_INCOMPLETE_RESPONSE as
    // TLM_OK_RESPONSE (some open-source VPs' RAMs never set the status). Off by default: the
    // base protocol makes it an error, and a real error must not pass unseen. Counted in
    // incomplete_responses().
    bool accept_incomplete_response = false;
    DmaEngine::Params dma;
    PeArray::Params pe;
    ExpUnit::Params exp;
    Sram::Params sram;
    Interconnect::Params dma_noc;
    Interconnect::Params compute_noc;
    // The KV buffer: a small SRAM of its own on both NoCs at
    // [kv_buffer_base, kv_buffer_base + kv_buffer.capacity), where AttenIO keeps the row of K or
    // V that is broadcast to the PE array; has_kv_buffer = false builds none.
    bool has_kv_buffer = true;
    std::uint64_t kv_buffer_base = std::uint64_t{2} << 32;  // clear of an SRAM grown to 4 GiB
    Sram::Params kv_buffer;
    // Functional mode is the engines' (pe.functional and exp.functional, both set, in
    // pe.number_format): the PE array and the Exp unit compute each operation's values on the
    // SRAM's contents, the DMA's transactions carry Q, K, V in and O out, at the timing of
    // timing-only mode (docs/integration.md, "Functional mode"). The SRAM and the KV buffer are
    // then built with storage whatever their `storage` says.
    bool functional() const { return pe.functional; }

    // The defaults are platforms/attenio.yaml's accelerator, the AttenIO paper's machine
    // (`attn-tlm config --params platforms/attenio.yaml` generates the same values, checked by
    // tests/test_platform_params_header.py): 2 DMA channels of 8 KiB bursts x 8 outstanding, a
    // broadcast 64 x 32 PE array, 128 exp lanes, 512 KiB SRAM with two 4 KiB ports, a 256 B KV
    // buffer, dma_noc 256 B and compute_noc 8 KiB per cycle at 1 GHz. Where each value comes
    // from: the comments of platforms/attenio.yaml.
    Params() {
      dma.max_burst = 8192;
      dma.max_outstanding = 8;
      pe.mapping = "broadcast";
      sram.port_width = 4096;
      kv_buffer.capacity = 256;
      kv_buffer.banks = 1;
      kv_buffer.ports = 2;
      kv_buffer.port_width = 256;
      dma_noc.width = 256;
      compute_noc.width = 8192;
    }

    std::string check() const {
      if (!(clock > 0)) return "clock must be positive";
      if (offchip_size == 0) return "offchip_size must be at least 1 B";
      if (sram_base < offchip_size) return "sram_base must lie above the off-chip window";
      if (sram.capacity > std::numeric_limits<std::uint32_t>::max())
        return "sram.capacity must be below 4 GiB (SRAM_SIZE is a 32-bit register)";
      if (fetch_block == 0) return "fetch_block must be at least 1 record";
      if (fetch_ahead == 0) return "fetch_ahead must be at least 1 block";
      if (max_commands == 0) return "max_commands must be at least 1";
      if (has_kv_buffer) {
        if (!kv_buffer.check().empty()) return "kv_buffer: " + kv_buffer.check();
        if (kv_buffer_base < offchip_size) return "kv_buffer_base must lie above the off-chip window";
        if (kv_buffer_base < sram_base + sram.capacity && sram_base < kv_buffer_base + kv_buffer.capacity)
          return "the KV buffer's window overlaps the SRAM's";
      }
      if (pe.functional != exp.functional || pe.number_format != exp.number_format)
        return "pe and exp must agree on functional and number_format (functional mode computes "
               "on both engines)";
      if (dma.channels + 2 > kMaxEngines)
        return "dma.channels must be at most " + std::to_string(kMaxEngines - 2);
      for (const std::string& e : {dma.check(), pe.check(), exp.check(), sram.check(),
                                   dma_noc.check(), compute_noc.check()})
        if (!e.empty()) return e;
      return "";
    }
  };

  // Register offsets on `ctrl` (32-bit registers; 64-bit values as LO/HI pairs).
  enum Reg : std::uint32_t {
    kId = 0x000,
    kVersion = 0x004,
    kCtrl = 0x008,
    kStatus = 0x00C,
    kIrqAck = 0x010,
    kErrorCode = 0x014,
    kErrorIndex = 0x018,
    kDmaChannels = 0x01C,
    kCommandBaseLo = 0x020,
    kCommandBaseHi = 0x024,
    kCommandCount = 0x028,
    kWindow = 0x02C,
    kSramBaseLo = 0x030,
    kSramBaseHi = 0x034,
    kSramSize = 0x038,
    kOffchipSizeLo = 0x040,
    kOffchipSizeHi = 0x044,
    kCyclesLo = 0x100,
    kBytesReadLo = 0x108,
    kBytesWrittenLo = 0x110,
    kOpsLo = 0x118,
    kStallCyclesLo = 0x120,
    kExecCyclesLo = 0x128,
    kFetchBytesLo = 0x130,
    kFetchCyclesLo = 0x138,
    kEngineBusyLo = 0x200,   // + 8 * engine index
    kEngineStallLo = 0x300,  // + 8 * engine index
    kRegisterSpace = 0x400,
  };
  static constexpr std::uint32_t kIdValue = 0x4154544E;  // "ATTN"
  static constexpr std::uint32_t kVersionValue = 0x00010001;  // 1.1: fetch counters
  static constexpr std::uint32_t kCtrlStart = 0x1;
  static constexpr std::uint32_t kCtrlIrqEnable = 0x2;
  static constexpr std::uint32_t kStatusIrqPending = 0x10;
  static constexpr std::uint32_t kNoIndex = 0xFFFFFFFF;
  static constexpr unsigned kMaxEngines = 32;

  enum class State : std::uint32_t { idle = 0, busy = 1, done = 2, error = 3 };
  enum class Error : std::uint32_t {
    none = 0,
    bad_config = 1,   // COMMAND_COUNT 0 or above max_commands, WINDOW 0, base not 64-B aligned
    fetch = 2,        // the command fetch got an error response from system memory
    bad_command = 3,  // a record was rejected (ERROR_INDEX names it)
    execution = 4,    // an engine failed while executing (ERROR_INDEX names the record)
    spent = 5,        // START after a completed stream: one stream per simulation
  };

  tlm_utils::simple_target_socket<AttentionAccelerator> ctrl;
  tlm_utils::simple_initiator_socket<AttentionAccelerator> sys_port;
  sc_core::sc_out<bool> irq;

  AttentionAccelerator(sc_core::sc_module_name name, const Params& p)
      : sc_core::sc_module(name),
        ctrl("ctrl"),
        sys_port("sys_port"),
        irq("irq"),
        p_(checked(p, this->name())),
        period_(period_ticks(p.clock)),
        dma_("dma", p.dma),
        pe_("pe", p.pe),
        exp_("exp", p.exp),
        sram_("sram", stored(p.sram, p.functional())),
        dma_noc_("dma_noc", p.dma_noc),
        compute_noc_("compute_noc", p.compute_noc),
        replayer_("replayer"),
        sys_bridge_("sys_bridge"),
        fetch_port_("fetch_port"),
        fetch_(fetch_port_, std::string(this->name()) + ".fetch") {
    ctrl.register_b_transport(this, &AttentionAccelerator::ctrl_b_transport);
    ctrl.register_transport_dbg(this, &AttentionAccelerator::ctrl_transport_dbg);
    sys_bridge_.register_b_transport(this, &AttentionAccelerator::bridge_b_transport);
    sys_bridge_.register_transport_dbg(this, &AttentionAccelerator::bridge_transport_dbg);
    sys_bridge_.register_get_direct_mem_ptr(this, &AttentionAccelerator::bridge_get_dmi);
    sys_port.register_invalidate_direct_mem_ptr(this, &AttentionAccelerator::bridge_invalidate);

    dma_.mem_port.bind(dma_noc_.in);
    fetch_port_.bind(dma_noc_.in);
    dma_noc_.out.bind(sys_bridge_);
    dma_noc_.out.bind(sram_.target);
    dma_noc_.add_route(0, p.offchip_size, 0);
    dma_noc_.add_route(p.sram_base, p.sram.capacity, 1);
    pe_.sram_port.bind(compute_noc_.in);
    exp_.sram_port.bind(compute_noc_.in);
    compute_noc_.out.bind(sram_.target);
    compute_noc_.add_route(p.sram_base, p.sram.capacity, 0);
    if (p.has_kv_buffer) {
      kv_buffer_.reset(new Sram("kv_buffer", stored(p.kv_buffer, p.functional())));
      dma_noc_.out.bind(kv_buffer_->target);
      dma_noc_.add_route(p.kv_buffer_base, p.kv_buffer.capacity, 2);
      compute_noc_.out.bind(kv_buffer_->target);
      compute_noc_.add_route(p.kv_buffer_base, p.kv_buffer.capacity, 1);
    }

    // Engine indices of the command stream: DMA channels first, then the PE array, the Exp unit.
    for (unsigned i = 0; i < p.dma.channels; ++i)
      replayer_.bind_engine(i, &dma_.channel(i), "dma" + std::to_string(i), EngineKind::dma);
    replayer_.bind_engine(pe_index(), &pe_, "pe", EngineKind::pe);
    replayer_.bind_engine(exp_index(), &exp_, "exp", EngineKind::exp);
    // Pausing the kernel for input or stopping it on an error would stop the whole virtual
    // prototype: the control thread feeds the replayer while the kernel runs, and errors end
    // only the stream.
    replayer_.set_input_mode(Replayer::InputMode::wait_event);
    replayer_.set_stop_on_error(false);

    SC_HAS_PROCESS(AttentionAccelerator);
    SC_THREAD(control);
    SC_METHOD(drive_irq);
    sensitive << irq_update_;
  }

  const Params& params() const { return p_; }
  unsigned pe_index() const { return p_.dma.channels; }
  unsigned exp_index() const { return p_.dma.channels + 1; }
  unsigned engine_count() const { return p_.dma.channels + 2; }
  std::string engine_name(unsigned index) const {
    if (index < p_.dma.channels) return "dma" + std::to_string(index);
    return index == pe_index() ? "pe" : "exp";
  }

  State state() const { return state_; }
  Error error_code() const { return error_; }
  // Why the last stream failed, in words (empty when it did not).
  const std::string& error_message() const { return error_message_; }
  // The exact replay measurements behind the counters (times in ticks, not cycles).
  const ReplayMetrics& metrics() const { return replayer_.metrics(); }
  // Register accesses that arrived with streaming width 0, served as width 4 (payload_access.h).
  std::uint64_t zero_streaming_width_payloads() const { return zero_width_; }
  // System-memory responses left INCOMPLETE and taken as OK (Params::accept_incomplete_response).
  std::uint64_t incomplete_responses() const { return incomplete_responses_; }
  sc_core::sc_time start_time() const { return from_ticks(start_ticks_); }
  sc_core::sc_time completion_time() const { return from_ticks(end_ticks_); }

  void collect_stats(StatsGroup& g) const override {
    g.add("commands", static_cast<double>(commands_fetched_), "ops", "records fetched");
    g.add("cycles", static_cast<double>(cycles_), "cycles", "START to completion");
    g.add("fetch_bytes", static_cast<double>(fetch_bytes_), "B", "command-fetch bytes read");
    g.add("fetch_time", ticks_to_ns(fetch_ticks_), "ns", "time with a command fetch in flight");
    replayer_.collect_stats(g.child("replay"));
    dma_.collect_stats(g.child("dma"));
    pe_.collect_stats(g.child("pe"));
    exp_.collect_stats(g.child("exp"));
    sram_.collect_stats(g.child("sram"));
    if (kv_buffer_) kv_buffer_->collect_stats(g.child("kv_buffer"));
    dma_noc_.collect_stats(g.child("dma_noc"));
    compute_noc_.collect_stats(g.child("compute_noc"));
  }

  void reset_stats() override {
    dma_.reset_stats();
    pe_.reset_stats();
    exp_.reset_stats();
    sram_.reset_stats();
    if (kv_buffer_) kv_buffer_->reset_stats();
    dma_noc_.reset_stats();
    compute_noc_.reset_stats();
  }

 protected:
  // The replayer's window is the WINDOW register, known only at START, and its set-up closes
  // when its thread first runs: the thread is held until the first block has been decoded.
  void start_of_simulation() override {
    for (sc_core::sc_object* o : replayer_.get_child_objects()) {
      sc_core::sc_process_handle h(o);
      if (h.valid()) replayer_thread_ = h;
    }
    replayer_thread_.suspend();
  }

 private:
  static const Params& checked(const Params& p, const char* name) {
    params_valid(p, name, "tlm_models/attention_accelerator");
    return p;
  }

  Ticks cycles_of(Ticks t) const { return ceil_div(t, period_); }

  // Functional mode keeps values in the on-chip memories: storage on (it changes no timing).
  static Sram::Params stored(Sram::Params p, bool functional) {
    if (functional) p.storage = true;
    return p;
  }

  // --- control and command fetch --------------------------------------------------------

  void control() {
    for (;;) {
      sc_core::wait(start_event_);
      run_stream();
    }
  }

  void run_stream() {
    start_ticks_ = to_ticks(sc_core::sc_time_stamp());
    error_message_.clear();
    fetch_bytes_ = 0;
    fetch_ticks_ = 0;
    if (spent_) return finish(Error::spent, kNoIndex);
    if (command_count_ == 0 || command_count_ > p_.max_commands || window_ == 0 ||
        command_base_ % sizeof(TraceOp) != 0) {
      error_message_ = "COMMAND_COUNT must be 1.." + std::to_string(p_.max_commands) +
                       ", WINDOW at least 1 and COMMAND_BASE 64-byte aligned";
      return finish(Error::bad_config, kNoIndex);
    }
    // Block by block: fetch, decode, hand to the replayer, which starts executing while the next
    // block is fetched. A stream failing in its first block has executed nothing and may be
    // programmed again; from the second block on, the commands before the failing one execute
    // and the error is reported when they are done.
    Error stream_error = Error::none;
    std::uint32_t error_index = kNoIndex;
    std::vector<TraceOp> block;
    bool executing = false;
    for (std::uint32_t pos = 0; pos < command_count_;) {
      if (executing && !room_for_a_block()) break;  // an engine failed: stop fetching
      std::uint32_t n = std::min(p_.fetch_block, command_count_ - pos);
      block.resize(n);
      if (!fetch_block(pos, block)) {
        stream_error = Error::fetch;
        error_index = pos;
        n = 0;
      }
      for (std::uint32_t i = 0; i < n; ++i) {
        const std::string why = decode(block[i], pos + i);
        if (!why.empty()) {
          error_message_ = why;
          stream_error = Error::bad_command;
          error_index = pos + i;
          n = i;
        }
      }
      if (!executing) {
        if (stream_error != Error::none) return finish(stream_error, error_index);
        spent_ = true;
        replayer_.set_window(window_);
        replayer_thread_.resume();
        executing = true;
      }
      replayer_.feed(block.data(), n);
      if (stream_error != Error::none) break;
      pos += n;
    }
    replayer_.end_of_input();
    if (!replayer_.finished()) sc_core::wait(replayer_.done_event());
    // A failing engine ends the replay at once, while operations issued before it (counted as
    // done) may still be completing: the interrupt waits for them, so that no counted work
    // outlives it and CYCLES >= EXEC_CYCLES.
    const Ticks now = to_ticks(sc_core::sc_time_stamp());
    if (replayer_.metrics().last_done() > now)
      sc_core::wait(from_ticks(replayer_.metrics().last_done() - now));
    if (replayer_.failed()) {
      error_message_ = replayer_.error();
      const std::uint64_t rec = replayer_.error_record();
      return finish(Error::execution,
                    rec == Replayer::kNoRecord ? kNoIndex : static_cast<std::uint32_t>(rec));
    }
    finish(stream_error, error_index);
  }

  // Holds the fetch while fetch_ahead blocks wait for the scheduler, as a command FIFO of that
  // depth would. Returns false when the replay has ended early (an engine failed).
  bool room_for_a_block() {
    const std::uint64_t limit = std::uint64_t{p_.fetch_ahead} * p_.fetch_block;
    while (!replayer_.finished() && replayer_.records_pending() >= limit)
      sc_core::wait(replayer_.input_consumed_event() | replayer_.done_event());
    return !replayer_.finished();
  }

  // Reads records [pos, pos + block.size()) of the stream; returns false (and sets the error
  // message) when system memory answers with an error. Takes the read's simulated time.
  bool fetch_block(std::uint32_t pos, std::vector<TraceOp>& block) {
    const auto bytes = static_cast<std::uint32_t>(block.size() * sizeof(TraceOp));
    const Ticks now = to_ticks(sc_core::sc_time_stamp());
    Ticks done = now;
    try {
      done = fetch_.read(command_base_ + std::uint64_t{pos} * sizeof(TraceOp),
                         reinterpret_cast<unsigned char*>(block.data()), bytes, now);
    } catch (const OpError& e) {
      error_message_ = e.what();
      return false;
    }
    commands_fetched_ += block.size();
    fetch_bytes_ += bytes;
    fetch_ticks_ += done - now;
    sc_core::wait(from_ticks(done - now));
    return true;
  }

  void finish(Error e, std::uint32_t index) {
    end_ticks_ = to_ticks(sc_core::sc_time_stamp());
    error_ = e;
    error_index_ = index;
    state_ = e == Error::none ? State::done : State::error;
    latch_counters();
    irq_pending_ = true;
    irq_update_.notify(sc_core::SC_ZERO_TIME);
  }

  void latch_counters() {
    const ReplayMetrics& m = replayer_.metrics();
    cycles_ = cycles_of(end_ticks_ - start_ticks_);
    bytes_read_ = m.offchip_read();
    bytes_written_ = m.offchip_write();
    ops_ = m.ops();
    exec_cycles_ = cycles_of(m.sim_time());
    fetch_cycles_ = cycles_of(fetch_ticks_);
    fetch_bytes_latched_ = fetch_bytes_;
    stall_cycles_ = cycles_of(m.sim_time() - m.compute_active());
    engine_busy_.assign(engine_count(), 0);
    engine_stall_.assign(engine_count(), 0);
    for (unsigned i = 0; i < engine_count() && i < m.engines().size(); ++i) {
      engine_busy_[i] = cycles_of(m.engine(i).busy.total());
      engine_stall_[i] = cycles_of(m.engine(i).idle_waiting());
    }
  }

  // The command decoder: everything the engines would otherwise fail on mid-stream. Returns
  // why `op` (record `pos` of the stream) is rejected, or "" when it is fine.
  std::string decode(const TraceOp& op, std::uint32_t pos) const {
    const char* kind = op_kind_name(op.kind);
    if (kind == nullptr) return "unknown operation kind " + std::to_string(op.kind);
    if (op.engine >= engine_count())
      return std::string(kind) + " names engine " + std::to_string(op.engine) + " but only " +
             std::to_string(engine_count()) + " exist";
    const EngineKind ek = op.engine < p_.dma.channels ? EngineKind::dma
                          : op.engine == pe_index()   ? EngineKind::pe
                                                      : EngineKind::exp;
    if (!runs_on(op.kind, ek))
      return std::string("a ") + kind + " cannot run on " + engine_name(op.engine);
    for (std::uint32_t d : op.deps)
      if (d > pos || d > window_)
        return "dependency " + std::to_string(d) + " reaches before the stream or beyond WINDOW";
    const OperandExtents x =
        operand_extents(op, ek == EngineKind::exp ? p_.exp.elem_bytes : p_.pe.elem_bytes);
    switch (static_cast<OpKind>(op.kind)) {
      case OpKind::load:
        return check_transfer(op.src0, x.src0, false, op.dst, x.dst, true);
      case OpKind::store:
        return check_transfer(op.src0, x.src0, true, op.dst, x.dst, false);
      case OpKind::matmul:
        return first_of({on_chip("A", op.src0, x.src0), on_chip("B", op.src1, x.src1),
                         on_chip("C", op.dst, x.dst)});
      case OpKind::vector:
        if (static_cast<unsigned>(vector_op(op)) >= PeArray::kVectorOps)
          return "unknown vector op " + std::to_string(static_cast<unsigned>(vector_op(op)));
        return first_of({on_chip("src0", op.src0, x.src0), on_chip("src1", op.src1, x.src1),
                         on_chip("dst", op.dst, x.dst)});
      case OpKind::exp:
        return first_of({on_chip("src0", op.src0, x.src0), on_chip("dst", op.dst, x.dst)});
    }
    return "";
  }

  static std::string first_of(std::initializer_list<std::string> problems) {
    for (const std::string& s : problems)
      if (!s.empty()) return s;
    return "";
  }

  static bool within(std::uint64_t addr, std::uint64_t bytes, std::uint64_t base,
                     std::uint64_t size) {
    return bytes == 0 || (addr >= base && addr - base <= size && bytes <= size - (addr - base));
  }

  std::string on_chip(const char* what, std::uint64_t addr, std::uint64_t bytes) const {
    if (within(addr, bytes, p_.sram_base, p_.sram.capacity)) return "";
    if (p_.has_kv_buffer && within(addr, bytes, p_.kv_buffer_base, p_.kv_buffer.capacity)) return "";
    return std::string(what) + " (" + std::to_string(bytes) + " B at " + hex(addr) +
           (p_.has_kv_buffer ? ") is not inside the SRAM or the KV buffer" : ") is not inside the SRAM");
  }

  // A load/store: each side inside the on-chip SRAM or the off-chip window (an empty block,
  // extent 0, is inside anywhere).
  std::string check_transfer(std::uint64_t src, std::uint64_t src_bytes, bool src_on_chip,
                             std::uint64_t dst, std::uint64_t dst_bytes, bool dst_on_chip) const {
    auto side = [this](const char* what, std::uint64_t addr, std::uint64_t bytes, bool on) {
      if (on) return on_chip(what, addr, bytes);
      if (within(addr, bytes, 0, p_.offchip_size)) return std::string();
      return std::string(what) + " (" + std::to_string(bytes) + " B at " + hex(addr) +
             ") is not inside the off-chip window";
    };
    return first_of({side("source", src, src_bytes, src_on_chip),
                     side("destination", dst, dst_bytes, dst_on_chip)});
  }

  static std::string hex(std::uint64_t v) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
    return buf;
  }

  // --- interrupt -------------------------------------------------------------------------

  // The only writer of `irq`: register writes and completion both go through irq_update_.
  void drive_irq() { irq.write(irq_pending_ && (ctrl_ & kCtrlIrqEnable)); }

  // --- registers -------------------------------------------------------------------------

  static std::uint32_t lo(std::uint64_t v) { return static_cast<std::uint32_t>(v); }
  static std::uint32_t hi(std::uint64_t v) { return static_cast<std::uint32_t>(v >> 32); }

  // The 64-bit counter whose LO half is at `base` + 8 * i, for offsets in [base, base + 8 * count).
  static bool pair_at(std::uint32_t off, std::uint32_t base, std::size_t count,
                      const std::vector<std::uint64_t>& values, std::uint32_t& out) {
    if (off < base || off >= base + 8 * count) return false;
    const std::uint64_t v = values[(off - base) / 8];
    out = (off - base) % 8 ? hi(v) : lo(v);
    return true;
  }

  enum class Access { ok, unmapped, write_only };

  Access read_register(std::uint32_t off, std::uint32_t& v) const {
    const std::vector<std::uint64_t> counters = {cycles_,       bytes_read_,  bytes_written_,
                                                 ops_,          stall_cycles_, exec_cycles_,
                                                 fetch_bytes_latched_, fetch_cycles_};
    switch (off) {
      case kId: v = kIdValue; return Access::ok;
      case kVersion: v = kVersionValue; return Access::ok;
      case kCtrl: v = ctrl_ & kCtrlIrqEnable; return Access::ok;
      case kStatus:
        v = static_cast<std::uint32_t>(state_) | (irq_pending_ ? kStatusIrqPending : 0);
        return Access::ok;
      case kIrqAck: return Access::write_only;
      case kErrorCode: v = static_cast<std::uint32_t>(error_); return Access::ok;
      case kErrorIndex: v = error_index_; return Access::ok;
      case kDmaChannels: v = p_.dma.channels; return Access::ok;
      case kCommandBaseLo: v = lo(command_base_); return Access::ok;
      case kCommandBaseHi: v = hi(command_base_); return Access::ok;
      case kCommandCount: v = command_count_; return Access::ok;
      case kWindow: v = window_; return Access::ok;
      case kSramBaseLo: v = lo(p_.sram_base); return Access::ok;
      case kSramBaseHi: v = hi(p_.sram_base); return Access::ok;
      case kSramSize: v = static_cast<std::uint32_t>(p_.sram.capacity); return Access::ok;
      case kOffchipSizeLo: v = lo(p_.offchip_size); return Access::ok;
      case kOffchipSizeHi: v = hi(p_.offchip_size); return Access::ok;
      default: break;
    }
    if (pair_at(off, kCyclesLo, counters.size(), counters, v)) return Access::ok;
    const std::vector<std::uint64_t> none(engine_count(), 0);
    if (pair_at(off, kEngineBusyLo, engine_count(), engine_busy_.empty() ? none : engine_busy_, v))
      return Access::ok;
    if (pair_at(off, kEngineStallLo, engine_count(), engine_stall_.empty() ? none : engine_stall_,
                v))
      return Access::ok;
    return Access::unmapped;
  }

  // `effect_delay` places side effects (START, interrupt acknowledge) at the access's time.
  tlm::tlm_response_status write_register(std::uint32_t off, std::uint32_t v,
                                          const sc_core::sc_time& effect_delay, bool debug) {
    switch (off) {
      case kCtrl:
        ctrl_ = v & kCtrlIrqEnable;
        if (!debug) {
          irq_update_.notify(effect_delay);
          if ((v & kCtrlStart) && state_ != State::busy) {
            state_ = State::busy;
            start_event_.notify(effect_delay);
          }
        }
        return tlm::TLM_OK_RESPONSE;
      case kIrqAck:
        if (!debug && (v & 1)) {
          irq_pending_ = false;
          irq_update_.notify(effect_delay);
        }
        return tlm::TLM_OK_RESPONSE;
      case kCommandBaseLo: command_base_ = (command_base_ & ~std::uint64_t{0xFFFFFFFF}) | v; break;
      case kCommandBaseHi: command_base_ = (command_base_ & 0xFFFFFFFF) | (std::uint64_t{v} << 32); break;
      case kCommandCount: command_count_ = v; break;
      case kWindow: window_ = v; break;
      default: {
        std::uint32_t ignored = 0;
        return read_register(off, ignored) == Access::unmapped ? tlm::TLM_ADDRESS_ERROR_RESPONSE
                                                               : tlm::TLM_COMMAND_ERROR_RESPONSE;
      }
    }
    return tlm::TLM_OK_RESPONSE;
  }

  // Checks in the order of the base protocol's error priority: address, then width/burst,
  // then byte enables, then the command.
  void ctrl_b_transport(tlm::tlm_generic_payload& t, sc_core::sc_time& delay) {
    const std::uint64_t addr = t.get_address();
    if (addr >= kRegisterSpace || addr % 4 != 0) {
      t.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
      return;
    }
    const auto off = static_cast<std::uint32_t>(addr);
    std::uint32_t v = 0;
    if (read_register(off, v) == Access::unmapped) {
      t.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
      return;
    }
    if (t.get_data_length() != 4 || reject_streaming(t, &zero_width_)) {
      t.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
      return;
    }
    if (t.get_byte_enable_ptr() != nullptr) {
      t.set_response_status(tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
      return;
    }
    if (t.get_command() != tlm::TLM_IGNORE_COMMAND && t.get_data_ptr() == nullptr) {
      t.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
      return;
    }
    delay += p_.register_latency;
    unsigned char* data = t.get_data_ptr();
    switch (t.get_command()) {
      case tlm::TLM_READ_COMMAND:
        if (read_register(off, v) == Access::write_only) {
          t.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
          return;
        }
        store_le(data, v);
        t.set_response_status(tlm::TLM_OK_RESPONSE);
        return;
      case tlm::TLM_WRITE_COMMAND:
        t.set_response_status(write_register(off, load_le(data), delay, false));
        return;
      case tlm::TLM_IGNORE_COMMAND:
        t.set_response_status(tlm::TLM_OK_RESPONSE);
        return;
    }
    t.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
  }

  // Debug access, without side effects. A read of any address and length inside the register
  // file answers every byte (debuggers read memory windows and take a short answer as a
  // failure): write-only and unmapped words read as 0. A write takes whole aligned registers
  // (it never starts a stream or acknowledges an interrupt) and stops at the first register it
  // cannot write.
  unsigned ctrl_transport_dbg(tlm::tlm_generic_payload& t) {
    const std::uint64_t addr = t.get_address();
    const unsigned len = t.get_data_length();
    if (addr >= kRegisterSpace || !admit_debug(t)) return 0;
    if (t.get_command() == tlm::TLM_READ_COMMAND) {
      const auto n = static_cast<unsigned>(std::min<std::uint64_t>(len, kRegisterSpace - addr));
      std::uint32_t word = 0;
      for (unsigned i = 0; i < n; ++i) {
        const auto off = static_cast<std::uint32_t>(addr + i);
        if (i == 0 || off % 4 == 0)
          if (read_register(off & ~3u, word) != Access::ok) word = 0;
        t.get_data_ptr()[i] = static_cast<unsigned char>(word >> (8 * (off % 4)));
      }
      t.set_response_status(tlm::TLM_OK_RESPONSE);
      return n;
    }
    if (t.get_command() != tlm::TLM_WRITE_COMMAND || addr % 4 != 0) return 0;
    unsigned done = 0;
    for (; done + 4 <= len && addr + done < kRegisterSpace; done += 4) {
      const auto off = static_cast<std::uint32_t>(addr + done);
      if (off == kIrqAck || write_register(off, load_le(t.get_data_ptr() + done), sc_core::SC_ZERO_TIME,
                                           true) != tlm::TLM_OK_RESPONSE)
        break;
    }
    t.set_response_status(tlm::TLM_OK_RESPONSE);
    return done;
  }

  // Registers are little-endian, whatever the host.
  static void store_le(unsigned char* p, std::uint32_t v) {
    for (int i = 0; i < 4; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
  }
  static std::uint32_t load_le(const unsigned char* p) {
    return std::uint32_t{p[0]} | std::uint32_t{p[1]} << 8 | std::uint32_t{p[2]} << 16 |
           std::uint32_t{p[3]} << 24;
  }

  // --- the off-chip side of dma_noc, forwarded to sys_port --------------------------------

  void bridge_b_transport(tlm::tlm_generic_payload& t, sc_core::sc_time& delay) {
    sys_port->b_transport(t, delay);
    if (p_.accept_incomplete_response && t.get_response_status() == tlm::TLM_INCOMPLETE_RESPONSE) {
      ++incomplete_responses_;
      t.set_response_status(tlm::TLM_OK_RESPONSE);
    }
  }
  unsigned bridge_transport_dbg(tlm::tlm_generic_payload& t) { return sys_port->transport_dbg(t); }
  bool bridge_get_dmi(tlm::tlm_generic_payload& t, tlm::tlm_dmi& dmi) {
    return sys_port->get_direct_mem_ptr(t, dmi);
  }
  void bridge_invalidate(sc_dt::uint64 start, sc_dt::uint64 end) {
    sys_bridge_->invalidate_direct_mem_ptr(start, end);
  }

  Params p_;
  Ticks period_;
  DmaEngine dma_;
  PeArray pe_;
  ExpUnit exp_;
  Sram sram_;
  std::unique_ptr<Sram> kv_buffer_;  // when has_kv_buffer
  Interconnect dma_noc_;
  Interconnect compute_noc_;
  Replayer replayer_;
  tlm_utils::simple_target_socket<AttentionAccelerator> sys_bridge_;
  tlm_utils::simple_initiator_socket<AttentionAccelerator> fetch_port_;
  BlockAccess fetch_;
  sc_core::sc_process_handle replayer_thread_;
  sc_core::sc_event start_event_;
  sc_core::sc_event irq_update_;

  // registers
  std::uint32_t ctrl_ = kCtrlIrqEnable;
  std::uint64_t command_base_ = 0;
  std::uint32_t command_count_ = 0;
  std::uint32_t window_ = 1u << 16;
  State state_ = State::idle;
  Error error_ = Error::none;
  std::uint32_t error_index_ = kNoIndex;
  std::string error_message_;
  bool irq_pending_ = false;
  bool spent_ = false;
  std::uint64_t zero_width_ = 0;
  std::uint64_t incomplete_responses_ = 0;

  // counters, latched at completion
  Ticks start_ticks_ = 0;
  Ticks end_ticks_ = 0;
  std::uint64_t commands_fetched_ = 0;
  std::uint64_t fetch_bytes_ = 0;  // of the running stream
  Ticks fetch_ticks_ = 0;
  std::uint64_t cycles_ = 0;
  std::uint64_t bytes_read_ = 0;
  std::uint64_t bytes_written_ = 0;
  std::uint64_t ops_ = 0;
  std::uint64_t exec_cycles_ = 0;
  std::uint64_t stall_cycles_ = 0;
  std::uint64_t fetch_bytes_latched_ = 0;
  std::uint64_t fetch_cycles_ = 0;
  std::vector<std::uint64_t> engine_busy_;
  std::vector<std::uint64_t> engine_stall_;
};

}  // namespace tlm_models

#endif  // TLM_MODELS_ATTENTION_ACCELERATOR_H
