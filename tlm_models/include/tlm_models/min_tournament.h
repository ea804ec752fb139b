// The least of N keys, kept up to date in O(log N) per changed key: a tournament tree whose
// inner nodes hold the winner (lesser key) of their two children. Ties go to the left child,
// so the winner is the least (key, index) pair, as a scan over the keys in index order finds.
// The issue gate (issue_gate.h) asks it for the member that may issue next at every gated
// operation, where a scan would cost O(tiles).
#ifndef TLM_MODELS_MIN_TOURNAMENT_H
#define TLM_MODELS_MIN_TOURNAMENT_H

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace tlm_models {

class MinTournament {
 public:
  using Key = std::uint64_t;
  static constexpr Key kMax = std::numeric_limits<Key>::max();

  // `count` keys, all `initial`.
  explicit MinTournament(unsigned count, Key initial = 0) : count_(count) {
    if (count == 0) throw std::invalid_argument("MinTournament: needs at least one key");
    while (leaves_ < count) leaves_ *= 2;
    keys_.assign(leaves_, kMax);  // padding leaves past the last key never win against a key
    for (unsigned i = 0; i < count; ++i) keys_[i] = initial;
    tree_.assign(leaves_, 0);
    for (unsigned node = leaves_ - 1; node >= 1; --node) tree_[node] = winner(node);
  }

  unsigned size() const { return count_; }
  Key key(unsigned i) const { return keys_[i]; }

  // Index of the least key; the lowest such index among equal keys.
  unsigned least() const { return leaves_ > 1 ? tree_[1] : 0; }

  void set(unsigned i, Key key) {
    if (i >= count_) throw std::out_of_range("MinTournament: no key " + std::to_string(i));
    keys_[i] = key;
    for (unsigned node = (i + leaves_) / 2; node >= 1; node /= 2) tree_[node] = winner(node);
  }

 private:
  // Node n's children are 2n and 2n+1: inner nodes below leaves_, leaf (child - leaves_) from
  // there on. The right child wins only when strictly less.
  unsigned winner(unsigned node) const {
    const unsigned l = 2 * node, r = l + 1;
    const unsigned a = l < leaves_ ? tree_[l] : l - leaves_;
    const unsigned b = r < leaves_ ? tree_[r] : r - leaves_;
    return keys_[b] < keys_[a] ? b : a;
  }

  unsigned count_;
  unsigned leaves_ = 1;       // count rounded up to a power of two
  std::vector<Key> keys_;     // per leaf
  std::vector<unsigned> tree_;  // tree_[1] is the root (tree_[0] unused)
};

}  // namespace tlm_models

#endif  // TLM_MODELS_MIN_TOURNAMENT_H
