/* runsched.h - the schedule a lowered run follows, as data: the blocks
 * its schedule's generator gives (schedule.h), or, for schedule = custom,
 * the train's schedule_order parsed and checked.
 *
 * A custom order is one string per stage of blocks separated by spaces
 * (or commas): F3, B3 and W3 for microbatch 3 of the stage's chunk, F3.1
 * for its chunk 1 when vpp > 1 (chunk k of stage s is model chunk s + k pp,
 * the round-robin placement of Megatron's virtual stages).  A W makes its
 * B the input-gradient part only.  The order must run every F and B of
 * every microbatch's chunks exactly once on the stage that holds the
 * chunk, and without deadlock (plc_sched_validate). */
#ifndef PLC_RUNSCHED_H
#define PLC_RUNSCHED_H

#include <stddef.h>

#include "ir.h"
#include "schedule.h"

/* Fill out with run's schedule (free with plc_sched_free).  Returns 1, or
 * 0 with why set and *stage the stage whose order is at fault (-1 when it
 * is the order as a whole, or not a custom one). */
int plc_runsched_build(const plc_ir_run *run, plc_sched *out, char *why, size_t len, int *stage);

/* The parameters of run's schedule without building it: 0 with why when
 * the schedule has no generator or the step is too large. */
int plc_runsched_params(const plc_ir_run *run, plc_sched_placement *place,
                        plc_sched_params *par, char *why, size_t len);

#endif
