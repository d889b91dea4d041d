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
#include "fbpair.h"
#include "runsched.h"
#include "schedule.h"
#include "sim.h"
#include "xalloc.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The op lists a block runs: a stage's forward, its whole backward, or
 * the backward split into B and W. */
enum { V_F, V_B, V_BS, V_W, V_STEP, V_N };

/* Block phases as instances are kept: F, B, W (an FB is an F and a B). */
enum { I_F, I_B, I_W, I_N };

/* One block instance: the ops of list variant v of lowered stage ls (the
 * model part it runs) with chunk tag `tag` (-1: every chunk), for
 * microbatch mb, on device stage s as its k-th local chunk. */
typedef struct plc_step_inst {
  int s, phase, k, mb;
  int ls, tag, v, lastmb;
  int *map;                    /* list op -> global op, or -1 */
} plc_step_inst;

typedef struct plc_step_build {
  const plc_ir_run *run;
  const plc_sched *sched;
  plc_step *st;
  int p, mu, split, vloc;
  /* per lowered stage and variant: which ops of the list belong to it */
  unsigned char **in;          /* [ls * V_N + v][i] */
  /* per lowered stage, list (0 fwd, 1 bwd) and chunk: the list's last
   * layer op on the compute stream in that chunk, or -1 */
  int **lastc;
  /* block instances, by (s, phase, k, mb): see plc_step_inst_at */
  int **map;
  int nparts;                  /* step lists per device: 1, or 2 for dualpipe */
  int *step_map_base;          /* per device and part: global index of its first step op */
  int **last;                  /* per stage, per stream: last global op so far */
  plc_sim_net net;             /* per dimension, its link (port) on a stage */
  int side_compute;             /* some compute op off the compute stream takes time */
  int *seen, *stack;           /* plc_step_resolve's visit stamps and stack */
  int stamp;
  size_t stack_cap;
  int *seg[2];                 /* plc_step_place_fb's segments */
  plc_flow_op *ops;
  mpq_t *fixed, *work;
  int *dep_pool;
  long ndep, capdep;
} plc_step_build;

static const plc_ir_list *plc_step_list(const plc_step_build *b, int ls, int v)
{
  const plc_ir_stage *stage = &b->run->stages[ls];
  return v == V_F ? &stage->fwd : v == V_STEP ? &stage->step : &stage->bwd;
}

/* ---- placement: which lists a device's chunk runs ---------------------------- */

/* The local index (0 .. vloc-1) of global chunk g on its stage. */
static int plc_step_local(const plc_step_build *b, int g)
{
  switch (b->sched->place) {
  case PLC_SCHED_PLACE_ROUND: return g / b->p;
  case PLC_SCHED_PLACE_STAGE: return 0;
  default: return g < b->p ? 0 : 1;
  }
}

/* Device s's k-th chunk runs lowered stage *ls's ops of chunk *tag (-1:
 * all of them): round-robin chunk k of stage s, and chunk k of dualpipev's
 * V (the lowering places model chunks s and 2p-1-s there), is the stage's
 * own virtual chunk k; a DualPipe chunk is a whole model part (chunk p + j
 * of the second direction, on stage p-1-j, is part j: lowered stage j). */
static void plc_step_part(const plc_step_build *b, int s, int k, int *ls, int *tag)
{
  *ls = s;
  *tag = -1;
  if (b->sched->place == PLC_SCHED_PLACE_ROUND || b->sched->place == PLC_SCHED_PLACE_V)
    *tag = k;
  else if (b->sched->place == PLC_SCHED_PLACE_BIDIR && k == 1)
    *ls = b->p - 1 - s;
}

/* The microbatch whose backward runs a chunk's `once` ops: the last one
 * through it (DualPipe's directions each have half). */
static int plc_step_lastmb(const plc_step_build *b, int g)
{
  if (b->sched->place == PLC_SCHED_PLACE_BIDIR && g < b->p)
    return b->mu / 2 - 1;
  return b->mu - 1;
}

static int **plc_step_inst_at(const plc_step_build *b, int s, int phase, int k, int mb)
{
  size_t key = (((size_t)s * I_N + (size_t)phase) * (size_t)b->vloc + (size_t)k) * (size_t)b->mu;
  return &b->map[key + (size_t)mb];
}

static int plc_step_phase_variant(const plc_step_build *b, int phase, int split)
{
  (void)b;
  return phase == I_F ? V_F : phase == I_W ? V_W : split ? V_BS : V_B;
}

/* The instance of part (phase, mb, chunk g) of a block on stage s. */
static plc_step_inst plc_step_inst_of(const plc_step_build *b, int s, int phase, int mb, int g,
                                      int split)
{
  plc_step_inst in = {.s = s, .phase = phase, .k = plc_step_local(b, g), .mb = mb,
                      .v = plc_step_phase_variant(b, phase, split),
                      .lastmb = plc_step_lastmb(b, g)};
  plc_step_part(b, s, in.k, &in.ls, &in.tag);
  in.map = *plc_step_inst_at(b, s, phase, in.k, mb);
  return in;
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

/* Per chunk, the list's last layer op on the compute stream: what a
 * pipeline op of that chunk that names no dependency waits for. */
static int *plc_step_lastc(const plc_step_build *b, const plc_ir_list *l)
{
  int v = b->run->vpp, *out = plc_xmalloc(((size_t)v + 1) * sizeof *out);
  for (int c = 0; c < v; c++) out[c] = -1;
  for (int i = 0; i < l->n; i++)
    if (l->ops[i].stream == 0 && l->ops[i].layer >= 0 && l->ops[i].chunk < v)
      out[l->ops[i].chunk] = i;
  return out;
}

static void plc_step_variants(plc_step_build *b)
{
  b->in = plc_xcalloc((size_t)b->p * V_N, sizeof *b->in);
  b->lastc = plc_xcalloc((size_t)b->p * 2, sizeof *b->lastc);
  for (int s = 0; s < b->p; s++) {
    for (int v = 0; v < V_N; v++) {
      const plc_ir_list *l = plc_step_list(b, s, v);
      b->in[s * V_N + v] = plc_xcalloc((size_t)l->n + 1, 1);
      if (v == V_F || v == V_B || v == V_STEP)
        memset(b->in[s * V_N + v], 1, (size_t)l->n);
    }
    plc_step_split(b, s);
    b->lastc[2 * s] = plc_step_lastc(b, &b->run->stages[s].fwd);
    b->lastc[2 * s + 1] = plc_step_lastc(b, &b->run->stages[s].bwd);
  }
}

/* Does op i of the instance's list run in it?  Its variant's ops of its
 * chunk; `once` ops only in the chunk's last microbatch. */
static int plc_step_runs(const plc_step_build *b, const plc_step_inst *in, int i)
{
  const plc_ir_op *op = &plc_step_list(b, in->ls, in->v)->ops[i];
  return b->in[in->ls * V_N + in->v][i] && (in->tag < 0 || op->chunk == in->tag) &&
         (!op->once || in->mb == in->lastmb);
}

/* ---- pass 1: places ------------------------------------------------------------ */

static long plc_step_place_list(plc_step_build *b, const plc_step_inst *in, long next)
{
  const plc_ir_list *l = plc_step_list(b, in->ls, in->v);
  for (int i = 0; i < l->n; i++)
    in->map[i] = plc_step_runs(b, in, i) ? (int)next++ : -1;
  return next;
}

/* The F&B interleaving rule (fbpair.h) over the ops this instance runs:
 * each op's segment into seg; returns where the part's pipeline ops
 * start. */
static int plc_step_segments(const plc_step_build *b, const plc_step_inst *in, int *seg)
{
  return plc_fb_segments(plc_step_list(b, in->ls, in->v), in->map, seg);
}

static long plc_step_number(const plc_step_inst *in, int from, int to, long next)
{
  for (int i = from; i < to; i++)
    if (in->map[i] >= 0)
      in->map[i] = (int)next++;
  return next;
}

static long plc_step_place_fb(plc_step_build *b, const plc_step_inst *f, const plc_step_inst *bw,
                              long next)
{
  const plc_step_inst *part[2] = {bw, f};
  int n[2], tail[2], at[2] = {0, 0};
  for (int q = 0; q < 2; q++) {
    /* mark which ops run, then number them in the merged order */
    n[q] = plc_step_list(b, part[q]->ls, part[q]->v)->n;
    plc_step_place_list(b, part[q], 0);
    tail[q] = plc_step_segments(b, part[q], b->seg[q]);
  }
  for (int cur = 0; at[0] < tail[0] || at[1] < tail[1]; cur++)
    for (int q = 0; q < 2; q++) {
      int from = at[q];
      while (at[q] < tail[q] && b->seg[q][at[q]] <= cur)
        at[q]++;
      next = plc_step_number(part[q], from, at[q], next);
    }
  next = plc_step_number(f, tail[1], n[1], next);
  return plc_step_number(bw, tail[0], n[0], next);
}

static int *plc_step_new_map(plc_step_build *b, const plc_step_inst *in)
{
  int **m = plc_step_inst_at(b, in->s, in->phase, in->k, in->mb);
  *m = plc_xmalloc(((size_t)plc_step_list(b, in->ls, in->v)->n + 1) * sizeof **m);
  return *m;
}

static int plc_step_sched_phase(int phase)
{
  return phase == PLC_SCHED_F ? I_F : phase == PLC_SCHED_W ? I_W : I_B;
}

/* Ops of list variant v of lowered stage ls in chunk tag (-1: all), an
 * upper bound (`once` ops counted in every microbatch). */
static long plc_step_nops(const plc_step_build *b, int ls, int v, int tag)
{
  const plc_ir_list *l = plc_step_list(b, ls, v);
  const unsigned char *in = b->in[ls * V_N + v];
  long n = 0;
  for (int i = 0; i < l->n; i++)
    n += in[i] && (tag < 0 || l->ops[i].chunk == tag);
  return n;
}

/* Count the ops first (an upper bound), so that a plan too large is
 * refused before the maps are built; each (lowered stage, variant, chunk)
 * is counted once. */
static long plc_step_count(const plc_step_build *b)
{
  long n = 0, nv = (long)b->run->vpp + 1;
  long *memo = plc_xmalloc((size_t)(b->p * V_N * nv) * sizeof *memo);
  for (long i = 0; i < b->p * V_N * nv; i++) memo[i] = -1;
  for (int s = 0; s < b->p; s++) {
    for (int k = b->sched->start[s]; k < b->sched->start[s + 1]; k++) {
      const plc_sched_block *blk = &b->sched->blocks[k];
      for (int q = 0; q < (blk->phase == PLC_SCHED_FB ? 2 : 1); q++) {
        int ls, tag, ph = q == 1 ? I_B : blk->phase == PLC_SCHED_FB ? I_F
                                       : plc_step_sched_phase(blk->phase);
        plc_step_part(b, s, plc_step_local(b, q ? blk->chunk2 : blk->chunk), &ls, &tag);
        int v = plc_step_phase_variant(b, ph, blk->split && ph == I_B);
        long *m = &memo[((long)ls * V_N + v) * nv + tag + 1];
        if (*m < 0) *m = plc_step_nops(b, ls, v, tag);
        n += *m;
      }
    }
    for (int j = 0; j < b->nparts; j++) {
      int ls, tag;
      plc_step_part(b, s, j, &ls, &tag);
      n += b->run->stages[ls].step.n;
    }
  }
  free(memo);
  return n;
}

static long plc_step_places(plc_step_build *b)
{
  long next = 0;
  b->map = plc_xcalloc((size_t)b->p * I_N * (size_t)b->vloc * (size_t)b->mu, sizeof *b->map);
  b->step_map_base = plc_xcalloc((size_t)b->p * 2 + 1, sizeof *b->step_map_base);
  for (int s = 0; s < b->p; s++) {
    for (int k = b->sched->start[s]; k < b->sched->start[s + 1]; k++) {
      const plc_sched_block *blk = &b->sched->blocks[k];
      if (blk->phase == PLC_SCHED_FB) {
        plc_step_inst f = plc_step_inst_of(b, s, I_F, blk->mb, blk->chunk, 0);
        plc_step_inst bw = plc_step_inst_of(b, s, I_B, blk->mb2, blk->chunk2, blk->split);
        f.map = plc_step_new_map(b, &f);
        bw.map = plc_step_new_map(b, &bw);
        next = plc_step_place_fb(b, &f, &bw, next);
        continue;
      }
      plc_step_inst in = plc_step_inst_of(b, s, plc_step_sched_phase(blk->phase), blk->mb,
                                          blk->chunk, blk->split);
      in.map = plc_step_new_map(b, &in);
      next = plc_step_place_list(b, &in, next);
    }
    for (int j = 0; j < b->nparts; j++) {
      int ls, tag;
      plc_step_part(b, s, j, &ls, &tag);
      b->step_map_base[s * 2 + j] = (int)next;
      next += b->run->stages[ls].step.n;
    }
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

/* The global op that list op j stands for, seen from instance in, or -1:
 * op j in the instance of its own chunk (a layer op of the chunk before,
 * named by `prev.`, runs in that chunk's block of the same microbatch),
 * and a B op seen from W in the B instance; else (a W op seen from B, a
 * `once` op left out) -1, and what it waits for stands in for it. */
static int plc_step_direct(const plc_step_build *b, const plc_step_inst *in, int j)
{
  const plc_ir_op *op = &plc_step_list(b, in->ls, in->v)->ops[j];
  int phase = in->phase, k = in->tag >= 0 ? op->chunk : in->k;
  if (in->v == V_W && b->in[in->ls * V_N + V_BS][j]) /* a W op waits for B's op */
    phase = I_B;
  if (k >= b->vloc)
    return -1;
  int *m = phase == in->phase && k == in->k ? in->map
                                            : *plc_step_inst_at(b, in->s, phase, k, in->mb);
  return m && m[j] >= 0 ? m[j] : -1;
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

static void plc_step_resolve(plc_step_build *b, const plc_step_inst *in, int j)
{
  const plc_ir_list *l = plc_step_list(b, in->ls, in->v);
  size_t n = 0;
  b->stamp++;
  plc_step_push(b, &n, j);
  while (n > 0) {
    int k = b->stack[--n];
    if (b->seen[k] == b->stamp)
      continue;
    b->seen[k] = b->stamp;
    int g = plc_step_direct(b, in, k);
    if (g >= 0) {
      plc_step_dep(b, g);
      continue;
    }
    for (int d = 0; d < l->ops[k].ndeps; d++)
      if (b->seen[l->ops[k].deps[d]] != b->stamp)
        plc_step_push(b, &n, l->ops[k].deps[d]);
  }
}

/* What waiting for part (phase, mb, chunk g) of stage s means: its p2p
 * sends over pp when the waiter is on another stage and it has some, else
 * its sinks (ops of the instance no other op of it waits for). */
static void plc_step_wait_block(plc_step_build *b, int s, int phase, int mb, int g, int remote)
{
  plc_step_inst in = plc_step_inst_of(b, s, phase == PLC_SCHED_F ? I_F : I_B, mb, g, b->split);
  if (!in.map)
    return;
  const plc_ir_list *l = plc_step_list(b, in.ls, in.v);
  int *m = in.map, sends = 0;
  if (remote)
    for (int i = 0; i < l->n; i++)
      if (m[i] >= 0 && l->ops[i].kind == PLC_OPK_P2P && l->ops[i].dim == PLC_PD_PP) {
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
  /* of the sinks on one stream only the last: stream order implies the
   * rest (a block's entry ops would otherwise each wait for hundreds) */
  int *lastsink = plc_xmalloc(((size_t)b->run->nstreams + 1) * sizeof *lastsink);
  for (int t = 0; t < b->run->nstreams; t++)
    lastsink[t] = -1;
  for (int i = 0; i < l->n; i++)
    if (m[i] >= 0 && !used[i])
      lastsink[l->ops[i].stream] = m[i];
  for (int t = 0; t < b->run->nstreams; t++)
    if (lastsink[t] >= 0)
      plc_step_dep(b, lastsink[t]);
  free(lastsink);
  free(used);
}

/* The physical links: per stage, its cluster tiers (the network), then
 * after all of them one per stage for the device's compute. */
static int plc_step_link(const plc_step_build *b, int s, const plc_ir_op *op)
{
  int n = b->net.nlinks;
  return op->kind == PLC_OPK_COMPUTE ? b->p * n + s : s * n + b->net.link[op->dim];
}

/* A compute op is work on its device's compute, which compute ops of every
 * stream share (kernels running at once share the SMs), whatever `share`
 * says of the network; when all compute is on the compute stream it never
 * runs concurrently, so it keeps a fixed time (no link events).  A
 * collective's latency is the part of its time its link does not share;
 * with share off it has the link to itself. */
static void plc_step_costs(plc_step_build *b, int g, int s, const plc_ir_op *op, int share)
{
  mpq_set(b->fixed[g], op->time);
  mpq_set_ui(b->work[g], 0, 1);
  b->ops[g].link = -1;
  if (op->kind == PLC_OPK_COMPUTE) {
    if (b->side_compute && mpq_sgn(op->time) > 0) {
      mpq_set_ui(b->fixed[g], 0, 1);
      mpq_set(b->work[g], op->time);
      b->ops[g].link = plc_step_link(b, s, op);
    }
    return;
  }
  if (!share)
    return;
  plc_sim_cost_split(&b->net, op, b->fixed[g], b->work[g]);
  b->ops[g].link = plc_step_link(b, s, op);
}

/* Write op i of instance in as flow op g.  A pipeline op that waits for
 * what the layers produced waits, in a chunk's block, for its chunk's. */
static void plc_step_write(plc_step_build *b, const plc_step_inst *in, int i, int g,
                           const int *waits, int nwaits, int share)
{
  const plc_ir_run *run = b->run;
  const plc_ir_op *op = &plc_step_list(b, in->ls, in->v)->ops[i];
  long first = b->ndep;
  int ndeps = op->ndeps;
  if (op->after_layers && in->tag >= 0) {
    int j = b->lastc[2 * in->ls + (in->v != V_F)][in->tag];
    ndeps = j >= 0;
    if (j >= 0)
      plc_step_resolve(b, in, j);
  } else {
    for (int d = 0; d < op->ndeps; d++)
      plc_step_resolve(b, in, op->deps[d]);
  }
  if (ndeps == 0) /* an entry op of the block waits for the blocks it needs */
    for (int k = 0; k < nwaits; k++)
      plc_step_dep(b, waits[k]);
  b->ops[g] = (plc_flow_op){.stream = in->s * run->nstreams + op->stream,
                            .fixed = b->fixed[g], .work = b->work[g],
                            .ndeps = (int)(b->ndep - first)};
  b->ops[g].deps = (const int *)(intptr_t)first; /* an offset until the pool stops growing */
  plc_step_costs(b, g, in->s, op, share);
  b->st->src[g] = op;
  b->st->stage_of[g] = in->s;
  b->st->mb_of[g] = in->mb;
}

static void plc_step_write_inst(plc_step_build *b, const plc_step_inst *in, const int *waits,
                                int nwaits, int share)
{
  const plc_ir_list *l = plc_step_list(b, in->ls, in->v);
  int *last = b->last[in->s];
  for (int i = 0; i < l->n; i++)
    if (in->map[i] >= 0) {
      plc_step_write(b, in, i, in->map[i], waits, nwaits, share);
      if (in->map[i] > last[l->ops[i].stream]) last[l->ops[i].stream] = in->map[i];
    }
}

/* What a block waits for, worked out once: collected at the end of the
 * pool, copied out, and the pool cut back.  An F&B block's parts both
 * wait for all of it, as DualPipe receives both parts' inputs before
 * computing either. */
static int *plc_step_waits(plc_step_build *b, int s, const plc_sched_block *blk, int *nwaits)
{
  plc_sched_dep sd[4];
  int nsd = plc_sched_deps(b->sched, blk, sd);
  long w0 = b->ndep;
  for (int q = 0; q < nsd; q++)
    plc_step_wait_block(b, sd[q].stage, sd[q].phase, sd[q].mb, sd[q].chunk, sd[q].stage != s);
  *nwaits = (int)(b->ndep - w0);
  int *waits = plc_xmalloc(((size_t)*nwaits + 1) * sizeof *waits);
  for (int q = 0; q < *nwaits; q++) waits[q] = b->dep_pool[w0 + q];
  b->ndep = w0;
  return waits;
}

/* Device s's step lists (one per model part it holds) start when
 * everything else of the stage has ended, one after the other. */
static void plc_step_write_steps(plc_step_build *b, int s, int share)
{
  const plc_ir_run *run = b->run;
  int *last = b->last[s];
  for (int j = 0; j < b->nparts; j++) {
    int ls, tag;
    plc_step_part(b, s, j, &ls, &tag);
    const plc_ir_list *l = &run->stages[ls].step;
    int base = b->step_map_base[s * 2 + j];
    long w0 = b->ndep;
    for (int t = 0; t < run->nstreams; t++)
      if (last[t] >= 0) plc_step_dep(b, last[t]);
    int nw = (int)(b->ndep - w0);
    int *waits = plc_xmalloc(((size_t)nw + 1) * sizeof *waits);
    for (int q = 0; q < nw; q++) waits[q] = b->dep_pool[w0 + q];
    b->ndep = w0;
    for (int i = 0; i < l->n; i++) {
      int g = base + i;
      long first = b->ndep;
      for (int d = 0; d < l->ops[i].ndeps; d++)
        plc_step_dep(b, base + l->ops[i].deps[d]);
      if (l->ops[i].ndeps == 0)
        for (int q = 0; q < nw; q++) plc_step_dep(b, waits[q]);
      b->ops[g] = (plc_flow_op){.stream = s * run->nstreams + l->ops[i].stream,
                                .fixed = b->fixed[g], .work = b->work[g],
                                .ndeps = (int)(b->ndep - first)};
      b->ops[g].deps = (const int *)(intptr_t)first;
      plc_step_costs(b, g, s, &l->ops[i], share);
      b->st->src[g] = &l->ops[i];
      b->st->stage_of[g] = s;
      b->st->mb_of[g] = -1;
      if (g > last[l->ops[i].stream]) last[l->ops[i].stream] = g;
    }
    free(waits);
  }
}

static void plc_step_write_stage(plc_step_build *b, int s, int share)
{
  for (int k = b->sched->start[s]; k < b->sched->start[s + 1]; k++) {
    const plc_sched_block *blk = &b->sched->blocks[k];
    int nwaits;
    int *waits = plc_step_waits(b, s, blk, &nwaits);
    if (blk->phase == PLC_SCHED_FB) {
      plc_step_inst f = plc_step_inst_of(b, s, I_F, blk->mb, blk->chunk, 0);
      plc_step_inst bw = plc_step_inst_of(b, s, I_B, blk->mb2, blk->chunk2, blk->split);
      plc_step_write_inst(b, &f, waits, nwaits, share);
      plc_step_write_inst(b, &bw, waits, nwaits, share);
    } else {
      plc_step_inst in = plc_step_inst_of(b, s, plc_step_sched_phase(blk->phase), blk->mb,
                                          blk->chunk, blk->split);
      plc_step_write_inst(b, &in, waits, nwaits, share);
    }
    free(waits);
  }
  plc_step_write_steps(b, s, share);
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
 * each gap charged along its chain, drain after its last op.  An op that
 * never shared its link took exactly its own time (flow.h), so its
 * duration is read from it, not subtracted from the run's times (whose
 * denominators grow with every event: the subtraction was most of the
 * accounting).  A stage ends when the last op of one of its streams does
 * (a stream's ops end in order). */
static void plc_step_account(plc_step *st, int nstreams)
{
  int p = st->nstages, *seen = plc_xcalloc((size_t)p + 1, sizeof *seen);
  int *last = plc_xmalloc(((size_t)p * (size_t)nstreams + 1) * sizeof *last);
  mpq_t *prev = plc_xcalloc((size_t)p + 1, sizeof *prev), d;
  mpq_init(d);
  for (int s = 0; s < p; s++) mpq_init(prev[s]);
  for (int k = 0; k < p * nstreams; k++) last[k] = -1;
  for (int g = 0; g < st->nops; g++) {
    int s = st->stage_of[g];
    plc_step_stage *ss = &st->stages[s];
    if (st->flow.ran[g]) last[s * nstreams + st->src[g]->stream] = g;
    if (st->src[g]->stream != 0) continue;
    if (!seen[s]) mpq_set(ss->fill, st->flow.start[g]);
    else if (mpq_cmp(st->flow.start[g], prev[s]) > 0)
      plc_step_charge(st, s, g, prev[s], st->flow.start[g]);
    seen[s] = 1;
    const plc_ir_op *op = st->src[g];
    if (op->kind == PLC_OPK_COMPUTE) { /* its own time; stretched, the rest is */
      mpq_add(ss->compute, ss->compute, op->time); /* compute of another stream */
      if (st->flow.shared[g]) {
        mpq_sub(d, st->flow.end[g], st->flow.start[g]);
        mpq_sub(d, d, op->time);
        mpq_add(ss->stall_other, ss->stall_other, d);
      }
    } else if (st->flow.shared[g]) {
      mpq_sub(d, st->flow.end[g], st->flow.start[g]);
      mpq_add(ss->exposed[op->dim], ss->exposed[op->dim], d);
    } else {
      mpq_add(ss->exposed[op->dim], ss->exposed[op->dim], op->time);
    }
    mpq_set(prev[s], st->flow.end[g]);
  }
  for (int s = 0; s < p; s++) {
    plc_step_stage *ss = &st->stages[s];
    for (int t = 0; t < nstreams; t++) {
      int g = last[s * nstreams + t];
      if (g >= 0 && mpq_cmp(st->flow.end[g], ss->end) > 0) mpq_set(ss->end, st->flow.end[g]);
    }
    if (!seen[s]) mpq_set(ss->fill, st->makespan);
    mpq_sub(ss->drain, st->makespan, seen[s] ? prev[s] : st->makespan);
    if (s == 0 || mpq_cmp(ss->compute, st->stages[st->critical].compute) > 0) st->critical = s;
    mpq_clear(prev[s]);
  }
  free(prev), free(seen), free(last);
  mpq_clear(d);
}

/* Whether some stage runs compute that takes time off its compute stream. */
static int plc_step_side_compute(const plc_ir_run *run)
{
  for (int s = 0; s < run->nstages; s++) {
    const plc_ir_list *ls[3] = {&run->stages[s].fwd, &run->stages[s].bwd, &run->stages[s].step};
    for (int k = 0; k < 3; k++)
      for (int i = 0; i < ls[k]->n; i++)
        if (ls[k]->ops[i].kind == PLC_OPK_COMPUTE && ls[k]->ops[i].stream != 0 &&
            mpq_sgn(ls[k]->ops[i].time) > 0)
          return 1;
  }
  return 0;
}

/* ---- the run ---------------------------------------------------------------------- */

static void plc_step_build_free(plc_step_build *b, long n)
{
  if (b->in)
    for (int i = 0; i < b->p * V_N; i++) free(b->in[i]);
  if (b->lastc)
    for (int i = 0; i < b->p * 2; i++) free(b->lastc[i]);
  if (b->map)
    for (size_t i = 0; i < (size_t)b->p * I_N * (size_t)b->vloc * (size_t)b->mu; i++)
      free(b->map[i]);
  if (b->last)
    for (int s = 0; s < b->p; s++) free(b->last[s]);
  for (long g = 0; g < n && b->fixed; g++) mpq_clears(b->fixed[g], b->work[g], NULL);
  free(b->in), free(b->lastc), free(b->map), free(b->last), free(b->step_map_base);
  free(b->seg[0]), free(b->seg[1]);
  free(b->ops), free(b->fixed), free(b->work), free(b->dep_pool), free(b->seen), free(b->stack);
}

/* The schedule's blocks; refused: a placement the lowered lists do not
 * give (vpp > 1 with a schedule of one chunk per stage or with DualPipe;
 * dualpipev's V is lowered with vpp 2), too many microbatches. */
static int plc_step_schedule(const plc_ir_run *run, plc_sched *sched, char *msg, size_t len)
{
  plc_sched_placement place;
  plc_sched_params par;
  if (!plc_runsched_params(run, &place, &par, msg, len))
    return 0;
  if (place != PLC_SCHED_PLACE_ROUND && place != PLC_SCHED_PLACE_V && run->vpp > 1) {
    snprintf(msg, len, "the whole-step simulation of schedule '%s' runs one model part per "
             "block; vpp = %d splits the stages into round-robin chunks only interleaved "
             "runs", run->schedule, run->vpp);
    return 0;
  }
  if (run->mu > 1000000) {
    snprintf(msg, len, "%ld microbatches are more than the whole-step simulation takes", run->mu);
    return 0;
  }
  int stage;
  return plc_runsched_build(run, sched, msg, len, &stage);
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
                      .mu = (int)run->mu,
                      .vloc = plc_sched_nchunks(sched.place, &sched.par) / run->nstages,
                      .nparts = sched.place == PLC_SCHED_PLACE_BIDIR ? 2 : 1};
  for (int k = 0; k < sched.nblocks; k++) b.split |= sched.blocks[k].split;
  plc_step_variants(&b);
  size_t maxn = 1;
  for (int s = 0; s < b.p; s++)
    for (int v = 0; v < V_N; v++)
      if ((size_t)plc_step_list(&b, s, v)->n > maxn) maxn = (size_t)plc_step_list(&b, s, v)->n;
  b.seg[0] = plc_xmalloc((maxn + 1) * sizeof *b.seg[0]);
  b.seg[1] = plc_xmalloc((maxn + 1) * sizeof *b.seg[1]);
  /* the instance maps cost a pointer per (stage, phase, chunk, mb), a
   * few per block: blocks count against the limit as ops do */
  long n = plc_step_count(&b);
  if (n > PLC_STEP_MAX_OPS || sched.nblocks > PLC_STEP_MAX_OPS) {
    if (n > PLC_STEP_MAX_OPS)
      snprintf(msg, msglen, "the whole step has %ld ops, more than the %ld the simulation "
               "takes", n, PLC_STEP_MAX_OPS);
    else
      snprintf(msg, msglen, "the whole step has %d blocks, more than the %ld the simulation "
               "takes", sched.nblocks, PLC_STEP_MAX_OPS);
    plc_step_build_free(&b, 0);
    plc_sched_free(&sched);
    return 0;
  }
  n = plc_step_places(&b);
  plc_step_alloc(st, &b, (int)n);
  plc_sim_net_of(run, &b.net); /* a link per port and stage */
  b.side_compute = plc_step_side_compute(run);
  for (int s = 0; s < b.p; s++) plc_step_write_stage(&b, s, opts->share);
  for (long g = 0; g < n; g++) b.ops[g].deps = b.dep_pool + (intptr_t)b.ops[g].deps;
  int stuck = -1;
  int ok = plc_flow_run(&st->flow, b.ops, (int)n, run->nstages * run->nstreams,
                        run->nstages * (b.net.nlinks + 1), 1, NULL, &stuck) == 0;
  (void)stuck;
  st->nstages = run->nstages;
  mpq_set(st->makespan, st->flow.makespan);
  st->stages = plc_xcalloc((size_t)st->nstages, sizeof *st->stages);
  for (int s = 0; s < st->nstages; s++) plc_step_stage_init(&st->stages[s]);
  plc_step_account(st, run->nstreams);
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
