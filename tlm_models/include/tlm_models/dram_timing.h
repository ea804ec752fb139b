// The command timing set of one DRAM channel (JEDEC names), in ticks of the SystemC time
// resolution. Values come from a memory part (platforms/parts/*.yaml, each citing its JEDEC
// standard or datasheet); docs/models/hbm.md lists which command each constraint separates.
#ifndef TLM_MODELS_DRAM_TIMING_H
#define TLM_MODELS_DRAM_TIMING_H

#include "tlm_models/time_ticks.h"

namespace tlm_models {

struct DramTiming {
  // ACT to the first column command of `write` kind.
  Ticks act_to_column(bool write) const { return write && rcd_wr ? rcd_wr : rcd; }
  Ticks rcd = 0;    // ACT -> RD/WR, same bank
  Ticks rcd_wr = 0; // ACT -> WR, same bank, where the standard has its own (HBM: tRCDWR); 0: rcd
  Ticks rp = 0;     // PRE -> ACT, same bank
  Ticks ras = 0;    // ACT -> PRE, same bank
  Ticks rc = 0;     // ACT -> ACT, same bank
  Ticks rrd_s = 0;  // ACT -> ACT, different bank group
  Ticks rrd_l = 0;  // ACT -> ACT, same bank group
  Ticks faw = 0;    // window holding at most four ACTs
  Ticks ccd_s = 0;  // column -> column, different bank group
  Ticks ccd_l = 0;  // column -> column, same bank group
  Ticks cl = 0;     // RD -> first read data
  Ticks cwl = 0;    // WR -> first write data
  Ticks wr = 0;     // end of write data -> PRE, same bank (write recovery)
  Ticks wtr_s = 0;  // end of write data -> RD, different bank group
  Ticks wtr_l = 0;  // end of write data -> RD, same bank group
  Ticks rtw = 0;    // RD -> WR, any bank (read-to-write bus turnaround)
  Ticks rtp = 0;    // RD -> PRE, same bank
  Ticks refi = 0;   // refresh interval (0: no refresh)
  Ticks rfc = 0;    // all-bank refresh: REF -> next command to any bank
  Ticks rfc_pb = 0; // per-bank refresh: REFpb -> next command to that bank
  Ticks burst = 0;  // data bus occupancy of one burst (burst_bytes / channel bandwidth)
  // Command bus: clock period (0: commands take no bus time), cycles each command holds it,
  // and whether row (ACT, PRE, REF) and column (RD, WR) commands share one bus.
  Ticks ck = 0;
  unsigned act_cycles = 1;     // HBM2: 2 (ACT takes two row-bus cycles); LPDDR4: 4
  unsigned row_cycles = 1;     // PRE, REF, REFpb; LPDDR4: 2
  unsigned column_cycles = 1;  // RD, WR; LPDDR4: 4
  bool shared_command_bus = true;  // DDR4, LPDDR4; HBM has separate row and column buses
  // How far behind the latest decided command a new one may still be placed (0: no limit);
  // bounds the command history kept and searched.
  Ticks reorder_window = 0;
};

}  // namespace tlm_models

#endif  // TLM_MODELS_DRAM_TIMING_H
