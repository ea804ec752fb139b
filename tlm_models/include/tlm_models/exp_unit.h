// Exp unit: `lanes` pipelined exponent modules at one clock, executing the trace's exp records
// (dst = exp(src0) on an m x n block). Timing formulas are in docs/models/exp_unit.md.
#ifndef TLM_MODELS_EXP_UNIT_H
#define TLM_MODELS_EXP_UNIT_H

#include <cstdint>
#include <memory>
#include <string>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "tlm_models/functional_ops.h"
#include "tlm_models/op_executor.h"
#include "tlm_models/params_generated.h"
#include "tlm_models/params_check.h"
#include "tlm_models/pipelined_issue.h"
#include "tlm_models/stats.h"
#include "tlm_models/streaming_executor.h"
#include "tlm_models/time_ticks.h"
#include "tlm_models/trace_op.h"

namespace tlm_models {

class ExpUnit : public sc_core::sc_module, public StreamingExecutor, public StatsProvider {
 public:
  // The fields and their defaults: ExpUnitParamFields (params_generated.h, generated from
  // the component registry).
  struct Params : ExpUnitParamFields {
    std::string check() const {
      std::string error = check_fields();
      if (!error.empty()) return error;
      return check_number_format(number_format, functional, elem_bytes);
    }
  };

  tlm_utils::simple_initiator_socket<ExpUnit> sram_port;

  ExpUnit(sc_core::sc_module_name name, const Params& p)
      : sc_core::sc_module(name),
        sram_port("sram_port"),
        params_(p),
        period_(p.clock > 0 ? period_ticks(p.clock) : 0),
        pipe_(sram_port, this->name(), p.elem_bytes, p.sram_traffic, period_) {
    params_valid(p, this->name(), "tlm_models/exp_unit");
    if (p.functional)
      functional_ = std::make_unique<FunctionalOps>(sram_port, this->name(), number_format_of(p.number_format));
  }

  const Params& params() const { return params_; }

  std::uint64_t cycles(std::uint64_t m, std::uint64_t n) const {
    return issue_cycles(m, n) + params_.pipeline_latency;
  }

  // Cycles before the next operation may enter: one per group of `lanes` elements.
  std::uint64_t issue_cycles(std::uint64_t m, std::uint64_t n) const {
    return ceil_div(m * n, params_.lanes);
  }

  // Exponentials computed / (exponentials the lanes could have computed in `interval`).
  double lane_utilization(const sc_core::sc_time& interval) const {
    return pipe_.utilization(exps_, params_.lanes, interval);
  }

  // Busy and interlock time, cycles, streamed operations and SRAM bytes.
  const PipelinedIssue& pipeline() const { return pipe_; }
  std::uint64_t exps() const { return exps_; }
  std::uint64_t ops() const { return ops_; }

  void collect_stats(StatsGroup& g) const override {
    pipe_.collect_timing(g);
    g.add("ops", static_cast<double>(ops_), "ops", "exp records executed");
    g.add("exps", static_cast<double>(exps_), "elements", "exponentials computed (m*n)");
    g.add("streamed_ops", static_cast<double>(pipe_.streamed_ops()), "ops",
          "operations that consumed forwarded results");
    pipe_.collect_sram(g);
  }

  void reset_stats() override {
    pipe_.reset_stats();
    exps_ = ops_ = 0;
  }

 private:
  TickTiming run(const TraceOp& op, Ticks start, const Ticks* inputs_done) override {
    if (op.kind != static_cast<std::uint8_t>(OpKind::exp))
      throw OpError(std::string(name()) + ": cannot execute operation kind " +
                    std::to_string(op.kind) + " (the Exp unit runs exp)");
    if (functional_) functional_->run(op);
    const std::uint64_t mn = std::uint64_t{op.m} * op.n;
    OperandBlocks blocks;
    blocks.read(op.src0, mn);
    blocks.write = {op.dst, mn};
    IssueCycles c;
    c.issue = issue_cycles(op.m, op.n);
    c.latency = params_.pipeline_latency;
    c.first = granule_cycles(c.issue, mn, params_.forward_granularity);
    if (inputs_done) c.tail = c.first;
    exps_ += mn;
    ++ops_;
    return pipe_.run(start, blocks, c, inputs_done);
  }

  Params params_;
  Ticks period_;
  PipelinedIssue pipe_;
  std::unique_ptr<FunctionalOps> functional_;  // Params::functional
  std::uint64_t exps_ = 0;
  std::uint64_t ops_ = 0;
};

}  // namespace tlm_models

#endif  // TLM_MODELS_EXP_UNIT_H
