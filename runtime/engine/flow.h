/* flow.h - the event-driven core of the whole-step engine: ops on serial
 * streams with dependencies, and transfers that share physical links.
 *
 * An op runs on one serial stream, after the op given before it on that
 * stream and after its dependencies (ops of any stream: this is how a
 * stage's forward waits for the previous stage's send).  It takes `fixed`
 * seconds at full speed (a compute op's duration, a transfer's latency),
 * then, if it is a transfer (link >= 0), `work` seconds of its link: the
 * time it would take with the link to itself.  Transfers whose work phases
 * are active on one physical link at the same time share it equally
 * (processor sharing, as NCCL channels on one NIC do to first order): while
 * k are active each progresses at 1/k, and the shares are re-evaluated,
 * exactly, whenever a transfer starts or ends.  With sharing off every
 * transfer has the whole link (the reference article's assumption).
 *
 * Each link keeps a virtual time that advances at 1/k of real time while k
 * transfers are active; a transfer that starts at virtual time V with work
 * w ends when the link's virtual time reaches V + w.  So an event costs
 * O(log n) and a run O(n log n) in ops plus dependencies, not O(n^2).
 *
 * Everything is exact; no floating point.  A run goes on machine integers
 * (plc_flow_q) while every time fits them, else again on GMP rationals
 * (flow.c says why both give the same run). */
#ifndef PLC_FLOW_H
#define PLC_FLOW_H

#include <gmp.h>

/* A time n/d on machine integers, in lowest terms, 0 < d < 2^63: n has
 * 128 bits where the compiler has them, else 64. */
#ifdef __SIZEOF_INT128__
__extension__ typedef __int128 plc_flow_int;
#else
typedef long long plc_flow_int;
#endif
typedef struct plc_flow_q {
  plc_flow_int n;
  unsigned long long d;
} plc_flow_q;

typedef struct plc_flow_op {
  int stream;           /* 0 .. nstreams-1 */
  int link;             /* physical link 0 .. nlinks-1, or -1: not a transfer */
  mpq_srcptr fixed;     /* seconds at full speed; NULL means 0 */
  mpq_srcptr work;      /* seconds of the whole link; NULL means 0 */
  const plc_flow_q *q;  /* or, when not NULL, fixed and work on machine
                           integers: q[0] and q[1] (fixed and work unused) */
  const int *deps;      /* ops that must end before it starts */
  int ndeps;
} plc_flow_op;

typedef struct plc_flow {
  int n;
  mpq_t *start, *end;   /* per op (start NULL from plc_flow_run_ends; end NULL
                           when qend holds the ends) */
  plc_flow_q *qend;     /* from plc_flow_run_ends when the run fit machine
                           integers: per op its end (else NULL) */
  int big;              /* 1: the run went on GMP rationals */
  int *cause;           /* (one block with ran and order: plc_flow_free)
                           the op whose end let it start (its stream
                           predecessor or a dependency), -1 for none */
  int *ran;             /* 1 for every op that ran */
  int *order, nended;   /* the ops that ran in the order they ended, so by
                           their ends (times only grow) */
  unsigned char *shared; /* 1 for a transfer that shared its link with another
                            for some time: only then can it take longer than
                            fixed + work */
  mpq_t makespan;       /* the latest end, or t0 */
} plc_flow;

/* Run n ops from time t0 (NULL: 0).  Returns 0, or -1 when some ops can never start
 * (a dependency cycle, or a dependency on a later op of the same stream):
 * then *stuck is the first such op in index order and f holds the times of
 * the ops that ran.  f is initialised here; free it with plc_flow_free. */
int plc_flow_run(plc_flow *f, const plc_flow_op *ops, int n, int nstreams, int nlinks,
                 int share, mpq_srcptr t0, int *stuck);
/* plc_flow_run without the ops' start times (f->start is NULL), for a
 * caller that reads only their ends (sim.c): two rationals less per op. */
int plc_flow_run_ends(plc_flow *f, const plc_flow_op *ops, int n, int nstreams, int nlinks,
                      int share, mpq_srcptr t0, int *stuck);
void plc_flow_free(plc_flow *f);
/* Op i's end, from end or qend, into q. */
void plc_flow_end_get(mpq_ptr q, const plc_flow *f, int i);

/* One episode of a run (sim.c runs a list's flow only where its transfers
 * share links): plc_flow_run_ends with links shared, on machine integers
 * only, that stops early at the first time t > t0 at which, every event
 * up to t done, no link has two transfers under way (started, taking
 * time, not ended: in their fixed part or on the link), or else at
 * horizon, whichever comes first; or it runs to the end.  From then on,
 * until an op starts, each op under way runs alone: its end is fixed. */
typedef struct plc_flow_calm {
  plc_flow_q horizon;   /* in: a time > t0 */
  int to_end;           /* in: 1 to run to the end all the same (no stop) */
  int stopped;          /* out: 1 when it stopped at t before every op ended */
  plc_flow_q t;         /* out: when it stopped (or the last event's time) */
  unsigned char *state; /* in: n entries; out: per op 0 not started, 1 under
                           way at t, 2 ended (its end in f->qend) */
  plc_flow_q *rest;     /* in: 2n entries; out: per op under way, what is left
                           at t of its fixed part (2i) and of its work (2i+1),
                           in seconds at full speed */
} plc_flow_calm;
/* Returns 0, or -2 when a step did not fit machine integers (f is freed
 * then).  ops must give their costs on machine integers (q). */
int plc_flow_run_calm(plc_flow *f, const plc_flow_op *ops, int n, int nstreams, int nlinks,
                      mpq_srcptr t0, plc_flow_calm *calm);

/* Tests (PLC_SIM_NO_FAST): every run on GMP rationals. */
extern int plc_flow_no_fast;

#endif
