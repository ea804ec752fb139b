// One channel of the DMA engine: splits 2-D transfers into bursts, keeps up to max_outstanding
// bursts in flight, and moves each burst as a TLM read from the source followed by a TLM write
// of the same bytes to the destination. Timing formulas are in docs/models/dma.md.
#ifndef TLM_MODELS_DMA_CHANNEL_H
#define TLM_MODELS_DMA_CHANNEL_H

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <systemc>

#include "tlm_models/block_access.h"
#include "tlm_models/busy_time.h"
#include "tlm_models/op_executor.h"
#include "tlm_models/stats.h"
#include "tlm_models/time_ticks.h"
#include "tlm_models/trace_op.h"

namespace tlm_models {

// A 2-D transfer: `rows` rows of `row_bytes` bytes; row pitches of 0 mean `row_bytes`.
struct DmaDescriptor {
  std::uint64_t src = 0;
  std::uint64_t dst = 0;
  std::uint32_t rows = 1;
  std::uint32_t row_bytes = 0;
  std::uint32_t src_stride = 0;
  std::uint32_t dst_stride = 0;
};

class DmaChannel : public OpExecutor {
 public:
  DmaChannel(BlockAccess::Socket& socket, const std::string& name, std::uint32_t max_burst,
             unsigned max_outstanding, Ticks setup_latency)
      : access_(socket, name),
        name_(name),
        max_burst_(max_burst),
        setup_(setup_latency),
        buffer_(max_burst),
        completions_ring_(max_outstanding, 0) {}

  DmaChannel(const DmaChannel&) = delete;
  DmaChannel& operator=(const DmaChannel&) = delete;

  const std::string& name() const { return name_; }

  OpTiming execute(const TraceOp& op, const sc_core::sc_time& start) override {
    if (op.kind != static_cast<std::uint8_t>(OpKind::load) &&
        op.kind != static_cast<std::uint8_t>(OpKind::store))
      throw OpError(name_ + ": cannot execute operation kind " + std::to_string(op.kind) +
                    " (a DMA channel runs load and store)");
    const DmaDescriptor d{op.src0, op.dst, op.m, op.n, op.src_stride, op.dst_stride};
    return transfer(d, to_ticks(start));
  }

  // The timing core shared by execute() and the descriptor queue; `start` >= sc_time_stamp().
  OpTiming transfer(const DmaDescriptor& d, Ticks start) {
    std::uint64_t rows = d.rows;
    std::uint64_t row_bytes = d.row_bytes;
    const std::uint64_t src_pitch = d.src_stride ? d.src_stride : d.row_bytes;
    const std::uint64_t dst_pitch = d.dst_stride ? d.dst_stride : d.row_bytes;
    if (src_pitch == row_bytes && dst_pitch == row_bytes) {
      // Rows contiguous at both ends are one block: bursts may then span row boundaries,
      // as a real DMA's would (a tile of 64 K rows of 128 B is 4 bursts of 2 KiB, not 64).
      row_bytes *= rows;
      rows = 1;
    }
    const std::size_t window = completions_ring_.size();
    Ticks issue = start + setup_;  // issue times are nondecreasing
    Ticks done = issue;
    Ticks min_round_trip = ~Ticks{0};
    std::uint64_t bursts = 0;
    for (std::uint64_t row = 0; row < rows; ++row) {
      const std::uint64_t src_row = d.src + row * src_pitch;
      const std::uint64_t dst_row = d.dst + row * dst_pitch;
      for (std::uint64_t off = 0; off < row_bytes;) {
        const std::uint32_t len = static_cast<std::uint32_t>(
            row_bytes - off < max_burst_ ? row_bytes - off : max_burst_);
        // The slot holds the completion of the burst max_outstanding bursts ago (of this
        // descriptor or an earlier one still draining): a credit frees when it completes.
        Ticks& slot = completions_ring_[next_slot_];
        if (slot > issue) issue = slot;
        const Ticks read_done = access_.read(src_row + off, buffer_.data(), len, issue);
        const Ticks write_done = access_.write(dst_row + off, buffer_.data(), len, read_done);
        slot = write_done;
        if (++next_slot_ == window) next_slot_ = 0;
        if (write_done > done) done = write_done;
        if (write_done - issue < min_round_trip) min_round_trip = write_done - issue;
        ++bursts;
        off += len;
      }
    }
    Ticks wait = 0;
    if (bursts > 0) {
      const Ticks zero_load = setup_ + ceil_div(bursts, window) * min_round_trip;
      if (done - start > zero_load) wait = done - start - zero_load;
    }
    const Ticks engine_free = bursts > 0 ? issue : done;
    const std::uint64_t bytes = std::uint64_t{d.rows} * d.row_bytes;
    ++descriptors_;
    bursts_ += bursts;
    bytes_ += bytes;
    wait_ += wait;
    busy_.add(start, done);
    return OpTiming{from_ticks(engine_free), from_ticks(done), from_ticks(wait)};
  }

  // Descriptor queue for virtual prototypes: descriptors run in submission order, each
  // starting when the channel is free; `on_done` runs (in a method process, so it must not
  // wait) at the descriptor's completion, and completions are reported in order.
  void submit(const DmaDescriptor& d, std::function<void()> on_done) {
    queue_.push_back(Pending{d, std::move(on_done)});
    queue_event_.notify(sc_core::SC_ZERO_TIME);
  }

  // Notified at each completion of a queued descriptor.
  sc_core::sc_event& done_event() { return done_event_; }
  sc_core::sc_event& completion_timer() { return completion_timer_; }

  // Body of the channel's queue thread.
  void run_queue() {
    for (;;) {
      while (queue_.empty()) sc_core::wait(queue_event_);
      Pending p = std::move(queue_.front());
      queue_.pop_front();
      const Ticks now = now_ticks();
      OpTiming t;
      try {
        t = transfer(p.desc, now);
      } catch (const OpError& e) {
        SC_REPORT_ERROR("tlm_models/dma", e.what());
        continue;
      }
      Ticks at = to_ticks(t.done);
      if (at < last_completion_) at = last_completion_;
      last_completion_ = at;
      completions_.push_back(Completion{at, std::move(p.on_done)});
      completion_timer_.notify(from_ticks(at - now));
      sc_core::wait(t.engine_free - sc_core::sc_time_stamp());
    }
  }

  // Body of the channel's completion method (sensitive to completion_timer()).
  void fire_completions() {
    const Ticks now = now_ticks();
    while (!completions_.empty() && completions_.front().at <= now) {
      std::function<void()> cb = std::move(completions_.front().on_done);
      completions_.pop_front();
      if (cb) cb();
      done_event_.notify();
    }
    if (!completions_.empty()) completion_timer_.notify(from_ticks(completions_.front().at - now));
  }

  std::uint64_t descriptors() const { return descriptors_; }
  std::uint64_t bursts() const { return bursts_; }
  std::uint64_t bytes() const { return bytes_; }
  sc_core::sc_time busy_time() const { return from_ticks(busy_.total()); }
  sc_core::sc_time bandwidth_wait() const { return from_ticks(wait_); }
  // Bytes moved per second of busy time.
  double bandwidth() const {
    return busy_.total() ? static_cast<double>(bytes_) / ticks_to_seconds(busy_.total()) : 0.0;
  }

  void collect_stats(StatsGroup& g) const {
    g.add("descriptors", static_cast<double>(descriptors_), "ops", "transfers executed");
    g.add("bursts", static_cast<double>(bursts_), "bursts", "read+write burst pairs issued");
    g.add("bytes_read", static_cast<double>(bytes_), "B", "bytes read from sources");
    g.add("bytes_written", static_cast<double>(bytes_), "B", "bytes written to destinations");
    g.add("busy_time", ticks_to_ns(busy_.total()), "ns", "union of transfer intervals");
    g.add("bandwidth", bandwidth(), "B/s", "bytes moved per second of busy time");
    g.add("bandwidth_wait", ticks_to_ns(wait_), "ns", "transfer time beyond the latency bound");
  }

  void reset_stats() {
    descriptors_ = bursts_ = bytes_ = 0;
    wait_ = 0;
    busy_.reset();
  }

 private:
  struct Pending {
    DmaDescriptor desc;
    std::function<void()> on_done;
  };
  struct Completion {
    Ticks at;
    std::function<void()> on_done;
  };

  BlockAccess access_;
  std::string name_;
  std::uint32_t max_burst_;
  Ticks setup_;
  std::vector<unsigned char> buffer_;   // the burst in transit between its read and its write
  std::vector<Ticks> completions_ring_;  // completion times of the last max_outstanding bursts
  std::size_t next_slot_ = 0;

  std::deque<Pending> queue_;
  std::deque<Completion> completions_;
  Ticks last_completion_ = 0;
  sc_core::sc_event queue_event_;
  sc_core::sc_event completion_timer_;
  sc_core::sc_event done_event_;

  std::uint64_t descriptors_ = 0;
  std::uint64_t bursts_ = 0;
  std::uint64_t bytes_ = 0;
  Ticks wait_ = 0;
  BusyTime busy_;
};

}  // namespace tlm_models

#endif  // TLM_MODELS_DMA_CHANNEL_H
