// ExpUnit: cycle formula, pipelined issue and the result interlock, SRAM traffic on/off,
// errors, statistics.
#include <string>

#include "check.h"
#include "sram_engine_bench.h"
#include "tlm_models/exp_unit.h"

using namespace tlm_models;
using sc_core::sc_time;
using sc_core::SC_NS;

namespace {

struct Bench : SramEngineBench<ExpUnit> {
  explicit Bench(const ExpUnit::Params& p) : SramEngineBench("exp", p) {}
};

ExpUnit::Params no_traffic() {
  ExpUnit::Params p;
  p.sram_traffic = false;
  return p;
}

TraceOp exp_op(std::uint32_t m, std::uint32_t n) {
  TraceOp op{};
  op.kind = static_cast<std::uint8_t>(OpKind::exp);
  op.m = m;
  op.n = n;
  op.src0 = 0x0;
  op.dst = 0x40000;
  return op;
}

}  // namespace

TEST_CASE(cycles_without_traffic) {
  Bench b(no_traffic());
  simulate([&] {
    // ceil(64*100/128) + 4 = 54 cycles at 1 GHz
    OpTiming t = b.engine.execute(exp_op(64, 100), sc_time(0, SC_NS));
    CHECK_EQ(t.done, sc_time(54, SC_NS));
    // the next operation enters after the 50 issue cycles; the 4 of latency overlap it
    CHECK_EQ(t.engine_free, sc_time(50, SC_NS));
    CHECK_EQ(t.bandwidth_wait, sc_core::SC_ZERO_TIME);
    // a partial lane group still costs a cycle: ceil(1/128) + 4
    t = b.engine.execute(exp_op(1, 1), sc_time(100, SC_NS));
    CHECK_EQ(t.done, sc_time(105, SC_NS));
    CHECK_EQ(b.mem.reads() + b.mem.writes(), 0u);
  });
}

TEST_CASE(pipelined_issue_and_interlock) {
  Bench b(no_traffic());
  simulate([&] {
    // 64 x 100: issue 50, done 54
    OpTiming a = b.engine.execute(exp_op(64, 100), sc_time(0, SC_NS));
    // independent (src 0x0, dst 0x80000) at 50: free 100, done 104
    TraceOp other = exp_op(64, 100);
    other.dst = 0x80000;
    OpTiming c = b.engine.execute(other, a.engine_free);
    CHECK_EQ(c.engine_free, sc_time(100, SC_NS));
    CHECK_EQ(c.done, sc_time(104, SC_NS));
    // reading the second result (src 0x80000) at 100 waits for its done at 104:
    // free 104 + 50 = 154, done 104 + 54 = 158
    TraceOp dependent = exp_op(64, 100);
    dependent.src0 = 0x80000;
    dependent.dst = 0xc0000;
    OpTiming t = b.engine.execute(dependent, c.engine_free);
    CHECK_EQ(t.engine_free, sc_time(154, SC_NS));
    CHECK_EQ(t.done, sc_time(158, SC_NS));
    CHECK_EQ(b.engine.pipeline().interlock_wait(), sc_time(4, SC_NS));
  });
}

TEST_CASE(clock_and_lanes_scale_cycles) {
  ExpUnit::Params p = no_traffic();
  p.lanes = 16;
  p.clock = 500e6;  // 2 ns cycles
  p.pipeline_latency = 1;
  Bench b(p);
  simulate([&] {
    // ceil(100/16) + 1 = 8 cycles = 16 ns
    OpTiming t = b.engine.execute(exp_op(10, 10), sc_time(0, SC_NS));
    CHECK_EQ(t.done, sc_time(16, SC_NS));
  });
}

TEST_CASE(sram_traffic_extends_done) {
  Bench b(ExpUnit::Params{});
  simulate([&] {
    // compute 54 ns; read 12800 B (200 ns) then write 12800 B (200 ns) on one channel + 1 ns
    OpTiming t = b.engine.execute(exp_op(64, 100), sc_time(0, SC_NS));
    CHECK_EQ(t.done, sc_time(401, SC_NS));
    // free once the read is in: 200 + 1 = 201 > issue end 50
    CHECK_EQ(t.engine_free, sc_time(201, SC_NS));
    CHECK_EQ(t.bandwidth_wait, sc_time(401 - 54, SC_NS));
    CHECK_EQ(b.mem.bytes_read(), 12800u);
    CHECK_EQ(b.mem.bytes_written(), 12800u);
    // small blocks hide under compute: 2 x 2 B + 1 ns latency < 5 ns
    t = b.engine.execute(exp_op(1, 1), sc_time(1000, SC_NS));
    CHECK_EQ(t.done, sc_time(1005, SC_NS));
  });
}

TEST_CASE(errors_are_op_errors) {
  Bench b(ExpUnit::Params{});
  simulate([&] {
    std::string msg;
    TraceOp bad = exp_op(2, 2);
    bad.dst = 0x100000;  // one past the 1 MiB target
    try {
      b.engine.execute(bad, sc_time(0, SC_NS));
    } catch (const OpError& e) {
      msg = e.what();
    }
    CHECK(msg.find("write of 8 B at 0x100000 failed: TLM_ADDRESS_ERROR_RESPONSE") !=
          std::string::npos);
    msg.clear();
    TraceOp load = exp_op(2, 2);
    load.kind = static_cast<std::uint8_t>(OpKind::load);
    try {
      b.engine.execute(load, sc_time(0, SC_NS));
    } catch (const OpError& e) {
      msg = e.what();
    }
    CHECK(msg.find("kind 1") != std::string::npos);
  });
}

TEST_CASE(statistics_and_utilization) {
  Bench b(no_traffic());
  simulate([&] {
    b.engine.execute(exp_op(64, 100), sc_time(0, SC_NS));  // [0, 54]
    TraceOp second = exp_op(64, 100);
    second.dst = 0x80000;  // independent of the first: no interlock
    b.engine.execute(second, sc_time(50, SC_NS));  // [50, 104]
  });
  CHECK_EQ(b.engine.pipeline().busy_time(), sc_time(104, SC_NS));
  CHECK_EQ(b.engine.exps(), 12800u);
  CHECK_EQ(b.engine.lane_utilization(sc_time(200, SC_NS)), 12800.0 / (128.0 * 200.0));
  StatsGroup g("exp");
  b.engine.collect_stats(g);
  CHECK_EQ(g.find("ops")->value, 2.0);
  CHECK_EQ(g.find("compute_cycles")->value, 108.0);
  b.engine.reset_stats();
  CHECK_EQ(b.engine.exps(), 0u);
}

CHECK_MAIN
