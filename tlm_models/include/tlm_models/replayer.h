// The trace replayer: drives the platform's engines with a trace by time-ordered list scheduling
// and measures where the time goes (docs/replayer.md).
//
// Each engine executes its own operations in trace order; an operation may start once every
// operation it depends on has been issued (execute() returns the completion time, so a
// dependency's done time is known from its issue on). Among the engines whose next operation is
// ready, the one that can start earliest goes first, so operations are issued in nondecreasing
// start time and shared targets see their requests in time order.
//
// Input arrives in chunks without any callback out of the simulation: when the thread needs more
// records it raises wants_input() and pauses the kernel (sc_pause), and the driver feeds the
// next chunk before resuming it. Inside a virtual prototype a pause would freeze the whole SoC,
// so there the thread instead waits for an event that feed()/end_of_input() notify
// (InputMode::wait_event) and another process of the model feeds it. Memory stays bounded by
// the dependency window plus the read-ahead (set_lookahead), whatever the trace length.
#ifndef TLM_MODELS_REPLAYER_H
#define TLM_MODELS_REPLAYER_H

#include <alloca.h>
#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <systemc>

#include "tlm_models/engine_kind.h"
#include "tlm_models/issue_gate.h"
#include "tlm_models/op_executor.h"
#include "tlm_models/op_window.h"
#include "tlm_models/replay_metrics.h"
#include "tlm_models/stats.h"
#include "tlm_models/tile_sync.h"
#include "tlm_models/time_ticks.h"
#include "tlm_models/timeline_recorder.h"
#include "tlm_models/trace_op.h"

namespace tlm_models {

class Replayer : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(Replayer);

  // How the thread waits for records that have not been fed yet.
  enum class InputMode {
    pause,       // sc_pause(): the driver of sc_start feeds between slices (Python, batch VPs)
    wait_event,  // wait for feed()/end_of_input() from another process; the kernel runs on
  };
  static constexpr std::uint64_t kNoRecord = ~std::uint64_t{0};

  explicit Replayer(sc_core::sc_module_name name) : sc_core::sc_module(name) { SC_THREAD(run); }

  // --- set-up, before the simulation starts -------------------------------------------------

  // How far back (in records) a dependency may reach: the trace header's window.
  void set_window(std::uint32_t window) {
    require_setup("set_window");
    window_ = window;
  }

  void bind_engine(unsigned index, OpExecutor* exec, const std::string& name, EngineKind kind) {
    require_setup("bind_engine");
    if (index > 0xff) throw std::invalid_argument("bind_engine: engine index above 255");
    if (exec == nullptr) throw std::invalid_argument("bind_engine: null executor for " + name);
    if (index >= engines_.size()) engines_.resize(index + 1);
    if (engines_[index].exec == nullptr) {
      bound_.push_back(index);
      ++headless_;
    }
    engines_[index].exec = exec;
    engines_[index].index = index;
    engines_[index].kinds = 0;
    for (unsigned k = 0; k < 8; ++k)
      if (op_kind_name(static_cast<std::uint8_t>(k)) && runs_on(static_cast<std::uint8_t>(k), kind))
        engines_[index].kinds |= static_cast<std::uint8_t>(1u << k);
    kinds_by_engine_[index] = engines_[index].kinds;
    metrics_.add_engine(index, name, kind);
  }

  void set_tensor(unsigned index, const std::string& name) {
    require_setup("set_tensor");
    if (index >= ReplayMetrics::kUntagged)
      throw std::invalid_argument("set_tensor: tensor index must be below 255");
    metrics_.set_tensor(index, name);
  }

  // Read at most this many records past the oldest record not yet issued.
  void set_lookahead(std::uint64_t max_buffered_ops) {
    require_setup("set_lookahead");
    if (max_buffered_ops == 0) throw std::invalid_argument("set_lookahead: must be at least 1");
    lookahead_ = max_buffered_ops;
  }

  // How far the issued operations may run ahead of the kernel's time before the replayer waits.
  void set_quantum(const sc_core::sc_time& quantum) {
    require_setup("set_quantum");
    quantum_ = to_ticks(quantum);
  }

  void record_timeline(const sc_core::sc_time& from, const sc_core::sc_time& to,
                       std::uint64_t max_entries) {
    require_setup("record_timeline");
    timeline_.configure(to_ticks(from), to_ticks(to), max_entries);
  }

  // Called with each operation's record position and start time just before it executes: the
  // host's view of progress (fast-forward takes its per-iteration snapshots here). Optional;
  // may be set or cleared whenever the kernel is paused.
  using IssueObserver = std::function<void(std::uint64_t pos, Ticks start)>;
  void set_issue_observer(IssueObserver observer) { observer_ = std::move(observer); }

  // Replayers sharing components (a chip's tiles) order their operations through one gate
  // (issue_gate.h); `member` is this replayer's index there, the tie-break at equal starts.
  void set_issue_gate(IssueGate* gate, unsigned member) {
    require_setup("set_issue_gate");
    gate_ = gate;
    gate_member_ = member;
  }

  // Cross-tile tokens (tile_sync.h) of a chip's tiles, shared by their replayers; with the gate.
  void set_tile_sync(TileSync* sync) {
    require_setup("set_tile_sync");
    sync_ = sync;
  }

  // An engine that reaches only components of its own tile (a tile's PE array or Exp unit)
  // issues without the gate: the other tiles never see its requests, so its order among
  // theirs cannot change a result. It still takes the gate before waiting in time.
  void set_engine_gated(unsigned index, bool gated) {
    require_setup("set_engine_gated");
    if (index >= engines_.size() || engines_[index].exec == nullptr)
      throw std::invalid_argument("set_engine_gated: engine " + std::to_string(index) +
                                  " is not bound");
    engines_[index].gated = gated;
  }

  void set_input_mode(InputMode mode) {
    require_setup("set_input_mode");
    input_mode_ = mode;
  }

  // true (default): a failed replay ends the simulation (sc_stop), the process is spent.
  // false: only the replay ends (finished(), failed(), done_event()); the rest of the model,
  // e.g. a device that reports the error through its registers, keeps running.
  void set_stop_on_error(bool stop) {
    require_setup("set_stop_on_error");
    stop_on_error_ = stop;
  }

  // --- input, between sc_start calls (or all of it before the first) -----------------------

  // A chunk fed: its records, copied into `owned` (feed) or the caller's (feed_borrowed).
  struct InputChunk {
    const TraceOp* data = nullptr;
    std::size_t size = 0;
    std::vector<TraceOp> owned;
  };

  // Copies `count` records; the caller's buffer may be reused as soon as this returns.
  void feed(const TraceOp* ops, std::uint64_t count) {
    InputChunk chunk;
    chunk.owned.assign(ops, ops + count);
    chunk.data = chunk.owned.data();  // a vector's buffer stays put when the vector is moved
    chunk.size = count;
    enqueue(std::move(chunk));
  }

  // Takes `count` records without copying them: the caller keeps them alive and unchanged
  // until the replayer has read them all, which is when chunks_pending() no longer counts
  // this chunk (chunks are read in the order fed; the replayer asks for input, wants_input(),
  // only once every chunk fed before has been read). A file's records then go from its
  // mapping straight into the window: copying a 64 MiB chunk into fresh memory cost a fifth
  // of a one-tile replay's wall time (docs/replayer.md, "Input without copies").
  void feed_borrowed(const TraceOp* ops, std::uint64_t count) {
    InputChunk chunk;
    chunk.data = ops;
    chunk.size = count;
    enqueue(std::move(chunk));
  }

  // Chunks fed and not yet read in full (the latest ones fed).
  std::size_t chunks_pending() const { return pending_.size(); }

  void end_of_input() {
    input_ended_ = true;
    wants_input_ = false;
    wake_for_input();
  }

  bool wants_input() const { return wants_input_; }
  bool finished() const { return finished_; }
  bool failed() const { return failed_; }
  std::string error() const { return error_; }
  // Trace position of the record a failure names (kNoRecord when it names none).
  std::uint64_t error_record() const { return error_record_; }
  // What the replay thread is blocked on, for a driver that finds the kernel out of events
  // before the replay has finished: the record whose engine has not returned, or the input.
  std::string waiting_on() const {
    if (executing_ != kNoRecord)
      return describe(executing_, window_buf_.op(executing_)) +
             ": its engine has not returned from the operation";
    if (finished_) return "nothing (the replay has finished)";
    if (sync_ && !sync_->waiting_on(gate_member_).empty()) return sync_->waiting_on(gate_member_);
    return "trace input (records " + std::to_string(records_fed_) + " fed so far)";
  }
  // Records fed and not yet taken by the scheduler: a feeding process bounds its run-ahead
  // with this and input_consumed_event().
  std::uint64_t records_pending() const { return records_fed_ - window_buf_.end(); }
  // Notified (delta) whenever the scheduler has taken the last record of a fed chunk, in
  // InputMode::wait_event.
  const sc_core::sc_event& input_consumed_event() const { return input_consumed_; }
  // Notified (delta) when the replay ends, successfully or not.
  const sc_core::sc_event& done_event() const { return done_; }

  // --- results ------------------------------------------------------------------------------

  const ReplayMetrics& metrics() const { return metrics_; }
  // Scheduling decisions taken with the read-ahead at its cap while some engine's next
  // operation was still unknown.
  std::uint64_t lookahead_limited() const { return lookahead_limited_; }
  std::uint64_t records_read() const { return window_buf_.end(); }
  // Positions the record buffer's times span (their memory is this times
  // OpWindow::kSlotBytes; the unissued records' ring, record_capacity(), comes on top).
  std::uint64_t buffer_capacity() const { return window_buf_.capacity(); }
  std::uint64_t record_capacity() const { return window_buf_.record_capacity(); }

  void collect_stats(StatsGroup& g) const {
    metrics_.collect(g);
    g.add("records_read", static_cast<double>(records_read()), "ops", "trace records read");
    g.add("lookahead_limited", static_cast<double>(lookahead_limited_), "events",
          "decisions taken at the read-ahead cap with an engine's next operation unknown");
    g.add("buffer_capacity", static_cast<double>(buffer_capacity()), "ops",
          "record buffer slots (window + read-ahead)");
    g.add("timeline_entries", static_cast<double>(timeline_.records().size()), "ops",
          "timeline records kept");
    g.add("timeline_dropped", static_cast<double>(timeline_.dropped()), "ops",
          "timeline records beyond max_entries");
    g.add("finished", finished_ ? 1.0 : 0.0, "1", "the replay has ended (successfully or not)");
    g.add("failed", failed_ ? 1.0 : 0.0, "1", error_);
  }

  // The "replay" statistics group as JSON; the error message is the description of "failed".
  std::string result_json() const {
    StatsGroup g("replay");
    collect_stats(g);
    return g.to_json();
  }

  std::uint64_t timeline_size() const { return timeline_.records().size(); }
  const std::vector<TimelineRecord>& timeline() const { return timeline_.records(); }
  // Writes timeline_size() TimelineRecords (32 bytes each) to `out`.
  void timeline_copy(void* out) const { timeline_.copy_to(out); }

 private:
  // Ends the replay with a message; thrown inside the thread only.
  class ReplayStop : public std::runtime_error {
   public:
    explicit ReplayStop(const std::string& what, std::uint64_t pos = kNoRecord)
        : std::runtime_error(what), record(pos) {}
    std::uint64_t record;
  };

  struct Engine {
    OpExecutor* exec = nullptr;
    unsigned index = 0;  // in engines_
    // Positions of its read, unissued records, in trace order: the first (kNoRecord when there
    // is none) in `front`, which the scheduler reads for every engine at every decision (one
    // load instead of the deque's two iterators), the others in `rest`.
    std::uint64_t front = kNoRecord;
    std::deque<std::uint64_t> rest;
    Ticks free = 0;
    bool gated = true;  // issues through the gate, when there is one
    std::uint8_t kinds = 0;  // bit k: an operation of kind k runs here (k < 8; check_record)
    // choose()'s findings on the front record, kept while it stays the front: once every
    // dependency is done their times never change, so they are gathered once (ready_pos); a
    // record still waiting is looked at again only when the dependency it waited on is done.
    mutable std::uint64_t ready_pos = kNoRecord;
    mutable std::uint64_t blocked_pos = kNoRecord;
    mutable std::uint64_t blocked_on = 0;
    mutable Ticks deps_ready = 0;
    mutable Ticks earliest = 0;  // max(free, deps_ready): its start but for the scheduler's time
    mutable Ticks inputs_done = 0;  // streamed: latest done of the named producers
    mutable bool streamed = false;
    mutable std::uint8_t binding_dep_kind = 0;
  };

  // The operation chosen: engine `engine`'s front record; what its dependencies allow is kept
  // in the Engine (choose() found it ready).
  struct Pick {
    bool found() const { return pos != kNoRecord; }
    unsigned engine = 0;
    std::uint64_t pos = kNoRecord;
    Ticks start = ~Ticks{0};
  };

  // The threads of a chip's replayers run the same code, so their frames at equal depth sit at
  // equal offsets in their stacks, and SystemC gives every thread a stack of the same size
  // (256 KiB, a multiple of an L2 cache's set period: 64 KiB for 512 KiB and 8 ways): without
  // an offset, 16 tiles' hot frames compete for the same cache sets at every hand-over. Gated
  // member i starts its frames (i mod 16) x 41 cache lines lower, so 16 members cover 656
  // distinct lines of the set period (docs/replayer.md, "Sixteen tiles").
  static constexpr std::size_t kStackColourBytes = 41 * 64;
  static constexpr unsigned kStackColours = 16;

  void require_setup(const char* what) const {
    if (started_) throw std::logic_error(std::string(what) + " after the simulation started");
  }

  void run() {
    started_ = true;
    for (unsigned idx : bound_) bound_engines_.push_back(&engines_[idx]);  // engines_ stays put now
    // The replay's frames start lower by the member's stack colour (kept: the member holds it).
    stack_colour_ = alloca(kStackColourBytes * (gate_member_ % kStackColours) + 1);
    try {
      schedule();
    } catch (const ReplayStop& e) {
      leave_gate();
      failed_ = true;
      error_ = e.what();
      error_record_ = e.record;
      finished_ = true;
      done_.notify(sc_core::SC_ZERO_TIME);
      if (stop_on_error_) sc_core::sc_stop();
      return;
    }
    finished_ = true;
    done_.notify(sc_core::SC_ZERO_TIME);
  }

  // What fill() stopped at.
  enum class Fill {
    complete,     // every engine's next operation is known, or the input has ended
    at_cap,       // the read-ahead cap, with some engine's next operation unknown
    input_short,  // wait_event mode: the fed records ran out with some engine's next one unknown
  };

  void schedule() {
    for (;;) {
      const Fill fill_state = fill();
      const Pick pick = choose();
      if (fill_state == Fill::input_short) {
        if (!issue_before_input(pick)) continue;
        issue(pick);
        continue;
      }
      if (!pick.found()) {
        if (window_buf_.end() == oldest_unissued_) break;  // fill() stops only at input's end then
        if (sync_ && sync_->park(gate_member_)) continue;  // another tile's store is missing
        throw ReplayStop(blocked_report());
      }
      if (fill_state == Fill::at_cap) ++lookahead_limited_;
      issue(pick);
    }
    leave_gate();  // before waiting for the last completion: the others go on meanwhile
    const Ticks now = now_ticks();
    if (metrics_.last_done() > now) wait(from_ticks(metrics_.last_done() - now));
  }

  // Reads records until every engine has its next operation known, the read-ahead reaches its
  // cap, or the input has ended; in wait_event mode also until the fed records run out while
  // some are unissued (the records still to come cost simulated time to arrive, so waiting for
  // them before deciding would hold back work that is ready now).
  Fill fill() {
    for (;;) {
      const bool have_unissued = window_buf_.end() > oldest_unissued_;
      if (have_unissued && headless_ == 0) return Fill::complete;
      // Past the end of the input an engine without a next operation simply has no more.
      if (pending_.empty() && input_ended_) return Fill::complete;
      if (window_buf_.end() - oldest_unissued_ >= lookahead_)
        return headless_ != 0 ? Fill::at_cap : Fill::complete;
      if (pending_.empty()) {
        if (have_unissued && input_mode_ == InputMode::wait_event) return Fill::input_short;
        await_input();
        continue;
      }
      read_records();
    }
  }

  // wait_event mode with records still to come: a record not fed yet might start before the
  // best known operation, so the decision is taken at that operation's start time unless input
  // arrives first. Returns true when `pick` is to be issued now, false to decide again.
  bool issue_before_input(const Pick& pick) {
    if (!pick.found()) {  // cannot happen (the oldest unissued record is always ready); be safe
      await_input();
      return false;
    }
    const Ticks now = now_ticks();
    if (pick.start <= now) return true;
    awaiting_input_ = true;
    wait(from_ticks(pick.start - now), input_arrived_);
    awaiting_input_ = false;
    return pending_.empty() && !input_ended_;
  }

  void await_input() {
    while (pending_.empty() && !input_ended_) {
      wants_input_ = true;
      if (input_mode_ == InputMode::wait_event) {
        awaiting_input_ = true;
        wait(input_arrived_);
        awaiting_input_ = false;
        continue;
      }
      // The pause hands control back to the caller of sc_start at the end of this delta cycle;
      // the zero-time wait lets this thread look again once the kernel is resumed.
      sc_core::sc_pause();
      wait(sc_core::SC_ZERO_TIME);
    }
    wants_input_ = false;
  }

  void enqueue(InputChunk&& chunk) {
    if (input_ended_) throw std::logic_error("feed after end_of_input");
    if (chunk.size == 0) return;
    records_fed_ += chunk.size;
    pending_.push_back(std::move(chunk));
    wants_input_ = false;
    wake_for_input();
  }

  // Reads records of the front chunk until every engine has its next operation, the read-ahead
  // reaches its cap or the chunk ends: what fill() would do one record at a time (between two
  // records of one chunk only the engines' heads and the cap can stop it), in one tight loop.
  void read_records() {
    const InputChunk& chunk = pending_.front();
    std::uint64_t n = chunk.size - pending_offset_;
    const std::uint64_t room = lookahead_ - (window_buf_.end() - oldest_unissued_);  // > 0 here
    if (room < n) n = room;
    const TraceOp* op = chunk.data + pending_offset_;
    const TraceOp* const last = op + n;
    std::uint64_t pos = window_buf_.end();
    do {
      check_record(*op, pos);
      window_buf_.push(*op);
      Engine& e = engines_[op->engine];
      if (e.front == kNoRecord) {
        e.front = pos;
        --headless_;
      } else {
        e.rest.push_back(pos);
      }
      ++pos;
      ++op;
    } while (op != last && headless_ != 0);
    pending_offset_ = static_cast<std::size_t>(op - chunk.data);
    if (pending_offset_ == chunk.size) {
      pending_.pop_front();
      pending_offset_ = 0;
      if (input_mode_ == InputMode::wait_event) input_consumed_.notify(sc_core::SC_ZERO_TIME);
    }
  }

  // Only a thread blocked in await_input() needs waking: one that has not got there yet finds
  // the records when it looks.
  void wake_for_input() {
    if (awaiting_input_) input_arrived_.notify(sc_core::SC_ZERO_TIME);
  }

  // One inline test for a valid record, on every record read: its engine runs its kind (one bit
  // of a per-engine-index mask that is 0 for an unbound index), it carries no cross-tile token
  // without the tiles' sync, and its deepest dependency lies within the trace and the window.
  // Only a record that fails it goes to record_error(), out of line, to name what is wrong.
  void check_record(const TraceOp& op, std::uint64_t pos) const {
    static_assert(kMaxDeps == 4, "the test below takes the deepest of four dependencies");
    std::uint32_t deepest = op.deps[0] > op.deps[1] ? op.deps[0] : op.deps[1];
    const std::uint32_t deeper = op.deps[2] > op.deps[3] ? op.deps[2] : op.deps[3];
    if (deeper > deepest) deepest = deeper;
    const bool valid = op.kind < 8 && (kinds_by_engine_[op.engine] >> op.kind & 1u) &&
                       deepest <= (pos < window_ ? pos : window_) && (sync_ || !has_tile_token(op));
    if (!valid) record_error(op, pos);
  }

#if defined(__GNUC__)
  __attribute__((noinline, cold))
#endif
  void record_error(const TraceOp& op, std::uint64_t pos) const {
    auto at = [pos] { return "record " + std::to_string(pos) + ": "; };
    const char* kind = op_kind_name(op.kind);
    if (kind == nullptr)
      throw ReplayStop(at() + "unknown operation kind " + std::to_string(op.kind), pos);
    if (op.engine >= engines_.size() || engines_[op.engine].exec == nullptr)
      throw ReplayStop(at() + "engine " + std::to_string(op.engine) +
                       " is not bound (platform has: " + bound_names() + ")", pos);
    if (!(engines_[op.engine].kinds >> op.kind & 1u)) {
      const EngineMetrics& em = metrics_.engine(op.engine);
      throw ReplayStop(at() + "a " + kind + " cannot run on " + em.name + " (a " +
                       engine_kind_name(em.kind) + " engine)", pos);
    }
    if (has_tile_token(op) && !sync_)
      throw ReplayStop(at() + "a cross-tile token (k = " + std::to_string(op.k) +
                       ") needs the tiles of a chip replayed together", pos);
    for (std::uint32_t d : op.deps) {
      if (d == 0) continue;
      if (d > pos)
        throw ReplayStop(at() + "dependency " + std::to_string(d) +
                         " reaches before the start of the trace", pos);
      if (d > window_)
        throw ReplayStop(at() + "dependency " + std::to_string(d) + " reaches beyond the window " +
                         std::to_string(window_), pos);
    }
    throw std::logic_error("record_error: record " + std::to_string(pos) + " is valid");
  }

  Pick choose() const {
    Pick best;
    const Ticks now = now_ticks();
    const Ticks floor = sched_now_ > now ? sched_now_ : now;
    for (const Engine* ep : bound_engines_) {
      const Engine& e = *ep;
      const std::uint64_t pos = e.front;
      if (pos == kNoRecord) continue;
      if (e.ready_pos != pos) {
        // Still waiting on the dependency that blocked it: one look, without the call.
        if (e.blocked_pos == pos && window_buf_.times(e.blocked_on).done == OpWindow::kPending) continue;
        if (!gather_deps(e, pos)) continue;
      }
      const Ticks start = floor > e.earliest ? floor : e.earliest;
      // Positions are below kNoRecord, so the first candidate replaces the empty pick.
      if (start < best.start || (start == best.start && pos < best.pos)) {
        best.engine = e.index;
        best.pos = pos;
        best.start = start;
      }
    }
    return best;
  }

  // Whether record `pos`, engine e's front, has every dependency done; if so notes in `e` when
  // they allow it to start (the binding one: the latest, among equals the nearest record).
  bool gather_deps(const Engine& e, std::uint64_t pos) const {
    const TraceOp& op = window_buf_.op(pos);
    Ticks deps_ready = 0;
    Ticks inputs_done = 0;
    std::uint32_t binding = 0;
    // A streamed operation may start on its producers' first granules (forwarding).
    const bool streamed = is_streamed(op);
    for (std::uint32_t d : op.deps) {
      if (d == 0) continue;
      const OpWindow::Times& dep = window_buf_.times(pos - d);
      if (dep.done == OpWindow::kPending) {
        e.blocked_pos = pos;
        e.blocked_on = pos - d;
        return false;
      }
      if (dep.done > inputs_done) inputs_done = dep.done;
      const Ticks done = streamed ? dep.first : dep.done;
      if (done > deps_ready || (done == deps_ready && (binding == 0 || d < binding))) {
        deps_ready = done;
        binding = d;
      }
    }
    std::uint8_t binding_kind = binding ? window_buf_.kind(pos - binding) : 0;
    if (sync_ && op.kind == static_cast<std::uint8_t>(OpKind::load) && has_tile_token(op)) {
      const Ticks posted = sync_->ready(op, gate_member_);  // other tiles' stores it reads
      if (posted == TileSync::kPending) return false;
      if (posted > deps_ready) {
        deps_ready = posted;
        binding_kind = static_cast<std::uint8_t>(OpKind::store);
      }
    }
    e.ready_pos = pos;
    e.deps_ready = deps_ready;
    // The engine's free time changes only when it issues, which also changes its front.
    e.earliest = e.free > deps_ready ? e.free : deps_ready;
    e.inputs_done = inputs_done;
    e.streamed = streamed;
    e.binding_dep_kind = binding_kind;
    return true;
  }

  void issue(const Pick& pick) {
    Engine& e = engines_[pick.engine];
    const TraceOp& op = window_buf_.op(pick.pos);
    // The engine's next record becomes its front when this one has issued, and the scheduler
    // reads it at once. It was read into the window up to the read-ahead earlier (megabytes of
    // records ago), so it is no longer in the core's caches: asked for now, its line arrives
    // while this operation executes. Without it, that first read of each record was the
    // hottest instruction of the one-tile replay (perf, docs/replayer.md).
    if (!e.rest.empty()) __builtin_prefetch(&window_buf_.op(e.rest.front()));

    // Through the gate before time may advance to the start (and for every operation whose
    // engine reaches shared components).
    if (gate_ && (e.gated || pick.start - now_ticks() > quantum_))
      gate_->acquire(gate_member_, pick.start);
    const Ticks now = now_ticks();
    if (pick.start - now > quantum_) wait(from_ticks(pick.start - now));

    if (observer_) observer_(pick.pos, pick.start);
    TickTiming timing;
    executing_ = pick.pos;
    try {
      timing = e.exec->execute_ticks(op, pick.start, e.streamed ? &e.inputs_done : nullptr);
    } catch (const sc_core::sc_unwind_exception&) {
      throw;
    } catch (const std::exception& ex) {
      executing_ = kNoRecord;
      throw ReplayStop(describe(pick.pos, op) + ": " + ex.what(), pick.pos);
    }
    executing_ = kNoRecord;
    const Ticks done = timing.done;
    const Ticks free = timing.engine_free;
    if (done < pick.start || free < pick.start)
      throw ReplayStop(describe(pick.pos, op) + ": executor returned done " +
                       from_ticks(done).to_string() + " / engine_free " + from_ticks(free).to_string() +
                       " before the start " + from_ticks(pick.start).to_string(),
                       pick.pos);

    OpWindow::Times& times = window_buf_.times(pick.pos);
    times.done = done;
    if (sync_ && op.kind == static_cast<std::uint8_t>(OpKind::store) && has_tile_token(op))
      sync_->post(op, pick.start, done);
    const Ticks first = timing.first_ready;
    times.first = timing.forwards && first >= pick.start && first < done ? first : done;
    e.free = free;
    sched_now_ = pick.start;
    metrics_.on_issue(pick.engine, op, pick.start, timing, e.deps_ready, e.binding_dep_kind);
    timeline_.on_issue(pick.pos, op.engine, op.kind, pick.start, done);

    if (e.rest.empty()) {
      e.front = kNoRecord;
      ++headless_;
    } else {
      e.front = e.rest.front();
      e.rest.pop_front();
    }
    // Another engine's front is older still when this was not the oldest: nothing changes.
    if (pick.pos == oldest_unissued_) advance_oldest_unissued();
  }

  void leave_gate() {
    if (gate_) gate_->leave(gate_member_);
  }

  // The oldest record was just issued: the next oldest unissued is the first position after it
  // whose operation is still pending (the least of the engines' fronts, as every engine issues
  // its records in order). Each position is stepped over once in the whole replay, where a scan
  // of the fronts cost every engine a look at each issue of the oldest record.
  void advance_oldest_unissued() {
    const std::uint64_t end = window_buf_.end();
    std::uint64_t oldest = oldest_unissued_ + 1;
    while (oldest < end && window_buf_.times(oldest).done != OpWindow::kPending) ++oldest;
    oldest_unissued_ = oldest;
    window_buf_.release_records_before(oldest);  // issued: only their times are asked for
    // Times that no unissued record can reach any more.
    if (oldest > window_) window_buf_.release_before(oldest - window_);
  }

  std::string describe(std::uint64_t pos, const TraceOp& op) const {
    return "record " + std::to_string(pos) + " (" + op_kind_name(op.kind) + " on " +
           metrics_.engine(op.engine).name + ")";
  }

  std::string bound_names() const {
    std::string out;
    for (unsigned idx : bound_) {
      if (!out.empty()) out += ", ";
      out += metrics_.engine(idx).name + " = " + std::to_string(idx);
    }
    return out.empty() ? "no engines" : out;
  }

  // Guard against a schedule that cannot progress, which would otherwise spin forever.
  std::string blocked_report() const {
    std::string out = "no operation can start; blocked:";
    for (const Engine* ep : bound_engines_) {
      const Engine& e = *ep;
      const std::uint64_t pos = e.front;
      if (pos == kNoRecord) continue;
      out += " " + describe(pos, window_buf_.op(pos)) + " waits for";
      for (std::uint32_t d : window_buf_.op(pos).deps)
        if (d != 0 && window_buf_.times(pos - d).done == OpWindow::kPending)
          out += " record " + std::to_string(pos - d);
      out += ";";
    }
    return out;
  }

  // set-up
  std::uint32_t window_ = 1u << 16;
  std::uint64_t lookahead_ = std::uint64_t{1} << 20;
  Ticks quantum_ = to_ticks(sc_core::sc_time(1, sc_core::SC_US));
  InputMode input_mode_ = InputMode::pause;
  bool stop_on_error_ = true;
  IssueObserver observer_;
  IssueGate* gate_ = nullptr;
  unsigned gate_member_ = 0;
  TileSync* sync_ = nullptr;
  std::vector<Engine> engines_;
  std::vector<unsigned> bound_;
  std::vector<Engine*> bound_engines_;  // bound_'s engines, for the scheduler's loops (from run())
  // Engine::kinds by record engine index, 0 where none is bound: check_record's test needs no
  // bound on the index (a record's engine field is one byte).
  std::array<std::uint8_t, 256> kinds_by_engine_{};

  // input
  std::deque<InputChunk> pending_;
  std::size_t pending_offset_ = 0;
  bool input_ended_ = false;
  bool wants_input_ = true;
  std::uint64_t records_fed_ = 0;
  bool awaiting_input_ = false;  // blocked on input_arrived_ (InputMode::wait_event)
  sc_core::sc_event input_arrived_{"input_arrived"};
  sc_core::sc_event input_consumed_{"input_consumed"};
  sc_core::sc_event done_{"done"};

  // schedule
  OpWindow window_buf_;
  std::uint64_t oldest_unissued_ = 0;
  unsigned headless_ = 0;  // bound engines with no read, unissued record
  Ticks sched_now_ = 0;
  std::uint64_t lookahead_limited_ = 0;
  std::uint64_t executing_ = kNoRecord;  // the record inside its engine's execute()

  // state and results
  void* stack_colour_ = nullptr;  // the run's offset on its thread's stack (alloca in run())
  bool started_ = false;
  bool finished_ = false;
  bool failed_ = false;
  std::string error_;
  std::uint64_t error_record_ = kNoRecord;
  ReplayMetrics metrics_;
  TimelineRecorder timeline_;
};

}  // namespace tlm_models

#endif  // TLM_MODELS_REPLAYER_H
