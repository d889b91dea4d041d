/* step.h - the whole step as one simulation: every block of every stage,
 * in schedule order, on the devices' streams, with links shared.
 *
 * The lowered lists of a stage (ir.h) are the blocks' op lists: F is the
 * forward list, B the backward list (with recompute); a schedule that runs
 * the weight gradients apart (zb_h1) splits the backward into B (all but
 * the ops marked `wgrad` and the collectives that wait on them) and W (the
 * rest).  `once` ops (gradient buckets) run in the last microbatch's
 * backward, and the `step` list after everything else of the stage.  The
 * schedule module (schedule.h) orders the blocks; a block waits for the
 * blocks the schedule makes it depend on: on another stage through that
 * block's p2p sends (its sinks when it sends nothing), on its own stage
 * through the other block's sinks.  flow.h runs all of it, so one block's
 * communication overlaps another's compute exactly where streams and
 * dependencies allow, and concurrent transfers of a stage on one cluster
 * tier share its link (a transfer's latency is not shared).
 *
 * Every stage's compute stream then adds up, exactly, to the step:
 *   fill + compute + exposed + stall_other + wait_stage + drain = makespan,
 * where fill is the idle time before its first op, drain after its last,
 * and each gap between is charged along the chain of ops that held it up:
 * to a collective of the stage (exposed), to compute on another stream of
 * the stage (stall_other), or, from where the chain leaves the stage, to
 * waiting for another stage (wait_stage).
 *
 * This first version lowers one chunk per stage: the placements of
 * gpipe, 1f1b and zb_h1.  Interleaved and DualPipe need per-chunk lists. */
#ifndef PLC_STEP_H
#define PLC_STEP_H

#include <stddef.h>

#include "flow.h"
#include "ir.h"

/* Whole-step runs refuse more ops than this before building them. */
#define PLC_STEP_MAX_OPS 1000000L

typedef struct plc_step_stage {
  mpq_t compute;                /* compute ops on the compute stream */
  mpq_t exposed[PLC_PD_COUNT];  /* collectives on it, and stalls charged to them */
  mpq_t stall_other;            /* waiting for compute on another stream */
  mpq_t wait_stage;             /* waiting for another stage */
  mpq_t fill, drain;            /* idle before the first op, after the last */
  mpq_t end;                    /* the stage's last op ends */
} plc_step_stage;

typedef struct plc_step {
  int nstages;
  int critical;                 /* the stage with the most compute */
  mpq_t makespan;
  plc_step_stage *stages;
  int nops;
  const plc_ir_op **src;        /* per simulated op, the lowered op it runs */
  int *stage_of, *mb_of;        /* its stage and microbatch (-1 for step ops) */
  plc_flow flow;
} plc_step;

typedef struct plc_step_opts {
  int share;                    /* transfers on one link share it */
} plc_step_opts;

/* Simulate run's whole step.  Returns 1, or 0 with why in msg (a schedule
 * precondition, a placement this version cannot run, too many ops). */
int plc_step_run(plc_step *st, const plc_ir_run *run, const plc_step_opts *opts, char *msg,
                 size_t msglen);
void plc_step_free(plc_step *st);

#endif
