// The replayer's buffer of trace operations, indexed by absolute trace position: the records
// read ahead of the schedule, and the completion times (and kinds) that later dependencies may
// still ask for, a dependency reaching back at most `window` records. Positions leave only when
// the caller releases them, so memory is bounded by the window plus the read-ahead, whatever
// the trace length.
//
// Three rings. A record (one 64-byte cache line; its ring is aligned to one) is read only until
// its operation is issued, so its ring spans the read-ahead alone (release_records_before);
// behind it a dependency asks for the operation's times (16 bytes) and the binding
// dependency's kind (1 byte), whose rings span the window. Keeping 64-byte records for the
// whole window (65,536 positions in the emitters' traces) cost 8 MiB of memory per replayer
// that every record first touched cold: on 16 tiles the fresh pages were a fifth of the
// replay's time (docs/replayer.md, "Sixteen tiles"), and the small record ring stays in cache.
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
  // Memory per position of capacity() (the record ring's slots, sizeof(TraceOp) each, come on
  // top: record_capacity()).
  static constexpr std::size_t kSlotBytes = sizeof(Times) + sizeof(std::uint8_t);

  OpWindow()
      : ops_(allocate_ops(kInitialCapacity)),
        times_(new Times[kInitialCapacity]),
        kinds_(new std::uint8_t[kInitialCapacity]),
        ops_size_(kInitialCapacity),
        ops_mask_(kInitialCapacity - 1),
        size_(kInitialCapacity),
        mask_(kInitialCapacity - 1) {}

  std::uint64_t begin() const { return begin_; }  // oldest position whose times are held
  std::uint64_t end() const { return end_; }      // position the next push receives
  // Positions the times ring holds (window plus read-ahead).
  std::uint64_t capacity() const { return size_; }
  // Records the record ring holds (read-ahead).
  std::uint64_t record_capacity() const { return ops_size_; }

  std::uint64_t push(const TraceOp& op) {
    if (end_ - begin_ == size_) grow_times();
    if (end_ - records_begin_ == ops_size_) grow_ops();
    ops_[end_ & ops_mask_] = op;
    times_[end_ & mask_] = Times{kPending, kPending};
    kinds_[end_ & mask_] = op.kind;
    return end_++;
  }

  // `pos` must lie in [records_begin, end()): not released by release_records_before.
  const TraceOp& op(std::uint64_t pos) const { return ops_[pos & ops_mask_]; }
  // `pos` must lie in [begin(), end()).
  Times& times(std::uint64_t pos) { return times_[pos & mask_]; }
  const Times& times(std::uint64_t pos) const { return times_[pos & mask_]; }
  std::uint8_t kind(std::uint64_t pos) const { return kinds_[pos & mask_]; }

  // Forgets every position below `pos` (no-op for positions already forgotten).
  void release_before(std::uint64_t pos) {
    if (pos > end_) throw std::logic_error("OpWindow: release beyond the last pushed position");
    if (pos > begin_) begin_ = pos;
    if (pos > records_begin_) records_begin_ = pos;
  }

  // Forgets the records (not the times and kinds) below `pos`: operations already issued.
  void release_records_before(std::uint64_t pos) {
    if (pos > end_) throw std::logic_error("OpWindow: release beyond the last pushed position");
    if (pos > records_begin_) records_begin_ = pos;
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

  // Doubling keeps the capacities powers of two, so a position maps to its slot with a mask.
  void grow_ops() {
    const std::uint64_t bigger = ops_size_ * 2;
    Ops ops = allocate_ops(bigger);
    const std::uint64_t new_mask = bigger - 1;
    for (std::uint64_t p = records_begin_; p != end_; ++p) ops[p & new_mask] = ops_[p & ops_mask_];
    ops_ = std::move(ops);
    ops_size_ = bigger;
    ops_mask_ = new_mask;
  }

  void grow_times() {
    const std::uint64_t bigger = size_ * 2;
    std::unique_ptr<Times[]> times(new Times[bigger]);
    std::unique_ptr<std::uint8_t[]> kinds(new std::uint8_t[bigger]);
    const std::uint64_t new_mask = bigger - 1;
    for (std::uint64_t p = begin_; p != end_; ++p) {
      times[p & new_mask] = times_[p & mask_];
      kinds[p & new_mask] = kinds_[p & mask_];
    }
    times_ = std::move(times);
    kinds_ = std::move(kinds);
    size_ = bigger;
    mask_ = new_mask;
  }

  Ops ops_;
  std::unique_ptr<Times[]> times_;
  std::unique_ptr<std::uint8_t[]> kinds_;
  std::uint64_t ops_size_;
  std::uint64_t ops_mask_;
  std::uint64_t size_;
  std::uint64_t mask_;
  std::uint64_t begin_ = 0;
  std::uint64_t records_begin_ = 0;
  std::uint64_t end_ = 0;
};

}  // namespace tlm_models

#endif  // TLM_MODELS_OP_WINDOW_H
