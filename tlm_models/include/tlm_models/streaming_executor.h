// An engine that consumes streamed operations (forwarding, docs/models/pe_array.md): both entry
// points of OpExecutor funnel into one run() that takes the producers' done time when the
// operation is streamed.
#ifndef TLM_MODELS_STREAMING_EXECUTOR_H
#define TLM_MODELS_STREAMING_EXECUTOR_H

#include <systemc>

#include "tlm_models/op_executor.h"
#include "tlm_models/time_ticks.h"
#include "tlm_models/trace_op.h"

namespace tlm_models {

class StreamingExecutor : public OpExecutor {
 public:
  OpTiming execute(const TraceOp& op, const sc_core::sc_time& start) override {
    return to_op_timing(run(op, to_ticks(start), nullptr));
  }

  OpTiming execute_streamed(const TraceOp& op, const sc_core::sc_time& start,
                            const sc_core::sc_time& inputs_done) override {
    if (!is_streamed(op)) return OpExecutor::execute_streamed(op, start, inputs_done);
    const Ticks done = to_ticks(inputs_done);
    return to_op_timing(run(op, to_ticks(start), &done));
  }

  TickTiming execute_ticks(const TraceOp& op, Ticks start, const Ticks* inputs_done) override {
    // As OpExecutor::execute_streamed: an operation that does not stream waits for its inputs.
    if (inputs_done && !is_streamed(op)) return run(op, start_after_inputs(start, inputs_done), nullptr);
    return run(op, start, inputs_done);
  }

 protected:
  // `inputs_done` non-null: a streamed operation whose named producers finish then.
  virtual TickTiming run(const TraceOp& op, Ticks start, const Ticks* inputs_done) = 0;
};

}  // namespace tlm_models

#endif  // TLM_MODELS_STREAMING_EXECUTOR_H
