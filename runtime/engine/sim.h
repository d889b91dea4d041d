/* sim.h - the stream interpreter: a list scheduler over exact rationals.
 *
 * Ops run in program order per stream; an op starts at max(its stream is
 * free, its dependencies have finished), and a compute op that takes time
 * also when the device's compute is free: compute ops run one at a time,
 * in program order, whatever their stream (a side stream overlaps
 * communication, not compute, so busy and MFU stay within 100%).  Exposure is measured on stream 0,
 * the compute stream: a collective issued on it is wholly exposed; when an
 * op on it starts later than the stream became free, the gap is charged to
 * the dependency that finished last.  The list ends when every stream is
 * free: ops on other streams that outlive the compute stream are charged
 * for the tail the same way.  So the makespan is exactly the sum of the
 * compute stream's ops' durations plus the charged stalls.
 *
 * Links (net, when given and sharing): transfers of the list that are
 * active at the same time on one physical link of the device share it
 * (flow.h: equal shares, re-evaluated exactly as transfers start and
 * end), so a transfer may take longer than its time; its latency part is
 * not shared.  A list with no two transfers that could overlap on one
 * link (on different streams) runs as without sharing, which is then the
 * same run.  Without net every transfer has its link to itself. */
#ifndef PLC_SIM_H
#define PLC_SIM_H

#include <gmp.h>

#include "ir.h"

typedef enum plc_why {
  PLC_WHY_HIDDEN,      /* fully overlapped */
  PLC_WHY_SAME_STREAM, /* issued on the compute stream: it blocks it */
  PLC_WHY_NO_WORK,     /* its consumer follows with no independent work between */
  PLC_WHY_SHORT,       /* the window of independent work is shorter than it */
  PLC_WHY_QUEUED,      /* waited behind another op on its own stream */
  PLC_WHY_NO_CONSUMER, /* nothing waits for it in this list */
  PLC_WHY_BLOCKS,      /* its own window suffices, but an op queued behind it was waited for */
  PLC_WHY_SHARED,      /* its window suffices for its time, but it shared its link */
  PLC_WHY_COUNT
} plc_why;

typedef struct plc_sim_op {
  mpq_t ready, start, end;
  mpq_t exposed;        /* time charged to it on the compute stream */
  mpq_t window;         /* compute-stream work between its start and its consumer */
  int consumer;         /* first op that waits for it, or -1 */
  int queued_behind;    /* the op that held its stream when it was ready, or -1 */
  plc_why why;
  int ran;              /* 0 for `once` ops left out of this run */
  int own_figs;         /* exposed and window are its own rationals, made
                           when a run writes one (a collective's); else
                           both are a read-only 0 */
} plc_sim_op;

typedef struct plc_sim {
  int n;
  plc_sim_op *ops;
  mpq_t makespan;       /* end of the list: every stream, the compute stream's tail charged */
  mpq_t end;            /* end of every stream */
  mpq_t busy;           /* durations of the ops on the compute stream */
  mpq_t compute;        /* compute ops on the compute stream */
  mpq_t all_compute;    /* time some compute op runs, on any stream (union) */
  mpq_t useful;         /* time some useful compute op runs (union) */
  mpq_t exposed;        /* sum of exposure charged to collectives */
  mpq_t stall_other;    /* compute-stream stalls caused by compute on other streams */
  struct plc_sim_lazy *lazy; /* the ops' ready, start and end not yet made
                                rationals (plc_sim_times) */
  int shared;           /* links were shared: a transfer may have taken longer
                           than its time (end - start) */
  int timed;            /* the ops' ready, start and end are made (rationals) */
} plc_sim;

/* The physical links of a run's devices, for sharing (flow.h): one per
 * port (a tier's name unless the cluster names a port), the same for
 * every list of the run. */
typedef struct plc_sim_net {
  int share;                       /* the train's shared_links */
  int nlinks;
  int link[PLC_PD_COUNT];          /* per dimension, its link */
  mpq_srcptr latency[PLC_PD_COUNT]; /* per dimension, per step of a collective (NULL: 0) */
} plc_sim_net;

/* run's links, sharing as the train says. */
void plc_sim_net_of(const plc_ir_run *run, plc_sim_net *net);
/* A transfer's time split into the part its link does not share (its
 * latency, k steps of the dimension's, at most its time) into fixed and
 * the rest into work; a compute op's all fixed. */
void plc_sim_cost_split(const plc_sim_net *net, const plc_ir_op *op, mpq_t fixed, mpq_t work);

/* Run a list; `once` ops take part only when with_once.  Every op starts no
 * earlier than t0.  nstreams is the run's stream count.  The figures and
 * each op's exposure and window are set; the ops' ready, start and end
 * times only once plc_sim_times asks for them (most runs never read them,
 * and turning every time into a rational in lowest terms was most of the
 * cost of a run on machine integers). */
void plc_sim_run(plc_sim *s, const plc_ir_list *l, int nstreams, int with_once, mpq_srcptr t0,
                 const plc_sim_net *net);
/* The end of every stream of list l run so (which is its makespan: the
 * compute stream's tail is charged up to it), without the other figures:
 * what plc_sim_run gives as s->end and s->makespan, for less. */
void plc_sim_end(mpq_t out, const plc_ir_list *l, int nstreams, int with_once, mpq_srcptr t0,
                 const plc_sim_net *net);
/* The same, but the latest end of the ops for which counts is true (and
 * t0): the others still run and delay what waits for them.  counts reads
 * only an op's kind, stream, once, dim, group, phase, wgrad, chunk,
 * after_layers or useful (the copies of a layer's ops share them: what
 * sim.c works out for a block of them it takes for the next, plc_s64_steady). */
typedef int plc_sim_counts_fn(const plc_ir_op *op);
void plc_sim_end_of(mpq_t out, const plc_ir_list *l, int nstreams, int with_once,
                    mpq_srcptr t0, plc_sim_counts_fn *counts, const plc_sim_net *net);
/* Both from one run: plc_sim_end into all and plc_sim_end_of into out
 * (either may be NULL). */
void plc_sim_ends(mpq_t all, mpq_t out, const plc_ir_list *l, int nstreams, int with_once,
                  mpq_srcptr t0, plc_sim_counts_fn *counts, const plc_sim_net *net);
/* plc_sim_ends of l without its `once` ops into all0 and out0 (either may
 * be NULL), and plc_sim_end_of with them into out1: from one run when
 * the `once` ops provably changed no other op's times (sim.c,
 * plc_s64_once), else from two. */
void plc_sim_ends_once(mpq_t all0, mpq_t out0, mpq_t out1, const plc_ir_list *l, int nstreams,
                       mpq_srcptr t0, plc_sim_counts_fn *counts, const plc_sim_net *net);
/* Tests: how many plc_sim_ends_once calls of this thread took both from
 * one run. */
extern _Thread_local long plc_sim_once_merged;
/* What plc_sim_end_of gives for l run so, from s, that run of l made by
 * plc_sim_run from t0: the latest end of its ops that ran and for which
 * counts is true (all when NULL), and t0. */
void plc_sim_end_in(mpq_t out, const plc_sim *s, const plc_ir_list *l, mpq_srcptr t0,
                    plc_sim_counts_fn *counts);
/* The figures of a run that the ops' own do not make up: what
 * plc_sim_run gives as compute, all_compute, useful and stall_other, and
 * the exposures of its collectives summed per dimension. */
typedef struct plc_sim_figs {
  mpq_t compute, all_compute, useful, stall_other;
  mpq_t exposed[PLC_PD_COUNT];
} plc_sim_figs;
/* Those figures of l run as plc_sim_run runs it, into f (initialised),
 * for less: on machine integers when they fit (no rational per op, no
 * windows), else from plc_sim_run. */
void plc_sim_run_figs(plc_sim_figs *f, const plc_ir_list *l, int nstreams, int with_once,
                      mpq_srcptr t0, const plc_sim_net *net);
/* Op i of l, which ran in s: how long it took into out, its time, or more
 * for a transfer that shared its link. */
void plc_sim_took(const plc_sim *s, const plc_ir_list *l, int i, mpq_t out);
/* Add to took[g], window[g] and exposed[g] (arrays of ngroups, each may
 * be NULL) what the ops i of l that ran in s with group[i] = g took
 * (plc_sim_took), their windows and their exposures (-1: no group): on
 * integers while s's times are (no rational per op). */
void plc_sim_add_sums(const plc_sim *s, const plc_ir_list *l, const int *group, int ngroups,
                      mpq_ptr *took, mpq_ptr *window, mpq_ptr *exposed);
/* Set (tests only, before any thread): plc_sim_run always computes on
 * rationals, not on machine integers over a common denominator (sim.c). */
extern int plc_sim_no_fast;
/* Set (tests; PLC_SIM_NO_EPISODES=1 in the environment sets it): a run
 * with links shared takes the flow over the whole list from where
 * transfers first met, not episode by episode (sim.c). */
extern int plc_sim_no_episodes;
/* Set (tests; PLC_SIM_NO_STEADY=1 in the environment sets it): runs
 * look for no repeated blocks in their lists (sim.c, plc_s64_per): every
 * duration is read from its time, the walk to a list's end walks every
 * op (plc_s64_steady), as does an episode's walk (plc_sim_ep_steady);
 * sums, flows and the test for shared links go over every op, never
 * taking anything from a block before. */
extern int plc_sim_no_steady;
/* Tests and measurements, this thread's: ops whose start and end the
 * walk to a list's end took from the block before them. */
extern _Thread_local long plc_sim_steady_ops;
/* Tests, this thread's: when set, every walk to a list's end (plc_sim_end,
 * plc_sim_ends, plc_sim_ends_once on machine integers) gives it each op
 * that ran, with its start and end, and ctx. */
typedef void plc_sim_walk_fn(void *ctx, const plc_ir_list *l, int i, mpq_srcptr start,
                             mpq_srcptr end);
extern _Thread_local plc_sim_walk_fn *plc_sim_walk_hook;
extern _Thread_local void *plc_sim_walk_ctx;
/* Tests and measurements, this thread's: flows run by episodes, their
 * ops, runs that took more than one episode, runs that fell back to the
 * whole flow, ops an episode's walk took from the block before them
 * (its steady state). */
typedef struct plc_sim_ep_stats {
  long flows, ops, multi, fallbacks, steady;
} plc_sim_ep_stats;
extern _Thread_local plc_sim_ep_stats plc_sim_ep_stat;
/* Rounds of a run by episodes before the rest goes in one flow, and the
 * most meetings of its transfers in the walk from t0 for which it is run
 * by episodes (tests). */
extern int plc_sim_ep_rounds, plc_sim_ep_meets;
/* Set every op's ready, start and end (once; a run on rationals has them
 * already).  Logically const: it only fills in what the run worked out. */
void plc_sim_times(const plc_sim *s);
void plc_sim_free(plc_sim *s);

/* A part [lo, hi) of a compute-stream stall and the op it is charged to:
 * a collective (its exposure) or compute on another stream; -1 when no op
 * held the stream then. */
typedef void plc_sim_part_fn(void *ctx, int op, mpq_srcptr lo, mpq_srcptr hi);
/* The stall [a, b) of the compute stream before its op i, split into the
 * parts charged to each op, latest first (the interpreter charges with it). */
void plc_sim_stall_parts(const plc_sim *s, const plc_ir_list *l, int i, mpq_srcptr a,
                         mpq_srcptr b, plc_sim_part_fn *fn, void *ctx);
/* Every stall of the compute stream of a list run from t0, in op order,
 * then the tail other streams leave after it: the parts whose lengths the
 * run charged, for drawing them. */
void plc_sim_stalls(const plc_sim *s, const plc_ir_list *l, mpq_srcptr t0, plc_sim_part_fn *fn,
                    void *ctx);
const char *plc_why_text(plc_why w);

/* One analysis runs the same stage lists several times (their ends, the
 * critical stage in full, the tail with the gradient sync, the blocks'
 * times).  Between plc_sim_memo_push and plc_sim_memo_pop, on one thread
 * (nested as calls are), the runs of run's stage lists reuse what they
 * share: their durations over a common denominator.  run's lists must
 * not change in between (sensitivity changes times between analyses). */
typedef struct plc_sim_memo {
  const plc_ir_run *run;
  struct plc_s64_dur *dur;   /* per stage list and with_once, made on first use */
  struct plc_sim_part *part; /* lists made of a stage list's ops (plc_sim_memo_part) */
  int npart, cap;
  struct plc_sim_memo *prev; /* the enclosing memo, or NULL */
} plc_sim_memo;
void plc_sim_memo_push(plc_sim_memo *m, const plc_ir_run *run);
void plc_sim_memo_pop(plc_sim_memo *m);
/* l is made of ops of parent, one of the run's stage lists: its op j is
 * parent's op from[j] (its time, its `once`; each of parent's ops at most
 * once).  Until plc_sim_memo_drop(l)
 * (before l or from changes or goes), the innermost memo runs l with
 * parent's durations, picked out (over parent's denominator: the same
 * figures), rather than reading every time again.  Nothing without a
 * memo, or when it does not keep parent. */
void plc_sim_memo_part(const plc_ir_list *l, const plc_ir_list *parent, const int *from);
void plc_sim_memo_drop(const plc_ir_list *l);
/* The sum of the times of l's ops that are not `once` and for which
 * counts is true (all when NULL), into out, on integers from the innermost memo: 0, out
 * untouched, when it does not keep l or l's times do not fit. */
int plc_sim_memo_sum(mpq_t out, const plc_ir_list *l, plc_sim_counts_fn *counts);
/* A region of repeated blocks of a list: each op of [a + b, e) alike the
 * op b before it (b > 0): the same kind, stream, once, dim, group, phase,
 * wgrad, chunk, after_layers, useful, pinned and number of dependencies,
 * those shifted by b, and an equal time (sim.c, plc_s64_alike_op). */
typedef struct plc_sim_block {
  int a, b, e;
} plc_sim_block;
#define PLC_SIM_BLOCKS 8
/* The regions the innermost memo found in l (in list order, none
 * overlapping; at most PLC_SIM_BLOCKS) into out, and how many: 0 unless
 * it keeps l's durations without `once`, read already (it reads
 * nothing), or when plc_sim_no_steady is set. */
int plc_sim_memo_blocks(const plc_ir_list *l, plc_sim_block *out);
/* The sum of the times of l's `once` ops, from the innermost memo's
 * durations of l with them: 0, out untouched, unless a run made them
 * already (and they fit). */
int plc_sim_memo_once_sum(mpq_t out, const plc_ir_list *l);

#endif
