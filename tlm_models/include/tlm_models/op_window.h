// The replayer's buffer of trace operations: a ring indexed by absolute trace position that
// keeps the operations read ahead of the schedule and, behind them, the completion times that
// later dependencies may still ask for (a dependency reaches back at most `window` records).
// Positions leave the ring only when the caller releases them, so memory is bounded by the
// window plus the read-ahead, whatever the trace length.
//
// Records and times are kept in two rings: a record fills exactly one 64-byte cache line (the
// ring is aligned to one), and the dependency look-ups of the scheduler read only the dense
// ring of times (16 bytes a position) instead of touching each dependency's record line.
#ifndef TLM_MODELS_OP_WINDOW_H
#define TLM_MODELS_OP_WINDOW_H

#include <cstdint>
#include <memory>
#include <new>
#include <stdexcept>
#include <utility>

#include "tlm_models/time_ticks.h"
#include "tlm_models/trace_op.h"

namespace tlm_models {

class OpWindow {
 public:
  struct Times {
    Ticks done;   // kPending until the operation has been issued
    Ticks first;  // when a streamed consumer may start on its result (<= done; forwarding)
  };
  static constexpr Ticks kPending = ~Ticks{0};
  // Memory per position.
  static constexpr std::size_t kSlotBytes = sizeof(TraceOp) + sizeof(Times);

  OpWindow() : ops_(allocate_ops(kInitialCapacity)), times_(new Times[kInitialCapacity]),
               size_(kInitialCapacity), mask_(kInitialCapacity - 1) {}

  std::uint64_t begin() const { return begin_; }  // oldest position still held
  std::uint64_t end() const { return end_; }      // position the next push receives
  std::uint64_t capacity() const { return size_; }

  std::uint64_t push(const TraceOp& op) {
    if (end_ - begin_ == size_) grow();
    ops_[end_ & mask_] = op;
    times_[end_ & mask_] = Times{kPending, kPending};
    return end_++;
  }

  // `pos` must lie in [begin(), end()).
  const TraceOp& op(std::uint64_t pos) const { return ops_[pos & mask_]; }
  Times& times(std::uint64_t pos) { return times_[pos & mask_]; }
  const Times& times(std::uint64_t pos) const { return times_[pos & mask_]; }

  // Forgets every position below `pos` (no-op for positions already forgotten).
  void release_before(std::uint64_t pos) {
    if (pos > end_) throw std::logic_error("OpWindow: release beyond the last pushed position");
    if (pos > begin_) begin_ = pos;
  }

 private:
  static constexpr std::size_t kInitialCapacity = 1024;
  static constexpr std::align_val_t kLine{64};

  struct FreeOps {
    void operator()(TraceOp* p) const { ::operator delete[](p, kLine); }
  };
  using Ops = std::unique_ptr<TraceOp[], FreeOps>;

  // Uninitialised (push writes a slot before anything reads it), which spares zeroing memory
  // the copy and the pushes overwrite anyway.
  static Ops allocate_ops(std::uint64_t n) {
    return Ops(static_cast<TraceOp*>(::operator new[](n * sizeof(TraceOp), kLine)));
  }

  // Doubling keeps the capacity a power of two, so a position maps to its slot with a mask.
  void grow() {
    const std::uint64_t bigger = size_ * 2;
    Ops ops = allocate_ops(bigger);
    std::unique_ptr<Times[]> times(new Times[bigger]);
    const std::uint64_t new_mask = bigger - 1;
    for (std::uint64_t p = begin_; p != end_; ++p) {
      ops[p & new_mask] = ops_[p & mask_];
      times[p & new_mask] = times_[p & mask_];
    }
    ops_ = std::move(ops);
    times_ = std::move(times);
    size_ = bigger;
    mask_ = new_mask;
  }

  Ops ops_;
  std::unique_ptr<Times[]> times_;
  std::uint64_t size_;
  std::uint64_t mask_;
  std::uint64_t begin_ = 0;
  std::uint64_t end_ = 0;
};

}  // namespace tlm_models

#endif  // TLM_MODELS_OP_WINDOW_H
