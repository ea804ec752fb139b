// What a memory engineer reads from one DRAM channel: commands issued (the action counts an
// energy model multiplies), row-buffer outcomes, refresh cost, turnarounds, queueing and the
// latency distribution. Names and units: docs/models/hbm.md, "Statistics".
#ifndef TLM_MODELS_DRAM_CHANNEL_STATS_H
#define TLM_MODELS_DRAM_CHANNEL_STATS_H

#include <cstdint>

#include "tlm_models/percentile_histogram.h"
#include "tlm_models/stats.h"
#include "tlm_models/time_ticks.h"

namespace tlm_models {

struct DramChannelStats {
  std::uint64_t activates = 0, precharges = 0, refreshes = 0;
  std::uint64_t read_bursts = 0, write_bursts = 0, read_bytes = 0, write_bytes = 0;
  std::uint64_t reads = 0, writes = 0;
  std::uint64_t row_hits = 0, row_misses = 0, row_conflicts = 0;
  std::uint64_t read_to_write = 0, write_to_read = 0;  // data-direction turnarounds
  std::uint64_t backpressured = 0;                      // requests that found their queue full
  Ticks refresh_time = 0;       // summed tRFC / tRFCpb of the refreshes issued
  Ticks busy_time = 0;          // data bus occupancy
  Ticks backpressure_time = 0;  // summed wait for a queue slot
  Ticks residence = 0;          // summed time requests spent queued (admission to last command)
  Ticks first_arrival = 0, last_data = 0;
  PercentileHistogram read_latency, write_latency;  // arrival to end of the last data burst

  // Adds the counters to `g`; `window` (ticks) is the span bandwidth and occupancy refer to,
  // `peak` the channel's bandwidth in B/s.
  void collect(StatsGroup& g, Ticks window, double peak) const {
    const double seconds = ticks_to_seconds(window);
    const double bytes = static_cast<double>(read_bytes + write_bytes);
    const double bw = seconds > 0 ? bytes / seconds : 0.0;
    g.add("activates", static_cast<double>(activates), "commands", "ACT issued");
    g.add("precharges", static_cast<double>(precharges), "commands",
          "PRE issued (explicit, auto-precharge and before refresh)");
    g.add("refreshes", static_cast<double>(refreshes), "commands", "REF or REFpb issued");
    g.add("refresh_time", ticks_to_ns(refresh_time), "ns", "refreshes x tRFC (or tRFCpb)");
    g.add("read_bursts", static_cast<double>(read_bursts), "bursts", "RD commands");
    g.add("write_bursts", static_cast<double>(write_bursts), "bursts", "WR commands");
    g.add("read_bytes", static_cast<double>(read_bytes), "B", "bytes requested by reads");
    g.add("write_bytes", static_cast<double>(write_bytes), "B", "bytes requested by writes");
    g.add("row_hits", static_cast<double>(row_hits), "requests", "row already open");
    g.add("row_misses", static_cast<double>(row_misses), "requests", "bank closed: ACT");
    g.add("row_conflicts", static_cast<double>(row_conflicts), "requests",
          "another row open: PRE and ACT");
    g.add("read_to_write", static_cast<double>(read_to_write), "turnarounds",
          "a WR burst following a RD burst on the data bus");
    g.add("write_to_read", static_cast<double>(write_to_read), "turnarounds",
          "a RD burst following a WR burst on the data bus");
    g.add("busy_time", ticks_to_ns(busy_time), "ns", "time the data bus carried bursts");
    g.add("achieved_bandwidth", bw, "B/s", "requested bytes / observation window");
    g.add("efficiency", peak > 0 ? bw / peak : 0.0, "1", "achieved_bandwidth / peak_bandwidth");
    g.add("utilization", seconds > 0 ? ticks_to_seconds(busy_time) / seconds : 0.0, "1",
          "busy_time / observation window (whole bursts, so >= efficiency)");
    g.add("queue_occupancy", seconds > 0 ? ticks_to_seconds(residence) / seconds : 0.0,
          "requests", "mean requests queued (Little's law: summed residence / window)");
    g.add("backpressured", static_cast<double>(backpressured), "requests",
          "requests that found their bank queue full and waited");
    g.add("backpressure_time", ticks_to_ns(backpressure_time), "ns", "summed wait for a slot");
    add_percentiles(g, "read_latency", read_latency);
    add_percentiles(g, "write_latency", write_latency);
  }

 private:
  static void add_percentiles(StatsGroup& g, const std::string& name, const PercentileHistogram& h) {
    static const struct {
      const char* suffix;
      double q;
    } points[] = {{"p50", 0.50}, {"p90", 0.90}, {"p99", 0.99}};
    for (const auto& p : points)
      g.add(name + "_" + p.suffix, ticks_to_ns(h.percentile(p.q)), "ns",
            std::string("controller arrival to last data, ") + p.suffix +
                " (histogram upper edge, <= 0.8 % high)");
  }
};

}  // namespace tlm_models

#endif  // TLM_MODELS_DRAM_CHANNEL_STATS_H
