// When refreshes fall due on one channel. All-bank: every tREFI one REF that blocks every bank
// for tRFC. Per-bank: every tREFI / banks one REFpb, banks in turn, blocking that bank for
// tRFCpb (each bank still refreshed once per tREFI). A refresh due is never skipped or
// postponed: the controller issues it as soon as the banks it needs are precharged.
#ifndef TLM_MODELS_DRAM_REFRESH_H
#define TLM_MODELS_DRAM_REFRESH_H

#include <cstdint>

#include "tlm_models/time_ticks.h"

namespace tlm_models {

class DramRefresh {
 public:
  enum class Mode { all_bank, per_bank };

  DramRefresh(Mode mode, Ticks refi, unsigned banks)
      : mode_(mode), interval_(mode == Mode::per_bank ? refi / banks : refi), banks_(banks),
        next_due_(interval_) {}

  bool enabled() const { return interval_ > 0; }
  Mode mode() const { return mode_; }
  // Time of the next refresh due (meaningful when enabled()).
  Ticks next_due() const { return next_due_; }
  // The bank the next per-bank refresh goes to.
  unsigned next_bank() const { return next_bank_; }

  // The due refresh was issued: move to the next one.
  void advance() {
    next_due_ = add_ticks(next_due_, interval_);
    if (mode_ == Mode::per_bank) next_bank_ = (next_bank_ + 1) % banks_;
  }

 private:
  Mode mode_;
  Ticks interval_;
  unsigned banks_;
  Ticks next_due_;
  unsigned next_bank_ = 0;
};

}  // namespace tlm_models

#endif  // TLM_MODELS_DRAM_REFRESH_H
