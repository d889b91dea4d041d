/* sensitivity.h - what it would take to hide each exposed communication.
 *
 * For every row of the communication inventory (a dimension, a primitive
 * and a phase on the critical stage) that leaves time exposed: the
 * effective bandwidth at which each of its collectives would fit in its
 * window of independent compute, T(c) <= W(c), and the step time the run
 * would then have, found exactly by evaluating the run again with those
 * collectives at that bandwidth.  When no bandwidth suffices (the window is
 * no longer than the latency part, e.g. a collective on the compute
 * stream), the step is given for the collectives taking no time at all. */
#ifndef PLC_SENSITIVITY_H
#define PLC_SENSITIVITY_H

#include "analysis.h"

typedef struct plc_sense {
  int row;          /* index into plc_result.rows */
  int possible;     /* some bandwidth hides them all */
  mpq_t bw_now;     /* the link's bandwidth for the primitive, B/s */
  mpq_t bw_needed;  /* the least bandwidth that hides them all (possible) */
  mpq_t step_if;    /* the step time with them hidden (or free) */
} plc_sense;

/* Fill r->sense (the run's op times are changed and restored). */
void plc_sensitivity(plc_result *r, plc_ir_run *run);
void plc_sense_free(plc_result *r);

#endif
