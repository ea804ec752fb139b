// An ignorable TLM-2.0 extension marking a transaction whose data does not matter: the compute
// engines model the timing of their operand and result traffic, not its values. A memory that
// understands the marker times the access but neither fills the initiator's buffer nor
// overwrites its storage; one that does not simply moves the (meaningless) bytes, so the
// marker never changes timing, only cost. It saves a copy of up to hundreds of KiB per
// operation (the AttenIO output block is re-read and re-written for every K/V row).
#ifndef TLM_MODELS_TIMING_ONLY_H
#define TLM_MODELS_TIMING_ONLY_H

#include <tlm>

namespace tlm_models {

class TimingOnly : public tlm::tlm_extension<TimingOnly> {
 public:
  tlm::tlm_extension_base* clone() const override { return new TimingOnly; }
  void copy_from(const tlm::tlm_extension_base&) override {}
};

inline bool is_timing_only(const tlm::tlm_generic_payload& t) {
  return t.get_extension<TimingOnly>() != nullptr;
}

}  // namespace tlm_models

#endif  // TLM_MODELS_TIMING_ONLY_H
