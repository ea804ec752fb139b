// What the compiled session knows of one elaborated component: its module, its sockets by name,
// and the hooks the platform builder needs (engines, routes, statistics, activity logs). The
// per-type factory (generated from the Python component registry into factory.cpp) fills it.
#ifndef TLM_MODELS_NATIVE_COMPONENT_H
#define TLM_MODELS_NATIVE_COMPONENT_H

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <systemc>
#include <tlm>

#include "tlm_models/activity_log.h"
#include "tlm_models/op_executor.h"
#include "tlm_models/stats.h"

namespace tlm_models::native {

using TargetSocket =
    tlm::tlm_base_target_socket_b<32, tlm::tlm_fw_transport_if<>, tlm::tlm_bw_transport_if<>>;
using ParamList = std::vector<std::pair<std::string, std::string>>;

struct Component {
  std::string type;
  // Initiator sockets bind through their own bind() (multi-sockets override it), so each entry
  // is that call on the concrete socket.
  std::map<std::string, std::function<void(TargetSocket&)>> initiators;
  std::map<std::string, TargetSocket*> targets;
  std::function<void(StatsGroup&)> collect_stats;
  // Null for components that execute no trace operations; the argument is the channel index.
  std::function<OpExecutor*(unsigned)> executor;
  // (base, size, out index, offset): the target sees address - offset.
  std::function<void(std::uint64_t, std::uint64_t, unsigned, std::uint64_t)> add_route;
  std::function<void(const sc_core::sc_time&, const sc_core::sc_time&, std::size_t)>
      enable_activity_log;
  std::function<const std::vector<BusyInterval>*(unsigned)> channel_activity;
  // Off-chip memories that log their requests (an STL export of the run).
  std::function<void(std::size_t)> enable_request_log;
  std::function<std::size_t()> request_log_size;
  std::function<std::size_t()> request_log_dropped;
  std::function<void(void*)> request_log_copy;
};

// Parameter values arrive as the canonical strings the Python side writes: integers for counts,
// sizes and addresses, decimal doubles for bandwidths and frequencies, picoseconds for times,
// "1"/"0" for booleans, the name for choices.
template <class T>
void set_value(T& field, const std::string& v) {
  if constexpr (std::is_same_v<T, sc_core::sc_time>) {
    field = sc_core::sc_time(std::stod(v), sc_core::SC_PS);
  } else if constexpr (std::is_same_v<T, bool>) {
    field = v == "1";
  } else if constexpr (std::is_integral_v<T>) {
    field = static_cast<T>(std::stoull(v));
  } else if constexpr (std::is_floating_point_v<T>) {
    field = static_cast<T>(std::stod(v));
  } else {
    field = v;
  }
}

template <class P, class = void>
struct HasCheck : std::false_type {};
template <class P>
struct HasCheck<P, std::void_t<decltype(std::declval<const P&>().check())>> : std::true_type {};

// A Params' own validation (empty = fine); types without check() accept anything.
template <class P>
std::string check_params(const P& p) {
  if constexpr (HasCheck<P>::value) {
    return p.check();
  } else {
    return {};
  }
}

template <class M, class = void>
struct HasActivity : std::false_type {};
template <class M>
struct HasActivity<M, std::void_t<decltype(std::declval<const M&>().channel_activity(0u))>>
    : std::true_type {};

template <class M, class = void>
struct HasRequestLog : std::false_type {};
template <class M>
struct HasRequestLog<M, std::void_t<decltype(std::declval<const M&>().request_log().size())>>
    : std::true_type {};

// Statistics and, for memories that log channel activity or requests, those hooks.
template <class M>
void common_hooks(Component& c, M* m) {
  c.collect_stats = [m](StatsGroup& g) { m->collect_stats(g); };
  if constexpr (HasActivity<M>::value) {
    c.enable_activity_log = [m](const sc_core::sc_time& from, const sc_core::sc_time& to,
                                std::size_t max) { m->enable_activity_log(from, to, max); };
    c.channel_activity = [m](unsigned i) { return &m->channel_activity(i); };
  }
  if constexpr (HasRequestLog<M>::value) {
    c.enable_request_log = [m](std::size_t max) { m->enable_request_log(max); };
    c.request_log_size = [m] { return m->request_log().size(); };
    c.request_log_dropped = [m] { return m->request_log().dropped(); };
    c.request_log_copy = [m](void* out) { m->request_log().copy(out); };
  }
}

// Builds a component of a registered type. Returns 0 on success, 1 with `error` set for an
// unknown type or parameter, 2 with the model's message for parameters its own check rejects.
int make_component(const std::string& type, const std::string& name, const ParamList& params,
                    Component& out, std::string& error);

}  // namespace tlm_models::native

#endif  // TLM_MODELS_NATIVE_COMPONENT_H
