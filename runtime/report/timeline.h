/* timeline.h - simulated op lists laid out on a time axis, for pictures.
 *
 * A block is one op list of one pipeline stage, run by the interpreter
 * exactly as the analysis runs it (from time 0) and shifted by an offset.
 * Two layouts:
 *   one microbatch: the forward list, then the backward list (with its
 *     recompute ops, without `once` ops) from the moment every stream of
 *     the forward is idle -- t_f, unless a forward op on another stream
 *     outlives the forward's compute;
 *   a sequence: mu microbatches, forward then backward, back to back, the
 *     last backward with its `once` ops (the gradient sync), then the step
 *     list.  Each stage starts at 0: a picture of the work, not a pipeline
 *     schedule (the bubble comes from the schedule's formula).
 * Walking a stage yields its ops, the stalls of its compute stream (split
 * by what they were charged to, plc_sim_stalls) and the exposed parts of
 * collectives on other streams.  All times are exact rationals, and every
 * position derived from them is computed by integer arithmetic. */
#ifndef PLC_TIMELINE_H
#define PLC_TIMELINE_H

#include <stdio.h>
#include <gmp.h>

#include "analysis.h"
#include "report.h"

/* At most this many microbatches of a sequence are laid out: the first
 * ones and the last, at their true offsets (the gap stands for the rest). */
#define PLC_TIMELINE_MAX_MICRO 32

typedef enum plc_timeline_what {
  PLC_TL_OP,      /* an op that ran, on its stream */
  PLC_TL_WAIT,    /* the compute stream stalled, charged to `op` (NULL: nothing ran) */
  PLC_TL_EXPOSED  /* the part of a collective on another stream the compute stream waited for */
} plc_timeline_what;

typedef struct plc_timeline_block {
  const plc_ir_list *list;
  const plc_sim *sim;
  const char *label;   /* "fwd", "bwd" or "step" */
  long micro;          /* microbatch index; -1 for the step list */
  mpq_t off;           /* where the list's time 0 lies */
} plc_timeline_block;

typedef struct plc_timeline_item {
  plc_timeline_what what;
  int stream;
  const plc_ir_op *op;            /* the op (for waits: the op charged, or NULL) */
  const plc_sim_op *so;           /* its simulation, or NULL */
  const plc_timeline_block *block;
  mpq_srcptr a, b;                /* absolute start and end: a <= b (a < b for stalls) */
} plc_timeline_item;

typedef struct plc_timeline_stage {
  int stage;
  plc_sim sims[4];     /* forward, backward, backward with once ops, step */
  int nsims;
  plc_timeline_block *blocks;
  int nblocks;
  int *streams;        /* streams with ops: compute first, then by name */
  int nstreams;
  mpq_t bwd_at;        /* offset of the first backward */
  mpq_t end;           /* when the last op of the stage ends */
} plc_timeline_stage;

typedef struct plc_timeline {
  const plc_ir_run *run;
  int critical;
  plc_timeline_stage *stages;
  int nstages;
  mpq_t end;           /* the latest end over the stages */
} plc_timeline;

/* One microbatch of stage `stage`, or of every stage when stage < 0. */
void plc_timeline_microbatch(plc_timeline *tl, const plc_result *res, int stage);
/* mu microbatches and the step list of every stage (see above). */
void plc_timeline_sequence(plc_timeline *tl, const plc_result *res);
void plc_timeline_free(plc_timeline *tl);

/* Every item of a stage: per block, its ops in list order, then its stalls. */
typedef void plc_timeline_fn(void *ctx, const plc_timeline_item *it);
void plc_timeline_each(const plc_timeline_stage *st, plc_timeline_fn *fn, void *ctx);

/* out = round(t * k), half up; t, k >= 0. */
void plc_timeline_round(mpz_t out, mpq_srcptr t, mpq_srcptr k);
/* An op's label: "L3 mm" (long != 0 and the op has a layer) or its name. */
void plc_timeline_label(char *buf, size_t n, const plc_ir_op *op, int full);

/* Write a file atomically: `write` fills PATH.tmp, which is renamed to PATH
 * when it and the close succeed; on failure the temporary is removed, any
 * old PATH is left as it was, and a message goes to stderr.  Returns 0 on
 * success, -1 on failure.  `write` returns 0 or -1 (and may leave errno). */
typedef int plc_timeline_writer(FILE *f, void *ctx);
int plc_timeline_save(const char *path, plc_timeline_writer *write, void *ctx);

/* The ASCII timeline of one microbatch of a stage (-1: the critical one),
 * `width` columns wide; values printed as the report prints them. */
void plc_timeline_print(FILE *out, const plc_result *res, int stage, int width,
                        const plc_report_opts *o);

#endif
