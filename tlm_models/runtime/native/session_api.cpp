// The compiled replay session: a C interface (bound from Python with ctypes) that elaborates a
// platform, drives the replayer and hands results back, so that a simulation process runs
// compiled code from the first operation on instead of JIT-compiling the models in cling.
//
// Every entry point catches exceptions (a SystemC fatal is set to throw) and reports them as a
// non-zero return plus attn_error(); no C++ exception crosses into Python. Objects are never
// destroyed: one simulation per process, and the process exits after its run.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <exception>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <systemc>

#include "component.h"
#include "tlm_models/engine_kind.h"
#include "tlm_models/issue_gate.h"
#include "tlm_models/replayer.h"
#include "tlm_models/stats.h"
#include "tlm_models/stl_player.h"
#include "tlm_models/tile_sync.h"
#include "tlm_models/trace_op.h"

namespace {

using tlm_models::native::Component;

// Fast-forward's view of a replay: the record where each marked loop iteration starts, and
// every statistic (the replayer's and every component's, depth-first in tree order) at the
// moment each of those records is issued, as one row of numbers per iteration.
struct IterationSnapshots {
  std::map<std::uint64_t, std::uint64_t> marks;  // record position -> iteration
  std::vector<double> rows;                      // width values per snapshot
  std::vector<std::uint64_t> iterations;
  std::vector<std::uint64_t> starts;  // issue time of the iteration's first record, in ticks
  std::size_t width = 0;
  std::string layout;  // JSON list of [path, unit], fixed by the first snapshot
  // The replayer whose marked records are watched (a tiled platform's tile 0); the others'
  // statistics join each row as `replay_tile<i>` so the whole chip's changes are compared.
  tlm_models::Replayer* observed = nullptr;
};

struct Session {
  std::string name;
  IterationSnapshots iterations;
  std::map<std::string, Component> components;
  std::vector<std::string> order;  // statistics follow the platform file's component order
  std::map<std::string, tlm_models::OpExecutor*> engines;
  // One replayer per trace: a tiled platform replays each tile's trace on its own engines in
  // the same simulation. `replayer` is the one the set-up, feed and result calls address.
  std::vector<tlm_models::Replayer*> replayers;
  tlm_models::Replayer* replayer = nullptr;
  // Orders the replayers' operations by simulated time when they share components (tiles).
  tlm_models::IssueGate* gate = nullptr;
  // Their cross-tile dependencies (split-K partial results, tile_sync.h), with the gate.
  tlm_models::TileSync* sync = nullptr;
  // Plays an STL memory trace into one memory (attn-tlm replay x.stl) instead of a replayer.
  tlm_models::StlPlayer* player = nullptr;
  bool started = false;  // the kernel has run once
  std::string error;
  std::string text;  // the last string handed out; valid until the next call that sets it
};

// attn_step's answers; kTimeRange (from any call) is a run longer than SystemC's time holds.
enum : int { kDone = 0, kNeedsInput = 1, kRanDry = 2, kRunning = 3, kTimeRange = 4 };

template <class F>
int guarded(Session* s, F&& f) {
  try {
    return f();
  } catch (const std::exception& e) {
    s->error = e.what();
  } catch (...) {
    s->error = "unknown C++ exception";
  }
  return tlm_models::time_range_exceeded() ? kTimeRange : -1;
}

int fail(Session* s, std::string message) {
  s->error = std::move(message);
  return 1;
}

Component* find(Session* s, const char* name) {
  auto it = s->components.find(name);
  return it == s->components.end() ? nullptr : &it->second;
}

tlm_models::Replayer& replayer(Session* s) {
  if (s->replayer == nullptr) throw std::logic_error("the session has no replayer yet");
  return *s->replayer;
}

sc_core::sc_time ps(double value) { return sc_core::sc_time(value, sc_core::SC_PS); }

tlm_models::StatsGroup& fill_platform(Session* s, tlm_models::StatsGroup& root) {
  for (const std::string& name : s->order) s->components.at(name).collect_stats(root.child(name));
  return root;
}

std::string platform_stats(Session* s) {
  tlm_models::StatsGroup root(s->name);
  return fill_platform(s, root).to_json();
}

void flatten_values(const tlm_models::StatsGroup& g, std::vector<double>& out) {
  for (const auto& stat : g.stats()) out.push_back(stat.value);
  for (const auto& child : g.children()) flatten_values(*child, out);
}

void append_quoted(std::string& out, const std::string& text) {
  out += '"';
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  out += '"';
}

void flatten_layout(const tlm_models::StatsGroup& g, const std::string& prefix, std::string& out) {
  for (const auto& stat : g.stats()) {
    if (out.size() > 1) out += ',';
    out += "[[" + prefix;
    append_quoted(out, stat.name);
    out += "],";
    append_quoted(out, stat.unit);
    out += ']';
  }
  for (const auto& child : g.children()) {
    std::string path = prefix;
    append_quoted(path, child->name());
    flatten_layout(*child, path + ",", out);
  }
}

void take_snapshot(Session* s, std::uint64_t pos, tlm_models::Ticks start) {
  IterationSnapshots& snaps = s->iterations;
  auto it = snaps.marks.find(pos);
  if (it == snaps.marks.end()) return;
  tlm_models::StatsGroup root("snapshot");
  snaps.observed->collect_stats(root.child("replay"));
  for (std::size_t i = 0; i < s->replayers.size(); ++i)
    if (s->replayers[i] != snaps.observed)
      s->replayers[i]->collect_stats(root.child("replay_tile" + std::to_string(i)));
  fill_platform(s, root.child("platform"));
  std::vector<double> values;
  flatten_values(root, values);
  if (snaps.width == 0) {
    snaps.width = values.size();
    snaps.layout = "[";
    flatten_layout(root, "", snaps.layout);
    snaps.layout += "]";
  }
  if (values.size() == snaps.width) {  // a tree that changed shape cannot be compared
    snaps.rows.insert(snaps.rows.end(), values.begin(), values.end());
    snaps.iterations.push_back(it->second);
    snaps.starts.push_back(start);
  }
  snaps.marks.erase(it);
}

}  // namespace

extern "C" {

// Status codes of attn_step.

// SystemC keeps simulated time as a 64-bit count of its resolution (2^64 ps, 213.5 days, at
// the 1 ps the models use) and wraps silently beyond it: an event notified past the range
// lands before the current time, and the kernel's clock then jumps back. Either sign is
// checked around every slice; the session's error names the figure.
bool time_range_exceeded(Session* s, const sc_core::sc_time& before) {
  const sc_core::sc_time now = sc_core::sc_time_stamp();
  bool wrapped = now < before;
  if (!wrapped && sc_core::sc_pending_activity_at_future_time()) {
    // The distance to the next event is below the room left, unless that event wrapped.
    const sc_core::sc_time gap =
        sc_core::sc_time_to_pending_activity(sc_core::sc_get_curr_simcontext());
    wrapped = gap > sc_core::sc_max_time() - now;
  }
  if (wrapped) {
    s->error = "simulated time passed " + sc_core::sc_max_time().to_string() +
               " (2^64 steps of the " + sc_core::sc_get_time_resolution().to_string() +
               " time resolution, the most SystemC can hold) at " + now.to_string() +
               "; the platform's latencies or clocks make the run longer than that";
  }
  return wrapped;
}

Session* attn_session_new(const char* name) {
  sc_core::sc_report_handler::set_actions(sc_core::SC_FATAL,
                                          sc_core::SC_DISPLAY | sc_core::SC_THROW);
  auto* s = new Session();
  s->name = name;
  return s;
}

const char* attn_error(Session* s) { return s->error.c_str(); }

// 0 = built; 1 = unknown type or parameter; 2 = the model's Params check rejected the values
// (attn_error holds its message); -1 = the constructor failed.
int attn_add_component(Session* s, const char* type, const char* name, unsigned count,
                       const char* const* keys, const char* const* values) {
  return guarded(s, [&] {
    tlm_models::native::ParamList params;
    for (unsigned i = 0; i < count; ++i) params.emplace_back(keys[i], values[i]);
    Component c;
    std::string error;
    int made = tlm_models::native::make_component(type, name, params, c, error);
    if (made != 0) {
      s->error = error;
      return made;
    }
    s->components.emplace(name, std::move(c));
    s->order.emplace_back(name);
    return 0;
  });
}

int attn_bind(Session* s, const char* initiator, const char* socket, const char* target,
              const char* target_socket) {
  return guarded(s, [&] {
    Component* i = find(s, initiator);
    Component* t = find(s, target);
    if (i == nullptr || t == nullptr) return fail(s, "bind: unknown component");
    auto is = i->initiators.find(socket);
    auto ts = t->targets.find(target_socket);
    if (is == i->initiators.end() || ts == t->targets.end()) {
      return fail(s, std::string("bind: unknown socket ") + initiator + "." + socket + " -> " +
                         target + "." + target_socket);
    }
    is->second(*ts->second);
    return 0;
  });
}

int attn_add_route(Session* s, const char* interconnect, std::uint64_t base, std::uint64_t size,
                   unsigned out_index, std::uint64_t offset) {
  return guarded(s, [&] {
    Component* c = find(s, interconnect);
    if (c == nullptr || !c->add_route) return fail(s, "route on a component without routes");
    c->add_route(base, size, out_index, offset);
    return 0;
  });
}

int attn_add_engine(Session* s, const char* engine, const char* component, unsigned channel) {
  return guarded(s, [&] {
    Component* c = find(s, component);
    if (c == nullptr || !c->executor) return fail(s, "engine on a component that executes none");
    s->engines[engine] = c->executor(channel);
    return 0;
  });
}

// Adds a replayer (the first is "replayer", the k-th "replayer_k") and selects it.
int attn_replayer_new(Session* s, std::uint32_t window, std::uint64_t lookahead) {
  return guarded(s, [&] {
    const std::size_t k = s->replayers.size();
    const std::string name = k == 0 ? std::string("replayer") : "replayer_" + std::to_string(k);
    s->replayer = new tlm_models::Replayer(name.c_str());
    s->replayers.push_back(s->replayer);
    s->replayer->set_window(window);
    s->replayer->set_lookahead(lookahead);
    return 0;
  });
}

// Makes every replayer created so far issue its operations through one gate, in order of
// start time and then of creation (issue_gate.h); before the kernel first runs.
int attn_gate_replayers(Session* s) {
  return guarded(s, [&] {
    if (s->gate != nullptr) return fail(s, "the replayers are gated already");
    s->gate = new tlm_models::IssueGate(static_cast<unsigned>(s->replayers.size()));
    s->sync = new tlm_models::TileSync(*s->gate, static_cast<unsigned>(s->replayers.size()));
    for (std::size_t i = 0; i < s->replayers.size(); ++i) {
      s->replayers[i]->set_issue_gate(s->gate, static_cast<unsigned>(i));
      s->replayers[i]->set_tile_sync(s->sync);
    }
    return 0;
  });
}

// The selected replayer's engine `index` issues without the gate (it reaches only its own
// tile's components).
int attn_ungate_engine(Session* s, unsigned index) {
  return guarded(s, [&] {
    replayer(s).set_engine_gated(index, false);
    return 0;
  });
}

// Times a gated replayer gave way to another (0 without a gate).
std::uint64_t attn_gate_handoffs(Session* s) { return s->gate == nullptr ? 0 : s->gate->handoffs(); }

// Makes replayer `index` (in order of creation) the one later calls address.
int attn_select_replayer(Session* s, unsigned index) {
  if (index >= s->replayers.size()) return fail(s, "no replayer " + std::to_string(index));
  s->replayer = s->replayers[index];
  return 0;
}

// The index of the selected replayer (after attn_step answered kNeedsInput: the one to feed).
unsigned attn_selected_replayer(Session* s) {
  for (std::size_t i = 0; i < s->replayers.size(); ++i)
    if (s->replayers[i] == s->replayer) return static_cast<unsigned>(i);
  return 0;
}

int attn_bind_engine(Session* s, unsigned index, const char* engine, unsigned kind) {
  return guarded(s, [&] {
    auto it = s->engines.find(engine);
    if (it == s->engines.end()) return fail(s, std::string("no engine ") + engine);
    replayer(s).bind_engine(index, it->second, engine, static_cast<tlm_models::EngineKind>(kind));
    return 0;
  });
}

// Binds an executor the host built itself (a C++ virtual prototype's engine, a test's engine
// defined through cppyy) instead of one of the platform's; it must outlive the simulation.
int attn_bind_executor(Session* s, unsigned index, tlm_models::OpExecutor* exec, const char* name,
                       unsigned kind) {
  return guarded(s, [&] {
    replayer(s).bind_engine(index, exec, name, static_cast<tlm_models::EngineKind>(kind));
    return 0;
  });
}

int attn_set_tensor(Session* s, unsigned index, const char* name) {
  return guarded(s, [&] {
    replayer(s).set_tensor(index, name);
    return 0;
  });
}

int attn_record_timeline(Session* s, double from_ps, double to_ps, std::uint64_t max_entries) {
  return guarded(s, [&] {
    replayer(s).record_timeline(ps(from_ps), ps(to_ps), max_entries);
    for (auto& [name, c] : s->components) {
      if (c.enable_activity_log) c.enable_activity_log(ps(from_ps), ps(to_ps), max_entries);
    }
    return 0;
  });
}

int attn_feed(Session* s, const tlm_models::TraceOp* ops, std::uint64_t count) {
  return guarded(s, [&] {
    replayer(s).feed(ops, count);
    return 0;
  });
}

// The same without a copy: the caller keeps the records until attn_chunks_pending no longer
// counts them (Replayer::feed_borrowed).
int attn_feed_borrowed(Session* s, const tlm_models::TraceOp* ops, std::uint64_t count) {
  return guarded(s, [&] {
    replayer(s).feed_borrowed(ops, count);
    return 0;
  });
}

std::uint64_t attn_chunks_pending(Session* s) {
  return s->replayer ? s->replayer->chunks_pending() : 0;
}

int attn_end_of_input(Session* s) {
  return guarded(s, [&] {
    replayer(s).end_of_input();
    return 0;
  });
}

// The kernel cannot go on: kDone when every replayer has finished, else kRanDry with the first
// unfinished one selected (the one attn_waiting_on describes).
static int select_unfinished(Session* s) {
  for (tlm_models::Replayer* r : s->replayers) {
    if (!r->finished()) {
      s->replayer = r;
      return kRanDry;
    }
  }
  return kDone;
}

// Runs the kernel for one slice of simulated time, or up to the next pending event when that is
// further away (a 1 ms latency or a 1 kHz clock is crossed in one call, so simulated time
// advances whatever the platform's rates); says what the caller does next. A kernel with no
// event left while the replay waits cannot progress: kRanDry, and attn_waiting_on says why.
int attn_step(Session* s, double slice_ns) {
  return guarded(s, [&] {
    replayer(s);  // there is at least one
    // Done when every replayer is; a replayer that wants input is selected for the feed.
    bool all_finished = true;
    for (tlm_models::Replayer* r : s->replayers) {
      if (r->finished()) continue;
      all_finished = false;
      if (r->wants_input()) {
        s->replayer = r;
        return static_cast<int>(kNeedsInput);
      }
    }
    if (all_finished) return static_cast<int>(kDone);
    const sc_core::sc_time slice(slice_ns, sc_core::SC_NS);
    // Before the first call the kernel has not made its processes runnable yet.
    if (s->started && !sc_core::sc_pending_activity()) return select_unfinished(s);
    const sc_core::sc_time before = sc_core::sc_time_stamp();
    if (s->started && time_range_exceeded(s, before)) return static_cast<int>(kTimeRange);
    const sc_core::sc_time gap =
        s->started ? sc_core::sc_time_to_pending_activity(sc_core::sc_get_curr_simcontext()) : slice;
    // The slice ends within the range: a run that reaches its end stops there, checked above.
    const sc_core::sc_time room = sc_core::sc_max_time() - before;
    const sc_core::sc_time step = gap > slice ? gap : slice;
    sc_core::sc_start(step < room ? step : room, sc_core::SC_EXIT_ON_STARVATION);
    s->started = true;
    if (time_range_exceeded(s, before)) return static_cast<int>(kTimeRange);
    if (sc_core::sc_get_status() == sc_core::SC_STOPPED) return select_unfinished(s);
    return static_cast<int>(kRunning);
  });
}

// What an unfinished replay waits on (for the error of a kernel that ran dry).
const char* attn_waiting_on(Session* s) {
  s->text = s->replayer == nullptr ? std::string("nothing") : s->replayer->waiting_on();
  return s->text.c_str();
}

// Runs the kernel for `ns` of simulated time: platforms that run by themselves (traffic
// generators) and have no replayer.
int attn_run_for(Session* s, double ns) {
  return guarded(s, [&] {
    sc_core::sc_start(sc_core::sc_time(ns, sc_core::SC_NS));
    return 0;
  });
}

// 1 when the replay failed (attn_error then holds the replayer's message), 0 otherwise.
int attn_replay_failed(Session* s) {
  if (s->replayer == nullptr || !s->replayer->failed()) return 0;
  s->error = s->replayer->error();
  return 1;
}

int attn_replay_finished(Session* s) { return s->replayer != nullptr && s->replayer->finished(); }

std::uint64_t attn_records_read(Session* s) {
  return s->replayer == nullptr ? 0 : s->replayer->records_read();
}

// Progress reports read the kernel's time between slices, never per operation.
double attn_now_ns(Session*) { return sc_core::sc_time_stamp().to_seconds() * 1e9; }

const char* attn_result_json(Session* s) {
  s->text = s->replayer == nullptr ? std::string("{}") : s->replayer->result_json();
  return s->text.c_str();
}

const char* attn_platform_stats_json(Session* s) {
  s->text = platform_stats(s);
  return s->text.c_str();
}

// Starts taking a snapshot of every statistic when a marked record is issued (before the
// simulation starts).
int attn_observe_iterations(Session* s) {
  return guarded(s, [&] {
    s->iterations.observed = &replayer(s);
    replayer(s).set_issue_observer(
        [s](std::uint64_t pos, tlm_models::Ticks start) { take_snapshot(s, pos, start); });
    return 0;
  });
}

// Iteration `iteration` of the marked loop starts at record `pos`.
void attn_mark_iteration(Session* s, std::uint64_t iteration, std::uint64_t pos) {
  s->iterations.marks[pos] = iteration;
}

// Stops snapshotting (the host has what it needs); marks not reached yet are dropped.
void attn_stop_iteration_snapshots(Session* s) {
  if (s->iterations.observed != nullptr) s->iterations.observed->set_issue_observer(nullptr);
  s->iterations.marks.clear();
}

// The snapshot layout (JSON [[path...], unit] per column), empty before the first snapshot.
const char* attn_snapshot_layout(Session* s) { return s->iterations.layout.c_str(); }

std::uint64_t attn_snapshot_width(Session* s) { return s->iterations.width; }

std::uint64_t attn_snapshot_count(Session* s) { return s->iterations.iterations.size(); }

// Copies the snapshots taken so far (count x width values, iterations, start ticks) and
// forgets them.
void attn_take_snapshots(Session* s, double* rows, std::uint64_t* iterations,
                         std::uint64_t* starts) {
  IterationSnapshots& snaps = s->iterations;
  std::copy(snaps.rows.begin(), snaps.rows.end(), rows);
  std::copy(snaps.iterations.begin(), snaps.iterations.end(), iterations);
  std::copy(snaps.starts.begin(), snaps.starts.end(), starts);
  snaps.rows.clear();
  snaps.iterations.clear();
  snaps.starts.clear();
}

std::uint64_t attn_timeline_size(Session* s) {
  return s->replayer == nullptr ? 0 : s->replayer->timeline_size();
}

void attn_timeline_copy(Session* s, void* out) {
  if (s->replayer != nullptr) s->replayer->timeline_copy(out);
}

// A memory channel's busy intervals as (start, end) picosecond pairs; null when the component
// logs none. `count` receives the number of intervals.
const std::uint64_t* attn_channel_activity(Session* s, const char* component, unsigned channel,
                                           std::uint64_t* count) {
  *count = 0;
  Component* c = find(s, component);
  if (c == nullptr || !c->channel_activity) return nullptr;
  const auto* log = c->channel_activity(channel);
  *count = log->size();
  static_assert(sizeof(tlm_models::BusyInterval) == 2 * sizeof(std::uint64_t));
  return reinterpret_cast<const std::uint64_t*>(log->data());
}

// Starts logging the requests `component` receives; 1 when it keeps no request log.
int attn_enable_request_log(Session* s, const char* component, std::uint64_t max_requests) {
  return guarded(s, [&] {
    Component* c = find(s, component);
    if (c == nullptr || !c->enable_request_log) return fail(s, "no request log");
    c->enable_request_log(max_requests);
    return 0;
  });
}

// The logged requests' count and how many did not fit; copies them when `out` is not null.
std::uint64_t attn_request_log(Session* s, const char* component, void* out,
                               std::uint64_t* dropped) {
  Component* c = find(s, component);
  *dropped = 0;
  if (c == nullptr || !c->request_log_size) return 0;
  *dropped = c->request_log_dropped();
  if (out != nullptr) c->request_log_copy(out);
  return c->request_log_size();
}

int attn_has_activity(Session* s, const char* component) {
  Component* c = find(s, component);
  return c != nullptr && static_cast<bool>(c->channel_activity);
}

// STL memory traces ------------------------------------------------------------------------

// Ticks of the kernel's time resolution per second (1e12 at the default 1 ps).
double attn_ticks_per_second() { return 1.0 / sc_core::sc_get_time_resolution().to_seconds(); }

// Binds an STL player to the target socket of `memory`; 2 when its Params check rejects the
// values (attn_error holds why).
int attn_stl_player_new(Session* s, const char* memory, int relative, std::uint64_t max_length,
                        unsigned max_outstanding) {
  return guarded(s, [&] {
    Component* c = find(s, memory);
    if (c == nullptr) return fail(s, std::string("no component ") + memory);
    auto target = c->targets.find("target");
    if (target == c->targets.end()) return fail(s, std::string(memory) + " has no target socket");
    tlm_models::StlPlayer::Params p;
    p.relative = relative != 0;
    p.max_length = max_length;
    p.max_outstanding = max_outstanding;
    std::string problem = p.check();
    if (!problem.empty()) {
      s->error = problem;
      return 2;
    }
    s->player = new tlm_models::StlPlayer("stl_player", p);
    s->player->socket.bind(*target->second);
    return 0;
  });
}

// Appends `count` requests (columns; read once, reusable at once), before the run.
int attn_stl_feed(Session* s, const std::uint64_t* time_ps, const std::uint8_t* is_write,
                  const std::uint64_t* address, const std::uint32_t* length,
                  std::uint64_t count) {
  return guarded(s, [&] {
    if (s->player == nullptr) return fail(s, "the session has no STL player");
    s->player->feed(time_ps, is_write, address, length, count);
    return 0;
  });
}

// Plays everything fed, to the last completion.
int attn_stl_run(Session* s) {
  return guarded(s, [&] {
    if (s->player == nullptr) return fail(s, "the session has no STL player");
    s->started = true;
    sc_core::sc_start();
    return 0;
  });
}

// The player's failure ("request 12: ..."), empty when it played every request.
const char* attn_stl_error(Session* s) {
  s->text = s->player == nullptr ? std::string() : s->player->error();
  return s->text.c_str();
}

// The player's statistics (StatsGroup JSON: requests, bytes, span, latency and its histogram).
const char* attn_stl_stats_json(Session* s) {
  tlm_models::StatsGroup g("stl_player");
  if (s->player != nullptr) s->player->collect_stats(g);
  s->text = g.to_json();
  return s->text.c_str();
}

// Every completed request's latency in ticks, trace order (attn_stl_stats_json's `requests`).
void attn_stl_latency_copy(Session* s, std::uint64_t* out) {
  if (s->player != nullptr) s->player->latency_copy(out);
}

}  // extern "C"
