/* analysis.h - from simulated op lists to the figures of a training step.
 *
 * Per stage and microbatch: t_f and t_b (backward with recompute) are the
 * compute-stream makespans of the forward and backward lists.  The stage
 * with the largest t_f + t_b is critical (the per-microbatch figures are
 * its).  The critical device is the one with the most work over the step:
 * the critical stage, doing mu (t_f + t_b), except under DualPipe, where
 * device s runs mu/2 microbatches through model stage s and mu/2 through
 * model stage p-1-s, mu/2 (t_s + t_{p-1-s}), and the schedules that run
 * a stage's virtual chunks as blocks of their own (interleaved, and
 * dualpipev's V), where it is the stage whose chunks, each run alone,
 * take the longest in all, mu x that sum.  The bubble is measured: the
 * schedule run at block level (blocks.h), every block with its model
 * stage's (or its chunk's) times, the makespan less the critical device's
 * work, split into
 * its idle time in warm-up, steady phase and cool-down; the schedule's
 * closed form is kept as a reference, and is the bubble only when the
 * blocks cannot be run (too many, or the schedule's preconditions fail).
 * The DP tail is what the gradient synchronisation leaves after the last
 * backward.  Then
 *   step = work of the critical device + bubble + DP tail + optimizer step,
 * eta = useful compute / step, busy = all compute / step, MFU, tokens/s,
 * and the share of the step each component takes. */
#ifndef PLC_ANALYSIS_H
#define PLC_ANALYSIS_H

#include "ir.h"
#include "sim.h"

/* One line of the communication inventory: a dimension, a primitive and a
 * phase on the critical stage, for one microbatch. */
typedef struct plc_coll_row {
  plc_pdim dim;
  plc_opk kind;
  plc_phase phase;
  long count;
  int uniform;             /* every op has the size and time of the first */
  mpq_t size_each, time_each;
  mpq_t bytes, time, window, exposed;
  int why[PLC_WHY_COUNT];  /* how many ops for each reason */
  int why_exposed[PLC_WHY_COUNT]; /* the same, counting only ops with exposure */
} plc_coll_row;

typedef enum plc_tail_kind { PLC_TAIL_NONE, PLC_TAIL_PINNED, PLC_TAIL_DECLARED, PLC_TAIL_SIMULATED }
  plc_tail_kind;

typedef struct plc_result {
  const plc_ir_run *run;
  int critical;
  plc_sim fwd, bwd;        /* the critical stage's microbatch */
  mpq_t t_f, t_b, t, t_w;  /* critical stage, one microbatch */
  int device;              /* the critical device (the critical stage but for
                              dualpipe, and for chunks run as blocks) */
  mpq_t work;              /* its own work over the step: mu (t_f + t_b) but for
                              dualpipe (mu/2 x each part's) and chunks run as
                              blocks (mu x the sum of its chunks' times) */
  /* the critical device's figures over the step, which add up to work:
   * mu x the per-microbatch ones but for DualPipe (mu/2 x each part's) and
   * chunks run as blocks (interleaved, dualpipev: mu x each chunk's alone) */
  mpq_t dev_compute, dev_all_compute, dev_useful, dev_stall, dev_exposed[PLC_PD_COUNT];
  mpq_t bubble;            /* the step's */
  int bubble_measured;     /* simulated at block level; else the formula */
  char bubble_why[160];    /* why not measured (when not) */
  /* measured: the critical stage's idle time in the schedule's warm-up,
   * steady phase and cool-down (schedule.h); they add up to the bubble */
  mpq_t bubble_warmup, bubble_steady, bubble_cooldown;
  mpq_t bubble_formula;    /* the schedule's closed form (none for custom) */
  int bubble_formula_known;
  mpq_t tail, tail_full;   /* exposed DP tail; the whole gradient sync it comes from */
  plc_tail_kind tail_kind;
  mpq_t optimizer;
  mpq_t step;
  mpq_t compute_mb;        /* compute ops on the compute stream, per microbatch */
  mpq_t all_compute_mb;    /* all compute including recompute */
  mpq_t useful_mb;         /* forward and backward compute without recompute */
  mpq_t exposed_mb[PLC_PD_COUNT];
  mpq_t stall_mb;          /* compute waiting for compute on other streams */
  mpq_t eta, busy, mfu, tokens_per_s;
  int mfu_known;           /* the model FLOPs are known and the step is not empty */
  const char *mfu_why;     /* why not, when not known: for the report */
  plc_coll_row *rows;
  int nrows;
  struct plc_sense *sense; /* sensitivity.h; NULL until computed */
  int nsense;
  struct plc_mem *mem;     /* memory.h; NULL until computed */
  struct plc_whole *whole; /* whole.h; NULL until asked for */
  /* per stage, kept for re-analyses: the first stage whose lists simulate
   * alike (cls), and for those stages the forward and backward makespans
   * and the DP tail they leave (tl: when the tail is simulated) */
  int *cls;
  mpq_t *tf, *tb, *tl;
  mpq_t *tk;               /* the backward's end without the sends that leave
                              its chunks (plc_chunk_leaves), = tb when a stage
                              runs its lists as one block: where its DP tail
                              is measured from */
  mpq_t *tw;               /* when tw_ok[s]: the backward's end with its once
                              ops, counted as tk (plc_stage_tail's start of
                              the step list), from tb's run (plc_stage_ends) */
  unsigned char *tw_ok;
  /* with nck > 0 chunks per stage run as blocks (plc_run_chunks): stage
   * s's chunk k alone at s x nck + k, its forward, backward, the
   * backward's weight-gradient part, the latency of its forward and of its
   * backward sends, and the larger of the two (plc_chunk_times) */
  int nck;
  mpq_t *ckf, *ckb, *ckw, *ckpf, *ckpb, *ckp;
  /* with F&B blocks (DualPipe, dualpipev; NULL otherwise, or when the
   * schedule cannot be built): per device d and slot a (its model stage
   * d or p-1-d under DualPipe, its V's chunk under dualpipev), at d x 2 +
   * a, the time of an F&B of slot a's forward and the other slot's
   * backward overlapped (fbpair.h), and how many the device runs */
  mpq_t *fbo;
  long *nfb;
  mpq_t t_fb;              /* the critical stage's own F and B overlapped
                              (t_F&B of DualPipe's closed form) */
  int no_sims;             /* plc_analyse_step: fwd and bwd were not simulated */
  struct plc_sim_memo *memo; /* between plc_analyse_first and plc_analyse_rest */
} plc_result;

void plc_analyse(plc_result *res, const plc_ir_run *run);

/* plc_analyse in two parts, on one thread with no other analysis between
 * them: the first computes the step and every figure it is made of (what a
 * search ranks by); the rest, the critical stage simulated in full and
 * the figures from it (compute, exposure, inventory, efficiency).  With
 * figures 0 the rest computes nothing: the result then has the step
 * alone, and is only for plc_result_free.  The two make plc_analyse. */
void plc_analyse_first(plc_result *res, const plc_ir_run *run);
void plc_analyse_rest(plc_result *res, int figures);
/* After plc_analyse_first: the figures that follow from the step and the
 * run alone, tokens_per_s and mfu (a search's cut reads them to decide a
 * requirement without the rest; plc_analyse_rest sets them again). */
void plc_analyse_step_ratios(plc_result *res);

/* Device d's F&B blocks with slot a's forward (res->fbo): the model stage
 * (DualPipe) or model chunk (dualpipev) its forward runs and the one its
 * backward runs, into *fm and *bm, and their times per microbatch run
 * apart into *f and *b. */
void plc_fb_parts(const plc_result *res, int d, int a, int *fm, int *bm, mpq_srcptr *f,
                  mpq_srcptr *b);

/* One pairing of F&B blocks a device runs: how many, the model stages (or
 * chunks) of its forward and backward, its time overlapped and its parts'
 * apart. */
typedef struct plc_fb_pair {
  long count;
  int fm, bm;
  mpq_srcptr time, f, b;
} plc_fb_pair;

/* The pairings device d runs (none without res->fbo) into out; returns
 * how many (at most 2). */
int plc_fb_pairs_of(const plc_result *res, int d, plc_fb_pair out[2]);

/* What a re-analysis of run changed since base: its forward lists, its
 * backward lists (and so their `once` ops). */
enum { PLC_CHANGED_FWD = 1, PLC_CHANGED_BWD = 2 };

/* The step time of run (res->step, with t_f, t_b, t_w, bubble and tail),
 * where only the lists in `changed` differ from base's (op times, not op
 * lists: the same stages simulate alike): the others' figures are base's.
 * No inventory or efficiency; free res with plc_result_free. */
void plc_analyse_step(plc_result *res, const plc_ir_run *run, const plc_result *base,
                      unsigned changed);

/* Weight-gradient time t_w of a backward list (ZB-H1, DualPipe): its
 * compute ops marked `wgrad`; when none is marked, half of its backward
 * compute (recompute excluded), the usual even split of input and weight
 * gradients.  Once-per-step ops are left out. */
void plc_weight_grad_time(const plc_ir_list *l, mpq_t out);

/* Does run's schedule put two model stages on each device, s and p-1-s,
 * each running half of the microbatches (DualPipe)? */
int plc_two_parts(const plc_ir_run *run);

/* How many virtual chunks each stage runs as blocks of their own, each
 * taking the times of its own ops (plc_chunk_times): vpp under a
 * round-robin placement (interleaved, or a custom order with vpp > 1:
 * chunk k of stage s is model chunk s + k p), 2 under dualpipev's V
 * (stage s holds model chunks s and 2p-1-s, lowered as virtual chunks 0
 * and 1); 0 when a stage runs its whole lists as one block. */
int plc_run_chunks(const plc_ir_run *run);

/* One microbatch of virtual chunk k of stage s alone (its ops of the
 * stage's lists, as the whole-step simulation runs them as blocks): the
 * forward's and backward's makespans into f and b, and the backward's
 * weight-gradient part into w when not NULL.  Its sends on a stream of
 * their own (pp p2p ops after the layers, off the compute stream) are
 * left out: the stage does not wait for them; the longest one's time goes
 * to p2p when not NULL, the latency of a transfer leaving the chunk. */
void plc_chunk_times(const plc_ir_run *run, int s, int k, mpq_t f, mpq_t b, mpq_t w,
                     mpq_t p2p);
void plc_result_free(plc_result *res);

/* The bubble formula of a schedule with its numbers, for the report;
 * malloc'd. */
char *plc_bubble_formula(const plc_result *res, int digits, int exact);

#endif
