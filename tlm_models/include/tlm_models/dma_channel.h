// One channel of the DMA engine: splits 2-D transfers into bursts, keeps up to max_outstanding
// bursts in flight, and moves each burst as a TLM read from the source followed by a TLM write
// of the same bytes to the destination. Timing formulas are in docs/models/dma.md.
#ifndef TLM_MODELS_DMA_CHANNEL_H
#define TLM_MODELS_DMA_CHANNEL_H

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <systemc>

#include "tlm_models/block_access.h"
#include "tlm_models/burst_train.h"
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
             unsigned max_outstanding, Ticks setup_latency, bool burst_trains = true)
      : access_(socket, name),
        socket_(socket),
        name_(name),
        max_burst_(max_burst),
        setup_(setup_latency),
        burst_trains_(burst_trains),
        buffer_(max_burst),
        completions_ring_(max_outstanding, 0) {
    train_ = new BurstTrain;
    train_payload_.set_extension(train_);  // the payload owns and frees it
  }

  DmaChannel(const DmaChannel&) = delete;
  DmaChannel& operator=(const DmaChannel&) = delete;

  const std::string& name() const { return name_; }

  OpTiming execute(const TraceOp& op, const sc_core::sc_time& start) override {
    return to_op_timing(execute_ticks(op, to_ticks(start), nullptr));
  }

  // A transfer does not stream (OpExecutor::execute_streamed): it waits for its whole inputs.
  TickTiming execute_ticks(const TraceOp& op, Ticks start, const Ticks* inputs_done) override {
    if (op.kind != static_cast<std::uint8_t>(OpKind::load) &&
        op.kind != static_cast<std::uint8_t>(OpKind::store))
      throw OpError(name_ + ": cannot execute operation kind " + std::to_string(op.kind) +
                    " (a DMA channel runs load and store)");
    const DmaDescriptor d{op.src0, op.dst, op.m, op.n, op.src_stride, op.dst_stride};
    return transfer_ticks(d, start_after_inputs(start, inputs_done));
  }

  // Which side of the last transfer went to memory as burst trains (statistics for tests).
  enum class TrainLeg { none, source, destination };
  TrainLeg last_train_leg() const { return last_leg_; }

  // The timing core shared by execute() and the descriptor queue; `start` >= sc_time_stamp().
  OpTiming transfer(const DmaDescriptor& d, Ticks start) { return to_op_timing(transfer_ticks(d, start)); }

  TickTiming transfer_ticks(const DmaDescriptor& d, Ticks start) {
    Bursts b(d, max_burst_);
    const std::size_t window = completions_ring_.size();
    const Ticks first_issue = add_ticks(start, setup_);  // checked: a run past SystemC's range stops
    Transfer x{first_issue, first_issue, ~Ticks{0}, 0};   // issue times are nondecreasing
    last_leg_ = burst_trains_ && b.count() >= 2 ? plan_trains(b) : TrainLeg::none;
    if (last_leg_ == TrainLeg::none) {
      for (Burst u; b.next(u);) {
        // The slot holds the completion of the burst max_outstanding bursts ago (of this
        // descriptor or an earlier one still draining): a credit frees when it completes.
        Ticks& slot = completions_ring_[next_slot_];
        if (slot > x.issue) x.issue = slot;
        const Ticks read_done = access_.read(u.src, buffer_.data(), u.len, x.issue);
        const Ticks write_done = access_.write(u.dst, buffer_.data(), u.len, read_done);
        complete(x, x.issue, write_done);
      }
    } else {
      // Groups of max_outstanding bursts: each one's issue time depends only on completions of
      // earlier groups, so the group's memory-side transactions go as one train. The two sides
      // share no resource (plan_trains), so booking one side's bursts before the other's gives
      // each resource the same requests in the same order as burst-by-burst booking.
      for (;;) {
        group_.clear();
        for (Burst u; group_.size() < window && b.next(u);) {
          const Ticks slot = completions_ring_[(next_slot_ + group_.size()) % window];
          if (slot > x.issue) x.issue = slot;
          u.issue = x.issue;
          group_.push_back(u);
        }
        if (group_.empty()) break;
        const bool src_train = last_leg_ == TrainLeg::source;
        leg(tlm::TLM_READ_COMMAND, src_train);
        leg(tlm::TLM_WRITE_COMMAND, !src_train);
        for (const Burst& u : group_) complete(x, u.issue, u.at);
      }
    }
    Ticks wait = 0;
    if (x.bursts > 0) {
      const Ticks zero_load = setup_ + ceil_div(x.bursts, window) * x.min_round_trip;
      if (x.done - start > zero_load) wait = x.done - start - zero_load;
    }
    const Ticks engine_free = x.bursts > 0 ? x.issue : x.done;
    const std::uint64_t bytes = std::uint64_t{d.rows} * d.row_bytes;
    ++descriptors_;
    bursts_ += x.bursts;
    bytes_ += bytes;
    wait_ += wait;
    busy_.add(start, x.done);
    return TickTiming{engine_free, x.done, wait, false, 0};
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

  // One burst: source and destination addresses, length; in a group, its issue time and the
  // completion of its current side (`at`).
  struct Burst {
    std::uint64_t src = 0, dst = 0;
    std::uint32_t len = 0;
    Ticks issue = 0, at = 0;
  };

  // The bursts of a descriptor in issue order: each row cut from its start into max_burst
  // pieces. Rows contiguous at both ends are one block: bursts may then span row boundaries, as
  // a real DMA's would (a tile of 64 K rows of 128 B is 4 bursts of 2 KiB, not 64).
  class Bursts {
   public:
    Bursts(const DmaDescriptor& d, std::uint32_t max_burst)
        : src_(d.src), dst_(d.dst), rows_(d.rows), row_bytes_(d.row_bytes),
          src_pitch_(d.src_stride ? d.src_stride : d.row_bytes),
          dst_pitch_(d.dst_stride ? d.dst_stride : d.row_bytes), max_burst_(max_burst) {
      if (src_pitch_ == row_bytes_ && dst_pitch_ == row_bytes_) {
        row_bytes_ *= rows_;
        rows_ = 1;
      }
      if (row_bytes_ == 0) rows_ = 0;
    }
    std::uint64_t count() const { return rows_ * ceil_div(row_bytes_, max_burst_); }
    // Bytes from the first source (destination) byte to one past the last.
    std::uint64_t src_span() const { return rows_ ? (rows_ - 1) * src_pitch_ + row_bytes_ : 0; }
    std::uint64_t dst_span() const { return rows_ ? (rows_ - 1) * dst_pitch_ + row_bytes_ : 0; }
    std::uint64_t src() const { return src_; }
    std::uint64_t dst() const { return dst_; }

    bool next(Burst& u) {
      if (row_ >= rows_) return false;
      const std::uint64_t left = row_bytes_ - off_;
      u.len = static_cast<std::uint32_t>(left < max_burst_ ? left : max_burst_);
      u.src = src_ + row_ * src_pitch_ + off_;
      u.dst = dst_ + row_ * dst_pitch_ + off_;
      off_ += u.len;
      if (off_ == row_bytes_) {
        off_ = 0;
        ++row_;
      }
      return true;
    }

   private:
    std::uint64_t src_, dst_, rows_, row_bytes_, src_pitch_, dst_pitch_, max_burst_;
    std::uint64_t row_ = 0, off_ = 0;
  };

  // A transfer in progress: the latest issue time, the latest completion, the fastest round
  // trip and the bursts completed.
  struct Transfer {
    Ticks issue, done, min_round_trip;
    std::uint64_t bursts;
  };

  // A burst issued at `issue` has completed at `write_done`: its credit returns then.
  void complete(Transfer& x, Ticks issue, Ticks write_done) {
    completions_ring_[next_slot_] = write_done;
    if (++next_slot_ == completions_ring_.size()) next_slot_ = 0;
    if (write_done > x.done) x.done = write_done;
    if (write_done - issue < x.min_round_trip) x.min_round_trip = write_done - issue;
    ++x.bursts;
  }

  // Burst trains go to the side whose whole range the probe found train-capable (a bandwidth-
  // level HBM behind crossbars), provided the other side occupies none of its resources.
  // The answer is kept while later transfers stay within the address windows the probes
  // returned (the same routes and memories: the answer cannot change).
  TrainLeg plan_trains(const Bursts& b) {
    if (plan_.covers(b)) return plan_.leg;
    const bool src = probe(b.src(), b.src_span(), src_path_, plan_.src_first, plan_.src_last);
    const bool dst = probe(b.dst(), b.dst_span(), dst_path_, plan_.dst_first, plan_.dst_last);
    plan_.valid = true;
    if (BurstTrain::paths_meet(src_path_, dst_path_))
      plan_.leg = TrainLeg::none;
    else
      plan_.leg = src ? TrainLeg::source : dst ? TrainLeg::destination : TrainLeg::none;
    return plan_.leg;
  }

  bool probe(std::uint64_t address, std::uint64_t span, std::vector<const void*>& path,
             std::uint64_t& first, std::uint64_t& last) {
    train_->start_probe(address, span);
    prepare(tlm::TLM_READ_COMMAND, address, 0);
    socket_->transport_dbg(train_payload_);
    path.swap(train_->path);
    // With no train-aware component on the path nothing narrowed the window: only the probed
    // range is known.
    const bool known = !path.empty() && Plan::inside(address, span, train_->first, train_->last);
    first = known ? train_->first : address;
    last = known ? train_->last : address + span - 1;
    return train_->usable();
  }

  // The last probes' answer and the windows it holds for.
  struct Plan {
    bool valid = false;
    std::uint64_t src_first = 0, src_last = 0, dst_first = 0, dst_last = 0;
    TrainLeg leg = TrainLeg::none;
    static bool inside(std::uint64_t addr, std::uint64_t span, std::uint64_t first,
                       std::uint64_t last) {
      return span > 0 && addr >= first && addr <= last && span - 1 <= last - addr;
    }
    bool covers(const Bursts& b) const {
      return valid && inside(b.src(), b.src_span(), src_first, src_last) &&
             inside(b.dst(), b.dst_span(), dst_first, dst_last);
    }
  };

  void prepare(tlm::tlm_command cmd, std::uint64_t address, std::uint32_t bytes) {
    train_payload_.set_command(cmd);
    train_payload_.set_address(address);
    train_payload_.set_data_ptr(buffer_.data());
    train_payload_.set_data_length(bytes);
    train_payload_.set_streaming_width(bytes);
    train_payload_.set_byte_enable_ptr(nullptr);
    train_payload_.set_byte_enable_length(0);
    train_payload_.set_dmi_allowed(false);
    train_payload_.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  }

  // One side (read: the sources, at the issue times; write: the destinations, at the read
  // completions) of the group's bursts, as one train or burst by burst; `at` becomes each
  // burst's completion of that side.
  void leg(tlm::tlm_command cmd, bool as_train) {
    const bool read = cmd == tlm::TLM_READ_COMMAND;
    if (!as_train) {
      for (Burst& u : group_)
        u.at = read ? access_.read(u.src, buffer_.data(), u.len, u.issue)
                    : access_.write(u.dst, buffer_.data(), u.len, u.at);
      return;
    }
    BurstTrain& t = *train_;
    const std::uint64_t base = read ? group_.front().src : group_.front().dst;
    t.bursts.clear();
    t.served = false;
    for (const Burst& u : group_)
      t.bursts.push_back(BurstTrain::Burst{(read ? u.src : u.dst) - base, u.len,
                                           read ? u.issue : u.at, 0});
    prepare(cmd, base, group_.front().len);
    const Ticks now = now_ticks();
    sc_core::sc_time delay = from_ticks(t.bursts.front().arrival - now);
    socket_->b_transport(train_payload_, delay);
    if (train_payload_.get_response_status() != tlm::TLM_OK_RESPONSE || !t.served) {
      char buf[160];
      std::snprintf(buf, sizeof buf, ": %s train of %zu bursts at 0x%" PRIx64 " failed: %s",
                    read ? "read" : "write", group_.size(), base,
                    train_payload_.get_response_string().c_str());
      throw OpError(name_ + buf);
    }
    for (std::size_t k = 0; k < group_.size(); ++k) group_[k].at = t.bursts[k].done;
  }

  BlockAccess access_;
  BlockAccess::Socket& socket_;
  std::string name_;
  std::uint32_t max_burst_;
  Ticks setup_;
  bool burst_trains_;
  TrainLeg last_leg_ = TrainLeg::none;
  tlm::tlm_generic_payload train_payload_;  // trains and their probes
  BurstTrain* train_ = nullptr;             // owned by train_payload_
  std::vector<Burst> group_;
  std::vector<const void*> src_path_, dst_path_;  // the last probes' resources
  Plan plan_;
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
