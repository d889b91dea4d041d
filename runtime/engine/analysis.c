/* analysis.c - stage times, bubble, DP tail, step time and efficiency. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "analysis.h"
#include "blocks.h"
#include "fbpair.h"
#include "memory.h"
#include "quantity.h"
#include "runsched.h"
#include "schedule.h"
#include "sensitivity.h"
#include "whole.h"
#include "xalloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void plc_result_init(plc_result *r)
{
  memset(r, 0, sizeof *r);
  mpq_inits(r->t_f, r->t_b, r->t, r->t_w, r->bubble, r->bubble_warmup, r->bubble_steady,
            r->bubble_cooldown, r->bubble_formula, r->tail, r->tail_full,
            r->optimizer, r->step, r->compute_mb, r->all_compute_mb, r->useful_mb,
            r->stall_mb, r->eta, r->busy, r->mfu, r->tokens_per_s, r->work, r->dev_compute,
            r->dev_all_compute, r->dev_useful, r->dev_stall, r->t_fb, NULL);
  for (int d = 0; d < PLC_PD_COUNT; d++)
    mpq_inits(r->exposed_mb[d], r->dev_exposed[d], NULL);
}

void plc_result_free(plc_result *r)
{
  mpq_clears(r->t_f, r->t_b, r->t, r->t_w, r->bubble, r->bubble_warmup, r->bubble_steady,
             r->bubble_cooldown, r->bubble_formula, r->tail, r->tail_full,
             r->optimizer, r->step, r->compute_mb, r->all_compute_mb, r->useful_mb,
             r->stall_mb, r->eta, r->busy, r->mfu, r->tokens_per_s, r->work, r->dev_compute,
             r->dev_all_compute, r->dev_useful, r->dev_stall, r->t_fb, NULL);
  for (int d = 0; d < PLC_PD_COUNT; d++)
    mpq_clears(r->exposed_mb[d], r->dev_exposed[d], NULL);
  for (int i = 0; i < r->nrows; i++)
    mpq_clears(r->rows[i].size_each, r->rows[i].time_each, r->rows[i].bytes, r->rows[i].time,
               r->rows[i].window, r->rows[i].exposed, NULL);
  free(r->rows);
  plc_sense_free(r);
  plc_result_memory_free(r);
  plc_whole_release(r);
  for (int i = 0; r->tf && i < r->run->nstages; i++)
    mpq_clears(r->tf[i], r->tb[i], r->tl[i], r->tk[i], r->tw[i], NULL);
  free(r->tw);
  free(r->tw_ok);
  free(r->tf);
  free(r->tb);
  free(r->tl);
  free(r->tk);
  for (int i = 0; r->ckf && i < r->run->nstages * r->nck; i++)
    mpq_clears(r->ckf[i], r->ckb[i], r->ckw[i], r->ckpf[i], r->ckpb[i], r->ckp[i], NULL);
  free(r->ckf);
  free(r->ckb);
  free(r->ckw);
  free(r->ckpf);
  free(r->ckpb);
  free(r->ckp);
  for (int i = 0; r->fbo && i < 2 * r->run->nstages; i++)
    mpq_clear(r->fbo[i]);
  free(r->fbo);
  free(r->nfb);
  free(r->cls);
  if (r->run && !r->no_sims) {
    plc_sim_free(&r->fwd);
    plc_sim_free(&r->bwd);
  }
}

/* ---- the critical stage ----------------------------------------------------- */

/* Do two lists simulate alike: the same ops on the same streams with the
 * same dependencies, durations, phases and once and wgrad flags (names and
 * layers aside), collectives over the same group (its link and latency
 * steps, which sharing a link reads), and with chunks set the same chunks
 * (a chunk's blocks take its own ops' times)?  Copies of a layer's ops
 * share their times: one address is one duration. */
static int plc_list_same(const plc_ir_list *a, const plc_ir_list *b, int chunks)
{
  if (a->n != b->n)
    return 0;
  for (int i = 0; i < a->n; i++) {
    const plc_ir_op *x = &a->ops[i], *y = &b->ops[i];
    if (x->kind != y->kind || x->stream != y->stream || x->once != y->once ||
        (x->kind != PLC_OPK_COMPUTE && (x->dim != y->dim || x->group != y->group)) ||
        x->phase != y->phase || x->wgrad != y->wgrad || (chunks && x->chunk != y->chunk) ||
        x->ndeps != y->ndeps || (x->time != y->time && !mpq_equal(x->time, y->time)) ||
        (x->ndeps && memcmp(x->deps, y->deps, (size_t)x->ndeps * sizeof *x->deps)))
      return 0;
  }
  return 1;
}

/* Per stage, the first stage whose lists simulate alike: the stage times
 * and tails are worked out once per class (most stages of a large run are
 * the same lists on other layers). */
static void plc_stage_classes(const plc_ir_run *run, int *cls)
{
  for (int s = 0; s < run->nstages; s++) {
    const plc_ir_stage *st = &run->stages[s];
    cls[s] = s;
    for (int r = 0; r < s && cls[s] == s; r++) {
      const plc_ir_stage *o = &run->stages[r];
      if (cls[r] == r && plc_list_same(&st->fwd, &o->fwd, 1) &&
          plc_list_same(&st->bwd, &o->bwd, 1) && plc_list_same(&st->step, &o->step, 1))
        cls[s] = r;
    }
  }
}

static int plc_chunk_stays(const plc_ir_op *op);

/* The class whose lists' ops take the most time in all (the first on
 * ties; from the analysis's memo), or -1 when some sum cannot be had: a
 * guess at the critical stage, which is most often the one with the most
 * work (and is it when there is one class).  Only a guess (overlap and
 * stalls decide the makespans): plc_stage_figs runs it in full first,
 * and a wrong one costs time, never a figure. */
static int plc_stage_guess(const plc_ir_run *run, const int *cls)
{
  int guess = -1;
  mpq_t t, x, best;
  mpq_inits(t, x, best, NULL);
  for (int s = 0; s < run->nstages; s++) {
    if (cls[s] != s)
      continue;
    if (!plc_sim_memo_sum(t, &run->stages[s].fwd, NULL) ||
        !plc_sim_memo_sum(x, &run->stages[s].bwd, NULL)) {
      guess = -1;
      break;
    }
    mpq_add(t, t, x);
    if (guess < 0 || mpq_cmp(t, best) > 0) {
      guess = s;
      mpq_set(best, t);
    }
  }
  mpq_clears(t, x, best, NULL);
  return guess;
}

/* Stage s's forward and backward run in full into r->fwd and r->bwd, and
 * its makespans (and tk: the backward's end without the sends that leave
 * its chunks) from them: what the end-only runs give (sim.h). */
static void plc_stage_full(plc_result *r, int s, int chunks, const plc_sim_net *net,
                           mpq_srcptr zero)
{
  const plc_ir_run *run = r->run;
  plc_sim_run(&r->fwd, &run->stages[s].fwd, run->nstreams, 0, zero, net);
  plc_sim_run(&r->bwd, &run->stages[s].bwd, run->nstreams, 0, zero, net);
  mpq_set(r->tf[s], r->fwd.end);
  mpq_set(r->tb[s], r->bwd.end);
  if (chunks)
    plc_sim_end_in(r->tk[s], &r->bwd, &run->stages[s].bwd, zero, plc_chunk_stays);
  else
    mpq_set(r->tk[s], r->tb[s]);
}

/* Stage s's makespans (and tk) by end-only runs, or base's where its
 * lists did not change. */
static void plc_stage_ends(plc_result *r, const plc_result *base, unsigned changed, int s,
                           int chunks, const plc_sim_net *net, mpq_srcptr zero)
{
  const plc_ir_run *run = r->run;
  if (!base || (changed & PLC_CHANGED_FWD))
    plc_sim_end(r->tf[s], &run->stages[s].fwd, run->nstreams, 0, zero, net);
  else
    mpq_set(r->tf[s], base->tf[s]);
  if (!base || (changed & PLC_CHANGED_BWD)) {
    plc_sim_counts_fn *counts = chunks ? plc_chunk_stays : NULL;
    if (!run->dp_tail && !run->dp_hidden) { /* the tail may be simulated: its run too */
      plc_sim_ends_once(r->tb[s], chunks ? r->tk[s] : NULL, r->tw[s], &run->stages[s].bwd,
                        run->nstreams, zero, counts, net);
      r->tw_ok[s] = 1;
    } else {
      plc_sim_ends(r->tb[s], chunks ? r->tk[s] : NULL, &run->stages[s].bwd, run->nstreams, 0,
                   zero, counts, net);
    }
    if (!chunks)
      mpq_set(r->tk[s], r->tb[s]);
  } else {
    mpq_set(r->tb[s], base->tb[s]);
    mpq_set(r->tk[s], base->tk[s]);
  }
}

/* Per class (cls[s] == s): the forward and backward makespans, from base
 * where the lists did not change; then the critical stage, the first with
 * the largest sum.  Without base, unless r->no_sims (plc_analyse_first:
 * the step alone first), the critical stage's simulations are kept in
 * r->fwd and r->bwd (plc_microbatch reads them): the guessed one's
 * (plc_stage_guess) are run in full at once, its makespans read from
 * them, and run again only when another stage turns out critical. */
static void plc_stage_figs(plc_result *r, const plc_result *base, unsigned changed)
{
  const plc_ir_run *run = r->run;
  int p = run->nstages;
  r->cls = plc_xmalloc((size_t)p * sizeof *r->cls);
  if (base)
    memcpy(r->cls, base->cls, (size_t)p * sizeof *r->cls);
  else
    plc_stage_classes(run, r->cls);
  r->tf = plc_xmalloc((size_t)p * sizeof *r->tf);
  r->tb = plc_xmalloc((size_t)p * sizeof *r->tb);
  r->tl = plc_xmalloc((size_t)p * sizeof *r->tl);
  r->tk = plc_xmalloc((size_t)p * sizeof *r->tk);
  r->tw = plc_xmalloc((size_t)p * sizeof *r->tw);
  r->tw_ok = plc_xcalloc((size_t)p, 1);
  for (int s = 0; s < p; s++)
    mpq_inits(r->tf[s], r->tb[s], r->tl[s], r->tk[s], r->tw[s], NULL);
  int chunks = plc_run_chunks(run) > 0;
  int best = -1;
  plc_sim_net net;
  plc_sim_net_of(run, &net);
  mpq_t t, bt, zero;
  mpq_inits(t, bt, zero, NULL);
  int guess = base || r->no_sims ? -1 : plc_stage_guess(run, r->cls);
  for (int s = 0; s < p; s++) {
    if (r->cls[s] != s)
      continue; /* the same as an earlier stage: not longer */
    if (s == guess) {
      plc_stage_full(r, s, chunks, &net, zero);
    } else {
      plc_stage_ends(r, base, changed, s, chunks, &net, zero);
    }
    plc_q_rat_add(t, r->tf[s], r->tb[s]);
    if (best < 0 || mpq_cmp(t, bt) > 0) {
      best = s;
      mpq_set(bt, t);
    }
  }
  if (!base && !r->no_sims && best >= 0 && best != guess) { /* the critical stage's runs */
    if (guess >= 0) {
      plc_sim_free(&r->fwd);
      plc_sim_free(&r->bwd);
    }
    plc_sim_run(&r->fwd, &run->stages[best].fwd, run->nstreams, 0, zero, &net);
    plc_sim_run(&r->bwd, &run->stages[best].bwd, run->nstreams, 0, zero, &net);
  }
  mpq_clears(t, bt, zero, NULL);
  r->critical = best;
}

/* ---- how the schedule places stages and chunks ----------------------------------- */

/* Does run's schedule place two model stages per device, s and p-1-s,
 * each running half of the microbatches (DualPipe)? */
int plc_two_parts(const plc_ir_run *run)
{
  const plc_sched_info *info = plc_sched_find(run->schedule);
  return info && info->place == PLC_SCHED_PLACE_BIDIR;
}

int plc_run_chunks(const plc_ir_run *run)
{
  if (!strcmp(run->schedule, "custom"))
    return run->vpp > 1 ? run->vpp : 0; /* round-robin chunks (runsched.c) */
  const plc_sched_info *info = plc_sched_find(run->schedule);
  if (!info)
    return 0;
  if (info->place == PLC_SCHED_PLACE_V)
    return 2;
  return info->place == PLC_SCHED_PLACE_ROUND && run->vpp > 1 ? run->vpp : 0;
}

/* The ops of l in chunk k as a list of their own (chunk.list, its
 * dependency pool in chunk.pool): dependencies on other chunks' ops are
 * dropped, and a pipeline op placed after the layers waits for its own
 * chunk's last layer op on the compute stream, as the whole-step
 * simulation runs a chunk's block.  A send leaving the chunk on a stream
 * of its own (a pp p2p placed after the layers off the compute stream:
 * Megatron's overlap_p2p_comm) is no part of the block: the stage goes on
 * with its next block while it flies, and the block simulator charges it
 * to the block that waits for it, as the transfer's latency; its time, the
 * longest of them, is kept in chunk.p2p (0 when none). */
typedef struct plc_chunk {
  plc_ir_list list;
  int *pool;
  int *from;    /* per op of list, its index in the stage's list (plc_sim_memo_part) */
  mpq_t p2p;
} plc_chunk;

static int plc_chunk_leaves(const plc_ir_op *op)
{
  return op->after_layers && op->stream != 0 && op->kind == PLC_OPK_P2P &&
         op->dim == PLC_PD_PP;
}

static void plc_chunk_of(const plc_ir_list *l, int k, plc_chunk *out)
{
  mpq_init(out->p2p);
  size_t nd = 1;
  for (int i = 0; i < l->n; i++)
    nd += (size_t)l->ops[i].ndeps + 1;
  out->list.ops = plc_xmalloc(((size_t)l->n + 1) * sizeof *out->list.ops);
  out->list.n = 0;
  out->pool = plc_xmalloc(nd * sizeof *out->pool);
  out->from = plc_xmalloc(((size_t)l->n + 1) * sizeof *out->from);
  int *map = plc_xmalloc(((size_t)l->n + 1) * sizeof *map), last = -1;
  size_t used = 0;
  for (int i = 0; i < l->n; i++) {
    const plc_ir_op *op = &l->ops[i];
    map[i] = -1;
    if (op->chunk != k)
      continue;
    if (plc_chunk_leaves(op)) {
      if (mpq_cmp(op->time, out->p2p) > 0)
        mpq_set(out->p2p, op->time);
      continue;
    }
    plc_ir_op *o = &out->list.ops[out->list.n];
    *o = *op;
    o->deps = out->pool + used;
    o->ndeps = 0;
    if (op->after_layers && last >= 0)
      o->deps[o->ndeps++] = last;
    for (int d = 0; !op->after_layers && d < op->ndeps; d++)
      if (map[op->deps[d]] >= 0)
        o->deps[o->ndeps++] = map[op->deps[d]];
    used += (size_t)o->ndeps;
    map[i] = out->list.n;
    out->from[out->list.n] = i;
    if (op->layer >= 0 && op->stream == 0)
      last = out->list.n;
    out->list.n++;
  }
  out->list.cap = out->list.n;
  free(map);
  plc_sim_memo_part(&out->list, l, out->from); /* runs with l's durations */
}

static void plc_chunk_free(plc_chunk *c)
{
  plc_sim_memo_drop(&c->list);
  free(c->list.ops);
  free(c->pool);
  free(c->from);
  mpq_clear(c->p2p);
}

/* Chunk c alone: its makespan into t, its weight-gradient part into w
 * (when not NULL).  The makespan is the end of every stream (sim.h), which
 * plc_sim_end works out without the other figures. */
static void plc_chunk_sim(const plc_ir_run *run, const plc_chunk *c, mpq_t t, mpq_t w)
{
  plc_sim_net net;
  plc_sim_net_of(run, &net);
  mpq_t zero;
  mpq_init(zero);
  plc_sim_end(t, &c->list, run->nstreams, 0, zero, &net);
  if (w)
    plc_weight_grad_time(&c->list, w);
  mpq_clear(zero);
}

/* One phase of plc_chunk_times: the forward (ph 0) or backward list's
 * chunk k alone, its makespan into t, its weight-gradient part into w and
 * its longest send on a stream of its own into p2p (each when not NULL). */
static void plc_chunk_phase(const plc_ir_run *run, int s, int k, int ph, mpq_t t, mpq_t w,
                            mpq_t p2p)
{
  plc_chunk c;
  plc_chunk_of(ph ? &run->stages[s].bwd : &run->stages[s].fwd, k, &c);
  plc_chunk_sim(run, &c, t, w);
  if (p2p)
    mpq_set(p2p, c.p2p);
  plc_chunk_free(&c);
}

void plc_chunk_times(const plc_ir_run *run, int s, int k, mpq_t f, mpq_t b, mpq_t w,
                     mpq_t p2p)
{
  mpq_t pb;
  mpq_init(pb);
  plc_chunk_phase(run, s, k, 0, f, NULL, p2p);
  plc_chunk_phase(run, s, k, 1, b, w, pb);
  if (p2p && mpq_cmp(pb, p2p) > 0)
    mpq_set(p2p, pb);
  mpq_clear(pb);
}

/* Per stage and chunk (plc_run_chunks), the times of the chunk's ops run
 * alone, as its blocks take them: worked out once per class of stages
 * (copied to the others), and kept from base for the lists that did not
 * change. */
/* One phase (ph 0 forward, 1 backward) of plc_chunk_figs for the stages
 * that head a class: each chunk's list is built, and simulated unless an
 * earlier chunk's simulates alike (the same ops and sends: most chunks of a
 * large run are the same layers), whose times it takes. */
static void plc_chunk_figs_phase(plc_result *r, int ph)
{
  const plc_ir_run *run = r->run;
  int n = r->nck;
  mpq_t *t = ph ? r->ckb : r->ckf, *p2p = ph ? r->ckpb : r->ckpf;
  plc_chunk *built = plc_xmalloc((size_t)run->nstages * (size_t)n * sizeof *built);
  size_t *at = plc_xmalloc((size_t)run->nstages * (size_t)n * sizeof *at), nb = 0;
  for (int s = 0; s < run->nstages; s++) {
    if (r->cls[s] != s)
      continue;
    for (int k = 0; k < n; k++) {
      size_t i = (size_t)s * (size_t)n + (size_t)k, j = 0;
      plc_chunk *c = &built[nb];
      plc_chunk_of(ph ? &run->stages[s].bwd : &run->stages[s].fwd, k, c);
      while (j < nb && !(mpq_equal(built[j].p2p, c->p2p) &&
                         plc_list_same(&built[j].list, &c->list, 0)))
        j++;
      mpq_set(p2p[i], c->p2p);
      if (j < nb) { /* alike: its times */
        mpq_set(t[i], t[at[j]]);
        if (ph)
          mpq_set(r->ckw[i], r->ckw[at[j]]);
        plc_chunk_free(c);
        continue;
      }
      plc_chunk_sim(run, c, t[i], ph ? r->ckw[i] : NULL);
      at[nb++] = i;
    }
  }
  for (size_t j = 0; j < nb; j++)
    plc_chunk_free(&built[j]);
  free(built);
  free(at);
}

static void plc_chunk_figs(plc_result *r, const plc_result *base, unsigned changed)
{
  const plc_ir_run *run = r->run;
  int p = run->nstages, n = plc_run_chunks(run);
  r->nck = n;
  if (!n)
    return;
  size_t m = (size_t)p * (size_t)n;
  mpq_t **arr[] = {&r->ckf, &r->ckb, &r->ckw, &r->ckpf, &r->ckpb, &r->ckp};
  for (size_t a = 0; a < sizeof arr / sizeof arr[0]; a++) {
    *arr[a] = plc_xmalloc(m * sizeof **arr[a]);
    for (size_t i = 0; i < m; i++)
      mpq_init((*arr[a])[i]);
  }
  int keepf = base && base->nck == n && !(changed & PLC_CHANGED_FWD);
  int keepb = base && base->nck == n && !(changed & PLC_CHANGED_BWD);
  if (!keepf)
    plc_chunk_figs_phase(r, 0);
  if (!keepb)
    plc_chunk_figs_phase(r, 1);
  for (int s = 0; s < p; s++)
    for (int k = 0; k < n; k++) {
      size_t i = (size_t)s * (size_t)n + (size_t)k, c = (size_t)r->cls[s] * (size_t)n + (size_t)k;
      if (keepf || c != i) { /* the base's, or an earlier stage's lists: its times */
        const plc_result *from = c != i ? r : base;
        mpq_set(r->ckf[i], from->ckf[c]);
        mpq_set(r->ckpf[i], from->ckpf[c]);
      }
      if (keepb || c != i) {
        const plc_result *from = c != i ? r : base;
        mpq_set(r->ckb[i], from->ckb[c]);
        mpq_set(r->ckw[i], from->ckw[c]);
        mpq_set(r->ckpb[i], from->ckpb[c]);
      }
      mpq_set(r->ckp[i], mpq_cmp(r->ckpf[i], r->ckpb[i]) > 0 ? r->ckpf[i] : r->ckpb[i]);
    }
}

/* ---- F&B blocks ------------------------------------------------------------ */

/* Does run's schedule pair the forward of one of a device's two slots
 * with the backward of the other in F&B blocks (DualPipe, dualpipev)? */
static int plc_fb_sched(const plc_ir_run *run)
{
  const plc_sched_info *info = plc_sched_find(run->schedule);
  return info && (info->place == PLC_SCHED_PLACE_BIDIR || info->place == PLC_SCHED_PLACE_V);
}

/* The forward (ph 0) or backward list of device d's slot a: under
 * DualPipe model stage d's whole lists (a 0) or p-1-d's (a 1), under
 * dualpipev its V's chunk a alone (plc_chunk_of). */
typedef struct plc_slot {
  const plc_ir_list *l;
  int own;     /* ch was built */
  plc_chunk ch;
} plc_slot;

static void plc_slot_of(const plc_ir_run *run, int d, int a, int ph, plc_slot *out)
{
  int p = run->nstages, two = plc_two_parts(run), s = two && a ? p - 1 - d : d;
  const plc_ir_list *l = ph ? &run->stages[s].bwd : &run->stages[s].fwd;
  out->own = !two;
  out->l = l;
  if (out->own) {
    plc_chunk_of(l, a, &out->ch);
    out->l = &out->ch.list;
  }
}

static void plc_slot_free(plc_slot *sl)
{
  if (sl->own)
    plc_chunk_free(&sl->ch);
}

/* How many F&B blocks each device runs with each slot's forward, from
 * the schedule's order; 0 when it cannot be built or is too large (the
 * bubble then takes the closed form too). */
static int plc_fb_count(const plc_ir_run *run, long *nfb)
{
  plc_sched_params par;
  plc_sched_placement place;
  char why[160];
  int stage;
  if (!plc_runsched_params(run, &place, &par, why, sizeof why) ||
      3L * par.v * par.mu * par.p > PLC_BLOCKS_STEP_MAX)
    return 0;
  plc_sched s;
  if (!plc_runsched_build(run, &s, why, sizeof why, &stage))
    return 0;
  for (int st = 0; st < s.par.p; st++)
    for (int i = s.start[st]; i < s.start[st + 1]; i++) {
      const plc_sched_block *b = &s.blocks[i];
      if (b->phase == PLC_SCHED_FB && (b->chunk >= par.p) != (b->chunk2 >= par.p))
        nfb[st * 2 + (b->chunk >= par.p)]++;
    }
  plc_sched_free(&s);
  return 1;
}

/* The F&B of forward list f and backward list b, overlapped: its
 * makespan into t. */
static void plc_fb_time(const plc_ir_run *run, const plc_ir_list *f, const plc_ir_list *b, mpq_t t)
{
  plc_fb_list m;
  plc_sim_net net;
  plc_sim_net_of(run, &net);
  mpq_t zero;
  mpq_init(zero);
  plc_fb_merge(f, b, &m);
  plc_sim_end(t, &m.list, run->nstreams, 0, zero, &net);
  plc_fb_free(&m);
  mpq_clear(zero);
}

/* Device d's slot-a F&B time, its lists built and merged. */
static void plc_fb_slot_time(const plc_ir_run *run, int d, int a, mpq_t t)
{
  plc_slot f, b;
  plc_slot_of(run, d, a, 0, &f);
  plc_slot_of(run, d, 1 - a, 1, &b);
  plc_fb_time(run, f.l, b.l, t);
  plc_slot_free(&f);
  plc_slot_free(&b);
}

/* r->fbo, r->nfb and r->t_fb (analysis.h).  A device whose lists
 * simulate like an earlier one's (the same classes) takes its times.
 * The counts come from the schedule alone: a re-analysis takes base's
 * (the same run but for op times), not building the schedule again. */
static void plc_fb_pairs(plc_result *r, const plc_result *base)
{
  const plc_ir_run *run = r->run;
  int p = run->nstages, two = plc_two_parts(run);
  const plc_ir_stage *cs = &run->stages[r->critical];
  plc_q_rat_add(r->t_fb, r->t_f, r->t_b);
  if (!plc_fb_sched(run))
    return;
  plc_fb_time(run, &cs->fwd, &cs->bwd, r->t_fb);
  long *nfb = plc_xcalloc((size_t)p * 2, sizeof *nfb);
  int counted = base ? base->nfb != NULL : plc_fb_count(run, nfb);
  if (!counted) {
    free(nfb);
    return;
  }
  if (base)
    memcpy(nfb, base->nfb, (size_t)p * 2 * sizeof *nfb);
  r->nfb = nfb;
  r->fbo = plc_xmalloc((size_t)p * 2 * sizeof *r->fbo);
  for (int d = 0; d < p; d++) {
    int e = 0; /* an earlier device alike */
    while (e < d && !(r->cls[e] == r->cls[d] &&
                      (!two || r->cls[p - 1 - e] == r->cls[p - 1 - d])))
      e++;
    for (int a = 0; a < 2; a++) {
      mpq_init(r->fbo[d * 2 + a]);
      if (e < d)
        mpq_set(r->fbo[d * 2 + a], r->fbo[e * 2 + a]);
      else
        plc_fb_slot_time(run, d, a, r->fbo[d * 2 + a]);
    }
  }
}

/* Device d's slot a: its forward and backward times per microbatch. */
static void plc_slot_times(const plc_result *r, int d, int a, mpq_srcptr *f, mpq_srcptr *b)
{
  int p = r->run->nstages;
  if (r->nck) {
    *f = r->ckf[d * r->nck + a];
    *b = r->ckb[d * r->nck + a];
  } else {
    int s = r->cls[a ? p - 1 - d : d];
    *f = r->tf[s];
    *b = r->tb[s];
  }
}

void plc_fb_parts(const plc_result *r, int d, int a, int *fm, int *bm, mpq_srcptr *f,
                  mpq_srcptr *b)
{
  int p = r->run->nstages, far = plc_two_parts(r->run) ? p - 1 - d : 2 * p - 1 - d;
  mpq_srcptr unused;
  plc_slot_times(r, d, a, f, &unused);
  plc_slot_times(r, d, 1 - a, &unused, b);
  *fm = a ? far : d;
  *bm = a ? d : far;
}

int plc_fb_pairs_of(const plc_result *r, int d, plc_fb_pair out[2])
{
  int n = 0;
  for (int a = 0; r->fbo && a < 2; a++) {
    plc_fb_pair *p = &out[n];
    p->count = r->nfb[d * 2 + a];
    if (!p->count)
      continue;
    plc_fb_parts(r, d, a, &p->fm, &p->bm, &p->f, &p->b);
    p->time = r->fbo[d * 2 + a];
    n++;
  }
  return n;
}

/* What device d's F&B blocks hide, over running each one's forward and
 * backward one after the other, added to out (which it lowers): per
 * slot a, nfb x (t_f(a) + t_b(other) - fbo). */
static void plc_fb_hidden(const plc_result *r, int d, mpq_t out)
{
  mpq_t x, n;
  mpq_inits(x, n, NULL);
  for (int a = 0; r->fbo && a < 2; a++) {
    mpq_srcptr f, b;
    int fm, bm;
    plc_fb_parts(r, d, a, &fm, &bm, &f, &b);
    plc_q_rat_add(x, f, b);
    plc_q_rat_sub(x, x, r->fbo[d * 2 + a]);
    mpq_set_si(n, r->nfb[d * 2 + a], 1);
    plc_q_rat_mul(x, x, n);
    plc_q_rat_sub(out, out, x);
  }
  mpq_clears(x, n, NULL);
}

/* ---- the critical device -------------------------------------------------------- */

/* The critical device and its work over the step (analysis.h): the device
 * with the most work, the lowest on ties, as the block simulator picks.
 * Under DualPipe device d's work is mu/2 (t_d + t_{p-1-d}); when a stage
 * runs its chunks as blocks of their own (interleaved, dualpipev) mu
 * times its chunks', each run alone; with F&B blocks, less what their
 * overlap hides (plc_fb_hidden).  Else the critical stage, mu (t_f +
 * t_b). */
static void plc_device(plc_result *r)
{
  const plc_ir_run *run = r->run;
  int p = run->nstages, two = plc_two_parts(run);
  mpq_t x, k, best;
  mpq_inits(x, k, best, NULL);
  r->device = r->critical;
  mpq_set_si(k, run->mu, 1);
  plc_q_rat_mul(r->work, k, r->t);
  if (r->nck || two) {
    mpq_set_si(k, run->mu, two ? 2 : 1);
    mpq_canonicalize(k);
    for (int d = 0; d < p; d++) {
      mpq_set_ui(x, 0, 1);
      for (int a = 0; a < (r->nck ? r->nck : 2); a++) {
        mpq_srcptr f, b;
        plc_slot_times(r, d, a, &f, &b);
        plc_q_rat_add(x, x, f);
        plc_q_rat_add(x, x, b);
      }
      plc_q_rat_mul(x, x, k);
      plc_fb_hidden(r, d, x);
      if (d == 0 || mpq_cmp(x, best) > 0) {
        r->device = d;
        mpq_set(best, x);
      }
    }
    mpq_set(r->work, best);
  }
  mpq_clears(x, k, best, NULL);
}

/* Add the exposures of l's collectives that ran in s to by_dim, per
 * dimension (group: scratch, an int per op). */
static void plc_exposed_by_dim(const plc_sim *s, const plc_ir_list *l, int *group,
                               mpq_t by_dim[PLC_PD_COUNT])
{
  mpq_ptr out[PLC_PD_COUNT];
  for (int d = 0; d < PLC_PD_COUNT; d++)
    out[d] = by_dim[d];
  for (int i = 0; i < l->n; i++)
    group[i] = l->ops[i].kind != PLC_OPK_COMPUTE ? (int)l->ops[i].dim : -1;
  plc_sim_add_sums(s, l, group, PLC_PD_COUNT, NULL, NULL, out);
}

/* Add k x the figures of list l run alone to the device's. */
static void plc_device_list(plc_result *r, const plc_ir_list *l, mpq_srcptr k)
{
  const plc_ir_run *run = r->run;
  plc_sim_net net;
  plc_sim_net_of(run, &net);
  mpq_t zero, x;
  mpq_inits(zero, x, NULL);
  plc_sim_figs f;
  mpq_inits(f.compute, f.all_compute, f.useful, f.stall_other, NULL);
  for (int d = 0; d < PLC_PD_COUNT; d++)
    mpq_init(f.exposed[d]);
  plc_sim_run_figs(&f, l, run->nstreams, 0, zero, &net);
  mpq_srcptr v[4] = {f.compute, f.all_compute, f.useful, f.stall_other};
  mpq_ptr out[4] = {r->dev_compute, r->dev_all_compute, r->dev_useful, r->dev_stall};
  for (int i = 0; i < 4; i++) {
    plc_q_rat_mul(x, k, v[i]);
    plc_q_rat_add(out[i], out[i], x);
  }
  for (int d = 0; d < PLC_PD_COUNT; d++) { /* k x the sum is the sum of k x each */
    plc_q_rat_mul(x, k, f.exposed[d]);
    plc_q_rat_add(r->dev_exposed[d], r->dev_exposed[d], x);
    mpq_clear(f.exposed[d]);
  }
  mpq_clears(f.compute, f.all_compute, f.useful, f.stall_other, NULL);
  mpq_clears(zero, x, NULL);
}

/* Add k x one microbatch of the critical device's slot a (both phases). */
static void plc_device_add(plc_result *r, int a, mpq_srcptr k)
{
  for (int ph = 0; ph < 2; ph++) {
    plc_slot sl;
    plc_slot_of(r->run, r->device, a, ph, &sl);
    plc_device_list(r, sl.l, k);
    plc_slot_free(&sl);
  }
}

/* The critical device's F&B blocks: per slot a, nfb x (the overlapped
 * block's figures - its forward's - the other slot's backward's). */
static void plc_device_fb(plc_result *r)
{
  mpq_t n;
  mpq_init(n);
  for (int a = 0; r->fbo && a < 2; a++) {
    long c = r->nfb[r->device * 2 + a];
    if (!c)
      continue;
    plc_slot f, b;
    plc_slot_of(r->run, r->device, a, 0, &f);
    plc_slot_of(r->run, r->device, 1 - a, 1, &b);
    plc_fb_list m;
    plc_fb_merge(f.l, b.l, &m);
    mpq_set_si(n, c, 1);
    plc_device_list(r, &m.list, n);
    mpq_neg(n, n);
    plc_device_list(r, f.l, n);
    plc_device_list(r, b.l, n);
    plc_fb_free(&m);
    plc_slot_free(&f);
    plc_slot_free(&b);
  }
  mpq_clear(n);
}

/* The critical device's figures over the step: mu x the critical stage's
 * microbatch, or under DualPipe mu/2 x each of its two model stages', or
 * with chunks run as blocks (interleaved, dualpipev) mu x each chunk's
 * run alone; with F&B blocks, each of them as overlapped. */
static void plc_device_figs(plc_result *r)
{
  const plc_ir_run *run = r->run;
  int two = plc_two_parts(run);
  mpq_t k;
  mpq_init(k);
  if (r->nck || two) {
    mpq_set_si(k, run->mu, two ? 2 : 1);
    mpq_canonicalize(k);
    for (int a = 0; a < (r->nck ? r->nck : 2); a++)
      plc_device_add(r, a, k);
    plc_device_fb(r);
  } else {
    mpq_set_si(k, run->mu, 1);
    plc_q_rat_mul(r->dev_compute, k, r->compute_mb);
    plc_q_rat_mul(r->dev_all_compute, k, r->all_compute_mb);
    plc_q_rat_mul(r->dev_useful, k, r->useful_mb);
    plc_q_rat_mul(r->dev_stall, k, r->stall_mb);
    for (int d = 0; d < PLC_PD_COUNT; d++)
      plc_q_rat_mul(r->dev_exposed[d], k, r->exposed_mb[d]);
  }
  mpq_clear(k);
}

/* ---- inventory ---------------------------------------------------------------- */

/* The row of op, whose first op took `took` (its time, or longer when it
 * shared its link). */
static plc_coll_row *plc_row_for(plc_result *r, const plc_ir_op *op, mpq_srcptr took)
{
  for (int i = 0; i < r->nrows; i++)
    if (r->rows[i].dim == op->dim && r->rows[i].kind == op->kind && r->rows[i].phase == op->phase)
      return &r->rows[i];
  r->rows = plc_xrealloc(r->rows, (size_t)(r->nrows + 1) * sizeof *r->rows);
  plc_coll_row *row = &r->rows[r->nrows++];
  memset(row, 0, sizeof *row);
  mpq_inits(row->size_each, row->time_each, row->bytes, row->time, row->window, row->exposed,
            NULL);
  row->dim = op->dim;
  row->kind = op->kind;
  row->phase = op->phase;
  row->uniform = 1;
  mpq_set(row->size_each, op->size);
  mpq_set(row->time_each, took);
  return row;
}

/* The inventory of one list: a row's time is what its ops took, their
 * times but for a transfer slowed by sharing its link.  The times,
 * windows and exposures are summed per row by the simulator (on
 * integers, one rational per row), the rest op by op. */
static void plc_inventory(plc_result *r, const plc_ir_list *l, const plc_sim *s)
{
  int *group = plc_xmalloc(((size_t)l->n + 1) * sizeof *group);
  mpq_t took;
  mpq_init(took);
  for (int i = 0; i < l->n; i++) {
    const plc_ir_op *op = &l->ops[i];
    const plc_sim_op *so = &s->ops[i];
    group[i] = -1;
    if (!so->ran || op->kind == PLC_OPK_COMPUTE)
      continue;
    plc_sim_took(s, l, i, took);
    plc_coll_row *row = plc_row_for(r, op, took);
    group[i] = (int)(row - r->rows);
    row->count++;
    if (!mpq_equal(row->size_each, op->size) || !mpq_equal(row->time_each, took))
      row->uniform = 0;
    plc_q_rat_add(row->bytes, row->bytes, op->size);
    row->why[so->why]++;
    if (mpq_sgn(so->exposed) > 0)
      row->why_exposed[so->why]++;
  }
  mpq_clear(took);
  mpq_ptr *sums = plc_xmalloc(3 * ((size_t)r->nrows + 1) * sizeof *sums);
  for (int k = 0; k < r->nrows; k++) {
    sums[k] = r->rows[k].time;
    sums[r->nrows + k] = r->rows[k].window;
    sums[2 * r->nrows + k] = r->rows[k].exposed;
  }
  plc_sim_add_sums(s, l, group, r->nrows, sums, sums + r->nrows, sums + 2 * r->nrows);
  free(sums);
  plc_exposed_by_dim(s, l, group, r->exposed_mb);
  free(group);
}

/* ---- sums tallied by address ----------------------------------------------------- */

/* A sum of rationals tallied by address before they are added: the
 * copies of a layer's ops share their figures (the instance memo's, a
 * search's), so a list of thousands of ops adds a few dozen rationals,
 * each times its count (the sum is exact either way).  Open addressing,
 * at most half full. */
typedef struct plc_tally {
  size_t mask, used; /* slots - 1 (a power of two less one), slots taken */
  mpq_srcptr *q;
  long *count;
} plc_tally;

static void plc_tally_init(plc_tally *t, size_t mask)
{
  t->mask = mask;
  t->used = 0;
  t->q = plc_xcalloc(mask + 1, sizeof *t->q);
  t->count = plc_xmalloc((mask + 1) * sizeof *t->count);
}

static size_t plc_tally_slot(const plc_tally *t, mpq_srcptr q)
{
  size_t i = (size_t)(((uint64_t)(uintptr_t)q * 0x9E3779B97F4A7C15u) >> 32) & t->mask;
  while (t->q[i] && t->q[i] != q)
    i = (i + 1) & t->mask;
  return i;
}

static void plc_tally_add(plc_tally *t, mpq_srcptr q, long count);

/* Twice the slots, when half are taken. */
static void plc_tally_grow(plc_tally *t)
{
  plc_tally old = *t;
  plc_tally_init(t, 2 * old.mask + 1);
  for (size_t i = 0; i <= old.mask; i++)
    if (old.q[i])
      plc_tally_add(t, old.q[i], old.count[i]);
  free(old.q);
  free(old.count);
}

static void plc_tally_add(plc_tally *t, mpq_srcptr q, long count)
{
  size_t i = plc_tally_slot(t, q);
  if (!t->q[i]) {
    if (2 * (t->used + 1) > t->mask + 1) {
      plc_tally_grow(t);
      i = plc_tally_slot(t, q);
    }
    t->q[i] = q;
    t->count[i] = 0;
    t->used++;
  }
  t->count[i] += count;
}

/* Add the tally's sum to out, and free it. */
static void plc_tally_sum(plc_tally *t, mpq_t out)
{
  mpq_t x;
  mpq_init(x);
  for (size_t i = 0; i <= t->mask; i++)
    if (t->q[i]) {
      mpq_set_si(x, t->count[i], 1);
      plc_q_rat_mul(x, x, t->q[i]);
      plc_q_rat_add(out, out, x);
    }
  mpq_clear(x);
  free(t->q);
  free(t->count);
}

/* ---- weight gradients ------------------------------------------------------------ */

static int plc_wg_all(const plc_ir_op *op)
{
  return op->kind == PLC_OPK_COMPUTE && op->phase == PLC_PH_BWD;
}

static int plc_wg_marked(const plc_ir_op *op) { return plc_wg_all(op) && op->wgrad; }

/* Weight-gradient time t_w for ZB-H1 and DualPipe: the backward compute
 * ops marked `wgrad`; when the templates mark none, half of the backward
 * compute (recompute excluded), the usual even split of input and weight
 * gradients.  `once` ops aside.  A stage list's sum is on the analysis's
 * integers (plc_sim_memo_sum), another's tallied by address. */
void plc_weight_grad_time(const plc_ir_list *l, mpq_t out)
{
  int marked = 0;
  for (int i = 0; i < l->n && !marked; i++)
    marked = !l->ops[i].once && plc_wg_marked(&l->ops[i]);
  plc_sim_counts_fn *counts = marked ? plc_wg_marked : plc_wg_all;
  if (!plc_sim_memo_sum(out, l, counts)) {
    plc_tally t;
    plc_tally_init(&t, 63);
    for (int i = 0; i < l->n; i++)
      if (!l->ops[i].once && counts(&l->ops[i]))
        plc_tally_add(&t, l->ops[i].time, 1);
    mpq_set_ui(out, 0, 1);
    plc_tally_sum(&t, out);
  }
  if (!marked)
    mpq_div_2exp(out, out, 1);
}

/* ---- bubble ------------------------------------------------------------------- */

/* The schedule's closed form into r->bubble_formula (none for custom). */
static void plc_bubble_closed(plc_result *r)
{
  const plc_ir_run *run = r->run;
  long p = run->size[PLC_PD_PP];
  const char *s = run->schedule;
  r->bubble_formula_known = strcmp(s, "custom") != 0;
  if (!r->bubble_formula_known)
    return;
  mpq_t k, x;
  mpq_inits(k, x, NULL);
  mpq_set(x, r->t);
  if (!strcmp(s, "interleaved")) {
    mpq_set_si(k, p - 1, (unsigned long)run->vpp);
  } else if (!strcmp(s, "zb_h1")) {
    mpq_set_si(k, p - 1, 1);
    plc_q_rat_sub(x, x, r->t_w);
    plc_q_rat_sub(x, x, r->t_w);
  } else if (!strcmp(s, "dualpipe") || !strcmp(s, "dualpipev")) {
    /* DualPipe: (p/2 - 1)(t_F&B + t_b - 3 t_w), t_F&B the critical
     * stage's forward and backward overlapped (r->t_fb); dualpipev is
     * DualPipe's with PP = 2p stages of chunk times t/2:
     * (p - 1)(t_F&B + t_b - 3 t_w)/2 */
    mpq_set_si(k, !strcmp(s, "dualpipev") ? p - 1 : p - 2, 2);
    plc_q_rat_add(x, r->t_fb, r->t_b);
    mpq_t w3;
    mpq_init(w3);
    mpq_set_ui(w3, 3, 1);
    plc_q_rat_mul(w3, w3, r->t_w);
    plc_q_rat_sub(x, x, w3);
    mpq_clear(w3);
  } else { /* gpipe, 1f1b */
    mpq_set_si(k, p - 1, 1);
  }
  mpq_canonicalize(k);
  plc_q_rat_mul(r->bubble_formula, k, x);
  if (mpq_sgn(r->bubble_formula) < 0)
    mpq_set_ui(r->bubble_formula, 0, 1);
  mpq_clears(k, x, NULL);
}

/* The step's bubble: measured at block level when the schedule's blocks
 * can run, else the closed form (a custom order the driver accepted
 * always runs). */
static void plc_bubble(plc_result *r)
{
  plc_bubble_closed(r);
  r->bubble_measured = plc_blocks_measure(r->run, r, r->bubble_why, sizeof r->bubble_why);
  if (!r->bubble_measured)
    mpq_set(r->bubble, r->bubble_formula); /* 0 for a refused custom order */
}

char *plc_bubble_formula(const plc_result *r, int digits, int exact)
{
  const plc_ir_run *run = r->run;
  plc_quantity a, b, w;
  plc_q_init(&a);
  plc_q_init(&b);
  plc_q_init(&w);
  mpq_set(a.v, r->t_f);
  mpq_set(b.v, r->t_b);
  mpq_set(w.v, r->t_w);
  a.dim = b.dim = w.dim = plc_dim_base(PLC_DIM_SEC);
  char *tf = plc_q_format(&a, digits, exact), *tb = plc_q_format(&b, digits, exact);
  char *tw = plc_q_format(&w, digits, exact);
  mpq_set(a.v, r->t_fb);
  char *tfb = plc_q_format(&a, digits, exact);
  size_t n = strlen(tf) + strlen(tb) + strlen(tw) + strlen(tfb) + 160;
  char *out = plc_xmalloc(n);
  int p = run->size[PLC_PD_PP];
  const char *s = run->schedule;
  if (!strcmp(s, "interleaved"))
    snprintf(out, n, "(p - 1)(t_f + t_b)/v = (%d - 1) x (%s + %s) / %d", p, tf, tb, run->vpp);
  else if (!strcmp(s, "zb_h1"))
    snprintf(out, n, "(p - 1)(t_f + t_b - 2 t_w) = (%d - 1) x (%s + %s - 2 x %s)", p, tf, tb, tw);
  else if (!strcmp(s, "dualpipe"))
    snprintf(out, n, "(p/2 - 1)(t_F&B + t_b - 3 t_w) = (%d/2 - 1) x (%s + %s - 3 x %s)", p,
             tfb, tb, tw);
  else if (!strcmp(s, "dualpipev"))
    snprintf(out, n, "(p - 1)(t_F&B + t_b - 3 t_w)/2 = (%d - 1) x (%s + %s - 3 x %s) / 2", p,
             tfb, tb, tw);
  else if (!strcmp(s, "custom"))
    snprintf(out, n, "the custom order run at block level (each block its stage's t_f, t_b, "
             "t_w): makespan - mu (t_f + t_b) of the busiest stage");
  else
    snprintf(out, n, "(p - 1)(t_f + t_b) = (%d - 1) x (%s + %s)", p, tf, tb);
  free(tf);
  free(tb);
  free(tw);
  free(tfb);
  plc_q_clear(&a);
  plc_q_clear(&b);
  plc_q_clear(&w);
  return out;
}

/* ---- DP tail ------------------------------------------------------------------ */

/* The time of a stage's gradient sync: its `once` ops in the backward
 * (on integers from the analysis's memo when its runs put the backward's
 * durations with them there) and its `step` ops. */
static void plc_sum_sync(mpq_t out, const plc_ir_stage *st)
{
  if (!plc_sim_memo_once_sum(out, &st->bwd)) {
    mpq_set_ui(out, 0, 1);
    for (int i = 0; i < st->bwd.n; i++)
      if (st->bwd.ops[i].once)
        plc_q_rat_add(out, out, st->bwd.ops[i].time);
  }
  for (int i = 0; i < st->step.n; i++)
    plc_q_rat_add(out, out, st->step.ops[i].time);
}

/* Whether an op's end counts for its block: all but the sends that leave
 * its chunk (plc_chunk_leaves). */
static int plc_chunk_stays(const plc_ir_op *op) { return !plc_chunk_leaves(op); }

/* What a stage's gradient sync (its `once` ops in the last backward, then
 * its `step` ops) leaves after its normal backward ends.  When its chunks
 * run as blocks of their own (per_chunk) a block ends without the sends
 * that leave it (they delay the next stage, plc_chunk_of), so the
 * backward and the sync are both measured without them: a faster or free
 * send must not lengthen the tail, as it did when t_b counted it.  back
 * is the normal backward's end so measured (r->tk, worked out with t_b
 * from the same run); ran, when given, the backward's end with its once
 * ops so measured (r->tw, from that run too: plc_sim_ends_once). */
static void plc_stage_tail(const plc_ir_run *run, int s, mpq_srcptr back, int per_chunk,
                           mpq_srcptr ran, mpq_t tail)
{
  const plc_ir_stage *st = &run->stages[s];
  plc_sim_net net;
  plc_sim_net_of(run, &net);
  mpq_t zero, last, step;
  mpq_inits(zero, last, step, NULL);
  if (ran) /* from t_b's run (plc_stage_ends) */
    mpq_set(last, ran);
  else
    plc_sim_end_of(last, &st->bwd, run->nstreams, 1, zero,
                   per_chunk ? plc_chunk_stays : NULL, &net);
  plc_sim_end(step, &st->step, run->nstreams, 1, last, &net);
  plc_q_rat_sub(tail, step, back);
  if (mpq_sgn(tail) < 0)
    mpq_set_ui(tail, 0, 1);
  mpq_clears(zero, last, step, NULL);
}

static void plc_tail(plc_result *r, const plc_result *base, unsigned changed)
{
  const plc_ir_run *run = r->run;
  mpq_t t;
  mpq_init(t);
  for (int s = 0; s < run->nstages; s++) {
    if (r->cls[s] != s)
      continue; /* the same lists as an earlier stage: the same sync */
    plc_sum_sync(t, &run->stages[s]);
    if (mpq_cmp(t, r->tail_full) > 0)
      mpq_set(r->tail_full, t);
  }
  if (run->dp_tail) {
    r->tail_kind = PLC_TAIL_PINNED;
    mpq_set(r->tail, run->dp_tail);
  } else if (run->dp_hidden) {
    r->tail_kind = PLC_TAIL_DECLARED;
    mpq_set_ui(t, 1, 1);
    plc_q_rat_sub(t, t, run->dp_hidden);
    plc_q_rat_mul(r->tail, t, r->tail_full);
  } else if (mpq_sgn(r->tail_full) > 0) {
    r->tail_kind = PLC_TAIL_SIMULATED;
    for (int s = 0; s < run->nstages; s++) { /* every stage syncs; the slowest counts */
      if (r->cls[s] != s)
        continue;
      if (base && !(changed & PLC_CHANGED_BWD))
        mpq_set(r->tl[s], base->tl[s]);
      else
        plc_stage_tail(run, s, r->tk[s], r->nck > 0, r->tw_ok[s] ? r->tw[s] : NULL,
                       r->tl[s]);
      if (mpq_cmp(r->tl[s], r->tail) > 0)
        mpq_set(r->tail, r->tl[s]);
    }
  }
  mpq_clear(t);
}

/* ---- efficiency ---------------------------------------------------------------- */

/* Op op's useful FLOPs, count times (plc_flops_useful). */
static void plc_flops_op(const plc_ir_op *op, plc_tally *t, int *all_known, long count)
{
  if (!op->useful || op->once)
    return;
  if (op->pinned && mpq_sgn(op->flops) == 0)
    *all_known = 0;
  plc_tally_add(t, op->flops, count);
}

/* Where the blocks of region g begin to share their FLOPs: the first
 * start a + m b (m >= 0, at most e) from which every op past the first
 * block has the FLOPs (the same rational, by address) of the op a block
 * before it.  A region's first copy of a layer may have rationals of its
 * own (sim.c takes it in when its times are equal by value). */
static int plc_flops_repeat(const plc_ir_list *l, const plc_sim_block *g)
{
  for (int i = g->e - 1; i >= g->a + g->b; i--)
    if (l->ops[i].flops != l->ops[i - g->b].flops)
      return g->a + (i - g->a) / g->b * g->b;
  return g->a;
}

/* The useful FLOPs of a list.  An op costed from bytes alone does no model
 * FLOPs (a memory-bound op); only an op whose time was pinned without flops
 * leaves them unknown.  A region of repeated blocks the analysis's memo
 * found (plc_sim_memo_blocks) whose copies share their FLOPs by address
 * is tallied from its first block: op i of [a + b, e) is alike op i - b
 * (the same useful, once and pinned) and, from where their FLOPs repeat
 * (plc_flops_repeat, a block start a'), has the same flops, so it adds
 * what that op adds, and by induction what op a' + (i - a') mod b adds;
 * op j of [a', a' + b) stands for j, j + b, ... below e, (e - 1 - j) / b
 * + 1 ops.  The tally sums count x flops per address: the same sum, and
 * all_known the same. */
static void plc_flops_useful(const plc_ir_list *l, plc_tally *t, int *all_known)
{
  plc_sim_block g[PLC_SIM_BLOCKS];
  int ng = plc_sim_memo_blocks(l, g), i = 0;
  for (int k = 0; k < ng; k++) {
    int a = plc_flops_repeat(l, &g[k]), b = g[k].b, e = g[k].e;
    for (; i < a; i++)
      plc_flops_op(&l->ops[i], t, all_known, 1);
    for (; i < a + b && i < e; i++)
      plc_flops_op(&l->ops[i], t, all_known, (e - 1 - i) / b + 1);
    i = e;
  }
  for (; i < l->n; i++)
    plc_flops_op(&l->ops[i], t, all_known, 1);
}

/* MFU = model FLOPs per step / (world x peak x step).  The useful FLOPs of
 * one microbatch over all stages are done by world/pp replicas mu times, so
 * MFU = mu x sum_s useful_s / (pp x peak x step).  Unknown when some useful
 * compute has only a pinned time, or when the step takes no time. */
static void plc_mfu(plc_result *r)
{
  const plc_ir_run *run = r->run;
  mpq_t f, d;
  mpq_inits(f, d, NULL);
  r->mfu_known = 1;
  plc_tally t;
  plc_tally_init(&t, 63);
  for (int s = 0; s < run->nstages; s++) {
    plc_flops_useful(&run->stages[s].fwd, &t, &r->mfu_known);
    plc_flops_useful(&run->stages[s].bwd, &t, &r->mfu_known);
  }
  plc_tally_sum(&t, f);
  if (!r->mfu_known)
    r->mfu_why = "useful compute with a pinned time and no flops";
  else if (mpq_sgn(r->step) <= 0)
    r->mfu_why = "the step takes no time";
  if (!r->mfu_why) {
    mpq_set_si(d, run->mu, 1);
    plc_q_rat_mul(f, f, d);
    mpq_set_si(d, run->size[PLC_PD_PP], 1);
    plc_q_rat_mul(d, d, run->peak);
    plc_q_rat_mul(d, d, r->step);
    plc_q_rat_div(r->mfu, f, d);
  } else {
    r->mfu_known = 0;
  }
  mpq_clears(f, d, NULL);
}

void plc_analyse_step_ratios(plc_result *r)
{
  const plc_ir_run *run = r->run;
  if (mpq_sgn(r->step) > 0) {
    mpq_set_si(r->tokens_per_s, (long)run->global_batch * run->seq, 1);
    plc_q_rat_div(r->tokens_per_s, r->tokens_per_s, r->step);
  }
  plc_mfu(r);
}

static void plc_ratios(plc_result *r)
{
  if (mpq_sgn(r->step) > 0) {
    plc_q_rat_div(r->eta, r->dev_useful, r->step); /* the critical device's */
    plc_q_rat_div(r->busy, r->dev_all_compute, r->step);
  }
  plc_analyse_step_ratios(r);
}

/* The critical stage's microbatch times (its lists' ends) and t_w. */
static void plc_microbatch_times(plc_result *r)
{
  const plc_ir_stage *st = &r->run->stages[r->critical];
  mpq_set(r->t_f, r->tf[r->critical]);
  mpq_set(r->t_b, r->tb[r->critical]);
  plc_q_rat_add(r->t, r->t_f, r->t_b);
  plc_weight_grad_time(&st->bwd, r->t_w);
}

/* The critical stage's microbatch simulated in full (unless plc_stage_figs
 * did): its compute and exposure. */
static void plc_microbatch(plc_result *r)
{
  const plc_ir_run *run = r->run;
  const plc_ir_stage *st = &run->stages[r->critical];
  if (r->no_sims) {
    plc_sim_net net;
    plc_sim_net_of(run, &net);
    mpq_t zero;
    mpq_init(zero);
    plc_sim_run(&r->fwd, &st->fwd, run->nstreams, 0, zero, &net);
    plc_sim_run(&r->bwd, &st->bwd, run->nstreams, 0, zero, &net);
    mpq_clear(zero);
  }
  plc_q_rat_add(r->compute_mb, r->fwd.compute, r->bwd.compute);
  plc_q_rat_add(r->all_compute_mb, r->fwd.all_compute, r->bwd.all_compute);
  plc_q_rat_add(r->useful_mb, r->fwd.useful, r->bwd.useful);
  plc_q_rat_add(r->stall_mb, r->fwd.stall_other, r->bwd.stall_other);
  plc_inventory(r, &st->fwd, &r->fwd);
  plc_inventory(r, &st->bwd, &r->bwd);
}

/* The step from its parts: the critical device's work + bubble + DP tail
 * + optimizer. */
static void plc_step_sum(plc_result *r)
{
  const plc_ir_run *run = r->run;
  if (run->optimizer_time)
    mpq_set(r->optimizer, run->optimizer_time);
  plc_q_rat_add(r->step, r->work, r->bubble);
  plc_q_rat_add(r->step, r->step, r->tail);
  plc_q_rat_add(r->step, r->step, r->optimizer);
}

/* The step first: every figure the step is made of.  With sims the
 * critical stage is simulated in full on the way (plc_stage_figs), else
 * only the stage lists' end times are (plc_analyse_rest runs it). */
static void plc_analyse_begin(plc_result *r, const plc_ir_run *run, int sims)
{
  plc_result_init(r);
  r->memo = plc_xmalloc(sizeof *r->memo);
  plc_sim_memo_push(r->memo, run);
  r->run = run;
  r->no_sims = !sims;
  plc_stage_figs(r, NULL, 0);
  if (r->critical >= 0)
    plc_microbatch_times(r);
  plc_chunk_figs(r, NULL, 0);
  plc_fb_pairs(r, NULL);
  plc_device(r);
  plc_bubble(r);
  plc_tail(r, NULL, 0);
  plc_step_sum(r);
}

void plc_analyse_first(plc_result *r, const plc_ir_run *run)
{
  plc_analyse_begin(r, run, 0);
}

void plc_analyse_rest(plc_result *r, int figures)
{
  if (figures) {
    if (r->critical >= 0)
      plc_microbatch(r);
    r->no_sims = 0;
    plc_device_figs(r);
    plc_ratios(r);
  }
  plc_sim_memo_pop(r->memo);
  free(r->memo);
  r->memo = NULL;
}

void plc_analyse(plc_result *r, const plc_ir_run *run)
{
  plc_analyse_begin(r, run, 1);
  plc_analyse_rest(r, 1);
}

void plc_analyse_step(plc_result *r, const plc_ir_run *run, const plc_result *base,
                      unsigned changed)
{
  plc_sim_memo memo;
  plc_sim_memo_push(&memo, run);
  plc_result_init(r);
  r->run = run;
  r->no_sims = 1;
  plc_stage_figs(r, base, changed);
  const plc_ir_stage *st = &run->stages[r->critical];
  mpq_set(r->t_f, r->tf[r->critical]);
  mpq_set(r->t_b, r->tb[r->critical]);
  plc_q_rat_add(r->t, r->t_f, r->t_b);
  plc_weight_grad_time(&st->bwd, r->t_w);
  plc_chunk_figs(r, base, changed);
  plc_fb_pairs(r, base);
  plc_device(r);
  plc_bubble(r);
  plc_tail(r, base, changed);
  plc_step_sum(r);
  plc_sim_memo_pop(&memo);
}
