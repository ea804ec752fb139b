// An initiator whose requests come from outside in chunks: a host program (a Python script
// through cppyy, a C++ test) hands it arrays of FedRequest records, it issues them as LT
// b_transport calls from its SC_THREAD and writes each completion time and response status back
// into the record. The host is asked for the next chunk only when the current one is used up,
// so the per-transaction path stays in C++ (docs/python-systemc.md).
//
// Timing (as TrafficGenerator, docs/models/traffic_generator.md): request i is issued at
//   issue(i) = max(issue_ps(i), completion(i - max_outstanding), issue(i-1))
// with a zero annotated delay, and completes at sc_time_stamp() + the returned delay.
#ifndef TLM_MODELS_FED_TRAFFIC_GENERATOR_H
#define TLM_MODELS_FED_TRAFFIC_GENERATOR_H

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "tlm_models/latency_stats.h"
#include "tlm_models/stats.h"
#include "tlm_models/time_ticks.h"

namespace tlm_models {

// One request as the host lays it out (numpy: tlm_models.systemc.REQUEST_DTYPE, 40 bytes).
struct FedRequest {
  std::uint64_t issue_ps;  // earliest issue time, absolute simulated time in ps
  std::uint64_t address;
  std::uint32_t length;  // bytes, at least 1
  std::uint8_t write;    // 0 = read, 1 = write
  std::uint8_t reserved[3];
  std::uint64_t done_ps;  // written back: completion time in ps
  std::int32_t status;    // written back: tlm::tlm_response_status (1 = OK)
  std::uint32_t reserved2;
};
static_assert(sizeof(FedRequest) == 40, "FedRequest is shared with numpy: 40 bytes");

class FedTrafficGenerator : public sc_core::sc_module, public StatsProvider {
 public:
  struct Params {
    unsigned max_outstanding = 1;
    // The host's refill runs on this thread's stack (a Python call, numpy): SystemC's default
    // 64-256 KiB is too small for that (docs/python-systemc.md, "Limits").
    std::uint64_t stack_size = 8u << 20;

    std::string check() const {
      if (max_outstanding == 0) return "max_outstanding must be at least 1";
      if (stack_size < (64u << 10)) return "stack_size must be at least 64 KiB";
      return "";
    }
  };

  // Called when the current chunk is used up: > 0 after feed() gave a new chunk, 0 at the end
  // of the stream, < 0 when the host failed (the generator stops and calls sc_stop()).
  using Refill = std::function<int()>;

  tlm_utils::simple_initiator_socket<FedTrafficGenerator> socket;

  FedTrafficGenerator(sc_core::sc_module_name name, const Params& p)
      : sc_core::sc_module(name), socket("socket"), p_(p), completions_(std::max(1u, p.max_outstanding), 0) {
    std::string err = p.check();
    if (!err.empty())
      SC_REPORT_FATAL("tlm_models/fed_traffic_generator", (std::string(this->name()) + ": " + err).c_str());
    SC_HAS_PROCESS(FedTrafficGenerator);
    SC_THREAD(run);
    set_stack_size(static_cast<std::size_t>(p.stack_size));
  }

  void set_refill(Refill refill) { refill_ = std::move(refill); }

  // The next `count` requests are at `records` (a FedRequest array the host keeps alive until
  // it is asked for the next chunk).
  void feed(std::uintptr_t records, std::size_t count) {
    chunk_ = reinterpret_cast<FedRequest*>(records);
    count_ = count;
    next_ = 0;
  }

  bool done() const { return done_; }
  bool failed() const { return failed_; }
  std::uint64_t requests() const { return reads_ + writes_; }
  std::uint64_t errors() const { return errors_; }
  std::uint64_t bytes_read() const { return bytes_read_; }
  std::uint64_t bytes_written() const { return bytes_written_; }
  std::uint64_t chunks() const { return chunks_; }

  void collect_stats(StatsGroup& g) const override {
    g.add("requests", static_cast<double>(reads_ + writes_), "requests", "requests completed");
    g.add("reads", static_cast<double>(reads_), "requests", "read requests completed");
    g.add("writes", static_cast<double>(writes_), "requests", "write requests completed");
    g.add("errors", static_cast<double>(errors_), "requests", "requests answered with an error");
    g.add("bytes_read", static_cast<double>(bytes_read_), "B", "bytes of reads answered OK");
    g.add("bytes_written", static_cast<double>(bytes_written_), "B", "bytes of writes answered OK");
    g.add("chunks", static_cast<double>(chunks_), "chunks", "request chunks the host fed");
    g.add("first_issue", ticks_to_ns(first_issue_), "ns", "issue time of the first request");
    g.add("last_completion", ticks_to_ns(last_completion_), "ns", "latest request completion");
    latency_.collect(g);
  }

  void reset_stats() override {
    reads_ = writes_ = errors_ = bytes_read_ = bytes_written_ = chunks_ = 0;
    latency_.reset();
  }

 private:
  static Ticks ps_to_ticks(std::uint64_t ps) {
    return to_ticks(sc_core::sc_time(static_cast<double>(ps), sc_core::SC_PS));
  }
  static std::uint64_t ticks_to_ps(Ticks t) {
    return static_cast<std::uint64_t>(std::llround(ticks_to_seconds(t) * 1e12));
  }

  // Asks the host for the next chunk; false at the end of the stream or on failure.
  bool next_chunk() {
    while (next_ == count_) {
      int got = refill_ ? refill_() : 0;
      if (got < 0) {
        failed_ = true;
        sc_core::sc_stop();
        return false;
      }
      if (got == 0) return false;
      ++chunks_;
    }
    return true;
  }

  void run() {
    std::vector<unsigned char> data;
    tlm::tlm_generic_payload t;
    Ticks issue = now_ticks();
    first_issue_ = last_completion_ = issue;
    bool first = true;
    for (std::uint64_t i = 0; next_chunk(); ++i) {
      FedRequest& r = chunk_[next_++];
      Ticks& slot = completions_[i % completions_.size()];
      issue = std::max(issue, ps_to_ticks(r.issue_ps));
      if (i >= completions_.size()) issue = std::max(issue, slot);
      Ticks now = now_ticks();
      if (issue > now) sc_core::wait(from_ticks(issue - now));
      issue = std::max(issue, now);  // a target that waited in b_transport leaves us late
      if (first) first_issue_ = issue, first = false;
      if (data.size() < r.length) data.resize(r.length);
      t.set_command(r.write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
      t.set_address(r.address);
      t.set_data_ptr(data.data());
      t.set_data_length(r.length);
      t.set_streaming_width(r.length);
      t.set_byte_enable_ptr(nullptr);
      t.set_dmi_allowed(false);
      t.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
      sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
      socket->b_transport(t, delay);
      Ticks done = now_ticks() + to_ticks(delay);
      slot = done;
      last_completion_ = std::max(last_completion_, done);
      r.done_ps = ticks_to_ps(done);
      r.status = static_cast<std::int32_t>(t.get_response_status());
      ++(r.write ? writes_ : reads_);
      if (t.is_response_ok()) {
        (r.write ? bytes_written_ : bytes_read_) += r.length;
        latency_.record(done - issue);
      } else {
        ++errors_;
      }
    }
    if (failed_) return;
    Ticks now = now_ticks();
    if (last_completion_ > now) sc_core::wait(from_ticks(last_completion_ - now));
    done_ = true;
  }

  Params p_;
  Refill refill_;
  FedRequest* chunk_ = nullptr;
  std::size_t count_ = 0, next_ = 0;
  std::vector<Ticks> completions_;  // ring: completion(i - max_outstanding)
  bool done_ = false, failed_ = false;
  std::uint64_t reads_ = 0, writes_ = 0, errors_ = 0, bytes_read_ = 0, bytes_written_ = 0, chunks_ = 0;
  Ticks first_issue_ = 0, last_completion_ = 0;
  LatencyStats latency_;
};

}  // namespace tlm_models

#endif  // TLM_MODELS_FED_TRAFFIC_GENERATOR_H
