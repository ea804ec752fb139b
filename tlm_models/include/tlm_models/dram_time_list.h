// Sorted issue times of one kind of DRAM command on a shared resource (a bank group, the
// channel, a command bus), for constraints that hold in both directions: a command placed
// between two already issued ones must keep its distance to both. Old times are dropped once
// no later command can come near them (forget_before), so the list stays short.
#ifndef TLM_MODELS_DRAM_TIME_LIST_H
#define TLM_MODELS_DRAM_TIME_LIST_H

#include <algorithm>
#include <cstddef>
#include <vector>

#include "tlm_models/time_ticks.h"

namespace tlm_models {

class DramTimeList {
 public:
  void insert(Ticks t) {
    if (head_ == v_.size() || t >= v_.back())
      v_.push_back(t);
    else
      v_.insert(v_.begin() + static_cast<std::ptrdiff_t>(split_after(t)), t);
  }

  // The earliest time >= `from` outside every open interval (e - before, e + after) of the
  // listed times e: a command there is at least `before` ahead of every later one and `after`
  // behind every earlier one.
  Ticks clear_of(Ticks from, Ticks before, Ticks after) const {
    if (before == 0 && after == 0) return from;
    Ticks t = from;
    for (std::size_t i = first_ending_after(from, after); i < v_.size(); ++i) {
      const Ticks e = v_[i];
      // Checked sums: near the end of SystemC's time range they would wrap and the search in
      // DramTimingChecker would never settle (a run with a 10^7 s tRCD hung).
      if (e >= add_ticks(t, before)) break;  // this and every later zone starts at or after t
      const Ticks end = add_ticks(e, after);
      if (end > t) t = end;
    }
    return t;
  }

  // The earliest time >= `from` at which one more time leaves at most n listed times in any
  // window shorter than `window` (tFAW with n = 4): every n + 1 consecutive times, the new one
  // among them, span at least `window`. The new time t fails with the n consecutive times
  // e_i .. e_{i+n-1} exactly when they span less than `window` and e_{i+n-1} - window < t <
  // e_i + window, so the times that fail are the union of those open zones, whose starts and
  // ends both grow with i: one scan
  // from the first zone that ends after `from`, as in clear_of (no re-search per window).
  Ticks clear_of_windows(Ticks from, std::size_t n, Ticks window) const {
    if (n == 0 || v_.size() - head_ < n) return from;
    Ticks t = from;
    std::size_t i = t < window ? head_ : split_after(t - window);  // first e_i > t - window
    for (; i + n <= v_.size(); ++i) {
      // This and every later zone start at or after t (the difference, not t + window, which
      // could pass the time range where no zone is near).
      const Ticks last = v_[i + n - 1];
      if (last >= window && last - window >= t) break;
      if (last - v_[i] >= window) continue;  // these n already span the window: no zone
      const Ticks end = add_ticks(v_[i], window);
      if (end > t) t = end;
    }
    return t;
  }

  // Drops the times before `t` (keeping the storage compact).
  void forget_before(Ticks t) {
    while (head_ < v_.size() && v_[head_] < t) ++head_;
    if (head_ > 256 && head_ * 2 > v_.size()) {
      v_.erase(v_.begin(), v_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
    }
  }

  bool empty() const { return head_ == v_.size(); }

 private:
  // Index of the first time e with e + after > t (the first zone that may still cover t).
  std::size_t first_ending_after(Ticks t, Ticks after) const {
    if (head_ == v_.size() || v_.back() + after <= t) return v_.size();
    if (v_[head_] + after > t) return head_;
    return split_after(t - after);
  }

  // Index of the first time > key. Commands are mostly decided near the latest ones, so the
  // search gallops back from the end (O(log d) for a time d places from it) rather than
  // bisecting the whole list. (Starting from where the previous search ended, or walking a
  // few steps before galloping, measured slower.)
  std::size_t split_after(Ticks key) const { return split_near(key, v_.size()); }

  // Index of the first time > key, galloping from index `h` (head_ <= h <= size) towards it in
  // steps 1, 2, 4, ..., then bisecting the last step.
  std::size_t split_near(Ticks key, std::size_t h) const {
    std::size_t lo = h, hi = h;  // the answer lies in [lo, hi]
    if (h > head_ && v_[h - 1] > key) {
      hi = h - 1;  // v_[hi] > key
      for (std::size_t step = 1;; step *= 2) {
        if (hi - head_ < step) {
          lo = head_;
          break;
        }
        if (v_[hi - step] <= key) {
          lo = hi - step + 1;
          break;
        }
        hi -= step;
      }
    } else {  // v_[h - 1] <= key (or h is the head)
      for (std::size_t step = 1;; step *= 2) {
        if (v_.size() - lo < step) {
          hi = v_.size();
          break;
        }
        if (v_[lo + step - 1] > key) {
          hi = lo + step - 1;
          break;
        }
        lo += step;
      }
    }
    return static_cast<std::size_t>(
        std::upper_bound(v_.begin() + static_cast<std::ptrdiff_t>(lo),
                         v_.begin() + static_cast<std::ptrdiff_t>(hi), key) -
        v_.begin());
  }

  std::vector<Ticks> v_;
  std::size_t head_ = 0;
};

}  // namespace tlm_models

#endif  // TLM_MODELS_DRAM_TIME_LIST_H
