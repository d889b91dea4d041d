/* whole.h - the whole-step simulation (step.h) of an analysed run, kept
 * with its result: the makespan and the critical stage's breakdown, for
 * the reports' "whole step (simulated)" section and the sim_* results.
 *
 * It runs on first use (a report, or an assert, -e or a search's
 * objective reading a sim_* result), once per result, with links shared
 * as the train says (shared_links); runs that never ask pay nothing.
 * When the engine cannot run the step (a schedule it does not lower yet,
 * more than PLC_STEP_MAX_OPS ops, a deadlock), known is 0 and why says so
 * in one line. */
#ifndef PLC_WHOLE_H
#define PLC_WHOLE_H

#include "analysis.h"

typedef struct plc_whole {
  int known;
  char why[256];
  char no[300];                 /* "no whole-step simulation (why)", for results */
  int share;                    /* links shared (the train's shared_links) */
  int nstages, critical, nops;
  mpq_t step;                   /* the makespan over all stages */
  mpq_t diff;                   /* step - the report's step_time */
  /* the critical stage's compute stream; these add up to step */
  mpq_t fill, compute, exposed[PLC_PD_COUNT], stall_other, wait_stage, drain;
  mpq_t exposed_all;            /* the sum of exposed over the dimensions */
} plc_whole;

/* The whole step of r, simulated on first call and kept in r->whole (a
 * cache: r is otherwise not changed). */
const plc_whole *plc_whole_get(const plc_result *r);
/* Free r->whole (plc_result_free does). */
void plc_whole_release(plc_result *r);

#endif
