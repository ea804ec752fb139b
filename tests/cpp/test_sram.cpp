// Sram: port-pool timing, wide ports, bank conflict accounting, several initiators on the
// multi-passthrough socket, storage, DMI and the base protocol.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "check.h"
#include "protocol_checks.h"
#include "tlm_models/sram.h"

using namespace sc_core;
using tlm_models::Sram;

namespace {

struct Bench {
  Sram sram;
  check::TestInitiator ini;
  Bench(const Sram::Params& p, std::function<void(check::TestInitiator&)> body)
      : sram("sram", p), ini("ini", std::move(body)) {
    ini.socket.bind(sram.target);
  }
  void run() {
    sc_start();
    CHECK(ini.finished());
  }
  tlm_models::StatsGroup stats() const {
    tlm_models::StatsGroup g("sram");
    sram.collect_stats(g);
    return g;
  }
};

double value(const tlm_models::StatsGroup& g, const std::string& name) {
  const tlm_models::Stat* s = g.find(name);
  CHECK(s != nullptr);
  return s ? s->value : -1.0;
}

}  // namespace

TEST_CASE(request_takes_ceil_bytes_over_width_cycles_plus_latency) {
  Bench b(Sram::Params{}, [](check::TestInitiator& ini) {
    CHECK_EQ(ini.read_delay(0, 64), sc_time(1 + 1, SC_NS));
    CHECK_EQ(ini.read_delay(0, 65, sc_time(100, SC_NS)), sc_time(100 + 2 + 1, SC_NS));
    CHECK_EQ(ini.read_delay(0, 1, sc_time(200, SC_NS)), sc_time(200 + 1 + 1, SC_NS));
  });
  b.run();
}

TEST_CASE(requests_take_the_earliest_free_port_and_queue_when_all_are_busy) {
  Bench b(Sram::Params{}, [](check::TestInitiator& ini) {
    CHECK_EQ(ini.read_delay(0, 256), sc_time(4 + 1, SC_NS));     // port 0: 0..4
    CHECK_EQ(ini.read_delay(1024, 256), sc_time(4 + 1, SC_NS));  // port 1: 0..4
    CHECK_EQ(ini.read_delay(2048, 128), sc_time(4 + 2 + 1, SC_NS));  // port 0: 4..6
    CHECK_EQ(ini.read_delay(2048, 64), sc_time(4 + 1 + 1, SC_NS));   // port 1: 4..5
    CHECK_EQ(ini.read_delay(2048, 64), sc_time(5 + 1 + 1, SC_NS));   // port 1: 5..6
  });
  b.run();
  auto g = b.stats();
  CHECK_EQ(value(g.child("port0"), "bytes"), 384.0);
  CHECK_EQ(value(g.child("port1"), "bytes"), 384.0);
  CHECK_EQ(value(g.child("port0"), "busy_time"), 6.0);
  CHECK_EQ(value(g.child("port1"), "busy_time"), 6.0);
  CHECK_EQ(value(g.child("port0"), "wait_time"), 4.0);
  CHECK_EQ(value(g.child("port1"), "wait_time"), 4.0 + 5.0);
  CHECK_EQ(value(g, "latency_max"), 7.0);
  CHECK_EQ(value(g, "bytes_read"), 768.0);
  CHECK_EQ(value(g, "read_accesses"), 4.0 + 4 + 2 + 1 + 1);  // 64 B words
  CHECK_EQ(value(g, "write_accesses"), 0.0);
}

TEST_CASE(wide_ports_and_slower_clock) {
  Sram::Params p;
  p.port_width = 4096;  // a PE array is fed several KiB a cycle
  p.clock = 500e6;
  p.ports = 1;
  Bench b(p, [](check::TestInitiator& ini) {
    CHECK_EQ(ini.read_delay(0, 8192), sc_time(2 * 2 + 1, SC_NS));
    CHECK_EQ(ini.read_delay(0, 4097), sc_time(4 + 2 * 2 + 1, SC_NS));
    unsigned char byte = 0;
    CHECK_EQ(ini.write(0, &byte, 1).status, tlm::TLM_OK_RESPONSE);
  });
  b.run();
  CHECK_EQ(b.sram.bank_word(), 256u);
  CHECK_EQ(value(b.stats(), "read_accesses"), 2.0 + 2);  // 4 KiB words: 8192 B and 4097 B
  CHECK_EQ(value(b.stats(), "write_accesses"), 1.0);
}

TEST_CASE(banks_are_word_interleaved_and_conflicts_counted) {
  Sram::Params p;  // 64 B ports, 16 banks: 4 B words
  Bench b(p, [](check::TestInitiator& ini) {
    ini.read_delay(0, 64);                          // port 0, every bank, 0..1 ns
    ini.read_delay(0, 4);                           // port 1, bank 0 still held: conflict
    ini.read_delay(8, 8);                           // port 0 at 1 ns: banks 2, 3 free again
    ini.read_delay(64 * 3 + 4, 4, sc_time(5, SC_NS));  // bank 1 at 5 ns: free
  });
  b.run();
  CHECK_EQ(b.sram.bank_word(), 4u);
  CHECK_EQ(b.sram.bank_of(64 * 3 + 4), 1u);
  CHECK_EQ(b.sram.bank_conflicts(0), 1u);
  CHECK_EQ(b.sram.bank_conflicts(1), 0u);
  CHECK_EQ(b.sram.bank_conflicts(2), 0u);
  auto g = b.stats();
  CHECK_EQ(value(g, "bank_conflicts"), 1.0);
  CHECK_EQ(value(g.child("bank0"), "bytes"), 8.0);
  CHECK_EQ(value(g.child("bank1"), "bytes"), 8.0);
  CHECK_EQ(value(g.child("bank2"), "bytes"), 8.0);
  CHECK_EQ(value(g.child("bank5"), "bytes"), 4.0);
  CHECK_EQ(value(g.child("bank0"), "busy_time"), 1.0);  // union of [0,1) and [0,1)
  CHECK_EQ(value(g.child("bank2"), "busy_time"), 2.0);  // [0,1) and [1,2)
  b.sram.reset_stats();
  CHECK_EQ(value(b.stats(), "bank_conflicts"), 0.0);
}

// The bank accounting keeps most banks' figures in shared counters (sram.h); every bank's
// bytes, busy time and conflicts must equal a plain per-bank pass over the words each request
// touches, for a mix of full-width, partial and single-word requests arriving out of order on
// two ports.
TEST_CASE(bank_figures_equal_a_per_bank_reference) {
  Sram::Params p;  // 64 B ports, 16 banks: 4 B words, 1 ns cycles, 1 ns latency
  constexpr unsigned kBanks = 16;
  struct RefBank {
    std::uint64_t until = 0, busy = 0, conflicts = 0, bytes = 0;
  };
  std::vector<RefBank> ref(kBanks);
  Bench b(p, [&](check::TestInitiator& ini) {
    std::uint64_t x = 12345;  // a fixed LCG: the same requests on every run
    auto next = [&x](std::uint64_t n) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      return (x >> 33) % n;
    };
    for (int i = 0; i < 4000; ++i) {
      const std::uint64_t kind = next(4);
      const unsigned len = kind == 0 ? 64 + static_cast<unsigned>(next(200))   // every bank
                           : kind == 1 ? 1 + static_cast<unsigned>(next(4))   // one word
                                       : 1 + static_cast<unsigned>(next(60));  // a few banks
      const std::uint64_t addr = next(4096);
      const sc_time ahead(static_cast<double>(next(12)), SC_NS);
      const std::uint64_t now = sc_time_stamp().value();
      const sc_time d = ini.read_delay(addr, len, ahead);
      const std::uint64_t end = now + d.value() - 1000;  // ready = end + 1 ns latency
      const std::uint64_t start = end - ((len + 63) / 64) * 1000;
      for (std::uint64_t w = addr / 4; w <= (addr + len - 1) / 4; ++w) {
        RefBank& r = ref[w % kBanks];
        r.bytes += std::min<std::uint64_t>(addr + len, (w + 1) * 4) - std::max<std::uint64_t>(addr, w * 4);
      }
      std::vector<bool> touched(kBanks, false);
      for (std::uint64_t w = addr / 4; w <= (addr + len - 1) / 4; ++w) touched[w % kBanks] = true;
      for (unsigned k = 0; k < kBanks; ++k) {
        if (!touched[k]) continue;
        RefBank& r = ref[k];
        if (r.until > start) ++r.conflicts;
        const std::uint64_t from = std::max(start, r.until);
        if (end > from) r.busy += end - from;
        r.until = std::max(r.until, end);
      }
      if (next(8) == 0) wait(static_cast<double>(next(6)), SC_NS);
    }
  });
  b.run();
  auto g = b.stats();
  for (unsigned k = 0; k < kBanks; ++k) {
    const auto& bank = g.child("bank" + std::to_string(k));
    CHECK_EQ(value(bank, "bytes"), static_cast<double>(ref[k].bytes));
    CHECK_EQ(value(bank, "busy_time"), static_cast<double>(ref[k].busy) / 1000.0);
    CHECK_EQ(value(bank, "conflicts"), static_cast<double>(ref[k].conflicts));
  }
}

TEST_CASE(several_initiators_share_the_ports) {
  Sram sram("sram", Sram::Params{});
  sc_time a, c;
  check::TestInitiator i0("i0", [&](check::TestInitiator& ini) { a = ini.read_delay(0, 640); });
  check::TestInitiator i1("i1", [&](check::TestInitiator& ini) {
    wait(SC_ZERO_TIME);
    ini.read_delay(64, 640);
    c = ini.read_delay(128, 64);
  });
  check::TestInitiator i2("i2", [&](check::TestInitiator& ini) { check::check_base_protocol(ini, {512 * 1024, 4096, true}); });
  i0.socket.bind(sram.target);
  i1.socket.bind(sram.target);
  i2.socket.bind(sram.target);
  sc_start();
  CHECK_EQ(a, sc_time(10 + 1, SC_NS));
  // The protocol checks' traffic ran at time 0 as well; i1's second read waits for a port.
  CHECK(c > sc_time(2, SC_NS));
  CHECK(i0.finished() && i1.finished() && i2.finished());
  CHECK_EQ(sram.target.size(), 3u);
}

TEST_CASE(base_protocol_with_storage) {
  Bench b(Sram::Params{}, [](check::TestInitiator& ini) {
    check::check_base_protocol(ini, {512 * 1024, 1000, true});
  });
  b.run();
}

TEST_CASE(base_protocol_without_storage) {
  Sram::Params p;
  p.storage = false;
  p.capacity = 4096;
  Bench b(p, [](check::TestInitiator& ini) { check::check_base_protocol(ini, {4096, 64, false}); });
  b.run();
}

TEST_CASE(dmi_covers_the_whole_capacity) {
  Bench b(Sram::Params{}, [](check::TestInitiator& ini) {
    tlm::tlm_dmi dmi;
    CHECK(ini.dmi(300000, tlm::TLM_READ_COMMAND, dmi));
    CHECK_EQ(dmi.get_start_address(), 0u);
    CHECK_EQ(dmi.get_end_address(), 512u * 1024 - 1);
    CHECK_EQ(dmi.get_write_latency(), sc_time(1, SC_NS));
    tlm::tlm_dmi outside;
    CHECK(!ini.dmi(512 * 1024, tlm::TLM_READ_COMMAND, outside));
    CHECK_EQ(outside.get_start_address(), 512u * 1024);
  });
  b.run();
}

TEST_CASE(invalid_params_are_named) {
  Sram::Params p;
  CHECK(p.check().empty());
  p.ports = 0;
  CHECK(p.check().find("ports") != std::string::npos);
  p = Sram::Params{};
  p.clock = 0;
  CHECK(p.check().find("clock") != std::string::npos);
}

CHECK_MAIN
