// The bank-level DRAM controller alone: 200,000 one-burst reads issued at once (arrival 0) to one
// channel on the `hbm` defaults, submitted and drained in call order as the immediate request
// mode's b_transport does (one request per call, and 16 per call). Prints the best of three
// wall and CPU times per trace and, to check that a faster controller decides the same, a
// digest of every issued command and completion. docs/models/dram_controller.md ("Speed")
// records the numbers. (sc_main: hbm.h needs SystemC.) `make bench` runs it (tools/bench_all.py).
//   SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1 build/bench_dram_controller [requests]
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <random>
#include <utility>
#include <vector>

#include "tlm_models/dram_controller.h"
#include "tlm_models/dram_scheduler_frfcfs.h"
#include "tlm_models/hbm.h"

namespace {

using tlm_models::DramController;
using tlm_models::Ticks;

struct Target {
  unsigned bank;
  std::uint64_t row;
};

// Sequential: a row's 32 bursts (1 KiB rows of 32 B bursts), then the next bank's.
// Random: uniform banks and rows (16,384 rows: 16 MiB per bank). Two rows: bank 0 only,
// alternating between two rows that each advance by one burst (two interleaved streams).
std::vector<Target> trace(const char* pattern, std::size_t n, unsigned banks,
                          std::uint64_t bursts_per_row) {
  std::vector<Target> out(n);
  std::mt19937_64 rng(1);
  for (std::size_t i = 0; i < n; ++i) {
    if (pattern[0] == 's') {
      const std::uint64_t run = i / bursts_per_row;
      out[i] = {static_cast<unsigned>(run % banks), run / banks};
    } else if (pattern[0] == 'r') {
      out[i] = {static_cast<unsigned>(rng() % banks), rng() % 16384};
    } else {
      const std::uint64_t stream = i / 2;
      out[i] = {0, 2 * (stream / bursts_per_row) + i % 2};
    }
  }
  return out;
}

// CPU time of this process: on a shared machine it leaves out the time the process waited for a
// core, which wall time does not.
double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

struct Result {
  double seconds = 0, cpu = 0;
  std::uint64_t digest = 0;
  Ticks last_data = 0;
  std::uint64_t commands = 0;
};

// FNV-1a over 64-bit words.
void mix(std::uint64_t* h, std::uint64_t v) {
  for (int b = 0; b < 8; ++b) {
    *h ^= (v >> (8 * b)) & 0xff;
    *h *= 1099511628211ull;
  }
}

Result run(const DramController::Config& cfg, unsigned cap, const std::vector<Target>& t,
           std::size_t per_call, bool record) {
  DramController c(cfg, std::make_shared<tlm_models::FrFcfsScheduler>(cap));
  std::vector<Ticks> done(per_call);
  std::vector<tlm_models::DramCommandRecord> log;
  c.set_completion_sink(&done);
  if (record) c.set_command_log(&log);
  Result r;
  r.digest = 14695981039346656037ull;
  const auto t0 = std::chrono::steady_clock::now();
  const double c0 = cpu_seconds();
  for (std::size_t i = 0; i < t.size(); i += per_call) {
    const std::size_t n = std::min(per_call, t.size() - i);
    for (std::size_t k = 0; k < n; ++k)
      c.submit(0, t[i + k].bank, t[i + k].row, 1, 32, false, static_cast<std::uint32_t>(k));
    c.drain();
    if (record)
      for (std::size_t k = 0; k < n; ++k) mix(&r.digest, done[k]);
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.cpu = cpu_seconds() - c0;
  r.last_data = c.stats().last_data;
  r.commands = c.stats().activates + c.stats().precharges + c.stats().refreshes +
               c.stats().read_bursts + c.stats().write_bursts;
  for (const auto& l : log) {
    mix(&r.digest, static_cast<std::uint64_t>(l.command));
    mix(&r.digest, l.bank);
    mix(&r.digest, l.at);
  }
  return r;
}

}  // namespace

int sc_main(int argc, char* argv[]) {
  const std::size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 200000;
  const tlm_models::HbmMemory::Params p;
  const DramController::Config cfg = tlm_models::HbmMemory::controller_config(p);
  const std::uint64_t bursts_per_row = p.row_size / p.burst_bytes;
  // One request per call, as a one-burst b_transport; then 16 per call (a transaction cut into
  // runs over the banks, as an 8 KiB request on 16 channels), where several banks compete
  // at each step and choose() re-times the candidates that could win.
  const std::pair<const char*, std::size_t> cases[] = {
      {"sequential", 1}, {"random", 1}, {"two rows", 1}, {"random", 16}};
  for (const auto& [pattern, per_call] : cases) {
    const std::vector<Target> t = trace(pattern, n, cfg.banks, bursts_per_row);
    const Result check = run(cfg, p.frfcfs_cap, t, per_call, true);
    double best = 1e30, best_cpu = 1e30;
    for (int k = 0; k < 3; ++k) {
      const Result r = run(cfg, p.frfcfs_cap, t, per_call, false);
      best = std::min(best, r.seconds);
      best_cpu = std::min(best_cpu, r.cpu);
    }
    std::printf("%-10s %zu requests, %2zu per call: best of 3 %.3f s wall, %.3f s CPU (%.2f M "
                "requests/s); %llu commands, last data %llu ps, digest %016llx\n",
                pattern, n, per_call, best, best_cpu, static_cast<double>(n) / best / 1e6,
                static_cast<unsigned long long>(check.commands),
                static_cast<unsigned long long>(check.last_data),
                static_cast<unsigned long long>(check.digest));
  }
  return 0;
}
