// Issues one loosely-timed TLM-2.0 read or write of a contiguous block through an initiator
// socket at an absolute simulated time, and checks its response. Engines call it on their hot
// path, so it reuses one payload (b_transport is complete when it returns, so the payload is
// never in flight when it is reused) and allocates nothing.
#ifndef TLM_MODELS_BLOCK_ACCESS_H
#define TLM_MODELS_BLOCK_ACCESS_H

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>

#include <systemc>
#include <tlm>

#include "tlm_models/op_executor.h"
#include "tlm_models/time_ticks.h"
#include "tlm_models/timed_path.h"
#include "tlm_models/timing_only.h"

namespace tlm_models {

class BlockAccess {
 public:
  using Socket = tlm::tlm_initiator_socket<>;

  // `owner` names the issuer in error messages (e.g. "top.dma.channel0"). With `timing_only`
  // every transaction carries the TimingOnly marker (timing_only.h).
  BlockAccess(Socket& socket, std::string owner, bool timing_only = false)
      : socket_(socket), owner_(std::move(owner)), timing_only_(timing_only) {
    if (timing_only) payload_.set_extension(new TimingOnly);  // the payload owns and frees it
  }

  BlockAccess(const BlockAccess&) = delete;
  BlockAccess& operator=(const BlockAccess&) = delete;

  // Moves `bytes` between `data` and `address`, requested at absolute time `at`
  // (>= sc_time_stamp()); returns the absolute completion time the target annotated.
  Ticks read(std::uint64_t address, unsigned char* data, std::uint32_t bytes, Ticks at) {
    if (Ticks done; timing_only_ && timed_hit(false, address, bytes, at, now_ticks(), done)) return done;
    return transport(tlm::TLM_READ_COMMAND, address, data, bytes, at);
  }
  Ticks write(std::uint64_t address, unsigned char* data, std::uint32_t bytes, Ticks at) {
    if (Ticks done; timing_only_ && timed_hit(true, address, bytes, at, now_ticks(), done)) return done;
    return transport(tlm::TLM_WRITE_COMMAND, address, data, bytes, at);
  }

  // A timing-only access through a timed path used last (timed_hit below), `now` being the
  // current simulation time: true with its completion in `done`, false when read() or write()
  // must take it.
  bool timed(bool write, std::uint64_t address, std::uint32_t bytes, Ticks at, Ticks now, Ticks& done) {
    return timed_hit(write, address, bytes, at, now, done);
  }

 private:
  // A timing-only access inside the range of one of the two timed paths taken last (`hot_`),
  // requested now or later: the booking transport() would reach, called here without its call,
  // its payload branch and its search of the answers (an engine's operands lie in one or two
  // ranges: the scratchpad, a row buffer). Every answer of the path books exactly as
  // b_transport does (timed_path.h), so which answer holding for the range is called changes
  // nothing. Anything else (no path yet, another range, a request in the past that transport()
  // reports) returns false for transport().
  __attribute__((always_inline)) bool timed_hit(bool write, std::uint64_t address, std::uint32_t bytes,
                                                Ticks at, Ticks now, Ticks& done) {
    if (bytes == 0) return false;
    const TimedPathProbe* hot = covers(hot_[0], address, bytes) ? &hot_[0]
                                : covers(hot_[1], address, bytes) ? &hot_[1]
                                                                  : nullptr;
    if (hot == nullptr || at < now) return false;
    done = hot->target->timed_access(hot->input, write, address, bytes, at, now);
    return true;
  }
  static bool covers(const TimedPathProbe& p, std::uint64_t address, std::uint32_t bytes) {
    return p.target != nullptr && address >= p.first && address <= p.last && bytes - 1 <= p.last - address;
  }

  Ticks transport(tlm::tlm_command cmd, std::uint64_t address, unsigned char* data,
                  std::uint32_t bytes, Ticks at) {
    const Ticks now = now_ticks();
    if (at < now) fail(cmd, address, bytes, "requested in the past");
    if (timing_only_ && bytes != 0) {  // timed_path.h: the same booking without the sockets
      const TimedPathProbe& path = paths_.lookup(*socket_.operator->(), address, bytes);
      if (path.target) {
        if (path.first != hot_[0].first || path.target != hot_[0].target) hot_[1] = hot_[0];
        hot_[0] = path;
        return path.target->timed_access(path.input, cmd == tlm::TLM_WRITE_COMMAND, address, bytes, at, now);
      }
    }
    payload_.set_command(cmd);
    payload_.set_address(address);
    payload_.set_data_ptr(data);
    payload_.set_data_length(bytes);
    payload_.set_streaming_width(bytes);
    payload_.set_byte_enable_ptr(nullptr);
    payload_.set_byte_enable_length(0);
    payload_.set_dmi_allowed(false);
    payload_.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    sc_core::sc_time delay = from_ticks(at - now);
    socket_->b_transport(payload_, delay);
    if (payload_.get_response_status() != tlm::TLM_OK_RESPONSE)
      fail(cmd, address, bytes, payload_.get_response_string().c_str());
    return add_ticks(now, to_ticks(delay));
  }

  [[noreturn]] void fail(tlm::tlm_command cmd, std::uint64_t address, std::uint32_t bytes,
                         const char* why) const {
    char buf[160];
    std::snprintf(buf, sizeof buf, ": %s of %" PRIu32 " B at 0x%" PRIx64 " failed: %s",
                  cmd == tlm::TLM_READ_COMMAND ? "read" : "write", bytes, address, why);
    throw OpError(owner_ + buf);
  }

  Socket& socket_;
  std::string owner_;
  bool timing_only_;
  TimedPaths paths_;  // where timing-only accesses bypass the sockets
  TimedPathProbe hot_[2];  // the answers used last, latest first (target null: none); timed_hit()
  tlm::tlm_generic_payload payload_;
};

}  // namespace tlm_models

#endif  // TLM_MODELS_BLOCK_ACCESS_H
