/* timeline.c - laying simulated op lists out on a time axis (timeline.h),
 * walking what was laid out, and the atomic file writer the pictures share. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "output.h"
#include "timeline.h"
#include "xalloc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- building ------------------------------------------------------------ */

static void plc_timeline_init(plc_timeline *tl, const plc_result *res)
{
  memset(tl, 0, sizeof *tl);
  tl->run = res->run;
  tl->critical = res->critical;
  tl->stages = plc_xcalloc((size_t)res->run->nstages + 1, sizeof *tl->stages);
  mpq_init(tl->end);
}

static plc_timeline_stage *plc_timeline_stage_new(plc_timeline *tl, int s)
{
  plc_timeline_stage *st = &tl->stages[tl->nstages++];
  st->stage = s;
  st->blocks = plc_xcalloc(2 * PLC_TIMELINE_MAX_MICRO + 2, sizeof *st->blocks);
  mpq_inits(st->bwd_at, st->end, NULL);
  return st;
}

/* Run a list from 0 as the analysis does; the stage keeps the result. */
static const plc_sim *plc_timeline_sim(plc_timeline_stage *st, const plc_ir_run *run,
                                       const plc_ir_list *l, int with_once)
{
  plc_sim *s = &st->sims[st->nsims++];
  mpq_t zero;
  mpq_init(zero);
  plc_sim_net net;
  plc_sim_net_of(run, &net);
  plc_sim_run(s, l, run->nstreams, with_once, zero, &net);
  plc_sim_times(s); /* drawn op by op */
  mpq_clear(zero);
  return s;
}

/* Put a simulated list at `at`, and move `at` past the end of its streams. */
static void plc_timeline_place(plc_timeline_stage *st, const plc_ir_list *l, const plc_sim *s,
                               const char *label, long micro, mpq_t at)
{
  plc_timeline_block *b = &st->blocks[st->nblocks++];
  b->list = l;
  b->sim = s;
  b->label = label;
  b->micro = micro;
  mpq_init(b->off);
  mpq_set(b->off, at);
  mpq_add(at, at, s->end);
  if (mpq_cmp(at, st->end) > 0)
    mpq_set(st->end, at);
}

/* Whether an op is drawn: it ran and took time.  Ops of no duration are
 * markers (the slot ops that bound FSDP2's and ZeRO-3's lookahead): an
 * event of length 0, and a lane holding only such, would show nothing. */
static int plc_timeline_drawn(const plc_sim_op *so)
{
  return so->ran && mpq_cmp(so->start, so->end) < 0;
}

/* The streams with ops drawn in the stage's blocks: compute first, then by
 * name. */
static void plc_timeline_streams(plc_timeline_stage *st, const plc_ir_run *run)
{
  int *used = plc_xcalloc((size_t)run->nstreams + 1, sizeof *used);
  used[0] = 1;
  for (int k = 0; k < st->nblocks; k++)
    for (int i = 0; i < st->blocks[k].list->n; i++)
      if (plc_timeline_drawn(&st->blocks[k].sim->ops[i]))
        used[st->blocks[k].list->ops[i].stream] = 1;
  st->streams = plc_xmalloc(((size_t)run->nstreams + 1) * sizeof *st->streams);
  for (int k = 0; k < run->nstreams; k++)
    if (used[k])
      st->streams[st->nstreams++] = k;
  for (int i = 2; i < st->nstreams; i++) /* insertion sort by name, compute kept first */
    for (int j = i; j > 1 && strcmp(run->streams[st->streams[j - 1]],
                                    run->streams[st->streams[j]]) > 0; j--) {
      int t = st->streams[j];
      st->streams[j] = st->streams[j - 1];
      st->streams[j - 1] = t;
    }
  free(used);
}

static void plc_timeline_one(plc_timeline *tl, int s)
{
  const plc_ir_run *run = tl->run;
  plc_timeline_stage *st = plc_timeline_stage_new(tl, s);
  const plc_sim *f = plc_timeline_sim(st, run, &run->stages[s].fwd, 0);
  const plc_sim *b = plc_timeline_sim(st, run, &run->stages[s].bwd, 0);
  mpq_t at;
  mpq_init(at);
  plc_timeline_place(st, &run->stages[s].fwd, f, "fwd", 0, at);
  mpq_set(st->bwd_at, at);
  plc_timeline_place(st, &run->stages[s].bwd, b, "bwd", 0, at);
  mpq_clear(at);
  plc_timeline_streams(st, run);
  if (mpq_cmp(st->end, tl->end) > 0)
    mpq_set(tl->end, st->end);
}

void plc_timeline_microbatch(plc_timeline *tl, const plc_result *res, int stage)
{
  plc_timeline_init(tl, res);
  for (int s = 0; s < res->run->nstages; s++)
    if (stage < 0 || s == stage)
      plc_timeline_one(tl, s);
}

/* The microbatches shown: all of them, or the first ones and the last. */
static long plc_timeline_shown(long mu, long k)
{
  if (mu <= PLC_TIMELINE_MAX_MICRO || k < PLC_TIMELINE_MAX_MICRO - 1)
    return k;
  return mu - 1;
}

static void plc_timeline_seq_stage(plc_timeline *tl, int s)
{
  const plc_ir_run *run = tl->run;
  const plc_ir_stage *is = &run->stages[s];
  plc_timeline_stage *st = plc_timeline_stage_new(tl, s);
  const plc_sim *f = plc_timeline_sim(st, run, &is->fwd, 0);
  const plc_sim *b = plc_timeline_sim(st, run, &is->bwd, 0);
  const plc_sim *last = plc_timeline_sim(st, run, &is->bwd, 1);
  const plc_sim *step = plc_timeline_sim(st, run, &is->step, 1);
  long mu = run->mu < 1 ? 1 : run->mu, n = mu < PLC_TIMELINE_MAX_MICRO ? mu : PLC_TIMELINE_MAX_MICRO;
  mpq_t at, span;
  mpq_inits(at, span, NULL);
  mpq_add(span, f->end, b->end);
  for (long k = 0; k < n; k++) {
    long m = plc_timeline_shown(mu, k);
    mpq_set_si(at, m, 1);
    mpq_mul(at, at, span);
    plc_timeline_place(st, &is->fwd, f, "fwd", m, at);
    if (m == 0)
      mpq_set(st->bwd_at, at);
    plc_timeline_place(st, &is->bwd, m == mu - 1 ? last : b, "bwd", m, at);
  }
  plc_timeline_place(st, &is->step, step, "step", -1, at);
  mpq_clears(at, span, NULL);
  plc_timeline_streams(st, run);
  if (mpq_cmp(st->end, tl->end) > 0)
    mpq_set(tl->end, st->end);
}

void plc_timeline_sequence(plc_timeline *tl, const plc_result *res)
{
  plc_timeline_init(tl, res);
  for (int s = 0; s < res->run->nstages; s++)
    plc_timeline_seq_stage(tl, s);
}

void plc_timeline_free(plc_timeline *tl)
{
  for (int s = 0; s < tl->nstages; s++) {
    plc_timeline_stage *st = &tl->stages[s];
    for (int k = 0; k < st->nsims; k++)
      plc_sim_free(&st->sims[k]);
    for (int k = 0; k < st->nblocks; k++)
      mpq_clear(st->blocks[k].off);
    free(st->blocks);
    free(st->streams);
    mpq_clears(st->bwd_at, st->end, NULL);
  }
  free(tl->stages);
  mpq_clear(tl->end);
}

/* ---- walking --------------------------------------------------------------- */

typedef struct plc_timeline_walk {
  const plc_timeline_block *blk;
  plc_timeline_fn *fn;
  void *ctx;
  mpq_t a, b;
} plc_timeline_walk;

static void plc_timeline_emit(plc_timeline_walk *w, plc_timeline_what what, int stream, int op)
{
  plc_timeline_item it = {what, stream, NULL, NULL, w->blk, w->a, w->b};
  if (op >= 0) {
    it.op = &w->blk->list->ops[op];
    it.so = &w->blk->sim->ops[op];
  }
  w->fn(w->ctx, &it);
}

/* A stall part: a wait on the compute stream and, when a collective on
 * another stream was waited for, its exposed part on its own stream. */
static void plc_timeline_part(void *ctx, int op, mpq_srcptr lo, mpq_srcptr hi)
{
  plc_timeline_walk *w = ctx;
  mpq_add(w->a, w->blk->off, lo);
  mpq_add(w->b, w->blk->off, hi);
  plc_timeline_emit(w, PLC_TL_WAIT, 0, op);
  const plc_ir_op *o = op >= 0 ? &w->blk->list->ops[op] : NULL;
  if (o && o->kind != PLC_OPK_COMPUTE && o->stream != 0)
    plc_timeline_emit(w, PLC_TL_EXPOSED, o->stream, op);
}

void plc_timeline_each(const plc_timeline_stage *st, plc_timeline_fn *fn, void *ctx)
{
  plc_timeline_walk w;
  w.fn = fn;
  w.ctx = ctx;
  mpq_t zero;
  mpq_inits(w.a, w.b, zero, NULL);
  for (int k = 0; k < st->nblocks; k++) {
    w.blk = &st->blocks[k];
    for (int i = 0; i < w.blk->list->n; i++) {
      const plc_sim_op *so = &w.blk->sim->ops[i];
      if (!plc_timeline_drawn(so))
        continue;
      mpq_add(w.a, w.blk->off, so->start);
      mpq_add(w.b, w.blk->off, so->end);
      plc_timeline_emit(&w, PLC_TL_OP, w.blk->list->ops[i].stream, i);
    }
    plc_sim_stalls(w.blk->sim, w.blk->list, zero, plc_timeline_part, &w);
  }
  mpq_clears(w.a, w.b, zero, NULL);
}

/* ---- helpers --------------------------------------------------------------- */

void plc_timeline_round(mpz_t out, mpq_srcptr t, mpq_srcptr k)
{
  mpq_t x;
  mpz_t n, d;
  mpq_init(x);
  mpz_inits(n, d, NULL);
  mpq_mul(x, t, k);
  mpz_mul_2exp(n, mpq_numref(x), 1);
  mpz_add(n, n, mpq_denref(x));
  mpz_mul_2exp(d, mpq_denref(x), 1);
  mpz_fdiv_q(out, n, d); /* floor(x + 1/2) */
  mpq_clear(x);
  mpz_clears(n, d, NULL);
}

void plc_timeline_label(char *buf, size_t n, const plc_ir_op *op, int full)
{
  if (full && op->layer >= 0)
    snprintf(buf, n, "L%d %s", op->layer, op->name);
  else
    snprintf(buf, n, "%s", op->name);
}

/* ---- atomic files ------------------------------------------------------------ */

int plc_timeline_save(const char *path, plc_timeline_writer *write, void *ctx)
{
  plc_output o;
  if (plc_output_open(&o, path) != 0)
    return -1;
  if (write(o.f, ctx) != 0) {
    fprintf(stderr, "plc: error: cannot write '%s': the output could not be produced\n", path);
    plc_output_abort(&o);
    return -1;
  }
  return plc_output_commit(&o);
}
