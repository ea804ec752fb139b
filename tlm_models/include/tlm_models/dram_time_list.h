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

  // The `n` listed times nearest to `t` on either side (for windows such as tFAW): at most n
  // before or at t into `below` (latest first) and at most n after t into `above` (earliest
  // first).
  void around(Ticks t, std::size_t n, std::vector<Ticks>& below, std::vector<Ticks>& above) const {
    below.clear();
    above.clear();
    const std::size_t split = split_after(t);
    for (std::size_t i = split; i > head_ && below.size() < n; --i) below.push_back(v_[i - 1]);
    for (std::size_t i = split; i < v_.size() && above.size() < n; ++i) above.push_back(v_[i]);
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

  // Index of the first time > key. Commands are mostly decided near the latest ones, so look
  // back from the end a few steps before searching the whole list.
  std::size_t split_after(Ticks key) const {
    std::size_t i = v_.size();
    for (int steps = 0; steps < 8 && i > head_; ++steps, --i)
      if (v_[i - 1] <= key) return i;
    return static_cast<std::size_t>(
        std::upper_bound(v_.begin() + static_cast<std::ptrdiff_t>(head_),
                         v_.begin() + static_cast<std::ptrdiff_t>(i), key) -
        v_.begin());
  }

  std::vector<Ticks> v_;
  std::size_t head_ = 0;
};

}  // namespace tlm_models

#endif  // TLM_MODELS_DRAM_TIME_LIST_H
