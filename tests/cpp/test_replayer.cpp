// Replayer: scheduling, feeding, metrics, stall attribution, errors and the timeline, checked
// with closed-form mock engines (mock_engines.h) so every expected time is exact.
#include <algorithm>
#include <array>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <utility>
#include <string>
#include <vector>

#include "check.h"
#include "mock_engines.h"
#include "tlm_models/replayer.h"

using sc_core::SC_NS;
using sc_core::SC_US;
using sc_core::sc_time;
using tlm_models::EngineKind;
using tlm_models::OpKind;
using tlm_models::OpWindow;
using tlm_models::Replayer;
using tlm_models::StallCause;
using tlm_models::TraceOp;

namespace {

constexpr std::uint8_t kDma0 = 0, kDma1 = 1, kPe = 2, kExp = 3;

sc_time ns(double v) { return sc_time(v, SC_NS); }
sc_time t(tlm_models::Ticks v) { return tlm_models::from_ticks(v); }
sc_time stall(const Replayer& r, unsigned engine, StallCause c) {
  return t(r.metrics().engine(engine).stall[static_cast<unsigned>(c)]);
}

// Builds a trace with dependencies given as absolute record indices.
struct TraceBuilder {
  std::vector<TraceOp> ops;

  std::size_t add(OpKind kind, std::uint8_t engine, std::uint32_t m, std::uint32_t n, std::uint32_t k,
                  std::initializer_list<std::size_t> deps, std::uint8_t tensor = tlm_models::kNoTensor) {
    TraceOp op = tlm_models::make_op(kind, engine, m, n, k);
    op.tensor = tensor;
    unsigned i = 0;
    for (std::size_t d : deps) op.deps[i++] = static_cast<std::uint32_t>(ops.size() - d);
    ops.push_back(op);
    return ops.size() - 1;
  }
  std::size_t load(std::uint8_t engine, std::uint32_t bytes, std::initializer_list<std::size_t> deps = {},
                   std::uint8_t tensor = tlm_models::kNoTensor) {
    return add(OpKind::load, engine, 1, bytes, 0, deps, tensor);
  }
  std::size_t store(std::uint8_t engine, std::uint32_t bytes, std::initializer_list<std::size_t> deps = {},
                    std::uint8_t tensor = tlm_models::kNoTensor) {
    return add(OpKind::store, engine, 1, bytes, 0, deps, tensor);
  }
};

// dma0/dma1: 1 ns per byte + 10 ns latency; pe: 1 ns per MAC or element; exp: 2 ns per element.
struct Platform {
  mock::DmaChannel dma0{ns(1), ns(10)};
  mock::DmaChannel dma1{ns(1), ns(10)};
  mock::ComputeEngine pe{ns(1), ns(1)};
  mock::ComputeEngine exp{ns(2), ns(2)};

  void bind(Replayer& r) {
    r.bind_engine(kDma0, &dma0, "dma0", EngineKind::dma);
    r.bind_engine(kDma1, &dma1, "dma1", EngineKind::dma);
    r.bind_engine(kPe, &pe, "pe", EngineKind::pe);
    r.bind_engine(kExp, &exp, "exp", EngineKind::exp);
  }
};

void feed_all(Replayer& r, const std::vector<TraceOp>& ops) {
  r.feed(ops.data(), ops.size());
  r.end_of_input();
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// Another process of the same simulation: feeds a wait_event replayer, or watches it.
struct Process : sc_core::sc_module {
  SC_HAS_PROCESS(Process);
  Process(sc_core::sc_module_name name, std::function<void()> body)
      : sc_core::sc_module(name), body_(std::move(body)) {
    SC_THREAD(run);
  }
  void run() { body_(); }
  std::function<void()> body_;
};

// T tiles, two buffers: load tile i+2 may start only when the matmul on tile i has read its
// buffer. Loads take 40 ns (40 B, no latency), matmuls 60 ns (3 x 4 x 5 MACs).
std::vector<TraceOp> double_buffered(unsigned tiles) {
  TraceBuilder b;
  std::vector<std::size_t> load(tiles);
  load[0] = b.load(kDma0, 40);
  load[1] = b.load(kDma0, 40);
  for (unsigned i = 0; i < tiles; ++i) {
    const std::size_t c = b.add(OpKind::matmul, kPe, 3, 4, 5, {load[i]});
    if (i + 2 < tiles) load[i + 2] = b.load(kDma0, 40, {c});
  }
  return b.ops;
}

struct DoubleBufferPlatform {
  mock::DmaChannel dma0{ns(1), sc_core::SC_ZERO_TIME};
  mock::ComputeEngine pe{ns(1), ns(1)};
  void bind(Replayer& r) {
    r.bind_engine(kDma0, &dma0, "dma0", EngineKind::dma);
    r.bind_engine(kPe, &pe, "pe", EngineKind::pe);
  }
};

}  // namespace

TEST_CASE(load_then_dependent_matmul) {
  Platform p;
  Replayer r("replayer");
  p.bind(r);
  r.set_tensor(0, "K");
  TraceBuilder b;
  const std::size_t ld = b.add(OpKind::load, kDma0, 4, 16, 0, {}, 0);  // 64 B: free 64, done 74
  b.add(OpKind::matmul, kPe, 2, 2, 4, {ld});                          // 16 MACs: 74 .. 90
  feed_all(r, b.ops);
  sc_core::sc_start();

  CHECK(r.finished());
  CHECK(!r.failed());
  const auto& m = r.metrics();
  CHECK_EQ(m.ops(), 2u);
  CHECK_EQ(t(m.sim_time()), ns(90));
  CHECK_EQ(sc_core::sc_time_stamp(), ns(90));
  CHECK_EQ(stall(r, kPe, StallCause::load_data), ns(74));
  CHECK_EQ(t(m.engine(kPe).idle_waiting()), ns(74));
  CHECK_EQ(t(m.engine(kDma0).busy.total()), ns(74));
  CHECK_EQ(t(m.engine(kPe).busy.total()), ns(16));
  CHECK_EQ(m.engine(kPe).macs, 16u);
  CHECK_EQ(m.engine(kDma0).bytes, 64u);
  CHECK_EQ(m.tensor(0).read, 64u);
  CHECK_EQ(t(m.io_active()), ns(74));
  CHECK_EQ(t(m.compute_active()), ns(16));
  CHECK_EQ(t(m.io_compute_overlap()), sc_core::SC_ZERO_TIME);
  CHECK_EQ(t(m.exposed_io_time()), ns(74));
  CHECK_EQ(m.overlap_efficiency(), 0.0);
  CHECK_EQ(m.memory_stall_fraction(), 1.0 - 16.0 / 90.0);

  const std::string json = r.result_json();
  CHECK(contains(json, "\"sim_time\":{\"value\":90,\"unit\":\"ns\""));
  CHECK(contains(json, "\"load_data\":{\"value\":74,\"unit\":\"ns\""));
  CHECK(contains(json, "{\"name\":\"K\",\"stats\":{\"read\":{\"value\":64,\"unit\":\"B\""));
  CHECK(contains(json, "\"failed\":{\"value\":0,\"unit\":\"1\",\"desc\":\"\"}"));
}

TEST_CASE(two_channels_share_bandwidth) {
  mock::SharedLink link;
  mock::DmaChannel dma0{ns(1), ns(10), &link};
  mock::DmaChannel dma1{ns(1), ns(10), &link};
  Replayer r("replayer");
  r.bind_engine(kDma0, &dma0, "dma0", EngineKind::dma);
  r.bind_engine(kDma1, &dma1, "dma1", EngineKind::dma);
  TraceBuilder b;
  b.load(kDma0, 100);  // link 0 .. 100, done 110
  b.load(kDma1, 100);  // starts at 0 too (lower trace index went first), link 100 .. 200, done 210
  feed_all(r, b.ops);
  sc_core::sc_start();

  const auto& m = r.metrics();
  CHECK_EQ(dma1.log.last_start, sc_core::SC_ZERO_TIME);
  CHECK_EQ(t(m.sim_time()), ns(210));
  CHECK_EQ(t(m.io_active()), ns(210));
  CHECK_EQ(t(m.engine(kDma0).busy.total()), ns(110));
  CHECK_EQ(t(m.engine(kDma1).busy.total()), ns(210));
  CHECK_EQ(t(m.engine(kDma0).bandwidth_wait), sc_core::SC_ZERO_TIME);
  CHECK_EQ(t(m.engine(kDma1).bandwidth_wait), ns(100));
  CHECK_EQ(t(m.engine(kDma1).idle_waiting()), sc_core::SC_ZERO_TIME);
  CHECK_EQ(m.memory_stall_fraction(), 1.0);
  CHECK(contains(r.result_json(), "\"bandwidth\":{\"value\":100,\"unit\":\"ns\""));
}

// Closed form for T tiles (L = load, C = matmul): L0 = [0, 40], L1 = [40, 80],
// C_i = [40 + 60 i, 100 + 60 i], L_j = [100 + 60 (j - 2), 140 + 60 (j - 2)] for j >= 2.
//   sim_time = 40 + 60 T;  compute = [40, 40 + 60 T] = 60 T;  io = 40 T
//   io ∩ compute = L1 and every L_j (j >= 2) = 40 (T - 1)  ->  overlap efficiency (T - 1) / T
//   exposed io = L0 = 40;  memory stall fraction = 1 - 60 T / (40 + 60 T)
//   dma0 idles 20 ns before each L_j, j >= 2, waiting for C_{j-2} to free the buffer: 20 (T - 2)
//   dma0 credits: L1 is ready from L0's start (0) but the channel is busy until 40: 40
//   pe idles 40 ns before C0, waiting for L0's data.
// With T = 8: 520, 480, 320, 280 -> 0.875, 40, 1 - 480/520, 120, 40, 40.
TEST_CASE(double_buffered_loop_overlap) {
  DoubleBufferPlatform p;
  Replayer r("replayer");
  p.bind(r);
  feed_all(r, double_buffered(8));
  sc_core::sc_start();

  const auto& m = r.metrics();
  CHECK_EQ(m.ops(), 16u);
  CHECK_EQ(t(m.sim_time()), ns(520));
  CHECK_EQ(t(m.compute_active()), ns(480));
  CHECK_EQ(t(m.io_active()), ns(320));
  CHECK_EQ(t(m.io_compute_overlap()), ns(280));
  CHECK_EQ(m.overlap_efficiency(), 0.875);
  CHECK_EQ(t(m.exposed_io_time()), ns(40));
  CHECK_EQ(m.memory_stall_fraction(), 1.0 - 480.0 / 520.0);
  CHECK_EQ(stall(r, kDma0, StallCause::buffer_free), ns(120));
  CHECK_EQ(t(m.engine(kDma0).idle_waiting()), ns(120));
  CHECK_EQ(t(m.engine(kDma0).dma_credits), ns(40));
  CHECK_EQ(stall(r, kPe, StallCause::load_data), ns(40));
  CHECK_EQ(t(m.engine(kPe).idle_waiting()), ns(40));
  CHECK_EQ(r.lookahead_limited(), 0u);
}

// Each stall cause, by hand (dma 1 ns/B + 10 ns latency, pe 1 ns per MAC/element, exp 2 ns):
//   0 load  dma0 10 B            [0, 10] done 20
//   1 matmul pe 1x1x5  <- 0      [20, 25]   pe idles 0..20: load_data 20
//   2 exp    exp 1x3   <- 1      [25, 31]   exp idles 0..25: pe_result 25
//   3 vector pe 1x4    <- 2      [31, 35]   pe idles 25..31: exp_result 6
//   4 store  dma1 8 B  <- 3      [35, 43] done 53   dma1 idles 0..35 for the data: pe_result 35
//   5 load   dma0 10 B <- 1      [25, 35] done 45   buffer read by 1 (write-after-read):
//                                                   dma0 idles 10..25: buffer_free 15
//   6 load   dma0 5 B  <- 4      [53, 58] done 68   dma0 idles 35..53: store_done 18
TEST_CASE(stall_attribution_by_cause) {
  Platform p;
  Replayer r("replayer");
  p.bind(r);
  TraceBuilder b;
  const auto l0 = b.load(kDma0, 10);
  const auto mm = b.add(OpKind::matmul, kPe, 1, 1, 5, {l0});
  const auto ex = b.add(OpKind::exp, kExp, 1, 3, 0, {mm});
  const auto vec = b.add(OpKind::vector, kPe, 1, 4, 0, {ex});
  const auto st = b.store(kDma1, 8, {vec});
  b.load(kDma0, 10, {mm});
  b.load(kDma0, 5, {st});
  feed_all(r, b.ops);
  sc_core::sc_start();

  const auto& m = r.metrics();
  CHECK_EQ(t(m.sim_time()), ns(68));
  CHECK_EQ(stall(r, kPe, StallCause::load_data), ns(20));
  CHECK_EQ(stall(r, kExp, StallCause::pe_result), ns(25));
  CHECK_EQ(stall(r, kPe, StallCause::exp_result), ns(6));
  CHECK_EQ(stall(r, kDma1, StallCause::pe_result), ns(35));
  CHECK_EQ(stall(r, kDma0, StallCause::buffer_free), ns(15));
  CHECK_EQ(stall(r, kDma0, StallCause::store_done), ns(18));
  CHECK_EQ(t(m.engine(kPe).idle_waiting()), ns(26));
  CHECK_EQ(t(m.engine(kDma0).idle_waiting()), ns(33));
  CHECK_EQ(m.engine(kPe).element_ops, 4u);
  CHECK_EQ(m.engine(kExp).exps, 3u);
  CHECK_EQ(t(m.engine(kDma0).dma_credits), sc_core::SC_ZERO_TIME);
}

TEST_CASE(dependency_before_trace_start_is_an_error) {
  Platform p;
  Replayer r("replayer");
  p.bind(r);
  TraceBuilder b;
  b.load(kDma0, 8);
  b.ops[0].deps[1] = 1;
  feed_all(r, b.ops);
  sc_core::sc_start();
  CHECK(r.finished());
  CHECK(r.failed());
  CHECK_EQ(r.error(), std::string("record 0: dependency 1 reaches before the start of the trace"));
  CHECK_EQ(sc_core::sc_get_status(), sc_core::SC_STOPPED);
  CHECK(contains(r.result_json(),
                 "\"failed\":{\"value\":1,\"unit\":\"1\",\"desc\":\"record 0: dependency 1 reaches"));
}

TEST_CASE(dependency_beyond_window_is_an_error) {
  Platform p;
  Replayer r("replayer");
  p.bind(r);
  r.set_window(2);
  TraceBuilder b;
  const auto first = b.load(kDma0, 8);
  b.load(kDma0, 8);
  b.load(kDma0, 8, {first});  // distance 2: fine
  b.load(kDma0, 8, {first});  // distance 3
  feed_all(r, b.ops);
  sc_core::sc_start();
  CHECK(r.failed());
  CHECK_EQ(r.error(), std::string("record 3: dependency 3 reaches beyond the window 2"));
}

TEST_CASE(unbound_engine_is_an_error) {
  mock::DmaChannel dma0{ns(1), ns(10)};
  mock::ComputeEngine pe{ns(1), ns(1)};
  Replayer r("replayer");
  r.bind_engine(kDma0, &dma0, "dma0", EngineKind::dma);
  r.bind_engine(kPe, &pe, "pe", EngineKind::pe);
  TraceBuilder b;
  b.load(kDma1, 8);
  feed_all(r, b.ops);
  sc_core::sc_start();
  CHECK(r.failed());
  CHECK_EQ(r.error(), std::string("record 0: engine 1 is not bound (platform has: dma0 = 0, pe = 2)"));
}

TEST_CASE(operation_on_the_wrong_engine_class_is_an_error) {
  Platform p;
  Replayer r("replayer");
  p.bind(r);
  TraceBuilder b;
  b.load(kDma0, 8);
  b.add(OpKind::matmul, kDma1, 1, 1, 1, {});
  feed_all(r, b.ops);
  sc_core::sc_start();
  CHECK_EQ(r.error(), std::string("record 1: a matmul cannot run on dma1 (a dma engine)"));
}

TEST_CASE(unknown_operation_kind_is_an_error) {
  Platform p;
  Replayer r("replayer");
  p.bind(r);
  TraceBuilder b;
  b.load(kDma0, 8);
  b.ops[0].kind = 9;
  feed_all(r, b.ops);
  sc_core::sc_start();
  CHECK_EQ(r.error(), std::string("record 0: unknown operation kind 9"));
}

TEST_CASE(executor_error_stops_the_run_naming_the_record) {
  mock::DmaChannel dma0{ns(1), ns(10)};
  mock::FailingEngine pe{1, "SRAM port returned TLM_ADDRESS_ERROR_RESPONSE"};
  Replayer r("replayer");
  r.bind_engine(kDma0, &dma0, "dma0", EngineKind::dma);
  r.bind_engine(kPe, &pe, "pe", EngineKind::pe);
  TraceBuilder b;
  const auto ld = b.load(kDma0, 8);
  b.add(OpKind::matmul, kPe, 1, 1, 1, {ld});
  b.add(OpKind::vector, kPe, 1, 1, 0, {});
  b.load(kDma0, 8);
  feed_all(r, b.ops);
  sc_core::sc_start();
  CHECK(r.failed());
  CHECK_EQ(r.error(),
           std::string("record 2 (vector on pe): SRAM port returned TLM_ADDRESS_ERROR_RESPONSE"));
  CHECK_EQ(sc_core::sc_get_status(), sc_core::SC_STOPPED);
}

TEST_CASE(executor_reporting_done_before_start_is_an_error) {
  mock::DmaChannel dma0{ns(1), ns(10)};
  mock::TimeTravellingEngine exp;
  Replayer r("replayer");
  r.bind_engine(kDma0, &dma0, "dma0", EngineKind::dma);
  r.bind_engine(kExp, &exp, "exp", EngineKind::exp);
  TraceBuilder b;
  const auto ld = b.load(kDma0, 8);  // done 18
  b.add(OpKind::exp, kExp, 1, 1, 0, {ld});
  feed_all(r, b.ops);
  sc_core::sc_start();
  CHECK_EQ(r.error(), std::string("record 1 (exp on exp): executor returned done 0 s / engine_free "
                                  "18 ns before the start 18 ns"));
}

namespace {

// A compute engine whose result's first granule is out 2 ns after its start, all of it 10 ns
// after (forwarding, docs/models/pe_array.md).
struct ForwardingEngine : tlm_models::OpExecutor {
  tlm_models::OpTiming execute(const TraceOp&, const sc_time& start) override {
    return {start + ns(10), start + ns(10), sc_core::SC_ZERO_TIME, true, start + ns(2)};
  }
};

// An engine written against the sc_time interface only, recording how a streamed operation
// reaches it: its result is done 1 ns after the producers'.
struct StreamRecorder : tlm_models::OpExecutor {
  tlm_models::OpTiming execute(const TraceOp&, const sc_time& start) override {
    return {start + ns(1), start + ns(1), sc_core::SC_ZERO_TIME};
  }
  tlm_models::OpTiming execute_streamed(const TraceOp&, const sc_time& start,
                                        const sc_time& inputs_done) override {
    seen_start = start;
    seen_inputs_done = inputs_done;
    return {inputs_done + ns(1), inputs_done + ns(1), sc_core::SC_ZERO_TIME};
  }
  sc_time seen_start, seen_inputs_done;
};

}  // namespace

// The replayer calls execute_ticks(); its default hands a streamed operation to an sc_time
// engine's execute_streamed with the start on the producers' first granules and their done
// times, and a plain one to execute(), exactly as before the ticks entry point existed.
TEST_CASE(engines_with_the_sc_time_interface_get_streamed_operations_unchanged) {
  ForwardingEngine pe;
  StreamRecorder exp;
  mock::ComputeEngine plain{ns(1), ns(1)};
  Replayer r("replayer");
  r.bind_engine(kPe, &pe, "pe", EngineKind::pe);
  r.bind_engine(kExp, &exp, "exp", EngineKind::exp);
  r.bind_engine(kDma0 + 4, &plain, "vec", EngineKind::pe);
  TraceBuilder b;
  const auto produce = b.add(OpKind::vector, kPe, 1, 1, 0, {});  // 0 .. 10 ns, first at 2 ns
  const auto consume = b.add(OpKind::exp, kExp, 1, 1, 0, {produce});
  b.ops[consume].code |= tlm_models::kStreamed;
  // Not streamed: waits for the whole result (10 ns) and takes 1 ns per element.
  b.add(OpKind::vector, kDma0 + 4, 1, 3, 0, {produce});
  feed_all(r, b.ops);
  sc_core::sc_start();
  CHECK(!r.failed());
  CHECK_EQ(exp.seen_start, ns(2));
  CHECK_EQ(exp.seen_inputs_done, ns(10));
  CHECK_EQ(t(r.metrics().engine(kExp).busy.total()), ns(9));  // [2, 11]
  CHECK_EQ(plain.log.last_start, ns(10));
  CHECK_EQ(t(r.metrics().last_done()), ns(13));
}

// Replayer `whole` gets the trace in one chunk before the simulation; `chunked` through the
// driver loop in chunks of 7 records, pausing the kernel for each; `borrowed` the same way with
// feed_borrowed, from one staging buffer the driver refills only once chunks_pending() says the
// replayer has read it (so the replayer must read records where they lie and never after asking
// for more). All run in one simulation with their own engines; results must be identical.
TEST_CASE(small_chunks_give_the_same_result_as_one_chunk) {
  std::vector<TraceOp> ops;
  mock::SyntheticTrace().next(ops, 5000);
  Platform pw, pc, pb;
  Replayer whole("whole"), chunked("chunked"), borrowed("borrowed");
  pw.bind(whole);
  pc.bind(chunked);
  pb.bind(borrowed);
  for (Replayer* r : {&whole, &chunked, &borrowed}) {
    r->set_window(64);
    r->set_lookahead(100);
    r->record_timeline(ns(1000), ns(3000), 1u << 20);
  }
  feed_all(whole, ops);

  std::size_t offset = 0, borrowed_offset = 0;
  unsigned pauses = 0, refills = 0;
  std::array<TraceOp, 7> staging{};
  while (!chunked.finished() || !borrowed.finished()) {
    if (chunked.wants_input()) {
      ++pauses;
      if (offset < ops.size()) {
        const std::size_t n = std::min<std::size_t>(7, ops.size() - offset);
        chunked.feed(ops.data() + offset, n);
        offset += n;
      } else {
        chunked.end_of_input();
      }
    }
    if (borrowed.wants_input()) {
      CHECK_EQ(borrowed.chunks_pending(), 0u);  // asked for input: everything fed was read
      if (borrowed_offset < ops.size()) {
        const std::size_t n = std::min<std::size_t>(staging.size(), ops.size() - borrowed_offset);
        staging.fill(TraceOp{});  // between two fills a reused buffer holds other records
        std::copy_n(ops.begin() + static_cast<std::ptrdiff_t>(borrowed_offset), n, staging.begin());
        borrowed.feed_borrowed(staging.data(), n);
        CHECK_EQ(borrowed.chunks_pending(), 1u);
        borrowed_offset += n;
        ++refills;
      } else {
        borrowed.end_of_input();
      }
    }
    sc_core::sc_start(sc_time(1, SC_US));
  }
  sc_core::sc_start();

  CHECK(whole.finished());
  CHECK(!chunked.failed());
  CHECK(!borrowed.failed());
  CHECK(pauses >= 5000 / 7);
  CHECK_EQ(refills, (5000u + 6) / 7);
  CHECK_EQ(chunked.metrics().ops(), 5000u);
  CHECK_EQ(borrowed.metrics().ops(), 5000u);
  CHECK_EQ(whole.result_json(), chunked.result_json());
  CHECK_EQ(whole.result_json(), borrowed.result_json());
  CHECK(whole.timeline_size() > 0);
  for (const Replayer* r : {&chunked, &borrowed}) {
    CHECK_EQ(whole.timeline_size(), r->timeline_size());
    CHECK(std::memcmp(whole.timeline().data(), r->timeline().data(),
                      whole.timeline_size() * sizeof(tlm_models::TimelineRecord)) == 0);
  }
  for (const mock::DmaChannel* d : {&pc.dma0, &pc.dma1, &pb.dma0, &pb.dma1}) {
    CHECK_EQ(d->log.out_of_order, 0u);
    CHECK_EQ(d->log.before_kernel_time, 0u);
  }
}

// Ten 10 ns loads on dma0, then an exp with no dependencies. Seen in time it would start at 0;
// with a read-ahead of 4 records the replayer reaches it only after issuing loads 0..6 (each of
// those decisions is counted), and issues it at load 6's start, 60 ns, charged as lookahead stall.
TEST_CASE(lookahead_cap_is_counted) {
  mock::DmaChannel dma0{ns(1), sc_core::SC_ZERO_TIME};
  mock::ComputeEngine exp{ns(2), ns(2)};
  mock::DmaChannel free_dma0{ns(1), sc_core::SC_ZERO_TIME};
  mock::ComputeEngine free_exp{ns(2), ns(2)};
  Replayer capped("capped"), unlimited("unlimited");
  capped.bind_engine(kDma0, &dma0, "dma0", EngineKind::dma);
  capped.bind_engine(kExp, &exp, "exp", EngineKind::exp);
  capped.set_lookahead(4);
  unlimited.bind_engine(kDma0, &free_dma0, "dma0", EngineKind::dma);
  unlimited.bind_engine(kExp, &free_exp, "exp", EngineKind::exp);
  TraceBuilder b;
  for (int i = 0; i < 10; ++i) b.load(kDma0, 10);
  b.add(OpKind::exp, kExp, 1, 1, 0, {});
  feed_all(capped, b.ops);
  feed_all(unlimited, b.ops);
  sc_core::sc_start();

  CHECK_EQ(capped.lookahead_limited(), 7u);
  CHECK_EQ(exp.log.last_start, ns(60));
  CHECK_EQ(stall(capped, kExp, StallCause::lookahead), ns(60));
  CHECK_EQ(t(capped.metrics().sim_time()), ns(100));
  CHECK(contains(capped.result_json(), "\"lookahead_limited\":{\"value\":7,\"unit\":\"events\""));

  CHECK_EQ(unlimited.lookahead_limited(), 0u);
  CHECK_EQ(free_exp.log.last_start, sc_core::SC_ZERO_TIME);
  CHECK_EQ(stall(unlimited, kExp, StallCause::lookahead), sc_core::SC_ZERO_TIME);
}

// The double-buffered loop (T = 8) issues, in order: L0 [0,40] L1 [40,80] C0 [40,100]
// L2 [100,140] C1 [100,160] L3 [160,200] C2 [160,220] L4 [220,260] ...
// In flight during [100, 200): C0 (done at 100), L2, C1, L3, C2; a cap of 3 keeps C0, L2, C1.
TEST_CASE(timeline_keeps_window_up_to_the_cap) {
  DoubleBufferPlatform p;
  Replayer r("replayer");
  p.bind(r);
  r.record_timeline(ns(100), ns(200), 3);
  feed_all(r, double_buffered(8));
  sc_core::sc_start();

  CHECK_EQ(r.timeline_size(), 3u);
  std::vector<tlm_models::TimelineRecord> out(3);
  r.timeline_copy(out.data());
  const std::uint64_t index[] = {2, 3, 4};
  const std::uint8_t engine[] = {kPe, kDma0, kPe};
  const OpKind kind[] = {OpKind::matmul, OpKind::load, OpKind::matmul};
  const double start[] = {40, 100, 100}, end[] = {100, 140, 160};
  for (unsigned i = 0; i < 3; ++i) {
    CHECK_EQ(out[i].index, index[i]);
    CHECK_EQ(out[i].engine, engine[i]);
    CHECK_EQ(out[i].kind, static_cast<std::uint8_t>(kind[i]));
    CHECK_EQ(out[i].start_ns, start[i]);
    CHECK_EQ(out[i].end_ns, end[i]);
  }
  CHECK(contains(r.result_json(), "\"timeline_dropped\":{\"value\":2,"));
}

TEST_CASE(offchip_bytes_per_tensor_and_direction) {
  Platform p;
  Replayer r("replayer");
  p.bind(r);
  r.set_tensor(0, "Q");
  r.set_tensor(1, "O");
  r.set_tensor(2, "V");
  TraceBuilder b;
  b.add(OpKind::load, kDma0, 4, 32, 0, {}, 0);  // 128 B of Q
  b.load(kDma0, 50);                            // untagged
  b.store(kDma1, 64, {}, 1);
  b.store(kDma1, 16, {}, 1);
  feed_all(r, b.ops);
  sc_core::sc_start();

  const auto& m = r.metrics();
  CHECK_EQ(m.tensor(0).read, 128u);
  CHECK_EQ(m.tensor(1).write, 80u);
  CHECK_EQ(m.tensor(tlm_models::ReplayMetrics::kUntagged).read, 50u);
  CHECK_EQ(m.offchip_read(), 178u);
  CHECK_EQ(m.offchip_write(), 80u);
  const std::string json = r.result_json();
  CHECK(contains(json, "{\"name\":\"O\",\"stats\":{\"read\":{\"value\":0,\"unit\":\"B\",\"desc\":"
                       "\"bytes loaded from off-chip\"},\"write\":{\"value\":80,"));
  CHECK(contains(json, "{\"name\":\"(untagged)\",\"stats\":{\"read\":{\"value\":50,"));
  CHECK(contains(json, "{\"name\":\"V\",\"stats\":{\"read\":{\"value\":0,"));
}

TEST_CASE(empty_trace_reports_undefined_ratios_as_null) {
  Platform p;
  Replayer r("replayer");
  p.bind(r);
  r.end_of_input();
  sc_core::sc_start();
  CHECK(r.finished());
  CHECK(!r.failed());
  CHECK_EQ(r.metrics().ops(), 0u);
  const std::string json = r.result_json();
  CHECK(contains(json, "\"sim_time\":{\"value\":0,"));
  CHECK(contains(json, "\"overlap_efficiency\":{\"value\":null,"));
  CHECK(contains(json, "\"memory_stall_fraction\":{\"value\":null,"));
}

// The kernel's time follows the schedule: issued operations never start before it nor more than
// a quantum after it, and the run ends at the last completion.
TEST_CASE(kernel_time_tracks_the_schedule_within_a_quantum) {
  Platform p;
  Replayer r("replayer");
  p.bind(r);
  r.set_quantum(ns(100));
  std::vector<TraceOp> ops;
  mock::SyntheticTrace().next(ops, 3000);
  feed_all(r, ops);
  sc_core::sc_start();

  CHECK(!r.failed());
  CHECK_EQ(sc_core::sc_time_stamp(), t(r.metrics().last_done()));
  for (const mock::ContractLog* log : {&p.dma0.log, &p.dma1.log, &p.pe.log, &p.exp.log}) {
    CHECK(log->calls > 0);
    CHECK_EQ(log->out_of_order, 0u);
    CHECK_EQ(log->before_kernel_time, 0u);
    CHECK(log->max_lead <= ns(100));
  }
}

// Replays `records` records of the synthetic trace, fed in chunks of 10,000 as asked for.
void feed_synthetic(Replayer& r, std::uint64_t records) {
  mock::SyntheticTrace gen;
  std::vector<TraceOp> chunk;
  std::uint64_t fed = 0;
  while (!r.finished()) {
    if (r.wants_input()) {
      if (fed < records) {
        chunk.clear();
        gen.next(chunk, 10000);
        r.feed(chunk.data(), chunk.size());
        fed += chunk.size();
      } else {
        r.end_of_input();
      }
    }
    sc_core::sc_start(sc_time(100, SC_US));
  }
}

// 300 000 records with a window of 64 and a read-ahead of 256 never need more than 1024 slots
// (the initial capacity): memory does not grow with the trace.
TEST_CASE(buffer_stays_bounded_by_window_and_lookahead) {
  Platform p;
  Replayer r("replayer");
  p.bind(r);
  r.set_window(64);
  r.set_lookahead(256);
  feed_synthetic(r, 300000);
  CHECK(!r.failed());
  CHECK_EQ(r.metrics().ops(), 300000u);
  CHECK_EQ(r.buffer_capacity(), 1024u);
}

// The records are kept only until their operation is issued, the times for the whole window:
// with a window of 8,192 the times span 8,192 + read-ahead positions (16,384 slots), while the
// records' ring stays at its initial 1,024 slots (read-ahead 256).
TEST_CASE(records_ring_spans_the_read_ahead_only) {
  Platform p;
  Replayer r("replayer");
  p.bind(r);
  r.set_window(8192);
  r.set_lookahead(256);
  feed_synthetic(r, 100000);
  CHECK(!r.failed());
  CHECK_EQ(r.metrics().ops(), 100000u);
  CHECK_EQ(r.buffer_capacity(), 16384u);
  CHECK_EQ(r.record_capacity(), 1024u);
}

// OpWindow alone: a released record's times and kind stay readable until the window releases
// them; the record ring grows only with the records not yet released.
TEST_CASE(op_window_keeps_times_and_kinds_behind_released_records) {
  OpWindow w;
  TraceOp op{};
  for (std::uint64_t i = 0; i < 3000; ++i) {
    op.kind = static_cast<std::uint8_t>(i % 5);
    op.src0 = i;
    CHECK_EQ(w.push(op), i);
    w.times(i).done = 10 * i;
    w.times(i).first = 10 * i + 1;
    if (i >= 100) w.release_records_before(i - 100);  // 101 records held at most
  }
  CHECK_EQ(w.record_capacity(), 1024u);
  CHECK_EQ(w.capacity(), 4096u);  // times of all 3,000 positions (nothing released)
  for (std::uint64_t i = 0; i < 3000; ++i) {
    CHECK_EQ(w.times(i).done, 10 * i);
    CHECK_EQ(w.times(i).first, 10 * i + 1);
    CHECK_EQ(static_cast<unsigned>(w.kind(i)), static_cast<unsigned>(i % 5));
  }
  for (std::uint64_t i = 2900; i < 3000; ++i) CHECK_EQ(w.op(i).src0, i);
  w.release_before(2000);
  CHECK_EQ(w.begin(), 2000u);
  for (std::uint64_t i = 3000; i < 5000; ++i) w.push(op);  // 3,000 positions held: no growth
  CHECK_EQ(w.capacity(), 4096u);
}

TEST_CASE(setup_after_start_is_rejected) {
  Platform p;
  Replayer r("replayer");
  p.bind(r);
  r.end_of_input();
  sc_core::sc_start();
  bool threw = false;
  try {
    r.set_window(8);
  } catch (const std::logic_error& e) {
    threw = std::string(e.what()) == "set_window after the simulation started";
  }
  CHECK(threw);
}

// InputMode::wait_event: a process feeds while the kernel runs (no sc_pause, one sc_start).
//   0 load dma0 64 B, fed at 0          [0, 64] done 74: issued at once, its start is now
//   1 matmul pe 2x2x4 <- 0, fed at 30   start 74; known at 30 but the replay waits until 74 in
//                                       case records still to come start earlier; none do
//   end of input at 200: the replay ends then (it cannot know earlier that nothing follows)
TEST_CASE(wait_event_mode_is_fed_by_another_process) {
  Platform p;
  Replayer r("replayer");
  p.bind(r);
  r.set_input_mode(Replayer::InputMode::wait_event);
  TraceBuilder b;
  const std::size_t ld = b.add(OpKind::load, kDma0, 4, 16, 0, {}, 0);
  b.add(OpKind::matmul, kPe, 2, 2, 4, {ld});
  sc_time done_seen = sc_core::SC_ZERO_TIME;
  Process feeder("feeder", [&] {
    r.feed(&b.ops[0], 1);
    sc_core::wait(ns(30));
    CHECK(r.wants_input());
    CHECK_EQ(p.dma0.log.calls, 1u);
    r.feed(&b.ops[1], 1);
    sc_core::wait(ns(170));
    CHECK_EQ(p.pe.log.calls, 1u);
    CHECK(!r.finished());
    r.end_of_input();
    sc_core::wait(r.done_event());
    done_seen = sc_core::sc_time_stamp();
  });
  sc_core::sc_start();

  CHECK(r.finished());
  CHECK(!r.failed());
  CHECK_EQ(done_seen, ns(200));
  CHECK_EQ(p.pe.log.last_start, ns(74));
  const auto& m = r.metrics();
  CHECK_EQ(m.ops(), 2u);
  CHECK_EQ(t(m.sim_time()), ns(90));
  CHECK_EQ(stall(r, kPe, StallCause::load_data), ns(74));
  CHECK_EQ(stall(r, kPe, StallCause::lookahead), sc_core::SC_ZERO_TIME);
  CHECK_EQ(r.lookahead_limited(), 0u);
  CHECK_EQ(r.records_pending(), 0u);
}

// A record fed while the replay waits for the start of a known operation is scheduled first if
// it can start earlier:
//   0 load dma0 50 B, 1 matmul pe 1x1x5 <- 0: fed at 0; load [0, 50] done 60, matmul waits for 60
//   2 exp 1x5, fed at 20 with the end of input: starts at 20 (it was not there before), [20, 30]
//   then the matmul [60, 65].  The 20 ns the exp could not see its record count as lookahead.
TEST_CASE(wait_event_mode_schedules_late_records_in_time_order) {
  Platform p;
  Replayer r("replayer");
  p.bind(r);
  r.set_input_mode(Replayer::InputMode::wait_event);
  TraceBuilder b;
  const std::size_t ld = b.load(kDma0, 50);
  b.add(OpKind::matmul, kPe, 1, 1, 5, {ld});
  b.add(OpKind::exp, kExp, 1, 5, 0, {});
  Process feeder("feeder", [&] {
    r.feed(b.ops.data(), 2);
    sc_core::wait(ns(20));
    r.feed(&b.ops[2], 1);
    r.end_of_input();
  });
  sc_core::sc_start();

  CHECK(r.finished());
  CHECK(!r.failed());
  CHECK_EQ(p.exp.log.last_start, ns(20));
  CHECK_EQ(p.pe.log.last_start, ns(60));
  CHECK_EQ(sc_core::sc_time_stamp(), ns(65));
  const auto& m = r.metrics();
  CHECK_EQ(t(m.sim_time()), ns(65));
  CHECK_EQ(t(m.engine(kExp).busy.total()), ns(10));
  CHECK_EQ(stall(r, kExp, StallCause::lookahead), ns(20));
  for (const mock::ContractLog* log : {&p.dma0.log, &p.pe.log, &p.exp.log}) {
    CHECK_EQ(log->out_of_order, 0u);
    CHECK_EQ(log->before_kernel_time, 0u);
  }
}

// The same trace streamed in chunks of 7 records by a process that fetches each chunk in 25 ns
// while earlier ones execute, at most two chunks ahead: the fetch overlaps the execution.
TEST_CASE(wait_event_mode_streams_chunks_while_executing) {
  std::vector<TraceOp> ops;
  mock::SyntheticTrace().next(ops, 700);
  Platform pw, ps;
  Replayer whole("whole"), streamed("streamed");
  pw.bind(whole);
  ps.bind(streamed);
  whole.set_window(64);
  streamed.set_window(64);
  streamed.set_input_mode(Replayer::InputMode::wait_event);
  feed_all(whole, ops);
  std::size_t consumed_waits = 0;
  sc_time last_chunk = sc_core::SC_ZERO_TIME;
  Process feeder("feeder", [&] {
    for (std::size_t off = 0; off < ops.size(); off += 7) {
      // Keep at most two chunks ahead of the scheduler, as a command FIFO would.
      while (streamed.records_pending() >= 14) {
        sc_core::wait(streamed.input_consumed_event());
        ++consumed_waits;
      }
      sc_core::wait(ns(25));
      streamed.feed(ops.data() + off, std::min<std::size_t>(7, ops.size() - off));
    }
    last_chunk = sc_core::sc_time_stamp();
    streamed.end_of_input();
  });
  sc_core::sc_start();

  CHECK(whole.finished() && streamed.finished());
  CHECK(!streamed.failed());
  const auto& w = whole.metrics();
  const auto& s = streamed.metrics();
  CHECK_EQ(s.ops(), 700u);
  CHECK_EQ(s.offchip_read(), w.offchip_read());
  CHECK_EQ(s.offchip_write(), w.offchip_write());
  for (unsigned e : {kDma0, kDma1, kPe, kExp}) CHECK_EQ(s.engine(e).ops, w.engine(e).ops);
  // Execution starts with the first chunk, 25 ns in; fetching all 100 chunks takes at least
  // 2500 ns, and the feeder was held back by the two-chunk bound (execution is the slower side).
  CHECK_EQ(t(s.first_start()), ns(25));
  CHECK(consumed_waits > 0);
  CHECK(last_chunk > ns(2500));
  CHECK(s.last_done() > tlm_models::to_ticks(last_chunk));
  // Each chunk arrives long before its operations can start (25 ns per 7 records against
  // ~880 ns of work), so the fetch hides completely: the same schedule, shifted by 25 ns.
  CHECK_EQ(s.sim_time(), w.sim_time());
  CHECK_EQ(s.engine(kPe).busy.total(), w.engine(kPe).busy.total());
  CHECK_EQ(s.engine(kDma0).idle_waiting(), w.engine(kDma0).idle_waiting());
  for (const mock::DmaChannel* d : {&ps.dma0, &ps.dma1}) {
    CHECK_EQ(d->log.out_of_order, 0u);
    CHECK_EQ(d->log.before_kernel_time, 0u);
  }
}

// set_stop_on_error(false): the replay ends with the error, the kernel runs on.
TEST_CASE(error_without_stopping_the_simulation) {
  mock::DmaChannel dma0{ns(1), ns(10)};
  mock::FailingEngine pe{1, "SRAM port returned TLM_ADDRESS_ERROR_RESPONSE"};
  Replayer r("replayer");
  r.bind_engine(kDma0, &dma0, "dma0", EngineKind::dma);
  r.bind_engine(kPe, &pe, "pe", EngineKind::pe);
  r.set_stop_on_error(false);
  r.set_input_mode(Replayer::InputMode::wait_event);
  TraceBuilder b;
  const auto ld = b.load(kDma0, 8);
  b.add(OpKind::matmul, kPe, 1, 1, 1, {ld});
  b.add(OpKind::vector, kPe, 1, 1, 0, {});
  b.load(kDma0, 8);
  bool went_on = false;
  Process watcher("watcher", [&] {
    r.feed(b.ops.data(), b.ops.size());
    r.end_of_input();
    sc_core::wait(r.done_event());
    CHECK(r.failed());
    sc_core::wait(ns(1000));
    went_on = true;
  });
  sc_core::sc_start();
  CHECK(went_on);
  CHECK(r.finished());
  CHECK_EQ(r.error(),
           std::string("record 2 (vector on pe): SRAM port returned TLM_ADDRESS_ERROR_RESPONSE"));
  CHECK_EQ(r.error_record(), 2u);
  CHECK(sc_core::sc_get_status() != sc_core::SC_STOPPED);
  CHECK_EQ(r.metrics().ops(), 3u);  // load 0 at 0, load 3 at 8, the matmul at 18 ran
}

CHECK_MAIN
