// Executors with closed-form timing for the replayer tests and benchmark, so expected results
// can be written down exactly. Each also checks the replayer's side of the OpExecutor contract:
// starts arrive in nondecreasing order, never before the kernel's time, and at most one quantum
// after it.
#ifndef TLM_MODELS_TESTS_MOCK_ENGINES_H
#define TLM_MODELS_TESTS_MOCK_ENGINES_H

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include <systemc>

#include "tlm_models/op_executor.h"
#include "tlm_models/trace_op.h"

namespace mock {

using sc_core::sc_time;
using sc_core::SC_ZERO_TIME;

// Counts the calls an executor received and any breach of the call-order contract.
class ContractLog {
 public:
  void on_call(const sc_time& start) {
    const sc_time now = sc_core::sc_time_stamp();
    if (start < now) ++before_kernel_time;
    if (calls > 0 && start < last_start) ++out_of_order;
    if (start - now > max_lead && start >= now) max_lead = start - now;
    last_start = start;
    ++calls;
  }
  std::uint64_t calls = 0;
  std::uint64_t out_of_order = 0;
  std::uint64_t before_kernel_time = 0;
  sc_time last_start = SC_ZERO_TIME;
  sc_time max_lead = SC_ZERO_TIME;  // largest start - sc_time_stamp() seen
};

// A transfer path several channels share: one transfer at a time.
struct SharedLink {
  sc_time busy_until = SC_ZERO_TIME;
};

// A DMA channel moving m*n bytes at `per_byte` each: the channel is free when the last byte has
// left (start + bytes * per_byte, later if a shared link was busy) and the data lands `latency`
// after that.
class DmaChannel : public tlm_models::OpExecutor {
 public:
  DmaChannel(sc_time per_byte, sc_time latency, SharedLink* link = nullptr)
      : per_byte_(per_byte), latency_(latency), link_(link) {}

  tlm_models::OpTiming execute(const tlm_models::TraceOp& op, const sc_time& start) override {
    log.on_call(start);
    sc_time xfer_start = start;
    if (link_ && link_->busy_until > xfer_start) xfer_start = link_->busy_until;
    const sc_time free = xfer_start + per_byte_ * static_cast<double>(tlm_models::transfer_bytes(op));
    if (link_) link_->busy_until = free;
    return {free, free + latency_, xfer_start - start};
  }

  ContractLog log;

 private:
  sc_time per_byte_;
  sc_time latency_;
  SharedLink* link_;
};

// A compute engine costing `per_mac` per multiply-accumulate of a matmul (m*n*k) and
// `per_element` per element of any other op (m*n); results are ready when the engine is free.
class ComputeEngine : public tlm_models::OpExecutor {
 public:
  ComputeEngine(sc_time per_mac, sc_time per_element) : per_mac_(per_mac), per_element_(per_element) {}

  tlm_models::OpTiming execute(const tlm_models::TraceOp& op, const sc_time& start) override {
    log.on_call(start);
    const std::uint64_t elems = static_cast<std::uint64_t>(op.m) * op.n;
    const sc_time cost = op.kind == static_cast<std::uint8_t>(tlm_models::OpKind::matmul)
                             ? per_mac_ * static_cast<double>(elems * op.k)
                             : per_element_ * static_cast<double>(elems);
    return {start + cost, start + cost, SC_ZERO_TIME};
  }

  ContractLog log;

 private:
  sc_time per_mac_;
  sc_time per_element_;
};

// Executes `fail_at` calls normally (a fixed duration each), then throws OpError.
class FailingEngine : public tlm_models::OpExecutor {
 public:
  FailingEngine(std::uint64_t fail_at, std::string message) : fail_at_(fail_at), message_(std::move(message)) {}

  tlm_models::OpTiming execute(const tlm_models::TraceOp&, const sc_time& start) override {
    if (calls_++ == fail_at_) throw tlm_models::OpError(message_);
    const sc_time done = start + sc_time(1, sc_core::SC_NS);
    return {done, done, SC_ZERO_TIME};
  }

 private:
  std::uint64_t fail_at_;
  std::string message_;
  std::uint64_t calls_ = 0;
};

// Breaks the contract: reports completion at time zero whatever the start it was given.
class TimeTravellingEngine : public tlm_models::OpExecutor {
 public:
  tlm_models::OpTiming execute(const tlm_models::TraceOp&, const sc_time& start) override {
    return {start, SC_ZERO_TIME, SC_ZERO_TIME};
  }
};

// An endless attention-like trace over engines dma0 = 0 (loads), dma1 = 1 (stores), pe = 2,
// exp = 3. Per K/V tile: load K (waits for the matmul that read its buffer two tiles before),
// S = Q K^T, rowmax, exp, load V, O += P V; every 16 tiles O is stored. Sizes vary with a
// fixed-seed generator so that engines drift against each other.
class SyntheticTrace {
 public:
  // Appends the next `count` records to `out`.
  void next(std::vector<tlm_models::TraceOp>& out, std::uint64_t count) {
    for (std::uint64_t i = 0; i < count; ++i) out.push_back(next_op());
  }

 private:
  tlm_models::TraceOp next_op() {
    using tlm_models::OpKind;
    tlm_models::TraceOp op{};
    op.tensor = tlm_models::kNoTensor;
    const std::uint32_t jitter = static_cast<std::uint32_t>(rand() % 8);
    switch (step_) {
      case 0:  // load K tile into one of two buffers
        op = make(OpKind::load, 0, 1, 256 + 32 * jitter, 0, {last_pv_prev_});
        op.tensor = 1;
        k_load_ = pos_;
        break;
      case 1: op = make(OpKind::matmul, 2, 4, 8, 8 + jitter, {k_load_}); s_ = pos_; break;
      case 2: op = make(OpKind::vector, 2, 4, 8, 0, {s_}); op.code = 7; row_ = pos_; break;
      case 3: op = make(OpKind::exp, 3, 4, 8 + jitter, 0, {row_}); exp_ = pos_; break;
      case 4:
        op = make(OpKind::load, 0, 1, 256, 0, {last_pv_prev_});
        op.tensor = 2;
        v_load_ = pos_;
        break;
      case 5:
        op = make(OpKind::matmul, 2, 4, 8, 8, {exp_, v_load_});
        last_pv_prev_ = last_pv_;
        last_pv_ = pos_;
        break;
      case 6:
        op = make(OpKind::store, 1, 4, 16, 0, {last_pv_});
        op.tensor = 3;
        break;
    }
    ++pos_;
    step_ = step_ == 5 ? ((++tile_ % 16 == 0) ? 6 : 0) : (step_ == 6 ? 0 : step_ + 1);
    return op;
  }

  // `deps` are absolute positions; kNone entries are skipped.
  tlm_models::TraceOp make(tlm_models::OpKind kind, std::uint8_t engine, std::uint32_t m,
                           std::uint32_t n, std::uint32_t k, std::initializer_list<std::uint64_t> deps) {
    tlm_models::TraceOp op = tlm_models::make_op(kind, engine, m, n, k);
    unsigned i = 0;
    for (std::uint64_t d : deps)
      if (d != kNone) op.deps[i++] = static_cast<std::uint32_t>(pos_ - d);
    return op;
  }

  std::uint32_t rand() {
    seed_ = seed_ * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<std::uint32_t>(seed_ >> 33);
  }

  static constexpr std::uint64_t kNone = ~std::uint64_t{0};
  std::uint64_t seed_ = 42;
  std::uint64_t pos_ = 0;
  std::uint64_t tile_ = 0;
  unsigned step_ = 0;
  std::uint64_t k_load_ = kNone, s_ = kNone, row_ = kNone, exp_ = kNone, v_load_ = kNone;
  std::uint64_t last_pv_ = kNone, last_pv_prev_ = kNone;
};

}  // namespace mock

#endif  // TLM_MODELS_TESTS_MOCK_ENGINES_H
