// Where the example's command stream comes from: a small hand-built attention block, or an
// attn-tlm binary trace file ("ATTNTRC\0", u32 version, u32 header length L, L bytes of JSON
// header padded so that records start at a 64-byte boundary, then 64-byte records;
// traces/README.md). A trace names its engines; they are renumbered to the accelerator's fixed
// engine indices (dmaN -> N, pe -> channels, exp -> channels + 1).
#ifndef ATTN_TLM_EXAMPLES_VP_COMMAND_STREAM_H
#define ATTN_TLM_EXAMPLES_VP_COMMAND_STREAM_H

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include "tlm_models/trace_op.h"

struct CommandStream {
  std::vector<tlm_models::TraceOp> commands;
  std::uint32_t window = 1u << 16;
};

// `op`, waiting for the record `dep` positions before it.
inline tlm_models::TraceOp after(tlm_models::TraceOp op, std::uint32_t dep) {
  op.deps[0] = dep;
  return op;
}

// One FP16 attention block, 64 queries x 64 keys, d = 64: load Q and K (dma0), S = Q K^T (pe),
// m = rowmax S, S -= m (pe), P = exp S (exp), load V, O = P V (pe), store O (dma1).
// Q, K, V are 8 KiB each at q, q + 64 KiB, q + 128 KiB; O goes to q + 192 KiB.
inline CommandStream demo_stream(std::uint64_t q, std::uint64_t sram, unsigned channels) {
  using tlm_models::OpKind;
  const auto dma0 = std::uint8_t{0}, dma1 = static_cast<std::uint8_t>(channels > 1 ? 1 : 0);
  const auto pe = static_cast<std::uint8_t>(channels), ex = static_cast<std::uint8_t>(channels + 1);
  const std::uint64_t qs = sram, ks = sram + 0x2000, vs = sram + 0x4000, s = sram + 0x6000,
                      mx = sram + 0x8000, p = sram + 0xA000, o = sram + 0xC000;
  CommandStream cs;
  auto& c = cs.commands;
  c.push_back(tlm_models::make_op(OpKind::load, dma0, 64, 128, 0, q, 0, qs));
  c.back().tensor = 0;
  c.push_back(tlm_models::make_op(OpKind::load, dma0, 64, 128, 0, q + 0x10000, 0, ks));
  c.back().tensor = 1;
  c.push_back(after(tlm_models::make_op(OpKind::matmul, pe, 64, 64, 64, qs, ks, s), 1));
  c.back().deps[1] = 2;
  c.back().code = tlm_models::kMatmulTransB;
  c.push_back(after(tlm_models::make_op(OpKind::vector, pe, 64, 64, 0, s, 0, mx), 1));
  c.back().code = static_cast<std::uint8_t>(tlm_models::VectorOp::rowmax);
  c.push_back(after(tlm_models::make_op(OpKind::vector, pe, 64, 64, 0, s, mx, s), 1));
  c.back().code = static_cast<std::uint8_t>(tlm_models::VectorOp::sub) |
                  static_cast<std::uint8_t>(tlm_models::Broadcast::row) << tlm_models::kBroadcastShift;
  c.push_back(after(tlm_models::make_op(OpKind::exp, ex, 64, 64, 0, s, 0, p), 1));
  c.push_back(tlm_models::make_op(OpKind::load, dma0, 64, 128, 0, q + 0x20000, 0, vs));
  c.back().tensor = 2;
  c.push_back(after(tlm_models::make_op(OpKind::matmul, pe, 64, 64, 64, p, vs, o), 1));
  c.back().deps[1] = 2;
  c.push_back(after(tlm_models::make_op(OpKind::store, dma1, 64, 128, 0, o, 0, q + 0x30000), 1));
  c.back().tensor = 3;
  cs.window = 16;
  return cs;
}

// The value of a top-level integer key of the header, or `fallback`. Top-level keys follow
// "params" in the header, so the last occurrence is the top-level one.
inline std::uint64_t json_uint(const std::string& json, const std::string& key,
                               std::uint64_t fallback) {
  const std::size_t at = json.rfind("\"" + key + "\"");
  if (at == std::string::npos) return fallback;
  const std::size_t colon = json.find(':', at);
  return colon == std::string::npos ? fallback : std::stoull(json.substr(colon + 1));
}

// The strings of the header's "engines" array (engine names hold no quotes or commas).
inline std::vector<std::string> json_engines(const std::string& json) {
  std::vector<std::string> names;
  const std::size_t at = json.rfind("\"engines\"");
  if (at == std::string::npos) return names;
  const std::size_t open = json.find('[', at), close = json.find(']', at);
  for (std::size_t q = json.find('"', open); q < close; q = json.find('"', q + 1)) {
    const std::size_t end = json.find('"', q + 1);
    names.push_back(json.substr(q + 1, end - q - 1));
    q = end;
  }
  return names;
}

inline unsigned accelerator_engine(const std::string& name, unsigned channels) {
  if (name == "pe") return channels;
  if (name == "exp") return channels + 1;
  if (name.size() > 3 && name.compare(0, 3, "dma") == 0) {
    const unsigned i = static_cast<unsigned>(std::stoul(name.substr(3)));
    if (i < channels) return i;
  }
  throw std::runtime_error("trace engine '" + name + "' has no counterpart in the accelerator");
}

inline CommandStream read_trace_file(const std::string& path, unsigned channels) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error(path + ": cannot open");
  const std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (bytes.size() < 16 || std::memcmp(bytes.data(), "ATTNTRC\0", 8) != 0)
    throw std::runtime_error(path + ": not an attn-tlm binary trace");
  std::uint32_t version, header_len;
  std::memcpy(&version, bytes.data() + 8, 4);
  std::memcpy(&header_len, bytes.data() + 12, 4);
  if (version != 1) throw std::runtime_error(path + ": unsupported trace version " + std::to_string(version));
  const std::size_t data = 16 + std::size_t{header_len};
  if (data > bytes.size() || data % 64 || (bytes.size() - data) % sizeof(tlm_models::TraceOp))
    throw std::runtime_error(path + ": truncated or misaligned trace");
  const std::string json(bytes.data() + 16, header_len);
  CommandStream cs;
  cs.window = static_cast<std::uint32_t>(json_uint(json, "window", cs.window));
  std::vector<unsigned> remap;
  for (const std::string& e : json_engines(json)) remap.push_back(accelerator_engine(e, channels));
  cs.commands.resize((bytes.size() - data) / sizeof(tlm_models::TraceOp));
  std::memcpy(cs.commands.data(), bytes.data() + data, bytes.size() - data);
  for (std::size_t i = 0; i < cs.commands.size(); ++i) {
    tlm_models::TraceOp& op = cs.commands[i];
    if (op.engine >= remap.size())
      throw std::runtime_error(path + ": record " + std::to_string(i) + " names engine " +
                               std::to_string(op.engine) + " beyond the header's engine list");
    op.engine = static_cast<std::uint8_t>(remap[op.engine]);
  }
  return cs;
}

#endif  // ATTN_TLM_EXAMPLES_VP_COMMAND_STREAM_H
