// Every model of attn-tlm, for code that wants them all (the Python loader, virtual prototypes).
#ifndef TLM_MODELS_ALL_H
#define TLM_MODELS_ALL_H

#include "tlm_models/dma.h"
#include "tlm_models/exp_unit.h"
#include "tlm_models/hbm.h"
#include "tlm_models/interconnect.h"
#include "tlm_models/op_executor.h"
#include "tlm_models/operand_extents.h"
#include "tlm_models/pe_array.h"
#include "tlm_models/replayer.h"
#include "tlm_models/sim_context.h"
#include "tlm_models/sram.h"
#include "tlm_models/stats.h"
#include "tlm_models/trace_op.h"
#include "tlm_models/traffic_generator.h"

#endif  // TLM_MODELS_ALL_H
