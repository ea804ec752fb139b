// The approximately-timed path of a loosely-timed target: nb_transport_fw per the TLM-2.0 base
// protocol, served by the target's own b_transport function (which annotates the delay and
// never waits). Targets on tlm_utils::simple_target_socket get this conversion from the socket;
// multi-passthrough target sockets (several initiators on one socket) have none, so they
// register AtTarget::nb_transport_fw.
//
// Phases: BEGIN_REQ is accepted at once (TLM_UPDATED, END_REQ, delay unchanged): the request
// is timed by the b_transport function when it arrives, which is where the LT models keep
// their busy-until state. BEGIN_RESP is sent on the backward path of the initiator's socket at
// arrival + the annotated delay, the time b_transport would have returned. Per socket at most
// one response is open at a time (response exclusion); later ones wait for END_RESP (or a
// TLM_COMPLETED / END_RESP answer to BEGIN_RESP). A payload with a memory manager is held
// (acquire/release) from BEGIN_REQ to the end of its response.
//
// A target whose answer is not known when the request arrives (it forwards the request, or
// queues it in a controller) serves it with a Defer function instead: the request is accepted
// the same way, and the target calls respond(t, delay) once it knows when the response is ready
// (delay counted from that call). Nothing here waits: every path may be called from a method.
#ifndef TLM_MODELS_AT_TARGET_H
#define TLM_MODELS_AT_TARGET_H

#include <deque>
#include <functional>
#include <sstream>
#include <string>
#include <unordered_map>
#include <utility>

#include <systemc>
#include <tlm>
#include <tlm_utils/peq_with_cb_and_phase.h>

namespace tlm_models {

class AtTarget {
 public:
  using Serve = std::function<void(int, tlm::tlm_generic_payload&, sc_core::sc_time&)>;
  using Backward = std::function<tlm::tlm_sync_enum(int, tlm::tlm_generic_payload&,
                                                    tlm::tlm_phase&, sc_core::sc_time&)>;
  // Takes the request arriving at sc_time_stamp() + delay; true when it answered at once (the
  // delay then says when the response is ready, as Serve), false when respond() will follow.
  using Defer = std::function<bool(int, tlm::tlm_generic_payload&, sc_core::sc_time&)>;

  // Constructed during elaboration (the event queue spawns a method process); `owner` names
  // the target in protocol error reports.
  AtTarget(std::string owner, Serve serve, Backward backward)
      : owner_(std::move(owner)),
        serve_(std::move(serve)),
        backward_(std::move(backward)),
        responses_(this, &AtTarget::response_due) {}

  AtTarget(std::string owner, Defer defer, Backward backward)
      : owner_(std::move(owner)),
        defer_(std::move(defer)),
        backward_(std::move(backward)),
        responses_(this, &AtTarget::response_due) {}

  // The usual owner: a module whose member `serve` serves the request arriving on target socket
  // `id` of its multi-target `socket`, which also carries the backward path.
  template <class Module, class Socket>
  AtTarget(Module* owner, void (Module::*serve)(int, tlm::tlm_generic_payload&, sc_core::sc_time&),
           Socket& socket)
      : AtTarget(
            owner->name(),
            [owner, serve](int id, tlm::tlm_generic_payload& t, sc_core::sc_time& d) { (owner->*serve)(id, t, d); },
            [&socket](int id, tlm::tlm_generic_payload& t, tlm::tlm_phase& ph, sc_core::sc_time& d) {
              return socket[id]->nb_transport_bw(t, ph, d);
            }) {}

  AtTarget(const AtTarget&) = delete;
  AtTarget& operator=(const AtTarget&) = delete;

  tlm::tlm_sync_enum nb_transport_fw(int id, tlm::tlm_generic_payload& t, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay) {
    if (phase == tlm::BEGIN_REQ) {
      if (t.has_mm()) t.acquire();
      socket_of_[&t] = id;
      sc_core::sc_time response = delay;
      bool answered = true;
      if (defer_)
        answered = defer_(id, t, response);
      else
        serve_(id, t, response);
      if (answered) responses_.notify(t, begin_resp_, response);
      phase = tlm::END_REQ;
      return tlm::TLM_UPDATED;
    }
    if (phase == tlm::END_RESP) {
      auto it = socket_of_.find(&t);
      if (it == socket_of_.end() || open_[it->second] != &t) {
        protocol_error("END_RESP for a transaction without an open response");
        return tlm::TLM_COMPLETED;
      }
      finish(it->second, t, delay);
      return tlm::TLM_COMPLETED;
    }
    protocol_error("phase " + phase_name(phase) + " on the forward path");
    return tlm::TLM_ACCEPTED;
  }

  // The deferred response of `t` (accepted by Defer returning false) is ready `delay` from now.
  void respond(tlm::tlm_generic_payload& t, const sc_core::sc_time& delay) {
    responses_.notify(t, begin_resp_, delay);
  }

  // Transactions between BEGIN_REQ and the end of their response.
  std::size_t open_transactions() const { return socket_of_.size(); }

 private:
  static std::string phase_name(const tlm::tlm_phase& p) {
    std::ostringstream s;
    s << p;
    return s.str();
  }

  void protocol_error(const std::string& what) const {
    SC_REPORT_ERROR("tlm_models/at_target", (owner_ + ": " + what).c_str());
  }

  // The response's time has come: send it, or queue it behind the socket's open response.
  void response_due(tlm::tlm_generic_payload& t, const tlm::tlm_phase&) {
    const int id = socket_of_.at(&t);
    if (open_.count(id) && open_[id] != nullptr) {
      waiting_[id].push_back(&t);
      return;
    }
    send_response(id, t);
  }

  void send_response(int id, tlm::tlm_generic_payload& t) {
    open_[id] = &t;
    tlm::tlm_phase phase = tlm::BEGIN_RESP;
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    const tlm::tlm_sync_enum s = backward_(id, t, phase, delay);
    if (s == tlm::TLM_COMPLETED || (s == tlm::TLM_UPDATED && phase == tlm::END_RESP))
      finish(id, t, delay);
  }

  // The response of `t` has ended `delay` from now; the socket's next one may begin then.
  void finish(int id, tlm::tlm_generic_payload& t, const sc_core::sc_time& delay) {
    open_[id] = nullptr;
    socket_of_.erase(&t);
    if (t.has_mm()) t.release();
    auto& queue = waiting_[id];
    if (queue.empty()) return;
    tlm::tlm_generic_payload* next = queue.front();
    queue.pop_front();
    responses_.notify(*next, begin_resp_, delay);
  }

  std::string owner_;
  Serve serve_;
  Defer defer_;
  Backward backward_;
  tlm_utils::peq_with_cb_and_phase<AtTarget> responses_;
  const tlm::tlm_phase begin_resp_ = tlm::BEGIN_RESP;
  std::unordered_map<const tlm::tlm_generic_payload*, int> socket_of_;
  std::unordered_map<int, tlm::tlm_generic_payload*> open_;  // the open response per socket
  std::unordered_map<int, std::deque<tlm::tlm_generic_payload*>> waiting_;
};

}  // namespace tlm_models

#endif  // TLM_MODELS_AT_TARGET_H
