// A job written by `attn-tlm vp-job --out DIR`: DIR/job.h (the addresses, as C #defines),
// DIR/commands.bin (the 64-byte records, already in the accelerator's engine numbering and at
// the VP's addresses) and DIR/<TENSOR>.bin for each input tensor. Bare-metal software compiles
// job.h in; this VP reads the same #defines at run time, so one binary runs any job.
#ifndef ATTN_TLM_EXAMPLES_VP_JOB_DIR_H
#define ATTN_TLM_EXAMPLES_VP_JOB_DIR_H

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <tlm>

#include "driver_cpu.h"
#include "tlm_models/trace_op.h"

// The `#define NAME VALUE` lines of a job header (integer values, C suffixes dropped).
inline std::map<std::string, std::uint64_t> read_job_defines(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw std::runtime_error(path + ": cannot open");
  std::map<std::string, std::uint64_t> defines;
  for (std::string line; std::getline(f, line);) {
    if (line.compare(0, 8, "#define ") != 0) continue;
    const std::size_t name_end = line.find(' ', 8);
    if (name_end == std::string::npos) continue;
    std::size_t used = 0;
    const std::string value = line.substr(name_end + 1);
    const std::uint64_t v = std::stoull(value, &used, 0);
    if (used > 0) defines[line.substr(8, name_end - 8)] = v;
  }
  return defines;
}

inline std::vector<unsigned char> read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error(path + ": cannot open");
  return std::vector<unsigned char>((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

inline std::uint64_t job_define(const std::map<std::string, std::uint64_t>& d, const std::string& name,
                                const std::string& path) {
  const auto it = d.find(name);
  if (it == d.end()) throw std::runtime_error(path + ": no #define " + name);
  return it->second;
}

// The job's tensors: (NAME, address) of every ATTN_JOB_TENSOR_<NAME>_ADDR.
inline std::vector<std::pair<std::string, std::uint64_t>> job_tensors(const std::map<std::string, std::uint64_t>& d) {
  const std::string prefix = "ATTN_JOB_TENSOR_", suffix = "_ADDR";
  std::vector<std::pair<std::string, std::uint64_t>> out;
  for (const auto& kv : d) {
    const std::string& name = kv.first;
    if (name.compare(0, prefix.size(), prefix) != 0 || name.size() <= prefix.size() + suffix.size() ||
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    out.emplace_back(name.substr(prefix.size(), name.size() - prefix.size() - suffix.size()), kv.second);
  }
  return out;
}

// The driver's job: registers at ATTN_BASE, the stream at ATTN_JOB_COMMAND_BASE, and every
// ATTN_JOB_TENSOR_<NAME>_ADDR whose DIR/<NAME>.bin exists placed there.
inline DriverJob read_job_dir(const std::string& dir) {
  const std::string header = dir + "/job.h";
  const std::map<std::string, std::uint64_t> d = read_job_defines(header);
  DriverJob job;
  job.regs = job_define(d, "ATTN_BASE", header);
  job.stream_base = job_define(d, "ATTN_JOB_COMMAND_BASE", header);
  job.window = static_cast<std::uint32_t>(job_define(d, "ATTN_JOB_WINDOW", header));
  const std::vector<unsigned char> stream = read_file(dir + "/commands.bin");
  const std::uint64_t count = job_define(d, "ATTN_JOB_COMMAND_COUNT", header);
  if (stream.size() != count * sizeof(tlm_models::TraceOp))
    throw std::runtime_error(dir + "/commands.bin: " + std::to_string(stream.size()) + " B, job.h says " +
                             std::to_string(count) + " records of 64 B");
  job.commands.resize(count);
  std::memcpy(job.commands.data(), stream.data(), stream.size());
  for (const auto& tv : job_tensors(d)) {
    std::ifstream probe(dir + "/" + tv.first + ".bin");
    if (probe) job.tensors.emplace_back(tv.second, read_file(dir + "/" + tv.first + ".bin"));
  }
  return job;
}

// Every tensor of the job (ATTN_JOB_TENSOR_<NAME>_ADDR and _BYTES), read back through `socket`
// with debug reads after the run and written to OUT/<NAME>.bin: the output a driver would read.
inline void dump_job_tensors(const std::string& dir, const std::string& out, tlm::tlm_initiator_socket<>& socket) {
  const std::string header = dir + "/job.h";
  const std::map<std::string, std::uint64_t> d = read_job_defines(header);
  for (const auto& tv : job_tensors(d)) {
    const std::string& tensor = tv.first;
    std::vector<unsigned char> bytes(job_define(d, "ATTN_JOB_TENSOR_" + tensor + "_BYTES", header));
    tlm::tlm_generic_payload t;
    t.set_command(tlm::TLM_READ_COMMAND);
    t.set_address(tv.second);
    t.set_data_ptr(bytes.data());
    t.set_data_length(static_cast<unsigned>(bytes.size()));
    t.set_streaming_width(static_cast<unsigned>(bytes.size()));
    if (socket->transport_dbg(t) != bytes.size())
      throw std::runtime_error("--dump: memory answered a short debug read of " + tensor);
    std::ofstream f(out + "/" + tensor + ".bin", std::ios::binary);
    f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    if (!f) throw std::runtime_error("--dump: cannot write " + out + "/" + tensor + ".bin");
  }
}

#endif  // ATTN_TLM_EXAMPLES_VP_JOB_DIR_H
