// Every component checks its Params when it is built: a Params whose check() names a problem is
// a fatal report naming the instance and the parameter, the same for every component.
#ifndef TLM_MODELS_PARAMS_CHECK_H
#define TLM_MODELS_PARAMS_CHECK_H

#include <string>

#include <systemc>

namespace tlm_models {

// False (after the fatal report, for a report handler that returns) when `p` is invalid.
template <class Params>
bool params_valid(const Params& p, const char* instance, const char* msg_type) {
  const std::string err = p.check();
  if (err.empty()) return true;
  SC_REPORT_FATAL(msg_type, (std::string(instance) + ": " + err).c_str());
  return false;
}

}  // namespace tlm_models

#endif  // TLM_MODELS_PARAMS_CHECK_H
