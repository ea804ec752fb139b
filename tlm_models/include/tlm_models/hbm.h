// Off-chip HBM (or any JEDEC DRAM): channels interleaved by address, each a bandwidth server
// with a fixed latency ("bandwidth" fidelity, the fast default) or a memory controller issuing
// ACT/PRE/RD/WR/REF under the full command timing set ("bank" fidelity, dram_controller.h).
// Loosely timed: b_transport annotates the delay to the response. At bank fidelity with
// request_mode "queued", b_transport instead waits until the request's arrival time, queues it
// and waits until the channel's scheduler process has issued its commands, so that requests
// other initiator threads have outstanding compete in the controller's queues; nb_transport_fw
// queues the request at its arrival time through a payload event queue and answers when the
// controller has issued it, without waiting (callable from methods). Optional sparse
// backing storage with DMI per page. Parameters, timing formulas and statistics:
// docs/models/hbm.md.
#ifndef TLM_MODELS_HBM_H
#define TLM_MODELS_HBM_H

#include <algorithm>
#include <cstdint>
#include <deque>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <systemc>
#include <sysc/kernel/sc_dynamic_processes.h>
#include <tlm>
#include <tlm_utils/peq_with_cb_and_phase.h>
#include <tlm_utils/simple_target_socket.h>

#include "tlm_models/activity_log.h"
#include "tlm_models/at_target.h"
#include "tlm_models/burst_train.h"
#include "tlm_models/dram_address_mapper.h"
#include "tlm_models/dram_command_bus.h"
#include "tlm_models/dram_controller.h"
#include "tlm_models/dram_scheduler_fcfs.h"
#include "tlm_models/dram_scheduler_frfcfs.h"
#include "tlm_models/hbm_channel.h"
#include "tlm_models/interleave.h"
#include "tlm_models/latency_stats.h"
#include "tlm_models/params_generated.h"
#include "tlm_models/params_check.h"
#include "tlm_models/payload_access.h"
#include "tlm_models/request_log.h"
#include "tlm_models/sparse_storage.h"
#include "tlm_models/stats.h"
#include "tlm_models/time_ticks.h"

namespace tlm_models {

class HbmMemory : public sc_core::sc_module, public StatsProvider {
 public:
  // The fields and their defaults: HbmMemoryParamFields (params_generated.h, generated from
  // the component registry). The bank fidelity's defaults are the HBM2 pseudo-channel of
  // platforms/parts/hbm2-attenio.yaml (1 Gb/s per pin: the paper machine's 8 GB/s); a zero
  // time turns that constraint off (t_refi = 0: no refresh). request_mode "immediate": each
  // b_transport is served alone and returns at once (requests are committed in call order);
  // "queued": b_transport waits in the controller's queue (bank fidelity, callers in
  // SC_THREADs), so requests outstanding together are reordered. write_drain "none": reads and
  // writes compete under the scheduler alone (DRAMSys' default FR-FCFS); "watermark": read and
  // write phases switched by the write-queue watermarks. command_bus: each command holds its bus
  // for its cycles of t_ck (HBM2: ACT two cycles, JESD235); pseudo_channels: how many
  // consecutive channels (the pseudo-channels of one JEDEC channel) share those buses.
  struct Params : HbmMemoryParamFields {
    std::string check() const {
      std::string error = check_fields();
      if (!error.empty()) return error;
      if (split_requests && fidelity != "bandwidth")
        return "split_requests needs fidelity 'bandwidth' (the bank level schedules commands)";
      if (request_mode == "queued" && fidelity != "bank")
        return "request_mode 'queued' needs fidelity 'bank' (the bandwidth level has no queue)";
      if (command_bus != "none" && t_ck == sc_core::SC_ZERO_TIME)
        return "t_ck must be positive when command_bus is '" + command_bus + "'";
      if (write_low_watermark >= write_high_watermark)
        return "write_low_watermark must be below write_high_watermark";
      if (t_refi != sc_core::SC_ZERO_TIME && t_rfc >= t_refi)
        return "t_rfc must be shorter than t_refi";
      if (refresh == "per_bank" && t_refi != sc_core::SC_ZERO_TIME && t_rfc_pb * banks >= t_refi)
        return "t_rfc_pb x banks must be shorter than t_refi";
      if (fidelity == "bank") {
        if (channels % pseudo_channels != 0)
          return "channels (" + std::to_string(channels) + ") must be a multiple of " +
                 "pseudo_channels (" + std::to_string(pseudo_channels) +
                 "; 1: every channel has command buses of its own)";
        if (std::string e = timing_in_range(); !e.empty()) return e;
        return DramAddressMapper(geometry_of(*this), address_mapping).error();
      }
      return "";
    }

    // No DRAM standard has a timing near a millisecond (the longest, tREFI, is a few
    // microseconds): a longer one is a unit slip, and the bank level would spend minutes
    // searching command histories that can never be dropped before refusing it at 2^64 ps.
    std::string timing_in_range() const {
      const sc_core::sc_time limit(1, sc_core::SC_MS);
      const std::pair<const char*, sc_core::sc_time> times[] = {
          {"t_rcd", t_rcd},     {"t_rcd_wr", t_rcd_wr}, {"t_rp", t_rp},       {"t_ras", t_ras},
          {"t_rc", t_rc},       {"t_rrd_s", t_rrd_s},   {"t_rrd_l", t_rrd_l}, {"t_faw", t_faw},
          {"t_ccd_s", t_ccd_s}, {"t_ccd_l", t_ccd_l},   {"t_cl", t_cl},       {"t_cwl", t_cwl},
          {"t_wr", t_wr},       {"t_wtr_s", t_wtr_s},   {"t_wtr_l", t_wtr_l}, {"t_rtw", t_rtw},
          {"t_rtp", t_rtp},     {"t_refi", t_refi},     {"t_rfc", t_rfc},     {"t_rfc_pb", t_rfc_pb},
          {"t_ck", t_ck}};
      for (const auto& [name, t] : times)
        if (t > limit)
          return std::string(name) + " = " + t.to_string() +
                 " is longer than 1 ms; DRAM timings are nanoseconds to microseconds (a unit slip?)";
      return "";
    }
  };

  tlm_utils::simple_target_socket<HbmMemory> target;

  HbmMemory(sc_core::sc_module_name name, const Params& p)
      : sc_core::sc_module(name), target("target"), p_(p), bank_level_(p.fidelity == "bank"),
        mapper_(geometry_of(p), p.address_mapping),
        at_(this->name(),
            AtTarget::Defer([this](int, tlm::tlm_generic_payload& t, sc_core::sc_time& d) {
              return accept_at(t, d);
            }),
            [this](int, tlm::tlm_generic_payload& t, tlm::tlm_phase& ph, sc_core::sc_time& d) {
              return target->nb_transport_bw(t, ph, d);
            }),
        arrivals_(this, &HbmMemory::arrive_at) {
    params_valid(p, this->name(), "tlm_models/hbm");
    latency_ = to_ticks(p.latency);
    HbmChannel::Config c;
    c.bandwidth = p.channel_bandwidth;
    c.burst_bytes = p.burst_bytes;
    c.split_requests = p.split_requests;
    channels_.reserve(p.channels);
    for (unsigned i = 0; i < p.channels; ++i) channels_.emplace_back(c);
    if (bank_level_) build_controllers();
    if (p.request_mode == "queued") spawn_schedulers();
    scratch_.assign(p.channels, 0);
    if (p.storage) storage_ = std::make_unique<SparseStorage>(p.size);
    target.register_b_transport(this, &HbmMemory::b_transport);
    target.register_nb_transport_fw(this, &HbmMemory::nb_transport_fw);
    target.register_transport_dbg(this, &HbmMemory::transport_dbg);
    target.register_get_direct_mem_ptr(this, &HbmMemory::get_direct_mem_ptr);
  }

  // The controller configuration a bank-level channel gets from `p` (public so that a
  // benchmark of the controller alone runs it as the model does).
  static DramController::Config controller_config(const Params& p) {
    DramController::Config c;
    DramTiming& t = c.timing;
    t.rcd = to_ticks(p.t_rcd);
    t.rcd_wr = to_ticks(p.t_rcd_wr);
    t.rp = to_ticks(p.t_rp);
    t.ras = to_ticks(p.t_ras);
    t.rc = to_ticks(p.t_rc);
    t.rrd_s = to_ticks(p.t_rrd_s);
    t.rrd_l = to_ticks(p.t_rrd_l);
    t.faw = to_ticks(p.t_faw);
    t.ccd_s = to_ticks(p.t_ccd_s);
    t.ccd_l = to_ticks(p.t_ccd_l);
    t.cl = to_ticks(p.t_cl);
    t.cwl = to_ticks(p.t_cwl);
    t.wr = to_ticks(p.t_wr);
    t.wtr_s = to_ticks(p.t_wtr_s);
    t.wtr_l = to_ticks(p.t_wtr_l);
    t.rtw = to_ticks(p.t_rtw);
    t.rtp = to_ticks(p.t_rtp);
    t.refi = to_ticks(p.t_refi);
    t.rfc = to_ticks(p.t_rfc);
    t.rfc_pb = to_ticks(p.t_rfc_pb);
    t.burst = transfer_ticks(p.burst_bytes, p.channel_bandwidth);
    t.ck = p.command_bus == "none" ? 0 : to_ticks(p.t_ck);
    t.act_cycles = p.act_cycles;
    t.row_cycles = p.row_cycles;
    t.column_cycles = p.column_cycles;
    t.shared_command_bus = p.command_bus == "shared";
    // A request may take slots up to 10 us behind the latest decision: a DMA transfer of the
    // paper machine books its bursts about 1 us ahead per 128 KiB in flight, so transfers that
    // overlap in time interleave, while the history searched stays short when requests pile
    // up far ahead (an STL trace issued at once).
    t.reorder_window = to_ticks(sc_core::sc_time(10, sc_core::SC_US));
    c.banks = p.banks;
    c.bank_groups = p.bank_groups;
    c.refresh = p.refresh == "per_bank" ? DramRefresh::Mode::per_bank : DramRefresh::Mode::all_bank;
    parse_page_policy(p.page_policy, &c.page_policy);
    c.queue_depth = p.queue_depth;
    c.past_hits = p.request_mode == "immediate";  // queued: every command at its own time
    c.in_order_admission = p.admission == "in_order";
    parse_write_drain(p.write_drain, &c.write_drain);
    c.write_high = p.write_high_watermark;
    c.write_low = p.write_low_watermark;
    return c;
  }

  const Params& params() const { return p_; }

  // The organisation the bank level's address mapping must fit.
  static DramAddressMapper::Geometry geometry_of(const Params& p) {
    DramAddressMapper::Geometry g;
    g.channels = p.channels;
    g.bank_groups = p.bank_groups;
    g.banks = p.banks;
    g.row_size = p.row_size;
    g.interleave = p.interleave;
    g.burst_bytes = p.burst_bytes;
    return g;
  }
  unsigned channel_of(std::uint64_t addr) const {
    if (bank_level_) return mapper_.map(addr).channel;
    return static_cast<unsigned>((addr / p_.interleave) % p_.channels);
  }
  const HbmChannel& channel(unsigned i) const { return channels_[i]; }
  // Bank fidelity: the controller of channel i (statistics, row state).
  const DramController& controller(unsigned i) const { return controllers_[i]; }
  const DramAddressMapper& mapper() const { return mapper_; }

  // Records each channel's busy intervals within [from, to), at most max_entries per channel
  // (back-to-back transfers merge into one interval).
  void enable_activity_log(const sc_core::sc_time& from, const sc_core::sc_time& to,
                           std::size_t max_entries) {
    for (unsigned i = 0; i < p_.channels; ++i)
      activity(i).enable(to_ticks(from), to_ticks(to), max_entries);
  }
  const std::vector<BusyInterval>& channel_activity(unsigned i) const {
    return activity(i).entries();
  }
  std::size_t channel_activity_dropped(unsigned i) const { return activity(i).dropped(); }

  // Records every request (arrival, address, length, direction) from now on, at most
  // max_entries; read with request_log() (e.g. to export the run as an STL trace).
  void enable_request_log(std::size_t max_entries) { request_log_.enable(max_entries); }
  const RequestLog& request_log() const { return request_log_; }

  // Drops all stored data (everything reads as zero again) and revokes DMI pointers.
  void clear_storage() {
    if (!storage_) return;
    storage_->clear();
    target->invalidate_direct_mem_ptr(0, p_.size - 1);
  }

  void collect_stats(StatsGroup& g) const override {
    std::uint64_t rd = 0, wr = 0;
    Ticks end = first_arrival_;
    for (unsigned i = 0; i < p_.channels; ++i)
      end = std::max(end, bank_level_ ? controllers_[i].stats().last_data
                                      : channels_[i].bus().busy_until());
    double window = requests_ ? ticks_to_seconds(end - first_arrival_) : 0.0;
    for (unsigned i = 0; i < p_.channels; ++i) {
      StatsGroup& cg = g.child("channel" + std::to_string(i));
      if (bank_level_) {
        const DramChannelStats& s = controllers_[i].stats();
        cg.add("bytes_read", static_cast<double>(s.read_bytes), "B", "bytes read on this channel");
        cg.add("bytes_written", static_cast<double>(s.write_bytes), "B",
               "bytes written on this channel");
        cg.add("peak_bandwidth", p_.channel_bandwidth, "B/s", "channel_bandwidth");
        s.collect(cg, requests_ ? end - first_arrival_ : 0, p_.channel_bandwidth);
        rd += s.read_bytes;
        wr += s.write_bytes;
        continue;
      }
      const HbmChannel& c = channels_[i];
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
      add_bandwidth_level_counts(cg, c);
      rd += c.bytes_read();
      wr += c.bytes_written();
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
    if (bank_level_) add_bank_totals(g, window > 0 ? static_cast<double>(rd + wr) / window : 0.0);
  }

  // Payloads that arrived with streaming width 0, served as width = data length
  // (payload_access.h).
  std::uint64_t zero_streaming_width_payloads() const { return zero_width_; }

  void reset_stats() override {
    for (auto& c : channels_) c.reset_stats();
    for (auto& c : controllers_) c.reset_stats();
    latency_stats_.reset();
    reads_ = writes_ = errors_ = requests_ = 0;
    first_arrival_ = 0;
  }

 private:
  // The bank level's energy counts under the same names (docs/energy.md): no commands are
  // modelled at bandwidth fidelity, and a channel's share of a transfer is whole bursts.
  static void add_bandwidth_level_counts(StatsGroup& g, const HbmChannel& c) {
    for (const char* command : {"activates", "precharges", "refreshes"})
      g.add(command, 0.0, "commands", "none at bandwidth fidelity");
    g.add("read_bursts", static_cast<double>(c.read_bursts()), "bursts",
          "ceil(share / burst_bytes) per read transfer");
    g.add("write_bursts", static_cast<double>(c.write_bursts()), "bursts",
          "ceil(share / burst_bytes) per write transfer");
    g.add("read_bytes", static_cast<double>(c.bytes_read()), "B", "bytes read");
    g.add("write_bytes", static_cast<double>(c.bytes_written()), "B", "bytes written");
  }

  // Sums of the per-channel counters, and the memory's efficiency.
  void add_bank_totals(StatsGroup& g, double bandwidth) const {
    static const struct {
      const char* name;
      std::uint64_t DramChannelStats::*field;
      const char* unit;
    } sums[] = {{"activates", &DramChannelStats::activates, "commands"},
                {"precharges", &DramChannelStats::precharges, "commands"},
                {"refreshes", &DramChannelStats::refreshes, "commands"},
                {"read_bursts", &DramChannelStats::read_bursts, "bursts"},
                {"write_bursts", &DramChannelStats::write_bursts, "bursts"},
                {"row_hits", &DramChannelStats::row_hits, "requests"},
                {"row_misses", &DramChannelStats::row_misses, "requests"},
                {"row_conflicts", &DramChannelStats::row_conflicts, "requests"},
                {"read_to_write", &DramChannelStats::read_to_write, "turnarounds"},
                {"write_to_read", &DramChannelStats::write_to_read, "turnarounds"},
                {"backpressured", &DramChannelStats::backpressured, "requests"}};
    for (const auto& s : sums) {
      std::uint64_t total = 0;
      for (const auto& c : controllers_) total += c.stats().*s.field;
      g.add(s.name, static_cast<double>(total), s.unit, "sum over the channels");
    }
    g.add("efficiency", bandwidth / (p_.channel_bandwidth * p_.channels), "1",
          "achieved_bandwidth / peak_bandwidth");
  }

  void build_controllers() {
    const DramController::Config c = controller_config(p_);
    const DramTiming& t = c.timing;
    std::shared_ptr<const DramScheduler> scheduler;
    if (p_.scheduler == "fcfs")
      scheduler = std::make_shared<FcfsScheduler>();
    else
      scheduler = std::make_shared<FrFcfsScheduler>(p_.frfcfs_cap);
    controllers_.reserve(p_.channels);
    std::shared_ptr<DramCommandBus> bus;
    for (unsigned i = 0; i < p_.channels; ++i) {
      controllers_.emplace_back(c, scheduler);
      controllers_.back().set_completion_sink(&done_);
      // Channels kn .. kn + n - 1 (n = pseudo_channels) are the pseudo-channels of one JEDEC
      // channel (the pseudo-channel is the low digit of the index, dram_address_mapper.h).
      if (p_.pseudo_channels < 2 || t.ck == 0) continue;
      bus_group_ = p_.pseudo_channels;
      const unsigned sharer = i % p_.pseudo_channels;
      if (sharer == 0) bus = std::make_shared<DramCommandBus>(t, p_.pseudo_channels);
      controllers_.back().share_command_bus(bus, sharer);
    }
  }

  ActivityLog& activity(unsigned i) {
    return bank_level_ ? controllers_[i].activity() : channels_[i].bus().activity();
  }
  const ActivityLog& activity(unsigned i) const {
    return bank_level_ ? controllers_[i].activity() : channels_[i].bus().activity();
  }

  void b_transport(tlm::tlm_generic_payload& t, sc_core::sc_time& delay) {
    if (BurstTrain* train = t.get_extension<BurstTrain>()) {
      b_transport_train(t, *train, delay);
      return;
    }
    auto [admitted, addr, len, write] = memory_access(t, p_.size, &zero_width_, errors_);
    if (!admitted) return;
    if (!fronts_.empty() && delay != sc_core::SC_ZERO_TIME) {
      // Queued: the request reaches the controller at its time, not before.
      sc_core::wait(delay);
      delay = sc_core::SC_ZERO_TIME;
    }
    Ticks now = now_ticks();
    Ticks arrival = add_ticks(now, to_ticks(delay));
    count_request(arrival, addr, len, write);
    Ticks end = !fronts_.empty() ? serve_queued(arrival, addr, len, write)
                : bank_level_    ? serve_banks(arrival, addr, len, write)
                                 : serve_channels(arrival, addr, len, write);
    if (!fronts_.empty()) now = now_ticks();
    Ticks ready = std::max(add_ticks(end, latency_), now);
    latency_stats_.record(ready - arrival);
    move_data(t);
    delay = from_ticks(ready - now);
  }

  void count_request(Ticks arrival, std::uint64_t addr, std::uint64_t len, bool write) {
    if (requests_++ == 0) first_arrival_ = arrival;
    if (request_log_.enabled()) request_log_.record(arrival, addr, len, write);
    ++(write ? writes_ : reads_);
  }

  // The access itself, once the request is timed: the data copied, the response set.
  void move_data(tlm::tlm_generic_payload& t) {
    const bool write = t.get_command() == tlm::TLM_WRITE_COMMAND;
    const std::uint64_t len = t.get_data_length();
    if (storage_)
      storage_->access(write, t.get_address(), t.get_data_ptr(), len, ByteEnables::of(t));
    else if (!write)
      zero_bytes(t.get_data_ptr(), len, 0, ByteEnables::of(t));
    t.set_dmi_allowed(static_cast<bool>(storage_));
    t.set_response_status(tlm::TLM_OK_RESPONSE);
  }

  tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload& t, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay) {
    return at_.nb_transport_fw(0, t, phase, delay);
  }

  // AtTarget's Defer. Outside queued mode b_transport never waits: it answers at once. Queued,
  // a request the memory serves enters the controller at its arrival time (arrive_at) and is
  // answered when its last run has issued; a malformed one is answered at once.
  bool accept_at(tlm::tlm_generic_payload& t, sc_core::sc_time& delay) {
    if (fronts_.empty() || t.get_extension<BurstTrain>() != nullptr) {
      b_transport(t, delay);
      return true;
    }
    if (!admit_memory_access(t, p_.size, &zero_width_)) {
      if (t.is_response_error()) ++errors_;
      return true;
    }
    arrivals_.notify(t, arrival_phase_, delay);
    return false;
  }

  // Queued mode, AT path: the request has arrived; its runs enter their bank queues (a run that
  // finds its queue full waits in the channel's front, as a thread's would, without blocking).
  void arrive_at(tlm::tlm_generic_payload& t, const tlm::tlm_phase&) {
    const Ticks arrival = now_ticks();
    const std::uint64_t addr = t.get_address();
    const std::uint64_t len = t.get_data_length();
    const bool write = t.get_command() == tlm::TLM_WRITE_COMMAND;
    count_request(arrival, addr, len, write);
    move_data(t);
    const std::uint32_t tag = start_in_flight(arrival);
    InFlight& f = *in_flight_[tag];
    f.payload = &t;
    enqueue_runs(f, tag, arrival, addr, len, write);
    if (--f.runs == 0) answer_at(tag);
  }

  // Queued mode, AT path: every run of request `tag` has issued; its response is due at the
  // last run's data end + latency.
  void answer_at(std::uint32_t tag) {
    InFlight& f = *in_flight_[tag];
    const Ticks now = now_ticks();
    const Ticks ready = std::max(add_ticks(f.end, latency_), now);
    latency_stats_.record(ready - f.arrival);
    tlm::tlm_generic_payload& t = *f.payload;
    f.payload = nullptr;
    free_in_flight_.push_back(tag);
    at_.respond(t, from_ticks(ready - now));
  }

  // Burst trains (burst_train.h) are served at bandwidth fidelity without storage: no data is
  // kept, reads are zeros, and each request is served alone at once, so serving the bursts in
  // order here is what their own b_transport calls would do, statistics included.
  bool serves_trains() const { return !bank_level_ && !storage_ && fronts_.empty() && !p_.split_requests; }

  void b_transport_train(tlm::tlm_generic_payload& t, BurstTrain& train, sc_core::sc_time& delay) {
    if (!serves_trains() || !admit_memory_access(t, p_.size)) {
      SC_REPORT_ERROR("tlm_models/hbm",
                      (std::string(name()) + ": burst train on a path that was not probed").c_str());
      t.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
      return;
    }
    const bool write = t.get_command() == tlm::TLM_WRITE_COMMAND;
    const std::uint64_t base = t.get_address();
    const Ticks now = now_ticks();
    // Each burst's share per channel (a row per burst), then each channel's shares in train
    // order: the channels are independent servers, so booking channel by channel gives each
    // the same requests in the same order as burst by burst.
    const std::size_t n = train.bursts.size();
    train_shares_.assign(n * p_.channels, 0);
    train_arrivals_.resize(n);
    train_ends_.resize(n);
    for (std::size_t k = 0; k < n; ++k) {
      const BurstTrain::Burst& b = train.bursts[k];
      const std::uint64_t addr = base + b.offset;
      if (requests_++ == 0) first_arrival_ = b.arrival;
      if (request_log_.enabled()) request_log_.record(b.arrival, addr, b.bytes, write);
      ++(write ? writes_ : reads_);
      add_interleaved_bytes(addr, b.bytes, p_.interleave, p_.channels,
                            train_shares_.data() + k * p_.channels);
      train_arrivals_[k] = train_ends_[k] = b.arrival;
    }
    for (unsigned c = 0; c < p_.channels; ++c)
      channels_[c].serve_train(train_arrivals_.data(), train_shares_.data() + c, p_.channels, n,
                               write, now, train_ends_.data());
    for (std::size_t k = 0; k < n; ++k) {
      BurstTrain::Burst& b = train.bursts[k];
      const Ticks ready = std::max(add_ticks(train_ends_[k], latency_), now);
      latency_stats_.record(ready - b.arrival);
      b.done = ready;
    }
    if (!write) zero_bytes(t.get_data_ptr(), t.get_data_length(), 0, ByteEnables::of(t));
    t.set_dmi_allowed(false);
    t.set_response_status(tlm::TLM_OK_RESPONSE);
    train.served = true;
    delay = from_ticks(train.bursts.front().done - now);
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

  // The transaction cut into runs that stay in one channel, bank and row (address order),
  // each queued at its channel's controller; the response waits for the last run's data.
  Ticks serve_banks(Ticks arrival, std::uint64_t addr, std::uint64_t len, bool write) {
    Ticks end = arrival;
    std::uint64_t stop = addr + len;
    done_.clear();
    touched_.clear();
    forget_history();
    while (addr < stop) {
      const DramAddress a = mapper_.map(addr);
      const std::uint64_t n = std::min(stop - addr, mapper_.run_length(addr));
      const std::uint64_t bursts =
          (a.column + n - 1) / p_.burst_bytes - a.column / p_.burst_bytes + 1;
      const auto tag = static_cast<std::uint32_t>(done_.size());
      done_.push_back(arrival);
      if (std::find(touched_.begin(), touched_.end(), a.channel) == touched_.end())
        touched_.push_back(a.channel);
      controllers_[a.channel].submit(arrival, a.bank, a.row, static_cast<std::uint32_t>(bursts),
                                     static_cast<std::uint32_t>(n), write, tag);
      addr += n;
    }
    for (unsigned c : touched_) controllers_[c].drain();
    for (Ticks t : done_) end = std::max(end, t);
    return end;
  }

  // Every later request arrives at or after the current time (the LT rule: annotated delays are
  // not negative), so command history older than the checkers' horizon can go.
  void forget_history() {
    const Ticks now = now_ticks();
    if (now < forgotten_until_ + forget_period_) return;
    forgotten_until_ = now;
    for (DramController& c : controllers_) c.forget_before(now);
  }

  // Queued mode: a request in flight through the controllers (several runs, maybe several
  // channels); `runs` counts the runs not yet completed plus one while runs are still queued.
  struct InFlight {
    unsigned runs = 0;
    Ticks arrival = 0;
    Ticks end = 0;
    tlm::tlm_generic_payload* payload = nullptr;  // the AT path's request; null for b_transport
    sc_core::sc_event done;      // at the response time, end + latency
    sc_core::sc_event admitted;  // the run that waited for a slot has entered its bank queue
  };

  // A run that found its bank queue full (or, with in-order admission, an earlier run still
  // waiting), in arrival order: a freed slot goes to the first one waiting for that bank
  // (in-order: to the first one waiting, and those behind it follow while their queues have
  // room), so waiting requests enter in the order they came.
  struct Waiting {
    unsigned bank;
    std::uint64_t row;
    Ticks arrival;
    std::uint32_t bursts, bytes, tag;
    bool write;
  };

  // Queued mode, one per channel: wakes the channel's scheduler process on arrivals and hears
  // of completions.
  struct ChannelFront : DramCompletionListener {
    HbmMemory* owner = nullptr;
    DramController* controller = nullptr;
    sc_core::sc_event arrival;  // a run was queued (notified a delta later: all of now's arrive)
    // in_order: one line in arrival order across the banks (a run whose bank queue is full
    // holds up the later ones, as DRAMSys' one request port); per_bank: one line per bank (AT
    // requests are accepted at once, so under overload the lines grow with the requests
    // outstanding: a freed slot finds its bank's next run without a search).
    std::deque<Waiting> waiting;
    std::vector<std::deque<Waiting>> by_bank;
    bool in_order = true;
    void completed(std::uint32_t tag, unsigned bank, Ticks end) override {
      if (in_order) {
        while (!waiting.empty() && controller->has_room(waiting.front().bank)) {
          admit(waiting.front());
          waiting.pop_front();
        }
      } else if (!by_bank[bank].empty()) {
        admit(by_bank[bank].front());
        by_bank[bank].pop_front();
      }
      owner->run_completed(tag, end);
    }
    void admit(const Waiting& w) {
      controller->enqueue(w.arrival, now_ticks(), w.bank, w.row, w.bursts, w.bytes, w.write,
                          w.tag);
      owner->in_flight_[w.tag]->admitted.notify();
    }
    // Whether a run to `bank` may enter now rather than wait behind others.
    bool may_enter(unsigned bank) const {
      return controller->has_room(bank) && !(in_order && !waiting.empty());
    }
    // Puts a run that may not enter in its line.
    void wait_in_line(const Waiting& w) { (in_order ? waiting : by_bank[w.bank]).push_back(w); }
  };

  void spawn_schedulers() {
    for (unsigned i = 0; i < p_.channels; ++i) {
      fronts_.push_back(std::make_unique<ChannelFront>());
      ChannelFront& f = *fronts_.back();
      f.owner = this;
      f.controller = &controllers_[i];
      f.in_order = p_.admission == "in_order";
      f.by_bank.resize(p_.banks);
      controllers_[i].set_completion_listener(&f);
      controllers_[i].set_completion_sink(nullptr);
    }
    // One process per group of channels sharing command buses (a JEDEC channel's
    // pseudo-channels; otherwise per channel), woken by any of their arrivals: at equal times
    // the lower pseudo-channel takes the bus first, whatever order the kernel runs processes in.
    for (unsigned first = 0; first < p_.channels; first += bus_group_) {
      arrivals_of_.push_back(std::make_unique<sc_core::sc_event_or_list>());
      sc_core::sc_spawn_options o;
      o.spawn_method();
      o.dont_initialize();
      for (unsigned i = first; i < first + bus_group_; ++i) {
        o.set_sensitivity(&fronts_[i]->arrival);
        *arrivals_of_.back() |= fronts_[i]->arrival;
      }
      sc_core::sc_spawn([this, first] { schedule(first); },
                        ("scheduler" + std::to_string(first)).c_str(), &o);
    }
  }

  // The scheduler process of the channels from `first` (a group sharing command buses):
  // issues what is due now, channel by channel, then sleeps until the next command can issue
  // or a request arrives.
  void schedule(unsigned first) {
    const Ticks now = now_ticks();
    Ticks next = DramController::never_ready();
    for (unsigned i = first; i < first + bus_group_; ++i)
      next = std::min(next, controllers_[i].run_until(now));
    const sc_core::sc_event_or_list& arrival = *arrivals_of_[first / bus_group_];
    if (next == DramController::never_ready())
      sc_core::next_trigger(arrival);
    else
      sc_core::next_trigger(from_ticks(next - now), arrival);
  }

  // A run's last command has issued (so its data end is known): when the request's last run
  // has, its caller resumes at the response time.
  void run_completed(std::uint32_t tag, Ticks end) {
    InFlight& f = *in_flight_[tag];
    f.end = std::max(f.end, end);
    if (--f.runs > 0) return;
    if (f.payload != nullptr)
      answer_at(tag);
    else
      f.done.notify(from_ticks(add_ticks(f.end, latency_) - now_ticks()));
  }

  // Queued mode: the runs of serve_banks, each entering its bank queue (after the requests
  // that waited before it when the queue is full: the backpressure the caller feels); returns
  // at the response time, when the controller has issued every run and the data has moved.
  Ticks serve_queued(Ticks arrival, std::uint64_t addr, std::uint64_t len, bool write) {
    const std::uint32_t tag = start_in_flight(arrival);
    InFlight& f = *in_flight_[tag];
    enqueue_runs(f, tag, arrival, addr, len, write);
    if (--f.runs > 0) {
      sc_core::wait(f.done);
    } else {
      const Ticks ready = add_ticks(f.end, latency_);
      if (ready > now_ticks()) sc_core::wait(from_ticks(ready - now_ticks()));
    }
    free_in_flight_.push_back(tag);
    return f.end;
  }

  // A free in-flight record for a request arriving at `arrival`, holding one run count until
  // its runs are all queued.
  std::uint32_t start_in_flight(Ticks arrival) {
    std::uint32_t tag;
    if (free_in_flight_.empty()) {
      tag = static_cast<std::uint32_t>(in_flight_.size());
      in_flight_.push_back(std::make_unique<InFlight>());
    } else {
      tag = free_in_flight_.back();
      free_in_flight_.pop_back();
    }
    forget_history();
    InFlight& f = *in_flight_[tag];
    f.runs = 1;
    f.arrival = arrival;
    f.end = arrival;
    f.payload = nullptr;
    return tag;
  }

  // The runs of serve_banks, each entering its bank queue, or when the queue is full waiting
  // in the channel's front behind the runs that waited before it (the backpressure a caller
  // feels): a b_transport caller waits until its run is admitted, an AT request does not.
  void enqueue_runs(InFlight& f, std::uint32_t tag, Ticks arrival, std::uint64_t addr,
                    std::uint64_t len, bool write) {
    for (std::uint64_t stop = addr + len; addr < stop;) {
      const DramAddress a = mapper_.map(addr);
      const std::uint64_t n = std::min(stop - addr, mapper_.run_length(addr));
      const auto bursts = static_cast<std::uint32_t>(
          (a.column + n - 1) / p_.burst_bytes - a.column / p_.burst_bytes + 1);
      DramController& c = controllers_[a.channel];
      ChannelFront& front = *fronts_[a.channel];
      ++f.runs;
      if (front.may_enter(a.bank)) {
        c.enqueue(arrival, now_ticks(), a.bank, a.row, bursts, static_cast<std::uint32_t>(n),
                  write, tag);
        front.arrival.notify(sc_core::SC_ZERO_TIME);
      } else {
        front.wait_in_line(
            Waiting{a.bank, a.row, arrival, bursts, static_cast<std::uint32_t>(n), tag, write});
        if (f.payload == nullptr) sc_core::wait(f.admitted);
      }
      addr += n;
    }
  }

  unsigned transport_dbg(tlm::tlm_generic_payload& t) {
    std::uint64_t addr = t.get_address();
    if (BurstTrain* probe = t.get_extension<BurstTrain>()) {
      if (!probe->reached(addr)) return 0;
      probe->path.push_back(this);
      probe->narrow(0, p_.size - 1);
      if (serves_trains() && probe->span > 0 && addr < p_.size && probe->span <= p_.size - addr)
        probe->capable = true;
      else
        probe->blocked = true;
      return 0;
    }
    if (addr >= p_.size || !admit_debug(t)) return 0;
    std::uint64_t n = std::min<std::uint64_t>(t.get_data_length(), p_.size - addr);
    bool write = t.get_command() == tlm::TLM_WRITE_COMMAND;
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
  DramAddressMapper mapper_;
  std::vector<DramController> controllers_;  // bank fidelity
  std::vector<Ticks> done_;                  // completion of each run of the transaction
  std::vector<unsigned> touched_;            // channels the transaction queued runs at
  std::vector<std::uint64_t> scratch_;  // per-channel bytes of the transaction being split
  std::vector<std::uint64_t> train_shares_;  // a burst train's shares, burst-major
  std::vector<Ticks> train_arrivals_, train_ends_;
  std::vector<std::unique_ptr<ChannelFront>> fronts_;  // queued mode, per channel
  unsigned bus_group_ = 1;  // channels sharing command buses (pseudo_channels when they do)
  // Queued mode, per group of bus_group_ channels: any of their arrivals.
  std::vector<std::unique_ptr<sc_core::sc_event_or_list>> arrivals_of_;
  std::vector<std::unique_ptr<InFlight>> in_flight_;   // queued mode: indexed by tag
  std::vector<std::uint32_t> free_in_flight_;
  std::unique_ptr<SparseStorage> storage_;
  LatencyStats latency_stats_;
  RequestLog request_log_;
  std::uint64_t reads_ = 0, writes_ = 0, errors_ = 0, requests_ = 0;
  std::uint64_t zero_width_ = 0;  // not a statistic: a property of the initiators, kept across resets
  Ticks first_arrival_ = 0;
  Ticks forgotten_until_ = 0;
  static constexpr Ticks forget_period_ = 1000000;  // 1 us: prune at most this often
  AtTarget at_;  // the nb_transport_fw path (at_target.h)
  tlm_utils::peq_with_cb_and_phase<HbmMemory> arrivals_;  // queued mode, AT: requests to arrive
  const tlm::tlm_phase arrival_phase_ = tlm::BEGIN_REQ;
};

}  // namespace tlm_models

#endif  // TLM_MODELS_HBM_H
