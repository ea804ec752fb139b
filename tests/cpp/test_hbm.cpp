// HbmMemory: exact timing of the bandwidth and bank fidelities, splitting across channels,
// storage, DMI, debug transport, statistics and the base protocol.
#include <cstring>
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
HbmMemory::Params bank_level(unsigned channels = 1) {
  HbmMemory::Params p = one_channel();
  p.channels = channels;
  p.fidelity = "bank";
  return p;
}
}  // namespace

TEST_CASE(bank_level_row_hit_miss_and_conflict_latencies) {
  // One channel: local address = address; row = addr / 16 KiB, bank = (addr / 1 KiB) % 16.
  Bench b(bank_level(), [](check::TestInitiator& ini) {
    // Closed bank: t_rcd + t_cl, then 64 B = 2 bursts of 4 ns.
    CHECK_EQ(ini.read_delay(0, 64), sc_time(100 + 14 + 14 + 8, SC_NS));
    // Open row: t_cl only.
    CHECK_EQ(ini.read_delay(64, 64, sc_time(1, SC_US)), sc_time(1000 + 100 + 14 + 8, SC_NS));
    // Another row of bank 0 is a conflict: t_rp + t_rcd + t_cl.
    CHECK_EQ(ini.read_delay(16384, 64, sc_time(2, SC_US)), sc_time(2000 + 100 + 42 + 8, SC_NS));
    // Bank 1 is still closed.
    CHECK_EQ(ini.read_delay(1024, 64, sc_time(3, SC_US)), sc_time(3000 + 100 + 28 + 8, SC_NS));
    // 20 B still moves a whole 32 B burst; row 1 of bank 0 is open now.
    CHECK_EQ(ini.read_delay(16384 + 32, 20, sc_time(4, SC_US)), sc_time(4000 + 100 + 14 + 4, SC_NS));
  });
  b.run();
  tlm_models::StatsGroup g("hbm");
  b.mem.collect_stats(g);
  CHECK_EQ(stat(g, "row_hits").value, 2.0);
  CHECK_EQ(stat(g, "row_misses").value, 2.0);
  CHECK_EQ(stat(g, "row_conflicts").value, 1.0);
  CHECK_EQ(stat(g.child("channel0"), "row_hits").value, 2.0);
  CHECK_EQ(stat(g.child("channel0"), "bytes_read").value, 64.0 * 4 + 20);
  // Energy counts: ACT per miss or conflict, PRE per conflict, 2 bursts per 64 B, 1 for 20 B.
  tlm_models::StatsGroup& ch = g.child("channel0");
  CHECK_EQ(stat(ch, "activates").value, 3.0);
  CHECK_EQ(stat(ch, "precharges").value, 1.0);
  CHECK_EQ(stat(ch, "read_bursts").value, 4.0 * 2 + 1);
  CHECK_EQ(stat(ch, "write_bursts").value, 0.0);
  CHECK_EQ(stat(ch, "read_bytes").value, 64.0 * 4 + 20);
}

TEST_CASE(bank_level_streams_hits_at_channel_bandwidth) {
  Bench b(bank_level(), [](check::TestInitiator& ini) {
    // 4 KiB = four rows in banks 0..3: every activation hides behind the queued transfers,
    // so only the first access's t_rcd + t_cl shows.
    CHECK_EQ(ini.read_delay(0, 4096), sc_time(100 + 28 + 512, SC_NS));
  });
  b.run();
  tlm_models::StatsGroup g("hbm");
  b.mem.collect_stats(g);
  CHECK_EQ(stat(g, "row_misses").value, 4.0);   // first 256 B piece in each bank
  CHECK_EQ(stat(g, "row_hits").value, 12.0);
}

TEST_CASE(bank_level_address_mapping_removes_channel_bits) {
  Bench b(bank_level(2), [](check::TestInitiator& ini) {
    CHECK_EQ(ini.read_delay(0, 64), sc_time(136, SC_NS));  // ch0, local 0, bank 0: miss
    CHECK_EQ(ini.read_delay(256, 64), sc_time(136, SC_NS));  // ch1: its own banks
    // Address 512 is channel 0, local 256: the same row as local 0.
    CHECK_EQ(ini.read_delay(512, 64, sc_time(1, SC_US)), sc_time(1000 + 122, SC_NS));
    // Address 2048 is granule 8: channel 0, local 1024 = bank 1.
    CHECK_EQ(ini.read_delay(2048, 64, sc_time(2, SC_US)), sc_time(2000 + 136, SC_NS));
  });
  b.run();
  CHECK_EQ(b.mem.channel_of(2048), 0u);
  CHECK_EQ(b.mem.channel(0).row_hits(), 1u);
  CHECK_EQ(b.mem.channel(0).row_misses(), 2u);
  CHECK_EQ(b.mem.channel(1).row_misses(), 1u);
}

TEST_CASE(bank_level_refresh_blocks_the_channel_and_closes_rows) {
  HbmMemory::Params p = bank_level();
  p.t_refi = sc_time(1, SC_US);
  p.t_rfc = sc_time(100, SC_NS);
  Bench b(p, [](check::TestInitiator& ini) {
    CHECK_EQ(ini.read_delay(0, 64), sc_time(136, SC_NS));
    CHECK_EQ(ini.read_delay(0, 64, sc_time(500, SC_NS)), sc_time(500 + 122, SC_NS));
    // Refresh at 1000..1100 ns: the command waits, and the row was closed.
    CHECK_EQ(ini.read_delay(0, 64, sc_time(1050, SC_NS)), sc_time(1100 + 136, SC_NS));
    // Refreshes due at 2, 3, 4 and 5 us; the last still blocks until 5.1 us.
    CHECK_EQ(ini.read_delay(0, 64, sc_time(5, SC_US)), sc_time(5100 + 136, SC_NS));
  });
  b.run();
  CHECK_EQ(b.mem.channel(0).refreshes(), 5u);
  CHECK_EQ(b.mem.channel(0).row_hits(), 1u);
  CHECK_EQ(b.mem.channel(0).row_misses(), 3u);
  // Bank 0 was open at the refreshes due at 1 us and 2 us (the one at 2..5 us found it closed):
  // each refresh first precharges it.
  CHECK_EQ(b.mem.channel(0).activates(), 3u);
  CHECK_EQ(b.mem.channel(0).precharges(), 2u);
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
}

CHECK_MAIN
