// Issues a configurable stream of reads or writes into a target and measures what it achieved;
// the simplest initiator, used to characterise memories and to prove the Python <-> C++ chain.
// Loosely timed with a bound on requests in flight; formulas in docs/models/traffic_generator.md.
#ifndef TLM_MODELS_TRAFFIC_GENERATOR_H
#define TLM_MODELS_TRAFFIC_GENERATOR_H

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "tlm_models/latency_stats.h"
#include "tlm_models/params_generated.h"
#include "tlm_models/params_check.h"
#include "tlm_models/stats.h"
#include "tlm_models/time_ticks.h"

namespace tlm_models {

class TrafficGenerator : public sc_core::sc_module, public StatsProvider {
 public:
  // The fields and their defaults: TrafficGeneratorParamFields (params_generated.h, generated from
  // the component registry).
  struct Params : TrafficGeneratorParamFields {
    std::string check() const {
      std::string error = check_fields();
      if (!error.empty()) return error;
      if (request_size > 0xffffffffu) return "request_size must fit a TLM data length (< 4 GiB)";
      if (range < request_size) return "range must hold at least one request (range >= request_size)";
      return "";
    }
  };

  tlm_utils::simple_initiator_socket<TrafficGenerator> socket;

  TrafficGenerator(sc_core::sc_module_name name, const Params& p)
      : sc_core::sc_module(name), socket("socket"), p_(p) {
    params_valid(p, this->name(), "tlm_models/traffic_generator");
    SC_HAS_PROCESS(TrafficGenerator);
    SC_THREAD(run);
  }

  const Params& params() const { return p_; }
  bool done() const { return done_; }
  const sc_core::sc_event& done_event() const { return done_event_; }
  std::uint64_t completed() const { return completed_; }
  std::uint64_t errors() const { return errors_; }
  std::uint64_t bytes() const { return bytes_; }
  sc_core::sc_time first_issue() const { return from_ticks(first_issue_); }
  // The latest completion over all requests: when the whole stream has finished.
  sc_core::sc_time last_completion() const { return from_ticks(last_completion_); }
  // bytes / (last_completion - first_issue)
  double achieved_bandwidth() const {
    Ticks span = last_completion_ - first_issue_;
    return span ? static_cast<double>(bytes_) / ticks_to_seconds(span) : 0.0;
  }
  double mean_latency_ns() const { return latency_.mean_ns(); }

  // The address of request i (sequential wraps within the range; random draws are aligned to
  // request_size). Exposed so tests and tools can reproduce the stream.
  std::uint64_t address_of(std::uint64_t i, std::mt19937_64& rng) const {
    std::uint64_t slots = p_.range / p_.request_size;
    std::uint64_t slot = p_.pattern == "random" ? rng() % slots : i % slots;
    return p_.base + slot * p_.request_size;
  }

  void collect_stats(StatsGroup& g) const override {
    g.add("requests", static_cast<double>(completed_), "requests", "requests completed");
    g.add("errors", static_cast<double>(errors_), "requests", "requests answered with an error");
    g.add("bytes", static_cast<double>(bytes_), "B", "bytes transferred by completed requests");
    g.add("first_issue", ticks_to_ns(first_issue_), "ns", "issue time of the first request");
    g.add("last_completion", ticks_to_ns(last_completion_), "ns", "latest request completion");
    g.add("achieved_bandwidth", achieved_bandwidth(), "B/s", "bytes / (last_completion - first_issue)");
    latency_.collect(g);
  }

  void reset_stats() override {
    completed_ = errors_ = bytes_ = 0;
    latency_.reset();
  }

 private:
  // issue(i) = max(issue(i-1), completion(i - max_outstanding)); the thread waits until each
  // issue time and calls with a zero delay, so several initiators reach a shared target in
  // nondecreasing arrival time.
  void run() {
    bool write = p_.command == "write";
    std::vector<unsigned char> data(p_.request_size);
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<unsigned char>(i);
    std::vector<Ticks> completions(p_.max_outstanding, 0);  // ring: completion(i - max_outstanding)
    std::mt19937_64 rng(p_.seed);
    tlm::tlm_generic_payload t;
    Ticks issue = to_ticks(sc_core::sc_time_stamp());
    first_issue_ = last_completion_ = issue;
    for (std::uint64_t i = 0; i < p_.requests; ++i) {
      Ticks& slot = completions[i % p_.max_outstanding];
      if (i >= p_.max_outstanding) issue = std::max(issue, slot);
      Ticks now = to_ticks(sc_core::sc_time_stamp());
      if (issue > now) sc_core::wait(from_ticks(issue - now));
      issue = std::max(issue, now);  // a target that waited in b_transport leaves us late
      t.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
      t.set_address(address_of(i, rng));
      t.set_data_ptr(data.data());
      t.set_data_length(static_cast<unsigned>(p_.request_size));
      t.set_streaming_width(static_cast<unsigned>(p_.request_size));
      t.set_byte_enable_ptr(nullptr);
      t.set_dmi_allowed(false);
      t.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
      sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
      socket->b_transport(t, delay);
      Ticks done = to_ticks(sc_core::sc_time_stamp()) + to_ticks(delay);
      slot = done;
      last_completion_ = std::max(last_completion_, done);
      ++completed_;
      if (t.is_response_ok()) {
        bytes_ += p_.request_size;
        latency_.record(done - issue);
      } else {
        ++errors_;
      }
    }
    Ticks now = to_ticks(sc_core::sc_time_stamp());
    if (last_completion_ > now) sc_core::wait(from_ticks(last_completion_ - now));
    done_ = true;
    done_event_.notify(sc_core::SC_ZERO_TIME);
  }

  Params p_;
  bool done_ = false;
  sc_core::sc_event done_event_;
  std::uint64_t completed_ = 0, errors_ = 0, bytes_ = 0;
  Ticks first_issue_ = 0, last_completion_ = 0;
  LatencyStats latency_;
};

}  // namespace tlm_models

#endif  // TLM_MODELS_TRAFFIC_GENERATOR_H
