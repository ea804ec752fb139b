// DMA engine: independent channels sharing one initiator socket. Each channel executes the
// trace's load and store records (OpExecutor) and, for virtual prototypes, a queue of
// descriptors with completion callbacks and events. Timing is described in docs/models/dma.md.
#ifndef TLM_MODELS_DMA_H
#define TLM_MODELS_DMA_H

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <systemc>
#include <sysc/kernel/sc_dynamic_processes.h>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "tlm_models/dma_channel.h"
#include "tlm_models/op_executor.h"
#include "tlm_models/params_generated.h"
#include "tlm_models/params_check.h"
#include "tlm_models/stats.h"
#include "tlm_models/time_ticks.h"

namespace tlm_models {

class DmaEngine : public sc_core::sc_module, public StatsProvider {
 public:
  // The fields and their defaults: DmaEngineParamFields (params_generated.h, generated from
  // the component registry).
  struct Params : DmaEngineParamFields {
    std::string check() const {
      std::string error = check_fields();
      if (!error.empty()) return error;
      // A burst is one TLM payload, whose data length is 32 bits.
      if (max_burst > std::numeric_limits<std::uint32_t>::max())
        return "max_burst must be between 1 B and 4 GiB";
      return "";
    }
  };

  tlm_utils::simple_initiator_socket<DmaEngine> mem_port;

  DmaEngine(sc_core::sc_module_name name, const Params& p) : sc_core::sc_module(name), mem_port("mem_port"), params_(p) {
    if (!params_valid(p, this->name(), "tlm_models/dma")) return;
    for (unsigned i = 0; i < p.channels; ++i) {
      const std::string ch_name = std::string(this->name()) + ".channel" + std::to_string(i);
      channels_.push_back(std::make_unique<DmaChannel>(
          mem_port, ch_name, static_cast<std::uint32_t>(p.max_burst), p.max_outstanding,
          to_ticks(p.setup_latency), p.burst_trains));
      DmaChannel* ch = channels_.back().get();
      sc_core::sc_spawn([ch] { ch->run_queue(); }, ("queue" + std::to_string(i)).c_str());
      sc_core::sc_spawn_options opts;
      opts.spawn_method();
      opts.dont_initialize();
      opts.set_sensitivity(&ch->completion_timer());
      sc_core::sc_spawn([ch] { ch->fire_completions(); }, ("completion" + std::to_string(i)).c_str(),
                        &opts);
    }
  }

  const Params& params() const { return params_; }
  unsigned channels() const { return static_cast<unsigned>(channels_.size()); }

  OpExecutor& channel(unsigned i) { return dma_channel(i); }
  DmaChannel& dma_channel(unsigned i) {
    if (i >= channels_.size())
      throw std::out_of_range(std::string(name()) + ": no channel " + std::to_string(i));
    return *channels_[i];
  }

  void submit(unsigned channel, const DmaDescriptor& d, std::function<void()> on_done) {
    dma_channel(channel).submit(d, std::move(on_done));
  }
  sc_core::sc_event& done_event(unsigned channel) { return dma_channel(channel).done_event(); }

  void collect_stats(StatsGroup& g) const override {
    double bytes = 0, bursts = 0, descriptors = 0;
    for (const auto& ch : channels_) {
      bytes += static_cast<double>(ch->bytes());
      bursts += static_cast<double>(ch->bursts());
      descriptors += static_cast<double>(ch->descriptors());
    }
    g.add("descriptors", descriptors, "ops", "transfers executed by all channels");
    g.add("bursts", bursts, "bursts", "read+write burst pairs issued by all channels");
    g.add("bytes", bytes, "B", "bytes moved by all channels");
    for (unsigned i = 0; i < channels_.size(); ++i)
      channels_[i]->collect_stats(g.child("channel" + std::to_string(i)));
  }

  void reset_stats() override {
    for (auto& ch : channels_) ch->reset_stats();
  }

 private:
  Params params_;
  std::vector<std::unique_ptr<DmaChannel>> channels_;
};

}  // namespace tlm_models

#endif  // TLM_MODELS_DMA_H
