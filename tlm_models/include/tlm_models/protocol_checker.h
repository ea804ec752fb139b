// A pass-through module that sits on one initiator -> target link and reports TLM-2.0
// base-protocol violations it can observe, without changing timing or data: everything is
// forwarded unchanged in both directions. Each violation is counted and reported with
// SC_REPORT_ERROR (message type kProtocolCheckerMsg), so the default SystemC action stops the
// simulation at the first one; a test or a long regression can lower the action to SC_DISPLAY
// or SC_LOG and read violations() at the end. Checks are listed in docs/integration.md.
#ifndef TLM_MODELS_PROTOCOL_CHECKER_H
#define TLM_MODELS_PROTOCOL_CHECKER_H

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <string>
#include <unordered_map>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "tlm_models/burst_train.h"
#include "tlm_models/stats.h"

namespace tlm_models {

constexpr const char* kProtocolCheckerMsg = "tlm_models/protocol_checker";

class ProtocolChecker : public sc_core::sc_module, public StatsProvider {
 public:
  tlm_utils::simple_target_socket<ProtocolChecker> in;
  tlm_utils::simple_initiator_socket<ProtocolChecker> out;

  explicit ProtocolChecker(sc_core::sc_module_name name)
      : sc_core::sc_module(name), in("in"), out("out") {
    in.register_b_transport(this, &ProtocolChecker::b_transport);
    in.register_nb_transport_fw(this, &ProtocolChecker::nb_transport_fw);
    in.register_transport_dbg(this, &ProtocolChecker::transport_dbg);
    in.register_get_direct_mem_ptr(this, &ProtocolChecker::get_direct_mem_ptr);
    out.register_nb_transport_bw(this, &ProtocolChecker::nb_transport_bw);
    out.register_invalidate_direct_mem_ptr(this, &ProtocolChecker::invalidate_direct_mem_ptr);
  }

  // Non-compliances of third-party VPs that the models accept (docs/integration.md, section 8):
  // a tolerated one is counted in tolerated(), not reported as a violation.
  struct Tolerance {
    bool zero_streaming_width = false;  // an initiator that leaves the streaming width at 0
    bool incomplete_response = false;   // a target that leaves the response status unset
  };
  void set_tolerance(const Tolerance& t) { tolerance_ = t; }
  std::uint64_t tolerated() const { return tolerated_; }

  std::uint64_t violations() const { return violations_; }
  const std::string& last_violation() const { return last_violation_; }
  std::uint64_t transactions() const { return transactions_; }
  // Transactions on the AT path that have begun and not yet completed.
  std::size_t open_at_transactions() const { return phase_.size(); }

  void collect_stats(StatsGroup& g) const override {
    g.add("transactions", static_cast<double>(transactions_), "transactions",
          "b_transport and nb_transport BEGIN_REQ calls checked");
    g.add("violations", static_cast<double>(violations_), "violations",
          "base-protocol violations observed");
  }
  void reset_stats() override {
    transactions_ = 0;
    violations_ = 0;
    tolerated_ = 0;
    last_violation_.clear();
  }

 private:
  // Where an AT transaction is in BEGIN_REQ -> END_REQ -> BEGIN_RESP -> END_RESP.
  enum class AtState { requested, request_ended, responding };
  struct AtTransaction {
    AtState state;
    sc_core::sc_time at;  // sc_time_stamp() + delay of its latest phase (never decreases)
  };

  // Counts a payload out of b_transport however the call is left (a violation report may
  // throw).
  class InFlight {
   public:
    InFlight(std::unordered_map<const tlm::tlm_generic_payload*, unsigned>& calls,
             const tlm::tlm_generic_payload* t)
        : calls_(calls), t_(t) {
      ++calls_[t_];
    }
    InFlight(const InFlight&) = delete;
    InFlight& operator=(const InFlight&) = delete;
    ~InFlight() {
      auto it = calls_.find(t_);
      if (--it->second == 0) calls_.erase(it);
    }

   private:
    std::unordered_map<const tlm::tlm_generic_payload*, unsigned>& calls_;
    const tlm::tlm_generic_payload* t_;
  };

  void violation(const tlm::tlm_generic_payload* t, const std::string& what) {
    ++violations_;
    char where[96] = "";
    if (t)
      std::snprintf(where, sizeof where, " (payload %p, %s at 0x%" PRIx64 ")",
                    static_cast<const void*>(t), command_name(t->get_command()),
                    static_cast<std::uint64_t>(t->get_address()));
    last_violation_ = std::string(name()) + ": TLM-2.0 base protocol violation: " + what + where;
    SC_REPORT_ERROR(kProtocolCheckerMsg, last_violation_.c_str());
  }

  static const char* command_name(tlm::tlm_command c) {
    switch (c) {
      case tlm::TLM_READ_COMMAND: return "read";
      case tlm::TLM_WRITE_COMMAND: return "write";
      case tlm::TLM_IGNORE_COMMAND: return "ignore";
    }
    return "invalid command";
  }

  // The attributes an initiator must set before it sends a payload.
  void check_request(const tlm::tlm_generic_payload& t) {
    const tlm::tlm_command c = t.get_command();
    if (c != tlm::TLM_READ_COMMAND && c != tlm::TLM_WRITE_COMMAND && c != tlm::TLM_IGNORE_COMMAND)
      violation(&t, "invalid command value " + std::to_string(static_cast<int>(c)));
    if (t.get_data_length() == 0) violation(&t, "data length is 0");
    if (c != tlm::TLM_IGNORE_COMMAND && t.get_data_ptr() == nullptr)
      violation(&t, "data pointer is null");
    if (t.get_streaming_width() == 0) {
      if (tolerance_.zero_streaming_width)
        ++tolerated_;
      else
        violation(&t, "streaming width is 0");
    }
    if (t.get_byte_enable_ptr() != nullptr && t.get_byte_enable_length() == 0)
      violation(&t, "byte-enable pointer set with byte-enable length 0");
    if (t.get_byte_enable_ptr() == nullptr && t.get_byte_enable_length() != 0)
      violation(&t, "byte-enable length " + std::to_string(t.get_byte_enable_length()) +
                        " without a byte-enable pointer");
    if (t.get_response_status() != tlm::TLM_INCOMPLETE_RESPONSE)
      violation(&t, std::string("response status on entry is ") + t.get_response_string() +
                        ", the initiator must set TLM_INCOMPLETE_RESPONSE");
  }

  void b_transport(tlm::tlm_generic_payload& t, sc_core::sc_time& delay) {
    ++transactions_;
    if (sc_core::sc_get_current_process_handle().proc_kind() == sc_core::SC_METHOD_PROC_)
      violation(&t, "b_transport called from a method process (it may wait)");
    if (in_flight_.count(&t) || phase_.count(&t))
      violation(&t, "payload reused while a transaction with it is still in flight");
    check_request(t);
    InFlight guard(in_flight_, &t);
    const bool managed = t.has_mm();
    const unsigned refs_before = managed ? static_cast<unsigned>(t.get_ref_count()) : 0;
    out->b_transport(t, delay);
    if (t.get_response_status() == tlm::TLM_INCOMPLETE_RESPONSE) {
      if (tolerance_.incomplete_response)
        ++tolerated_;
      else
        violation(&t, "response status not set by the target (still TLM_INCOMPLETE_RESPONSE)");
    }
    if (managed && static_cast<unsigned>(t.get_ref_count()) != refs_before)
      violation(&t, "the target kept a reference to the payload (acquire without release)");
  }

  unsigned transport_dbg(tlm::tlm_generic_payload& t) {
    if (BurstTrain* probe = t.get_extension<BurstTrain>()) {
      // A burst train would pass as one transaction: checked and counted per train, not per
      // burst. Answering its probe "no" keeps the initiator's bursts one call each.
      probe->blocked = true;
      return 0;
    }
    const tlm::tlm_command c = t.get_command();
    if (c != tlm::TLM_READ_COMMAND && c != tlm::TLM_WRITE_COMMAND && c != tlm::TLM_IGNORE_COMMAND)
      violation(&t, "transport_dbg with invalid command value " + std::to_string(static_cast<int>(c)));
    if (c != tlm::TLM_IGNORE_COMMAND && t.get_data_length() > 0 && t.get_data_ptr() == nullptr)
      violation(&t, "transport_dbg of " + std::to_string(t.get_data_length()) +
                        " bytes with a null data pointer");
    const unsigned n = out->transport_dbg(t);
    if (n > t.get_data_length())
      violation(&t, "transport_dbg returned " + std::to_string(n) + " bytes for a data length of " +
                        std::to_string(t.get_data_length()));
    return n;
  }

  bool get_direct_mem_ptr(tlm::tlm_generic_payload& t, tlm::tlm_dmi& dmi) {
    const std::uint64_t addr = t.get_address();
    const bool granted = out->get_direct_mem_ptr(t, dmi);
    const std::uint64_t start = dmi.get_start_address();
    const std::uint64_t end = dmi.get_end_address();
    const char* what = granted ? "granted" : "refused";
    char range[96];
    std::snprintf(range, sizeof range, " DMI range [0x%" PRIx64 ", 0x%" PRIx64 "]", start, end);
    if (start > end)
      violation(&t, std::string(what) + range + " has its start after its end");
    else if (addr < start || addr > end)
      violation(&t, std::string(what) + range + " does not contain the requested address");
    if (granted) {
      if (dmi.get_dmi_ptr() == nullptr) violation(&t, "DMI granted with a null pointer");
      if (dmi.get_granted_access() == tlm::tlm_dmi::DMI_ACCESS_NONE)
        violation(&t, "DMI granted with no access (DMI_ACCESS_NONE)");
    }
    return granted;
  }

  void invalidate_direct_mem_ptr(sc_dt::uint64 start, sc_dt::uint64 end) {
    if (start > end) {
      char msg[120];
      std::snprintf(msg, sizeof msg,
                    "invalidate_direct_mem_ptr range [0x%" PRIx64 ", 0x%" PRIx64
                    "] has its start after its end",
                    static_cast<std::uint64_t>(start), static_cast<std::uint64_t>(end));
      violation(nullptr, msg);
    }
    in->invalidate_direct_mem_ptr(start, end);
  }

  tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload& t, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay) {
    if (phase == tlm::BEGIN_REQ) {
      ++transactions_;
      if (in_flight_.count(&t) || phase_.count(&t))
        violation(&t, "payload reused while a transaction with it is still in flight");
      check_request(t);
    }
    at_event(t, phase, delay, true);
    const sc_core::sc_time called = sc_core::sc_time_stamp();
    tlm::tlm_sync_enum s = out->nb_transport_fw(t, phase, delay);
    if (sc_core::sc_time_stamp() != called)
      violation(&t, "nb_transport_fw returned at " + sc_core::sc_time_stamp().to_string() +
                        ", called at " + called.to_string() + " (a non-blocking call waited)");
    at_return(t, phase, delay, s, false);
    return s;
  }

  tlm::tlm_sync_enum nb_transport_bw(tlm::tlm_generic_payload& t, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay) {
    at_event(t, phase, delay, false);
    const sc_core::sc_time called = sc_core::sc_time_stamp();
    tlm::tlm_sync_enum s = in->nb_transport_bw(t, phase, delay);
    if (sc_core::sc_time_stamp() != called)
      violation(&t, "nb_transport_bw returned at " + sc_core::sc_time_stamp().to_string() +
                        ", called at " + called.to_string() + " (a non-blocking call waited)");
    at_return(t, phase, delay, s, true);
    return s;
  }

  // The callee's answer: TLM_UPDATED carries a new phase from the callee's side, TLM_COMPLETED
  // ends the transaction.
  void at_return(tlm::tlm_generic_payload& t, tlm::tlm_phase& phase, const sc_core::sc_time& delay,
                 tlm::tlm_sync_enum s, bool callee_is_initiator) {
    if (s == tlm::TLM_UPDATED) {
      at_event(t, phase, delay, callee_is_initiator);
    } else if (s == tlm::TLM_COMPLETED && phase_.count(&t)) {
      if (t.get_response_status() == tlm::TLM_INCOMPLETE_RESPONSE)
        violation(&t, "TLM_COMPLETED with the response status still TLM_INCOMPLETE_RESPONSE");
      check_time(t, phase_[&t], delay);
      close(t);
    }
  }

  // Each phase of a transaction, and its completion, happens no earlier than the one before
  // (sc_time_stamp() + delay never decreases; IEEE 1666-2011 15.2.7 c).
  void check_time(const tlm::tlm_generic_payload& t, AtTransaction& x, const sc_core::sc_time& delay) {
    const sc_core::sc_time at = sc_core::sc_time_stamp() + delay;
    if (at < x.at)
      violation(&t, "decreasing timing annotation: " + at.to_string() + " after a phase at " +
                        x.at.to_string());
    else
      x.at = at;
  }

  static std::string phase_name(const tlm::tlm_phase& p) {
    std::string s = p.get_name();
    return s.empty() ? "phase " + std::to_string(static_cast<unsigned>(p)) : s;
  }

  // One phase of an AT transaction, sent by the initiator (`from_initiator`) or the target.
  void at_event(tlm::tlm_generic_payload& t, const tlm::tlm_phase& phase,
                const sc_core::sc_time& delay, bool from_initiator) {
    const bool initiator_phase = phase == tlm::BEGIN_REQ || phase == tlm::END_RESP;
    const bool target_phase = phase == tlm::END_REQ || phase == tlm::BEGIN_RESP;
    if (!initiator_phase && !target_phase) return;  // an ignorable extension phase
    if (initiator_phase != from_initiator) {
      violation(&t, phase_name(phase) + " sent by the " +
                        (from_initiator ? "initiator" : "target") + ", only the " +
                        (from_initiator ? "target" : "initiator") + " may send it");
      return;
    }
    auto it = phase_.find(&t);
    if (phase == tlm::BEGIN_REQ) {
      if (it != phase_.end()) return;  // reuse already reported at entry
      if (open_request_)
        violation(&t, "BEGIN_REQ while an earlier request has not seen END_REQ (request exclusion)");
      phase_[&t] = AtTransaction{AtState::requested, sc_core::sc_time_stamp() + delay};
      open_request_ = &t;
      return;
    }
    if (it == phase_.end()) {
      violation(&t, phase_name(phase) + " for a payload with no open transaction");
      return;
    }
    check_time(t, it->second, delay);
    AtState& state = it->second.state;
    if (phase == tlm::END_REQ) {
      if (state != AtState::requested)
        violation(&t, "END_REQ out of order (expected after BEGIN_REQ, once)");
      state = AtState::request_ended;
      if (open_request_ == &t) open_request_ = nullptr;
    } else if (phase == tlm::BEGIN_RESP) {
      if (state == AtState::responding)
        violation(&t, "BEGIN_RESP sent twice");
      if (open_response_ && open_response_ != &t)
        violation(&t, "BEGIN_RESP while an earlier response has not seen END_RESP (response exclusion)");
      if (t.get_response_status() == tlm::TLM_INCOMPLETE_RESPONSE)
        violation(&t, "BEGIN_RESP with the response status still TLM_INCOMPLETE_RESPONSE");
      state = AtState::responding;  // BEGIN_RESP implies END_REQ
      if (open_request_ == &t) open_request_ = nullptr;
      open_response_ = &t;
    } else {  // END_RESP
      if (state != AtState::responding)
        violation(&t, "END_RESP before BEGIN_RESP");
      close(t);
    }
  }

  void close(const tlm::tlm_generic_payload& t) {
    phase_.erase(&t);
    if (open_request_ == &t) open_request_ = nullptr;
    if (open_response_ == &t) open_response_ = nullptr;
  }

  // Payloads inside b_transport, with the number of calls each is in (more than one is the
  // reuse violation).
  std::unordered_map<const tlm::tlm_generic_payload*, unsigned> in_flight_;
  std::unordered_map<const tlm::tlm_generic_payload*, AtTransaction> phase_;  // AT path
  const tlm::tlm_generic_payload* open_request_ = nullptr;
  const tlm::tlm_generic_payload* open_response_ = nullptr;
  std::uint64_t transactions_ = 0;
  std::uint64_t violations_ = 0;
  std::uint64_t tolerated_ = 0;
  Tolerance tolerance_;
  std::string last_violation_;
};

}  // namespace tlm_models

#endif  // TLM_MODELS_PROTOCOL_CHECKER_H
