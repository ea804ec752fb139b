// Off-chip HBM: channels interleaved by address, each a bandwidth server with a fixed latency
// ("bandwidth" fidelity, the fast default) or with banks and row buffers ("bank" fidelity).
// Loosely timed: b_transport annotates the delay to the response; no processes. Optional sparse
// backing storage with DMI per page. Parameters, timing formulas and statistics:
// docs/models/hbm.md.
#ifndef TLM_MODELS_HBM_H
#define TLM_MODELS_HBM_H

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>

#include "tlm_models/activity_log.h"
#include "tlm_models/hbm_channel.h"
#include "tlm_models/interleave.h"
#include "tlm_models/latency_stats.h"
#include "tlm_models/payload_access.h"
#include "tlm_models/sparse_storage.h"
#include "tlm_models/stats.h"
#include "tlm_models/time_ticks.h"

namespace tlm_models {

class HbmMemory : public sc_core::sc_module, public StatsProvider {
 public:
  struct Params {
    unsigned channels = 16;
    double channel_bandwidth = 8e9;
    sc_core::sc_time latency = sc_core::sc_time(100, sc_core::SC_NS);
    std::uint64_t interleave = 256;
    std::uint64_t size = std::uint64_t{8} << 30;
    std::string fidelity = "bandwidth";
    unsigned banks = 16;
    std::uint64_t row_size = 1024;
    sc_core::sc_time t_rcd = sc_core::sc_time(14, sc_core::SC_NS);
    sc_core::sc_time t_rp = sc_core::sc_time(14, sc_core::SC_NS);
    sc_core::sc_time t_cl = sc_core::sc_time(14, sc_core::SC_NS);
    std::uint64_t burst_bytes = 32;
    sc_core::sc_time t_refi = sc_core::SC_ZERO_TIME;
    sc_core::sc_time t_rfc = sc_core::SC_ZERO_TIME;
    bool storage = false;

    std::string check() const {
      if (channels == 0) return "channels must be at least 1";
      if (!(channel_bandwidth > 0)) return "channel_bandwidth must be positive";
      if (interleave == 0) return "interleave must be at least 1 B";
      if (size == 0) return "size must be at least 1 B";
      if (fidelity != "bandwidth" && fidelity != "bank")
        return "fidelity must be 'bandwidth' or 'bank', got '" + fidelity + "'";
      if (banks == 0) return "banks must be at least 1";
      if (row_size == 0) return "row_size must be at least 1 B";
      if (burst_bytes == 0) return "burst_bytes must be at least 1 B";
      if (t_refi != sc_core::SC_ZERO_TIME && t_rfc >= t_refi)
        return "t_rfc must be shorter than t_refi";
      return "";
    }
  };

  tlm_utils::simple_target_socket<HbmMemory> target;

  HbmMemory(sc_core::sc_module_name name, const Params& p)
      : sc_core::sc_module(name), target("target"), p_(p), bank_level_(p.fidelity == "bank") {
    std::string err = p.check();
    if (!err.empty()) SC_REPORT_FATAL("tlm_models/hbm", (std::string(this->name()) + ": " + err).c_str());
    latency_ = to_ticks(p.latency);
    HbmChannel::Config c;
    c.bandwidth = p.channel_bandwidth;
    c.banks = p.banks;
    c.row_size = p.row_size;
    c.burst_bytes = p.burst_bytes;
    c.t_rcd = to_ticks(p.t_rcd);
    c.t_rp = to_ticks(p.t_rp);
    c.t_cl = to_ticks(p.t_cl);
    c.t_refi = to_ticks(p.t_refi);
    c.t_rfc = to_ticks(p.t_rfc);
    channels_.reserve(p.channels);
    for (unsigned i = 0; i < p.channels; ++i) channels_.emplace_back(c);
    scratch_.assign(p.channels, 0);
    if (p.storage) storage_ = std::make_unique<SparseStorage>(p.size);
    target.register_b_transport(this, &HbmMemory::b_transport);
    target.register_transport_dbg(this, &HbmMemory::transport_dbg);
    target.register_get_direct_mem_ptr(this, &HbmMemory::get_direct_mem_ptr);
  }

  const Params& params() const { return p_; }
  unsigned channel_of(std::uint64_t addr) const {
    return static_cast<unsigned>((addr / p_.interleave) % p_.channels);
  }
  const HbmChannel& channel(unsigned i) const { return channels_[i]; }

  // Records each channel's busy intervals within [from, to), at most max_entries per channel
  // (back-to-back transfers merge into one interval).
  void enable_activity_log(const sc_core::sc_time& from, const sc_core::sc_time& to,
                           std::size_t max_entries) {
    for (auto& c : channels_) c.bus().activity().enable(to_ticks(from), to_ticks(to), max_entries);
  }
  const std::vector<BusyInterval>& channel_activity(unsigned i) const {
    return channels_[i].bus().activity().entries();
  }
  std::size_t channel_activity_dropped(unsigned i) const {
    return channels_[i].bus().activity().dropped();
  }

  // Drops all stored data (everything reads as zero again) and revokes DMI pointers.
  void clear_storage() {
    if (!storage_) return;
    storage_->clear();
    target->invalidate_direct_mem_ptr(0, p_.size - 1);
  }

  void collect_stats(StatsGroup& g) const override {
    std::uint64_t rd = 0, wr = 0, hits = 0, misses = 0, conflicts = 0, refreshes = 0;
    Ticks end = first_arrival_;
    for (const auto& c : channels_) end = std::max(end, c.bus().busy_until());
    double window = requests_ ? ticks_to_seconds(end - first_arrival_) : 0.0;
    for (unsigned i = 0; i < channels_.size(); ++i) {
      const HbmChannel& c = channels_[i];
      StatsGroup& cg = g.child("channel" + std::to_string(i));
      std::uint64_t bytes = c.bytes_read() + c.bytes_written();
      cg.add("bytes_read", static_cast<double>(c.bytes_read()), "B", "bytes read on this channel");
      cg.add("bytes_written", static_cast<double>(c.bytes_written()), "B", "bytes written on this channel");
      cg.add("busy_time", ticks_to_ns(c.bus().busy_ticks()), "ns", "time the data bus was transferring");
      cg.add("wait_time", ticks_to_ns(c.bus().wait_ticks()), "ns", "summed queueing of requests for the bus");
      cg.add("achieved_bandwidth", window > 0 ? static_cast<double>(bytes) / window : 0.0, "B/s",
             "bytes / observation window (first arrival to last transfer end)");
      cg.add("peak_bandwidth", p_.channel_bandwidth, "B/s", "channel_bandwidth");
      cg.add("utilization", window > 0 ? ticks_to_seconds(c.bus().busy_ticks()) / window : 0.0, "1",
             "busy_time / observation window");
      if (bank_level_) add_row_stats(cg, c.row_hits(), c.row_misses(), c.row_conflicts());
      add_command_stats(cg, c);
      rd += c.bytes_read();
      wr += c.bytes_written();
      hits += c.row_hits();
      misses += c.row_misses();
      conflicts += c.row_conflicts();
      refreshes += c.refreshes();
    }
    g.add("reads", static_cast<double>(reads_), "requests", "read transactions served");
    g.add("writes", static_cast<double>(writes_), "requests", "write transactions served");
    g.add("bytes_read", static_cast<double>(rd), "B", "bytes read");
    g.add("bytes_written", static_cast<double>(wr), "B", "bytes written");
    g.add("window", ticks_to_ns(end - first_arrival_), "ns", "first request arrival to last transfer end");
    g.add("achieved_bandwidth", window > 0 ? static_cast<double>(rd + wr) / window : 0.0, "B/s",
          "bytes / observation window");
    g.add("peak_bandwidth", p_.channel_bandwidth * p_.channels, "B/s", "channels x channel_bandwidth");
    g.add("errors", static_cast<double>(errors_), "requests", "transactions answered with an error");
    latency_stats_.collect(g);
    if (bank_level_) {
      add_row_stats(g, hits, misses, conflicts);
      g.add("refreshes", static_cast<double>(refreshes), "refreshes", "all-bank refreshes");
    }
  }

  void reset_stats() override {
    for (auto& c : channels_) c.reset_stats();
    latency_stats_.reset();
    reads_ = writes_ = errors_ = requests_ = 0;
    first_arrival_ = 0;
  }

 private:
  // Per-channel command and burst counts under the names energy reads (docs/energy.md).
  static void add_command_stats(StatsGroup& g, const HbmChannel& c) {
    g.add("activates", static_cast<double>(c.activates()), "commands", "ACT commands (0 at bandwidth fidelity)");
    g.add("precharges", static_cast<double>(c.precharges()), "commands", "PRE commands, incl. before refresh");
    g.add("refreshes", static_cast<double>(c.refreshes()), "commands", "all-bank refreshes");
    g.add("read_bursts", static_cast<double>(c.read_bursts()), "bursts", "read bursts of burst_bytes");
    g.add("write_bursts", static_cast<double>(c.write_bursts()), "bursts", "write bursts of burst_bytes");
    g.add("read_bytes", static_cast<double>(c.bytes_read()), "B", "bytes read");
    g.add("write_bytes", static_cast<double>(c.bytes_written()), "B", "bytes written");
  }

  static void add_row_stats(StatsGroup& g, std::uint64_t hits, std::uint64_t misses,
                            std::uint64_t conflicts) {
    g.add("row_hits", static_cast<double>(hits), "accesses", "row already open");
    g.add("row_misses", static_cast<double>(misses), "accesses", "bank closed: activate");
    g.add("row_conflicts", static_cast<double>(conflicts), "accesses",
          "another row open: precharge and activate");
  }

  void b_transport(tlm::tlm_generic_payload& t, sc_core::sc_time& delay) {
    if (!admit_memory_access(t, p_.size)) {
      if (t.is_response_error()) ++errors_;
      return;
    }
    std::uint64_t addr = t.get_address();
    std::uint64_t len = t.get_data_length();
    bool write = t.get_command() == tlm::TLM_WRITE_COMMAND;
    Ticks now = now_ticks();
    Ticks arrival = now + to_ticks(delay);
    if (requests_++ == 0) first_arrival_ = arrival;
    ++(write ? writes_ : reads_);
    Ticks end = bank_level_ ? serve_banks(arrival, addr, len, write)
                            : serve_channels(arrival, addr, len, write);
    Ticks ready = end + latency_;
    latency_stats_.record(ready - arrival);
    if (storage_)
      storage_->access(write, addr, t.get_data_ptr(), len, ByteEnables::of(t));
    else if (!write)
      zero_bytes(t.get_data_ptr(), len, 0, ByteEnables::of(t));
    t.set_dmi_allowed(static_cast<bool>(storage_));
    t.set_response_status(tlm::TLM_OK_RESPONSE);
    delay = from_ticks(ready - now);
  }

  // Every channel's share of the transaction arrives together; the response waits for the
  // last share. A channel's share is one transfer, whatever its granule count.
  Ticks serve_channels(Ticks arrival, std::uint64_t addr, std::uint64_t len, bool write) {
    std::uint64_t first = addr / p_.interleave;
    if (len == 0) return arrival;
    if (first == (addr + len - 1) / p_.interleave)
      return channels_[first % p_.channels].serve_transfer(arrival, len, write);
    add_interleaved_bytes(addr, len, p_.interleave, p_.channels, scratch_);
    Ticks end = arrival;
    for (unsigned c = 0; c < p_.channels; ++c) {
      if (!scratch_[c]) continue;
      end = std::max(end, channels_[c].serve_transfer(arrival, scratch_[c], write));
      scratch_[c] = 0;
    }
    return end;
  }

  // Pieces in address order, split at granule and row boundaries; see docs/models/hbm.md for
  // the channel-local address and its row/bank/column fields.
  Ticks serve_banks(Ticks arrival, std::uint64_t addr, std::uint64_t len, bool write) {
    Ticks end = arrival;
    std::uint64_t stop = addr + len;
    while (addr < stop) {
      std::uint64_t granule = addr / p_.interleave;
      std::uint64_t in_granule = addr % p_.interleave;
      std::uint64_t local = (granule / p_.channels) * p_.interleave + in_granule;
      std::uint64_t n = std::min({stop - addr, p_.interleave - in_granule,
                                  p_.row_size - local % p_.row_size});
      HbmChannel& ch = channels_[granule % p_.channels];
      end = std::max(end, ch.serve_row_access(arrival, local, n, write));
      addr += n;
    }
    return end;
  }

  unsigned transport_dbg(tlm::tlm_generic_payload& t) {
    std::uint64_t addr = t.get_address();
    if (addr >= p_.size) return 0;
    std::uint64_t n = std::min<std::uint64_t>(t.get_data_length(), p_.size - addr);
    bool write = t.get_command() == tlm::TLM_WRITE_COMMAND;
    if (t.get_command() == tlm::TLM_IGNORE_COMMAND) return 0;
    if (storage_)
      storage_->access(write, addr, t.get_data_ptr(), n, ByteEnables{});
    else if (!write)
      zero_bytes(t.get_data_ptr(), n, 0, ByteEnables{});
    t.set_response_status(tlm::TLM_OK_RESPONSE);
    return static_cast<unsigned>(n);
  }

  bool get_direct_mem_ptr(tlm::tlm_generic_payload& t, tlm::tlm_dmi& dmi) {
    std::uint64_t addr = t.get_address();
    dmi.set_read_latency(p_.latency);
    dmi.set_write_latency(p_.latency);
    if (addr >= p_.size) {
      dmi.allow_none();
      dmi.set_start_address(p_.size);
      dmi.set_end_address(std::numeric_limits<sc_dt::uint64>::max());
      return false;
    }
    if (!storage_) {
      dmi.allow_none();
      dmi.set_start_address(0);
      dmi.set_end_address(p_.size - 1);
      return false;
    }
    std::uint64_t page = addr / storage_->page_size();
    std::uint64_t start = page * storage_->page_size();
    dmi.set_dmi_ptr(storage_->page_ptr(page));
    dmi.set_start_address(start);
    dmi.set_end_address(std::min(start + storage_->page_size(), p_.size) - 1);
    dmi.allow_read_write();
    return true;
  }

  Params p_;
  bool bank_level_;
  Ticks latency_ = 0;
  std::vector<HbmChannel> channels_;
  std::vector<std::uint64_t> scratch_;  // per-channel bytes of the transaction being split
  std::unique_ptr<SparseStorage> storage_;
  LatencyStats latency_stats_;
  std::uint64_t reads_ = 0, writes_ = 0, errors_ = 0, requests_ = 0;
  Ticks first_arrival_ = 0;
};

}  // namespace tlm_models

#endif  // TLM_MODELS_HBM_H
