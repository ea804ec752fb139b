// Streaming metrics of a trace replay (the definitions of docs/replayer.md and DESIGN.md). The
// replayer reports every issued operation once, in nondecreasing start time; everything here is
// O(1) per operation and O(engines + tensors) in memory, whatever the trace length.
//
// |io ∩ compute| is obtained by inclusion-exclusion, |io| + |compute| - |io ∪ compute|, with the
// three unions merged in start order: this needs no interval lists, where intersecting two
// unions directly would have to hold one stream's closed intervals while the other stays open.
#ifndef TLM_MODELS_REPLAY_METRICS_H
#define TLM_MODELS_REPLAY_METRICS_H

#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "tlm_models/busy_time.h"
#include "tlm_models/engine_kind.h"
#include "tlm_models/op_executor.h"
#include "tlm_models/stats.h"
#include "tlm_models/time_ticks.h"
#include "tlm_models/trace_op.h"

namespace tlm_models {

// Why an engine sat idle while its next operation was known (see docs/replayer.md).
enum class StallCause : unsigned {
  load_data = 0,    // waited for a load's data
  pe_result = 1,    // waited for a matmul/vector result
  exp_result = 2,   // waited for an exp result
  buffer_free = 3,  // a load waited for compute to finish reading its buffer (write-after-read)
  store_done = 4,   // waited for a store to complete
  lookahead = 5,    // ready earlier, but the scheduler saw the operation late (lookahead cap)
};
constexpr unsigned kStallCauses = 6;

inline const char* stall_cause_name(StallCause c) {
  static constexpr const char* names[kStallCauses] = {"load_data",  "pe_result",  "exp_result",
                                                      "buffer_free", "store_done", "lookahead"};
  return names[static_cast<unsigned>(c)];
}

// The cause charged when an operation of kind `waiting` waited for a dependency of kind `dep`.
inline StallCause dependency_stall_cause(std::uint8_t waiting, std::uint8_t dep) {
  switch (static_cast<OpKind>(dep)) {
    case OpKind::load: return StallCause::load_data;
    case OpKind::store: return StallCause::store_done;
    default: break;
  }
  // A load overwrites an on-chip buffer, so waiting for compute means waiting for the readers of
  // that buffer; a store waiting for compute waits for the data it writes out.
  if (static_cast<OpKind>(waiting) == OpKind::load) return StallCause::buffer_free;
  return static_cast<OpKind>(dep) == OpKind::exp ? StallCause::exp_result : StallCause::pe_result;
}

// What a compute engine's busy time went to (docs/replayer.md, "Time breakdown"): each
// operation's share of the busy union is charged to the kind of work it does.
enum class WorkKind : unsigned {
  mac = 0,          // matmuls (a scaled matmul's row scaling takes no cycles of its own)
  elementwise = 1,  // add, sub, mul, div, max, fma, mask outside the rescale
  row = 2,          // row reductions: rowmax, rowsum
  rescale = 3,      // the exp of m_old - m (kRescale) and O scaled by it (kVectorLazyRows)
  move = 4,         // copies between on-chip buffers
  exp = 5,          // the softmax exponentials
};
constexpr unsigned kWorkKinds = 6;

inline const char* work_kind_name(WorkKind w) {
  static constexpr const char* names[kWorkKinds] = {"mac",     "elementwise", "row",
                                                    "rescale", "move",        "exp"};
  return names[static_cast<unsigned>(w)];
}

inline WorkKind work_kind(const TraceOp& op) {
  if (is_rescale(op)) return WorkKind::rescale;
  if (static_cast<OpKind>(op.kind) == OpKind::matmul) return WorkKind::mac;
  if (static_cast<OpKind>(op.kind) == OpKind::exp) return WorkKind::exp;
  switch (vector_op(op)) {
    case VectorOp::copy: return WorkKind::move;
    case VectorOp::rowmax:
    case VectorOp::rowsum: return WorkKind::row;
    default: return WorkKind::elementwise;
  }
}

struct EngineMetrics {
  std::string name;
  EngineKind kind = EngineKind::dma;
  std::uint64_t ops = 0;
  std::uint64_t bytes = 0;        // dma: m * n per transfer
  std::uint64_t macs = 0;         // pe: m * n * k per matmul
  std::uint64_t element_ops = 0;  // pe: m * n per vector op
  std::uint64_t exps = 0;         // exp: m * n per exp op
  BusyTime busy;                  // union of [start, done]
  std::array<Ticks, kStallCauses> stall{};
  Ticks bandwidth_wait = 0;  // dma: summed TickTiming::bandwidth_wait
  Ticks dma_credits = 0;     // dma: head operation ready but its channel still occupied
  // pe, exp: issuing time by work kind ([start, engine_free) of each operation: an in-order
  // engine issues one operation at a time, so these never overlap); the rest of the busy
  // union is drain (results leaving the pipeline, nothing issuing); the gaps of the union by
  // the cause that ended them. issuing + drain + gaps + the idle tail after the last
  // operation = sim_time.
  std::array<Ticks, kWorkKinds> work{};
  Ticks issued_until = 0;
  std::array<Ticks, kStallCauses> gap{};

  Ticks issuing() const {
    Ticks sum = 0;
    for (Ticks t : work) sum += t;
    return sum;
  }
  // Recent history, for the stall of the next operation.
  bool started = false;
  Ticks last_free = 0;
  Ticks last_start = 0;

  Ticks idle_waiting() const {
    Ticks sum = 0;
    for (Ticks t : stall) sum += t;
    return sum;
  }
};

struct TensorTraffic {
  std::string name;
  std::uint64_t read = 0;   // bytes loaded from off-chip
  std::uint64_t write = 0;  // bytes stored to off-chip
};

class ReplayMetrics {
 public:
  static constexpr unsigned kUntagged = kNoTensor;

  ReplayMetrics() : tensors_(256) { tensors_[kUntagged].name = "(untagged)"; }

  void add_engine(unsigned index, const std::string& name, EngineKind kind) {
    if (index >= engines_.size()) engines_.resize(index + 1);
    engines_[index].name = name;
    engines_[index].kind = kind;
  }

  void set_tensor(unsigned index, const std::string& name) { tensors_.at(index).name = name; }

  // One issued operation. `deps_ready` is the latest completion among its dependencies (0 without
  // any) and `binding_dep_kind` the OpKind of the dependency that completed then.
  // Inlined into the replayer's issue (its one caller per operation): the call and its seven
  // arguments cost about 15 instructions per operation.
#if defined(__GNUC__)
  __attribute__((always_inline))
#endif
  void on_issue(unsigned engine, const TraceOp& op, Ticks start, const TickTiming& timing,
                Ticks deps_ready, std::uint8_t binding_dep_kind) {
    const Ticks done = timing.done;
    if (ops_ == 0) first_start_ = start;
    ++ops_;
    if (done > last_done_) last_done_ = done;

    EngineMetrics& e = engines_[engine];
    charge_stall(e, op, start, deps_ready, binding_dep_kind);
    if (e.kind != EngineKind::dma) charge_time(e, op, start, timing, deps_ready, binding_dep_kind);
    ++e.ops;
    e.busy.add(start, done);
    all_.add(start, done);
    switch (e.kind) {
      case EngineKind::dma: {
        const std::uint64_t bytes = transfer_bytes(op);
        e.bytes += bytes;
        e.bandwidth_wait += timing.bandwidth_wait;
        TensorTraffic& t = tensors_[op.tensor];
        (static_cast<OpKind>(op.kind) == OpKind::load ? t.read : t.write) += bytes;
        io_.add(start, done);
        break;
      }
      case EngineKind::pe:
        if (static_cast<OpKind>(op.kind) == OpKind::matmul)
          e.macs += static_cast<std::uint64_t>(op.m) * op.n * op.k;
        else
          e.element_ops += static_cast<std::uint64_t>(op.m) * op.n;
        compute_.add(start, done);
        break;
      case EngineKind::exp:
        e.exps += static_cast<std::uint64_t>(op.m) * op.n;
        compute_.add(start, done);
        break;
    }
    e.started = true;
    e.last_free = timing.engine_free;
    e.last_start = start;
  }

  std::uint64_t ops() const { return ops_; }
  Ticks first_start() const { return ops_ ? first_start_ : 0; }
  Ticks last_done() const { return last_done_; }
  Ticks sim_time() const { return ops_ ? last_done_ - first_start_ : 0; }
  Ticks io_active() const { return io_.total(); }
  Ticks compute_active() const { return compute_.total(); }
  Ticks io_compute_overlap() const { return io_.total() + compute_.total() - all_.total(); }
  Ticks exposed_io_time() const { return all_.total() - compute_.total(); }
  // NaN (JSON null) when there was no off-chip transfer: nothing to hide, so no share to report.
  double overlap_efficiency() const {
    return io_active() ? static_cast<double>(io_compute_overlap()) / static_cast<double>(io_active())
                       : std::numeric_limits<double>::quiet_NaN();
  }
  double memory_stall_fraction() const {
    return sim_time() ? 1.0 - static_cast<double>(compute_active()) / static_cast<double>(sim_time())
                      : std::numeric_limits<double>::quiet_NaN();
  }

  const std::vector<EngineMetrics>& engines() const { return engines_; }
  const EngineMetrics& engine(unsigned index) const { return engines_.at(index); }
  // Tensor table indexed by TraceOp::tensor (kUntagged = 0xFF collects untagged transfers).
  const TensorTraffic& tensor(unsigned index) const { return tensors_.at(index); }
  std::uint64_t offchip_read() const { return sum_traffic(&TensorTraffic::read); }
  std::uint64_t offchip_write() const { return sum_traffic(&TensorTraffic::write); }

  void collect(StatsGroup& g) const {
    g.add("ops", static_cast<double>(ops_), "ops", "operations issued");
    g.add("sim_time", ticks_to_ns(sim_time()), "ns", "first operation start to last completion");
    g.add("first_start", ticks_to_ns(first_start()), "ns", "start of the first operation");
    g.add("last_done", ticks_to_ns(last_done_), "ns", "completion of the last operation");
    g.add("io_active", ticks_to_ns(io_active()), "ns", "union of DMA operation intervals");
    g.add("compute_active", ticks_to_ns(compute_active()), "ns",
          "union of PE and Exp operation intervals");
    g.add("io_compute_overlap", ticks_to_ns(io_compute_overlap()), "ns",
          "|io_active ∩ compute_active|");
    g.add("overlap_efficiency", overlap_efficiency(), "1",
          "|io ∩ compute| / |io|; null without off-chip transfers");
    g.add("exposed_io_time", ticks_to_ns(exposed_io_time()), "ns", "|io_active \\ compute_active|");
    g.add("memory_stall_fraction", memory_stall_fraction(), "1",
          "1 - |compute_active| / sim_time; null for an empty trace");
    g.add("offchip_read", static_cast<double>(offchip_read()), "B", "bytes loaded");
    g.add("offchip_write", static_cast<double>(offchip_write()), "B", "bytes stored");

    StatsGroup& eg = g.child("engines");
    for (const EngineMetrics& e : engines_)
      if (!e.name.empty()) collect_engine(eg.child(e.name), e);

    StatsGroup& tg = g.child("tensors");
    for (unsigned i = 0; i < tensors_.size(); ++i) {
      const TensorTraffic& t = tensors_[i];
      const bool declared = !t.name.empty() && i != kUntagged;
      if (!declared && t.read == 0 && t.write == 0) continue;
      StatsGroup& c = tg.child(t.name.empty() ? "tensor[" + std::to_string(i) + "]" : t.name);
      c.add("read", static_cast<double>(t.read), "B", "bytes loaded from off-chip");
      c.add("write", static_cast<double>(t.write), "B", "bytes stored to off-chip");
    }
  }

 private:
  // Idle time before this operation: from when the engine became free (or the trace started)
  // to `start`. The part up to the binding dependency's completion is charged to that
  // dependency; what remains is scheduler delay.
  void charge_stall(EngineMetrics& e, const TraceOp& op, Ticks start, Ticks deps_ready,
                    std::uint8_t binding_dep_kind) {
    const Ticks idle_from = e.started ? e.last_free : first_start_;
    if (e.kind == EngineKind::dma && e.started) {
      // The operation heads the channel's queue from its predecessor's start on.
      const Ticks queued_from = deps_ready > e.last_start ? deps_ready : e.last_start;
      if (e.last_free > queued_from) e.dma_credits += e.last_free - queued_from;
    }
    if (start <= idle_from) return;
    const Ticks ready = deps_ready > idle_from ? deps_ready : idle_from;
    if (ready > idle_from)
      e.stall[static_cast<unsigned>(dependency_stall_cause(op.kind, binding_dep_kind))] +=
          ready - idle_from;
    e.stall[static_cast<unsigned>(StallCause::lookahead)] += start - ready;
  }

  // The operation's share of the engine's busy union (what it adds to it) by work kind, and
  // the gap before it, if any, by the cause charge_stall gives it.
  void charge_time(EngineMetrics& e, const TraceOp& op, Ticks start, const TickTiming& timing,
                   Ticks deps_ready, std::uint8_t binding_dep_kind) {
    const Ticks covered = e.started ? e.busy.covered_until() : first_start_;
    if (start > covered) {
      const Ticks ready = deps_ready < covered ? covered : (deps_ready > start ? start : deps_ready);
      e.gap[static_cast<unsigned>(dependency_stall_cause(op.kind, binding_dep_kind))] += ready - covered;
      e.gap[static_cast<unsigned>(StallCause::lookahead)] += start - ready;
    }
    const Ticks from = start > e.issued_until ? start : e.issued_until;
    const Ticks free = timing.engine_free < timing.done ? timing.engine_free : timing.done;
    if (free <= from) return;
    e.work[static_cast<unsigned>(work_kind(op))] += free - from;
    e.issued_until = free;
  }

  void collect_time(StatsGroup& g, const EngineMetrics& e) const {
    StatsGroup& t = g.child("time");
    for (unsigned w = 0; w < kWorkKinds; ++w) {
      const bool exp_kind = w == static_cast<unsigned>(WorkKind::exp);
      const bool both = w == static_cast<unsigned>(WorkKind::rescale);
      if (both || exp_kind == (e.kind == EngineKind::exp))
        t.add(work_kind_name(static_cast<WorkKind>(w)), ticks_to_ns(e.work[w]), "ns",
              "issuing this kind of work (operand reads and interlocks included)");
    }
    t.add("drain", ticks_to_ns(e.busy.total() - e.issuing()), "ns",
          "busy only draining results from the pipeline (nothing issuing)");
    StatsGroup& gaps = g.child("idle");
    for (unsigned c = 0; c < kStallCauses; ++c)
      gaps.add(stall_cause_name(static_cast<StallCause>(c)), ticks_to_ns(e.gap[c]), "ns",
               "gaps of the busy union charged to this cause");
  }

  void collect_engine(StatsGroup& g, const EngineMetrics& e) const {
    const Ticks sim = sim_time();
    g.add("ops", static_cast<double>(e.ops), "ops",
          std::string("operations executed (") + engine_kind_name(e.kind) + " engine)");
    g.add("busy_time", ticks_to_ns(e.busy.total()), "ns", "union of [start, done]");
    g.add("busy_fraction",
          sim ? static_cast<double>(e.busy.total()) / static_cast<double>(sim)
              : std::numeric_limits<double>::quiet_NaN(),
          "1", "busy_time / sim_time");
    switch (e.kind) {
      case EngineKind::dma: g.add("bytes", static_cast<double>(e.bytes), "B", "bytes transferred"); break;
      case EngineKind::pe:
        g.add("macs", static_cast<double>(e.macs), "MAC", "multiply-accumulates of matmuls");
        g.add("element_ops", static_cast<double>(e.element_ops), "ops", "elements of vector ops");
        break;
      case EngineKind::exp: g.add("exps", static_cast<double>(e.exps), "ops", "exponentials"); break;
    }
    g.add("idle_waiting", ticks_to_ns(e.idle_waiting()), "ns",
          "idle with its next operation known (sum of the stall causes)");
    StatsGroup& s = g.child("stalls");
    for (unsigned c = 0; c < kStallCauses; ++c)
      s.add(stall_cause_name(static_cast<StallCause>(c)), ticks_to_ns(e.stall[c]), "ns",
            "idle time charged to this cause");
    if (e.kind != EngineKind::dma) collect_time(g, e);
    if (e.kind == EngineKind::dma) {
      s.add("bandwidth", ticks_to_ns(e.bandwidth_wait), "ns",
            "busy: summed bandwidth_wait of transfers (not idle time)");
      s.add("dma_credits", ticks_to_ns(e.dma_credits), "ns",
            "busy: head transfer ready while the channel was still occupied (not idle time)");
    }
  }

  std::uint64_t sum_traffic(std::uint64_t TensorTraffic::*field) const {
    std::uint64_t sum = 0;
    for (const TensorTraffic& t : tensors_) sum += t.*field;
    return sum;
  }

  std::vector<EngineMetrics> engines_;
  std::vector<TensorTraffic> tensors_;
  std::uint64_t ops_ = 0;
  Ticks first_start_ = 0;
  Ticks last_done_ = 0;
  BusyTime io_, compute_, all_;
};

}  // namespace tlm_models

#endif  // TLM_MODELS_REPLAY_METRICS_H
