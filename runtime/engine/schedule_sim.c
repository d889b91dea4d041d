/* schedule_sim.c - the exact block-level simulator of a pipeline schedule.
 *
 * Every stage runs its blocks in order; a block starts at max(the stage is
 * free, each dependency's end, plus the p2p latency of the dependency's
 * stage when that is another stage).  A run has two parts.  Preparing
 * finds an order to time the blocks in: stages are advanced from a work
 * queue, a stage running until its next block waits for something not
 * done, queued again when a block it may wait for ends (the next F of the
 * microbatch lives on the stage of chunk c+1, the next B on that of c-1);
 * the order they run in is kept, each block with its dependencies as
 * positions in it.  Each block ends once and queues at most two stages,
 * so this is linear in blocks + dependencies, and an order that never
 * finishes is a deadlock.  Timing then walks that order once.  Since a
 * block's start depends only on blocks before it in the order (its own
 * stage's previous block and what it waits for), the order does not
 * change a time, and it does not depend on the times: a schedule
 * simulated again with other times (a re-analysis) is prepared once
 * (plc_sched_prepare).  Without times (validation) only the order is
 * found.  Times are integers over their common denominator: machine
 * integers (plc_sched_int) when the whole step provably fits, else mpz_t,
 * so no step canonicalises a fraction. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedule.h"
#include "xalloc.h"

/* Per times entry in duri: f, b, w, fb, p2p, fbo, b - w, fb - w, -w.  One
 * more entry after the last times entry's, D_ZERO, is 0: what a
 * dependency on the same stage adds, and the second part of a block
 * whose duration is one entry. */
enum { D_F, D_B, D_W, D_FB, D_P2P, D_FBO, D_BS, D_FBS, D_NW, D_N };
#define D_IN 6 /* the entries read from plc_sched_times */

/* One thing a block waits for: the F or the B of (mb, chunk). */
typedef struct sim_dep {
  int key, isb, mb, chunk;
} sim_dep;

/* A block in the prepared order (its index in s->blocks is the next of
 * its stage's: the order keeps each stage's). */
typedef struct prep_step {
  int32_t st;         /* its stage */
  int32_t dur, dur2;  /* its duration: duri[dur] + duri[dur2] */
  uint8_t ndep;       /* its dependencies, the next ndep of plc_sched_prep.dep */
  uint8_t nfar;       /* the first nfar of them are on other stages */
  uint8_t mark;       /* an idle phase of its stage ends at its start (MARK_) */
} prep_step;

/* A stage's idle time up to a block's start is that start less the
 * stage's busy time before it (the stage is free at 0), so its idle phases
 * (plc_sched_sim) are read at two blocks: the warm-up's at its first block
 * that is not an F (or its last block, when all are), which it includes;
 * the steady phase's, less the warm-up, at its last F or F&B when that
 * comes after. */
enum { MARK_NONE, MARK_WARM, MARK_STEADY };

/* A dependency: the position of the step that ends it, and the duri entry
 * of the latency it adds (the p2p of its stage, D_ZERO on the same one). */
typedef struct prep_dep {
  int32_t pos, lat;
} prep_dep;

struct plc_sched_prep {
  const plc_sched *s;
  int per_chunk, fb_pairs;
  int n, ndep, cap_dep;
  prep_step *step;    /* s->nblocks once prepared */
  prep_dep *dep;
};

/* Preparing: the work queue's state. */
typedef struct prep_run {
  const plc_sched *s;
  plc_sched_prep *pr;
  int head, count;
  int *cursor, *queue;
  unsigned char *queued;
  int *ended;          /* per part, F(mb, c) at 2 key, B at 2 key + 1 (key = mb x
                          nchunks + c): the step that ends it; -1 until it ran */
  int *warm_at, *steady_at; /* per stage: the blocks marked MARK_WARM, MARK_STEADY */
  int *cstage, *cslot; /* per chunk: its stage, and its times entry less stage x per */
  int per;             /* times entries per stage */
  int zero;            /* the D_ZERO entry */
} prep_run;

/* Timing: one run through a prepared order. */
typedef struct sim_run {
  const plc_sched *s;
  const plc_sched_times *t;
  plc_sched_sim *sim;
  const plc_sched_prep *pr;
  int fast;   /* times are plc_sched_int multiples of 1/sim->den */
  int nonneg; /* fast, and no block takes a negative time (fast_fits) */
  int nt;     /* entries in t: p, or p x chunks per stage when per_chunk */
} sim_run;

/* plc_sched_stage_of and plc_sched_mb_range, inlined: the simulator asks
 * them for every dependency of every block. */
static inline int stage_of(const plc_sched *s, int chunk)
{
  switch (s->place) {
  case PLC_SCHED_PLACE_STAGE: return chunk;
  case PLC_SCHED_PLACE_ROUND: return chunk % s->par.p;
  default: return chunk < s->par.p ? chunk : 2 * s->par.p - 1 - chunk;
  }
}

static inline void mb_range(const plc_sched *s, int mb, int *first, int *last)
{
  if (s->place == PLC_SCHED_PLACE_BIDIR) {
    *first = mb >= s->par.mu / 2 ? s->par.p : 0;
    *last = *first + s->par.p - 1;
  } else {
    *first = 0;
    *last = s->nchunks - 1;
  }
}

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

static void mpz_grow(mpz_t **a, int old, int n)
{
  *a = plc_xrealloc(*a, (size_t)n * sizeof(mpz_t));
  for (int i = old; i < n; i++)
    mpz_init((*a)[i]);
}

static void mpz_drop(mpz_t *a, int n)
{
  for (int i = 0; i < n; i++)
    mpz_clear(a[i]);
  free(a);
}

void plc_sched_sim_init(plc_sched_sim *sim)
{
  memset(sim, 0, sizeof *sim);
  mpq_init(sim->makespan);
  mpq_init(sim->bubble);
  mpz_inits(sim->den, sim->zstart, sim->zgap, sim->zdur, NULL);
}

void plc_sched_sim_clear(plc_sched_sim *sim)
{
  mpq_clear(sim->makespan);
  mpq_clear(sim->bubble);
  mpz_clears(sim->den, sim->zstart, sim->zgap, sim->zdur, NULL);
  free(sim->endi);
  free(sim->freei);
  free(sim->busyi);
  free(sim->duri);
  free(sim->warmi);
  free(sim->steadyi);
  mpq_drop(sim->warmup, sim->cap_p);
  mpq_drop(sim->steady, sim->cap_p);
  mpq_drop(sim->cooldown, sim->cap_p);
  mpq_drop(sim->busy, sim->cap_p);
  mpq_drop(sim->idle, sim->cap_p);
  mpq_drop(sim->stage_free, sim->cap_p);
  mpz_drop(sim->freez, sim->cap_p);
  mpz_drop(sim->busyz, sim->cap_p);
  mpz_drop(sim->warmz, sim->cap_p);
  mpz_drop(sim->steadyz, sim->cap_p);
  mpz_drop(sim->durz, sim->cap_t ? sim->cap_t * D_N + 1 : 0);
  mpz_drop(sim->endz, sim->cap_zn);
  memset(sim, 0, sizeof *sim);
}

/* The block ends of the mpz path, grown only when that path runs. */
static void sim_grow_z(plc_sched_sim *sim, int n)
{
  if (n <= sim->cap_zn)
    return;
  mpz_grow(&sim->endz, sim->cap_zn, n);
  sim->cap_zn = n;
}

/* Grow the scratch to p stages, nt times entries and n blocks; it is kept
 * for the next run, so a search allocates only when a run is larger. */
static void sim_grow(plc_sched_sim *sim, int p, int nt, int n)
{
  if (nt > sim->cap_t) {
    mpz_grow(&sim->durz, sim->cap_t ? sim->cap_t * D_N + 1 : 0, nt * D_N + 1);
    sim->duri = plc_xrealloc(sim->duri, ((size_t)nt * D_N + 1) * sizeof(plc_sched_int));
    sim->cap_t = nt;
  }
  if (p > sim->cap_p) {
    mpq_grow(&sim->busy, sim->cap_p, p);
    mpq_grow(&sim->idle, sim->cap_p, p);
    mpq_grow(&sim->warmup, sim->cap_p, p);
    mpq_grow(&sim->steady, sim->cap_p, p);
    mpq_grow(&sim->cooldown, sim->cap_p, p);
    mpq_grow(&sim->stage_free, sim->cap_p, p);
    mpz_grow(&sim->freez, sim->cap_p, p);
    mpz_grow(&sim->busyz, sim->cap_p, p);
    mpz_grow(&sim->warmz, sim->cap_p, p);
    mpz_grow(&sim->steadyz, sim->cap_p, p);
    sim->freei = plc_xrealloc(sim->freei, (size_t)p * sizeof(plc_sched_int));
    sim->busyi = plc_xrealloc(sim->busyi, (size_t)p * sizeof(plc_sched_int));
    sim->warmi = plc_xrealloc(sim->warmi, (size_t)p * sizeof(plc_sched_int));
    sim->steadyi = plc_xrealloc(sim->steadyi, (size_t)p * sizeof(plc_sched_int));
    sim->cap_p = p;
  }
  if (n > sim->cap_n) {
    sim->endi = plc_xrealloc(sim->endi, (size_t)n * sizeof(plc_sched_int));
    sim->cap_n = n;
  }
}

/* The dependencies of one part (F or B of (mb, c)) appended to d. */
static inline int part_deps(const plc_sched *s, int isb, int mb, int c, sim_dep *d)
{
  int first, last, n = 0, key = mb * s->nchunks + c;
  mb_range(s, mb, &first, &last);
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

static inline int block_deps(const plc_sched *s, const plc_sched_block *b, sim_dep *d)
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
                             stage_of(s, d[i].chunk)};
  return n;
}

/* ---- preparing ------------------------------------------------------- */

static void push(prep_run *r, int st)
{
  if (r->queued[st])
    return;
  r->queued[st] = 1;
  r->queue[(r->head + r->count++) % r->s->par.p] = st;
}

static int pop(prep_run *r)
{
  int st = r->queue[r->head];
  r->head = (r->head + 1) % r->s->par.p;
  r->count--;
  r->queued[st] = 0;
  return st;
}

/* The position of the step that ended d, or -1 while it has not. */
static int dep_pos(const prep_run *r, const sim_dep *d)
{
  return r->ended[2 * d->key + d->isb];
}

/* The block's duration in dur (a D_ index). */
static int block_dur(const plc_sched_block *b)
{
  switch (b->phase) {
  case PLC_SCHED_F: return D_F;
  case PLC_SCHED_B: return b->split ? D_BS : D_B;
  case PLC_SCHED_W: return D_W;
  default: return b->split ? D_FBS : D_FB;
  }
}

/* The times entry of chunk on stage st: the stage's, or with per_chunk
 * its local chunk's (chunk / p: 0 or 1 for the V and DualPipe, the
 * virtual chunk for round-robin). */
static int slot(const prep_run *r, int st, int chunk)
{
  return st * r->per + r->cslot[chunk];
}

/* A block's duration entries: its entry's; an F&B whose two parts take
 * different entries takes the forward of one and the backward of the
 * other, or with fb_pairs the two overlapped (the forward entry's fbo,
 * less the other's w when split). */
static void step_durs(const prep_run *r, int st, const plc_sched_block *b, prep_step *k)
{
  int a = slot(r, st, b->chunk), c = b->phase == PLC_SCHED_FB ? slot(r, st, b->chunk2) : a;
  k->dur2 = r->zero;
  if (c == a)
    k->dur = a * D_N + block_dur(b);
  else if (r->pr->fb_pairs) {
    k->dur = a * D_N + D_FBO;
    if (b->split)
      k->dur2 = c * D_N + D_NW;
  } else {
    k->dur = a * D_N + D_F;
    k->dur2 = c * D_N + (b->split ? D_BS : D_B);
  }
}

/* Append block idx of stage st to the order: its dependencies d, ended by
 * the steps at pos. */
static void prep_add(prep_run *r, int st, int idx, const sim_dep *d, const int *pos, int nd)
{
  plc_sched_prep *pr = r->pr;
  if (pr->ndep + nd > pr->cap_dep) {
    pr->cap_dep = 2 * pr->cap_dep + 4;
    pr->dep = plc_xrealloc(pr->dep, (size_t)pr->cap_dep * sizeof *pr->dep);
  }
  prep_step *k = &pr->step[pr->n++];
  k->st = st;
  k->ndep = (uint8_t)nd;
  k->nfar = 0;
  k->mark = idx == r->warm_at[st] ? MARK_WARM : idx == r->steady_at[st] ? MARK_STEADY : MARK_NONE;
  step_durs(r, st, &r->s->blocks[idx], k);
  /* those on other stages first (they can be the only ones that matter),
   * those on st from the end */
  prep_dep *out = &pr->dep[pr->ndep];
  for (int i = 0, near = nd; i < nd; i++) {
    int ds = r->cstage[d[i].chunk];
    if (ds != st)
      out[k->nfar++] = (prep_dep){pos[i], slot(r, ds, d[i].chunk) * D_N + D_P2P};
    else
      out[--near] = (prep_dep){pos[i], r->zero};
  }
  pr->ndep += nd;
}

/* Mark a part ended by the step at pos and queue who may wait for it. */
static inline void finish_part(prep_run *r, int isb, int mb, int c, int pos)
{
  const plc_sched *s = r->s;
  int first, last, key = mb * s->nchunks + c;
  mb_range(s, mb, &first, &last);
  r->ended[2 * key + isb] = pos;
  int next = isb ? (c > first ? c - 1 : -1) : (c < last ? c + 1 : -1);
  if (next >= 0)
    push(r, r->cstage[next]);
}

static void prep_stage(prep_run *r, int st)
{
  const plc_sched *s = r->s;
  for (int cur = r->cursor[st], end = s->start[st + 1]; cur < end; r->cursor[st] = ++cur) {
    const plc_sched_block *b = &s->blocks[cur];
    sim_dep d[4];
    int at[4], nd = block_deps(s, b, d);
    for (int i = 0; i < nd; i++)
      if ((at[i] = dep_pos(r, &d[i])) < 0)
        return;
    prep_add(r, st, cur, d, at, nd);
    int pos = r->pr->n - 1;
    if (b->phase == PLC_SCHED_F || b->phase == PLC_SCHED_FB)
      finish_part(r, 0, b->mb, b->chunk, pos);
    if (b->phase == PLC_SCHED_B)
      finish_part(r, 1, b->mb, b->chunk, pos);
    if (b->phase == PLC_SCHED_FB)
      finish_part(r, 1, b->mb2, b->chunk2, pos);
  }
}

/* The first dependency of b not done yet. */
static const sim_dep *first_missing(const prep_run *r, const plc_sched_block *b, sim_dep *d)
{
  int nd = block_deps(r->s, b, d), k = 0;
  while (k < nd - 1 && dep_pos(r, &d[k]) >= 0)
    k++;
  return &d[k];
}

/* Name the offending block: one that waits for a block later on its own
 * stage if there is one (it can never run), else the stuck block of the
 * lowest stage; and what it waits for. */
static int deadlock(const prep_run *r, char *msg, size_t len)
{
  const plc_sched *s = r->s;
  int pick = -1;
  for (int st = 0; st < s->par.p; st++) {
    if (r->cursor[st] == s->start[st + 1])
      continue;
    sim_dep d[4];
    const sim_dep *m = first_missing(r, &s->blocks[r->cursor[st]], d);
    if (r->cstage[m->chunk] == st) {
      pick = st;
      break;
    }
    if (pick < 0)
      pick = st;
  }
  if (pick < 0)
    return 1;
  const plc_sched_block *b = &s->blocks[r->cursor[pick]];
  sim_dep d[4];
  const sim_dep *m = first_missing(r, b, d);
  int ds = r->cstage[m->chunk];
  char name[96];
  plc_sched_block_name(b, name, sizeof name);
  snprintf(msg, len, "deadlock: stage %d, block %d: %s waits for %s(mb %d, chunk %d)%s%d%s", pick,
           r->cursor[pick] - s->start[pick], name, m->isb ? "B" : "F", m->mb, m->chunk,
           ds == pick ? ", which comes later on stage " : " on stage ", ds,
           ds == pick ? "" : ", which never runs");
  return 0;
}

/* Stage st's marked blocks (MARK_): the warm-up ends at its first block
 * that is not an F, the cool-down starts after its last F or F&B. */
static void prep_phases(prep_run *r, int st)
{
  const plc_sched *s = r->s;
  int end = s->start[st + 1], first_b = end, last_f = -1;
  for (int i = s->start[st]; i < end; i++) {
    int ph = s->blocks[i].phase;
    if (ph != PLC_SCHED_F && first_b == end)
      first_b = i;
    if (ph == PLC_SCHED_F || ph == PLC_SCHED_FB)
      last_f = i;
  }
  r->warm_at[st] = first_b < end ? first_b : end - 1;
  r->steady_at[st] = last_f > first_b ? last_f : -1;
}

/* The queue's scratch and the per-chunk and per-stage tables of r (free
 * with prep_run_free). */
static void prep_run_init(prep_run *r)
{
  const plc_sched *s = r->s;
  int p = s->par.p;
  size_t keys = (size_t)s->par.mu * (size_t)s->nchunks;
  r->per = r->pr->per_chunk ? s->nchunks / p : 1;
  r->zero = p * r->per * D_N;
  r->cursor = plc_xmalloc((size_t)p * sizeof *r->cursor);
  r->queue = plc_xmalloc((size_t)p * sizeof *r->queue);
  r->queued = plc_xcalloc((size_t)p, 1);
  r->warm_at = plc_xmalloc((size_t)p * sizeof *r->warm_at);
  r->steady_at = plc_xmalloc((size_t)p * sizeof *r->steady_at);
  r->ended = plc_xmalloc((2 * keys + 1) * sizeof *r->ended);
  memset(r->ended, -1, 2 * keys * sizeof *r->ended);
  r->cstage = plc_xmalloc(((size_t)s->nchunks + 1) * sizeof *r->cstage);
  r->cslot = plc_xmalloc(((size_t)s->nchunks + 1) * sizeof *r->cslot);
  for (int c = 0; c < s->nchunks; c++) {
    r->cstage[c] = stage_of(s, c);
    /* with per_chunk the stage's chunk index: round-robin c / p, the V's
     * and DualPipe's 0 or 1 */
    r->cslot[c] = !r->pr->per_chunk ? 0 : s->place == PLC_SCHED_PLACE_ROUND ? c / p : c >= p;
  }
  for (int st = 0; st < p; st++) {
    r->cursor[st] = s->start[st];
    prep_phases(r, st);
    push(r, st);
  }
}

static void prep_run_free(prep_run *r)
{
  free(r->cursor);
  free(r->queue);
  free(r->queued);
  free(r->warm_at);
  free(r->steady_at);
  free(r->ended);
  free(r->cstage);
  free(r->cslot);
}

plc_sched_prep *plc_sched_prepare(const plc_sched *s, int per_chunk, int fb_pairs, char *msg,
                                  size_t msglen)
{
  plc_sched_prep *pr = plc_xcalloc(1, sizeof *pr);
  *pr = (plc_sched_prep){.s = s, .per_chunk = per_chunk, .fb_pairs = fb_pairs};
  pr->step = plc_xmalloc(((size_t)s->nblocks + 1) * sizeof *pr->step);
  pr->cap_dep = 2 * s->nblocks; /* most blocks wait for one or two parts */
  pr->dep = plc_xmalloc(((size_t)pr->cap_dep + 1) * sizeof *pr->dep);
  prep_run r = {.s = s, .pr = pr};
  prep_run_init(&r);
  while (r.count > 0)
    prep_stage(&r, pop(&r));
  int ok = deadlock(&r, msg, msglen);
  prep_run_free(&r);
  if (!ok) {
    plc_sched_prep_free(pr);
    return NULL;
  }
  return pr;
}

void plc_sched_prep_free(plc_sched_prep *prep)
{
  if (!prep)
    return;
  free(prep->step);
  free(prep->dep);
  free(prep);
}

/* ---- timing ---------------------------------------------------------- */

/* The idle phase that ends at a marked block starting at start. */
static void mark64(plc_sched_sim *sim, int st, int mark, plc_sched_int start)
{
  if (mark == MARK_WARM)
    sim->warmi[st] = start - sim->busyi[st];
  else
    sim->steadyi[st] = start - sim->busyi[st] - sim->warmi[st];
}

/* Walk the order on the machine-integer path: no sum can overflow, as
 * fast_fits bounds the whole step.  When no block takes a negative time a
 * stage is never free before a block of its own has ended, so a
 * dependency on the same stage (an earlier block of it) cannot delay a
 * start and only those on other stages are read. */
/* time_steps64's loop, with nonneg a constant in each copy (the loop
 * is most of a large step's re-analysis: a test less per block). */
static inline __attribute__((always_inline)) void time_steps64_loop(sim_run *r, const int nonneg)
{
  plc_sched_sim *sim = r->sim;
  const plc_sched_int *d = sim->duri;
  plc_sched_int *end = sim->endi, *freei = sim->freei, *busyi = sim->busyi;
  const prep_dep *dep = r->pr->dep;
  const prep_step *k = r->pr->step;
  for (int i = 0, n = r->pr->n; i < n; i++, k++) {
    int st = k->st;
    plc_sched_int start = freei[st];
    const prep_dep *stop = dep + (nonneg ? k->nfar : k->ndep);
    for (const prep_dep *dj = dep; dj < stop; dj++) {
      plc_sched_int e = end[dj->pos] + d[dj->lat];
      if (e > start)
        start = e;
    }
    dep += k->ndep;
    if (k->mark != MARK_NONE)
      mark64(sim, st, k->mark, start);
    plc_sched_int dur = d[k->dur] + d[k->dur2];
    end[i] = freei[st] = start + dur;
    busyi[st] += dur;
  }
}

static void time_steps64(sim_run *r)
{
  if (r->nonneg)
    time_steps64_loop(r, 1);
  else
    time_steps64_loop(r, 0);
}

static void set_qz(mpq_t q, const mpz_t v, const mpz_t den)
{
  mpz_set(mpq_numref(q), v);
  mpz_set(mpq_denref(q), den);
  mpq_canonicalize(q);
}

/* time_steps64 on mpz_t, recording each block when asked. */
static void time_stepsz(sim_run *r)
{
  plc_sched_sim *sim = r->sim;
  mpz_t *d = sim->durz;
  const prep_dep *dep = r->pr->dep;
  int *block = NULL; /* per stage, the index of its next block, when recording */
  if (sim->rec_start) {
    block = plc_xmalloc((size_t)r->s->par.p * sizeof *block);
    memcpy(block, r->s->start, (size_t)r->s->par.p * sizeof *block);
  }
  for (int i = 0; i < r->pr->n; i++) {
    const prep_step *k = &r->pr->step[i];
    int st = k->st;
    mpz_set(sim->zstart, sim->freez[st]);
    for (const prep_dep *last = dep + k->ndep; dep < last; dep++) {
      mpz_add(sim->zgap, sim->endz[dep->pos], d[dep->lat]);
      if (mpz_cmp(sim->zgap, sim->zstart) > 0)
        mpz_set(sim->zstart, sim->zgap);
    }
    if (k->mark == MARK_WARM)
      mpz_sub(sim->warmz[st], sim->zstart, sim->busyz[st]);
    else if (k->mark == MARK_STEADY) {
      mpz_sub(sim->steadyz[st], sim->zstart, sim->busyz[st]);
      mpz_sub(sim->steadyz[st], sim->steadyz[st], sim->warmz[st]);
    }
    mpz_add(sim->zdur, d[k->dur], d[k->dur2]);
    mpz_add(sim->freez[st], sim->zstart, sim->zdur);
    mpz_set(sim->endz[i], sim->freez[st]);
    mpz_add(sim->busyz[st], sim->busyz[st], sim->zdur);
    if (block) {
      set_qz(sim->rec_start[block[st]], sim->zstart, sim->den);
      set_qz(sim->rec_end[block[st]++], sim->freez[st], sim->den);
    }
  }
  free(block);
}

typedef unsigned long long sim_word;
#ifdef __SIZEOF_INT128__
__extension__ typedef unsigned __int128 sim_uint;
#else
typedef uint64_t sim_uint;
#endif
#define SIM_BITS (8 * (int)sizeof(plc_sched_int))
#define SIM_WORDS (sizeof(plc_sched_int) / sizeof(sim_word))
#define SIM_MAX ((plc_sched_int)(((sim_uint)1 << (SIM_BITS - 1)) - 1))

/* v into *out when its magnitude is below 2^(SIM_BITS - 3), a quarter of
 * the range; else 0. */
static int z_to_sim(const mpz_t v, plc_sched_int *out)
{
  if (mpz_sizeinbase(v, 2) > (size_t)SIM_BITS - 3)
    return 0;
  sim_word w[SIM_WORDS];
  memset(w, 0, sizeof w);
  mpz_export(w, NULL, -1, sizeof(sim_word), 0, 0, v);
  sim_uint u = 0;
  for (size_t i = SIM_WORDS; i-- > 0;)
    u = (u << 16 << 16 << 16 << 16) | w[i]; /* four shifts: no shift by the width */
  *out = mpz_sgn(v) < 0 ? -(plc_sched_int)u : (plc_sched_int)u;
  return 1;
}

static void sim_to_z(mpz_t z, plc_sched_int v)
{
  sim_uint u = v < 0 ? -(sim_uint)v : (sim_uint)v;
  sim_word w[SIM_WORDS];
  for (size_t i = 0; i < SIM_WORDS; i++) {
    w[i] = (sim_word)u;
    u = u >> 16 >> 16 >> 16 >> 16;
  }
  mpz_import(z, SIM_WORDS, -1, sizeof(sim_word), 0, 0, w);
  if (v < 0)
    mpz_neg(z, z);
}

/* Scale one stage's times by sim->den into duri; 0 when one does not
 * fit in a quarter of the range. */
static int scale_stage(plc_sched_sim *sim, const plc_sched_times *t, plc_sched_int *d, mpz_t v)
{
  mpq_srcptr q[D_IN] = {t->f, t->b, t->w, t->fb, t->p2p, t->fbo};
  for (int k = 0; k < D_IN; k++) {
    mpz_divexact(v, sim->den, mpq_denref(q[k]));
    mpz_mul(v, v, mpq_numref(q[k]));
    if (!z_to_sim(v, &d[k]))
      return 0;
  }
  d[D_BS] = d[D_B] - d[D_W];
  d[D_FBS] = d[D_FB] - d[D_W];
  d[D_NW] = -d[D_W];
  return 1;
}

/* Scale one stage's times by sim->den into durz (the mpz path). */
static void scale_stage_z(plc_sched_sim *sim, const plc_sched_times *t, mpz_t *d)
{
  mpq_srcptr q[D_IN] = {t->f, t->b, t->w, t->fb, t->p2p, t->fbo};
  for (int k = 0; k < D_IN; k++) {
    mpz_divexact(d[k], sim->den, mpq_denref(q[k]));
    mpz_mul(d[k], d[k], mpq_numref(q[k]));
  }
  mpz_sub(d[D_BS], d[D_B], d[D_W]);
  mpz_sub(d[D_FBS], d[D_FB], d[D_W]);
  mpz_neg(d[D_NW], d[D_W]);
}

/* Decide the machine-integer path: every scaled time in a quarter of the
 * range, and the whole step bounded: each end's magnitude is at most
 * (blocks so far) x (longest block + largest p2p, in magnitude), so
 * nblocks times that must stay under SIM_MAX / 2. */
static int fast_fits(sim_run *r)
{
  plc_sched_sim *sim = r->sim;
  if (sim->exact_only || sim->rec_start)
    return 0;
  mpz_t v;
  mpz_init(v);
  int ok = 1;
  plc_sched_int maxd = 0, maxp = 0, lim = SIM_MAX / 2;
  for (int st = 0; ok && st < r->nt; st++) {
    plc_sched_int *d = &sim->duri[(size_t)st * D_N];
    ok = scale_stage(sim, &r->t[st], d, v);
    for (int k = 0; ok && k < D_N; k++) {
      plc_sched_int a = d[k] < 0 ? -d[k] : d[k];
      if (k == D_P2P)
        maxp = a > maxp ? a : maxp;
      else
        maxd = a > maxd ? a : maxd;
    }
  }
  mpz_clear(v);
  plc_sched_int n = r->s->nblocks > 0 ? r->s->nblocks : 1;
  if (sim->per_chunk) { /* an F&B may add two entries' parts */
    ok = ok && maxd <= lim / 4;
    maxd *= 2;
  }
  return ok && maxd <= lim / 2 && maxp <= lim / 2 && maxd + maxp <= lim / n;
}

/* Does every block take a time >= 0 (the machine-integer path)?  A
 * duration is one of f, b, w, fb, fbo, b - w, fb - w, or the sum of two
 * (an F&B of two entries), or with fb_pairs an fbo less another entry's
 * w: so when those are >= 0 and the least fbo is at least the largest w. */
static int durs_nonneg(const sim_run *r)
{
  static const int dur[] = {D_F, D_B, D_W, D_FB, D_FBO, D_BS, D_FBS};
  const plc_sched_int *d = r->sim->duri;
  plc_sched_int minfbo = d[D_FBO], maxw = 0;
  for (int st = 0; st < r->nt; st++, d += D_N) {
    for (size_t k = 0; k < sizeof dur / sizeof dur[0]; k++)
      if (d[dur[k]] < 0)
        return 0;
    minfbo = d[D_FBO] < minfbo ? d[D_FBO] : minfbo;
    maxw = d[D_W] > maxw ? d[D_W] : maxw;
  }
  return !r->sim->fb_pairs || minfbo >= maxw;
}

/* The common denominator of all times, then the path: machine integers
 * when they fit,
 * else mpz_t (durations scaled into durz).  Returns whether fast. */
static int scale_setup(sim_run *r)
{
  plc_sched_sim *sim = r->sim;
  mpz_set_ui(sim->den, 1);
  for (int st = 0; st < r->nt; st++) {
    const plc_sched_times *t = &r->t[st];
    mpq_srcptr q[D_IN] = {t->f, t->b, t->w, t->fb, t->p2p, t->fbo};
    for (int k = 0; k < D_IN; k++)
      mpz_lcm(sim->den, sim->den, mpq_denref(q[k]));
  }
  sim->duri[(size_t)r->nt * D_N] = 0; /* D_ZERO */
  if (fast_fits(r))
    return 1;
  for (int st = 0; st < r->nt; st++)
    scale_stage_z(sim, &r->t[st], &sim->durz[(size_t)st * D_N]);
  mpz_set_ui(sim->durz[(size_t)r->nt * D_N], 0);
  return 0;
}

static void set_qi(mpq_t q, plc_sched_int v, const mpz_t den)
{
  sim_to_z(mpq_numref(q), v);
  mpz_set(mpq_denref(q), den);
  mpq_canonicalize(q);
}

/* Every stage free and idle at 0. */
static void sim_start(sim_run *r)
{
  plc_sched_sim *sim = r->sim;
  for (int st = 0; st < r->s->par.p; st++) {
    if (r->fast) {
      sim->freei[st] = sim->busyi[st] = 0;
      sim->warmi[st] = sim->steadyi[st] = 0;
      continue;
    }
    mpz_set_ui(sim->freez[st], 0);
    mpz_set_ui(sim->busyz[st], 0);
    mpz_set_ui(sim->warmz[st], 0);
    mpz_set_ui(sim->steadyz[st], 0);
  }
}

/* Makespan, idle, the critical stage and its bubble. */
static void sim_results(sim_run *r)
{
  plc_sched_sim *sim = r->sim;
  int p = r->s->par.p;
  for (int st = 0; st < p; st++) {
    if (r->fast) {
      set_qi(sim->stage_free[st], sim->freei[st], sim->den);
      set_qi(sim->busy[st], sim->busyi[st], sim->den);
      set_qi(sim->warmup[st], sim->warmi[st], sim->den);
      set_qi(sim->steady[st], sim->steadyi[st], sim->den);
    } else {
      set_qz(sim->stage_free[st], sim->freez[st], sim->den);
      set_qz(sim->busy[st], sim->busyz[st], sim->den);
      set_qz(sim->warmup[st], sim->warmz[st], sim->den);
      set_qz(sim->steady[st], sim->steadyz[st], sim->den);
    }
  }
  mpq_set_ui(sim->makespan, 0, 1);
  sim->critical = 0;
  for (int st = 0; st < p; st++) {
    if (mpq_cmp(sim->stage_free[st], sim->makespan) > 0)
      mpq_set(sim->makespan, sim->stage_free[st]);
    if (mpq_cmp(sim->busy[st], sim->busy[sim->critical]) > 0)
      sim->critical = st;
  }
  for (int st = 0; st < p; st++) {
    mpq_sub(sim->idle[st], sim->makespan, sim->busy[st]);
    mpq_sub(sim->cooldown[st], sim->idle[st], sim->warmup[st]);
    mpq_sub(sim->cooldown[st], sim->cooldown[st], sim->steady[st]);
  }
  mpq_sub(sim->bubble, sim->makespan, sim->busy[sim->critical]);
}

/* Time s through pr with times into sim. */
static void sim_time(const plc_sched *s, const plc_sched_prep *pr, const plc_sched_times *times,
                     plc_sched_sim *sim)
{
  int nt = sim->per_chunk ? s->nchunks : s->par.p;
  sim_grow(sim, s->par.p, nt, s->nblocks);
  sim_run r = {.s = s, .t = times, .sim = sim, .pr = pr, .nt = nt};
  r.fast = sim->used_fast = scale_setup(&r);
  r.nonneg = r.fast && durs_nonneg(&r);
  if (!r.fast)
    sim_grow_z(sim, s->nblocks);
  sim_start(&r);
  if (r.fast)
    time_steps64(&r);
  else
    time_stepsz(&r);
  sim_results(&r);
}

int plc_sched_simulate(const plc_sched *s, const plc_sched_times *times, plc_sched_sim *sim,
                       char *msg, size_t msglen)
{
  sim->p = s->par.p;
  const plc_sched_prep *pr = sim->prep;
  plc_sched_prep *own = NULL;
  if (!pr || pr->s != s || pr->per_chunk != sim->per_chunk || pr->fb_pairs != sim->fb_pairs)
    pr = own = plc_sched_prepare(s, sim->per_chunk, sim->fb_pairs, msg, msglen);
  if (!pr)
    return 0;
  if (times)
    sim_time(s, pr, times, sim);
  plc_sched_prep_free(own);
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
    mpq_init(t[i].fbo);
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
    mpq_clear(t[i].fbo);
  }
}
