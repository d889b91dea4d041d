/* step.h - the whole step as one simulation: every block of every stage,
 * in schedule order, on the devices' streams, with links shared.
 *
 * The lowered lists of a stage (ir.h) are the blocks' op lists: F is the
 * forward list, B the backward list (with recompute); a schedule that runs
 * the weight gradients apart (zb_h1, DualPipe's enable_zb backwards)
 * splits the backward into B (all but the ops marked `wgrad` and the
 * collectives that wait on them) and W (the rest).  Blocks are per chunk:
 *   - one chunk per stage (gpipe, 1f1b, zb_h1, custom): the whole lists;
 *   - interleaved (and custom with vpp > 1): chunk k of stage s (model chunk
 *     s + k p) runs the ops of the stage's lists whose `chunk` is k (a
 *     layer op's is its layer's, a pipeline op's its field); a pipeline op
 *     that names no dependency waits for its chunk's last layer op on the
 *     compute stream, and a dependency on an op of another chunk (`prev.`
 *     across a chunk boundary) is that op in the other chunk's block of the
 *     same microbatch and phase;
 *   - dualpipe: chunk c runs the whole lists of model part c mod p (lowered
 *     stage c mod p), so stage s runs parts s and p-1-s; it holds both
 *     parts' parameters, so both parts' step lists run on it;
 *   - dualpipev: the lowering places model chunks s and 2p-1-s on stage s
 *     as its virtual chunks 0 and 1 (vpp 2), run as interleaved's; the
 *     turn of the V (chunk p-1 to p) stays on stage p-1 and waits for the
 *     other block's sinks.  vpp > 1 with another schedule is refused.
 * `once` ops (gradient buckets) run in the backward of the last
 * microbatch through their chunk, and the `step` lists after everything
 * else of the stage.  The schedule module (schedule.h, runsched.h) orders
 * the blocks; a block waits for the blocks the schedule makes it depend
 * on: on another stage through that block's p2p sends over pp (its sinks
 * when it sends nothing), on its own stage through the other block's
 * sinks.
 *
 * An F&B block (DualPipe) runs the forward of one microbatch and the
 * backward of another together.  Both parts wait for everything either
 * needs (DualPipe receives both inputs before computing), and their ops
 * are interleaved by one rule: each part's layer ops are cut into
 * segments, a new one starting at every compute-stream op that names an op
 * of another stream among its dependencies (where the compute stream would
 * wait for the part's own communication); the block issues backward
 * segment 0, forward segment 0, backward segment 1, forward segment 1, ...
 * each part in its own order, then the forward's pipeline-template ops
 * (its sends) and the backward's, as DualPipe sends both after the
 * overlapped compute.  So one part's all-to-all is in flight while the other's
 * segment computes: on a MoE layer, the backward's combine under the
 * forward's attention, the forward's dispatch under the backward's expert
 * GEMMs, the backward's dispatch under the forward's experts and the
 * forward's combine under the backward's attention, as in the DeepSeek-V3
 * report's Figure 4.  A part whose collectives sit on the compute stream
 * has one segment and nothing to hide.
 *
 * flow.h runs all of it, so one block's communication overlaps another's
 * compute exactly where streams and dependencies allow, and concurrent
 * transfers of a stage on one cluster tier share its link (a transfer's
 * latency is not shared); concurrent compute ops of a stage share its
 * device the same way, whether links are shared or not (a stretched op's
 * own time is compute, the rest stall_other).
 *
 * Every stage's compute stream then adds up, exactly, to the step:
 *   fill + compute + exposed + stall_other + wait_stage + drain = makespan,
 * where fill is the idle time before its first op, drain after its last,
 * and each gap between is charged along the chain of ops that held it up:
 * to a collective of the stage (exposed), to compute on another stream of
 * the stage (stall_other), or, from where the chain leaves the stage, to
 * waiting for another stage (wait_stage).  For uniform stages without
 * cross-block effects the measured bubble, makespan minus the critical
 * stage's compute, is the schedule's closed form (schedule.h; test_step.c
 * checks 1f1b, gpipe, zb_h1, interleaved and dualpipe). */
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
  int share;                    /* transfers on one link share it (compute always shares) */
} plc_step_opts;

/* Simulate run's whole step.  Returns 1, or 0 with why in msg (a schedule
 * precondition, a placement this version cannot run, too many ops). */
int plc_step_run(plc_step *st, const plc_ir_run *run, const plc_step_opts *opts, char *msg,
                 size_t msglen);
void plc_step_free(plc_step *st);

#endif
