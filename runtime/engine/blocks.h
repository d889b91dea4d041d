/* blocks.h - the whole step at block level, for the pictures: every
 * stage's blocks in the schedule's order (schedule.h), timed by the
 * schedule simulator, with the device's memory level while each runs.
 *
 * Each block takes its model stage's per-microbatch time (device s's
 * stage, or for DualPipe's second direction model stage p-1-s, which
 * device s holds too): F the forward list's makespan, B the backward's (recompute included), W its weight-gradient
 * part (plc_weight_grad_time) when the schedule runs it apart (B then
 * takes the rest), a DualPipe FB the sum of its forward and backward;
 * when a stage holds several virtual chunks (interleaved, dualpipev's V)
 * each chunk's blocks take the times of its own ops run alone
 * (plc_chunk_times), so the chunk with the embedding or the output layer,
 * or one layer more, is as slow as its ops.  Transfers between
 * stages are inside those lists, so the simulator adds no p2p latency.
 * The once-per-step ops (the last microbatch's gradient sync, the step
 * list) are not blocks.  So this is the schedule's shape with the
 * per-microbatch times, the pipeline figure of the zero-bubble and
 * DualPipe papers; the op-level whole-step engine is step.h.
 *
 * The memory level of a block is the one memory.h walks: resident state +
 * activations in flight + the block's buffers. */
#ifndef PLC_BLOCKS_H
#define PLC_BLOCKS_H

#include <gmp.h>

#include "analysis.h"
#include "schedule.h"

typedef struct plc_blocks_item {
  int stage;
  plc_sched_block b;
  mpq_t start, end;
  mpq_t level;   /* memory while it runs (0 when memory is not modelled) */
  mpq_t after;   /* memory once it has ended, until the next block */
} plc_blocks_item;

typedef struct plc_blocks {
  int nstages, n;
  plc_blocks_item *items; /* stage 0's blocks in order, then stage 1's, ... */
  mpq_t makespan;
  int mem_known;
  mpq_t mem_max;          /* the highest level of any block */
  char why[160];          /* why there is no picture ("" when built) */
} plc_blocks;

/* Blocks in a picture at most: a larger step is refused with a reason. */
#define PLC_BLOCKS_MAX 200000

/* Build the picture of res (analysed, and its memory computed when
 * modelled).  Returns 1, or 0 with bl->why set; free bl either way. */
int plc_blocks_build(plc_blocks *bl, const plc_result *res);
void plc_blocks_free(plc_blocks *bl);

/* Blocks of a step whose bubble is measured at most (3 v mu p, counted
 * before the schedule is built); a larger step takes the closed form. */
#define PLC_BLOCKS_STEP_MAX 2000000L

/* Measure r's bubble (r->bubble and its fill, wait and drain): run's
 * schedule at block level with r's stage times, the makespan less
 * r->work, the critical device's own work (its blocks' times summed), with
 * the split on that device.  Returns 1, or 0 with why when the
 * schedule cannot be built or run, or has too many blocks. */
int plc_blocks_measure(const plc_ir_run *run, plc_result *r, char *why, size_t len);

/* Re-analyses of one run (plc_sensitivity's) change its op times, never
 * its schedule: from plc_blocks_keep(run) to plc_blocks_keep_end(), the
 * calling thread's plc_blocks_measure of run builds and prepares the
 * schedule once (plc_sched_prepare) and only simulates it again.  Scopes
 * nest: an inner one keeps the outer one's run (a caller that analyses
 * and then asks for the sensitivity can open one around both). */
void plc_blocks_keep(const plc_ir_run *run);
void plc_blocks_keep_end(void);

#endif
