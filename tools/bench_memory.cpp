// Benchmarks of the memory models; prints the numbers recorded in docs/models/*.md "Measured".
//   g++ -std=c++17 -O2 -Wall -Wextra -Werror -I tlm_models/include tools/bench_memory.cpp
//       -o build/bench_memory -lsystemc
//   SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1 build/bench_memory          # HBM numbers
//   SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1 build/bench_memory tg       # TrafficGenerator -> HBM
//   SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1 build/bench_memory onchip   # Sram, Interconnect -> Sram
//   SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1 build/bench_memory at       # nb_transport, LT alongside
#include <chrono>
#include <memory>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "tlm_models/hbm.h"
#include "tlm_models/interconnect.h"
#include "tlm_models/sram.h"
#include "tlm_models/timing_only.h"
#include "tlm_models/traffic_generator.h"

using namespace sc_core;
using tlm_models::HbmMemory;

namespace {

// Runs `body` in a thread; `fast` is bound to the bandwidth-level HBM, `bank` to the bank level.
struct Driver : sc_module {
  tlm_utils::simple_initiator_socket<Driver> fast;
  tlm_utils::simple_initiator_socket<Driver> bank;
  std::function<void(Driver&)> body;
  Driver(sc_module_name n, std::function<void(Driver&)> b)
      : sc_module(n), fast("fast"), bank("bank"), body(std::move(b)) {
    SC_HAS_PROCESS(Driver);
    SC_THREAD(run);
  }
  void run() { body(*this); }

  // One read; returns the annotated delay.
  sc_time read(tlm_utils::simple_initiator_socket<Driver>& s, tlm::tlm_generic_payload& t,
               std::uint64_t addr, sc_time delay) {
    t.set_address(addr);
    t.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    s->b_transport(t, delay);
    return delay;
  }
};

void setup(tlm::tlm_generic_payload& t, unsigned char* buf, unsigned len) {
  t.set_command(tlm::TLM_READ_COMMAND);
  t.set_data_ptr(buf);
  t.set_data_length(len);
  t.set_streaming_width(len);
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

// TrafficGenerator against the bandwidth-level HBM: one wait() per request.
int bench_traffic_generator() {
  tlm_models::TrafficGenerator::Params g;
  g.requests = 2'000'000;
  g.request_size = 256;
  g.range = std::uint64_t{1} << 30;
  g.max_outstanding = 64;
  tlm_models::TrafficGenerator gen("gen", g);
  HbmMemory hbm("hbm", HbmMemory::Params{});
  gen.socket.bind(hbm.target);
  auto t0 = std::chrono::steady_clock::now();
  sc_start();
  double s = seconds_since(t0);
  std::printf("traffic_generator: %u x 256 B sequential reads, 64 outstanding: %.3f s = %.2f M "
              "requests/s; achieved %.2f GB/s, mean latency %.1f ns, last completion %s\n",
              g.requests, s, g.requests / s / 1e6, gen.achieved_bandwidth() / 1e9,
              gen.mean_latency_ns(), gen.last_completion().to_string().c_str());
  return 0;
}

// The on-chip path of platforms/attenio.yaml: the scratchpad alone, and behind the compute
// interconnect, with requests paced at the port rate (LT, no wait per call).
int bench_onchip() {
  tlm_models::Sram::Params sp;
  sp.port_width = 4096;  // attenio.yaml: 2 ports x 4 KiB per cycle, 16 banks, 512 KiB
  tlm_models::Sram direct("direct", sp);
  tlm_models::Sram routed("routed", sp);
  tlm_models::Interconnect::Params np;
  np.width = 8192;
  tlm_models::Interconnect noc("noc", np);
  noc.out.bind(routed.target);
  noc.add_route(0, sp.capacity, 0);

  Driver d("d", [&](Driver& self) {
    std::vector<unsigned char> buf(8192);
    auto run = [&](const char* what, tlm_utils::simple_initiator_socket<Driver>& s, unsigned len,
                   bool timing_only) {
      tlm::tlm_generic_payload t;  // frees its extension when the series ends
      setup(t, buf.data(), len);
      if (timing_only) t.set_extension(new tlm_models::TimingOnly);
      const std::uint64_t n = 2'000'000;
      auto t0 = std::chrono::steady_clock::now();
      for (std::uint64_t i = 0; i < n; ++i)
        self.read(s, t, (i * len) % sp.capacity, sc_time(static_cast<double>(i), SC_NS));
      double secs = seconds_since(t0);
      std::printf("%s: %llu x %u B reads%s in %.3f s = %.2f M transactions/s\n", what,
                  static_cast<unsigned long long>(n), len, timing_only ? " (timing only)" : "",
                  secs, n / secs / 1e6);
      sc_core::wait(sc_time(10, SC_MS));  // past every booking before the next series
    };
    run("sram", self.fast, 256, false);
    run("sram", self.fast, 8192, false);
    run("sram", self.fast, 8192, true);
    run("interconnect -> sram", self.bank, 256, false);
    run("interconnect -> sram", self.bank, 8192, true);
  });
  d.fast.bind(direct.target);
  d.bank.bind(noc.in);
  sc_start();
  return 0;
}

// Approximately timed: a thread sends one 256 B read as BEGIN_REQ every 4 ns (64 GB/s, half the
// default HBM's peak; END_REQ comes at once
// from every target here) and ends each response on the backward call; the same reads as
// b_transport for comparison. Payloads come from a pool (a memory manager), as AT requires.
struct AtDriver : sc_module, tlm::tlm_mm_interface {
  tlm_utils::simple_initiator_socket<AtDriver> at;
  tlm_utils::simple_initiator_socket<AtDriver> lt;
  std::uint64_t n = 0, answered = 0, range = 0;
  double at_seconds = 0, lt_seconds = 0;
  AtDriver* after = nullptr;  // starts when this one is done: one timed run at a time
  sc_event done;
  bool finished = false;

  explicit AtDriver(sc_module_name name) : sc_module(name), at("at"), lt("lt") {
    at.register_nb_transport_bw(this, &AtDriver::bw);
    SC_HAS_PROCESS(AtDriver);
    SC_THREAD(run);
  }
  void free(tlm::tlm_generic_payload* t) override { pool_.push_back(t); }

 private:
  void run() {
    if (after != nullptr && !after->finished) wait(after->done);
    std::vector<unsigned char> buf(256);
    auto t0 = std::chrono::steady_clock::now();
    for (std::uint64_t i = 0; i < n; ++i) {
      tlm::tlm_generic_payload* t = get();
      setup(*t, buf.data(), 256);
      t->set_address((i * 256) % range);
      t->set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
      t->acquire();
      tlm::tlm_phase phase = tlm::BEGIN_REQ;
      sc_time delay = SC_ZERO_TIME;
      if (at->nb_transport_fw(*t, phase, delay) == tlm::TLM_COMPLETED) finish(*t);
      wait(4, SC_NS);
    }
    while (answered < n) wait(1, SC_US);
    at_seconds = seconds_since(t0);
    tlm::tlm_generic_payload t;
    setup(t, buf.data(), 256);
    t0 = std::chrono::steady_clock::now();
    for (std::uint64_t i = 0; i < n; ++i) {
      t.set_address((i * 256) % range);
      t.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
      sc_time delay = SC_ZERO_TIME;
      lt->b_transport(t, delay);
      wait(4, SC_NS);
    }
    lt_seconds = seconds_since(t0);
    finished = true;
    done.notify();
  }
  tlm::tlm_sync_enum bw(tlm::tlm_generic_payload& t, tlm::tlm_phase& phase, sc_time&) {
    if (phase != tlm::BEGIN_RESP) return tlm::TLM_ACCEPTED;
    finish(t);
    return tlm::TLM_COMPLETED;
  }
  void finish(tlm::tlm_generic_payload& t) {
    ++answered;
    t.release();
  }
  tlm::tlm_generic_payload* get() {
    if (pool_.empty()) {
      all_.push_back(std::make_unique<tlm::tlm_generic_payload>(this));
      return all_.back().get();
    }
    tlm::tlm_generic_payload* t = pool_.back();
    pool_.pop_back();
    return t;
  }
  std::vector<std::unique_ptr<tlm::tlm_generic_payload>> all_;
  std::vector<tlm::tlm_generic_payload*> pool_;
};

// Each target behind an interconnect (crossbar), AT against LT; the SRAM also alone. Both
// transports pay one wait() per request, as an initiator pacing its requests does.
int bench_at() {
  tlm_models::Sram::Params sp;
  HbmMemory::Params queued;
  queued.fidelity = "bank";
  queued.request_mode = "queued";
  const std::uint64_t n = 200'000;
  std::vector<std::unique_ptr<sc_module>> keep;
  std::vector<std::pair<std::string, AtDriver*>> drivers;
  auto target = [&](const std::string& what, bool routed, auto make) {
    auto d = std::make_unique<AtDriver>(sc_gen_unique_name("driver"));
    d->n = n;
    d->range = 64 * 1024;
    d->after = drivers.empty() ? nullptr : drivers.back().second;
    for (tlm_utils::simple_initiator_socket<AtDriver>* s : {&d->at, &d->lt}) {
      auto memory = make();
      if (routed) {
        auto noc = std::make_unique<tlm_models::Interconnect>(sc_gen_unique_name("noc"),
                                                              tlm_models::Interconnect::Params{});
        s->bind(noc->in);
        noc->out.bind(memory->target);
        noc->add_route(0, d->range, 0);
        keep.push_back(std::move(noc));
      } else {
        s->bind(memory->target);
      }
      keep.push_back(std::move(memory));
    }
    drivers.emplace_back(what, d.get());
    keep.push_back(std::move(d));
  };
  target("sram", false, [&] { return std::make_unique<tlm_models::Sram>(sc_gen_unique_name("sram"), sp); });
  target("interconnect -> sram", true,
         [&] { return std::make_unique<tlm_models::Sram>(sc_gen_unique_name("sram"), sp); });
  target("interconnect -> hbm (bandwidth)", true,
         [&] { return std::make_unique<HbmMemory>(sc_gen_unique_name("hbm"), HbmMemory::Params{}); });
  target("interconnect -> hbm (bank, queued)", true,
         [&] { return std::make_unique<HbmMemory>(sc_gen_unique_name("hbm"), queued); });
  sc_start();
  for (const auto& [what, d] : drivers)
    std::printf("%s: %llu x 256 B reads, one per 4 ns: AT %.3f s = %.2f M transactions/s, "
                "LT %.3f s = %.2f M/s\n",
                what.c_str(), static_cast<unsigned long long>(n), d->at_seconds,
                n / d->at_seconds / 1e6, d->lt_seconds, n / d->lt_seconds / 1e6);
  return 0;
}

int sc_main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "tg") return bench_traffic_generator();
  if (argc > 1 && std::string(argv[1]) == "onchip") return bench_onchip();
  if (argc > 1 && std::string(argv[1]) == "at") return bench_at();
  HbmMemory::Params bw;  // defaults: 16 x 8 GB/s, 100 ns, 256 B interleave, 8 GiB
  HbmMemory::Params bank = bw;  // one channel of it at bank level
  bank.fidelity = "bank";
  bank.channels = 1;
  bank.pseudo_channels = 1;
  bank.size = std::uint64_t{512} << 20;
  // Rows of 1 KiB filling banks in turn (row : bank : column), so that "one bank" below means
  // one bank; 512 MiB = 2^29 B.
  bank.address_mapping = "row:15 bank:2 bankgroup:2 column:10";
  HbmMemory hbm("hbm", bw);
  HbmMemory hbm_bank("hbm_bank", bank);

  Driver d("d", [&](Driver& self) {
    unsigned char buf[256];
    tlm::tlm_generic_payload t;

    // 1. Zero-load latency: a 64 B read to an idle channel = latency + 64 B / 8 GB/s.
    setup(t, buf, 64);
    sc_time zl = self.read(self.fast, t, 0, SC_ZERO_TIME);
    std::printf("hbm bandwidth: zero-load 64 B read latency %s (expected 108 ns: %s)\n",
                zl.to_string().c_str(), zl == sc_time(108, SC_NS) ? "exact" : "MISMATCH");

    // 2. Bandwidth-level throughput of the model: sequential 256 B bursts, arrivals paced at the
    //    peak rate (2 ns apart), LT with no wait per call.
    setup(t, buf, 256);
    const std::uint64_t n = 4'000'000;
    auto t0 = std::chrono::steady_clock::now();
    for (std::uint64_t i = 0; i < n; ++i)
      self.read(self.fast, t, (i * 256) % bw.size, sc_time(1000 + 2.0 * static_cast<double>(i), SC_NS));
    double s = seconds_since(t0);
    std::printf("hbm bandwidth: %llu sequential 256 B bursts in %.3f s = %.2f M bursts/s\n",
                static_cast<unsigned long long>(n), s, n / s / 1e6);
    tlm_models::StatsGroup g("hbm");
    hbm.collect_stats(g);
    std::printf("hbm bandwidth: achieved %.2f GB/s of %.0f GB/s peak\n",
                g.find("achieved_bandwidth")->value / 1e9, g.find("peak_bandwidth")->value / 1e9);

    // 3. Bank level, zero load: random 64 B reads, far apart in time, mostly row conflicts.
    setup(t, buf, 64);
    std::mt19937_64 rng(1);
    const std::uint64_t zl_n = 10000;
    sc_time base(1, SC_MS);
    hbm_bank.reset_stats();
    for (std::uint64_t i = 0; i < zl_n; ++i)
      self.read(self.bank, t, (rng() % (bank.size / 64)) * 64, base + sc_time(1.0 * static_cast<double>(i), SC_US));
    tlm_models::StatsGroup zg("zl");
    hbm_bank.collect_stats(zg);
    std::printf("hbm bank: %llu random 64 B reads at zero load: mean latency %.1f ns, max %.1f ns "
                "(hits %.0f, misses %.0f, conflicts %.0f)\n",
                static_cast<unsigned long long>(zl_n), zg.find("latency_mean")->value,
                zg.find("latency_max")->value, zg.find("row_hits")->value,
                zg.find("row_misses")->value, zg.find("row_conflicts")->value);

    // 4. Bank level under load, one channel: 64 B reads offered at the channel's 8 GB/s peak
    //    (8 ns apart). With probability `locality` a read continues in the open row of the
    //    previous one; otherwise it opens a random row, in a random bank ("spread") or in the
    //    same bank ("one bank").
    std::printf("hbm bank, one channel: 100000 x 64 B reads offered at 8 GB/s\n");
    std::printf("  locality  misses-in  row-hit-rate  achieved-GB/s  mean-latency-ns  calls/s\n");
    sc_time start(100, SC_MS);
    const std::uint64_t rows = bank.size / bank.row_size / bank.banks;
    for (bool one_bank : {false, true}) {
      for (double locality : {0.0, 0.5, 0.75, 0.9, 1.0}) {
        hbm_bank.reset_stats();
        std::uint64_t cur = 0;
        std::uniform_real_distribution<double> coin(0.0, 1.0);
        const std::uint64_t m = 100000;
        auto b0 = std::chrono::steady_clock::now();
        for (std::uint64_t i = 0; i < m; ++i) {
          std::uint64_t col = cur % bank.row_size;
          std::uint64_t row_base = cur - col;
          if (i > 0 && coin(rng) < locality) {
            cur = row_base + (col + 64) % bank.row_size;
          } else if (one_bank) {
            cur = (rng() % rows) * bank.row_size * bank.banks + (rng() % (bank.row_size / 64)) * 64;
          } else {
            cur = (rng() % (bank.size / 64)) * 64;
          }
          self.read(self.bank, t, cur, start + sc_time(8.0 * static_cast<double>(i), SC_NS));
        }
        double bs = seconds_since(b0);
        tlm_models::StatsGroup lg("l");
        hbm_bank.collect_stats(lg);
        double hits = lg.find("row_hits")->value;
        double all = hits + lg.find("row_misses")->value + lg.find("row_conflicts")->value;
        std::printf("  %8.2f  %9s  %12.3f  %13.2f  %15.1f  %.2fM\n", locality,
                    one_bank ? "one bank" : "spread", hits / all,
                    lg.find("achieved_bandwidth")->value / 1e9, lg.find("latency_mean")->value,
                    m / bs / 1e6);
        start += sc_time(1, SC_SEC);
      }
    }
  });
  d.fast.bind(hbm.target);
  d.bank.bind(hbm_bank.target);
  sc_start();
  return 0;
}
