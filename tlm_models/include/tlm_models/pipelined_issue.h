// Timing of one operation on an in-order pipelined compute engine (PE array, Exp unit), shared
// by both. The engine accepts its next operation once the current one has been issued and its
// operands have been read; the result is available after the pipeline latency and its write.
// Formulas: docs/models/pe_array.md ("Pipelined issue").
#ifndef TLM_MODELS_PIPELINED_ISSUE_H
#define TLM_MODELS_PIPELINED_ISSUE_H

#include <array>
#include <cstdint>
#include <string>

#include "tlm_models/block_access.h"
#include "tlm_models/busy_time.h"
#include "tlm_models/op_executor.h"
#include "tlm_models/operand_port.h"
#include "tlm_models/result_scoreboard.h"
#include "tlm_models/stats.h"
#include "tlm_models/time_ticks.h"

namespace tlm_models {

// The on-chip blocks one operation reads and the one it writes, in elements.
struct OperandBlocks {
  struct Block {
    std::uint64_t address;
    std::uint64_t elements;
  };
  // Only the first read_count reads are ever looked at, so they are left uninitialised (an
  // operation builds one of these per execution: zeroing four blocks cost it 11 instructions).
  std::array<Block, 4> reads;
  unsigned read_count = 0;
  Block write{0, 0};

  void read(std::uint64_t address, std::uint64_t elements) { reads[read_count++] = Block{address, elements}; }
};

// Cycle counts of one operation (docs/models/pe_array.md, "Pipelined issue" and "Forwarding").
struct IssueCycles {
  std::uint64_t issue = 0;    // cycles the operation occupies the issue stage
  std::uint64_t latency = 0;  // cycles from the end of issue until the result leaves
  std::uint64_t first = 0;    // issue cycles until the first forwarding granule has entered;
                              // 0 = the result is not forwarded (consumers wait for done)
  std::uint64_t tail = 0;     // streamed: issue cycles left after the last input granule arrives
};

// Issue cycles of one forwarding granule: the share of `issue_cycles` that `granularity` of the
// operation's `elements` take, at least one cycle (elements are issued in order at a steady
// rate).
inline std::uint64_t granule_cycles(std::uint64_t issue_cycles, std::uint64_t elements,
                                    std::uint64_t granularity) {
  if (elements == 0 || issue_cycles == 0) return 0;
  const std::uint64_t g = granularity < elements ? granularity : elements;
  const std::uint64_t c = ceil_div(issue_cycles * g, elements);
  return c == 0 ? 1 : c;
}

class PipelinedIssue {
 public:
  PipelinedIssue(BlockAccess::Socket& socket, const std::string& owner, std::uint64_t elem_bytes,
                 bool sram_traffic, Ticks period)
      : port_(socket, owner, elem_bytes, sram_traffic), elem_bytes_(elem_bytes), period_(period) {}

  // Executes an operation handed over at `requested` that takes `issue_cycles` to enter the
  // pipeline and `total_cycles` (issue plus latency) until its result leaves it.
  TickTiming run(Ticks requested, const OperandBlocks& blocks, std::uint64_t issue_cycles,
               std::uint64_t total_cycles) {
    return run(requested, blocks, IssueCycles{issue_cycles, total_cycles - issue_cycles, 0, 0},
               nullptr);
  }

  // The same with forwarding: `streamed_inputs_done` non-null makes the operation a streamed
  // consumer whose named producers finish at that time.
  TickTiming run(Ticks requested, const OperandBlocks& blocks, const IssueCycles& c,
               const Ticks* streamed_inputs_done) {
    scoreboard_.retire(requested);
    cycles_ += c.issue + c.latency;
    if (streamed_inputs_done) ++streamed_ops_;
    Ticks start = requested;
    Ticks inputs_done = streamed_inputs_done ? *streamed_inputs_done : 0;
    if (streamed_inputs_done) {
      // A stream consumes its operands element by element as they are written and writes its
      // result behind them, so it waits only for the first granule of what is in flight.
      for (unsigned i = 0; i < blocks.read_count; ++i)
        scoreboard_.stream_after(start, inputs_done, blocks.reads[i].address, bytes(blocks.reads[i]));
      scoreboard_.stream_after(start, inputs_done, blocks.write.address, bytes(blocks.write));
    } else {
      for (unsigned i = 0; i < blocks.read_count; ++i)
        start = scoreboard_.clear_after(start, blocks.reads[i].address, bytes(blocks.reads[i]));
      start = scoreboard_.clear_after(start, blocks.write.address, bytes(blocks.write));
    }
    interlock_wait_ += start - requested;

    port_.begin(start);
    for (unsigned i = 0; i < blocks.read_count; ++i)
      port_.read(blocks.reads[i].address, blocks.reads[i].elements);
    port_.write(blocks.write.address, blocks.write.elements);

    // Checked sums: a slow clock on a long run must not wrap past SystemC's time range.
    Ticks issue_end = after_cycles(start, c.issue, period_);
    // The last input granule arrives at inputs_done; what depends on it issues after that.
    if (streamed_inputs_done)
      issue_end = max_ticks(issue_end, after_cycles(inputs_done, c.tail, period_));
    const Ticks compute_end = after_cycles(issue_end, c.latency, period_);
    const Ticks done = max_ticks(compute_end, port_.completion());
    // Operands are read before the next operation is taken, so a later operation of this engine
    // that overwrites them (write-after-read) never races the reads.
    const Ticks engine_free = max_ticks(issue_end, port_.read_completion());
    Ticks first = done;
    if (c.first != 0) {
      const Ticks first_out = after_cycles(start, std::uint64_t{c.first} + c.latency, period_);
      if (first_out < done) first = first_out;
    }
    scoreboard_.add(blocks.write.address, bytes(blocks.write), done, first);
    busy_.add(requested, done);
    return TickTiming{engine_free, done, done - compute_end, c.first != 0, first};
  }

  const OperandPort& port() const { return port_; }
  Ticks busy_ticks() const { return busy_.total(); }
  Ticks interlock_wait_ticks() const { return interlock_wait_; }
  sc_core::sc_time busy_time() const { return from_ticks(busy_.total()); }
  // Summed time operations waited for a result of an earlier operation still in the pipeline.
  sc_core::sc_time interlock_wait() const { return from_ticks(interlock_wait_); }
  // Issue plus latency cycles of every operation run.
  std::uint64_t cycles() const { return cycles_; }
  // Operations that consumed forwarded results.
  std::uint64_t streamed_ops() const { return streamed_ops_; }
  std::uint64_t sram_bytes_read() const { return port_.bytes_read(); }
  std::uint64_t sram_bytes_written() const { return port_.bytes_written(); }

  // `done` units of work over what `lanes` lanes, one unit per cycle each, could have done in
  // `interval` (the PE array's MAC, the Exp unit's lane utilisation).
  double utilization(std::uint64_t done, std::uint64_t lanes, const sc_core::sc_time& interval) const {
    double capacity = static_cast<double>(lanes) * static_cast<double>(to_ticks(interval)) /
                      static_cast<double>(period_);
    return static_cast<double>(done) / capacity;
  }

  // The statistics every pipelined engine reports first: its busy and interlock time and the
  // cycles of its operations.
  void collect_timing(StatsGroup& g) const {
    g.add("busy_time", ticks_to_ns(busy_.total()), "ns", "union of operation intervals");
    g.add("interlock_wait", ticks_to_ns(interlock_wait_), "ns",
          "summed waits for results of earlier operations still in the pipeline");
    g.add("compute_cycles", static_cast<double>(cycles_), "cycles", "sum of op cycle counts");
  }

  // ... and last: the bytes its operands moved through its SRAM port.
  void collect_sram(StatsGroup& g) const {
    g.add("sram_bytes_read", static_cast<double>(port_.bytes_read()), "B");
    g.add("sram_bytes_written", static_cast<double>(port_.bytes_written()), "B");
  }

  void reset_stats() {
    busy_.reset();
    interlock_wait_ = 0;
    cycles_ = streamed_ops_ = 0;
    port_.reset_stats();
  }

 private:
  static Ticks max_ticks(Ticks a, Ticks b) { return a > b ? a : b; }
  std::uint64_t bytes(const OperandBlocks::Block& b) const { return b.elements * elem_bytes_; }

  OperandPort port_;
  ResultScoreboard scoreboard_;
  BusyTime busy_;
  std::uint64_t elem_bytes_;
  Ticks period_;
  Ticks interlock_wait_ = 0;
  std::uint64_t cycles_ = 0;
  std::uint64_t streamed_ops_ = 0;
};

}  // namespace tlm_models

#endif  // TLM_MODELS_PIPELINED_ISSUE_H
