// Kernel control for hosts that run more than one elaboration in a process image: the Python
// forkserver parent runs a tiny design once so that cling compiles the models, then gives the
// workers it forks a fresh, unelaborated simulation context.
#ifndef TLM_MODELS_SIM_CONTEXT_H
#define TLM_MODELS_SIM_CONTEXT_H

#include <systemc>

namespace tlm_models {

// Replaces the current simulation context with a new one. The old context is left alive on
// purpose: objects created in it (and still referenced by the host) point into it.
inline void fresh_simulation_context() {
  sc_core::sc_curr_simcontext = new sc_core::sc_simcontext();
  sc_core::sc_default_global_context = sc_core::sc_curr_simcontext;
}

}  // namespace tlm_models

#endif  // TLM_MODELS_SIM_CONTEXT_H
