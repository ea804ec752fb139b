// BandwidthServer: first-fit booking of out-of-order requests, pruning, and the activity log
// of a gap filled before earlier-booked work.
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

CHECK_MAIN
