// Exp unit: `lanes` pipelined exponent modules at one clock, executing the trace's exp records
// (dst = exp(src0) on an m x n block). Timing formulas are in docs/models/exp_unit.md.
#ifndef TLM_MODELS_EXP_UNIT_H
#define TLM_MODELS_EXP_UNIT_H

#include <cstdint>
#include <string>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "tlm_models/busy_time.h"
#include "tlm_models/op_executor.h"
#include "tlm_models/operand_port.h"
#include "tlm_models/stats.h"
#include "tlm_models/time_ticks.h"
#include "tlm_models/trace_op.h"

namespace tlm_models {

class ExpUnit : public sc_core::sc_module, public OpExecutor, public StatsProvider {
 public:
  struct Params {
    unsigned lanes = 128;
    double clock = 1e9;             // Hz
    unsigned pipeline_latency = 4;  // cycles
    std::uint64_t elem_bytes = 2;   // bytes
    bool sram_traffic = true;

    std::string check() const {
      if (lanes == 0) return "lanes must be at least 1";
      if (!(clock > 0)) return "clock must be positive";
      if (elem_bytes == 0) return "elem_bytes must be at least 1";
      return "";
    }
  };

  tlm_utils::simple_initiator_socket<ExpUnit> sram_port;

  ExpUnit(sc_core::sc_module_name name, const Params& p)
      : sc_core::sc_module(name),
        sram_port("sram_port"),
        params_(p),
        period_(p.clock > 0 ? period_ticks(p.clock) : 0),
        port_(sram_port, this->name(), p.elem_bytes, p.sram_traffic) {
    std::string err = p.check();
    if (!err.empty()) SC_REPORT_FATAL("tlm_models/exp_unit", (std::string(this->name()) + ": " + err).c_str());
  }

  const Params& params() const { return params_; }

  std::uint64_t cycles(std::uint64_t m, std::uint64_t n) const {
    return ceil_div(m * n, params_.lanes) + params_.pipeline_latency;
  }

  OpTiming execute(const TraceOp& op, const sc_core::sc_time& start) override {
    if (op.kind != static_cast<std::uint8_t>(OpKind::exp))
      throw OpError(std::string(name()) + ": cannot execute operation kind " +
                    std::to_string(op.kind) + " (the Exp unit runs exp)");
    const Ticks t0 = to_ticks(start);
    const std::uint64_t mn = std::uint64_t{op.m} * op.n;
    const std::uint64_t c = cycles(op.m, op.n);
    port_.begin(t0);
    port_.read(op.src0, mn);
    port_.write(op.dst, mn);
    const Ticks compute_end = t0 + c * period_;
    const Ticks sram_end = port_.completion();
    const Ticks done = compute_end > sram_end ? compute_end : sram_end;
    busy_.add(t0, done);
    exps_ += mn;
    cycles_ += c;
    ++ops_;
    return OpTiming{from_ticks(done), from_ticks(done), from_ticks(done - compute_end)};
  }

  // Exponentials computed / (exponentials the lanes could have computed in `interval`).
  double lane_utilization(const sc_core::sc_time& interval) const {
    double capacity = static_cast<double>(params_.lanes) * static_cast<double>(to_ticks(interval)) /
                      static_cast<double>(period_);
    return static_cast<double>(exps_) / capacity;
  }

  sc_core::sc_time busy_time() const { return from_ticks(busy_.total()); }
  std::uint64_t exps() const { return exps_; }
  std::uint64_t ops() const { return ops_; }
  std::uint64_t sram_bytes_read() const { return port_.bytes_read(); }
  std::uint64_t sram_bytes_written() const { return port_.bytes_written(); }

  void collect_stats(StatsGroup& g) const override {
    g.add("busy_time", ticks_to_ns(busy_.total()), "ns", "union of operation intervals");
    g.add("compute_cycles", static_cast<double>(cycles_), "cycles", "sum of op cycle counts");
    g.add("ops", static_cast<double>(ops_), "ops", "exp records executed");
    g.add("exps", static_cast<double>(exps_), "elements", "exponentials computed (m*n)");
    g.add("sram_bytes_read", static_cast<double>(port_.bytes_read()), "B");
    g.add("sram_bytes_written", static_cast<double>(port_.bytes_written()), "B");
  }

  void reset_stats() override {
    busy_.reset();
    exps_ = cycles_ = ops_ = 0;
    port_.reset_stats();
  }

 private:
  Params params_;
  Ticks period_;
  OperandPort port_;
  BusyTime busy_;
  std::uint64_t exps_ = 0;
  std::uint64_t cycles_ = 0;
  std::uint64_t ops_ = 0;
};

}  // namespace tlm_models

#endif  // TLM_MODELS_EXP_UNIT_H
