/* step.c - the whole step as one simulation (see step.h).
 *
 * Building the graph takes two passes over the stages' blocks in schedule
 * order: the first gives every op of every block instance its place in the
 * flow (so a block may wait for one on a stage built later), the second
 * writes the dependencies.  Then flow.c runs it and each stage's compute
 * stream is accounted. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "step.h"
#include "schedule.h"
#include "xalloc.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The op lists a block runs: a stage's forward, its whole backward, or
 * the backward split into B and W. */
enum { V_F, V_B, V_BS, V_W, V_STEP, V_N };

typedef struct plc_step_build {
  const plc_ir_run *run;
  const plc_sched *sched;
  plc_step *st;
  int p, mu, split;
  /* per stage and variant: which ops of the list belong to it */
  unsigned char **in;          /* [s * V_N + v][i] */
  /* block instances: map[(s * 4 + phase) * mu + mb][i] = global op, or -1 */
  int **map;
  int *step_map_base;          /* per stage: global index of its first step op */
  int **last;                  /* per stage, per stream: last global op so far */
  int *tier;                   /* per dimension: index of its tier */
  int ntiers;
  int *seen, *stack;           /* plc_step_resolve's visit stamps and stack */
  int stamp;
  size_t stack_cap;
  plc_flow_op *ops;
  mpq_t *fixed, *work;
  int *dep_pool;
  long ndep, capdep;
} plc_step_build;

static const plc_ir_list *plc_step_list(const plc_step_build *b, int s, int v)
{
  const plc_ir_stage *stage = &b->run->stages[s];
  return v == V_F ? &stage->fwd : v == V_STEP ? &stage->step : &stage->bwd;
}

/* ---- which ops a block runs ------------------------------------------------- */

/* Split mode: weight-gradient compute and the collectives (not p2p sends)
 * that wait directly for it form W; the rest of the backward is B. */
static void plc_step_split(plc_step_build *b, int s)
{
  const plc_ir_list *l = &b->run->stages[s].bwd;
  unsigned char *w = b->in[s * V_N + V_W], *bs = b->in[s * V_N + V_BS];
  for (int i = 0; i < l->n; i++) {
    const plc_ir_op *op = &l->ops[i];
    w[i] = op->kind == PLC_OPK_COMPUTE && op->wgrad;
    if (op->kind != PLC_OPK_COMPUTE && op->kind != PLC_OPK_P2P)
      for (int d = 0; d < op->ndeps && !w[i]; d++)
        w[i] = w[op->deps[d]];
    bs[i] = !w[i];
  }
}

static void plc_step_variants(plc_step_build *b)
{
  b->in = plc_xcalloc((size_t)b->p * V_N, sizeof *b->in);
  for (int s = 0; s < b->p; s++)
    for (int v = 0; v < V_N; v++) {
      const plc_ir_list *l = plc_step_list(b, s, v);
      b->in[s * V_N + v] = plc_xcalloc((size_t)l->n + 1, 1);
      if (v == V_F || v == V_B || v == V_STEP)
        memset(b->in[s * V_N + v], 1, (size_t)l->n);
    }
  for (int s = 0; s < b->p; s++)
    plc_step_split(b, s);
}

static int plc_step_variant(const plc_sched_block *blk)
{
  if (blk->phase == PLC_SCHED_F) return V_F;
  if (blk->phase == PLC_SCHED_W) return V_W;
  return blk->split ? V_BS : V_B;
}

/* Does op i of the list run in this instance?  `once` ops only in the
 * last microbatch. */
static int plc_step_runs(const plc_step_build *b, int s, int v, int mb, int i)
{
  const plc_ir_op *op = &plc_step_list(b, s, v)->ops[i];
  return b->in[s * V_N + v][i] && (!op->once || mb == b->mu - 1);
}

/* ---- pass 1: places ------------------------------------------------------------ */

static int **plc_step_inst(plc_step_build *b, int s, int phase, int mb)
{
  return &b->map[((size_t)s * 4 + (size_t)phase) * (size_t)b->mu + (size_t)mb];
}

static long plc_step_place_list(plc_step_build *b, int s, int v, int mb, int *map, long next)
{
  const plc_ir_list *l = plc_step_list(b, s, v);
  for (int i = 0; i < l->n; i++)
    map[i] = plc_step_runs(b, s, v, mb, i) ? (int)next++ : -1;
  return next;
}

/* Count the ops first, so that a plan too large is refused before the
 * maps are built. */
static long plc_step_count(const plc_step_build *b)
{
  long n = 0;
  for (int s = 0; s < b->p; s++) {
    for (int k = b->sched->start[s]; k < b->sched->start[s + 1]; k++) {
      const plc_sched_block *blk = &b->sched->blocks[k];
      int v = plc_step_variant(blk);
      n += plc_step_list(b, s, v)->n;
    }
    n += b->run->stages[s].step.n;
  }
  return n;
}

static long plc_step_places(plc_step_build *b)
{
  long next = 0;
  b->map = plc_xcalloc((size_t)b->p * 4 * (size_t)b->mu, sizeof *b->map);
  b->step_map_base = plc_xcalloc((size_t)b->p + 1, sizeof *b->step_map_base);
  for (int s = 0; s < b->p; s++) {
    for (int k = b->sched->start[s]; k < b->sched->start[s + 1]; k++) {
      const plc_sched_block *blk = &b->sched->blocks[k];
      int v = plc_step_variant(blk);
      int **m = plc_step_inst(b, s, blk->phase, blk->mb);
      *m = plc_xmalloc(((size_t)plc_step_list(b, s, v)->n + 1) * sizeof **m);
      next = plc_step_place_list(b, s, v, blk->mb, *m, next);
    }
    b->step_map_base[s] = (int)next;
    next += b->run->stages[s].step.n;
  }
  return next;
}

/* ---- pass 2: dependencies ---------------------------------------------------------- */

static void plc_step_dep(plc_step_build *b, int g)
{
  if (b->ndep == b->capdep) {
    b->capdep = b->capdep ? 2 * b->capdep : 1024;
    b->dep_pool = plc_xrealloc(b->dep_pool, (size_t)b->capdep * sizeof *b->dep_pool);
  }
  b->dep_pool[b->ndep++] = g;
}

/* The global op that list op j of stage s stands for in block instance
 * (phase, mb), or -1: itself when it runs there, a B op seen from W in
 * the B instance; else (a W op seen from B, a `once` op left out) -1, and
 * what it waits for stands in for it. */
static int plc_step_direct(const plc_step_build *b, int s, int phase, int v, int mb, int j)
{
  int *m = *plc_step_inst((plc_step_build *)b, s, phase, mb);
  if (m && m[j] >= 0)
    return m[j];
  if (v == V_W && b->in[s * V_N + V_BS][j]) { /* a W op waits for B's op */
    int *bm = *plc_step_inst((plc_step_build *)b, s, PLC_SCHED_B, mb);
    if (bm && bm[j] >= 0)
      return bm[j];
  }
  return -1;
}

/* Add the global ops list op j stands for as dependencies, walking through
 * the ops that do not run here with an explicit stack and a visit stamp, so
 * long chains cost neither the C stack nor repeated visits. */
static void plc_step_push(plc_step_build *b, size_t *n, int j)
{
  if (*n == b->stack_cap) {
    b->stack_cap *= 2;
    b->stack = plc_xrealloc(b->stack, b->stack_cap * sizeof *b->stack);
  }
  b->stack[(*n)++] = j;
}

static void plc_step_resolve(plc_step_build *b, int s, int phase, int v, int mb, int j)
{
  const plc_ir_list *l = plc_step_list(b, s, v);
  size_t n = 0;
  b->stamp++;
  plc_step_push(b, &n, j);
  while (n > 0) {
    int k = b->stack[--n];
    if (b->seen[k] == b->stamp)
      continue;
    b->seen[k] = b->stamp;
    int g = plc_step_direct(b, s, phase, v, mb, k);
    if (g >= 0) {
      plc_step_dep(b, g);
      continue;
    }
    for (int d = 0; d < l->ops[k].ndeps; d++)
      if (b->seen[l->ops[k].deps[d]] != b->stamp)
        plc_step_push(b, &n, l->ops[k].deps[d]);
  }
}

/* What waiting for block (phase, mb) of stage s means: its p2p sends when
 * the waiter is on another stage and it has some, else its sinks (ops of
 * the instance no other op of it waits for). */
static void plc_step_wait_block(plc_step_build *b, int s, int phase, int mb, int remote)
{
  int v = phase == PLC_SCHED_F ? V_F : phase == PLC_SCHED_W ? V_W
          : b->split ? V_BS : V_B;
  const plc_ir_list *l = plc_step_list(b, s, v);
  int *m = *plc_step_inst(b, s, phase, mb);
  if (!m)
    return;
  int sends = 0;
  if (remote)
    for (int i = 0; i < l->n; i++)
      if (m[i] >= 0 && l->ops[i].kind == PLC_OPK_P2P) {
        plc_step_dep(b, m[i]);
        sends++;
      }
  if (sends)
    return;
  unsigned char *used = plc_xcalloc((size_t)l->n + 1, 1);
  for (int i = 0; i < l->n; i++)
    if (m[i] >= 0)
      for (int d = 0; d < l->ops[i].ndeps; d++)
        used[l->ops[i].deps[d]] = 1;
  for (int i = 0; i < l->n; i++)
    if (m[i] >= 0 && !used[i])
      plc_step_dep(b, m[i]);
  free(used);
}

static int plc_step_link(const plc_step_build *b, int s, const plc_ir_op *op)
{
  return op->kind == PLC_OPK_COMPUTE ? -1 : s * b->ntiers + b->tier[op->dim];
}

/* Latency is the part of a collective's time its link does not share. */
static void plc_step_costs(plc_step_build *b, int g, int s, const plc_ir_op *op, int share)
{
  const plc_ir_place *pl = &b->run->place[op->dim];
  long k = op->kind == PLC_OPK_ALL_REDUCE ? 2L * (op->group - 1)
           : op->kind == PLC_OPK_P2P ? 1 : (long)op->group - 1;
  mpq_set(b->fixed[g], op->time);
  mpq_set_ui(b->work[g], 0, 1);
  b->ops[g].link = -1;
  if (op->kind == PLC_OPK_COMPUTE || !share)
    return;
  if (pl->latency) {
    mpq_set_si(b->fixed[g], k, 1);
    mpq_mul(b->fixed[g], b->fixed[g], pl->latency);
    if (mpq_cmp(b->fixed[g], op->time) > 0)
      mpq_set(b->fixed[g], op->time);
  } else {
    mpq_set_ui(b->fixed[g], 0, 1);
  }
  mpq_sub(b->work[g], op->time, b->fixed[g]);
  b->ops[g].link = plc_step_link(b, s, op);
}

/* Write op i of list v, instance (phase, mb) of stage s, as flow op g. */
static void plc_step_write(plc_step_build *b, int s, int phase, int v, int mb, int i, int g,
                           const int *waits, int nwaits, int share)
{
  const plc_ir_run *run = b->run;
  const plc_ir_op *op = &plc_step_list(b, s, v)->ops[i];
  long first = b->ndep;
  for (int d = 0; d < op->ndeps; d++)
    plc_step_resolve(b, s, phase, v, mb, op->deps[d]);
  if (op->ndeps == 0) /* an entry op of the block waits for the blocks it needs */
    for (int k = 0; k < nwaits; k++)
      plc_step_dep(b, waits[k]);
  b->ops[g] = (plc_flow_op){.stream = s * run->nstreams + op->stream,
                            .fixed = b->fixed[g], .work = b->work[g],
                            .ndeps = (int)(b->ndep - first)};
  b->ops[g].deps = (const int *)(intptr_t)first; /* an offset until the pool stops growing */
  plc_step_costs(b, g, s, op, share);
  b->st->src[g] = op;
  b->st->stage_of[g] = s;
  b->st->mb_of[g] = mb;
}

static void plc_step_write_stage(plc_step_build *b, int s, int share)
{
  const plc_ir_run *run = b->run;
  int *last = b->last[s];
  for (int k = b->sched->start[s]; k < b->sched->start[s + 1]; k++) {
    const plc_sched_block *blk = &b->sched->blocks[k];
    int v = plc_step_variant(blk);
    int *m = *plc_step_inst(b, s, blk->phase, blk->mb);
    plc_sched_dep sd[4];
    int nsd = plc_sched_deps(b->sched, blk, sd);
    /* What the block waits for, worked out once: collected at the end of
     * the pool, copied out, and the pool cut back. */
    long w0 = b->ndep;
    for (int q = 0; q < nsd; q++)
      plc_step_wait_block(b, sd[q].stage, sd[q].phase, sd[q].mb, sd[q].stage != s);
    int nwaits = (int)(b->ndep - w0);
    int *waits = plc_xmalloc(((size_t)nwaits + 1) * sizeof *waits);
    for (int q = 0; q < nwaits; q++) waits[q] = b->dep_pool[w0 + q];
    b->ndep = w0;
    const plc_ir_list *l = plc_step_list(b, s, v);
    for (int i = 0; i < l->n; i++)
      if (m[i] >= 0) {
        plc_step_write(b, s, blk->phase, v, blk->mb, i, m[i], waits, nwaits, share);
        last[l->ops[i].stream] = m[i];
      }
    free(waits);
  }
  /* The step list starts when everything else of the stage has ended. */
  const plc_ir_list *l = &run->stages[s].step;
  for (int i = 0; i < l->n; i++) {
    int g = b->step_map_base[s] + i;
    long first = b->ndep;
    for (int d = 0; d < l->ops[i].ndeps; d++)
      plc_step_dep(b, b->step_map_base[s] + l->ops[i].deps[d]);
    if (l->ops[i].ndeps == 0)
      for (int t = 0; t < run->nstreams; t++)
        if (last[t] >= 0) plc_step_dep(b, last[t]);
    b->ops[g] = (plc_flow_op){.stream = s * run->nstreams + l->ops[i].stream,
                              .fixed = b->fixed[g], .work = b->work[g],
                              .ndeps = (int)(b->ndep - first)};
    b->ops[g].deps = (const int *)(intptr_t)first;
    plc_step_costs(b, g, s, &l->ops[i], share);
    b->st->src[g] = &l->ops[i];
    b->st->stage_of[g] = s;
    b->st->mb_of[g] = -1;
  }
}

/* Tiers by name: transfers of a stage on one tier share one link. */
static void plc_step_tiers(plc_step_build *b)
{
  const char *names[PLC_PD_COUNT];
  b->tier = plc_xcalloc(PLC_PD_COUNT, sizeof *b->tier);
  b->ntiers = 0;
  for (int d = 0; d < PLC_PD_COUNT; d++) {
    const char *t = b->run->place[d].tier ? b->run->place[d].tier : "";
    int k = 0;
    while (k < b->ntiers && strcmp(names[k], t)) k++;
    if (k == b->ntiers) names[b->ntiers++] = t;
    b->tier[d] = k;
  }
}

/* ---- accounting ------------------------------------------------------------------ */

static void plc_step_stage_init(plc_step_stage *ss)
{
  mpq_inits(ss->compute, ss->stall_other, ss->wait_stage, ss->fill, ss->drain, ss->end, NULL);
  for (int d = 0; d < PLC_PD_COUNT; d++) mpq_init(ss->exposed[d]);
}

static void plc_step_stage_clear(plc_step_stage *ss)
{
  mpq_clears(ss->compute, ss->stall_other, ss->wait_stage, ss->fill, ss->drain, ss->end, NULL);
  for (int d = 0; d < PLC_PD_COUNT; d++) mpq_clear(ss->exposed[d]);
}

/* Charge the gap [a, b) before op i of stage s along the chain of ops that
 * held it up (flow.cause): each op of the stage gets the part during which
 * it ran; the rest, from where the chain leaves the stage, is waiting for
 * another stage. */
static void plc_step_charge(plc_step *st, int s, int i, mpq_srcptr a, mpq_srcptr b)
{
  plc_step_stage *ss = &st->stages[s];
  mpq_t hi, lo, len;
  mpq_inits(hi, lo, len, NULL);
  mpq_set(hi, b);
  int x = st->flow.cause[i];
  while (mpq_cmp(hi, a) > 0) {
    if (x < 0 || st->stage_of[x] != s) {
      mpq_sub(len, hi, a);
      mpq_add(ss->wait_stage, ss->wait_stage, len);
      break;
    }
    mpq_set(lo, mpq_cmp(st->flow.start[x], a) > 0 ? st->flow.start[x] : a);
    mpq_sub(len, hi, lo);
    if (st->src[x]->kind == PLC_OPK_COMPUTE)
      mpq_add(ss->stall_other, ss->stall_other, len);
    else
      mpq_add(ss->exposed[st->src[x]->dim], ss->exposed[st->src[x]->dim], len);
    mpq_set(hi, lo);
    x = st->flow.cause[x];
  }
  mpq_clears(hi, lo, len, NULL);
}

/* Walk every stage's compute stream in order (flow index order is stream
 * order): fill before its first op, compute and on-stream collectives,
 * each gap charged along its chain, drain after its last op. */
static void plc_step_account(plc_step *st)
{
  int p = st->nstages, *seen = plc_xcalloc((size_t)p + 1, sizeof *seen);
  mpq_t *prev = plc_xcalloc((size_t)p + 1, sizeof *prev), d;
  mpq_init(d);
  for (int s = 0; s < p; s++) mpq_init(prev[s]);
  for (int g = 0; g < st->nops; g++) {
    int s = st->stage_of[g];
    plc_step_stage *ss = &st->stages[s];
    if (mpq_cmp(st->flow.end[g], ss->end) > 0) mpq_set(ss->end, st->flow.end[g]);
    if (st->src[g]->stream != 0) continue;
    if (!seen[s]) mpq_set(ss->fill, st->flow.start[g]);
    else if (mpq_cmp(st->flow.start[g], prev[s]) > 0)
      plc_step_charge(st, s, g, prev[s], st->flow.start[g]);
    seen[s] = 1;
    mpq_sub(d, st->flow.end[g], st->flow.start[g]);
    mpq_ptr into = st->src[g]->kind == PLC_OPK_COMPUTE ? ss->compute
                                                       : ss->exposed[st->src[g]->dim];
    mpq_add(into, into, d);
    mpq_set(prev[s], st->flow.end[g]);
  }
  for (int s = 0; s < p; s++) {
    plc_step_stage *ss = &st->stages[s];
    if (!seen[s]) mpq_set(ss->fill, st->makespan);
    mpq_sub(ss->drain, st->makespan, seen[s] ? prev[s] : st->makespan);
    if (s == 0 || mpq_cmp(ss->compute, st->stages[st->critical].compute) > 0) st->critical = s;
    mpq_clear(prev[s]);
  }
  free(prev), free(seen);
  mpq_clear(d);
}

/* ---- the run ---------------------------------------------------------------------- */

static void plc_step_build_free(plc_step_build *b, long n)
{
  if (b->in)
    for (int i = 0; i < b->p * V_N; i++) free(b->in[i]);
  if (b->map)
    for (long i = 0; i < (long)b->p * 4 * b->mu; i++) free(b->map[i]);
  if (b->last)
    for (int s = 0; s < b->p; s++) free(b->last[s]);
  for (long g = 0; g < n && b->fixed; g++) mpq_clears(b->fixed[g], b->work[g], NULL);
  free(b->in), free(b->map), free(b->last), free(b->step_map_base), free(b->tier);
  free(b->ops), free(b->fixed), free(b->work), free(b->dep_pool), free(b->seen), free(b->stack);
}

static int plc_step_schedule(const plc_ir_run *run, plc_sched *sched, char *msg, size_t len)
{
  const plc_sched_info *info = plc_sched_find(run->schedule);
  if (!info) {
    snprintf(msg, len, "schedule '%s' has no generator", run->schedule);
    return 0;
  }
  if (info->place != PLC_SCHED_PLACE_STAGE || run->vpp > 1) {
    snprintf(msg, len, "the whole-step simulation of schedule '%s' needs per-chunk lists, "
             "which this version does not lower yet", run->schedule);
    return 0;
  }
  if (run->mu > 1000000) {
    snprintf(msg, len, "%ld microbatches are more than the whole-step simulation takes", run->mu);
    return 0;
  }
  plc_sched_params par = {.p = run->nstages, .v = 1, .mu = (int)run->mu};
  const char *why = plc_sched_generate((plc_sched_kind)(info - plc_sched_table), &par, sched);
  if (why) {
    snprintf(msg, len, "schedule '%s': %s", run->schedule, why);
    return 0;
  }
  return 1;
}

static void plc_step_alloc(plc_step *st, plc_step_build *b, int n)
{
  st->nops = n;
  st->src = plc_xcalloc((size_t)n + 1, sizeof *st->src);
  st->stage_of = plc_xcalloc((size_t)n + 1, sizeof *st->stage_of);
  st->mb_of = plc_xcalloc((size_t)n + 1, sizeof *st->mb_of);
  b->ops = plc_xcalloc((size_t)n + 1, sizeof *b->ops);
  b->fixed = plc_xcalloc((size_t)n + 1, sizeof *b->fixed);
  b->work = plc_xcalloc((size_t)n + 1, sizeof *b->work);
  for (int g = 0; g < n; g++) mpq_inits(b->fixed[g], b->work[g], NULL);
  size_t maxn = 1;
  for (int s = 0; s < b->p; s++)
    for (int v = 0; v < V_N; v++)
      if ((size_t)plc_step_list(b, s, v)->n > maxn) maxn = (size_t)plc_step_list(b, s, v)->n;
  b->seen = plc_xcalloc(maxn + 1, sizeof *b->seen);
  b->stack_cap = maxn + 1;
  b->stack = plc_xmalloc(b->stack_cap * sizeof *b->stack);
  b->last = plc_xcalloc((size_t)b->p + 1, sizeof *b->last);
  for (int s = 0; s < b->p; s++) {
    b->last[s] = plc_xmalloc(((size_t)b->run->nstreams + 1) * sizeof **b->last);
    for (int t = 0; t < b->run->nstreams; t++) b->last[s][t] = -1;
  }
}

int plc_step_run(plc_step *st, const plc_ir_run *run, const plc_step_opts *opts, char *msg,
                 size_t msglen)
{
  memset(st, 0, sizeof *st);
  mpq_init(st->makespan);
  plc_sched sched;
  if (!plc_step_schedule(run, &sched, msg, msglen))
    return 0;
  plc_step_build b = {.run = run, .sched = &sched, .st = st, .p = run->nstages,
                      .mu = (int)run->mu};
  for (int k = 0; k < sched.nblocks; k++) b.split |= sched.blocks[k].split;
  plc_step_variants(&b);
  long n = plc_step_count(&b);
  if (n > PLC_STEP_MAX_OPS) {
    snprintf(msg, msglen, "the whole step has %ld ops, more than the %ld the simulation "
             "takes", n, PLC_STEP_MAX_OPS);
    plc_step_build_free(&b, 0);
    plc_sched_free(&sched);
    return 0;
  }
  n = plc_step_places(&b);
  plc_step_alloc(st, &b, (int)n);
  plc_step_tiers(&b);
  for (int s = 0; s < b.p; s++) plc_step_write_stage(&b, s, opts->share);
  for (long g = 0; g < n; g++) b.ops[g].deps = b.dep_pool + (intptr_t)b.ops[g].deps;
  int stuck = -1;
  int ok = plc_flow_run(&st->flow, b.ops, (int)n, run->nstages * run->nstreams,
                        run->nstages * b.ntiers, opts->share, NULL, &stuck) == 0;
  (void)stuck;
  st->nstages = run->nstages;
  mpq_set(st->makespan, st->flow.makespan);
  st->stages = plc_xcalloc((size_t)st->nstages, sizeof *st->stages);
  for (int s = 0; s < st->nstages; s++) plc_step_stage_init(&st->stages[s]);
  plc_step_account(st);
  plc_step_build_free(&b, n);
  plc_sched_free(&sched);
  if (!ok)
    snprintf(msg, msglen, "the whole step deadlocks: the schedule's order and the lists' "
             "dependencies wait for each other");
  return ok;
}

void plc_step_free(plc_step *st)
{
  for (int s = 0; s < st->nstages; s++) plc_step_stage_clear(&st->stages[s]);
  free(st->stages);
  if (st->src) plc_flow_free(&st->flow);
  free(st->src), free(st->stage_of), free(st->mb_of);
  mpq_clear(st->makespan);
}
