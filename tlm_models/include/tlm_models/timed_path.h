// A direct path for timing-only transactions (timing_only.h): the compute engines' operand
// reads and result writes, which carry no bytes, only ask the interconnect and the SRAM to
// book their links, ports and banks and to say when the access completes. Through the sockets
// each such access builds a generic payload and crosses two socket callbacks, the interconnect's
// routing and the target's payload checks, which cost more than the booking itself.
//
// A component on the path that understands the probe below answers it with a TimedTarget: an
// object that books an access exactly as its b_transport books a timing-only payload (the same
// bookings, statistics and completion time; the models share one function for both), for every
// address in the range it names. The initiator then calls timed_access() for accesses inside
// that range and b_transport for everything else.
//
// The probe travels as an extension of a DMI request (get_direct_mem_ptr), so the rule that
// already governs DMI governs it: a component that must see every transaction (a monitor, a
// checker) sits in the way. A probe is only answered by the component the asker calls directly:
// the asker names the interface it calls (`via`) and a target answers only when that interface
// is its own socket binder for the calling input, so a component in between that forwards the
// DMI request unchanged (or one that does not know the probe) leaves it unanswered, and the
// asker keeps the sockets for that range. Results are therefore the same with and without the
// path: it changes how a booking is reached, never what is booked.
#ifndef TLM_MODELS_TIMED_PATH_H
#define TLM_MODELS_TIMED_PATH_H

#include <cstdint>
#include <vector>

#include <tlm>
#include <tlm_utils/multi_passthrough_target_socket.h>

#include "tlm_models/time_ticks.h"

namespace tlm_models {

class TimedTarget {
 public:
  // Books a timing-only read or write of [address, address + bytes) (bytes >= 1, inside the
  // range this target granted) that arrives on `input` at absolute time `arrival` (>= now, the
  // current simulation time), exactly as b_transport would; returns the absolute completion time.
  virtual Ticks timed_access(int input, bool write, std::uint64_t address, std::uint64_t bytes,
                             Ticks arrival, Ticks now) = 0;

 protected:
  ~TimedTarget() = default;
};

// The question and its answer, carried by a DMI request with command TLM_IGNORE_COMMAND.
struct TimedPathProbe : tlm::tlm_extension<TimedPathProbe> {
  const void* via = nullptr;     // asked by the caller of this interface (tlm_fw_transport_if)
  TimedTarget* target = nullptr;  // answer: null = use the sockets
  int input = 0;                  // the answer's `input` argument of timed_access
  std::uint64_t first = 0;        // the answer holds for [first, last], in the asker's addresses
  std::uint64_t last = ~std::uint64_t{0};

  tlm::tlm_extension_base* clone() const override { return new TimedPathProbe(*this); }
  void copy_from(const tlm::tlm_extension_base& other) override {
    *this = static_cast<const TimedPathProbe&>(other);
  }
};

// A multi-passthrough target socket that can tell whether a caller is bound to it directly.
template <typename MODULE>
class TimedTargetSocket : public tlm_utils::multi_passthrough_target_socket<MODULE> {
  using base = tlm_utils::multi_passthrough_target_socket<MODULE>;

 public:
  explicit TimedTargetSocket(const char* name) : base(name) {}

  // Whether `via` is this socket's binder for input `id` (sockets bound hierarchically: never).
  bool called_directly(int id, const void* via) const {
    return id >= 0 && static_cast<std::size_t>(id) < this->m_binders.size() &&
           static_cast<const void*>(static_cast<tlm::tlm_fw_transport_if<>*>(
               this->m_binders[static_cast<std::size_t>(id)])) == via;
  }
};

// The probe of `t`, when it asks this socket directly for input `id` (else null).
template <typename MODULE>
TimedPathProbe* direct_probe(const TimedTargetSocket<MODULE>& socket, int id,
                             tlm::tlm_generic_payload& t) {
  TimedPathProbe* probe = t.get_extension<TimedPathProbe>();
  return probe && socket.called_directly(id, probe->via) ? probe : nullptr;
}

// Asks the component behind `iface` for a timed path at `address`; the answer names its range.
inline TimedPathProbe ask_timed_path(tlm::tlm_fw_transport_if<>& iface, std::uint64_t address) {
  TimedPathProbe probe;
  probe.via = &iface;
  tlm::tlm_generic_payload t;
  t.set_command(tlm::TLM_IGNORE_COMMAND);
  t.set_address(address);
  t.set_extension(&probe);
  tlm::tlm_dmi dmi;
  iface.get_direct_mem_ptr(t, dmi);
  t.clear_extension(&probe);  // not owned by the payload
  TimedPathProbe answer;
  answer.via = probe.via;
  answer.target = probe.target;
  answer.input = probe.input;
  answer.first = probe.first;
  answer.last = probe.last;
  if (answer.first > address || answer.last < address) {  // an answer must hold at `address`
    answer.target = nullptr;
    answer.first = answer.last = address;
  }
  return answer;
}

// The asker's side: the answers received so far, by address range (a handful per socket).
class TimedPaths {
 public:
  // The answer holding for [address, address + bytes) (bytes >= 1), asking once per range.
  const TimedPathProbe& lookup(tlm::tlm_fw_transport_if<>& iface, std::uint64_t address,
                               std::uint64_t bytes) {
    const std::uint64_t end = address + (bytes - 1);
    for (const TimedPathProbe& a : answers_)
      if (a.first <= address && end <= a.last) return a;
    answers_.push_back(ask_timed_path(iface, address));
    TimedPathProbe& a = answers_.back();
    if (end > a.last || end < address) {  // the access leaves the range: sockets for this one
      miss_ = a;
      miss_.target = nullptr;
      answers_.pop_back();
      return miss_;
    }
    return a;
  }

 private:
  std::vector<TimedPathProbe> answers_;
  TimedPathProbe miss_;
};

}  // namespace tlm_models

#endif  // TLM_MODELS_TIMED_PATH_H
