// PeArray: cycle formulas of the mappings and of vector ops, pipelined issue and the result
// interlock, SRAM traffic and its effect on timing, errors, statistics.
#include <cstring>
#include <string>

#include "check.h"
#include "sram_engine_bench.h"
#include "tlm_models/pe_array.h"

using namespace tlm_models;
using sc_core::sc_time;
using sc_core::SC_NS;

namespace {

struct Bench : SramEngineBench<PeArray> {
  explicit Bench(const PeArray::Params& p) : SramEngineBench("pe", p) {}
};

PeArray::Params no_traffic(const std::string& mapping) {
  PeArray::Params p;
  p.mapping = mapping;
  p.sram_traffic = false;
  return p;
}

TraceOp matmul(std::uint32_t m, std::uint32_t n, std::uint32_t k, std::uint8_t code = 0) {
  TraceOp op{};
  op.kind = static_cast<std::uint8_t>(OpKind::matmul);
  op.m = m;
  op.n = n;
  op.k = k;
  op.code = code;
  op.src0 = 0x0;
  op.src1 = 0x10000;
  op.dst = 0x20000;
  return op;
}

TraceOp vector(VectorOp vop, Broadcast b, std::uint32_t m, std::uint32_t n) {
  TraceOp op{};
  op.kind = static_cast<std::uint8_t>(OpKind::vector);
  op.code = static_cast<std::uint8_t>(static_cast<unsigned>(vop) |
                                      (static_cast<unsigned>(b) << kBroadcastShift));
  op.m = m;
  op.n = n;
  op.src0 = 0x0;
  op.src1 = 0x10000;
  op.dst = 0x20000;
  return op;
}

// Three output-stationary matmuls on the 64 x 32 array, handed over at 0, 1000 and 2000 ns:
// the first's engine_free and each one's done (ns). The first is one fold, the second two,
// the third (a 1 x 3000 output uses one array row) ceil(3000/32) = 94.
void check_output_stationary(Bench& b, unsigned first_free, const unsigned (&done)[3]) {
  simulate([&] {
    OpTiming t = b.engine.execute(matmul(64, 32, 64), sc_time(0, SC_NS));
    CHECK_EQ(t.done, sc_time(done[0], SC_NS));
    CHECK_EQ(t.engine_free, sc_time(first_free, SC_NS));
    CHECK_EQ(b.engine.matmul_issue_cycles(64, 32, 64), first_free);
    CHECK_EQ(t.bandwidth_wait, sc_core::SC_ZERO_TIME);
    t = b.engine.execute(matmul(65, 32, 10), sc_time(1000, SC_NS));
    CHECK_EQ(t.done, sc_time(done[1], SC_NS));
    t = b.engine.execute(matmul(1, 3000, 5), sc_time(2000, SC_NS));
    CHECK_EQ(t.done, sc_time(done[2], SC_NS));
  });
}

}  // namespace

TEST_CASE(output_stationary_matmul_cycles) {
  Bench b(no_traffic("output_stationary"));
  // Each fold k + (64 + 32 - 2) cycles occupies the array; only the latency (2) overlaps the
  // next operation: 1 x (64 + 94) + 2 = 160; 2 x (10 + 94) + 2 = 210; 94 x (5 + 94) + 2.
  check_output_stationary(b, 158, {160, 1000 + 210, 2000 + 9308});
}

TEST_CASE(weight_and_input_stationary_matmul_cycles) {
  // weight_stationary: k over the 64 rows, n over the 32 columns, m streams; a fold loads its
  // weights (64 cycles) and then pays 64 + 32 - 2 of skew, fill and drain.
  Bench ws(no_traffic("weight_stationary"));
  CHECK_EQ(ws.engine.matmul_cycles(64, 32, 64), 64u + 2 * 64 + 32 - 2 + 2);
  // folds = ceil(130/64)*ceil(40/32) = 6 of 10 + 158 cycles
  CHECK_EQ(ws.engine.matmul_cycles(10, 40, 130), 6u * 168 + 2);
  // input_stationary: k over the rows, m over the columns, n streams
  Bench is(no_traffic("input_stationary"));
  CHECK_EQ(is.engine.matmul_cycles(64, 32, 64), 2u * (32 + 158) + 2);
  CHECK_EQ(is.engine.matmul_cycles(10, 40, 130), 3u * (40 + 158) + 2);
}

TEST_CASE(mapping_parameters_are_checked) {
  PeArray::Params p;
  p.mapping = "row_stationary";
  CHECK_EQ(p.check(), std::string("mapping must be 'output_stationary', 'weight_stationary', "
                                   "'input_stationary' or 'broadcast', got 'row_stationary'"));
  p.mapping = "broadcast";
  p.fold_overlap = true;
  CHECK(p.check().find("fold_overlap needs a systolic mapping") != std::string::npos);
  p.mapping = "input_stationary";
  CHECK_EQ(p.check(), std::string());
}

TEST_CASE(fold_overlap_pays_fill_and_drain_once_per_operation) {
  PeArray::Params p = no_traffic("output_stationary");
  p.fold_overlap = true;
  Bench b(p);
  PeArray::Params w = no_traffic("weight_stationary");
  w.fold_overlap = true;
  Bench ws(w);  // modules are built before the simulation starts
  CHECK_EQ(ws.engine.matmul_issue_cycles(10, 40, 130), 6u * 10);
  CHECK_EQ(ws.engine.matmul_cycles(10, 40, 130), 6u * 10 + 158 + 2);
  // issue = folds * k; the skew (94) and the pipeline latency (2) overlap the next
  // operation: 64 + 94 + 2 = 160; 2 x 10 + 96 = 116; 94 x 5 + 96 = 566.
  check_output_stationary(b, 64, {160, 1000 + 116, 2000 + 566});
}

TEST_CASE(broadcast_matmul_cycles) {
  Bench b(no_traffic("broadcast"));
  simulate([&] {
    // passes = ceil(128*64/2048) = 4; 4*64 + 2 = 258 cycles
    OpTiming t = b.engine.execute(matmul(128, 64, 64), sc_time(0, SC_NS));
    CHECK_EQ(t.done, sc_time(258, SC_NS));
    // any output shape fills all MACs: ceil(3000/2048) = 2 passes; 2*5 + 2
    t = b.engine.execute(matmul(1, 3000, 5, kMatmulTransB), sc_time(500, SC_NS));
    CHECK_EQ(t.done, sc_time(512, SC_NS));
    CHECK_EQ(b.engine.matmul_cycles(1, 3000, 5), 12u);
  });
}

TEST_CASE(vector_cycles) {
  Bench b(no_traffic("output_stationary"));
  simulate([&] {
    // ceil(64*64/2048) + 2 = 4 cycles
    OpTiming t = b.engine.execute(vector(VectorOp::add, Broadcast::full, 64, 64), sc_time(0, SC_NS));
    CHECK_EQ(t.done, sc_time(4, SC_NS));
    // row reduction: ceil(6400/2048) + 2 + ceil(log2(100)) = 4 + 2 + 7
    t = b.engine.execute(vector(VectorOp::rowmax, Broadcast::full, 64, 100), sc_time(10, SC_NS));
    CHECK_EQ(t.done, sc_time(23, SC_NS));
    t = b.engine.execute(vector(VectorOp::rowsum, Broadcast::full, 3, 1), sc_time(30, SC_NS));
    CHECK_EQ(t.done, sc_time(33, SC_NS));  // 1 + 2 + log2(1) = 0
  });
}

TEST_CASE(sram_traffic_sets_done_when_the_port_is_slower) {
  PeArray::Params p;
  p.mapping = "broadcast";
  Bench b(p);
  std::memset(b.mem.data(0) + 0x20000, 0xaa, 4096);
  simulate([&] {
    // compute 64 + 2 = 66 ns; A 8 KiB + B 4 KiB + C 4 KiB at 64 B/ns on one channel
    // = 128 + 64 + 64 ns serialised from 0, plus 1 ns latency
    OpTiming t = b.engine.execute(matmul(64, 32, 64), sc_time(0, SC_NS));
    CHECK_EQ(t.done, sc_time(257, SC_NS));
    // the array takes the next operation once its operands are in: A done at 128 + 1,
    // B at 128 + 64 + 1 = 193 > issue end 64
    CHECK_EQ(t.engine_free, sc_time(193, SC_NS));
    CHECK_EQ(t.bandwidth_wait, sc_time(257 - 66, SC_NS));
    CHECK_EQ(b.mem.reads(), 2u);
    CHECK_EQ(b.mem.writes(), 1u);
    CHECK_EQ(b.engine.pipeline().sram_bytes_read(), 12288u);
    CHECK_EQ(b.engine.pipeline().sram_bytes_written(), 4096u);
    // accumulate also reads C: another 64 ns on the port; the reads end at
    // 1000 + 128 + 64 + 64 + 1 = 1257, the write at 1257 + 64 = 1321
    t = b.engine.execute(matmul(64, 32, 64, kMatmulAccumulate), sc_time(1000, SC_NS));
    CHECK_EQ(t.done, sc_time(1000 + 321, SC_NS));
    CHECK_EQ(t.engine_free, sc_time(1257, SC_NS));
    CHECK_EQ(b.mem.reads(), 5u);
    // the result write carries zeros, not stale operand bytes
    CHECK_EQ(b.mem.data(0)[0x20000], 0);
    CHECK_EQ(b.mem.data(0)[0x20000 + 4095], 0);
  });
}

TEST_CASE(independent_operations_issue_back_to_back) {
  Bench b(no_traffic("broadcast"));
  simulate([&] {
    // broadcast 64x32x64: issue ceil(2048/2048) * 64 = 64 cycles, done after 64 + 2
    OpTiming a = b.engine.execute(matmul(64, 32, 64), sc_time(0, SC_NS));
    CHECK_EQ(a.engine_free, sc_time(64, SC_NS));
    CHECK_EQ(a.done, sc_time(66, SC_NS));
    // another result block (0x30000) and operands nobody is producing: enters at 64, while
    // the first is still in the pipeline
    TraceOp other = matmul(64, 32, 64);
    other.dst = 0x30000;
    OpTiming c = b.engine.execute(other, a.engine_free);
    CHECK_EQ(c.engine_free, sc_time(128, SC_NS));
    CHECK_EQ(c.done, sc_time(130, SC_NS));
    CHECK_EQ(b.engine.pipeline().interlock_wait(), sc_core::SC_ZERO_TIME);
  });
  // busy = |[0, 66] u [64, 130]| = 130
  CHECK_EQ(b.engine.pipeline().busy_time(), sc_time(130, SC_NS));
}

TEST_CASE(an_operation_reading_a_result_in_flight_waits_for_it) {
  Bench b(no_traffic("broadcast"));
  simulate([&] {
    // result C at 0x20000 (64x32), done at 66; the array is free at 64
    OpTiming a = b.engine.execute(matmul(64, 32, 64), sc_time(0, SC_NS));
    // add reading C (src0 = 0x20000) handed over at 64: the interlock holds it to 66;
    // issue ceil(2048/2048) = 1, latency 2: free 67, done 69
    TraceOp add = vector(VectorOp::add, Broadcast::full, 64, 32);
    add.src0 = 0x20000;
    add.dst = 0x30000;
    OpTiming t = b.engine.execute(add, a.engine_free);
    CHECK_EQ(t.engine_free, sc_time(67, SC_NS));
    CHECK_EQ(t.done, sc_time(69, SC_NS));
    CHECK_EQ(b.engine.pipeline().interlock_wait(), sc_time(2, SC_NS));
    // overwriting a result in flight waits as well (write after write): copy into 0x30000
    // handed over at 67 waits for the add's done at 69, then 1 + 2 cycles
    TraceOp copy = vector(VectorOp::copy, Broadcast::full, 64, 32);
    copy.src0 = 0x0;
    copy.dst = 0x30000;
    t = b.engine.execute(copy, t.engine_free);
    CHECK_EQ(t.done, sc_time(72, SC_NS));
    CHECK_EQ(b.engine.pipeline().interlock_wait(), sc_time(4, SC_NS));
  });
  StatsGroup g("pe");
  b.engine.collect_stats(g);
  CHECK_EQ(g.find("interlock_wait")->value, 4.0);
}

TEST_CASE(sram_traffic_hidden_under_compute) {
  PeArray::Params p;
  p.mapping = "broadcast";
  Bench b(p);
  simulate([&] {
    // compute 512 + 2 = 514 ns; traffic A 2 KiB + B 1 KiB + C 4 B = 48.0625 ns + 1 ns latency
    OpTiming t = b.engine.execute(matmul(2, 1, 512), sc_time(0, SC_NS));
    CHECK_EQ(t.done, sc_time(514, SC_NS));
    CHECK_EQ(t.bandwidth_wait, sc_core::SC_ZERO_TIME);
  });
}

TEST_CASE(vector_operand_traffic_by_broadcast) {
  PeArray::Params p;
  Bench b(p);
  simulate([&] {
    // fma, row broadcast, 4 x 8 FP16: src0 64 B + src1 4 values 8 B + dst 64 B; write 64 B
    b.engine.execute(vector(VectorOp::fma, Broadcast::row, 4, 8), sc_time(0, SC_NS));
    CHECK_EQ(b.engine.pipeline().sram_bytes_read(), 136u);
    CHECK_EQ(b.engine.pipeline().sram_bytes_written(), 64u);
    // mul by a scalar reads only src0
    b.engine.execute(vector(VectorOp::mul, Broadcast::scalar, 4, 8), sc_time(100, SC_NS));
    CHECK_EQ(b.engine.pipeline().sram_bytes_read(), 136u + 64u);
    // col broadcast reads n values; rowsum writes m values
    b.engine.execute(vector(VectorOp::sub, Broadcast::col, 4, 8), sc_time(200, SC_NS));
    CHECK_EQ(b.engine.pipeline().sram_bytes_read(), 200u + 64u + 16u);
    b.engine.execute(vector(VectorOp::rowsum, Broadcast::full, 4, 8), sc_time(300, SC_NS));
    CHECK_EQ(b.engine.pipeline().sram_bytes_read(), 280u + 64u);
    CHECK_EQ(b.engine.pipeline().sram_bytes_written(), 64u * 3 + 8u);
    CHECK_EQ(b.engine.vector_ops(VectorOp::fma), 1u);
    CHECK_EQ(b.engine.vector_elements(), 4u * 32u);
  });
}

TEST_CASE(mask_costs_what_copy_costs) {
  // An element-wise compare-and-select: ceil(m*n / P) issue cycles + L, src0 read, m*n written;
  // its geometry fields (src1 = row wrap) are not an operand.
  Bench b(PeArray::Params{});
  simulate([&] {
    TraceOp mask = vector(VectorOp::mask, Broadcast::scalar, 4, 8);
    mask.src1 = (std::uint64_t{1} << 32) | 3;  // period 3, phase 1: not an address
    mask.src_stride = static_cast<std::uint32_t>(-2);
    mask.dst_stride = 4;
    CHECK_EQ(mask_diagonal(mask), -2);
    CHECK_EQ(mask_window(mask), 4u);
    CHECK_EQ(mask_period(mask), 3u);
    CHECK_EQ(mask_phase(mask), 1u);
    const OpTiming m = b.engine.execute(mask, sc_time(0, SC_NS));
    const std::uint64_t read = b.engine.pipeline().sram_bytes_read(), written = b.engine.pipeline().sram_bytes_written();
    CHECK_EQ(read, 64u);  // 4 x 8 FP16 of src0 only
    CHECK_EQ(written, 64u);
    const OpTiming c = b.engine.execute(vector(VectorOp::copy, Broadcast::full, 4, 8),
                                        sc_time(1000, SC_NS));
    CHECK_EQ(m.done, c.done - sc_time(1000, SC_NS));
    CHECK_EQ(m.engine_free, c.engine_free - sc_time(1000, SC_NS));
    CHECK_EQ(b.engine.pipeline().sram_bytes_read(), 2 * read);
    CHECK_EQ(b.engine.vector_ops(VectorOp::mask), 1u);
    // 64 x 100 = 6400 elements on 2048 lanes: ceil(6400/2048) + 2 = 6 cycles (no tree)
    CHECK_EQ(b.engine.vector_cycles(VectorOp::mask, 64, 100), 6u);
  });
}

TEST_CASE(sram_traffic_off_issues_nothing) {
  Bench b(no_traffic("broadcast"));
  simulate([&] {
    OpTiming t = b.engine.execute(matmul(64, 32, 64), sc_time(0, SC_NS));
    CHECK_EQ(t.done, sc_time(66, SC_NS));
    CHECK_EQ(b.mem.reads() + b.mem.writes(), 0u);
    CHECK_EQ(b.engine.pipeline().sram_bytes_read(), 0u);
  });
}

TEST_CASE(errors_are_op_errors) {
  Bench b(PeArray::Params{});
  simulate([&] {
    std::string msg;
    TraceOp bad = matmul(4, 4, 4);
    bad.src0 = 0x200000;  // beyond the 1 MiB target
    try {
      b.engine.execute(bad, sc_time(0, SC_NS));
    } catch (const OpError& e) {
      msg = e.what();
    }
    CHECK(msg.find("read of 32 B at 0x200000") != std::string::npos);
    CHECK(msg.find("TLM_ADDRESS_ERROR_RESPONSE") != std::string::npos);

    msg.clear();
    TraceOp exp_op = matmul(4, 4, 4);
    exp_op.kind = static_cast<std::uint8_t>(OpKind::exp);
    try {
      b.engine.execute(exp_op, sc_time(0, SC_NS));
    } catch (const OpError& e) {
      msg = e.what();
    }
    CHECK(msg.find("kind 5") != std::string::npos);

    msg.clear();
    TraceOp bad_vec = vector(VectorOp::add, Broadcast::full, 4, 4);
    bad_vec.code = 10;
    try {
      b.engine.execute(bad_vec, sc_time(0, SC_NS));
    } catch (const OpError& e) {
      msg = e.what();
    }
    CHECK(msg.find("vector op code 10") != std::string::npos);
  });
}

TEST_CASE(statistics_and_utilization) {
  PeArray::Params p = no_traffic("output_stationary");
  p.fold_overlap = true;  // 64 issue + 96 latency cycles a matmul: the second overlaps the first
  Bench b(p);
  simulate([&] {
    // three independent results (0x20000, 0x30000, 0x40000), so no interlock
    b.engine.execute(matmul(64, 32, 64), sc_time(0, SC_NS));  // [0, 160]
    TraceOp second = matmul(64, 32, 64);
    second.dst = 0x30000;
    b.engine.execute(second, sc_time(100, SC_NS));  // [100, 260], overlaps
    TraceOp max = vector(VectorOp::max, Broadcast::full, 64, 64);
    max.dst = 0x40000;
    b.engine.execute(max, sc_time(300, SC_NS));  // [300, 304]
  });
  CHECK_EQ(b.engine.pipeline().busy_time(), sc_time(264, SC_NS));
  CHECK_EQ(b.engine.macs(), 2u * 64 * 32 * 64);
  CHECK_EQ(b.engine.mac_utilization(sc_time(320, SC_NS)), 262144.0 / (2048.0 * 320.0));
  StatsGroup g("pe");
  b.engine.collect_stats(g);
  CHECK_EQ(g.find("matmul_ops")->value, 2.0);
  CHECK_EQ(g.find("vector_ops")->value, 1.0);
  CHECK_EQ(g.find("busy_time")->value, 264.0);
  CHECK_EQ(g.child("vector_ops").find("max")->value, 1.0);
  CHECK_EQ(g.child("vector_elements").find("max")->value, 64.0 * 64);
  CHECK_EQ(g.child("vector_elements").find("add")->value, 0.0);
  b.engine.reset_stats();
  CHECK_EQ(b.engine.macs(), 0u);
  CHECK_EQ(b.engine.pipeline().busy_time(), sc_core::SC_ZERO_TIME);
}

TEST_CASE(scaled_matmul_counts_its_row_scaling) {
  Bench b(no_traffic("broadcast"));
  simulate([&] {
    // C = diag(s) C + A B on a 4 x 8 block: 4 x 8 scaling multiplies beside 4 x 8 x 2 MACs.
    TraceOp scaled = matmul(4, 8, 2, kMatmulScaleRows);
    set_src2(scaled, 0x60000);
    b.engine.execute(scaled, sc_time(0, SC_NS));
  });
  StatsGroup g("pe");
  b.engine.collect_stats(g);
  CHECK_EQ(g.find("macs")->value, 4.0 * 8 * 2);
  CHECK_EQ(g.find("scaled_elements")->value, 4.0 * 8);
  b.engine.reset_stats();
  StatsGroup after("pe");
  b.engine.collect_stats(after);
  CHECK_EQ(after.find("scaled_elements")->value, 0.0);
}

CHECK_MAIN
