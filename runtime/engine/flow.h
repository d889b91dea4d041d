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
 * Everything is exact (GMP rationals); no floating point. */
#ifndef PLC_FLOW_H
#define PLC_FLOW_H

#include <gmp.h>

typedef struct plc_flow_op {
  int stream;           /* 0 .. nstreams-1 */
  int link;             /* physical link 0 .. nlinks-1, or -1: not a transfer */
  mpq_srcptr fixed;     /* seconds at full speed; NULL means 0 */
  mpq_srcptr work;      /* seconds of the whole link; NULL means 0 */
  const int *deps;      /* ops that must end before it starts */
  int ndeps;
} plc_flow_op;

typedef struct plc_flow {
  int n;
  mpq_t *start, *end;   /* per op (start NULL from plc_flow_run_ends) */
  int *cause;           /* the op whose end let it start (its stream
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

#endif
