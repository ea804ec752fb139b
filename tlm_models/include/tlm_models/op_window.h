// The replayer's buffer of trace operations: a ring indexed by absolute trace position that
// keeps the operations read ahead of the schedule and, behind them, the completion times that
// later dependencies may still ask for (a dependency reaches back at most `window` records).
// Positions leave the ring only when the caller releases them, so memory is bounded by the
// window plus the read-ahead, whatever the trace length.
#ifndef TLM_MODELS_OP_WINDOW_H
#define TLM_MODELS_OP_WINDOW_H

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <utility>

#include "tlm_models/time_ticks.h"
#include "tlm_models/trace_op.h"

namespace tlm_models {

class OpWindow {
 public:
  struct Slot {
    TraceOp op;
    Ticks done;  // kPending until the operation has been issued
    Ticks first;  // when a streamed consumer may start on its result (<= done; forwarding)
  };
  static constexpr Ticks kPending = ~Ticks{0};

  OpWindow() : slots_(new Slot[kInitialCapacity]), size_(kInitialCapacity), mask_(kInitialCapacity - 1) {}

  std::uint64_t begin() const { return begin_; }  // oldest position still held
  std::uint64_t end() const { return end_; }      // position the next push receives
  std::uint64_t capacity() const { return size_; }

  std::uint64_t push(const TraceOp& op) {
    if (end_ - begin_ == size_) grow();
    Slot& s = slots_[end_ & mask_];
    s.op = op;
    s.done = kPending;
    s.first = kPending;
    return end_++;
  }

  // `pos` must lie in [begin(), end()).
  Slot& at(std::uint64_t pos) { return slots_[pos & mask_]; }
  const Slot& at(std::uint64_t pos) const { return slots_[pos & mask_]; }

  // Forgets every position below `pos` (no-op for positions already forgotten).
  void release_before(std::uint64_t pos) {
    if (pos > end_) throw std::logic_error("OpWindow: release beyond the last pushed position");
    if (pos > begin_) begin_ = pos;
  }

 private:
  static constexpr std::size_t kInitialCapacity = 1024;

  // Doubling keeps the capacity a power of two, so a position maps to its slot with a mask. The
  // new slots are left uninitialised (push writes a slot before anything reads it), which spares
  // zeroing memory the copy and the pushes overwrite anyway.
  void grow() {
    const std::uint64_t bigger = size_ * 2;
    std::unique_ptr<Slot[]> slots(new Slot[bigger]);
    const std::uint64_t new_mask = bigger - 1;
    for (std::uint64_t p = begin_; p != end_; ++p) slots[p & new_mask] = slots_[p & mask_];
    slots_ = std::move(slots);
    size_ = bigger;
    mask_ = new_mask;
  }

  std::unique_ptr<Slot[]> slots_;
  std::uint64_t size_;
  std::uint64_t mask_;
  std::uint64_t begin_ = 0;
  std::uint64_t end_ = 0;
};

}  // namespace tlm_models

#endif  // TLM_MODELS_OP_WINDOW_H
