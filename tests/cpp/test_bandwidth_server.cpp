// BandwidthServer: first-fit booking of out-of-order requests, split service across gaps,
// pruning, and the activity log of a gap filled before earlier-booked work.
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

TEST_CASE(a_split_request_uses_every_gap_from_its_arrival) {
  BandwidthServer s;
  for (Ticks t : {10, 20, 30}) s.serve(t, 1, 0);  // short bookings made ahead: [10, 11) ...
  // 20 ticks from 5: [5, 10), [11, 20), [21, 27) (whole, the first gap of 20 starts at 31).
  CHECK_EQ(s.serve_split(5, 20, 0), Ticks{27});
  CHECK_EQ(s.wait_ticks(), Ticks{2});
  CHECK_EQ(s.busy_ticks(), Ticks{23});
  // [0, 5), then [27, 30): the gaps left before [30, 31).
  CHECK_EQ(s.serve_split(0, 8, 0), Ticks{30});
  CHECK_EQ(s.serve_split(0, 1, 0), Ticks{32});  // no gap left before 31
  CHECK_EQ(s.busy_until(), Ticks{32});
}

TEST_CASE(in_time_order_a_split_request_is_served_whole) {
  BandwidthServer whole, split;
  Ticks arrival = 0;
  for (Ticks k = 0; k < 200; ++k) {
    arrival += (k * 7) % 13;
    const Ticks duration = 1 + (k * 5) % 17;
    CHECK_EQ(split.serve_split(arrival, duration, arrival), whole.serve(arrival, duration, arrival) + duration);
  }
  CHECK_EQ(split.wait_ticks(), whole.wait_ticks());
}

namespace {

// A plain first fit over every booking so far (no pruning): the reference for the server.
struct FirstFit {
  std::vector<std::pair<Ticks, Ticks>> booked;  // sorted, disjoint [start, end)

  Ticks book(Ticks arrival, Ticks duration) {
    Ticks start = arrival;
    for (const auto& b : booked) {
      if (b.second <= start) continue;
      if (b.first >= start + duration) break;
      start = b.second;
    }
    booked.insert(std::upper_bound(booked.begin(), booked.end(), std::make_pair(start, start)),
                  std::make_pair(start, start + duration));
    return start;
  }
};

struct Lcg {
  std::uint64_t seed;
  std::uint64_t operator()() {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return seed >> 33;
  }
};

}  // namespace

// Every start equals a plain first fit over all bookings kept so far (no pruning), for requests
// arriving out of order against tables of up to a few hundred bookings: the search from the end
// and its fall-back to a binary search give the first gap at or after the arrival.
TEST_CASE(starts_equal_a_plain_first_fit_over_long_tables) {
  BandwidthServer s;
  FirstFit ref;
  Lcg next{99};
  Ticks now = 0;
  for (int i = 0; i < 20000; ++i) {
    if (next() % 50 == 0) now += next() % 400;  // time moves on now and then
    const Ticks arrival = now + next() % (next() % 4 == 0 ? 4000 : 200);
    const Ticks duration = 1 + next() % 30;
    CHECK_EQ(s.serve(arrival, duration, now), ref.book(arrival, duration));
  }
}

// Requests in groups at one arrival (an operation's operands) and long transfers, so that many
// arrive while the last booking is still running: those take the O(1) answer (no gap before the
// last booking can hold them, bandwidth_server.h), the others the search. Both give the plain
// first fit's start.
TEST_CASE(requests_behind_the_last_booking_start_where_a_first_fit_does) {
  BandwidthServer s;
  FirstFit ref;
  Lcg next{7};
  Ticks now = 0, arrival = 0;
  std::uint64_t behind_last = 0, searched = 0, in_order = 0;
  for (int i = 0; i < 20000; ++i) {
    if (next() % 40 == 0) now = arrival;  // time catches up now and then
    if (next() % 3 == 0) {                 // a new group: mostly later, now and then earlier
      const Ticks step = next() % 100;
      arrival = next() % 8 == 0 ? (arrival - now > 50 ? arrival - 50 : now) : arrival + step;
    }
    const Ticks duration = next() % 8 == 0 ? 20 + next() % 60 : 1 + next() % 3;
    if (ref.booked.empty() || ref.booked.back().second <= arrival)
      ++in_order;
    else if (ref.booked.back().first < arrival + duration)
      ++behind_last;
    else
      ++searched;
    CHECK_EQ(s.serve(arrival, duration, now), ref.book(arrival, duration));
  }
  CHECK(behind_last > 1000);  // every case taken often
  CHECK(searched > 1000);
  CHECK(in_order > 100);
}

CHECK_MAIN
