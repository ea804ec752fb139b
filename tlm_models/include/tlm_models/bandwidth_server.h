// A resource that serves one transfer at a time at a fixed rate: an HBM channel's data bus, an
// SRAM port, an interconnect output link.
//
// Loosely-timed initiators annotate requests with future times, and not in time order: a DMA
// channel books the SRAM writes of its in-flight bursts hundreds of nanoseconds ahead, while a
// compute engine's access for "now" arrives after them. The server therefore keeps a short
// table of booked intervals and gives each request the earliest gap, at or after its arrival,
// that is long enough — so an early request is not queued behind later work (which would
// invent contention that the hardware does not have). Requests arriving in time order get
// plain first-come-first-served service. Bookings that ended before the current simulation
// time can never matter again and are dropped, so the table holds only work in flight.
#ifndef TLM_MODELS_BANDWIDTH_SERVER_H
#define TLM_MODELS_BANDWIDTH_SERVER_H

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include <systemc>

#include "tlm_models/activity_log.h"
#include "tlm_models/stats.h"
#include "tlm_models/time_ticks.h"

namespace tlm_models {

class BandwidthServer {
 public:
  // Books `duration` at the earliest gap starting at or after `arrival`; returns its start.
  Ticks serve(Ticks arrival, Ticks duration) { return serve(arrival, duration, now_ticks()); }

  // The same with the current simulation time `now` (= now_ticks()) already at hand.
  Ticks serve(Ticks arrival, Ticks duration, Ticks now) {
    prune(now);
    return take(find(arrival, duration), arrival, duration);
  }

  // Books `duration` of service in the free time from `arrival` on, across as many gaps as it
  // takes (a server that interleaves transfers, as a memory channel does at burst granularity,
  // instead of holding each whole); returns the end of its last part. With requests arriving in
  // time order it is `serve` (no gap lies after an arrival but before booked work); out of
  // order, a request is no longer held back by a run of short bookings made before it.
  Ticks serve_split(Ticks arrival, Ticks duration, Ticks now) {
    prune(now);
    const auto first = booked_.begin() + static_cast<std::ptrdiff_t>(head_);
    std::size_t i = static_cast<std::size_t>(
        std::upper_bound(first, booked_.end(), arrival,
                         [](Ticks t, const BusyInterval& b) { return t < b.end; }) -
        booked_.begin());
    Ticks t = arrival, left = duration;
    parts_.clear();
    while (left > 0) {
      if (i == booked_.size() || booked_[i].start >= t + left) {
        parts_.push_back(BusyInterval{t, t + left});
        t += left;
        break;
      }
      if (booked_[i].start > t) {
        parts_.push_back(BusyInterval{t, booked_[i].start});
        left -= booked_[i].start - t;
      }
      t = std::max(t, booked_[i].end);
      ++i;
    }
    for (const BusyInterval& b : parts_) {
      const auto at = std::lower_bound(booked_.begin() + static_cast<std::ptrdiff_t>(head_), booked_.end(),
                                       b.start, [](const BusyInterval& x, Ticks v) { return x.start < v; });
      book(static_cast<std::size_t>(at - booked_.begin()), b.start, b.end);
      if (activity_.enabled()) activity_.record(b.start, b.end);
    }
    busy_ticks_ += duration;
    wait_ticks_ += t - arrival - duration;
    ++requests_;
    return t;
  }

  // The start `serve` would give, without booking (to choose among equivalent servers).
  Ticks earliest_start(Ticks arrival, Ticks duration) const {
    return earliest(arrival, duration, nullptr);
  }

  // Choosing among equivalent servers without searching twice: `prune(now)` every candidate,
  // `find` the start on each, then `take` the chosen one's. Same bookings and statistics as
  // `serve(arrival, duration, now)`.
  struct Slot {
    Ticks start = 0;
    std::size_t at = 0;  // index before which the booking goes
  };
  Slot find(Ticks arrival, Ticks duration) const {
    Slot s;
    s.start = earliest(arrival, duration, &s.at);
    return s;
  }
  Ticks take(const Slot& s, Ticks arrival, Ticks duration) {
    book(s.at, s.start, s.start + duration);
    busy_ticks_ += duration;
    wait_ticks_ += s.start - arrival;
    ++requests_;
    if (activity_.enabled()) activity_.record(s.start, s.start + duration);  // off: no call
    return s.start;
  }

  // Books [start, start + duration) after every booking (`find` gave index size(): it goes at
  // the end) for `requests` requests that waited `wait` in all: the same bookings and
  // statistics as taking back-to-back slots one request at a time, when the activity log is
  // off (it would count a capped log's drops per request).
  void take_run(Ticks start, Ticks duration, std::uint64_t requests, Ticks wait) {
    book(booked_.size(), start, start + duration);
    busy_ticks_ += duration;
    wait_ticks_ += wait;
    requests_ += requests;
    activity_.record(start, start + duration);
  }
  bool appends(const Slot& s) const { return s.at == booked_.size(); }

  // End of the last booked interval.
  Ticks busy_until() const { return booked_.size() == head_ ? last_end_ : booked_.back().end; }
  Ticks busy_ticks() const { return busy_ticks_; }
  Ticks wait_ticks() const { return wait_ticks_; }
  std::uint64_t requests() const { return requests_; }

  // Requests, `bytes` moved, busy and queueing time into `g` (the same four figures for an SRAM
  // port and an interconnect link), described by `desc` in that order.
  void collect(StatsGroup& g, std::uint64_t bytes, const std::array<const char*, 4>& desc) const {
    g.add("requests", static_cast<double>(requests_), "requests", desc[0]);
    g.add("bytes", static_cast<double>(bytes), "B", desc[1]);
    g.add("busy_time", ticks_to_ns(busy_ticks_), "ns", desc[2]);
    g.add("wait_time", ticks_to_ns(wait_ticks_), "ns", desc[3]);
  }
  ActivityLog& activity() { return activity_; }
  const ActivityLog& activity() const { return activity_; }

  // Clears the accumulated statistics; the bookings are timing state, not statistics.
  void reset_stats() {
    busy_ticks_ = 0;
    wait_ticks_ = 0;
    requests_ = 0;
  }

  // Drops the bookings that ended by `now` (they can never matter again). They leave from the
  // front, so they are skipped by advancing head_ and the storage is compacted only once they
  // make up most of it.
  void prune(Ticks now) {
    std::size_t n = head_;
    while (n < booked_.size() && booked_[n].end <= now) ++n;
    if (n == head_) return;
    last_end_ = std::max(last_end_, booked_[n - 1].end);
    if (n == booked_.size()) {
      booked_.clear();
      head_ = 0;
      return;
    }
    head_ = n;
    if (head_ >= 64 && head_ * 2 >= booked_.size()) {
      booked_.erase(booked_.begin(), booked_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
    }
  }

 private:
  // First fit: walk the bookings that end after `arrival` (sorted, disjoint) and stop at the
  // first gap of `duration`. `at` receives the index before which the new booking goes.
  Ticks earliest(Ticks arrival, Ticks duration, std::size_t* at) const {
    // Common case: the request arrives after all booked work (in-order traffic).
    if (booked_.size() == head_ || booked_.back().end <= arrival) {
      if (at) *at = booked_.size();
      return arrival;
    }
    // No gap before the last booking can take it: every gap there ends by the last booking's
    // start, and that start is before arrival + duration, so the first fit is right after the
    // last booking (what the walk below finds, in O(1)). A request that arrives while the last
    // booked transfer is still running takes this path: a link's requests of one operation, an
    // SRAM port's requests behind a long transfer.
    if (booked_.back().start < arrival + duration) {
      if (at) *at = booked_.size();
      return booked_.back().end;
    }
    // The first booking that ends after `arrival`. Out-of-order requests mostly arrive shortly
    // before the last bookings end (in attenio.yaml's SRAM and compute link, 30 of 32 bookings
    // on average end before), so a few steps back from the end find it; a binary search over
    // what is left otherwise.
    const auto first = booked_.begin() + static_cast<std::ptrdiff_t>(head_);
    auto it = booked_.end() - 1;  // ends after arrival (tested above)
    for (int steps = 0; it != first && (it - 1)->end > arrival; --it)
      if (++steps == 8) {
        it = std::upper_bound(first, it, arrival, [](Ticks t, const BusyInterval& b) { return t < b.end; });
        break;
      }
    Ticks start = arrival;
    for (; it != booked_.end(); ++it) {
      if (it->start >= start + duration) break;
      start = std::max(start, it->end);
    }
    if (at) *at = static_cast<std::size_t>(it - booked_.begin());
    return start;
  }

  // Inserts [start, end) before index `at`, merging with touching neighbours so that
  // back-to-back service stays one entry.
  void book(std::size_t at, Ticks start, Ticks end) {
    if (at > head_ && booked_[at - 1].end == start) {
      booked_[at - 1].end = end;
      if (at < booked_.size() && booked_[at].start == end) {
        booked_[at - 1].end = booked_[at].end;
        booked_.erase(booked_.begin() + static_cast<std::ptrdiff_t>(at));
      }
      return;
    }
    if (at < booked_.size() && booked_[at].start == end) {
      booked_[at].start = start;
      return;
    }
    if (at == booked_.size()) {
      // The fields stored one by one into the new slot: push_back(BusyInterval{start, end})
      // built the pair on the stack and copied it with one 16-byte load of two 8-byte stores,
      // which the CPU cannot forward (a stall on every booking: perf, docs/replayer.md).
      BusyInterval& b = booked_.emplace_back();
      b.start = start;
      b.end = end;
    } else {
      booked_.insert(booked_.begin() + static_cast<std::ptrdiff_t>(at), BusyInterval{start, end});
    }
  }

  // booked_[head_, size): future and current work, sorted and disjoint; [0, head_) are
  // bookings already dropped, not yet removed from the storage.
  std::vector<BusyInterval> booked_;
  std::vector<BusyInterval> parts_;  // serve_split's parts, before they are booked
  std::size_t head_ = 0;
  Ticks last_end_ = 0;                // end of the latest booking already dropped
  Ticks busy_ticks_ = 0;
  Ticks wait_ticks_ = 0;
  std::uint64_t requests_ = 0;
  ActivityLog activity_;
};

}  // namespace tlm_models

#endif  // TLM_MODELS_BANDWIDTH_SERVER_H
