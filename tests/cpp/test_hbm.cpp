// HbmMemory: exact timing of the bandwidth and bank fidelities, splitting across channels,
// storage, DMI, debug transport, statistics and the base protocol.
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "check.h"
#include "protocol_checks.h"
#include "tlm_models/hbm.h"

using namespace sc_core;
using tlm_models::HbmMemory;

namespace {

struct Bench {
  HbmMemory mem;
  check::TestInitiator ini;
  Bench(const HbmMemory::Params& p, std::function<void(check::TestInitiator&)> body)
      : mem("hbm", p), ini("ini", std::move(body)) {
    ini.socket.bind(mem.target);
  }
  void run() {
    sc_start();
    CHECK(ini.finished());
  }
};

HbmMemory::Params one_channel() {
  HbmMemory::Params p;
  p.channels = 1;
  p.size = 64 << 20;
  return p;
}

const tlm_models::Stat& stat(const tlm_models::StatsGroup& g, const std::string& name) {
  const tlm_models::Stat* s = g.find(name);
  if (!s) {
    std::fprintf(stderr, "missing stat %s in %s\n", name.c_str(), g.name().c_str());
    std::abort();
  }
  return *s;
}

}  // namespace

TEST_CASE(one_mib_over_one_channel_takes_bytes_over_bandwidth_plus_latency) {
  Bench b(one_channel(), [](check::TestInitiator& ini) {
    CHECK_EQ(ini.read_delay(0, 1 << 20), sc_time(131072 + 100, SC_NS));
  });
  b.run();
}

TEST_CASE(requests_to_one_channel_queue) {
  Bench b(HbmMemory::Params{}, [](check::TestInitiator& ini) {
    // 256 B at 8 GB/s = 32 ns; address 4096 is granule 16, channel 0 again.
    CHECK_EQ(ini.read_delay(0, 256), sc_time(132, SC_NS));
    CHECK_EQ(ini.read_delay(4096, 256), sc_time(164, SC_NS));
    CHECK_EQ(ini.read_delay(0, 256, sc_time(10, SC_NS)), sc_time(196, SC_NS));
  });
  b.run();
}

TEST_CASE(requests_to_different_channels_overlap) {
  Bench b(HbmMemory::Params{}, [](check::TestInitiator& ini) {
    for (unsigned c = 0; c < 16; ++c) CHECK_EQ(ini.read_delay(c * 256, 256), sc_time(132, SC_NS));
  });
  b.run();
}

TEST_CASE(arrival_time_is_timestamp_plus_delay) {
  Bench b(HbmMemory::Params{}, [](check::TestInitiator& ini) {
    wait(1, SC_US);
    CHECK_EQ(ini.read_delay(0, 64, sc_time(50, SC_NS)), sc_time(50 + 8 + 100, SC_NS));
    // Channel 0 is booked [1050, 1058) ns; a request arriving at 1030 ns fits the gap before.
    CHECK_EQ(ini.read_delay(4096, 64, sc_time(30, SC_NS)), sc_time(30 + 8 + 100, SC_NS));
    // Arriving at 1045 ns, 8 ns do not fit before 1050: it follows the booking at 1058 ns.
    CHECK_EQ(ini.read_delay(4096, 64, sc_time(45, SC_NS)), sc_time(58 + 8 + 100, SC_NS));
    // Arriving at 1000 ns (out of time order), it is served at once: [1000, 1008).
    CHECK_EQ(ini.read_delay(4096, 64), sc_time(8 + 100, SC_NS));
  });
  b.run();
}

TEST_CASE(transaction_spanning_granules_splits_across_channels) {
  Bench b(HbmMemory::Params{}, [](check::TestInitiator& ini) {
    // 1 MiB over 16 channels: 64 KiB each, in parallel.
    CHECK_EQ(ini.read_delay(0, 1 << 20), sc_time(8192 + 100, SC_NS));
  });
  b.run();
  tlm_models::StatsGroup g("hbm");
  b.mem.collect_stats(g);
  for (unsigned c = 0; c < 16; ++c) {
    const auto& cg = g.child("channel" + std::to_string(c));
    CHECK_EQ(stat(cg, "bytes_read").value, 65536.0);
    CHECK_EQ(stat(cg, "busy_time").value, 8192.0);
  }
}

TEST_CASE(unaligned_transaction_finishes_at_latest_piece) {
  Bench b(HbmMemory::Params{}, [](check::TestInitiator& ini) {
    // [128, 640): 128 B on channel 0, 256 B on channel 1, 128 B on channel 2.
    CHECK_EQ(ini.read_delay(128, 512), sc_time(32 + 100, SC_NS));
    // Channel 1 is busy until 32 ns; channel 2 until 16 ns.
    CHECK_EQ(ini.read_delay(512, 64), sc_time(16 + 8 + 100, SC_NS));
    CHECK_EQ(ini.read_delay(256, 64), sc_time(32 + 8 + 100, SC_NS));
  });
  b.run();
  tlm_models::StatsGroup g("hbm");
  b.mem.collect_stats(g);
  CHECK_EQ(stat(g.child("channel0"), "bytes_read").value, 128.0);
  CHECK_EQ(stat(g.child("channel1"), "bytes_read").value, 256.0 + 64.0);
  CHECK_EQ(stat(g.child("channel2"), "bytes_read").value, 128.0 + 64.0);
  // Energy counts: each channel share in whole 32 B bursts; no commands at this fidelity.
  CHECK_EQ(stat(g.child("channel1"), "read_bursts").value, 8.0 + 2);
  CHECK_EQ(stat(g.child("channel2"), "read_bursts").value, 4.0 + 2);
  CHECK_EQ(stat(g.child("channel1"), "read_bytes").value, 256.0 + 64.0);
  CHECK_EQ(stat(g.child("channel1"), "activates").value, 0.0);
}

TEST_CASE(long_transaction_split_matches_granule_by_granule_split) {
  // The O(channels) split of a long range agrees with splitting granule by granule.
  for (std::uint64_t addr : {0ull, 100ull, 4000ull, 12345ull}) {
    for (std::uint64_t len : {1ull, 255ull, 256ull, 4097ull, 70000ull}) {
      std::vector<std::uint64_t> fast(5, 0), slow(5, 0);
      tlm_models::add_interleaved_bytes(addr, len, 256, 5, fast);
      for (std::uint64_t a = addr; a < addr + len; ++a) ++slow[(a / 256) % 5];
      for (unsigned u = 0; u < 5; ++u) CHECK_EQ(fast[u], slow[u]);
    }
  }
}

TEST_CASE(writes_time_like_reads_and_are_counted_apart) {
  Bench b(one_channel(), [](check::TestInitiator& ini) {
    std::vector<unsigned char> buf(1024, 1);
    auto r = ini.write(0, buf.data(), 1024);
    CHECK_EQ(r.status, tlm::TLM_OK_RESPONSE);
    CHECK_EQ(r.delay, sc_time(128 + 100, SC_NS));
    CHECK_EQ(ini.read_delay(0, 512), sc_time(128 + 64 + 100, SC_NS));
  });
  b.run();
  tlm_models::StatsGroup g("hbm");
  b.mem.collect_stats(g);
  CHECK_EQ(stat(g, "bytes_written").value, 1024.0);
  CHECK_EQ(stat(g, "bytes_read").value, 512.0);
  CHECK_EQ(stat(g, "reads").value, 1.0);
  CHECK_EQ(stat(g, "writes").value, 1.0);
  CHECK_EQ(stat(g.child("channel0"), "write_bursts").value, 1024.0 / 32);
  CHECK_EQ(stat(g.child("channel0"), "read_bursts").value, 512.0 / 32);
  CHECK_EQ(stat(g.child("channel0"), "write_bytes").value, 1024.0);
}

TEST_CASE(statistics_report_bandwidth_latency_and_histogram) {
  Bench b(one_channel(), [](check::TestInitiator& ini) {
    ini.read_delay(0, 800);   // busy 0..100 ns, latency 200 ns
    ini.read_delay(0, 800);   // busy 100..200 ns, latency 300 ns
  });
  b.run();
  tlm_models::StatsGroup g("hbm");
  b.mem.collect_stats(g);
  const auto& c0 = g.child("channel0");
  CHECK_EQ(stat(c0, "busy_time").value, 200.0);
  CHECK_EQ(stat(c0, "wait_time").value, 100.0);
  CHECK_EQ(stat(c0, "achieved_bandwidth").value, 8e9);  // 1600 B in 200 ns
  CHECK_EQ(stat(c0, "utilization").value, 1.0);
  CHECK_EQ(stat(c0, "peak_bandwidth").value, 8e9);
  CHECK_EQ(stat(g, "window").value, 200.0);
  CHECK_EQ(stat(g, "latency_mean").value, 250.0);
  CHECK_EQ(stat(g, "latency_max").value, 300.0);
  const auto& h = g.child("latency_histogram");
  CHECK_EQ(stat(h, "ge_128ns").value, 1.0);  // 200 ns
  CHECK_EQ(stat(h, "ge_256ns").value, 1.0);  // 300 ns
  CHECK_EQ(stat(h, "ge_64ns").value, 0.0);
  CHECK_EQ(h.stats().size(), std::size_t{tlm_models::LatencyStats::kBuckets});
  b.mem.reset_stats();
  tlm_models::StatsGroup g2("hbm");
  b.mem.collect_stats(g2);
  CHECK_EQ(stat(g2, "bytes_read").value, 0.0);
  CHECK_EQ(stat(g2, "latency_max").value, 0.0);
  CHECK(g.to_json().find("\"achieved_bandwidth\"") != std::string::npos);
}

TEST_CASE(base_protocol_without_storage) {
  HbmMemory::Params p;
  p.size = 1 << 20;
  Bench b(p, [](check::TestInitiator& ini) {
    check::check_base_protocol(ini, {1 << 20, 4096, false});
  });
  b.run();
}

TEST_CASE(base_protocol_with_storage) {
  HbmMemory::Params p;
  p.size = 1 << 20;
  p.storage = true;
  Bench b(p, [](check::TestInitiator& ini) {
    check::check_base_protocol(ini, {1 << 20, 4096, true});
  });
  b.run();
}

TEST_CASE(base_protocol_at_bank_fidelity) {
  HbmMemory::Params p;
  p.size = 1 << 20;
  p.storage = true;
  p.fidelity = "bank";
  Bench b(p, [](check::TestInitiator& ini) {
    check::check_base_protocol(ini, {1 << 20, 1 << 19, true});
  });
  b.run();
}

TEST_CASE(sparse_storage_of_eight_gib_reads_zero_until_written) {
  HbmMemory::Params p;
  p.storage = true;  // default size 8 GiB
  Bench b(p, [](check::TestInitiator& ini) {
    std::uint64_t high = (std::uint64_t{7} << 30) + 12345;
    unsigned char data[300], back[300];
    for (int i = 0; i < 300; ++i) data[i] = static_cast<unsigned char>(i), back[i] = 0xFF;
    ini.read(high, back, 300);
    for (int i = 0; i < 300; ++i) CHECK_EQ(int(back[i]), 0);
    // Crosses a 64 KiB page boundary.
    std::uint64_t across = (std::uint64_t{5} << 30) + 65536 - 100;
    CHECK_EQ(ini.write(across, data, 300).status, tlm::TLM_OK_RESPONSE);
    ini.read(across, back, 300);
    for (int i = 0; i < 300; ++i) CHECK_EQ(int(back[i]), i & 0xff);
    CHECK_EQ(ini.read((std::uint64_t{8} << 30) - 4, back, 4).status, tlm::TLM_OK_RESPONSE);
    CHECK_EQ(ini.read(std::uint64_t{8} << 30, back, 4).status, tlm::TLM_ADDRESS_ERROR_RESPONSE);
  });
  b.run();
}

TEST_CASE(dmi_is_granted_per_page_and_invalidated_on_clear) {
  HbmMemory::Params p;
  p.size = 1 << 20;
  p.storage = true;
  Bench b(p, [&](check::TestInitiator& ini) {
    tlm::tlm_dmi dmi;
    CHECK(ini.dmi(70000, tlm::TLM_READ_COMMAND, dmi));
    CHECK_EQ(dmi.get_start_address(), 65536u);
    CHECK_EQ(dmi.get_end_address(), 131071u);
    CHECK_EQ(dmi.get_read_latency(), sc_time(100, SC_NS));
    dmi.get_dmi_ptr()[70000 - 65536] = 42;
    unsigned char v = 0;
    ini.debug(tlm::TLM_READ_COMMAND, 70000, &v, 1);
    CHECK_EQ(int(v), 42);
    tlm::tlm_dmi outside;
    CHECK(!ini.dmi(1 << 20, tlm::TLM_READ_COMMAND, outside));
    CHECK(outside.get_start_address() <= (1u << 20));
    CHECK(ini.invalidations.empty());
    b.mem.clear_storage();
    CHECK_EQ(ini.invalidations.size(), 1u);
    CHECK_EQ(ini.invalidations[0].first, 0u);
    CHECK_EQ(ini.invalidations[0].second, (1u << 20) - 1);
    ini.debug(tlm::TLM_READ_COMMAND, 70000, &v, 1);
    CHECK_EQ(int(v), 0);
  });
  b.run();
}

TEST_CASE(activity_log_records_merged_busy_intervals_within_window) {
  HbmMemory::Params p;
  p.channels = 2;
  Bench b(p, [](check::TestInitiator& ini) {
    ini.read_delay(0, 256);                        // ch0 0..32
    ini.read_delay(512, 256);                      // ch0 32..64: merges
    ini.read_delay(0, 256, sc_time(100, SC_NS));   // ch0 100..132
    ini.read_delay(0, 256, sc_time(200, SC_NS));   // ch0 200..232: over the cap
    ini.read_delay(256, 256, sc_time(40, SC_NS));  // ch1 40..72, clipped to 50..72
  });
  b.mem.enable_activity_log(sc_time(10, SC_NS), sc_time(1, SC_US), 2);
  b.mem.enable_activity_log(sc_time(0, SC_NS), sc_time(1, SC_US), 2);
  b.run();
  const auto& a0 = b.mem.channel_activity(0);
  CHECK_EQ(a0.size(), 2u);
  CHECK_EQ(tlm_models::from_ticks(a0[0].start), SC_ZERO_TIME);
  CHECK_EQ(tlm_models::from_ticks(a0[0].end), sc_time(64, SC_NS));
  CHECK_EQ(tlm_models::from_ticks(a0[1].start), sc_time(100, SC_NS));
  CHECK_EQ(tlm_models::from_ticks(a0[1].end), sc_time(132, SC_NS));
  CHECK_EQ(b.mem.channel_activity_dropped(0), 1u);
  CHECK_EQ(b.mem.channel_activity(1).size(), 1u);
}

TEST_CASE(activity_log_clips_to_window) {
  tlm_models::ActivityLog log;
  log.record(0, 10);  // disabled: ignored
  log.enable(50, 100, 4);
  log.record(40, 72);
  log.record(90, 120);
  log.record(130, 140);
  CHECK_EQ(log.entries().size(), 2u);
  CHECK_EQ(log.entries()[0].start, 50u);
  CHECK_EQ(log.entries()[0].end, 72u);
  CHECK_EQ(log.entries()[1].start, 90u);
  CHECK_EQ(log.entries()[1].end, 100u);
}

namespace {
// One channel of the defaults: HBM2 pseudo-channel at 8 GB/s, 32 B bursts of 4 ns.
// Default mapping with one channel: bank group = (addr / 32) % 4, bank in group =
// (addr / 4 KiB) % 4, row = addr / 16 KiB; flat bank = bank_in_group * 4 + bank group.
HbmMemory::Params bank_level(unsigned channels = 1) {
  HbmMemory::Params p = one_channel();
  p.channels = channels;
  p.pseudo_channels = 1;  // channels of their own (pseudo-channels sharing buses: own cases)
  p.fidelity = "bank";
  p.t_refi = SC_ZERO_TIME;        // refresh has its own cases
  p.command_bus = "none";          // and so has the command bus
  return p;
}

sc_time write_delay(check::TestInitiator& ini, std::uint64_t addr, unsigned len, sc_time delay) {
  std::vector<unsigned char> buf(len);
  return ini.write(addr, buf.data(), len, delay).delay;
}
}  // namespace

TEST_CASE(bank_level_row_hit_miss_and_conflict_latencies) {
  Bench b(bank_level(), [](check::TestInitiator& ini) {
    // 64 B = bursts in banks 0 and 1 (groups 0, 1): ACT 0 and 4 (tRRD_S), RD 14 and 18,
    // last data 18 + tCL + 4 ns = 36 ns, plus the 100 ns controller latency.
    CHECK_EQ(ini.read_delay(0, 64), sc_time(136, SC_NS));
    // Both rows open: RD at 1000 and 1004 (tCCD_S), data until 1022.
    CHECK_EQ(ini.read_delay(0, 64, sc_time(1, SC_US)), sc_time(1122, SC_NS));
    // Row 1 of the same banks: PRE 2000, ACT 2014 / 2018, RD 2028 / 2032, data until 2050.
    CHECK_EQ(ini.read_delay(16384, 64, sc_time(2, SC_US)), sc_time(2150, SC_NS));
    // Banks 2 and 3 are still closed.
    CHECK_EQ(ini.read_delay(64, 64, sc_time(3, SC_US)), sc_time(3136, SC_NS));
    // 20 B still move a whole 32 B burst; row 1 of bank 1 is open.
    CHECK_EQ(ini.read_delay(16384 + 32, 20, sc_time(4, SC_US)), sc_time(4118, SC_NS));
  });
  b.run();
  tlm_models::StatsGroup g("hbm");
  b.mem.collect_stats(g);
  CHECK_EQ(stat(g, "row_hits").value, 3.0);
  CHECK_EQ(stat(g, "row_misses").value, 4.0);
  CHECK_EQ(stat(g, "row_conflicts").value, 2.0);
  CHECK_EQ(stat(g, "activates").value, 6.0);
  CHECK_EQ(stat(g, "precharges").value, 2.0);
  CHECK_EQ(stat(g, "read_bursts").value, 9.0);
  CHECK_EQ(stat(g.child("channel0"), "row_hits").value, 3.0);
  CHECK_EQ(stat(g.child("channel0"), "bytes_read").value, 64.0 * 4 + 20);
  CHECK_EQ(stat(g.child("channel0"), "read_bytes").value, 64.0 * 4 + 20);
}

TEST_CASE(bank_level_streams_at_channel_bandwidth) {
  Bench b(bank_level(), [](check::TestInitiator& ini) {
    // 4 KiB = 128 bursts over the four bank groups: the first RD at tRCD = 14 ns, then one
    // every 4 ns (tCCD_S = burst), so the data ends at 14 + 127 x 4 + 14 + 4 = 540 ns.
    CHECK_EQ(ini.read_delay(0, 4096), sc_time(100 + 540, SC_NS));
  });
  b.run();
  tlm_models::StatsGroup g("hbm");
  b.mem.collect_stats(g);
  CHECK_EQ(stat(g, "row_misses").value, 4.0);  // the first burst in each bank
  CHECK_EQ(stat(g, "row_hits").value, 124.0);
  CHECK_EQ(stat(g.child("channel0"), "busy_time").value, 512.0);
}

TEST_CASE(bank_level_address_mapping_interleaves_channels) {
  Bench b(bank_level(2), [](check::TestInitiator& ini) {
    CHECK_EQ(ini.read_delay(0, 64), sc_time(136, SC_NS));    // channel 0, banks 0 and 1
    CHECK_EQ(ini.read_delay(256, 64), sc_time(136, SC_NS));  // channel 1: its own banks
    // 512 is channel 0 again, the same rows: hits.
    CHECK_EQ(ini.read_delay(512, 64, sc_time(1, SC_US)), sc_time(1122, SC_NS));
    // 8 KiB is channel 0, bank in group 1 (banks 4 and 5): misses.
    CHECK_EQ(ini.read_delay(8192, 64, sc_time(2, SC_US)), sc_time(2136, SC_NS));
  });
  b.run();
  CHECK_EQ(b.mem.channel_of(8192), 0u);
  CHECK_EQ(b.mem.channel_of(256), 1u);
  CHECK_EQ(b.mem.controller(0).stats().row_hits, 2u);
  CHECK_EQ(b.mem.controller(0).stats().row_misses, 4u);
  CHECK_EQ(b.mem.controller(1).stats().row_misses, 2u);
}

// Two pseudo-channels of one HBM2 channel (the defaults: tCK 2 ns, two-cycle ACT, split buses):
// a 64 B read at 224 is a 32 B burst on each (channel 0's last burst of its granule, channel 1's
// first). Own buses: both ACT at 0, RD 14, data to 32, + 100 ns latency. Shared
// (pseudo_channels 2): the second ACT waits for the first's two cycles: ACT 4, RD 18, data to
// 36. The same in call order (immediate) and with a scheduler process per pseudo-channel
// (queued; whichever takes the bus first, the later one ends at 36).
TEST_CASE(bank_level_pseudo_channels_share_the_command_buses) {
  std::vector<std::unique_ptr<HbmMemory>> mems;
  std::vector<std::unique_ptr<check::TestInitiator>> inis;
  for (const char* mode : {"immediate", "queued"})
    for (unsigned pcs : {1u, 2u}) {
      HbmMemory::Params p = bank_level(2);
      p.command_bus = "split";
      p.pseudo_channels = pcs;
      p.request_mode = mode;
      const std::string n = std::string(mode) + std::to_string(pcs);
      mems.push_back(std::make_unique<HbmMemory>(("hbm_" + n).c_str(), p));
      inis.push_back(std::make_unique<check::TestInitiator>(
          ("ini_" + n).c_str(), [pcs](check::TestInitiator& ini) {
            const sc_time delay = ini.read_delay(224, 64);
            CHECK_EQ(sc_time_stamp() + delay, sc_time(pcs == 2 ? 136 : 132, SC_NS));
          }));
      inis.back()->socket.bind(mems.back()->target);
    }
  sc_start();
  for (const auto& ini : inis) CHECK(ini->finished());
}

TEST_CASE(bit_level_address_mapping) {
  tlm_models::DramAddressMapper::Geometry g;
  g.channels = 16;
  g.bank_groups = 4;
  g.banks = 16;
  g.row_size = 1024;
  g.interleave = 256;
  g.burst_bytes = 32;
  // The default mapping written out bit by bit (most significant first).
  tlm_models::DramAddressMapper bits(g, "row:14 bank:2 column:4 channel:4 column:1 bankgroup:2 column:5");
  tlm_models::DramAddressMapper dflt(g, "");
  CHECK(bits.error().empty());
  CHECK(dflt.error().empty());
  for (std::uint64_t a : {0ull, 32ull, 200ull, 4096ull, 123456789ull, (1ull << 33) - 32}) {
    tlm_models::DramAddress x = bits.map(a), y = dflt.map(a);
    CHECK_EQ(x.channel, y.channel);
    CHECK_EQ(x.bank, y.bank);
    CHECK_EQ(x.row, y.row);
    CHECK_EQ(x.column, y.column);
  }
  // 0x12345: bits 0-4 column 5, 5-6 group 2, 7 column 0, 8-11 channel 3, 12-15 column 2,
  // 16-17 bank 1 (flat bank 1 * 4 + 2 = 6), row 0.
  tlm_models::DramAddress a = bits.map(0x12345);
  CHECK_EQ(a.column, 5u + (0u << 5) + (2u << 6));
  CHECK_EQ(a.bank_group, 2u);
  CHECK_EQ(a.channel, 3u);
  CHECK_EQ(a.bank, 6u);
  CHECK_EQ(a.row, 0u);
  CHECK_EQ(bits.run_length(0x12345), 32u - 5);
  // Pseudo-channels are the low digit of the channel index.
  tlm_models::DramAddressMapper pc(g, "row:14 bank:2 bankgroup:2 column:2 channel:3 pseudochannel:1 column:8");
  CHECK(pc.error().empty());
  CHECK_EQ(pc.map(0x300).channel, 2u * 1 + 1);
  CHECK(tlm_models::DramAddressMapper(g, "row:14 bank:2 bankgroup:2 column:10 channel:3").error().find("channel") !=
        std::string::npos);
  CHECK(tlm_models::DramAddressMapper(g, "row:14 bank:2 colum:10").error().find("colum:10") !=
        std::string::npos);
}

TEST_CASE(bank_level_refresh_blocks_the_channel_and_closes_rows) {
  HbmMemory::Params p = bank_level();
  p.t_refi = sc_time(1, SC_US);
  p.t_rfc = sc_time(100, SC_NS);
  Bench b(p, [](check::TestInitiator& ini) {
    CHECK_EQ(ini.read_delay(0, 64), sc_time(136, SC_NS));
    CHECK_EQ(ini.read_delay(0, 64, sc_time(500, SC_NS)), sc_time(622, SC_NS));
    // Due at 1000: PRE at 1000, REF at 1014 (tRP), banks blocked until 1114; the rows were
    // closed: ACT 1114 / 1118, RD 1128 / 1132, data until 1150.
    CHECK_EQ(ini.read_delay(0, 64, sc_time(1050, SC_NS)), sc_time(1250, SC_NS));
    // Refreshes at 2, 3, 4 and 5 us; the last blocks until 5.1 us.
    CHECK_EQ(ini.read_delay(0, 64, sc_time(5, SC_US)), sc_time(5100 + 36 + 100, SC_NS));
  });
  b.run();
  const tlm_models::DramChannelStats& s = b.mem.controller(0).stats();
  CHECK_EQ(s.refreshes, 5u);
  CHECK_EQ(s.refresh_time, tlm_models::to_ticks(sc_time(500, SC_NS)));
  CHECK_EQ(s.row_hits, 2u);
  CHECK_EQ(s.row_misses, 6u);
}

// Efficiency derived from the timing set: requests all arriving at 0, one channel, no latency.
namespace {
HbmMemory::Params efficiency_bench() {
  HbmMemory::Params p = bank_level();
  p.latency = SC_ZERO_TIME;
  return p;
}
double efficiency(const HbmMemory& m) {
  tlm_models::StatsGroup g("hbm");
  m.collect_stats(g);
  return stat(g, "efficiency").value;
}
}  // namespace

TEST_CASE(single_bank_stride_is_bound_by_trc) {
  // Every 32 B read opens a new row of bank 0: one ACT per tRC = 48 ns. The last of 100 ends
  // at 99 x 48 + tRCD + tCL + 4 ns = 4784 ns; efficiency 3200 B / 4784 ns / 8 GB/s.
  Bench b(efficiency_bench(), [](check::TestInitiator& ini) {
    sc_time last;
    for (unsigned k = 0; k < 100; ++k) last = ini.read_delay(k * 16384ull, 32);
    CHECK_EQ(last, sc_time(4784, SC_NS));
  });
  b.run();
  CHECK(std::abs(efficiency(b.mem) - 3200.0 / (4784 * 8.0)) < 1e-12);
}

TEST_CASE(refresh_costs_trfc_per_trefi_on_a_stream) {
  // 1 MiB streamed takes 131072 ns of bursts + tRCD + tCL without refresh (as 4 KiB above).
  // Each all-bank refresh stops the bus for tRFC plus at most tRP + tRCD + tCL (closing and
  // reopening the rows): the overhead is about tRFC / tREFI = 9 %.
  HbmMemory::Params p = efficiency_bench();
  p.t_refi = sc_time(3900, SC_NS);
  p.t_rfc = sc_time(350, SC_NS);
  sc_time refreshed;
  Bench b(p, [&](check::TestInitiator& ini) { refreshed = ini.read_delay(0, 1 << 20); });
  b.run();
  const double plain_ns = 131072 + 14 + 14;
  const double total_ns = refreshed.to_seconds() * 1e9;
  const std::uint64_t n = b.mem.controller(0).stats().refreshes;
  CHECK_EQ(n, static_cast<std::uint64_t>(total_ns / 3900));
  const double overhead_ns = (total_ns - plain_ns) / static_cast<double>(n);
  CHECK(overhead_ns >= 350);
  CHECK(overhead_ns <= 350 + 14 + 14 + 14);
}

// Two streams of 16 x 32 B reads, all arriving at 0: A to bank 0 (group 0), called first, B to
// bank 1 (group 1), called after all of A. A: ACT 0, RDs at 14 + 8 k (tCCD_L), data to 32 + 8 k,
// its last at 152 ns.
static void two_streams(const char* admission, double b_last_ns) {
  HbmMemory::Params p = efficiency_bench();
  p.command_bus = "split";  // the defaults' HBM2 buses: nothing here needs more than 2 ns slots
  p.admission = admission;
  Bench b(p, [b_last_ns](check::TestInitiator& ini) {
    sc_time a, last;
    for (unsigned k = 0; k < 16; ++k) a = ini.read_delay(k * 128ull, 32);
    for (unsigned k = 0; k < 16; ++k) last = ini.read_delay(32 + k * 128ull, 32);
    CHECK_EQ(a, sc_time(152, SC_NS));
    CHECK_EQ(last, sc_time(b_last_ns, SC_NS));
  });
  b.run();
  CHECK_EQ(b.mem.controller(0).stats().activates, 2u);
}

// Admitted per bank, B fits between A's commands: ACT at 4 (tRRD_S), RDs at 18 + 8 k (tCCD_S
// after A's), data to 36 + 8 k; its last at 156 ns instead of queueing behind A's 152 ns.
TEST_CASE(a_later_callers_stream_interleaves_with_an_earlier_one) { two_streams("per_bank", 156); }

// In order, B enters only after all of A has: A's k-th request (k >= 8) enters its queue of 8
// when A's (k - 8)-th leaves at its RD, 14 + 8 (k - 8), so A's last and all of B at 70. B: ACT
// 70, first RD slot clear of A's data at 18 + 8 k >= 84: 90; last RD 90 + 15 x 8 = 210, data to
// 228.
TEST_CASE(in_order_admission_holds_a_later_stream_behind_a_full_queue) {
  two_streams("in_order", 228);
}

TEST_CASE(write_read_turnaround_costs_twtr_and_trtw) {
  // Alternating single-burst WR (bank 0) and RD (bank 1, another group) to open rows, one at
  // a time: WR at t, its data ends at t + tCWL + 4; RD at t + 8 + tWTR_S = t + 12; the next WR
  // at RD + tRTW = t + 30. A period of 30 ns moves 2 bursts.
  Bench b(efficiency_bench(), [](check::TestInitiator& ini) {
    ini.read_delay(0, 64);  // opens banks 0 and 1
    sc_time last;
    for (unsigned k = 0; k < 50; ++k) {
      write_delay(ini, 0, 32, sc_time(1, SC_US));
      last = ini.read_delay(32, 32, sc_time(1, SC_US));
    }
    CHECK_EQ(last, sc_time(1000 + 49 * 30 + 12 + 18, SC_NS));
  });
  b.run();
  const tlm_models::DramChannelStats& s = b.mem.controller(0).stats();
  CHECK_EQ(s.read_to_write, 50u);
  CHECK_EQ(s.write_to_read, 50u);
  CHECK_EQ(s.write_bursts, 50u);
}

TEST_CASE(new_rows_in_rotating_banks_are_bound_by_tfaw) {
  // Every 64 B read opens two rows (bank groups 0+1 or 2+3, banks rotating so that a bank is
  // reused only after tRC). At most four ACTs per tFAW = 30 ns: ACT i at 30 floor(i / 4) +
  // 4 (i mod 4) (tRRD_S). The last of 2000 requests: ACTs 3998 and 3999 at 29978 and 29982,
  // RD 29992 and 29996, data until 30014 ns: 128 B per 30 ns = 53.3 % of 8 GB/s.
  // Rows are scattered but never repeat (an odd multiplier permutes 0..4095): a repeated row
  // could be served as a hit before the PRE that closed it.
  Bench b(efficiency_bench(), [](check::TestInitiator& ini) {
    sc_time last;
    for (unsigned k = 0; k < 2000; ++k) {
      const std::uint64_t row = (k * 2654435761ull) % 4096;
      last = ini.read_delay(row * 16384 + (k % 4) * 4096 + ((k / 4) % 2) * 64, 64);
    }
    CHECK_EQ(last, sc_time(30014, SC_NS));
  });
  b.run();
  CHECK(std::abs(efficiency(b.mem) - 128000.0 / (30014 * 8.0)) < 1e-9);
}

TEST_CASE(random_rows_stay_between_the_trc_and_tfaw_bounds) {
  // Random banks and rows, requests served in call order: at worst every request waits a full
  // tRC (64 B per 48 ns = 16.7 %), at best the tFAW bound of the rotating case (53.3 %).
  Bench b(efficiency_bench(), [](check::TestInitiator& ini) {
    std::uint64_t x = 12345;
    for (unsigned k = 0; k < 2000; ++k) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      ini.read_delay((x >> 20) % (64ull << 20) / 64 * 64, 64);
    }
  });
  b.run();
  double e = efficiency(b.mem);
  CHECK(e <= 128.0 / 30 / 8 + 1e-3);
  CHECK(e >= 64.0 / 48 / 8);
}

TEST_CASE(invalid_params_are_reported_fatally) {
  sc_report_handler::set_actions(SC_FATAL, SC_DISPLAY | SC_THROW);
  HbmMemory::Params p;
  p.fidelity = "cycle";
  CHECK(p.check().find("fidelity") != std::string::npos);
  bool thrown = false;
  try {
    HbmMemory m("bad", p);
  } catch (const sc_report& r) {
    thrown = std::string(r.get_msg()).find("fidelity") != std::string::npos;
  }
  CHECK(thrown);
  HbmMemory::Params q;
  q.channels = 0;
  CHECK(!q.check().empty());
  q = HbmMemory::Params{};
  q.t_refi = sc_time(100, SC_NS);
  q.t_rfc = sc_time(100, SC_NS);
  CHECK(!q.check().empty());
  CHECK(HbmMemory::Params{}.check().empty());
  // The controller's choices name themselves in the error.
  q = HbmMemory::Params{};
  q.write_drain = "phases";
  CHECK(q.check().find("write_drain") != std::string::npos);
  q = HbmMemory::Params{};
  q.command_bus = "dual";
  CHECK(q.check().find("command_bus") != std::string::npos);
  q = HbmMemory::Params{};
  q.t_ck = SC_ZERO_TIME;
  CHECK(q.check().find("t_ck") != std::string::npos);
  q.command_bus = "none";  // no bus: no clock needed
  CHECK(q.check().empty());
  // Pseudo-channels group whole channels (bank level; the bandwidth level has no buses).
  q = HbmMemory::Params{};
  q.fidelity = "bank";
  q.channels = 3;
  CHECK_EQ(q.check(), std::string("channels (3) must be a multiple of pseudo_channels (2; 1: "
                                  "every channel has command buses of its own)"));
  q.fidelity = "bandwidth";
  CHECK(q.check().empty());
  q = HbmMemory::Params{};
  q.pseudo_channels = 0;
  CHECK_EQ(q.check(), std::string("pseudo_channels must be at least 1"));
  q = HbmMemory::Params{};
  q.act_cycles = 0;
  CHECK(q.check().find("act_cycles") != std::string::npos);
  // The declared minimum of every field holds in C++ too (params_generated.h), not only in
  // the platform loader.
  q = HbmMemory::Params{};
  q.frfcfs_cap = 0;
  CHECK_EQ(q.check(), std::string("frfcfs_cap must be at least 1"));
}

CHECK_MAIN
