// PE (MAC) array: rows x cols multiply-accumulate units at one clock, executing the trace's
// matmul and vector records. Timing formulas are in docs/models/pe_array.md.
#ifndef TLM_MODELS_PE_ARRAY_H
#define TLM_MODELS_PE_ARRAY_H

#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "tlm_models/functional_ops.h"
#include "tlm_models/op_executor.h"
#include "tlm_models/operand_extents.h"
#include "tlm_models/params_generated.h"
#include "tlm_models/params_check.h"
#include "tlm_models/pipelined_issue.h"
#include "tlm_models/stats.h"
#include "tlm_models/streaming_executor.h"
#include "tlm_models/time_ticks.h"
#include "tlm_models/trace_op.h"

namespace tlm_models {

class PeArray : public sc_core::sc_module, public StreamingExecutor, public StatsProvider {
 public:
  enum class Mapping { output_stationary, weight_stationary, input_stationary, broadcast, unknown };

  static Mapping mapping_of(const std::string& name) {
    if (name == "output_stationary") return Mapping::output_stationary;
    if (name == "weight_stationary") return Mapping::weight_stationary;
    if (name == "input_stationary") return Mapping::input_stationary;
    if (name == "broadcast") return Mapping::broadcast;
    return Mapping::unknown;
  }

  // A systolic mapping's folds of one matmul, as SCALE-Sim v3 maps C[m x n] = A[m x k] . B[k x n]
  // (docs/models/pe_array.md): `folds` passes of `stream` cycles each, plus `overhead` cycles of
  // skew, fill and drain per fold (per operation with fold_overlap).
  struct Folds {
    std::uint64_t folds = 0;
    std::uint64_t stream = 0;
    std::uint64_t overhead = 0;
  };

  // The fields and their defaults: PeArrayParamFields (params_generated.h, generated from
  // the component registry).
  struct Params : PeArrayParamFields {
    std::string check() const {
      std::string error = check_fields();
      if (!error.empty()) return error;
      if (std::string e = check_number_format(number_format, functional, elem_bytes); !e.empty())
        return e;
      if (split_k && mapping != "broadcast") return "split_k needs mapping broadcast";
      if (fold_overlap && mapping == "broadcast")
        return "fold_overlap needs a systolic mapping (output_stationary, weight_stationary or "
               "input_stationary); broadcast has no fill or drain";
      return "";
    }
  };

  static constexpr unsigned kVectorOps = 10;  // VectorOp::copy .. VectorOp::mask

  tlm_utils::simple_initiator_socket<PeArray> sram_port;

  PeArray(sc_core::sc_module_name name, const Params& p)
      : sc_core::sc_module(name),
        sram_port("sram_port"),
        params_(p),
        mapping_(mapping_of(p.mapping)),
        broadcast_(mapping_ == Mapping::broadcast),
        period_(p.clock > 0 ? period_ticks(p.clock) : 0),
        pipe_(sram_port, this->name(), p.elem_bytes, p.sram_traffic, period_) {
    params_valid(p, this->name(), "tlm_models/pe_array");
    if (p.functional)
      functional_ = std::make_unique<FunctionalOps>(sram_port, this->name(), number_format_of(p.number_format));
  }

  const Params& params() const { return params_; }

  // Cycles of a matmul C[m x n] = A[m x k] . B[k x n] under the configured mapping.
  std::uint64_t matmul_cycles(std::uint64_t m, std::uint64_t n, std::uint64_t k) const {
    return matmul_issue_cycles(m, n, k) + matmul_latency(m, n, k);
  }

  // Issue cycles a scale_rows matmul adds for its C = diag(alpha) C: none on a scale-accumulate
  // array, else one step per pass of results (each MAC multiplies its partial sum by its row's
  // factor once): an output-stationary fold holds one pass, other mappings pass the results
  // through the MACs in lanes-sized groups.
  std::uint64_t scale_issue_cycles(std::uint64_t m, std::uint64_t n) const {
    if (params_.scale_accumulate) return 0;
    if (mapping_ == Mapping::output_stationary)
      return ceil_div(m, params_.rows) * ceil_div(n, params_.cols);
    return ceil_div(m * n, lanes());
  }

  // Cycles before the next operation may enter. Systolic: every fold's stream cycles, plus its
  // skew, fill and drain unless fold_overlap hides them (then they are latency, overlapping the
  // next operation as the folds overlap theirs).
  std::uint64_t matmul_issue_cycles(std::uint64_t m, std::uint64_t n, std::uint64_t k) const {
    if (broadcast_) return ceil_div(m * n, lanes()) * ceil_div(k, k_split(m, n, k));
    const Folds f = folds(m, n, k);
    return f.folds * (f.stream + (params_.fold_overlap ? 0 : f.overhead));
  }

  // Systolic mappings (SCALE-Sim v3): rows x cols hold a tile of one operand or of the result
  // and the third dimension streams through in time.
  //   output_stationary: m over rows, n over cols, k streams; skew, fill, drain rows + cols - 2
  //   weight_stationary: k over rows, n over cols, m streams; + rows to load the weights
  //   input_stationary:  k over rows, m over cols, n streams; + rows to load the inputs
  Folds folds(std::uint64_t m, std::uint64_t n, std::uint64_t k) const {
    const std::uint64_t r = params_.rows, c = params_.cols;
    switch (mapping_) {
      case Mapping::weight_stationary: return {ceil_div(k, r) * ceil_div(n, c), m, 2 * r + c - 2};
      case Mapping::input_stationary: return {ceil_div(k, r) * ceil_div(m, c), n, 2 * r + c - 2};
      default: return {ceil_div(m, r) * ceil_div(n, c), k, r + c - 2};
    }
  }

  // broadcast with split_k: MACs per output element when the m x n outputs leave MACs idle
  // (each group sums its share of the k products; an adder tree joins the groups).
  std::uint64_t k_split(std::uint64_t m, std::uint64_t n, std::uint64_t k) const {
    if (!params_.split_k || m * n == 0 || m * n >= lanes()) return 1;
    const std::uint64_t s = lanes() / (m * n);
    return s < k ? s : k;
  }

  // Cycles of a vector op on an m x n block; row reductions add a log2(n)-deep adder/max tree.
  std::uint64_t vector_cycles(VectorOp op, std::uint64_t m, std::uint64_t n) const {
    return vector_issue_cycles(m, n) + vector_latency(op, n);
  }

  // Cycles before the next operation may enter: one per group of `rows x cols` elements (the
  // reduction tree is pipelined like the rest of the array).
  std::uint64_t vector_issue_cycles(std::uint64_t m, std::uint64_t n) const {
    return ceil_div(m * n, lanes());
  }

  // MACs performed / (MACs the array could have performed in `interval`).
  double mac_utilization(const sc_core::sc_time& interval) const {
    return pipe_.utilization(macs_, lanes(), interval);
  }

  // Busy and interlock time, cycles, streamed operations and SRAM bytes.
  const PipelinedIssue& pipeline() const { return pipe_; }
  std::uint64_t macs() const { return macs_; }
  std::uint64_t vector_elements() const { return vector_elements_; }
  std::uint64_t matmul_ops() const { return matmul_ops_; }
  std::uint64_t scaled_matmul_ops() const { return scaled_matmul_ops_; }
  std::uint64_t vector_ops(VectorOp op) const { return vector_ops_[static_cast<unsigned>(op)]; }

  void collect_stats(StatsGroup& g) const override {
    static const char* const kNames[kVectorOps] = {"copy", "add", "sub",    "mul",    "div",
                                                   "max",  "fma", "rowmax", "rowsum", "mask"};
    pipe_.collect_timing(g);
    g.add("matmul_ops", static_cast<double>(matmul_ops_), "ops", "matmul records executed");
    g.add("scaled_matmul_ops", static_cast<double>(scaled_matmul_ops_), "ops",
          "matmuls that scaled C's rows before accumulating");
    g.add("scaled_elements", static_cast<double>(scaled_elements_), "elements",
          "row-scaling multiplies of scaled matmuls (m*n each)");
    g.add("lazy_rescale_ops", static_cast<double>(lazy_ops_), "ops",
          "lazy rescales (vector mul of the rows whose factor is not 1)");
    g.add("lazy_rescale_rows", static_cast<double>(lazy_rows_), "rows",
          "rows the lazy rescales multiplied");
    g.add("streamed_ops", static_cast<double>(pipe_.streamed_ops()), "ops",
          "operations that consumed forwarded results");
    std::uint64_t vops = 0;
    for (auto v : vector_ops_) vops += v;
    g.add("vector_ops", static_cast<double>(vops), "ops", "vector records executed");
    StatsGroup& by_op = g.child("vector_ops");
    for (unsigned i = 0; i < kVectorOps; ++i)
      by_op.add(kNames[i], static_cast<double>(vector_ops_[i]), "ops");
    g.add("macs", static_cast<double>(macs_), "MAC", "matmul multiply-accumulates (m*n*k)");
    g.add("vector_elements", static_cast<double>(vector_elements_), "elements",
          "vector element operations (m*n)");
    StatsGroup& elements_by_op = g.child("vector_elements");
    for (unsigned i = 0; i < kVectorOps; ++i)
      elements_by_op.add(kNames[i], static_cast<double>(vector_op_elements_[i]), "elements",
                         "element operations (m*n) of this op");
    pipe_.collect_sram(g);
  }

  void reset_stats() override {
    pipe_.reset_stats();
    macs_ = vector_elements_ = matmul_ops_ = scaled_matmul_ops_ = 0;
    scaled_elements_ = lazy_ops_ = lazy_rows_ = 0;
    vector_ops_.fill(0);
    vector_op_elements_.fill(0);
  }

 private:
  std::uint64_t lanes() const { return std::uint64_t{params_.rows} * params_.cols; }

  TickTiming run(const TraceOp& op, Ticks start, const Ticks* inputs_done) override {
    if (functional_) functional_->run(op);
    OperandBlocks blocks;
    IssueCycles c;
    const std::uint64_t mn = std::uint64_t{op.m} * op.n;
    std::uint64_t streamed_elements = 0;  // the operand a stream consumes, in elements
    std::uint64_t tail_base = 0, tail_fixed = 0;  // a stream's tail: a granule's share, fixed
    if (op.kind == static_cast<std::uint8_t>(OpKind::matmul)) {
      c.issue = matmul_issue_cycles(op.m, op.n, op.k);
      if (op.code & kMatmulScaleRows) c.issue += scale_issue_cycles(op.m, op.n);
      c.latency = matmul_latency(op.m, op.n, op.k);
      tail_base = c.issue;
      if (!broadcast_ && !params_.fold_overlap) {
        // The last fold cannot drain before its last operand granule: a stream's tail is that
        // granule's share of the stream cycles plus one fold's skew, fill and drain.
        const Folds f = folds(op.m, op.n, op.k);
        tail_base = f.folds * f.stream;
        tail_fixed = f.overhead;
      }
      blocks.read(op.src0, std::uint64_t{op.m} * op.k);
      blocks.read(op.src1, std::uint64_t{op.k} * op.n);
      if (op.code & (kMatmulAccumulate | kMatmulScaleRows)) blocks.read(op.dst, mn);
      if (op.code & kMatmulScaleRows) blocks.read(src2(op), op.m);
      blocks.write = {op.dst, mn};
      streamed_elements = std::uint64_t{op.m} * op.k;  // rows of A arrive in order
      macs_ += mn * op.k;
      ++matmul_ops_;
      if (op.code & kMatmulScaleRows) {
        ++scaled_matmul_ops_;
        scaled_elements_ += mn;  // C = diag(s) C: one multiply per result element
      }
    } else if (op.kind == static_cast<std::uint8_t>(OpKind::vector)) {
      const VectorOp vop = vector_op(op);
      if (static_cast<unsigned>(vop) >= kVectorOps)
        throw OpError(std::string(name()) + ": unsupported vector op code " +
                      std::to_string(static_cast<unsigned>(vop)));
      // A lazy rescale touches only the k rows whose factor is not 1 (trace_op.h).
      const std::uint64_t rows = (op.code & kVectorLazyRows) ? op.k : op.m;
      const std::uint64_t elements = rows * op.n;
      c.issue = vector_issue_cycles(rows, op.n);
      c.latency = vector_latency(vop, op.n);
      tail_base = c.issue;
      // Element-wise results leave in order and can be forwarded; a reduction's only when done,
      // and a lazy rescale's too (which rows it writes is known once its factors are read).
      if (vop != VectorOp::rowmax && vop != VectorOp::rowsum && !(op.code & kVectorLazyRows))
        c.first = granule_cycles(c.issue, elements, params_.forward_granularity);
      if (op.code & kVectorLazyRows) {
        blocks.read(op.src0, elements);
        blocks.read(op.src1, rows);
        blocks.write = {op.dst, elements};
        ++lazy_ops_;
        lazy_rows_ += rows;
      } else {
        vector_blocks(op, vop, blocks);
      }
      streamed_elements = elements;
      vector_elements_ += elements;
      vector_op_elements_[static_cast<unsigned>(vop)] += elements;
      ++vector_ops_[static_cast<unsigned>(vop)];
    } else {
      throw OpError(std::string(name()) + ": cannot execute operation kind " +
                    std::to_string(op.kind) + " (the PE array runs matmul and vector)");
    }
    if (inputs_done) {
      c.tail = granule_cycles(tail_base, streamed_elements, params_.forward_granularity) +
               tail_fixed;
    }
    return pipe_.run(start, blocks, c, inputs_done);
  }

  static std::uint64_t ceil_log2(std::uint64_t n) {
    std::uint64_t depth = 0;
    while ((std::uint64_t{1} << depth) < n) ++depth;
    return depth;
  }

  std::uint64_t matmul_latency(std::uint64_t m, std::uint64_t n, std::uint64_t k) const {
    if (broadcast_) return params_.pipeline_latency + ceil_log2(k_split(m, n, k));
    return params_.pipeline_latency + (params_.fold_overlap ? folds(m, n, k).overhead : 0);
  }

  std::uint64_t vector_latency(VectorOp op, std::uint64_t n) const {
    const bool reduction = op == VectorOp::rowmax || op == VectorOp::rowsum;
    return params_.pipeline_latency + (reduction ? ceil_log2(n) : 0);
  }

  static void vector_blocks(const TraceOp& op, VectorOp vop, OperandBlocks& blocks) {
    const std::uint64_t mn = std::uint64_t{op.m} * op.n;
    blocks.read(op.src0, mn);
    if (vector_reads_src1(vop)) {
      switch (broadcast(op)) {
        case Broadcast::full: blocks.read(op.src1, mn); break;
        case Broadcast::row: blocks.read(op.src1, op.m); break;
        case Broadcast::col: blocks.read(op.src1, op.n); break;
        case Broadcast::scalar: break;  // the operand travels in the record
      }
    }
    if (vop == VectorOp::fma) blocks.read(op.dst, mn);
    const bool reduction = vop == VectorOp::rowmax || vop == VectorOp::rowsum;
    blocks.write = {op.dst, reduction ? op.m : mn};
  }

  Params params_;
  Mapping mapping_;
  bool broadcast_;
  Ticks period_;
  PipelinedIssue pipe_;
  std::unique_ptr<FunctionalOps> functional_;  // Params::functional
  std::uint64_t macs_ = 0;
  std::uint64_t vector_elements_ = 0;
  std::uint64_t matmul_ops_ = 0;
  std::uint64_t scaled_matmul_ops_ = 0;
  std::uint64_t scaled_elements_ = 0;
  std::uint64_t lazy_ops_ = 0;
  std::uint64_t lazy_rows_ = 0;
  std::array<std::uint64_t, kVectorOps> vector_ops_{};
  std::array<std::uint64_t, kVectorOps> vector_op_elements_{};
};

}  // namespace tlm_models

#endif  // TLM_MODELS_PE_ARRAY_H
