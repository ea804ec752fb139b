// The memory controller of one DRAM channel (or pseudo-channel): bounded request queues per
// bank, a scheduler (FCFS or FR-FCFS) choosing each bank's next request, optional read and
// write phases switched by write-queue watermarks, a page policy, refresh that blocks the
// banks, and command timing from DramTimingChecker (which lets a request take slots left free
// between commands decided before it). A bank that has activated a row for a request serves
// that request before it may close the row again. No SystemC process: commands are decided one at a
// time, always the one that can issue earliest. Two ways to drive it: submit() then drain()
// (the caller hands over requests and runs the controller until they have completed), or, for
// a front end that keeps time, enqueue() requests as they arrive and run_until(now) whenever
// time advances, which decides only commands due by `now` so that every request that arrived
// before a decision is a candidate of it. docs/models/hbm.md has the rules.
#ifndef TLM_MODELS_DRAM_CONTROLLER_H
#define TLM_MODELS_DRAM_CONTROLLER_H

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tlm_models/activity_log.h"
#include "tlm_models/dram_admission_order.h"
#include "tlm_models/dram_channel_stats.h"
#include "tlm_models/dram_command.h"
#include "tlm_models/dram_page_policy.h"
#include "tlm_models/dram_refresh.h"
#include "tlm_models/dram_request.h"
#include "tlm_models/dram_scheduler.h"
#include "tlm_models/dram_timing_checker.h"

namespace tlm_models {

// How writes are scheduled against reads: `none` serves both by the scheduler's rule alone
// (the plain FR-FCFS of DRAMSys' default scheduler); `watermark` serves them in phases.
enum class DramWriteDrain { none, watermark };

inline bool parse_write_drain(const std::string& s, DramWriteDrain* out) {
  if (s == "none") *out = DramWriteDrain::none;
  else if (s == "watermark") *out = DramWriteDrain::watermark;
  else return false;
  return true;
}

// Told when a request has issued its last column command (run_until / drain).
class DramCompletionListener {
 public:
  virtual ~DramCompletionListener() = default;
  // `tag` as submitted, its `bank` (whose queue has a free slot now, which the listener may
  // fill with enqueue()); `end` = end of the request's last data burst.
  virtual void completed(std::uint32_t tag, unsigned bank, Ticks end) = 0;
};

class DramController {
 public:
  struct Config {
    DramTiming timing;
    unsigned banks = 16;
    unsigned bank_groups = 4;
    DramRefresh::Mode refresh = DramRefresh::Mode::all_bank;
    DramPagePolicy page_policy = DramPagePolicy::open;
    unsigned queue_depth = 8;      // requests per bank queue
    DramWriteDrain write_drain = DramWriteDrain::none;
    unsigned write_high = 16;      // watermark: writes queued (whole channel) that start a phase
    unsigned write_low = 4;        // watermark: writes left when a write phase may end
    // A request decided after the PRE that closed its row, but admitted before it, may take a
    // column slot in that row's open interval (hit-first schedulers only). For submit/drain,
    // where requests are decided in call order; a front end that decides every command at its
    // own time (run_until) has no late requests and turns it off.
    bool past_hits = true;
    // Requests enter their bank queues in the order they arrive: one that finds its bank's
    // queue full holds up every later request of the channel (a controller taking requests
    // through one in-order request port, as DRAMSys' does). Off: a full queue delays only the
    // requests of its own bank.
    bool in_order_admission = true;
  };

  DramController(const Config& c, std::shared_ptr<const DramScheduler> scheduler)
      : cfg_(c), checker_(c.timing, c.banks, c.bank_groups), scheduler_(std::move(scheduler)),
        refresh_(c.refresh, c.timing.refi, c.banks), banks_(c.banks),
        past_hits_(c.past_hits && scheduler_->hits_first()) {
    for (unsigned i = 0; i < c.banks; ++i) {
      banks_[i].departures.assign(c.queue_depth, 0);
      banks_[i].group = i % c.bank_groups;
    }
  }

  // Queues a request of `bursts` bursts to (bank, row) arriving at `arrival`. When the bank's
  // queue is full (queue_depth requests that arrived earlier and have not issued their last
  // column command), the request enters when the oldest of them leaves: backpressure; with
  // in-order admission also not before every request that arrived no later than it entered.
  void submit(Ticks arrival, unsigned bank, std::uint64_t row, std::uint32_t bursts,
              std::uint32_t bytes, bool write, std::uint32_t tag) {
    Bank& b = banks_[bank];
    while (b.queue.size() >= cfg_.queue_depth) step();
    // The queue holds its q requests and, before them, the depth - q that left last (in the
    // order they left): the request enters when the oldest of those had left.
    const std::size_t depth = b.departures.size();
    std::size_t oldest = b.next_departure + b.queue.size();  // < 2 depth: no division
    if (oldest >= depth) oldest -= depth;
    const Ticks slot = b.departures[oldest];
    Ticks admitted = std::max(arrival, slot);
    if (cfg_.in_order_admission) {
      admitted = std::max(admitted, admission_order_.bound(arrival));
      admission_order_.record(arrival, admitted);
    }
    push(arrival, admitted, bank, row, bursts, bytes, write, tag);
  }

  // For a front end that keeps time: whether `bank`'s queue has a free slot now.
  bool has_room(unsigned bank) const { return banks_[bank].queue.size() < cfg_.queue_depth; }

  // Queues a request that arrived at `arrival` and enters its bank queue at `admitted` (later
  // when it found the queue full and waited for a slot); the queue must have room.
  void enqueue(Ticks arrival, Ticks admitted, unsigned bank, std::uint64_t row,
               std::uint32_t bursts, std::uint32_t bytes, bool write, std::uint32_t tag) {
    push(arrival, admitted, bank, row, bursts, bytes, write, tag);
  }

  // Issues, in time order, every command (and due refresh) that can issue at or before `now`;
  // returns when the next one can (never_ready() when no request is queued). Decisions wait
  // for their time so that requests enqueued until then compete for them.
  Ticks run_until(Ticks now) {
    while (!active_.empty()) {
      const Choice c = choose();
      const bool refresh = refresh_due(c.at);
      const Ticks at = refresh ? refresh_.next_due() : c.at;
      if (at > now) return at;
      if (refresh)
        issue_refresh();
      else
        issue(c);
    }
    return never_ready();
  }
  static constexpr Ticks never_ready() { return ~Ticks{0}; }

  // Told of every request's completion (nullptr: off).
  void set_completion_listener(DramCompletionListener* l) { listener_ = l; }

  // Where completion times go: (*sink)[tag] = end of the request's last data burst. The
  // vector must be long enough for every tag submitted.
  void set_completion_sink(std::vector<Ticks>* sink) { done_ = sink; }

  // Appends every issued command to `log` (nullptr: off).
  void set_command_log(std::vector<DramCommandRecord>* log) { log_ = log; }

  // Runs until every queued request has issued its commands.
  void drain() {
    while (!active_.empty()) step();
  }

  bool idle() const { return active_.empty(); }
  // No request will arrive before `t` any more: command history too old to matter is dropped.
  void forget_before(Ticks t) {
    checker_.forget_before(t);
    admission_order_.forget_before(t);
  }
  const DramChannelStats& stats() const { return stats_; }
  const DramTimingChecker& checker() const { return checker_; }
  // Command buses shared with the channel's other pseudo-channels (dram_command_bus.h).
  void share_command_bus(std::shared_ptr<DramCommandBus> bus, unsigned sharer) {
    checker_.share_command_bus(std::move(bus), sharer);
  }
  ActivityLog& activity() { return activity_; }
  const ActivityLog& activity() const { return activity_; }
  bool row_open(unsigned bank) const { return banks_[bank].open; }

  void reset_stats() {
    DramChannelStats fresh;
    stats_ = fresh;
  }

 private:
  struct Choice {
    unsigned bank = 0;
    int index = -1;
    DramCommand cmd = DramCommand::act;
    Ticks at = ~Ticks{0};
    bool past = false;  // a column command in the bank's past open interval
    std::uint64_t seq = 0;  // the request's age
  };

  struct Bank {
    std::vector<DramRequest> queue;  // oldest first
    std::vector<Ticks> departures;   // when the last queue_depth requests left (ring)
    std::size_t next_departure = 0;
    unsigned group = 0;  // bank % bank_groups, kept (a division per command otherwise)
    bool open = false;
    std::uint64_t row = 0;
    unsigned bypasses = 0;
    // The request the open row was activated for, until it issues a column command: the bank
    // serves it first rather than close the row unused (a phase change or the starvation cap
    // would otherwise precharge it).
    bool opening = false;
    std::uint64_t opened_for = 0;
    Ticks activated = 0;  // the open row's ACT
    // The row open before the current one: activated at `activated` (its columns allowed from
    // there + tRCD, or tRCDWR for writes) and its PRE issued at `until`. A request to that row that arrives before the PRE may still take a
    // column slot in that interval (FR-FCFS would have served it before the PRE).
    bool had_row = false;
    std::uint64_t past_row = 0;
    Ticks past_activated = 0, past_until = 0;
    // The bank's last choice. Issued commands only ever delay others (every constraint is a
    // lower bound that grows), so a choice stays valid, with its time a lower bound, until the
    // bank itself changes (dirty): choose() re-times only the candidates that could win, and
    // resumes their search from that lower bound (while the checker has dropped no history
    // since: timed_forgets).
    Choice cached;
    bool dirty = true;
    std::uint64_t timed_at_step = 0;
    std::uint64_t timed_forgets = 0;
  };

  Ticks command(DramCommand c, unsigned bank, unsigned group, Ticks at) {
    if (log_) log_->push_back(DramCommandRecord{c, bank, at});
    return checker_.issue(c, bank, group, at);
  }

  void push(Ticks arrival, Ticks admitted, unsigned bank, std::uint64_t row,
            std::uint32_t bursts, std::uint32_t bytes, bool write, std::uint32_t tag) {
    Bank& b = banks_[bank];
    DramRequest r;
    r.arrival = arrival;
    r.admitted = admitted;
    r.row = row;
    r.seq = seq_++;
    r.bursts = bursts;
    r.bytes = bytes;
    r.tag = tag;
    r.write = write;
    if (r.admitted > arrival) {
      ++stats_.backpressured;
      stats_.backpressure_time += r.admitted - arrival;
    }
    if (stats_.reads + stats_.writes == 0) stats_.first_arrival = arrival;
    ++(write ? stats_.writes : stats_.reads);
    ++(write ? writes_queued_ : reads_queued_);
    if (b.queue.empty()) active_.push_back(bank);
    b.queue.push_back(r);
    b.dirty = true;
  }

  static bool is_column(DramCommand c) { return c == DramCommand::rd || c == DramCommand::wr; }

  // With watermarks, reads and writes are served in phases: a write phase starts when
  // writes_high writes wait (or no read does) and ends when at most write_low remain (and a
  // read waits). Without, every request is a candidate.
  DramServe serving() const {
    if (cfg_.write_drain == DramWriteDrain::none) return DramServe::both;
    return write_phase_ ? DramServe::writes : DramServe::reads;
  }
  DramServe kind_of(const DramRequest& r) const {
    if (cfg_.write_drain == DramWriteDrain::none) return DramServe::both;
    return r.write ? DramServe::writes : DramServe::reads;
  }

  void choose_phase() {
    if (cfg_.write_drain == DramWriteDrain::none) return;
    if (!write_phase_) {
      if (writes_queued_ && (reads_queued_ == 0 || writes_queued_ >= cfg_.write_high))
        write_phase_ = true;
    } else if (writes_queued_ == 0 || (reads_queued_ && writes_queued_ <= cfg_.write_low)) {
      write_phase_ = false;
    }
  }

  DramCommand next_command(const Bank& b, const DramRequest& r) const {
    if (!b.open) return DramCommand::act;
    if (b.row != r.row) return DramCommand::pre;
    return r.write ? DramCommand::wr : DramCommand::rd;
  }

  // Decides and issues one command (or a due refresh).
  void step() {
    const Choice best = choose();
    if (refresh_due(best.at))
      issue_refresh();
    else
      issue(best);
  }

  bool refresh_due(Ticks at) const { return refresh_.enabled() && refresh_.next_due() <= at; }

  // The command that can issue earliest: each bank's pick by the scheduler, in this phase.
  Choice choose() {
    const bool phase = write_phase_;
    choose_phase();
    if (phase != write_phase_)
      for (Bank& b : banks_) b.dirty = true;
    ++step_;
    for (unsigned bank : active_)
      if (banks_[bank].dirty) time_choice(bank);
    // The best cached choice wins once it is timed in this step: every other one's time is a
    // lower bound of its true time.
    for (;;) {
      const Choice* best = nullptr;
      for (unsigned bank : active_) {
        const Choice& c = banks_[bank].cached;
        if (c.index >= 0 && (best == nullptr || before(c, *best))) best = &c;
      }
      if (best == nullptr) return Choice{};
      Bank& b = banks_[best->bank];
      if (b.timed_at_step == step_) return *best;
      time_choice(best->bank, b.timed_forgets == checker_.forgets());
    }
  }

  // Earliest first; at a tie a column command (it moves data), then the older request.
  static bool before(const Choice& a, const Choice& b) {
    if (a.at != b.at) return a.at < b.at;
    if (is_column(a.cmd) != is_column(b.cmd)) return is_column(a.cmd);
    return a.seq < b.seq;
  }

  // The bank's next command by its scheduler, timed now. `resume`: the bank is not dirty and
  // the checker dropped nothing since its last timing, so the scheduler picks the same request
  // and command and every time before the cached one is still ruled out: the searches start
  // there (the result is the same, found without walking from the request's admission again).
  // A column slot in the past interval can only have moved later, and a request that did not
  // fit there fits even less now.
  void time_choice(unsigned bank, bool resume = false) {
    Bank& b = banks_[bank];
    const Choice prev = b.cached;
    b.dirty = false;
    b.timed_at_step = step_;
    b.timed_forgets = checker_.forgets();
    b.cached = Choice{};
    int i = b.opening ? opened_index(b) : -1;
    // One queued request leaves no choice to make.
    const DramServe kind = serving();
    if (i < 0)
      i = b.queue.size() == 1
              ? (serves(kind, b.queue[0]) ? 0 : -1)
              : scheduler_->pick(DramBankView{b.queue, b.open, b.row, b.bypasses}, kind);
    if (i < 0) return;
    const DramRequest& r = b.queue[static_cast<std::size_t>(i)];
    DramCommand cmd = next_command(b, r);
    resume = resume && prev.index == i && prev.seq == r.seq;
    Ticks at = 0;
    bool past = false;
    if (resume && prev.past) {
      past = in_past_interval(b, r, &cmd, &at, prev.at);
      if (!past) at = checker_.earliest(cmd, bank, b.group, r.admitted);
    } else {
      at = checker_.earliest(cmd, bank, b.group, resume ? prev.at : r.admitted);
      if (!resume && past_hits_ && !is_column(cmd)) past = in_past_interval(b, r, &cmd, &at, 0);
    }
    b.cached = Choice{bank, i, cmd, at, past, r.seq};
  }

  // Whether request r (which needs PRE or ACT now) fits a column command into the bank's past
  // open interval of its row: at or after its admission and the row's tRCD, early enough that
  // the PRE that closed the row keeps its tRTP (read) or tWR (write). Then *cmd, *at say when.
  // The search starts at `resume` if later (a slot found before, see time_choice).
  bool in_past_interval(const Bank& b, const DramRequest& r, DramCommand* cmd, Ticks* at,
                        Ticks resume) const {
    if (!b.had_row || b.past_row != r.row || r.admitted >= b.past_until) return false;
    const DramTiming& t = cfg_.timing;
    const DramCommand col = r.write ? DramCommand::wr : DramCommand::rd;
    const Ticks from = b.past_activated + t.act_to_column(r.write);
    const Ticks c =
        checker_.earliest_among_banks(col, b.group, std::max({r.admitted, from, resume}));
    const Ticks before_pre = r.write ? t.cwl + t.burst + t.wr : t.rtp;
    if (c + before_pre > b.past_until) return false;
    *cmd = col;
    *at = c;
    return true;
  }

  // The bank's open row closes at `at`: it becomes the past interval.
  static void close_row(Bank& b, Ticks at) {
    b.had_row = true;
    b.past_row = b.row;
    b.past_activated = b.activated;
    b.past_until = at;
    b.open = false;
    b.opening = false;
  }

  static int opened_index(const Bank& b) {
    for (std::size_t i = 0; i < b.queue.size(); ++i)
      if (b.queue[i].seq == b.opened_for) return static_cast<int>(i);
    return -1;
  }

  void issue(const Choice& c) {
    Bank& b = banks_[c.bank];
    const unsigned group = b.group;
    DramRequest& r = b.queue[static_cast<std::size_t>(c.index)];
    b.dirty = true;
    if (!r.classified) {
      r.classified = true;
      ++(c.cmd == DramCommand::pre   ? stats_.row_conflicts
         : c.cmd == DramCommand::act ? stats_.row_misses
                                     : stats_.row_hits);
    }
    Ticks end = command(c.cmd, c.bank, group, c.at);
    switch (c.cmd) {
      case DramCommand::act:
        ++stats_.activates;
        b.open = true;
        b.row = r.row;
        b.opening = true;
        b.opened_for = r.seq;
        b.activated = c.at;
        return;
      case DramCommand::pre:
        ++stats_.precharges;
        close_row(b, c.at);
        return;
      default:
        break;
    }
    // A column command: one burst of data on the bus.
    if (b.opening && r.seq == b.opened_for) b.opening = false;
    const Ticks burst = cfg_.timing.burst;
    stats_.busy_time += burst;
    activity_.record(end - burst, end);
    if (r.write) {
      ++stats_.write_bursts;
      if (last_was_read_ && any_column_) ++stats_.read_to_write;
    } else {
      ++stats_.read_bursts;
      if (!last_was_read_ && any_column_) ++stats_.write_to_read;
    }
    last_was_read_ = !r.write;
    any_column_ = true;
    stats_.last_data = std::max(stats_.last_data, end);
    const bool oldest = c.index == oldest_of_kind(b.queue, kind_of(r));
    if (!oldest) ++b.bypasses;
    if (--r.bursts > 0) return;
    // The request has issued its last command: it leaves the queue.
    if (oldest) b.bypasses = 0;
    Ticks latency = end - r.arrival;
    if (r.write) {
      stats_.write_bytes += r.bytes;
      stats_.write_latency.record(latency);
      --writes_queued_;
    } else {
      stats_.read_bytes += r.bytes;
      stats_.read_latency.record(latency);
      --reads_queued_;
    }
    stats_.residence += c.at - r.admitted;
    b.departures[b.next_departure] = c.at;
    if (++b.next_departure == b.departures.size()) b.next_departure = 0;
    if (done_) (*done_)[r.tag] = end;
    const std::uint32_t tag = r.tag;
    const std::uint64_t row = r.row;
    b.queue.erase(b.queue.begin() + c.index);
    if (!c.past && close_row_after_access(cfg_.page_policy, b.queue, row)) {
      Ticks at = checker_.earliest(DramCommand::pre, c.bank, group, c.at);
      command(DramCommand::pre, c.bank, group, at);
      ++stats_.precharges;
      close_row(b, at);
    }
    if (b.queue.empty()) active_.erase(std::find(active_.begin(), active_.end(), c.bank));
    // Last: the listener may enqueue into the slot just freed.
    if (listener_) listener_->completed(tag, c.bank, end);
  }

  // Precharges what the due refresh needs, then issues REF (all banks) or REFpb (one bank).
  void issue_refresh() {
    const Ticks due = refresh_.next_due();
    const bool all = refresh_.mode() == DramRefresh::Mode::all_bank;
    const unsigned first = all ? 0 : refresh_.next_bank();
    const unsigned last = all ? cfg_.banks : first + 1;
    for (unsigned bank = first; bank < last; ++bank) {
      Bank& b = banks_[bank];
      if (!b.open) continue;
      const unsigned group = b.group;
      Ticks at = checker_.earliest(DramCommand::pre, bank, group, due);
      command(DramCommand::pre, bank, group, at);
      ++stats_.precharges;
      close_row(b, at);
    }
    const DramCommand cmd = all ? DramCommand::ref : DramCommand::ref_pb;
    const unsigned group = banks_[first].group;
    Ticks at = checker_.earliest(cmd, first, group, due);
    command(cmd, first, group, at);
    ++stats_.refreshes;
    stats_.refresh_time += all ? cfg_.timing.rfc : cfg_.timing.rfc_pb;
    refresh_.advance();
    for (Bank& b : banks_) b.dirty = true;
  }

  Config cfg_;
  DramTimingChecker checker_;
  std::shared_ptr<const DramScheduler> scheduler_;
  DramRefresh refresh_;
  std::vector<Bank> banks_;
  bool past_hits_;
  std::vector<unsigned> active_;  // banks with queued requests
  std::uint64_t seq_ = 0;
  DramAdmissionOrder admission_order_;  // in-order admission of submit()
  std::uint64_t reads_queued_ = 0, writes_queued_ = 0;
  bool write_phase_ = false;
  std::uint64_t step_ = 0;
  bool last_was_read_ = true, any_column_ = false;
  std::vector<Ticks>* done_ = nullptr;
  std::vector<DramCommandRecord>* log_ = nullptr;
  DramCompletionListener* listener_ = nullptr;
  DramChannelStats stats_;
  ActivityLog activity_;
};

}  // namespace tlm_models

#endif  // TLM_MODELS_DRAM_CONTROLLER_H
