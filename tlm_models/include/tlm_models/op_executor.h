// The contract between the trace replayer and the engines (DMA channels, PE array, Exp unit).
//
// The replayer schedules operations in nondecreasing start time and calls execute() once per
// operation. Engines model their own occupancy and issue their memory traffic as loosely-timed
// TLM-2.0 b_transport calls whose delay annotation is (start - sc_time_stamp()) plus the
// engine's own offsets; shared targets (HBM channels, SRAM ports, the interconnect) keep
// "busy until" state, so requests arriving in time order see the contention of earlier ones.
#ifndef TLM_MODELS_OP_EXECUTOR_H
#define TLM_MODELS_OP_EXECUTOR_H

#include <stdexcept>
#include <string>

#include <systemc>

#include "tlm_models/time_ticks.h"
#include "tlm_models/trace_op.h"

namespace tlm_models {

struct OpTiming {
  OpTiming() = default;
  OpTiming(const sc_core::sc_time& free, const sc_core::sc_time& done_at,
           const sc_core::sc_time& wait, bool forwarding = false,
           const sc_core::sc_time& first = sc_core::SC_ZERO_TIME)
      : engine_free(free), done(done_at), bandwidth_wait(wait), forwards(forwarding),
        first_ready(first) {}

  sc_core::sc_time engine_free;  // when this engine can start its next operation
  sc_core::sc_time done;         // when the operation's results are available to others
  sc_core::sc_time bandwidth_wait;  // part of [start, done] spent queued behind other traffic
  // Engines that forward results (docs/models/pe_array.md, "Forwarding") set `forwards` and
  // the time the first granule of the result is out; a streamed consumer may start then.
  // Otherwise consumers wait for `done`.
  bool forwards = false;
  sc_core::sc_time first_ready;
};

// OpTiming in ticks of the time resolution, as the replayer keeps times: the engines compute in
// ticks, and an sc_time costs a floating-point conversion each way (from_ticks, to_ticks), four
// or five per operation on the replay's path.
struct TickTiming {
  Ticks engine_free = 0;
  Ticks done = 0;
  Ticks bandwidth_wait = 0;
  bool forwards = false;
  Ticks first_ready = 0;
};

// When an operation that does not stream may start: once `start` has come and its inputs
// (the latest done of its producers, when given) are whole.
inline Ticks start_after_inputs(Ticks start, const Ticks* inputs_done) {
  return inputs_done && *inputs_done > start ? *inputs_done : start;
}

// Both conversions are exact (from_ticks is below 2^52 ticks and from_value above).
inline OpTiming to_op_timing(const TickTiming& t) {
  return OpTiming{from_ticks(t.engine_free), from_ticks(t.done), from_ticks(t.bandwidth_wait),
                  t.forwards, from_ticks(t.first_ready)};
}
inline TickTiming to_tick_timing(const OpTiming& t) {
  return TickTiming{to_ticks(t.engine_free), to_ticks(t.done), to_ticks(t.bandwidth_wait), t.forwards,
                    to_ticks(t.first_ready)};
}

// Thrown by execute() when the operation cannot be carried out (a TLM error response, an
// operation the engine does not support); the replayer stops and names the record.
class OpError : public std::runtime_error {
 public:
  explicit OpError(const std::string& what) : std::runtime_error(what) {}
};

class OpExecutor {
 public:
  virtual ~OpExecutor() = default;
  // `op` carries absolute bus addresses (the replayer has added the memory bases);
  // `start` >= sc_time_stamp().
  virtual OpTiming execute(const TraceOp& op, const sc_core::sc_time& start) = 0;
  // A streamed operation (is_streamed(op)) handed over at `start`, when its named producers
  // have written their first granules; they finish at `inputs_done`. An engine that cannot
  // consume a stream waits for the whole inputs.
  virtual OpTiming execute_streamed(const TraceOp& op, const sc_core::sc_time& start,
                                    const sc_core::sc_time& inputs_done) {
    return execute(op, inputs_done > start ? inputs_done : start);
  }
  // The replayer's entry point, in ticks: execute() (`inputs_done` null) or execute_streamed()
  // (the latest done of the named producers). This default converts and calls them, so an
  // engine written against the sc_time interface (a VP's own) needs nothing more; the engines
  // on the replay's hot path (DMA channel, PE array, Exp unit) override it and implement the
  // sc_time entry points through it, which spares the conversions per operation.
  virtual TickTiming execute_ticks(const TraceOp& op, Ticks start, const Ticks* inputs_done) {
    return to_tick_timing(inputs_done ? execute_streamed(op, from_ticks(start), from_ticks(*inputs_done))
                                      : execute(op, from_ticks(start)));
  }
};

}  // namespace tlm_models

#endif  // TLM_MODELS_OP_EXECUTOR_H
