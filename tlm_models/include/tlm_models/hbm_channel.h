// One HBM pseudo-channel: a data bus that is a bandwidth server, and, at bank fidelity, banks
// with row buffers (open-page policy) and optional all-bank refresh. Formulas: docs/models/hbm.md.
#ifndef TLM_MODELS_HBM_CHANNEL_H
#define TLM_MODELS_HBM_CHANNEL_H

#include <algorithm>
#include <cstdint>
#include <vector>

#include "tlm_models/bandwidth_server.h"
#include "tlm_models/time_ticks.h"

namespace tlm_models {

class HbmChannel {
 public:
  struct Config {
    double bandwidth = 0;  // B/s
    unsigned banks = 1;
    std::uint64_t row_size = 1;
    std::uint64_t burst_bytes = 1;
    Ticks t_rcd = 0, t_rp = 0, t_cl = 0;
    Ticks t_refi = 0, t_rfc = 0;  // t_refi = 0: no refresh
  };

  explicit HbmChannel(const Config& c)
      : cfg_(c), rate_(c.bandwidth), burst_ticks_(rate_.ticks(c.burst_bytes)), banks_(c.banks),
        next_refresh_(c.t_refi) {}

  // Bandwidth fidelity: the whole transfer occupies the bus. Returns the end of the transfer.
  Ticks serve_transfer(Ticks arrival, std::uint64_t bytes, bool write) {
    count(bytes, write);
    Ticks xfer = rate_.ticks(bytes);
    return bus_.serve(arrival, xfer) + xfer;
  }

  // Bank fidelity: `bytes` at channel-local address `local`, not crossing a row boundary.
  // Returns the end of the data transfer on the bus.
  Ticks serve_row_access(Ticks arrival, std::uint64_t local, std::uint64_t bytes, bool write) {
    count(bytes, write);
    std::uint64_t row_index = local / cfg_.row_size;
    Bank& bank = banks_[row_index % cfg_.banks];
    std::uint64_t row = row_index / cfg_.banks;
    Ticks cmd = std::max(arrival, bank.ready);
    if (cfg_.t_refi) cmd = refresh_until(cmd);
    Ticks activate;  // time before the column command can issue
    if (bank.open && bank.row == row) {
      activate = 0;
      ++row_hits_;
    } else if (!bank.open) {
      activate = cfg_.t_rcd;
      ++row_misses_;
    } else {
      activate = cfg_.t_rp + cfg_.t_rcd;
      ++row_conflicts_;
    }
    bank.open = true;
    bank.row = row;
    // Column commands to an open row pipeline; only opening a row occupies the bank.
    bank.ready = cmd + activate;
    Ticks xfer = ceil_div(bytes, cfg_.burst_bytes) * burst_ticks_;
    return bus_.serve(cmd + activate + cfg_.t_cl, xfer) + xfer;
  }

  BandwidthServer& bus() { return bus_; }
  const BandwidthServer& bus() const { return bus_; }
  std::uint64_t bytes_read() const { return bytes_read_; }
  std::uint64_t bytes_written() const { return bytes_written_; }
  std::uint64_t row_hits() const { return row_hits_; }
  std::uint64_t row_misses() const { return row_misses_; }
  std::uint64_t row_conflicts() const { return row_conflicts_; }
  std::uint64_t refreshes() const { return refreshes_; }
  // DRAM commands and bursts, the counts energy is computed from (docs/energy.md).
  std::uint64_t activates() const { return row_misses_ + row_conflicts_; }
  std::uint64_t precharges() const { return row_conflicts_ + refresh_precharges_; }
  std::uint64_t read_bursts() const { return read_bursts_; }
  std::uint64_t write_bursts() const { return write_bursts_; }

  void reset_stats() {
    bus_.reset_stats();
    bytes_read_ = bytes_written_ = 0;
    row_hits_ = row_misses_ = row_conflicts_ = refreshes_ = 0;
    refresh_precharges_ = read_bursts_ = write_bursts_ = 0;
  }

 private:
  struct Bank {
    bool open = false;
    std::uint64_t row = 0;
    Ticks ready = 0;
  };

  // A transfer moves whole bursts: a partial one still occupies a burst slot.
  void count(std::uint64_t bytes, bool write) {
    (write ? bytes_written_ : bytes_read_) += bytes;
    (write ? write_bursts_ : read_bursts_) += ceil_div(bytes, cfg_.burst_bytes);
  }

  // Refreshes are due at k * t_refi (k >= 1) and block the channel for t_rfc, closing every
  // row. Applies all refreshes due by `cmd` and returns when the command can issue.
  Ticks refresh_until(Ticks cmd) {
    if (cmd < next_refresh_) return cmd;
    std::uint64_t skipped = (cmd - next_refresh_) / cfg_.t_refi;
    Ticks last = next_refresh_ + skipped * cfg_.t_refi;
    refreshes_ += skipped + 1;
    next_refresh_ = last + cfg_.t_refi;
    for (Bank& b : banks_) {
      refresh_precharges_ += b.open ? 1 : 0;  // refresh precharges the open banks first
      b.open = false;
    }
    return std::max(cmd, last + cfg_.t_rfc);
  }

  Config cfg_;
  ByteRate rate_;
  Ticks burst_ticks_;
  BandwidthServer bus_;
  std::vector<Bank> banks_;
  Ticks next_refresh_;
  std::uint64_t bytes_read_ = 0, bytes_written_ = 0;
  std::uint64_t row_hits_ = 0, row_misses_ = 0, row_conflicts_ = 0, refreshes_ = 0;
  std::uint64_t refresh_precharges_ = 0, read_bursts_ = 0, write_bursts_ = 0;
};

}  // namespace tlm_models

#endif  // TLM_MODELS_HBM_CHANNEL_H
