// Burst trains (burst_train.h): a DMA channel hands the HBM side of each group of
// max_outstanding bursts to the interconnect and a bandwidth-level HBM in one call. Checked:
// exact completion times of streaming loads against the bandwidth-level closed form, equality
// of every timing and statistic with burst-by-burst booking (contended traffic included), and
// the paths that keep burst-by-burst booking.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>

#include "check.h"
#include "test_target.h"
#include "tlm_models/dma.h"
#include "tlm_models/hbm.h"
#include "tlm_models/interconnect.h"
#include "tlm_models/protocol_checker.h"
#include "tlm_models/sram.h"

using namespace tlm_models;
using sc_core::SC_NS;
using sc_core::sc_time;

namespace {

constexpr std::uint64_t kSram = 0x1'0000'0000;
constexpr std::uint64_t kHbm2 = 0x2'0000'0000;  // a second HBM (HBM to HBM copies)
constexpr std::uint64_t kSramSize = 2 << 20;

// Reads and writes memory contents through the interconnect, untimed.
struct Debugger : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<Debugger> port{"port"};
  explicit Debugger(sc_core::sc_module_name n) : sc_core::sc_module(n) {}
  void access(tlm::tlm_command cmd, std::uint64_t address, std::vector<unsigned char>& data) {
    tlm::tlm_generic_payload g;
    g.set_command(cmd);
    g.set_address(address);
    g.set_data_ptr(data.data());
    g.set_data_length(static_cast<unsigned>(data.size()));
    g.set_streaming_width(static_cast<unsigned>(data.size()));
    port->transport_dbg(g);
  }
};

// The paper machine's off-chip path (platforms/attenio.yaml): HBM 16 channels x 8 GB/s,
// 256 B interleave, 100 ns latency; a 256 B-per-cycle crossbar at 1 GHz with 1 ns hops; an
// SRAM of 2 ports x 4 KiB per cycle, 1 ns latency; DMA bursts of 8 KiB, 8 outstanding, 10 ns
// setup.
struct Machine {
  Interconnect noc;
  HbmMemory hbm;
  HbmMemory hbm2;
  Sram sram;
  DmaEngine dma;
  Debugger debug;

  Machine(const std::string& n, bool trains, const std::function<void(HbmMemory::Params&)>& hbm_edit = {},
          const std::function<void(Interconnect::Params&)>& noc_edit = {})
      : noc((n + "_noc").c_str(), noc_params(noc_edit)),
        hbm((n + "_hbm").c_str(), hbm_params(hbm_edit)),
        hbm2((n + "_hbm2").c_str(), hbm_params(hbm_edit)),
        sram((n + "_sram").c_str(), sram_params()),
        dma((n + "_dma").c_str(), dma_params(trains)),
        debug((n + "_debug").c_str()) {
    dma.mem_port.bind(noc.in);
    debug.port.bind(noc.in);
    noc.out.bind(hbm.target);
    noc.out.bind(sram.target);
    noc.out.bind(hbm2.target);
    noc.add_route(0, std::uint64_t{1} << 30, 0);
    noc.add_route(kSram, kSramSize, 1);
    noc.add_route(kHbm2, std::uint64_t{1} << 30, 2);
  }

  static Interconnect::Params noc_params(const std::function<void(Interconnect::Params&)>& edit) {
    Interconnect::Params p;
    p.width = 256;
    if (edit) edit(p);
    return p;
  }
  static HbmMemory::Params hbm_params(const std::function<void(HbmMemory::Params&)>& edit) {
    HbmMemory::Params p;
    if (edit) edit(p);
    return p;
  }
  static Sram::Params sram_params() {
    Sram::Params p;
    p.port_width = 4096;
    p.capacity = kSramSize;
    return p;
  }
  static DmaEngine::Params dma_params(bool trains) {
    DmaEngine::Params p;
    p.max_burst = 8192;
    p.max_outstanding = 8;
    p.burst_trains = trains;
    return p;
  }

  DmaChannel& ch(unsigned i) { return dma.dma_channel(i); }

  std::string stats() const {
    std::string out;
    const StatsProvider* parts[] = {&noc, &hbm, &hbm2, &sram, &dma};
    for (const StatsProvider* p : parts) {
      StatsGroup g("part");
      p->collect_stats(g);
      out += g.to_json() + "\n";
    }
    return out;
  }
};

DmaDescriptor transfer(std::uint64_t src, std::uint64_t dst, std::uint32_t rows, std::uint32_t bytes,
                       std::uint32_t src_stride = 0, std::uint32_t dst_stride = 0) {
  return DmaDescriptor{src, dst, rows, bytes, src_stride, dst_stride};
}

Ticks ns(std::uint64_t v) { return v * 1000; }  // ticks of 1 ps

std::string describe(const OpTiming& t) {
  return t.engine_free.to_string() + " " + t.done.to_string() + " " + t.bandwidth_wait.to_string();
}

// The contended mix run on both machines: a 1 MiB + 100 B load at an unaligned address; a
// store from channel 1 at the same time into the same HBM channels and link (booked after the
// load, so into the gaps it left); a strided load and an unaligned store started while the
// first load streams; a copy between the two HBMs; then a load that waits for credits.
std::string contended_mix(Machine& m) {
  std::string log;
  auto run = [&](unsigned ch, const DmaDescriptor& d, Ticks start) {
    const OpTiming t = m.ch(ch).transfer(d, start);
    log += describe(t) + "\n";
    return t;
  };
  const OpTiming a = run(0, transfer(0x1040, kSram, 1, (1 << 20) + 100), 0);
  run(1, transfer(kSram + 0x40000, 0x300000, 1, 96 * 1024), 0);
  sc_core::wait(sc_time(3000, SC_NS));
  const OpTiming c = run(1, transfer(0x500000, kSram + 0x10000, 64, 2048, 4096, 2048), ns(3000));
  run(1, transfer(kSram + 0x20000, 0x600010, 3, 20000, 20000, 30000), to_ticks(c.engine_free));
  run(0, transfer(0x700000, kHbm2, 1, 200 * 1024), to_ticks(a.engine_free));
  sc_core::wait(sc_time(9000, SC_NS) - sc_core::sc_time_stamp());
  run(0, transfer(0x800000, kSram, 1, 300 * 1024), ns(9000));
  return log;
}

}  // namespace

TEST_CASE(streaming_load_takes_the_bandwidth_level_closed_form) {
  Machine m("m", true);
  simulate([&] {
    // B bursts of 8 KiB from idle: burst k's 16 shares of 512 B (64 ns each) follow each other
    // on every channel from 11 ns (setup + hop), so its read returns at R_k = 11 + 64 (k + 1)
    // + 100 + 1 = 176 + 64 k; its SRAM write takes the link's 32 cycles: W_k = R_k + 34.
    // done = setup + hop + B x 64 + latency + hop + 34 = 146 + 64 B ns.
    const OpTiming t = m.ch(0).transfer(transfer(0, kSram, 1, 16 * 8192), 0);
    CHECK_EQ(t.done, sc_time(146 + 64 * 16, SC_NS));
    // Bursts 8..15 issue when the credit of burst k - 8 returns, at W_(k-8).
    CHECK_EQ(t.engine_free, sc_time(210 + 64 * 7, SC_NS));
    // T0 = setup + ceil(16 / 8) x RT_min, RT_min = W_0 - I_0 = 200 ns.
    CHECK_EQ(t.bandwidth_wait, sc_time(146 + 64 * 16 - (10 + 2 * 200), SC_NS));
    CHECK(m.ch(0).last_train_leg() == DmaChannel::TrainLeg::source);
    // A 1 MiB load right after it: its first burst issues when the last credit returns.
    const OpTiming u = m.ch(0).transfer(transfer(1 << 20, kSram, 1, 1 << 20), to_ticks(t.engine_free));
    CHECK_EQ(u.done, sc_time(146 + 64 * 16 + 64 * 128, SC_NS));
  });
  CHECK_EQ(m.hbm.channel(5).bytes_read(), (16u + 128u) * 512u);
  CHECK_EQ(m.hbm.channel(5).bus().requests(), 16u + 128u);
  CHECK_EQ(m.hbm.channel(5).bus().busy_ticks(), ns(64 * (16 + 128)));
  CHECK_EQ(m.ch(0).bursts(), 16u + 128u);
}

TEST_CASE(trains_give_every_timing_and_statistic_of_burst_by_burst_booking) {
  Machine on("on", true);
  Machine off("off", false);
  std::string on_log, off_log;
  simulate([&] {
    sc_core::sc_spawn([&] { off_log = contended_mix(off); }, "off_mix");
    on_log = contended_mix(on);
  });
  CHECK(!on_log.empty());
  CHECK_EQ(on_log, off_log);
  CHECK_EQ(on.stats(), off.stats());
  CHECK(on.hbm.channel(0).bus().wait_ticks() > 0);  // the mix did contend
}

TEST_CASE(trains_go_to_the_hbm_side_only) {
  Machine m("m", true);
  simulate([&] {
    m.ch(0).transfer(transfer(0, kSram, 1, 64 * 1024), 0);
    CHECK(m.ch(0).last_train_leg() == DmaChannel::TrainLeg::source);
    m.ch(1).transfer(transfer(kSram, 0x10000, 1, 64 * 1024), 0);
    CHECK(m.ch(1).last_train_leg() == DmaChannel::TrainLeg::destination);
    // One burst: nothing to group.
    m.ch(1).transfer(transfer(kSram, 0x30000, 1, 8192), ns(5000));
    CHECK(m.ch(1).last_train_leg() == DmaChannel::TrainLeg::none);
    // HBM to the same HBM: both sides on one link and memory.
    m.ch(0).transfer(transfer(0, 0x40000, 1, 64 * 1024), ns(5000));
    CHECK(m.ch(0).last_train_leg() == DmaChannel::TrainLeg::none);
    // HBM to another HBM on its own link: the source side goes as trains.
    m.ch(0).transfer(transfer(0, kHbm2, 1, 64 * 1024), ns(9000));
    CHECK(m.ch(0).last_train_leg() == DmaChannel::TrainLeg::source);
    // A range past the route's end is not probed capable: bursts one by one (and the error
    // is the burst-by-burst one).
    bool failed = false;
    try {
      m.ch(0).transfer(transfer((std::uint64_t{1} << 30) - 8192, kSram, 1, 16384), ns(20000));
    } catch (const OpError&) {
      failed = true;
    }
    CHECK(failed);
    CHECK(m.ch(0).last_train_leg() == DmaChannel::TrainLeg::none);
  });
}

TEST_CASE(bank_level_storage_and_mesh_keep_burst_by_burst_booking) {
  Machine bank("bank", true, [](HbmMemory::Params& p) { p.fidelity = "bank"; });
  Machine stored("stored", true, [](HbmMemory::Params& p) { p.storage = true; });
  Machine mesh("mesh", true, {}, [](Interconnect::Params& p) { p.topology = "mesh"; });
  Machine off("off", false);
  simulate([&] {
    for (Machine* m : {&bank, &stored, &mesh, &off}) {
      m->ch(0).transfer(transfer(0, kSram, 1, 64 * 1024), 0);
      CHECK(m->ch(0).last_train_leg() == DmaChannel::TrainLeg::none);
      m->ch(1).transfer(transfer(kSram, 0x10000, 1, 64 * 1024), 0);
      CHECK(m->ch(1).last_train_leg() == DmaChannel::TrainLeg::none);
    }
  });
}

TEST_CASE(loads_through_trains_deliver_zeros) {
  Machine m("m", true);
  simulate([&] {
    // A store leaves data in the channel's buffer; a train load must still write zeros (the
    // HBM keeps no data), as burst-by-burst reads do.
    std::vector<unsigned char> ones(16384, 0xff);
    m.debug.access(tlm::TLM_WRITE_COMMAND, kSram + 0x1000, ones);
    m.ch(0).transfer(transfer(kSram + 0x1000, 0x20000, 1, 16384), 0);
    m.ch(0).transfer(transfer(0x40000, kSram + 0x1000, 1, 16384), ns(2000));
    CHECK(m.ch(0).last_train_leg() == DmaChannel::TrainLeg::source);
    std::vector<unsigned char> back(16384, 0x55);
    m.debug.access(tlm::TLM_READ_COMMAND, kSram + 0x1000, back);
    CHECK(back == std::vector<unsigned char>(16384, 0));
  });
}

// DMA -> near crossbar -> far crossbar -> HBM (no latency), the near one's link the slowest
// (8 B per cycle: 1024 ns per burst), so its own grant + hop + transfer decides its response.
struct Chain {
  Interconnect near, far;
  HbmMemory hbm;
  Sram sram;
  DmaEngine dma;
  Chain(const std::string& n, bool trains)
      : near((n + "_near").c_str(), Machine::noc_params([](Interconnect::Params& p) { p.width = 8; })),
        far((n + "_far").c_str(), Machine::noc_params({})),
        hbm((n + "_hbm").c_str(), Machine::hbm_params([](HbmMemory::Params& p) { p.latency = sc_core::SC_ZERO_TIME; })),
        sram((n + "_sram").c_str(), Machine::sram_params()),
        dma((n + "_dma").c_str(), Machine::dma_params(trains)) {
    dma.mem_port.bind(near.in);
    near.out.bind(far.in);
    near.out.bind(sram.target);
    far.out.bind(hbm.target);
    near.add_route(0x4000'0000, 0x4000'0000, 0, 0);  // addresses pass through unchanged
    near.add_route(kSram, kSramSize, 1);
    far.add_route(0x4000'0000, 0x4000'0000, 0);  // the HBM sees address - 1 GiB
  }
  std::string stats() const {
    std::string out;
    const StatsProvider* parts[] = {&near, &far, &hbm, &sram, &dma};
    for (const StatsProvider* p : parts) {
      StatsGroup g("part");
      p->collect_stats(g);
      out += g.to_json() + "\n";
    }
    return out;
  }
};

TEST_CASE(a_chain_of_crossbars_carries_trains_exactly) {
  Chain on("on", true), off("off", false);
  std::string on_log, off_log;
  auto mix = [](Chain& c, std::string& log) {
    for (unsigned ch = 0; ch < 2; ++ch) {
      const OpTiming a = c.dma.dma_channel(ch).transfer(
          transfer(0x4000'0000 + ch * 0x100000, kSram + ch * 0x80000, 1, 200 * 1024), 0);
      log += describe(a) + "\n";
    }
    const OpTiming s = c.dma.dma_channel(1).transfer(transfer(kSram, 0x4800'0000, 1, 100 * 1024), ns(100));
    log += describe(s) + "\n";
  };
  simulate([&] {
    sc_core::sc_spawn([&] { mix(off, off_log); }, "off_mix");
    mix(on, on_log);
    CHECK(on.dma.dma_channel(1).last_train_leg() == DmaChannel::TrainLeg::destination);
  });
  CHECK_EQ(on_log, off_log);
  CHECK_EQ(on.stats(), off.stats());
}

TEST_CASE(a_protocol_checker_on_the_way_keeps_burst_by_burst_booking) {
  // The checker would see a train as one transaction; it answers the probe "no".
  Interconnect noc("noc", Machine::noc_params({}));
  HbmMemory hbm("hbm", HbmMemory::Params{});
  Sram sram("sram", Machine::sram_params());
  ProtocolChecker checker("checker");
  DmaEngine dma("dma", Machine::dma_params(true));
  dma.mem_port.bind(checker.in);
  checker.out.bind(noc.in);
  noc.out.bind(hbm.target);
  noc.out.bind(sram.target);
  noc.add_route(0, std::uint64_t{1} << 30, 0);
  noc.add_route(kSram, kSramSize, 1);
  simulate([&] {
    const OpTiming t = dma.dma_channel(0).transfer(transfer(0, kSram, 1, 16 * 8192), 0);
    CHECK_EQ(t.done, sc_time(146 + 64 * 16, SC_NS));
    CHECK(dma.dma_channel(0).last_train_leg() == DmaChannel::TrainLeg::none);
  });
  CHECK_EQ(checker.violations(), 0u);
}

CHECK_MAIN
