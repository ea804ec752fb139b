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
  };

  explicit HbmChannel(const Config& c) : rate_(c.bandwidth), burst_bytes_(c.burst_bytes) {}

  // The whole transfer occupies the bus. Returns the end of the transfer.
  Ticks serve_transfer(Ticks arrival, std::uint64_t bytes, bool write) {
    (write ? bytes_written_ : bytes_read_) += bytes;
    // The share moves in whole bursts, a partial one included (docs/energy.md).
    (write ? write_bursts_ : read_bursts_) += ceil_div(bytes, burst_bytes_);
    Ticks xfer = rate_.ticks(bytes);
    return bus_.serve(arrival, xfer) + xfer;
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
  ByteRate rate_;
  BandwidthServer bus_;
  std::uint64_t burst_bytes_;
  std::uint64_t bytes_read_ = 0, bytes_written_ = 0;
  std::uint64_t read_bursts_ = 0, write_bursts_ = 0;
};

}  // namespace tlm_models

#endif  // TLM_MODELS_HBM_CHANNEL_H
