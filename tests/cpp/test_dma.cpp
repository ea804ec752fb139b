// DmaEngine: burst splitting, outstanding-burst window, setup latency, 2-D strided data
// movement, errors, statistics and the descriptor-queue API.
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "check.h"
#include "test_target.h"
#include "tlm_models/dma.h"

using namespace tlm_models;
using sc_core::sc_time;
using sc_core::SC_NS;

namespace {

constexpr std::uint64_t kSram = 0x100000;

// Off-chip region at 0: one channel, 8 GB/s (256 B = 32 ns), 100 ns latency.
// SRAM region at kSram: one channel, 64 GB/s (256 B = 4 ns), 1 ns latency.
// So a 256 B burst issued at I to idle targets completes at I + 32 + 100 + 4 + 1 = I + 137 ns.
struct Bench {
  TestMemory mem{"mem"};
  DmaEngine dma;
  explicit Bench(const DmaEngine::Params& p) : dma("dma", p) {
    TestMemory::Region off;
    off.channel_bandwidth = 8e9;
    off.latency = sc_time(100, SC_NS);
    mem.add_region(off);
    TestMemory::Region sram;
    sram.base = kSram;
    sram.channel_bandwidth = 64e9;
    sram.latency = sc_time(1, SC_NS);
    mem.add_region(sram);
    dma.mem_port.bind(mem.target);
  }
};

DmaEngine::Params params(unsigned outstanding, sc_time setup = sc_time(10, SC_NS)) {
  DmaEngine::Params p;
  p.max_burst = 256;
  p.max_outstanding = outstanding;
  p.setup_latency = setup;
  return p;
}

TraceOp load(std::uint64_t src, std::uint64_t dst, std::uint32_t rows, std::uint32_t bytes) {
  TraceOp op{};
  op.kind = static_cast<std::uint8_t>(OpKind::load);
  op.src0 = src;
  op.dst = dst;
  op.m = rows;
  op.n = bytes;
  return op;
}

}  // namespace

TEST_CASE(load_4k_with_enough_outstanding) {
  Bench b(params(16));
  simulate([&] {
    // 16 bursts all issued at 10 ns; reads serialise on the off-chip channel:
    // burst i completes at 10 + 32(i+1) + 100 + 4 + 1 = 147 + 32i
    OpTiming t = b.dma.channel(0).execute(load(0, kSram, 1, 4096), sc_time(0, SC_NS));
    CHECK_EQ(t.done, sc_time(147 + 32 * 15, SC_NS));
    CHECK_EQ(t.engine_free, sc_time(10, SC_NS));
    // zero-load = setup + ceil(16/16) * 137 = 147 ns
    CHECK_EQ(t.bandwidth_wait, sc_time(627 - 147, SC_NS));
    CHECK_EQ(b.mem.reads(), 16u);
    CHECK_EQ(b.mem.writes(), 16u);
    CHECK_EQ(b.mem.bytes_written(), 4096u);
  });
  CHECK_EQ(b.dma.dma_channel(0).bursts(), 16u);
  CHECK_EQ(b.dma.dma_channel(0).busy_time(), sc_time(627, SC_NS));
}

TEST_CASE(one_outstanding_serialises_bursts) {
  Bench b(params(1));
  simulate([&] {
    OpTiming t = b.dma.channel(0).execute(load(0, kSram, 1, 4096), sc_time(0, SC_NS));
    CHECK_EQ(t.done, sc_time(10 + 16 * 137, SC_NS));
    CHECK_EQ(t.engine_free, sc_time(10 + 15 * 137, SC_NS));
    CHECK_EQ(t.bandwidth_wait, sc_core::SC_ZERO_TIME);
  });
}

TEST_CASE(four_outstanding_pipelines_in_groups) {
  Bench b(params(4));
  simulate([&] {
    // bursts 0-3 issue at 10 and complete at 147, 179, 211, 243; burst i >= 4 issues when
    // burst i-4 completes and finds idle targets, so it completes 137 ns later
    OpTiming t = b.dma.channel(0).execute(load(0, kSram, 1, 4096), sc_time(0, SC_NS));
    CHECK_EQ(t.done, sc_time(243 + 3 * 137, SC_NS));
    CHECK_EQ(t.engine_free, sc_time(243 + 2 * 137, SC_NS));
    // zero-load = 10 + ceil(16/4) * 137 = 558 ns
    CHECK_EQ(t.bandwidth_wait, sc_time(654 - 558, SC_NS));
  });
}

TEST_CASE(outstanding_credits_carry_over_descriptors) {
  Bench b(params(4));
  simulate([&] {
    OpTiming a = b.dma.channel(0).execute(load(0, kSram, 1, 1024), sc_time(0, SC_NS));
    CHECK_EQ(a.done, sc_time(243, SC_NS));
    CHECK_EQ(a.engine_free, sc_time(10, SC_NS));
    // the next descriptor starts at engine_free, but its bursts wait for the credits of the
    // first descriptor's bursts: they issue at 147, 179, 211, 243
    OpTiming c = b.dma.channel(0).execute(load(1024, kSram + 1024, 1, 1024), a.engine_free);
    CHECK_EQ(c.engine_free, sc_time(243, SC_NS));
    CHECK_EQ(c.done, sc_time(243 + 137, SC_NS));
    // channels are independent: channel 1 sees only the shared targets' queues
    OpTiming d = b.dma.channel(1).execute(load(2048, kSram + 2048, 1, 256), sc_time(20, SC_NS));
    CHECK_EQ(d.engine_free, sc_time(30, SC_NS));
  });
}

TEST_CASE(contiguous_rows_form_one_block) {
  Bench b(params(16));
  simulate([&] {
    // 32 rows x 128 B with both pitches = 128 B (and 0 = row bytes) are one 4 KiB block:
    // 16 bursts of 256 B, timed exactly like load_4k_with_enough_outstanding
    TraceOp op = load(0, kSram, 32, 128);
    op.src_stride = 128;
    OpTiming t = b.dma.channel(0).execute(op, sc_time(0, SC_NS));
    CHECK_EQ(t.done, sc_time(147 + 32 * 15, SC_NS));
    CHECK_EQ(b.mem.reads(), 16u);
  });
  CHECK_EQ(b.dma.dma_channel(0).bursts(), 16u);
}

TEST_CASE(setup_latency_delays_the_first_burst) {
  Bench b(params(16, sc_time(50, SC_NS)));
  simulate([&] {
    // 64 B: read 8 ns + 100 ns, write 1 ns + 1 ns, after 50 ns setup
    OpTiming t = b.dma.channel(0).execute(load(0, kSram, 1, 64), sc_time(0, SC_NS));
    CHECK_EQ(t.done, sc_time(160, SC_NS));
    CHECK_EQ(t.engine_free, sc_time(50, SC_NS));
    CHECK_EQ(t.bandwidth_wait, sc_core::SC_ZERO_TIME);
  });
}

TEST_CASE(strided_2d_transfer_moves_the_right_bytes) {
  DmaEngine::Params p = params(2);
  p.max_burst = 64;
  Bench b(p);
  unsigned char* off = b.mem.data(0);
  for (unsigned i = 0; i < 4096; ++i) off[i] = static_cast<unsigned char>(i * 7 + 3);
  simulate([&] {
    // 4 rows x 100 B, source pitch 300 B, destination pitch 128 B; bursts of 64 + 36 B
    TraceOp op = load(0x40, kSram + 0x10, 4, 100);
    op.src_stride = 300;
    op.dst_stride = 128;
    b.dma.channel(0).execute(op, sc_time(0, SC_NS));
  });
  const unsigned char* sram = b.mem.data(1);
  bool rows_ok = true;
  for (unsigned r = 0; r < 4; ++r)
    rows_ok = rows_ok && std::memcmp(sram + 0x10 + r * 128, off + 0x40 + r * 300, 100) == 0;
  CHECK(rows_ok);
  // the gaps between destination rows stay untouched
  bool gaps_zero = true;
  for (unsigned r = 0; r < 3; ++r)
    for (unsigned i = 100; i < 128; ++i) gaps_zero = gaps_zero && sram[0x10 + r * 128 + i] == 0;
  CHECK(gaps_zero);
  CHECK_EQ(sram[0x0f], 0);
  CHECK_EQ(b.dma.dma_channel(0).bursts(), 8u);
  CHECK_EQ(b.mem.reads(), 8u);
  CHECK_EQ(b.dma.dma_channel(0).bytes(), 400u);
}

TEST_CASE(store_moves_data_back) {
  Bench b(params(16));
  for (unsigned i = 0; i < 512; ++i) b.mem.data(1)[i] = static_cast<unsigned char>(255 - i);
  simulate([&] {
    TraceOp op = load(kSram, 0x800, 1, 512);
    op.kind = static_cast<std::uint8_t>(OpKind::store);
    b.dma.channel(1).execute(op, sc_time(0, SC_NS));
  });
  CHECK(std::memcmp(b.mem.data(0) + 0x800, b.mem.data(1), 512) == 0);
}

TEST_CASE(error_response_is_op_error) {
  Bench b(params(16));
  simulate([&] {
    std::string msg;
    try {
      b.dma.channel(0).execute(load(0x300000, kSram, 1, 256), sc_time(0, SC_NS));
    } catch (const OpError& e) {
      msg = e.what();
    }
    CHECK(msg.find("dma.channel0: read of 256 B at 0x300000 failed: TLM_ADDRESS_ERROR_RESPONSE") !=
          std::string::npos);
    msg.clear();
    try {
      b.dma.channel(0).execute(load(0, 0x300000, 1, 256), sc_time(0, SC_NS));
    } catch (const OpError& e) {
      msg = e.what();
    }
    CHECK(msg.find("write of 256 B at 0x300000") != std::string::npos);
    msg.clear();
    TraceOp mm = load(0, kSram, 1, 256);
    mm.kind = static_cast<std::uint8_t>(OpKind::matmul);
    try {
      b.dma.channel(1).execute(mm, sc_time(0, SC_NS));
    } catch (const OpError& e) {
      msg = e.what();
    }
    CHECK(msg.find("kind 3") != std::string::npos);
  });
}

TEST_CASE(statistics) {
  Bench b(params(16));
  simulate([&] {
    b.dma.channel(0).execute(load(0, kSram, 1, 4096), sc_time(0, SC_NS));
  });
  StatsGroup g("dma");
  b.dma.collect_stats(g);
  CHECK_EQ(g.find("bytes")->value, 4096.0);
  const StatsGroup& ch0 = g.child("channel0");
  CHECK_EQ(ch0.find("bursts")->value, 16.0);
  CHECK_EQ(ch0.find("busy_time")->value, 627.0);
  CHECK_EQ(ch0.find("bandwidth")->value, 4096.0 / 627e-9);
  CHECK_EQ(ch0.find("bandwidth_wait")->value, 480.0);
  CHECK_EQ(g.child("channel1").find("bytes_read")->value, 0.0);
  b.dma.reset_stats();
  CHECK_EQ(b.dma.dma_channel(0).bytes(), 0u);
}

TEST_CASE(descriptor_queue_fires_on_done_in_time) {
  Bench b(params(16));
  std::vector<sc_time> callbacks, events;
  sc_core::sc_spawn([&] {
    for (;;) {
      sc_core::wait(b.dma.done_event(0));
      events.push_back(sc_core::sc_time_stamp());
    }
  });
  simulate([&] {
    sc_core::wait(sc_time(100, SC_NS));
    DmaDescriptor d;
    d.src = 0;
    d.dst = kSram;
    d.row_bytes = 4096;
    b.dma.submit(0, d, [&] { callbacks.push_back(sc_core::sc_time_stamp()); });
    d.src = 4096;
    d.dst = kSram + 4096;
    b.dma.submit(0, d, [&] { callbacks.push_back(sc_core::sc_time_stamp()); });
  });
  // first: as load_4k_with_enough_outstanding, 100 ns later. The second starts when the
  // channel is free (110 ns), its bursts wait for credits from 247 ns, and its reads queue
  // behind the first's on the off-chip channel (busy until 622 ns): 622 + 32(i+1) + 105
  CHECK_EQ(callbacks.size(), 2u);
  CHECK_EQ(callbacks.at(0), sc_time(727, SC_NS));
  CHECK_EQ(callbacks.at(1), sc_time(622 + 32 * 16 + 105, SC_NS));
  CHECK(events == callbacks);
  CHECK_EQ(b.dma.dma_channel(0).descriptors(), 2u);
}

// The channel's first issue (start + setup latency) is a checked tick sum: a transfer starting
// 5 ns before the end of SystemC's time range stops with an error naming the figure (before,
// its first burst's issue time wrapped past 0 and the transfer was timed from there).
TEST_CASE(setup_past_the_time_range_stops_with_an_error) {
  Bench b(params(16));
  bool stopped = false;
  simulate([&] {
    stopped = check::stops_past_time_range([&] {
      b.dma.channel(0).execute(load(0, kSram, 1, 256),
                               sc_time::from_value(~std::uint64_t{0} - 5000));
    });
  });
  CHECK(stopped);
  CHECK(time_range_exceeded());
}

CHECK_MAIN
