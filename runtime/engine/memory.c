/* memory.c - per-device memory over a training step (see memory.h). */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "memory.h"
#include "analysis.h"
#include "runsched.h"
#include "xalloc.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void plc_mem_stage_init(plc_mem_stage *st)
{
  mpq_inits(st->weights, st->grads, st->optimizer, st->activations, st->buffers, st->peak,
            st->headroom, NULL);
  st->inflight = st->max_inflight = 0;
}

void plc_mem_stage_clear(plc_mem_stage *st)
{
  mpq_clears(st->weights, st->grads, st->optimizer, st->activations, st->buffers, st->peak,
             st->headroom, NULL);
}

/* ---- one stage's walk ----------------------------------------------------- */

plc_mem_ev plc_mem_event(const plc_sched_block *b)
{
  plc_mem_ev e = {-1, -1, b->chunk, -1};
  switch (b->phase) {
  case PLC_SCHED_F: e.alloc = b->chunk; break;
  case PLC_SCHED_B: e.release = b->split ? -1 : b->chunk; break;
  case PLC_SCHED_W: e.release = b->chunk; break;
  default: /* FB: its forward allocates before its backward frees */
    e.alloc = b->chunk;
    e.buf2 = b->chunk2;
    e.release = b->split ? -1 : b->chunk2;
    break;
  }
  return e;
}

/* The walk's state: chunks in flight now and at the best level so far. */
typedef struct plc_mem_state {
  int *cnt, *best_cnt, nchunks;
  int total, max_total, best_buf; /* best_buf: the chunk whose buffers count at the best */
} plc_mem_state;

static void plc_mem_apply(plc_mem_state *w, int chunk, int delta)
{
  w->cnt[chunk] += delta;
  w->total += delta;
  if (w->total > w->max_total)
    w->max_total = w->total;
}

static void plc_mem_snapshot(plc_mem_state *w, int buf)
{
  memcpy(w->best_cnt, w->cnt, (size_t)w->nchunks * sizeof *w->cnt);
  w->best_buf = buf;
}

/* Machine integers: act and buf scaled to a common denominator.  Every
 * level is at most sum(act) * blocks + max(buf), checked to fit first. */
static void plc_mem_walk64(const plc_sched_block *blocks, int n, const int64_t *a,
                           const int64_t *b, plc_mem_state *w)
{
  int64_t level = 0, best = -1;
  for (int i = 0; i < n; i++) {
    plc_mem_ev e = plc_mem_event(&blocks[i]);
    if (e.alloc >= 0) {
      level += a[e.alloc];
      plc_mem_apply(w, e.alloc, 1);
    }
    int buf = e.buf2 >= 0 && b[e.buf2] > b[e.buf1] ? e.buf2 : e.buf1;
    if (level + b[buf] > best) {
      best = level + b[buf];
      plc_mem_snapshot(w, buf);
    }
    if (e.release >= 0 && w->cnt[e.release] > 0) {
      level -= a[e.release];
      plc_mem_apply(w, e.release, -1);
    }
  }
}

/* The same on rationals, when the integers would not fit. */
static void plc_mem_walkq(const plc_sched_block *blocks, int n, mpq_t *a, mpq_t *b,
                          plc_mem_state *w)
{
  mpq_t level, best, x;
  mpq_inits(level, best, x, NULL);
  mpq_set_si(best, -1, 1);
  for (int i = 0; i < n; i++) {
    plc_mem_ev e = plc_mem_event(&blocks[i]);
    if (e.alloc >= 0) {
      plc_q_rat_add(level, level, a[e.alloc]);
      plc_mem_apply(w, e.alloc, 1);
    }
    int buf = e.buf2 >= 0 && mpq_cmp(b[e.buf2], b[e.buf1]) > 0 ? e.buf2 : e.buf1;
    plc_q_rat_add(x, level, b[buf]);
    if (mpq_cmp(x, best) > 0) {
      mpq_set(best, x);
      plc_mem_snapshot(w, buf);
    }
    if (e.release >= 0 && w->cnt[e.release] > 0) {
      plc_q_rat_sub(level, level, a[e.release]);
      plc_mem_apply(w, e.release, -1);
    }
  }
  mpq_clears(level, best, x, NULL);
}

/* Scale act and buf to integers over their common denominator: 1 when all
 * of them, and the largest level n blocks could reach, fit in 62 bits. */
static int plc_mem_scale(int n, int nchunks, mpq_t *act, mpq_t *buf, int64_t *a, int64_t *b)
{
  mpz_t den, v, bound;
  mpz_inits(den, v, bound, NULL);
  mpz_set_ui(den, 1);
  for (int c = 0; c < nchunks; c++) {
    mpz_lcm(den, den, mpq_denref(act[c]));
    mpz_lcm(den, den, mpq_denref(buf[c]));
  }
  int ok = 1;
  for (int c = 0; c < nchunks && ok; c++)
    for (int k = 0; k < 2 && ok; k++) {
      mpq_srcptr q = k ? buf[c] : act[c];
      mpz_divexact(v, den, mpq_denref(q));
      mpz_mul(v, v, mpq_numref(q));
      mpz_addmul_ui(bound, v, k ? 1 : (unsigned long)n + 1);
      ok = mpz_sizeinbase(bound, 2) <= 62;
      (k ? b : a)[c] = ok ? (int64_t)mpz_get_si(v) : 0;
    }
  mpz_clears(den, v, bound, NULL);
  return ok;
}

/* act and buf scaled for walks of up to n blocks: a and b when they fit
 * (plc_mem_scale), else NULL.  Free with plc_mem_scaled_free. */
typedef struct plc_mem_scaled {
  int64_t *a, *b;
} plc_mem_scaled;

static plc_mem_scaled plc_mem_scaled_of(int n, int nchunks, mpq_t *act, mpq_t *buf)
{
  plc_mem_scaled sc = {plc_xmalloc((size_t)nchunks * sizeof *sc.a + 1),
                       plc_xmalloc((size_t)nchunks * sizeof *sc.b + 1)};
  if (!plc_mem_scale(n, nchunks, act, buf, sc.a, sc.b)) {
    free(sc.a);
    free(sc.b);
    sc.a = sc.b = NULL;
  }
  return sc;
}

static void plc_mem_scaled_free(plc_mem_scaled *sc)
{
  free(sc->a);
  free(sc->b);
}

/* plc_mem_walk with act and buf scaled already (sc, for n blocks or
 * more). */
static void plc_mem_walk_scaled(const plc_sched_block *blocks, int n, int nchunks, mpq_t *act,
                                mpq_t *buf, const plc_mem_scaled *sc, plc_mem_stage *out)
{
  plc_mem_state w = {.nchunks = nchunks};
  w.cnt = plc_xcalloc((size_t)nchunks, sizeof *w.cnt);
  w.best_cnt = plc_xcalloc((size_t)nchunks, sizeof *w.best_cnt);
  if (sc->a)
    plc_mem_walk64(blocks, n, sc->a, sc->b, &w);
  else
    plc_mem_walkq(blocks, n, act, buf, &w);
  mpq_set_ui(out->activations, 0, 1);
  out->inflight = 0;
  for (int c = 0; c < nchunks; c++) {
    mpq_t x;
    mpq_init(x);
    mpq_set_si(x, w.best_cnt[c], 1);
    plc_q_rat_mul(x, x, act[c]);
    plc_q_rat_add(out->activations, out->activations, x);
    mpq_clear(x);
    out->inflight += w.best_cnt[c];
  }
  mpq_set(out->buffers, n > 0 ? buf[w.best_buf] : out->buffers);
  out->max_inflight = w.max_total;
  plc_q_rat_add(out->peak, out->activations, out->buffers);
  free(w.cnt);
  free(w.best_cnt);
}

void plc_mem_walk(const plc_sched_block *blocks, int n, int nchunks, mpq_t *act, mpq_t *buf,
                  plc_mem_stage *out)
{
  plc_mem_scaled sc = plc_mem_scaled_of(n, nchunks, act, buf);
  plc_mem_walk_scaled(blocks, n, nchunks, act, buf, &sc, out);
  plc_mem_scaled_free(&sc);
}

/* ---- the run ------------------------------------------------------------ */

/* Add the lowered parts a schedule chunk computes: vchunk k of stage ps
 * (k < 0: all of the stage's). */
static void plc_mem_part(const plc_ir_run *run, int ps, int k, mpq_t act, mpq_t buf,
                         plc_mem_stage *st)
{
  for (int j = k < 0 ? 0 : k; j < (k < 0 ? run->vpp : k + 1); j++) {
    const plc_ir_mem *m = &run->stages[ps].mem[j];
    plc_q_rat_add(act, act, m->activations);
    if (mpq_cmp(m->buffers, buf) > 0)
      mpq_set(buf, m->buffers);
    if (st) {
      plc_q_rat_add(st->weights, st->weights, m->weights);
      plc_q_rat_add(st->grads, st->grads, m->grads);
      plc_q_rat_add(st->optimizer, st->optimizer, m->optimizer);
    }
  }
}

static void plc_mem_totals(plc_mem *m)
{
  m->fits = 1;
  m->worst = 0;
  for (int s = 0; s < m->nstages; s++) {
    plc_mem_stage *st = &m->st[s];
    plc_q_rat_add(st->peak, st->peak, st->weights);
    plc_q_rat_add(st->peak, st->peak, st->grads);
    plc_q_rat_add(st->peak, st->peak, st->optimizer);
    if (mpq_cmp(st->peak, m->st[m->worst].peak) > 0)
      m->worst = s;
    if (m->capacity_known) {
      plc_q_rat_sub(st->headroom, m->usable, st->peak);
      if (mpq_sgn(st->headroom) < 0)
        m->fits = 0;
    }
  }
}

/* Without a schedule: every microbatch of every chunk of the stage in
 * flight at once, the most any order can hold (a fit is then safe). */
static void plc_mem_single(const plc_ir_run *run, plc_mem *m)
{
  mpq_t mu;
  mpq_init(mu);
  mpq_set_si(mu, run->mu, 1);
  for (int s = 0; s < m->nstages; s++) {
    plc_mem_stage *st = &m->st[s];
    plc_mem_part(run, s, -1, st->activations, st->buffers, st);
    plc_q_rat_mul(st->activations, st->activations, mu);
    long n = run->mu * run->vpp;
    st->inflight = st->max_inflight = n > INT32_MAX ? INT32_MAX : (int)n;
    plc_q_rat_add(st->peak, st->activations, st->buffers);
  }
  mpq_clear(mu);
}

int plc_mem_chunk_figures(const plc_ir_run *run, plc_sched_params *par, int *nchunks,
                          mpq_t **act, mpq_t **buf, plc_mem_stage *st, char *why, size_t len)
{
  plc_sched_placement place;
  if (!plc_runsched_params(run, &place, par, why, len))
    return 0;
  int n = *nchunks = plc_sched_nchunks(place, par);
  *act = plc_xmalloc((size_t)n * sizeof **act);
  *buf = plc_xmalloc((size_t)n * sizeof **buf);
  for (int c = 0; c < n; c++)
    mpq_inits((*act)[c], (*buf)[c], NULL);
  for (int c = 0; c < n; c++) {
    int part = plc_sched_chunk_part(place, par, c);
    /* round-robin and the V: model chunk part is virtual chunk part / p of
     * the stage holding it (the lowering places the layers so); otherwise
     * the part is a stage's whole share (DualPipe: model stage part) */
    int chunked = place == PLC_SCHED_PLACE_ROUND || place == PLC_SCHED_PLACE_V;
    int ps = chunked ? plc_sched_stage_of(place, par, part) : part % par->p;
    int k = chunked ? part / par->p : -1;
    plc_mem_part(run, ps, k, (*act)[c], (*buf)[c],
                 st ? &st[plc_sched_stage_of(place, par, c)] : NULL);
  }
  return 1;
}

void plc_mem_chunks_free(int nchunks, mpq_t *act, mpq_t *buf)
{
  for (int c = 0; c < nchunks; c++)
    mpq_clears(act[c], buf[c], NULL);
  free(act);
  free(buf);
}

void plc_mem_analyse(plc_mem *m, const plc_ir_run *run)
{
  memset(m, 0, sizeof *m);
  mpq_inits(m->capacity, m->reserve, m->usable, NULL);
  m->known = run->memory_declared;
  if (!m->known)
    return;
  m->capacity_known = run->memory != NULL;
  if (run->memory)
    mpq_set(m->capacity, run->memory);
  if (run->memory_reserve)
    mpq_set(m->reserve, run->memory_reserve);
  plc_q_rat_sub(m->usable, m->capacity, m->reserve);
  m->nstages = run->nstages;
  m->st = plc_xmalloc((size_t)m->nstages * sizeof *m->st);
  for (int s = 0; s < m->nstages; s++)
    plc_mem_stage_init(&m->st[s]);
  plc_sched_params par;
  plc_sched sched;
  int nchunks, stage;
  mpq_t *act, *buf;
  if (!plc_runsched_build(run, &sched, m->why, sizeof m->why, &stage)) {
    plc_mem_single(run, m);
    plc_mem_totals(m);
    return;
  }
  plc_mem_chunk_figures(run, &par, &nchunks, &act, &buf, m->st, m->why, sizeof m->why);
  /* every stage walks the same act and buf: scaled once, for the longest
   * stage (a bound that holds for it holds for the shorter ones) */
  int longest = 0;
  for (int s = 0; s < m->nstages; s++)
    if (sched.start[s + 1] - sched.start[s] > longest)
      longest = sched.start[s + 1] - sched.start[s];
  plc_mem_scaled sc = plc_mem_scaled_of(longest, nchunks, act, buf);
  for (int s = 0; s < m->nstages; s++)
    plc_mem_walk_scaled(sched.blocks + sched.start[s], sched.start[s + 1] - sched.start[s],
                        nchunks, act, buf, &sc, &m->st[s]);
  plc_mem_scaled_free(&sc);
  plc_sched_free(&sched);
  plc_mem_chunks_free(nchunks, act, buf);
  plc_mem_totals(m);
}

void plc_mem_free(plc_mem *m)
{
  for (int s = 0; m->st && s < m->nstages; s++)
    plc_mem_stage_clear(&m->st[s]);
  free(m->st);
  m->st = NULL;
  mpq_clears(m->capacity, m->reserve, m->usable, NULL);
}

int plc_mem_static_unfit(const plc_ir_run *run)
{
  if (!run->memory_declared || !run->memory)
    return 0;
  mpq_t usable, st;
  mpq_inits(usable, st, NULL);
  mpq_set(usable, run->memory);
  if (run->memory_reserve)
    plc_q_rat_sub(usable, usable, run->memory_reserve);
  int unfit = 0;
  for (int s = 0; s < run->nstages && !unfit; s++) {
    mpq_set_ui(st, 0, 1);
    for (int j = 0; j < run->vpp; j++) {
      const plc_ir_mem *m = &run->stages[s].mem[j];
      plc_q_rat_add(st, st, m->weights);
      plc_q_rat_add(st, st, m->grads);
      plc_q_rat_add(st, st, m->optimizer);
    }
    unfit = mpq_cmp(st, usable) > 0;
  }
  mpq_clears(usable, st, NULL);
  return unfit;
}

void plc_result_memory(plc_result *res)
{
  plc_result_memory_free(res);
  res->mem = plc_xmalloc(sizeof *res->mem);
  plc_mem_analyse(res->mem, res->run);
}

void plc_result_memory_free(plc_result *res)
{
  if (!res->mem)
    return;
  plc_mem_free(res->mem);
  free(res->mem);
  res->mem = NULL;
}
