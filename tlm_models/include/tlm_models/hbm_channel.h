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
    double bandwidth = 0;  // B/s
  };

  explicit HbmChannel(const Config& c) : rate_(c.bandwidth) {}

  // The whole transfer occupies the bus. Returns the end of the transfer.
  Ticks serve_transfer(Ticks arrival, std::uint64_t bytes, bool write) {
    (write ? bytes_written_ : bytes_read_) += bytes;
    Ticks xfer = rate_.ticks(bytes);
    return bus_.serve(arrival, xfer) + xfer;
  }

  BandwidthServer& bus() { return bus_; }
  const BandwidthServer& bus() const { return bus_; }
  std::uint64_t bytes_read() const { return bytes_read_; }
  std::uint64_t bytes_written() const { return bytes_written_; }

  void reset_stats() {
    bus_.reset_stats();
    bytes_read_ = bytes_written_ = 0;
  }

 private:
  ByteRate rate_;
  BandwidthServer bus_;
  std::uint64_t bytes_read_ = 0, bytes_written_ = 0;
};

}  // namespace tlm_models

#endif  // TLM_MODELS_HBM_CHANNEL_H
