// On-chip scratchpad SRAM: a pool of ports that serve requests at port_width bytes per cycle,
// word-interleaved banks with conflict accounting, optional storage with DMI. Several initiators
// bind to the one multi-passthrough target socket. Formulas: docs/models/sram.md.
#ifndef TLM_MODELS_SRAM_H
#define TLM_MODELS_SRAM_H

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_target_socket.h>

#include "tlm_models/at_target.h"
#include "tlm_models/bandwidth_server.h"
#include "tlm_models/fixed_divisor.h"
#include "tlm_models/latency_stats.h"
#include "tlm_models/params_generated.h"
#include "tlm_models/params_check.h"
#include "tlm_models/payload_access.h"
#include "tlm_models/stats.h"
#include "tlm_models/time_ticks.h"
#include "tlm_models/timed_path.h"
#include "tlm_models/timing_only.h"

namespace tlm_models {

class Sram : public sc_core::sc_module, public StatsProvider, public TimedTarget {
 public:
  // The fields and their defaults: SramParamFields (params_generated.h, generated from
  // the component registry).
  struct Params : SramParamFields {
    std::string check() const { return check_fields(); }
  };

  TimedTargetSocket<Sram> target;

  Sram(sc_core::sc_module_name name, const Params& p)
      : sc_core::sc_module(name), target("target"), p_(p),
        at_(this, &Sram::b_transport, target) {
    params_valid(p, this->name(), "tlm_models/sram");
    period_ = period_ticks(p.clock);
    latency_ = to_ticks(p.latency);
    bank_word_ = std::max<std::uint64_t>(1, ceil_div(p.port_width, p.banks));
    word_div_ = FixedDivisor(bank_word_);
    banks_div_ = FixedDivisor(p.banks);
    width_div_ = FixedDivisor(p.port_width);
    ports_.resize(p.ports);
    port_bytes_.assign(p.ports, 0);
    banks_.resize(p.banks);
    own_.reserve(p.banks);
    extra_diff_.assign(p.banks + 1, 0);
    if (p.storage) data_.assign(p.capacity, 0);
    target.register_b_transport(this, &Sram::b_transport);
    target.register_nb_transport_fw(this, &Sram::nb_transport_fw);
    target.register_transport_dbg(this, &Sram::transport_dbg);
    target.register_get_direct_mem_ptr(this, &Sram::get_direct_mem_ptr);
  }

  const Params& params() const { return p_; }
  // Bytes of one bank word: ceil(port_width / banks), so a full-width access touches each bank once.
  std::uint64_t bank_word() const { return bank_word_; }
  unsigned bank_of(std::uint64_t addr) const { return static_cast<unsigned>((addr / bank_word_) % p_.banks); }
  const BandwidthServer& port(unsigned i) const { return ports_[i]; }
  std::uint64_t bank_conflicts(unsigned b) const { return bank_conflict_count(b); }

  void collect_stats(StatsGroup& g) const override {
    std::uint64_t conflicts = 0;
    for (unsigned i = 0; i < ports_.size(); ++i) {
      ports_[i].collect(g.child("port" + std::to_string(i)), port_bytes_[i],
                        {"requests served", "bytes moved", "cycles transferring x period",
                         "summed queueing for this port"});
    }
    for (unsigned b = 0; b < banks_.size(); ++b) {
      StatsGroup& bg = g.child("bank" + std::to_string(b));
      bg.add("bytes", static_cast<double>(bank_bytes(b)), "B", "bytes in this bank's words");
      bg.add("busy_time", ticks_to_ns(bank_busy(b)), "ns", "time some port was accessing the bank");
      bg.add("conflicts", static_cast<double>(bank_conflict_count(b)), "requests",
             "requests that found the bank in use by another port");
      conflicts += bank_conflict_count(b);
    }
    g.add("reads", static_cast<double>(reads_), "requests", "read transactions served");
    g.add("writes", static_cast<double>(writes_), "requests", "write transactions served");
    g.add("bytes_read", static_cast<double>(bytes_read_), "B", "bytes read");
    g.add("bytes_written", static_cast<double>(bytes_written_), "B", "bytes written");
    // Energy counts accesses of the port's width: a request of len bytes is ceil(len /
    // port_width) of them, the cycles it holds its port (docs/energy.md).
    g.add("read_accesses", static_cast<double>(read_accesses_), "accesses",
          "port-width words read: sum of ceil(len / port_width)");
    g.add("write_accesses", static_cast<double>(write_accesses_), "accesses",
          "port-width words written: sum of ceil(len / port_width)");
    g.add("bank_conflicts", static_cast<double>(conflicts), "requests", "sum of the banks' conflicts");
    g.add("errors", static_cast<double>(errors_), "requests", "transactions answered with an error");
    latency_stats_.collect(g);
  }

  // Payloads that arrived with streaming width 0, served as width = data length
  // (payload_access.h).
  std::uint64_t zero_streaming_width_payloads() const { return zero_width_; }

  void reset_stats() override {
    for (auto& p : ports_) p.reset_stats();
    std::fill(port_bytes_.begin(), port_bytes_.end(), 0);
    for (auto& b : banks_) b.bytes = b.busy = b.conflicts = 0;
    shared_bytes_ = shared_busy_ = shared_conflicts_ = 0;
    std::fill(extra_diff_.begin(), extra_diff_.end(), 0);
    reads_ = writes_ = bytes_read_ = bytes_written_ = errors_ = 0;
    read_accesses_ = write_accesses_ = 0;
    latency_stats_.reset();
  }

 private:
  struct Bank {
    Ticks busy_until = 0;
    Ticks busy = 0;
    std::uint64_t bytes = 0;
    std::uint64_t conflicts = 0;
    bool listed = false;  // in own_
  };

  tlm::tlm_sync_enum nb_transport_fw(int id, tlm::tlm_generic_payload& t, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay) {
    return at_.nb_transport_fw(id, t, phase, delay);
  }

  void b_transport(int, tlm::tlm_generic_payload& t, sc_core::sc_time& delay) {
    auto [admitted, addr, len, write] = memory_access(t, p_.capacity, &zero_width_, errors_);
    if (!admitted) return;
    Ticks now = now_ticks();
    Ticks ready = serve(write, addr, len, now + to_ticks(delay), now);
    if (is_timing_only(t)) {
      // Timed above; the initiator does not want the bytes (timing_only.h).
    } else if (!data_.empty()) {
      copy_bytes(write, data_.data() + addr, t.get_data_ptr(), len, 0, ByteEnables::of(t));
    } else if (!write) {
      zero_bytes(t.get_data_ptr(), len, 0, ByteEnables::of(t));
    }
    t.set_dmi_allowed(!data_.empty());
    t.set_response_status(tlm::TLM_OK_RESPONSE);
    delay = from_ticks(ready - now);
  }

  // A timing-only access without a payload (timed_path.h): what b_transport books for it.
  Ticks timed_access(int, bool write, std::uint64_t address, std::uint64_t bytes, Ticks arrival,
                     Ticks now) override {
    return serve(write, address, bytes, arrival, now);
  }

  // The timing and statistics of an admitted request arriving at `arrival`; returns when its
  // response is ready.
  Ticks serve(bool write, std::uint64_t addr, std::uint64_t len, Ticks arrival, Ticks now) {
    const std::uint64_t words = width_div_.ceil(len);
    Ticks duration = words * period_;
    // The port that can serve it first (lowest index on a tie) takes the request.
    // No port starts it before its arrival, so a port that can start it then is the choice; the
    // ports not searched are pruned by a later request (pruning drops only bookings that can no
    // longer matter, so when it happens changes nothing).
    unsigned port = 0;
    ports_[0].prune(now);
    BandwidthServer::Slot best = ports_[0].find(arrival, duration);
    for (unsigned i = 1; i < ports_.size() && best.start != arrival; ++i) {
      ports_[i].prune(now);
      const BandwidthServer::Slot s = ports_[i].find(arrival, duration);
      if (s.start < best.start) {
        best = s;
        port = i;
      }
    }
    Ticks start = ports_[port].take(best, arrival, duration);
    Ticks end = start + duration;
    account_banks(addr, len, start, end);
    port_bytes_[port] += len;
    Ticks ready = add_ticks(end, latency_);
    latency_stats_.record(ready - arrival);
    if (write) {
      ++writes_;
      bytes_written_ += len;
      write_accesses_ += words;
    } else {
      ++reads_;
      bytes_read_ += len;
      read_accesses_ += words;
    }
    return ready;
  }

  // Banks are accounted, not timed: a request holds every bank it touches for its port interval
  // [start, end); finding one still held by an earlier request counts a conflict there.
  // The bytes per bank are those of add_interleaved_bytes (interleave.h): the partial head and
  // tail words, whole rounds over all banks, and `extra` words in the banks after the head's.
  //
  // Most requests touch every bank, and most banks share one busy_until (common_until_). So the
  // banks whose busy_until differs are listed (own_), and a request that touches every bank is
  // accounted in shared counters that every bank's figures include, with a correction for each
  // listed bank only, and its round-robin words as a range update of extra_diff_: O(listed)
  // instead of a pass over the banks. A request that touches a few banks lists those.
  // Inlined into serve() (g++ -O2 would call it): the call and its register saves cost about a
  // tenth of a request's instructions (callgrind, docs/replayer.md).
  __attribute__((always_inline)) void account_banks(std::uint64_t addr, std::uint64_t len, Ticks start,
                                                    Ticks end) {
    if (len == 0) return;
    const unsigned banks = p_.banks;
    const std::uint64_t first = word_div_.div(addr);
    const std::uint64_t last = word_div_.div(addr + len - 1);
    const auto first_bank = static_cast<unsigned>(banks_div_.mod(first));
    if (first == last) {
      if (banks == 1) {
        hold_all(start, end);
        shared_bytes_ += len;
        return;
      }
      hold_bank(first_bank, len, start, end);
      return;
    }
    const std::uint64_t head = (first + 1) * bank_word_ - addr;
    const std::uint64_t tail = addr + len - last * bank_word_;
    const auto last_bank = static_cast<unsigned>(banks_div_.mod(last));
    const std::uint64_t whole = last - first - 1;
    const unsigned after_head = first_bank + 1 == banks ? 0 : first_bank + 1;
    if (whole + 2 >= banks) {  // head, whole words and tail cover every bank
      hold_all(start, end);
      shared_bytes_ += banks_div_.div(whole) * bank_word_;
      add_extra(after_head, static_cast<unsigned>(banks_div_.mod(whole)));
      banks_[first_bank].bytes += head;
      banks_[last_bank].bytes += tail;
      return;
    }
    // Fewer than `banks` words: the head's bank, `whole` whole words, the tail's bank.
    hold_bank(first_bank, head, start, end);
    unsigned b = after_head;
    for (std::uint64_t i = 0; i < whole; ++i) {
      hold_bank(b, bank_word_, start, end);
      if (++b == banks) b = 0;
    }
    hold_bank(last_bank, tail, start, end);
  }

  // A hold of every bank: the shared counters take what a bank at common_until_ gets; each
  // listed bank's own counters take the difference to what it gets (unsigned arithmetic wraps,
  // so a negative difference is exact in the sums). Listed banks that end at common_until_
  // leave the list.
  // Inlined for the same reason as account_banks().
  __attribute__((always_inline)) void hold_all(Ticks start, Ticks end) {
    const std::uint64_t shared_conflict = common_until_ > start ? 1 : 0;
    const Ticks shared_busy = busy_added(common_until_, start, end);
    shared_conflicts_ += shared_conflict;
    shared_busy_ += shared_busy;
    common_until_ = std::max(common_until_, end);
    std::size_t kept = 0;
    for (unsigned b : own_) {
      Bank& bank = banks_[b];
      bank.conflicts += (bank.busy_until > start ? 1 : 0) - shared_conflict;
      bank.busy += busy_added(bank.busy_until, start, end) - shared_busy;
      bank.busy_until = std::max(bank.busy_until, end);
      if (bank.busy_until == common_until_)
        bank.listed = false;
      else
        own_[kept++] = b;
    }
    own_.resize(kept);
  }

  // Busy time a hold of [start, end) adds to a bank busy until `until`.
  static Ticks busy_added(Ticks until, Ticks start, Ticks end) {
    const Ticks from = std::max(start, until);
    return end > from ? end - from : 0;
  }

  // One more bank word in each of the `count` banks from `from` on (wrapping): a range update
  // of the difference array whose prefix sums are the banks' extra bytes.
  void add_extra(unsigned from, unsigned count) {
    if (count == 0) return;
    const unsigned banks = p_.banks;
    extra_diff_[from] += bank_word_;
    if (from + count <= banks) {
      extra_diff_[from + count] -= bank_word_;
    } else {
      extra_diff_[banks] -= bank_word_;
      extra_diff_[0] += bank_word_;
      extra_diff_[from + count - banks] -= bank_word_;
    }
  }

  // A hold of bank `b` alone; the bank is listed first, with busy_until = common_until_.
  void hold_bank(unsigned b, std::uint64_t bytes, Ticks start, Ticks end) {
    Bank& bank = banks_[b];
    if (!bank.listed) {
      bank.listed = true;
      own_.push_back(b);
      bank.busy_until = common_until_;
    }
    if (bank.busy_until > start) ++bank.conflicts;
    bank.busy += busy_added(bank.busy_until, start, end);
    bank.busy_until = std::max(bank.busy_until, end);
    bank.bytes += bytes;
  }

  // A bank's figures: its own plus the shared ones.
  std::uint64_t bank_bytes(unsigned b) const {
    std::uint64_t extra = 0;
    for (unsigned i = 0; i <= b; ++i) extra += extra_diff_[i];
    return banks_[b].bytes + shared_bytes_ + extra;
  }
  Ticks bank_busy(unsigned b) const { return banks_[b].busy + shared_busy_; }
  std::uint64_t bank_conflict_count(unsigned b) const { return banks_[b].conflicts + shared_conflicts_; }

  unsigned transport_dbg(int, tlm::tlm_generic_payload& t) {
    std::uint64_t addr = t.get_address();
    if (addr >= p_.capacity || !admit_debug(t)) return 0;
    std::uint64_t n = std::min<std::uint64_t>(t.get_data_length(), p_.capacity - addr);
    bool write = t.get_command() == tlm::TLM_WRITE_COMMAND;
    if (!data_.empty())
      copy_bytes(write, data_.data() + addr, t.get_data_ptr(), n, 0, ByteEnables{});
    else if (!write)
      zero_bytes(t.get_data_ptr(), n, 0, ByteEnables{});
    t.set_response_status(tlm::TLM_OK_RESPONSE);
    return static_cast<unsigned>(n);
  }

  // The storage never moves, so a granted pointer stays valid for the SRAM's lifetime.
  bool get_direct_mem_ptr(int id, tlm::tlm_generic_payload& t, tlm::tlm_dmi& dmi) {
    if (TimedPathProbe* probe = direct_probe(target, id, t)) {  // timed_path.h: all of the SRAM
      probe->target = this;
      probe->input = id;
      probe->first = 0;
      probe->last = p_.capacity - 1;
    }
    dmi.set_read_latency(p_.latency);
    dmi.set_write_latency(p_.latency);
    if (t.get_address() >= p_.capacity) {
      dmi.allow_none();
      dmi.set_start_address(p_.capacity);
      dmi.set_end_address(~sc_dt::uint64{0});
      return false;
    }
    dmi.set_start_address(0);
    dmi.set_end_address(p_.capacity - 1);
    if (data_.empty()) {
      dmi.allow_none();
      return false;
    }
    dmi.set_dmi_ptr(data_.data());
    dmi.allow_read_write();
    return true;
  }

  Params p_;
  AtTarget at_;  // the nb_transport_fw path (at_target.h)
  Ticks period_ = 0;
  Ticks latency_ = 0;
  std::uint64_t bank_word_ = 1;
  FixedDivisor word_div_, banks_div_, width_div_;  // bank_word_, banks, port_width
  std::vector<BandwidthServer> ports_;
  std::vector<std::uint64_t> port_bytes_;
  std::vector<Bank> banks_;  // busy_until is valid for listed banks only
  std::vector<unsigned> own_;  // the listed banks: busy_until differs from common_until_
  Ticks common_until_ = 0;     // busy_until of every bank not listed
  std::uint64_t shared_bytes_ = 0;  // in every bank's figures
  Ticks shared_busy_ = 0;
  std::uint64_t shared_conflicts_ = 0;
  std::vector<std::uint64_t> extra_diff_;  // banks + 1 entries; prefix sums: extra bytes per bank
  std::vector<unsigned char> data_;
  LatencyStats latency_stats_;
  std::uint64_t reads_ = 0, writes_ = 0, bytes_read_ = 0, bytes_written_ = 0, errors_ = 0;
  std::uint64_t zero_width_ = 0;  // not a statistic: a property of the initiators, kept across resets
  std::uint64_t read_accesses_ = 0, write_accesses_ = 0;
};

}  // namespace tlm_models

#endif  // TLM_MODELS_SRAM_H
