// BandwidthServer: first-fit booking of out-of-order requests, pruning, and the activity log
// of a gap filled before earlier-booked work.
#include <algorithm>
#include <utility>
#include <vector>

#include "check.h"
#include "tlm_models/bandwidth_server.h"

using tlm_models::BandwidthServer;
using tlm_models::Ticks;

TEST_CASE(in_order_requests_are_first_come_first_served) {
  BandwidthServer s;
  CHECK_EQ(s.serve(0, 10), Ticks{0});
  CHECK_EQ(s.serve(5, 10), Ticks{10});
  CHECK_EQ(s.serve(30, 10), Ticks{30});
  CHECK_EQ(s.busy_until(), Ticks{40});
  CHECK_EQ(s.wait_ticks(), Ticks{5});
}

TEST_CASE(an_early_request_fills_the_gap_before_later_bookings) {
  BandwidthServer s;
  s.activity().enable(0, 1000, 16);
  CHECK_EQ(s.serve(100, 20), Ticks{100});  // booked ahead: [100, 120)
  CHECK_EQ(s.serve(0, 50), Ticks{0});      // fits before it: [0, 50)
  CHECK_EQ(s.serve(40, 40), Ticks{50});    // [50, 90) fits in the gap left
  CHECK_EQ(s.serve(60, 20), Ticks{120});   // 20 do not fit in [90, 100): after [100, 120)
  CHECK_EQ(s.earliest_start(0, 10), Ticks{90});
  const auto& log = s.activity().entries();
  CHECK_EQ(log.size(), std::size_t{2});  // [0, 90) and [100, 140), merged and in order
  CHECK_EQ(log[0].start, Ticks{0});
  CHECK_EQ(log[0].end, Ticks{90});
  CHECK_EQ(log[1].start, Ticks{100});
  CHECK_EQ(log[1].end, Ticks{140});
}

// Every start equals a plain first fit over all bookings kept so far (no pruning), for requests
// arriving out of order against tables of up to a few hundred bookings: the search from the end
// and its fall-back to a binary search give the first gap at or after the arrival.
TEST_CASE(starts_equal_a_plain_first_fit_over_long_tables) {
  BandwidthServer s;
  std::vector<std::pair<Ticks, Ticks>> booked;  // reference: sorted, disjoint [start, end)
  std::uint64_t seed = 99;
  auto next = [&seed] {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return seed >> 33;
  };
  Ticks now = 0;
  for (int i = 0; i < 20000; ++i) {
    if (next() % 50 == 0) now += next() % 400;  // time moves on now and then
    const Ticks arrival = now + next() % (next() % 4 == 0 ? 4000 : 200);
    const Ticks duration = 1 + next() % 30;
    Ticks start = arrival;
    for (const auto& b : booked) {
      if (b.second <= start) continue;
      if (b.first >= start + duration) break;
      start = b.second;
    }
    booked.insert(std::upper_bound(booked.begin(), booked.end(), std::make_pair(start, start)),
                  std::make_pair(start, start + duration));
    CHECK_EQ(s.serve(arrival, duration, now), start);
  }
}

CHECK_MAIN
