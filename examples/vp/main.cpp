// A plain SystemC virtual prototype with the attention accelerator as a memory-mapped device:
//
//   cpu.socket -> bus -> [0, 4 GiB)              memory (HBM with storage)
//                     -> [0x2_0000_0000, +4 KiB) accelerator.ctrl
//   accelerator.sys_port -> bus;  accelerator.irq -> cpu.irq
//
// Usage: attn_vp [--fetch-block N] [TRACE.bin | --job DIR]
//   Without a trace it runs a hand-built attention block. --fetch-block sets the records per
//   command-fetch read (default 64; the stream executes while later blocks are fetched).
//   --job DIR runs a job written by `attn-tlm vp-job --platform platforms/vp-soc.yaml --out DIR`
//   (job_dir.h): its stream, tensors and register base.
//   --functional makes the PE array and the Exp unit compute values (docs/integration.md,
//   "Functional mode"), --number-format fp16 | bf16 | fp32 sets their element type (and width),
//   --dump DIR writes every tensor of the job, read back from memory after the run, to
//   DIR/<NAME>.bin.
//   --cpu-stores N adds a second CPU that stores a word every 10 ns from the START write on
//   (N stores), --quantum NS sets the global quantum it runs ahead by (storing_cpu.h).
//   --split-requests sets the memory's and the system bus's split_requests (a request served
//   across gaps).
//   --family lt | riscv-vp | vcml builds the SoC the way that family of VPs does
//   (vp_families.h): lt is the default above; riscv-vp and vcml use an address-translating bus
//   that adds no time with the memory at kForeignMemoryBase and a function-call interrupt
//   controller, riscv-vp also a CPU that leaves the streaming width at 0 and a RAM that leaves
//   the response status unset. A protocol checker sits on every link (riscv-vp's two habits
//   tolerated and counted) and its counts are printed.
// Prints `key value` lines: the counter registers the driver read, the exact replay
// measurements (sim_time_ps, busy_ns.<engine>), then every statistic of the accelerator's
// replay as `replay.<path> <value>`, the same tree a Python replay returns, for comparison with
// a replay of the same trace on platforms/vp-soc.yaml. The accelerator, the bus and the memory
// are built from that same YAML: vp_soc_params.h is its generated header
// (`attn-tlm config --params platforms/vp-soc.yaml`).
#include <cstdio>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <systemc>

#include "command_stream.h"
#include "driver_cpu.h"
#include "job_dir.h"
#include "storing_cpu.h"
#include "tlm_models/irq_adapters.h"
#include "tlm_models/protocol_checker.h"
#include "vp_families.h"
#include "tlm_models/attention_accelerator.h"
#include "tlm_models/functional_ops.h"
#include "tlm_models/hbm.h"
#include "tlm_models/interconnect.h"
#include "vp_soc_params.h"

namespace {

constexpr std::uint64_t kMemorySize = std::uint64_t{4} << 30;
constexpr std::uint64_t kRegisterBase = 0x2'0000'0000;
constexpr std::uint64_t kTensorBase = 0x100000;
// Where riscv-vp and vcml families map the memory (local address 0): jobs for them are written
// with --tensors-at at or above it.
constexpr std::uint64_t kForeignMemoryBase = 0x1000'0000;

// The command line: optional `--fetch-block N`, then an optional trace file.
struct Options {
  unsigned fetch_block = vp_soc::accelerator().fetch_block;
  std::string trace;
  std::string job_dir;
  std::string family = "lt";
  bool functional = false;    // --functional: the engines compute O (functional_ops.h)
  std::string number_format;  // --number-format: the element type, instead of vp-soc.yaml's
  std::string dump_dir;       // --dump DIR: every job tensor read back from memory after the run
  std::uint64_t cpu_stores = 0;  // --cpu-stores N: a second CPU's stores during the job
  double quantum_ns = 0;         // --quantum NS: the global quantum (0: SystemC's default, none)
  bool split_requests = false;   // --split-requests: the memory's and the bus's split_requests
};

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--fetch-block") {
      if (i + 1 >= argc) throw std::runtime_error("--fetch-block needs a number of records");
      const unsigned long n = std::stoul(argv[++i]);
      if (n == 0 || n > 0xFFFFFFFFul) throw std::runtime_error("--fetch-block must be 1..2^32-1");
      o.fetch_block = static_cast<unsigned>(n);
    } else if (arg == "--family") {
      if (i + 1 >= argc) throw std::runtime_error("--family needs lt, riscv-vp or vcml");
      o.family = argv[++i];
      if (o.family != "lt" && o.family != "riscv-vp" && o.family != "vcml")
        throw std::runtime_error("--family must be lt, riscv-vp or vcml, not '" + o.family + "'");
    } else if (arg == "--functional") {
      o.functional = true;
    } else if (arg == "--number-format") {
      if (i + 1 >= argc) throw std::runtime_error("--number-format needs fp16, bf16 or fp32");
      o.number_format = argv[++i];
      if (tlm_models::number_format_of(o.number_format) == tlm_models::NumberFormat::unknown)
        throw std::runtime_error("--number-format must be fp16, bf16 or fp32, not '" + o.number_format + "'");
    } else if (arg == "--cpu-stores" || arg == "--quantum") {
      if (i + 1 >= argc) throw std::runtime_error(arg + " needs a number");
      const std::string value = argv[++i];
      if (arg == "--cpu-stores") o.cpu_stores = std::stoull(value);
      else o.quantum_ns = std::stod(value);
      if (o.quantum_ns < 0) throw std::runtime_error("--quantum must not be negative");
    } else if (arg == "--split-requests") {
      o.split_requests = true;
    } else if (arg == "--dump") {
      if (i + 1 >= argc) throw std::runtime_error("--dump needs a directory");
      o.dump_dir = argv[++i];
    } else if (arg == "--job") {
      if (i + 1 >= argc) throw std::runtime_error("--job needs the directory attn-tlm vp-job wrote");
      o.job_dir = argv[++i];
    } else if (o.trace.empty() && arg.compare(0, 2, "--") != 0) {
      o.trace = arg;
    } else {
      throw std::runtime_error("unexpected argument '" + arg +
                               "' (usage: attn_vp [--fetch-block N] [--family F] [TRACE.bin | --job DIR])");
    }
  }
  if (!o.trace.empty() && !o.job_dir.empty()) throw std::runtime_error("give a trace or --job, not both");
  if (!o.dump_dir.empty() && o.job_dir.empty()) throw std::runtime_error("--dump reads a job's tensors: give --job DIR");
  if (o.family != "lt" && o.job_dir.empty())
    throw std::runtime_error("--family " + o.family + " runs a job (--job DIR, written with --tensors-at 0x1000_0000)");
  return o;
}

DriverJob make_job(const Options& opts, const tlm_models::AttentionAccelerator::Params& ap) {
  if (!opts.job_dir.empty()) return read_job_dir(opts.job_dir);
  DriverJob job;
  job.regs = kRegisterBase;
  CommandStream cs;
  if (!opts.trace.empty()) {
    cs = read_trace_file(opts.trace, ap.dma.channels);
  } else {
    cs = demo_stream(kTensorBase, ap.sram_base, ap.dma.channels);
    for (unsigned t = 0; t < 3; ++t) {
      std::vector<unsigned char> bytes(64 * 128);
      for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<unsigned char>(i * (t + 3));
      job.tensors.emplace_back(kTensorBase + 0x10000 * t, std::move(bytes));
    }
  }
  job.window = cs.window;
  // The stream goes to the top of the memory, clear of the tensors, 4 KiB aligned.
  const std::uint64_t stream_bytes = cs.commands.size() * sizeof(tlm_models::TraceOp);
  job.stream_base = (kMemorySize - stream_bytes) & ~std::uint64_t{0xFFF};
  job.commands = std::move(cs.commands);
  return job;
}

// --functional and --number-format: both engines compute, in that format, with elements of its
// width (a job emitted for vp-soc.yaml with the same pe/exp elem_bytes and number_format).
void set_number_format(const Options& opts, tlm_models::AttentionAccelerator::Params& ap) {
  ap.pe.functional = ap.exp.functional = opts.functional;
  if (opts.number_format.empty()) return;
  ap.pe.number_format = ap.exp.number_format = opts.number_format;
  ap.pe.elem_bytes = ap.exp.elem_bytes = tlm_models::format_bytes(tlm_models::number_format_of(opts.number_format));
}

// `prefix.stat value` for every statistic under `g`, values printed so that they read back
// exactly (%.17g); undefined ratios (NaN) print as `null`, as in the JSON of a Python replay.
void print_stats(const tlm_models::StatsGroup& g, const std::string& prefix) {
  for (const tlm_models::Stat& st : g.stats()) {
    if (st.value != st.value)
      std::printf("%s%s null\n", prefix.c_str(), st.name.c_str());
    else
      std::printf("%s%s %.17g\n", prefix.c_str(), st.name.c_str(), st.value);
  }
  for (const auto& c : g.children()) print_stats(*c, prefix + c->name() + ".");
}

}  // namespace

int sc_main(int argc, char** argv) {
  tlm_models::AttentionAccelerator::Params ap = vp_soc::accelerator();
  DriverJob job;
  std::string family, dump_dir, job_dir;
  std::uint64_t cpu_stores = 0;
  bool split_requests = false;
  try {
    const Options opts = parse_options(argc, argv);
    ap.fetch_block = opts.fetch_block;
    family = opts.family;
    set_number_format(opts, ap);
    job = make_job(opts, ap);
    if (!opts.job_dir.empty()) {
      const std::string header = opts.job_dir + "/job.h";
      const std::uint64_t eb = job_define(read_job_defines(header), "ATTN_JOB_ELEM_BYTES", header);
      if (eb != ap.pe.elem_bytes)
        throw std::runtime_error(header + ": the job has " + std::to_string(eb) + "-byte elements, the accelerator " +
                                 std::to_string(ap.pe.elem_bytes) + " (emit it with the same pe/exp elem_bytes)");
    }
    dump_dir = opts.dump_dir;
    cpu_stores = opts.cpu_stores;
    split_requests = opts.split_requests;
    if (opts.quantum_ns > 0)
      tlm::tlm_global_quantum::instance().set(sc_core::sc_time(opts.quantum_ns, sc_core::SC_NS));
    job_dir = opts.job_dir;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "attn_vp: %s\n", e.what());
    return 2;
  }

  const bool riscv = family == "riscv-vp";
  ap.accept_incomplete_response = riscv;
  tlm_models::AttentionAccelerator acc("acc", ap);
  tlm_models::HbmMemory::Params memory_params = vp_soc::memory();
  memory_params.split_requests = memory_params.split_requests || split_requests;
  tlm_models::HbmMemory memory("memory", memory_params);
  const std::uint64_t register_base = job.regs;
  DriverCpu cpu("cpu", std::move(job));
  cpu.zero_streaming_width = cpu.accept_incomplete_response = riscv;
  sc_core::sc_signal<bool> acc_irq("acc_irq"), cpu_irq("cpu_irq");

  // A protocol checker on every link: CPU and accelerator to the bus, bus to memory and registers.
  tlm_models::ProtocolChecker::Tolerance tolerance;
  tolerance.zero_streaming_width = tolerance.incomplete_response = riscv;
  std::vector<std::unique_ptr<tlm_models::ProtocolChecker>> checkers;
  for (const char* name : {"check_cpu", "check_acc", "check_memory", "check_registers", "check_storer"}) {
    checkers.push_back(std::make_unique<tlm_models::ProtocolChecker>(name));
    checkers.back()->set_tolerance(tolerance);
  }
  tlm_models::ProtocolChecker &cpu_link = *checkers[0], &acc_link = *checkers[1];
  tlm_models::ProtocolChecker &mem_link = *checkers[2], &reg_link = *checkers[3];
  tlm_models::ProtocolChecker& storer_link = *checkers[4];
  // --cpu-stores: a second CPU storing a word every 10 ns from the START write on, in the upper
  // half of the memory (clear of any job), through the global quantum (storing_cpu.h).
  StoringCpu storer("storer", cpu.started(), kMemorySize / 2, cpu_stores, sc_core::sc_time(10, sc_core::SC_NS));
  storer.socket.bind(storer_link.in);
  cpu.socket.bind(cpu_link.in);
  acc.sys_port.bind(acc_link.in);
  reg_link.out.bind(acc.ctrl);
  cpu.irq.bind(cpu_irq);

  std::unique_ptr<tlm_models::Interconnect> lt_bus;
  std::unique_ptr<TranslatingBus> foreign_bus;
  std::unique_ptr<UnsetStatus> unset_status;
  std::unique_ptr<InterruptController> intc;
  std::unique_ptr<tlm_models::IrqToCallback> to_intc;
  if (family == "lt") {
    tlm_models::Interconnect::Params bus_params = vp_soc::bus();
    bus_params.split_requests = bus_params.split_requests || split_requests;
    lt_bus = std::make_unique<tlm_models::Interconnect>("bus", bus_params);
    cpu_link.out.bind(lt_bus->in);
    acc_link.out.bind(lt_bus->in);
    storer_link.out.bind(lt_bus->in);
    lt_bus->out.bind(mem_link.in);
    lt_bus->out.bind(reg_link.in);
    lt_bus->add_route(0, kMemorySize, 0);
    lt_bus->add_route(register_base, 0x1000, 1);
    mem_link.out.bind(memory.target);
    acc.irq.bind(cpu_irq);
  } else {
    foreign_bus = std::make_unique<TranslatingBus>("bus");
    cpu_link.out.bind(foreign_bus->in);
    acc_link.out.bind(foreign_bus->in);
    storer_link.out.bind(foreign_bus->in);
    foreign_bus->out.bind(mem_link.in);
    foreign_bus->out.bind(reg_link.in);
    foreign_bus->map(kForeignMemoryBase, kMemorySize - kForeignMemoryBase, 0);
    foreign_bus->map(register_base, 0x1000, 1);
    if (riscv) {
      unset_status = std::make_unique<UnsetStatus>("unset_status");
      mem_link.out.bind(unset_status->in);
      unset_status->out.bind(memory.target);
    } else {
      mem_link.out.bind(memory.target);
    }
    // The accelerator's line -> a function call into the interrupt controller -> the CPU's line.
    intc = std::make_unique<InterruptController>("intc");
    InterruptController* ic = intc.get();
    to_intc = std::make_unique<tlm_models::IrqToCallback>("to_intc", [ic](bool level) { ic->trigger(level); });
    acc.irq.bind(acc_irq);
    to_intc->irq.bind(acc_irq);
    intc->cpu_line.irq.bind(cpu_irq);
  }

  // The tolerated habits are counted and printed below rather than reported on stdout.
  sc_core::sc_report_handler::set_actions(tlm_models::kZeroStreamingWidthMsg, sc_core::SC_DO_NOTHING);
  sc_core::sc_start();

  if (!cpu.completed()) {
    std::fprintf(stderr, "attn_vp: the accelerator did not complete: %s\n",
                 acc.error_message().c_str());
    return 1;
  }
  for (const auto& kv : cpu.results()) {
    const std::string& key = kv.first;
    const std::size_t dot = key.find('.');
    const std::string name = dot == std::string::npos
                                 ? key
                                 : key.substr(0, dot + 1) +
                                       acc.engine_name(static_cast<unsigned>(std::stoul(key.substr(dot + 1))));
    std::printf("%s %llu\n", name.c_str(), static_cast<unsigned long long>(kv.second));
  }
  const tlm_models::ReplayMetrics& m = acc.metrics();
  std::printf("sim_time_ps %llu\n", static_cast<unsigned long long>(m.sim_time()));
  for (unsigned e = 0; e < acc.engine_count(); ++e)
    std::printf("busy_ns.%s %.3f\n", acc.engine_name(e).c_str(),
                tlm_models::ticks_to_ns(m.engine(e).busy.total()));
  tlm_models::StatsGroup stats("acc");
  acc.collect_stats(stats);
  for (const auto& c : stats.children())
    if (c->name() == "replay") print_stats(*c, "replay.");
  std::uint64_t violations = 0, tolerated = 0;
  for (const auto& c : checkers) {
    violations += c->violations();
    tolerated += c->tolerated();
  }
  std::printf("protocol.violations %llu\nprotocol.tolerated %llu\n",
              static_cast<unsigned long long>(violations), static_cast<unsigned long long>(tolerated));
  std::printf("compat.zero_streaming_width %llu\ncompat.incomplete_responses %llu\n",
              static_cast<unsigned long long>(acc.zero_streaming_width_payloads() +
                                              memory.zero_streaming_width_payloads()),
              static_cast<unsigned long long>(acc.incomplete_responses()));
  if (!acc.error_message().empty()) std::fprintf(stderr, "attn_vp: %s\n", acc.error_message().c_str());
  if (!dump_dir.empty()) {
    try {
      dump_job_tensors(job_dir, dump_dir, cpu.socket);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "attn_vp: %s\n", e.what());
      return 1;
    }
  }
  return cpu.results().at("status") == 2 && violations == 0 ? 0 : 1;
}
