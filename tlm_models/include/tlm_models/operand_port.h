// The SRAM traffic of a compute engine (PE array, Exp unit): one read transaction per operand
// block and one write for the result, all requested when the operation starts, because the
// engines stream operands in and results out while they compute. The engines model timing
// only: every transaction carries the TimingOnly marker, so memories that understand it move
// no bytes; for one that does not, reads land in a scratch buffer and writes carry zeros.
#ifndef TLM_MODELS_OPERAND_PORT_H
#define TLM_MODELS_OPERAND_PORT_H

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "tlm_models/block_access.h"
#include "tlm_models/op_executor.h"
#include "tlm_models/time_ticks.h"

namespace tlm_models {

class OperandPort {
 public:
  OperandPort(BlockAccess::Socket& socket, const std::string& owner, std::uint64_t elem_bytes,
              bool enabled)
      : access_(socket, owner, /*timing_only=*/true), owner_(owner), elem_bytes_(elem_bytes), enabled_(enabled) {}

  bool enabled() const { return enabled_; }

  // Starts the traffic of one operation requested at `start`.
  void begin(Ticks start) {
    start_ = start;
    now_ = now_ticks();  // the operation's accesses are booked without waiting
    last_completion_ = start;
    last_read_completion_ = start;
  }

  void read(std::uint64_t address, std::uint64_t elements) {
    if (!enabled_ || elements == 0) return;
    std::uint32_t bytes = block_bytes(elements);
    Ticks completion;
    if (!access_.timed(false, address, bytes, start_, now_, completion)) {  // the buffer is for the sockets
      if (read_buf_.size() < bytes) read_buf_.resize(bytes);
      completion = access_.read(address, read_buf_.data(), bytes, start_);
    }
    note(completion);
    if (completion > last_read_completion_) last_read_completion_ = completion;
    bytes_read_ += bytes;
  }

  void write(std::uint64_t address, std::uint64_t elements) {
    if (!enabled_ || elements == 0) return;
    std::uint32_t bytes = block_bytes(elements);
    Ticks completion;
    if (!access_.timed(true, address, bytes, start_, now_, completion)) {
      if (zeros_.size() < bytes) zeros_.resize(bytes, 0);
      completion = access_.write(address, zeros_.data(), bytes, start_);
    }
    note(completion);
    bytes_written_ += bytes;
  }

  // Latest completion of this operation's transactions (`start` when there were none).
  Ticks completion() const { return last_completion_; }
  // Latest completion of this operation's operand reads (`start` when there were none).
  Ticks read_completion() const { return last_read_completion_; }

  std::uint64_t bytes_read() const { return bytes_read_; }
  std::uint64_t bytes_written() const { return bytes_written_; }
  void reset_stats() { bytes_read_ = bytes_written_ = 0; }

 private:
  std::uint32_t block_bytes(std::uint64_t elements) const {
    std::uint64_t bytes = elements * elem_bytes_;
    if (bytes > std::numeric_limits<std::uint32_t>::max())
      throw OpError(owner_ + ": operand block of " + std::to_string(bytes) +
                    " B exceeds one transaction (4 GiB)");
    return static_cast<std::uint32_t>(bytes);
  }

  void note(Ticks completion) {
    if (completion > last_completion_) last_completion_ = completion;
  }

  BlockAccess access_;
  std::string owner_;
  std::uint64_t elem_bytes_;
  bool enabled_;
  Ticks start_ = 0;
  Ticks now_ = 0;  // simulation time at begin()
  Ticks last_completion_ = 0;
  Ticks last_read_completion_ = 0;
  std::vector<unsigned char> read_buf_;
  std::vector<unsigned char> zeros_;  // never written, so writes always carry zeros
  std::uint64_t bytes_read_ = 0;
  std::uint64_t bytes_written_ = 0;
};

}  // namespace tlm_models

#endif  // TLM_MODELS_OPERAND_PORT_H
