// Plays a DRAMSys-style STL memory trace into a target as timed LT requests and measures what the
// memory achieved: bandwidth, per-request latency (mean, max, histogram, and every request's own),
// bytes read and written. The requests arrive as column arrays (time, command, address, length),
// copied in bulk before or between sc_start calls; no callback leaves C++ per request.
//
// Timing: in absolute mode (.stl) request i is issued at time_ps[i]; in relative mode (.rstl) at
// the previous request's completion plus time_ps[i] (the first one at time_ps[0]). Each request is
// one b_transport with a zero delay issued at its own time, so a shared target sees arrivals in
// nondecreasing time order; the latency is the annotated delay on return. `max_outstanding`
// threads issue the requests in trace order, as a traffic generator keeps that many in flight:
// against a target whose b_transport waits (HbmMemory's queued mode) a request waits for a free
// thread, i.e. is issued at max(its time, a completion); a target that answers at once never
// holds a thread, so there the count changes nothing.
#ifndef TLM_MODELS_STL_PLAYER_H
#define TLM_MODELS_STL_PLAYER_H

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <systemc>
#include <sysc/kernel/sc_dynamic_processes.h>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "tlm_models/latency_stats.h"
#include "tlm_models/params_check.h"
#include "tlm_models/stats.h"
#include "tlm_models/time_ticks.h"

namespace tlm_models {

class StlPlayer : public sc_core::sc_module, public StatsProvider {
 public:
  struct Params {
    bool relative = false;  // .rstl: times are delays after the previous completion
    // Largest single request; bounds the data buffer a request may need.
    std::uint64_t max_length = std::uint64_t{64} << 20;
    unsigned max_outstanding = 1;  // requests in flight at once (issuing threads)

    std::string check() const {
      if (max_length == 0 || max_length > 0xffffffffu)
        return "max_length must be 1 B .. 4 GiB - 1 (a TLM data length)";
      if (max_outstanding == 0) return "max_outstanding must be at least 1";
      if (relative && max_outstanding > 1)
        return "max_outstanding > 1 needs absolute times (.stl): relative times follow the "
               "previous request's completion";
      return "";
    }
  };

  tlm_utils::simple_initiator_socket<StlPlayer> socket;

  StlPlayer(sc_core::sc_module_name name, const Params& p)
      : sc_core::sc_module(name), socket("socket"), p_(p) {
    params_valid(p, this->name(), "tlm_models/stl_player");
    for (unsigned i = 0; i < p.max_outstanding; ++i)
      sc_core::sc_spawn([this] { run(); }, ("issuer" + std::to_string(i)).c_str());
  }

  // Appends `count` requests; the arrays are read once and may be reused at once. Before the
  // thread has consumed them (i.e. before sc_start) only: the player plays what it holds.
  void feed(const std::uint64_t* time_ps, const std::uint8_t* is_write,
            const std::uint64_t* address, const std::uint32_t* length, std::uint64_t count) {
    if (started_) throw std::logic_error("StlPlayer::feed after the simulation started");
    requests_.reserve(requests_.size() + count);
    for (std::uint64_t i = 0; i < count; ++i)
      requests_.push_back({time_ps[i], address[i], length[i], is_write[i] != 0});
  }

  std::uint64_t size() const { return requests_.size(); }
  bool finished() const { return finished_; }
  bool failed() const { return !error_.empty(); }
  const std::string& error() const { return error_; }

  std::uint64_t completed() const { return completed_; }
  std::uint64_t reads() const { return reads_; }
  std::uint64_t writes() const { return writes_; }
  std::uint64_t bytes_read() const { return bytes_read_; }
  std::uint64_t bytes_written() const { return bytes_written_; }
  sc_core::sc_time first_issue() const { return from_ticks(first_issue_); }
  sc_core::sc_time last_completion() const { return from_ticks(last_completion_); }
  const LatencyStats& latency() const { return latency_; }

  // bytes / (last completion - first issue): what the memory delivered over the busy span.
  double achieved_bandwidth() const {
    Ticks span = last_completion_ - first_issue_;
    return span ? static_cast<double>(bytes_read_ + bytes_written_) / ticks_to_seconds(span) : 0.0;
  }

  // Latency of every completed request in trace order, in ticks (ps at the default resolution):
  // completed() values, from the first request taken since reset_stats().
  void latency_copy(std::uint64_t* out) const {
    const std::uint64_t n = std::min<std::uint64_t>(completed_, latencies_.size() - latency_base_);
    std::copy_n(latencies_.begin() + static_cast<std::ptrdiff_t>(latency_base_), n, out);
  }

  void collect_stats(StatsGroup& g) const override {
    g.add("requests", static_cast<double>(completed_), "requests", "requests completed");
    g.add("reads", static_cast<double>(reads_), "requests", "read requests completed");
    g.add("writes", static_cast<double>(writes_), "requests", "write requests completed");
    g.add("bytes_read", static_cast<double>(bytes_read_), "B", "bytes read");
    g.add("bytes_written", static_cast<double>(bytes_written_), "B", "bytes written");
    g.add("first_issue", ticks_to_ns(first_issue_), "ns", "issue time of the first request");
    g.add("last_completion", ticks_to_ns(last_completion_), "ns", "latest request completion");
    g.add("achieved_bandwidth", achieved_bandwidth(), "B/s",
          "bytes / (last_completion - first_issue)");
    latency_.collect(g);
  }

  void reset_stats() override {
    completed_ = reads_ = writes_ = bytes_read_ = bytes_written_ = 0;
    latency_.reset();
    latency_base_ = next_;
  }

 private:
  // 24 bytes instead of the parser's 21 packed ones: aligned fields for the hot loop.
  struct Request {
    std::uint64_t time_ps;
    std::uint64_t address;
    std::uint32_t length;
    bool is_write;
  };

  // Checks what the player holds and sizes the shared buffers; the first issuing thread calls it.
  bool prepare() {
    started_ = true;
    std::uint64_t longest = 0;
    for (const Request& r : requests_) longest = std::max<std::uint64_t>(longest, r.length);
    if (longest > p_.max_length) {
      fail_at(0, "a request of " + std::to_string(longest) + " B exceeds max_length");
      return false;
    }
    // One data buffer for every thread: the player never looks at the bytes it moves.
    data_.resize(static_cast<std::size_t>(longest));
    latencies_.assign(requests_.size(), 0);
    return true;
  }

  // Body of each issuing thread: takes the next request in trace order until none is left.
  void run() {
    if (!started_ && !prepare()) return;
    ++running_;
    tlm::tlm_generic_payload t;
    const Ticks ps = to_ticks(sc_core::sc_time(1, sc_core::SC_PS));
    while (next_ < requests_.size() && error_.empty()) {
      const std::uint64_t i = next_++;
      const Request& r = requests_[i];
      Ticks issue = r.time_ps * ps;
      if (p_.relative && i > 0) issue += previous_done_;
      Ticks now = to_ticks(sc_core::sc_time_stamp());
      // An absolute time already passed cannot happen (the parser rejects decreasing times),
      // but a target that waits inside b_transport may leave us late: issue at once then.
      if (issue > now) sc_core::wait(from_ticks(issue - now));
      issue = std::max(issue, now);
      if (i == 0) first_issue_ = issue;
      t.set_command(r.is_write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
      t.set_address(r.address);
      t.set_data_ptr(data_.data());
      t.set_data_length(r.length);
      t.set_streaming_width(r.length);
      t.set_byte_enable_ptr(nullptr);
      t.set_byte_enable_length(0);
      t.set_dmi_allowed(false);
      t.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
      sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
      socket->b_transport(t, delay);
      if (!t.is_response_ok()) {
        fail_at(i, std::string(r.is_write ? "write" : "read") + " of " +
                       std::to_string(r.length) + " B at " + hex(r.address) + " failed: " +
                       t.get_response_string());
        return;
      }
      Ticks done = to_ticks(sc_core::sc_time_stamp()) + to_ticks(delay);
      last_completion_ = std::max(last_completion_, done);
      previous_done_ = done;
      latency_.record(done - issue);
      latencies_[i] = done - issue;
      ++completed_;
      if (r.is_write) {
        ++writes_;
        bytes_written_ += r.length;
      } else {
        ++reads_;
        bytes_read_ += r.length;
      }
    }
    if (--running_ > 0 || !error_.empty()) return;
    // The last thread ends at the last completion so the kernel's time is the trace's time.
    Ticks now = to_ticks(sc_core::sc_time_stamp());
    if (last_completion_ > now) sc_core::wait(from_ticks(last_completion_ - now));
    finished_ = true;
  }

  void fail_at(std::uint64_t index, const std::string& what) {
    error_ = "request " + std::to_string(index) + ": " + what;
    finished_ = true;
    sc_core::sc_stop();
  }

  static std::string hex(std::uint64_t value) {
    std::ostringstream os;
    os << "0x" << std::hex << value;
    return os.str();
  }

  Params p_;
  std::vector<Request> requests_;
  std::vector<Ticks> latencies_;  // trace order
  std::vector<unsigned char> data_;
  std::uint64_t next_ = 0;        // the next request a thread takes
  std::uint64_t latency_base_ = 0;  // the first request latency_copy reports
  unsigned running_ = 0;          // issuing threads not yet done
  Ticks previous_done_ = 0;       // relative mode: completion of the last request
  bool started_ = false, finished_ = false;
  std::string error_;
  std::uint64_t completed_ = 0, reads_ = 0, writes_ = 0, bytes_read_ = 0, bytes_written_ = 0;
  Ticks first_issue_ = 0, last_completion_ = 0;
  LatencyStats latency_;
};

}  // namespace tlm_models

#endif  // TLM_MODELS_STL_PLAYER_H
