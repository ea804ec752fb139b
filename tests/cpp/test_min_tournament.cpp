// MinTournament: the least (key, index) after every change equals a scan in index order, for
// every size from 1 to 37 keys (powers of two and the padded sizes between them).
#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

#include "check.h"
#include "tlm_models/min_tournament.h"

using tlm_models::MinTournament;

namespace {

unsigned scan_least(const std::vector<std::uint64_t>& keys) {
  unsigned least = 0;
  for (unsigned i = 1; i < keys.size(); ++i)
    if (keys[i] < keys[least]) least = i;
  return least;
}

}  // namespace

TEST_CASE(least_equals_a_scan_in_index_order) {
  std::mt19937_64 rng(7);
  for (unsigned n = 1; n <= 37; ++n) {
    MinTournament t(n);
    std::vector<std::uint64_t> keys(n, 0);
    CHECK_EQ(t.least(), 0u);  // all equal: the lowest index
    for (int step = 0; step < 400; ++step) {
      const unsigned i = static_cast<unsigned>(rng() % n);
      // Few distinct values, so that ties are frequent; now and then a finished member.
      const std::uint64_t key = rng() % 10 == 0 ? MinTournament::kMax : rng() % 8;
      keys[i] = key;
      t.set(i, key);
      CHECK_EQ(t.least(), scan_least(keys));
      CHECK_EQ(t.key(t.least()), keys[scan_least(keys)]);
    }
  }
}

TEST_CASE(every_key_at_its_maximum_gives_index_zero) {
  MinTournament t(5, 3);
  for (unsigned i = 0; i < 5; ++i) t.set(i, MinTournament::kMax);
  CHECK_EQ(t.least(), 0u);  // not one of the three padding leaves
  t.set(4, 2);
  CHECK_EQ(t.least(), 4u);
}

TEST_CASE(a_key_beyond_the_count_is_refused) {
  MinTournament t(3);
  bool thrown = false;
  try {
    t.set(3, 1);
  } catch (const std::out_of_range&) {
    thrown = true;
  }
  CHECK(thrown);
}

CHECK_MAIN
