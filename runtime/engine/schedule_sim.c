/* schedule_sim.c - the exact block-level simulator of a pipeline schedule.
 *
 * Every stage runs its blocks in order; a block starts at max(the stage is
 * free, each dependency's end, plus the p2p latency of the dependency's
 * stage when that is another stage).  Stages are advanced from a work
 * queue: a stage runs until its next block waits for something not done,
 * and is queued again when a block it may wait for ends (the next F of the
 * microbatch lives on the stage of chunk c+1, the next B on that of c-1).
 * Each block ends once and queues at most two stages, so a run is linear
 * in blocks + dependencies.  Since a block's start depends only on blocks
 * already ended, the order stages are advanced in does not change a time.
 * Without times (validation) only the order is run, to find deadlocks. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedule.h"
#include "xalloc.h"

/* One thing a block waits for: the F or the B of (mb, chunk). */
typedef struct sim_dep {
  int key, isb, mb, chunk;
} sim_dep;

typedef struct sim_run {
  const plc_sched *s;
  const plc_sched_times *t;
  plc_sched_sim *sim;
  int head, count;
  int fast;   /* times are int64 multiples of 1/sim->den */
} sim_run;

/* Per stage in dur64: f, b, w, fb, p2p, b - w, fb - w. */
enum { D_F, D_B, D_W, D_FB, D_P2P, D_BS, D_FBS, D_N };

static void mpq_grow(mpq_t **a, int old, int n)
{
  *a = plc_xrealloc(*a, (size_t)n * sizeof(mpq_t));
  for (int i = old; i < n; i++)
    mpq_init((*a)[i]);
}

static void mpq_drop(mpq_t *a, int n)
{
  for (int i = 0; i < n; i++)
    mpq_clear(a[i]);
  free(a);
}

void plc_sched_sim_init(plc_sched_sim *sim)
{
  memset(sim, 0, sizeof *sim);
  mpq_init(sim->makespan);
  mpq_init(sim->bubble);
  mpq_init(sim->tmp);
  mpq_init(sim->tmp2);
  mpz_init(sim->den);
}

void plc_sched_sim_clear(plc_sched_sim *sim)
{
  mpq_clear(sim->makespan);
  mpq_clear(sim->bubble);
  mpq_clear(sim->tmp);
  mpq_clear(sim->tmp2);
  mpz_clear(sim->den);
  free(sim->fend64);
  free(sim->bend64);
  free(sim->free64);
  free(sim->busy64);
  free(sim->dur64);
  mpq_drop(sim->busy, sim->cap_p);
  mpq_drop(sim->idle, sim->cap_p);
  mpq_drop(sim->stage_free, sim->cap_p);
  mpq_drop(sim->bsplit, sim->cap_p);
  mpq_drop(sim->fbsplit, sim->cap_p);
  mpq_drop(sim->fend, sim->cap_qkeys);
  mpq_drop(sim->bend, sim->cap_qkeys);
  free(sim->inflight_b);
  free(sim->inflight_w);
  free(sim->cursor);
  free(sim->queue);
  free(sim->queued);
  free(sim->fdone);
  free(sim->bdone);
  memset(sim, 0, sizeof *sim);
}

/* The end times of the GMP path, grown only when that path runs. */
static void sim_grow_q(plc_sched_sim *sim, int keys)
{
  if (keys <= sim->cap_qkeys)
    return;
  mpq_grow(&sim->fend, sim->cap_qkeys, keys);
  mpq_grow(&sim->bend, sim->cap_qkeys, keys);
  sim->cap_qkeys = keys;
}

/* Grow the scratch to p stages and keys (mb, chunk) pairs; it is kept for
 * the next run, so a search allocates only when a run is larger. */
static void sim_grow(plc_sched_sim *sim, int p, int keys)
{
  if (p > sim->cap_p) {
    mpq_grow(&sim->busy, sim->cap_p, p);
    mpq_grow(&sim->idle, sim->cap_p, p);
    mpq_grow(&sim->stage_free, sim->cap_p, p);
    mpq_grow(&sim->bsplit, sim->cap_p, p);
    mpq_grow(&sim->fbsplit, sim->cap_p, p);
    sim->inflight_b = plc_xrealloc(sim->inflight_b, (size_t)p * sizeof(int));
    sim->inflight_w = plc_xrealloc(sim->inflight_w, (size_t)p * sizeof(int));
    sim->cursor = plc_xrealloc(sim->cursor, (size_t)p * sizeof(int));
    sim->queue = plc_xrealloc(sim->queue, (size_t)p * sizeof(int));
    sim->queued = plc_xrealloc(sim->queued, (size_t)p);
    sim->free64 = plc_xrealloc(sim->free64, (size_t)p * sizeof(int64_t));
    sim->busy64 = plc_xrealloc(sim->busy64, (size_t)p * sizeof(int64_t));
    sim->dur64 = plc_xrealloc(sim->dur64, (size_t)p * D_N * sizeof(int64_t));
    sim->cap_p = p;
  }
  if (keys > sim->cap_keys) {
    sim->fdone = plc_xrealloc(sim->fdone, (size_t)keys);
    sim->bdone = plc_xrealloc(sim->bdone, (size_t)keys);
    sim->fend64 = plc_xrealloc(sim->fend64, (size_t)keys * sizeof(int64_t));
    sim->bend64 = plc_xrealloc(sim->bend64, (size_t)keys * sizeof(int64_t));
    sim->cap_keys = keys;
  }
}

static void push(sim_run *r, int st)
{
  plc_sched_sim *sim = r->sim;
  if (sim->queued[st])
    return;
  sim->queued[st] = 1;
  sim->queue[(r->head + r->count++) % r->s->par.p] = st;
}

static int pop(sim_run *r)
{
  int st = r->sim->queue[r->head];
  r->head = (r->head + 1) % r->s->par.p;
  r->count--;
  r->sim->queued[st] = 0;
  return st;
}

/* The dependencies of one part (F or B of (mb, c)) appended to d. */
static int part_deps(const plc_sched *s, int isb, int mb, int c, sim_dep *d)
{
  int first, last, n = 0, key = mb * s->nchunks + c;
  plc_sched_mb_range(s->place, &s->par, mb, &first, &last);
  if (!isb) {
    if (c > first)
      d[n++] = (sim_dep){key - 1, 0, mb, c - 1};
    return n;
  }
  d[n++] = (sim_dep){key, 0, mb, c};
  if (c < last)
    d[n++] = (sim_dep){key + 1, 1, mb, c + 1};
  return n;
}

static int block_deps(const plc_sched *s, const plc_sched_block *b, sim_dep *d)
{
  switch (b->phase) {
  case PLC_SCHED_F: return part_deps(s, 0, b->mb, b->chunk, d);
  case PLC_SCHED_B: return part_deps(s, 1, b->mb, b->chunk, d);
  case PLC_SCHED_W:
    d[0] = (sim_dep){b->mb * s->nchunks + b->chunk, 1, b->mb, b->chunk};
    return 1;
  default: {
    int n = part_deps(s, 0, b->mb, b->chunk, d);
    return n + part_deps(s, 1, b->mb2, b->chunk2, d + n);
  }
  }
}

int plc_sched_deps(const plc_sched *s, const plc_sched_block *b, plc_sched_dep out[4])
{
  sim_dep d[4];
  int n = block_deps(s, b, d);
  for (int i = 0; i < n; i++)
    out[i] = (plc_sched_dep){d[i].isb ? PLC_SCHED_B : PLC_SCHED_F, d[i].mb, d[i].chunk,
                             plc_sched_stage_of(s->place, &s->par, d[i].chunk)};
  return n;
}

static int dep_done(const plc_sched_sim *sim, const sim_dep *d)
{
  return d->isb ? sim->bdone[d->key] : sim->fdone[d->key];
}

static mpq_srcptr block_time(const sim_run *r, int st, const plc_sched_block *b)
{
  const plc_sched_times *t = &r->t[st];
  switch (b->phase) {
  case PLC_SCHED_F: return t->f;
  case PLC_SCHED_B: return b->split ? r->sim->bsplit[st] : t->b;
  case PLC_SCHED_W: return t->w;
  default: return b->split ? r->sim->fbsplit[st] : t->fb;
  }
}

static int64_t block_time64(const sim_run *r, int st, const plc_sched_block *b)
{
  const int64_t *d = &r->sim->dur64[(size_t)st * D_N];
  switch (b->phase) {
  case PLC_SCHED_F: return d[D_F];
  case PLC_SCHED_B: return d[b->split ? D_BS : D_B];
  case PLC_SCHED_W: return d[D_W];
  default: return d[b->split ? D_FBS : D_FB];
  }
}

/* time_block on the machine-integer path: no sum can overflow, as
 * fast_setup bounds the whole step. */
static void time_block64(sim_run *r, int st, const plc_sched_block *b, const sim_dep *d, int nd)
{
  plc_sched_sim *sim = r->sim;
  const plc_sched *s = r->s;
  int64_t start = sim->free64[st];
  for (int i = 0; i < nd; i++) {
    int ds = plc_sched_stage_of(s->place, &s->par, d[i].chunk);
    int64_t end = d[i].isb ? sim->bend64[d[i].key] : sim->fend64[d[i].key];
    if (ds != st)
      end += sim->dur64[(size_t)ds * D_N + D_P2P];
    if (end > start)
      start = end;
  }
  int64_t dur = block_time64(r, st, b);
  sim->free64[st] = start + dur;
  sim->busy64[st] += dur;
}

/* Start time of a block whose deps are done, into sim->tmp2; then its end. */
static void time_block(sim_run *r, int st, const plc_sched_block *b, const sim_dep *d, int nd,
                       int idx)
{
  plc_sched_sim *sim = r->sim;
  const plc_sched *s = r->s;
  mpq_set(sim->tmp2, sim->stage_free[st]);
  for (int i = 0; i < nd; i++) {
    int ds = plc_sched_stage_of(s->place, &s->par, d[i].chunk);
    mpq_srcptr end = d[i].isb ? sim->bend[d[i].key] : sim->fend[d[i].key];
    if (ds != st) {
      mpq_add(sim->tmp, end, r->t[ds].p2p);
      end = sim->tmp;
    }
    if (mpq_cmp(end, sim->tmp2) > 0)
      mpq_set(sim->tmp2, end);
  }
  mpq_srcptr dur = block_time(r, st, b);
  mpq_add(sim->stage_free[st], sim->tmp2, dur);
  mpq_add(sim->busy[st], sim->busy[st], dur);
  if (sim->rec_start) {
    mpq_set(sim->rec_start[idx], sim->tmp2);
    mpq_set(sim->rec_end[idx], sim->stage_free[st]);
  }
}

/* Mark a part done at the stage's current end and queue who may wait. */
static void finish_part(sim_run *r, int st, int isb, int mb, int c)
{
  const plc_sched *s = r->s;
  int first, last, key = mb * s->nchunks + c;
  plc_sched_mb_range(s->place, &s->par, mb, &first, &last);
  if (r->fast)
    (isb ? r->sim->bend64 : r->sim->fend64)[key] = r->sim->free64[st];
  else if (r->t)
    mpq_set(isb ? r->sim->bend[key] : r->sim->fend[key], r->sim->stage_free[st]);
  (isb ? r->sim->bdone : r->sim->fdone)[key] = 1;
  int next = isb ? (c > first ? c - 1 : -1) : (c < last ? c + 1 : -1);
  if (next >= 0)
    push(r, plc_sched_stage_of(s->place, &s->par, next));
}

static void run_stage(sim_run *r, int st)
{
  const plc_sched *s = r->s;
  int *cur = &r->sim->cursor[st];
  for (; *cur < s->start[st + 1]; ++*cur) {
    const plc_sched_block *b = &s->blocks[*cur];
    sim_dep d[4];
    int nd = block_deps(s, b, d);
    for (int i = 0; i < nd; i++)
      if (!dep_done(r->sim, &d[i]))
        return;
    if (r->fast)
      time_block64(r, st, b, d, nd);
    else if (r->t)
      time_block(r, st, b, d, nd, *cur);
    if (b->phase == PLC_SCHED_F || b->phase == PLC_SCHED_FB)
      finish_part(r, st, 0, b->mb, b->chunk);
    if (b->phase == PLC_SCHED_B)
      finish_part(r, st, 1, b->mb, b->chunk);
    if (b->phase == PLC_SCHED_FB)
      finish_part(r, st, 1, b->mb2, b->chunk2);
  }
}

/* The first dependency of b not done yet. */
static const sim_dep *first_missing(const sim_run *r, const plc_sched_block *b, sim_dep *d)
{
  int nd = block_deps(r->s, b, d), k = 0;
  while (k < nd - 1 && dep_done(r->sim, &d[k]))
    k++;
  return &d[k];
}

/* Name the offending block: one that waits for a block later on its own
 * stage if there is one (it can never run), else the stuck block of the
 * lowest stage; and what it waits for. */
static int deadlock(const sim_run *r, char *msg, size_t len)
{
  const plc_sched *s = r->s;
  int pick = -1;
  for (int st = 0; st < s->par.p; st++) {
    if (r->sim->cursor[st] == s->start[st + 1])
      continue;
    sim_dep d[4];
    const sim_dep *m = first_missing(r, &s->blocks[r->sim->cursor[st]], d);
    if (plc_sched_stage_of(s->place, &s->par, m->chunk) == st) {
      pick = st;
      break;
    }
    if (pick < 0)
      pick = st;
  }
  if (pick < 0)
    return 1;
  const plc_sched_block *b = &s->blocks[r->sim->cursor[pick]];
  sim_dep d[4];
  const sim_dep *m = first_missing(r, b, d);
  int ds = plc_sched_stage_of(s->place, &s->par, m->chunk);
  char name[96];
  plc_sched_block_name(b, name, sizeof name);
  snprintf(msg, len, "deadlock: stage %d, block %d: %s waits for %s(mb %d, chunk %d)%s%d%s", pick,
           r->sim->cursor[pick] - s->start[pick], name, m->isb ? "B" : "F", m->mb, m->chunk,
           ds == pick ? ", which comes later on stage " : " on stage ", ds,
           ds == pick ? "" : ", which never runs");
  return 0;
}

/* Scale one stage's times by sim->den into dur64; 0 when one does not
 * fit in a long (or, below, in a quarter of the int64 range). */
static int scale_stage(plc_sched_sim *sim, const plc_sched_times *t, int64_t *d, mpz_t v)
{
  mpq_srcptr q[5] = {t->f, t->b, t->w, t->fb, t->p2p};
  for (int k = 0; k < 5; k++) {
    mpz_divexact(v, sim->den, mpq_denref(q[k]));
    mpz_mul(v, v, mpq_numref(q[k]));
    if (!mpz_fits_slong_p(v) || mpz_cmpabs_ui(v, (unsigned long)(INT64_MAX / 4)) > 0)
      return 0;
    d[k] = mpz_get_si(v);
  }
  d[D_BS] = d[D_B] - d[D_W];
  d[D_FBS] = d[D_FB] - d[D_W];
  return 1;
}

/* Decide the machine-integer path: a common denominator of all times,
 * every scaled time in a long, and the whole step bounded: each end's
 * magnitude is at most (blocks so far) x (longest block + largest p2p,
 * in magnitude), so nblocks times that must stay under INT64_MAX / 2. */
static int fast_setup(sim_run *r)
{
  plc_sched_sim *sim = r->sim;
  int p = r->s->par.p;
  if (sim->exact_only || sim->rec_start || !r->t || sizeof(long) < sizeof(int64_t))
    return 0;
  mpz_set_ui(sim->den, 1);
  for (int st = 0; st < p; st++) {
    const plc_sched_times *t = &r->t[st];
    mpq_srcptr q[5] = {t->f, t->b, t->w, t->fb, t->p2p};
    for (int k = 0; k < 5; k++)
      mpz_lcm(sim->den, sim->den, mpq_denref(q[k]));
  }
  if (!mpz_fits_slong_p(sim->den))
    return 0;
  mpz_t v;
  mpz_init(v);
  int ok = 1;
  int64_t maxd = 0, maxp = 0, lim = INT64_MAX / 2;
  for (int st = 0; ok && st < p; st++) {
    int64_t *d = &sim->dur64[(size_t)st * D_N];
    ok = scale_stage(sim, &r->t[st], d, v);
    for (int k = 0; ok && k < D_N; k++) {
      int64_t a = d[k] < 0 ? -d[k] : d[k];
      if (k == D_P2P)
        maxp = a > maxp ? a : maxp;
      else
        maxd = a > maxd ? a : maxd;
    }
  }
  mpz_clear(v);
  int64_t n = r->s->nblocks > 0 ? r->s->nblocks : 1;
  return ok && maxd <= lim / 2 && maxp <= lim / 2 && maxd + maxp <= lim / n;
}

static void set_q64(mpq_t q, int64_t v, const mpz_t den)
{
  mpz_set_si(mpq_numref(q), (long)v);
  mpz_set(mpq_denref(q), den);
  mpq_canonicalize(q);
}

static void sim_start(sim_run *r)
{
  const plc_sched *s = r->s;
  plc_sched_sim *sim = r->sim;
  size_t keys = (size_t)s->par.mu * (size_t)s->nchunks;
  memset(sim->fdone, 0, keys);
  memset(sim->bdone, 0, keys);
  for (int st = 0; st < s->par.p; st++) {
    sim->cursor[st] = s->start[st];
    sim->queued[st] = 0;
    push(r, st);
    if (r->fast) {
      sim->free64[st] = 0;
      sim->busy64[st] = 0;
      continue;
    }
    if (!r->t)
      continue;
    mpq_set_ui(sim->stage_free[st], 0, 1);
    mpq_set_ui(sim->busy[st], 0, 1);
    mpq_sub(sim->bsplit[st], r->t[st].b, r->t[st].w);
    mpq_sub(sim->fbsplit[st], r->t[st].fb, r->t[st].w);
  }
}

/* Makespan, idle, the critical stage and its bubble. */
static void sim_results(sim_run *r)
{
  plc_sched_sim *sim = r->sim;
  int p = r->s->par.p;
  for (int st = 0; r->fast && st < p; st++) {
    set_q64(sim->stage_free[st], sim->free64[st], sim->den);
    set_q64(sim->busy[st], sim->busy64[st], sim->den);
  }
  mpq_set_ui(sim->makespan, 0, 1);
  sim->critical = 0;
  for (int st = 0; st < p; st++) {
    if (mpq_cmp(sim->stage_free[st], sim->makespan) > 0)
      mpq_set(sim->makespan, sim->stage_free[st]);
    if (mpq_cmp(sim->busy[st], sim->busy[sim->critical]) > 0)
      sim->critical = st;
  }
  for (int st = 0; st < p; st++)
    mpq_sub(sim->idle[st], sim->makespan, sim->busy[st]);
  mpq_sub(sim->bubble, sim->makespan, sim->busy[sim->critical]);
}

int plc_sched_simulate(const plc_sched *s, const plc_sched_times *times, plc_sched_sim *sim,
                       char *msg, size_t msglen)
{
  sim_grow(sim, s->par.p, s->par.mu * s->nchunks);
  sim->p = s->par.p;
  sim_run r = {s, times, sim, 0, 0, 0};
  r.fast = fast_setup(&r);
  sim->used_fast = r.fast;
  if (times && !r.fast)
    sim_grow_q(sim, s->par.mu * s->nchunks);
  sim_start(&r);
  while (r.count > 0)
    run_stage(&r, pop(&r));
  if (!deadlock(&r, msg, msglen))
    return 0;
  for (int st = 0; st < s->par.p; st++)
    plc_sched_inflight(s, st, &sim->inflight_b[st], &sim->inflight_w[st]);
  if (times)
    sim_results(&r);
  return 1;
}

void plc_sched_times_init(plc_sched_times *t, int n)
{
  for (int i = 0; i < n; i++) {
    mpq_init(t[i].f);
    mpq_init(t[i].b);
    mpq_init(t[i].w);
    mpq_init(t[i].fb);
    mpq_init(t[i].p2p);
  }
}

void plc_sched_times_clear(plc_sched_times *t, int n)
{
  for (int i = 0; i < n; i++) {
    mpq_clear(t[i].f);
    mpq_clear(t[i].b);
    mpq_clear(t[i].w);
    mpq_clear(t[i].fb);
    mpq_clear(t[i].p2p);
  }
}
