// When a bank closes its row after a request's last column command. Open: never (the next
// conflict pays tRP). Closed: always, as an auto-precharge (the next access to that row pays
// tRCD again). Adaptive: only when no queued request of the bank hits the row and another one
// needs a different row (open-adaptive, as DRAMSys calls it).
#ifndef TLM_MODELS_DRAM_PAGE_POLICY_H
#define TLM_MODELS_DRAM_PAGE_POLICY_H

#include <cstdint>
#include <string>
#include <vector>

#include "tlm_models/dram_request.h"

namespace tlm_models {

enum class DramPagePolicy { open, closed, adaptive };

inline bool parse_page_policy(const std::string& s, DramPagePolicy* out) {
  if (s == "open") *out = DramPagePolicy::open;
  else if (s == "closed") *out = DramPagePolicy::closed;
  else if (s == "adaptive") *out = DramPagePolicy::adaptive;
  else return false;
  return true;
}

// Whether to precharge the bank holding `row` now; `queue` holds the bank's remaining requests.
inline bool close_row_after_access(DramPagePolicy p, const std::vector<DramRequest>& queue,
                                   std::uint64_t row) {
  switch (p) {
    case DramPagePolicy::open:
      return false;
    case DramPagePolicy::closed:
      return true;
    case DramPagePolicy::adaptive: {
      bool other = false;
      for (const DramRequest& r : queue) {
        if (r.row == row) return false;
        other = true;
      }
      return other;
    }
  }
  return false;
}

}  // namespace tlm_models

#endif  // TLM_MODELS_DRAM_PAGE_POLICY_H
