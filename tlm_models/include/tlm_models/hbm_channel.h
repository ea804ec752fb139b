// One HBM channel at bandwidth fidelity: a data bus that is a bandwidth server. (The bank
// fidelity's channel is a DramController.) Formulas: docs/models/hbm.md.
#ifndef TLM_MODELS_HBM_CHANNEL_H
#define TLM_MODELS_HBM_CHANNEL_H

#include <cstdint>

#include "tlm_models/bandwidth_server.h"
#include "tlm_models/time_ticks.h"

namespace tlm_models {

class HbmChannel {
 public:
  struct Config {
    double bandwidth = 0;         // B/s
    std::uint64_t burst_bytes = 1;  // what one burst moves (counted for energy)
    bool split_requests = false;    // a transfer may use several gaps (HbmMemory::Params)
  };

  explicit HbmChannel(const Config& c)
      : rate_(c.bandwidth), burst_bytes_(c.burst_bytes), split_(c.split_requests) {}

  // The whole transfer occupies the bus (in one gap, or with split_requests in the free time
  // from its arrival on). Returns the end of the transfer.
  Ticks serve_transfer(Ticks arrival, std::uint64_t bytes, bool write) {
    const Ticks xfer = count(bytes, write);
    if (split_) return bus_.serve_split(arrival, xfer, now_ticks());
    return bus_.serve(arrival, xfer) + xfer;
  }

  // A burst train's shares on this channel (burst_train.h), in train order: share k of
  // shares[k * stride] bytes (0: none) arrives at arrivals[k]; ends[k] is raised to its end.
  // The result is serve_transfer's, share by share. Shares that follow each other on the bus
  // are booked as one interval: once a share went after all booked work, a later share that
  // arrives no earlier and is no smaller finds no gap before that work's end either (every gap
  // at or after its arrival was too small for the previous share), so it starts at
  // max(arrival, end of the previous share).
  void serve_train(const Ticks* arrivals, const std::uint64_t* shares, std::size_t stride,
                   std::size_t n, bool write, Ticks now, Ticks* ends) {
    bus_.prune(now);
    const bool coalesce = !bus_.activity().enabled();
    bool run = false;  // a run [run_start, run_end) goes after all booked work, not booked yet
    Ticks run_start = 0, run_end = 0, run_wait = 0, prev_arrival = 0, prev_xfer = 0;
    std::uint64_t run_requests = 0;
    for (std::size_t k = 0; k < n; ++k) {
      const std::uint64_t bytes = shares[k * stride];
      if (bytes == 0) continue;
      const Ticks xfer = count(bytes, write);
      const Ticks a = arrivals[k];
      Ticks start;
      if (run && a >= prev_arrival && xfer >= prev_xfer && a <= run_end) {
        start = run_end;  // back to back with the run
      } else {
        if (run) bus_.take_run(run_start, run_end - run_start, run_requests, run_wait);
        run = false;
        const BandwidthServer::Slot slot = bus_.find(a, xfer);
        start = slot.start;
        if (coalesce && bus_.appends(slot)) {
          run = true;
          run_start = start;
          run_requests = 0;
          run_wait = 0;
        } else {
          bus_.take(slot, a, xfer);
        }
      }
      if (run) {
        run_end = start + xfer;
        run_wait += start - a;
        ++run_requests;
      }
      prev_arrival = a;
      prev_xfer = xfer;
      if (start + xfer > ends[k]) ends[k] = start + xfer;
    }
    if (run) bus_.take_run(run_start, run_end - run_start, run_requests, run_wait);
  }

  BandwidthServer& bus() { return bus_; }
  const BandwidthServer& bus() const { return bus_; }
  std::uint64_t bytes_read() const { return bytes_read_; }
  std::uint64_t bytes_written() const { return bytes_written_; }
  std::uint64_t read_bursts() const { return read_bursts_; }
  std::uint64_t write_bursts() const { return write_bursts_; }

  void reset_stats() {
    bus_.reset_stats();
    bytes_read_ = bytes_written_ = read_bursts_ = write_bursts_ = 0;
  }

 private:
  // Counts a share and returns its bus time. The last size's figures are kept (the shares of
  // a stream repeat), which saves a division and a rounding per share.
  Ticks count(std::uint64_t bytes, bool write) {
    if (bytes != last_bytes_) {
      last_bytes_ = bytes;
      last_xfer_ = rate_.ticks(bytes);
      // The share moves in whole bursts, a partial one included (docs/energy.md).
      last_bursts_ = ceil_div(bytes, burst_bytes_);
    }
    (write ? bytes_written_ : bytes_read_) += bytes;
    (write ? write_bursts_ : read_bursts_) += last_bursts_;
    return last_xfer_;
  }

  ByteRate rate_;
  std::uint64_t last_bytes_ = 0, last_bursts_ = 0;
  Ticks last_xfer_ = 0;
  BandwidthServer bus_;
  std::uint64_t burst_bytes_;
  bool split_;
  std::uint64_t bytes_read_ = 0, bytes_written_ = 0;
  std::uint64_t read_bursts_ = 0, write_bursts_ = 0;
};

}  // namespace tlm_models

#endif  // TLM_MODELS_HBM_CHANNEL_H
