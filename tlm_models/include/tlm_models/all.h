// Every model of attn-tlm, for code that wants them all (the Python loader, virtual prototypes).
#ifndef TLM_MODELS_ALL_H
#define TLM_MODELS_ALL_H

#include "tlm_models/op_executor.h"
#include "tlm_models/sim_context.h"
#include "tlm_models/stats.h"
#include "tlm_models/trace_op.h"

#endif  // TLM_MODELS_ALL_H
