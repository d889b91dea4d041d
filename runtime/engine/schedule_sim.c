/* schedule_sim.c - the exact block-level simulator of a pipeline schedule.
 *
 * Every stage runs its blocks in order; a block starts at max(the stage is
 * free, each dependency's end, plus the p2p latency of the dependency's
 * stage when that is another stage).  A run has two parts.  Preparing
 * finds an order to time the blocks in: in sweeps, each running every
 * stage's next block that waits only for blocks of earlier sweeps (the
 * next F of the microbatch lives on the stage of chunk c+1, the next B on
 * that of c-1); the order they run in is kept, each block with its
 * dependencies as positions in it.  A sweep that runs nothing with
 * blocks left is a deadlock.  In a steady phase the sweeps repeat, every
 * m microbatches, q positions on: from there the order is copied rather
 * than swept, each copy checked (prep_repeat), whole periods at a time,
 * and periods copied from copies are left unwritten until a walk needs
 * them.  Timing then walks that order once.  Since a block's start
 * depends only on blocks before it in the order (its own stage's
 * previous block and what it waits for), the order does not change a
 * time, and it does not depend on the times: a schedule simulated again
 * with other times (a re-analysis) is prepared once (plc_sched_prepare).
 * Where the copied order's times repeat too (each period L later than the
 * one before), the walk jumps over the repeats (schedule_walk.h's run;
 * the proof before its holds).  Without times (validation) only the order
 * is found.  Times are integers over their common denominator: machine
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

/* A part's slot in the prepared tables is 2 key + its phase (F 0, B 1). */
_Static_assert(PLC_SCHED_F == 0 && PLC_SCHED_B == 1, "F and B are the slots' 0 and 1");

/* Per times entry in duri: f, b, w, fb, p2p, fbo, b - w, fb - w, -w.  One
 * more entry after the last times entry's, D_ZERO, is 0: what a
 * dependency on the same stage adds, and the second part of a block
 * whose duration is one entry. */
enum { D_F, D_B, D_W, D_FB, D_P2P, D_FBO, D_BS, D_FBS, D_NW, D_N };
#define D_IN 6 /* the entries read from plc_sched_times */

/* Multiples of the order's period tried for the state's (schedule_walk.h). */
#define PERIOD_MULT 6

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

/* The order's periodic range (prep_period), where it has one: every step
 * i in [pa, phi) is step i - q again (same stage, durations and
 * latencies, no mark, each dependency and its stage's previous step q
 * positions later), and each stage has a step in every q consecutive
 * positions of [pa - q, phi).  A span for the walk that reads every
 * dependency, another for the walk that reads only those on other stages
 * (non-negative times): the dependencies it compares are those it reads.
 * reach: how far back a step of the range reads (a dependency, its
 * stage's previous step); tail: at most the least position a step at
 * phi - q or later reads. */
typedef struct prep_span {
  int pa, phi, reach, tail;
} prep_span;

typedef struct prep_period {
  int q;              /* 0: none */
  prep_span all, far;
} prep_period;

struct plc_sched_prep {
  const plc_sched *s;
  int per_chunk, fb_pairs;
  int n, ndep, cap_dep;
  prep_step *step;    /* s->nblocks once prepared */
  prep_dep *dep;
  prep_period per;    /* per.q == 0: none found */
  long trusted;       /* blocks taken as repeats from the generator's copies */
  unsigned used;      /* the D_ kinds some step's duration takes, a bit each */
  /* The unwritten copies: steps [v_lo, v_hi) are each the step of the
   * template period [v_lo - q, v_lo) (q = v_q, the order's period) a
   * whole number u of periods back,
   * with their dependencies u q later and at offsets u v_d later (v_d
   * dependencies a period, the template's from v_off), written only when
   * a walk needs them (prep_fill; filled, a byte a period): a walk that
   * skips them never touches their memory. */
  int v_lo, v_hi, v_q, v_off, v_d;
  unsigned char *filled;
};

/* Preparing: per position in the order, its block, its first dependency
 * and its stage's previous step's position (or -1), together: only the
 * written positions' memory is touched (prep_fill_run). */
typedef struct prep_pos {
  int idx, off, prev;
} prep_pos;

/* Preparing: the level sweeps' state. */
typedef struct prep_run {
  const plc_sched *s;
  plc_sched_prep *pr;
  int nact;
  int *cursor;         /* per stage, its next block */
  int *active;         /* the nact stages with blocks left, in stage order */
  int *wait;           /* per stage, the ended slot its next block was last
                          found waiting for, or -1 */
  int *ended;          /* per part, F(mb, c) at 2 key, B at 2 key + 1 (part_key):
                          1 + the step that ends it; 0 until it ran (so a
                          fresh zeroed allocation, not a pass setting -1) */
  int *warm_at, *steady_at; /* per stage: the blocks marked MARK_WARM, MARK_STEADY */
  /* the steady phase's repeat (prep_repeat): */
  int m;               /* microbatches a repeat moves on; 0: none is looked for */
  int *rep;            /* per stage, the blocks of a repeat (0: none) */
  prep_pos *at;        /* per position (prep_pos) */
  int *pos_of;         /* per block, its position (set when it runs: read only
                          for blocks before their stage's cursor) */
  int *last_pos;       /* per stage, its last step's position (or -1) */
  int tried;           /* the position copying was last tried at */
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

/* A part's key (F and B of (mb, chunk)), chunk-major: a stage's blocks
 * of one chunk, microbatch after microbatch, end parts side by side. */
static inline int part_key(const plc_sched *s, int mb, int chunk)
{
  return chunk * s->par.mu + mb;
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
  free(sim->busyq);
  free(sim->dur64);
  free(sim->free64);
  free(sim->end64);
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

/* Grow the scratch to p stages and nt times entries; it is kept
 * for the next run, so a search allocates only when a run is larger. */
static void sim_grow(plc_sched_sim *sim, int p, int nt)
{
  if (nt > sim->cap_t) {
    mpz_grow(&sim->durz, sim->cap_t ? sim->cap_t * D_N + 1 : 0, nt * D_N + 1);
    sim->duri = plc_xrealloc(sim->duri, ((size_t)nt * D_N + 1) * sizeof(plc_sched_int));
    sim->dur64 = plc_xrealloc(sim->dur64, ((size_t)nt * D_N + 1) * sizeof(int64_t));
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
    sim->busyq = plc_xrealloc(sim->busyq, (size_t)p * sizeof(plc_sched_int));
    sim->free64 = plc_xrealloc(sim->free64, (size_t)p * 5 * sizeof(int64_t));
    sim->busy64 = sim->free64 + p; /* one allocation: five per-stage arrays */
    sim->warm64 = sim->free64 + 2 * p;
    sim->steady64 = sim->free64 + 3 * p;
    sim->grow64 = sim->free64 + 4 * p;
    sim->cap_p = p;
  }
}

/* The block ends of the 128-bit and the 64-bit walks, each grown only
 * when its walk runs (a large step's ends are megabytes, and a heap
 * allocation touches its first and last pages, huge ones here). */
static void sim_grow_i(plc_sched_sim *sim, int n)
{
  if (n <= sim->cap_n)
    return;
  sim->endi = plc_xrealloc(sim->endi, (size_t)n * sizeof(plc_sched_int));
  sim->cap_n = n;
}

static void sim_grow_64(plc_sched_sim *sim, int n)
{
  if (n <= sim->cap_n64)
    return;
  sim->end64 = plc_xrealloc(sim->end64, (size_t)n * sizeof(int64_t));
  sim->cap_n64 = n;
}

/* The dependencies of one part (F or B of (mb, c)) appended to d. */
static inline int part_deps(const plc_sched *s, int isb, int mb, int c, sim_dep *d)
{
  int first, last, n = 0, key = part_key(s, mb, c);
  mb_range(s, mb, &first, &last);
  if (!isb) {
    if (c > first)
      d[n++] = (sim_dep){part_key(s, mb, c - 1), 0, mb, c - 1};
    return n;
  }
  d[n++] = (sim_dep){key, 0, mb, c};
  if (c < last)
    d[n++] = (sim_dep){part_key(s, mb, c + 1), 1, mb, c + 1};
  return n;
}

static inline int block_deps(const plc_sched *s, const plc_sched_block *b, sim_dep *d)
{
  switch (b->phase) {
  case PLC_SCHED_F: return part_deps(s, 0, b->mb, b->chunk, d);
  case PLC_SCHED_B: return part_deps(s, 1, b->mb, b->chunk, d);
  case PLC_SCHED_W:
    d[0] = (sim_dep){part_key(s, b->mb, b->chunk), 1, b->mb, b->chunk};
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

/* The position of the step that ended d, or -1 while it has not. */
static int dep_pos(const prep_run *r, const sim_dep *d)
{
  return r->ended[2 * d->key + d->isb] - 1;
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
  r->pr->used |= 1u << (k->dur % D_N) | (k->dur2 != r->zero ? 1u << (k->dur2 % D_N) : 0);
}

/* The parts block b ends, ended at pos. */
static inline void prep_ended(prep_run *r, const plc_sched_block *b, int pos)
{
  const plc_sched *s = r->s;
  if (b->phase == PLC_SCHED_F || b->phase == PLC_SCHED_FB)
    r->ended[2 * part_key(s, b->mb, b->chunk)] = pos + 1;
  else if (b->phase == PLC_SCHED_B)
    r->ended[2 * part_key(s, b->mb, b->chunk) + 1] = pos + 1;
  if (b->phase == PLC_SCHED_FB)
    r->ended[2 * part_key(s, b->mb2, b->chunk2) + 1] = pos + 1;
}

/* The parts block b waits for, as block_deps gives them (the same
 * order), by their slot in r->ended (2 key + phase) and chunk; returns
 * how many. */
static inline int block_waits(const plc_sched *s, const plc_sched_block *b, int *sl, int *ch)
{
  int n = 0, first, last;
  if (b->phase == PLC_SCHED_W) {
    sl[0] = 2 * part_key(s, b->mb, b->chunk) + 1;
    ch[0] = b->chunk;
    return 1;
  }
  if (b->phase != PLC_SCHED_B) { /* F, or an F&B's forward: F(mb, c - 1) */
    mb_range(s, b->mb, &first, &last);
    if (b->chunk > first) {
      sl[n] = 2 * part_key(s, b->mb, b->chunk - 1);
      ch[n++] = b->chunk - 1;
    }
  }
  if (b->phase != PLC_SCHED_F) { /* B, or an F&B's backward: F(mb, c), B(mb, c + 1) */
    int fb = b->phase == PLC_SCHED_FB, mb = fb ? b->mb2 : b->mb, c = fb ? b->chunk2 : b->chunk;
    mb_range(s, mb, &first, &last);
    sl[n] = 2 * part_key(s, mb, c);
    ch[n++] = c;
    if (c < last) {
      sl[n] = 2 * part_key(s, mb, c + 1) + 1;
      ch[n++] = c + 1;
    }
  }
  return n;
}

/* Run stage st's next block in the sweep that started at position level
 * when everything it waits for ended in an earlier sweep; returns whether
 * it ran.  Running it appends it to the order: its dependencies (those on
 * other stages first: they can be the only ones that matter; those on st
 * from the end), its position (prep_pos) and the parts it ends. */
static int prep_try(prep_run *r, int st, int level)
{
  int w = r->wait[st], *ended = r->ended;
  if (w >= 0 && (unsigned)(ended[w] - 1) >= (unsigned)level) /* -1 too: not yet */
    return 0;
  const plc_sched *s = r->s;
  int cur = r->cursor[st];
  const plc_sched_block *b = &s->blocks[cur];
  int sl[4], ch[4], at[4], nd = block_waits(s, b, sl, ch);
  for (int i = 0; i < nd; i++) {
    at[i] = ended[sl[i]] - 1;
    if ((unsigned)at[i] >= (unsigned)level) {
      r->wait[st] = sl[i];
      return 0;
    }
  }
  r->wait[st] = -1;
  plc_sched_prep *pr = r->pr;
  if (pr->ndep + nd > pr->cap_dep) {
    pr->cap_dep = 2 * pr->cap_dep + 4;
    pr->dep = plc_xrealloc(pr->dep, (size_t)pr->cap_dep * sizeof *pr->dep);
  }
  int pos = pr->n++, off = pr->ndep, nfar = 0, near = nd;
  prep_step *k = &pr->step[pos];
  k->st = st;
  k->ndep = (uint8_t)nd;
  k->mark = cur == r->warm_at[st] ? MARK_WARM : cur == r->steady_at[st] ? MARK_STEADY : MARK_NONE;
  step_durs(r, st, b, k);
  prep_dep *out = &pr->dep[off];
  for (int i = 0; i < nd; i++) {
    int ds = r->cstage[ch[i]];
    if (ds != st)
      out[nfar++] = (prep_dep){at[i], slot(r, ds, ch[i]) * D_N + D_P2P};
    else
      out[--near] = (prep_dep){at[i], r->zero};
  }
  k->nfar = (uint8_t)nfar;
  pr->ndep = off + nd;
  r->at[pos] = (prep_pos){cur, off, r->last_pos[st]};
  r->pos_of[cur] = pos;
  r->last_pos[st] = pos;
  if (b->phase <= PLC_SCHED_B) /* F ends its part's slot 2 key, B 2 key + 1 */
    ended[2 * part_key(s, b->mb, b->chunk) + b->phase] = pos + 1;
  else
    prep_ended(r, b, pos);
  r->cursor[st] = cur + 1;
  return 1;
}

/* ---- the steady phase's repeat ------------------------------------------ */

/* In a steady phase each stage runs, every m microbatches (1 for 1f1b and
 * zb_h1, Megatron's group for interleaved), the same blocks again for the
 * microbatches m later, and the sweeps repeat.  Sweeping is most of
 * preparing, so once the stages' next blocks are those of q positions
 * back each moved on by its stage's repeat (prep_repeat_from), the order
 * is continued by copying: the step at n is the one at n - q again for
 * the block its stage has next, when that block is the one q back moved
 * on by m microbatches (prep_shifted), and each block it waits for is
 * the one the copied step waited for, moved on by its stage's repeat, so
 * moved on by m microbatches too (checked): a dependency (F of the
 * previous chunk, F and B of the next, B for a W) moves with its
 * microbatch, and each part is ended by one block only.  Every block then
 * waits for the blocks it waits for in the schedule, each already placed
 * before it: the order is one to time the schedule in (the times do not
 * depend on which), and copying stops at the first step for which that is
 * not shown, the sweeps carrying on from there.  The copied range is
 * periodic by construction, which timing uses (prep_period). */

/* Is a block b moved on by m microbatches (DualPipe: within its half)? */
static int prep_shifted(const plc_sched *s, const plc_sched_block *a, const plc_sched_block *b,
                        int m)
{
  if (a->phase != b->phase || a->split != b->split || a->chunk != b->chunk ||
      a->mb != b->mb + m)
    return 0;
  if (a->phase == PLC_SCHED_FB && (a->chunk2 != b->chunk2 || a->mb2 != b->mb2 + m))
    return 0;
  if (s->place == PLC_SCHED_PLACE_BIDIR) {
    int h = s->par.mu / 2;
    if ((a->mb >= h) != (b->mb >= h) ||
        (a->phase == PLC_SCHED_FB && (a->mb2 >= h) != (b->mb2 >= h)))
      return 0;
  }
  return 1;
}

/* Each stage's repeat: from the block in the middle of its list, the
 * distance to that block moved on by m microbatches; 0 when a stage has
 * none (then nothing is copied). */
static void prep_repeat_init(prep_run *r)
{
  const plc_sched *s = r->s;
  const plc_sched_placement pl = s->place;
  r->m = pl == PLC_SCHED_PLACE_ROUND ? (s->par.group ? s->par.group : s->par.p) : 1;
  for (int st = 0; st < s->par.p; st++) {
    int a = s->start[st], e = s->start[st + 1], i = a + (e - a) / 2;
    r->rep[st] = 0;
    for (int j = i + 1; i < e && j < e && !r->rep[st]; j++)
      if (prep_shifted(s, &s->blocks[j], &s->blocks[i], r->m))
        r->rep[st] = j - i;
    if (!r->rep[st])
      r->m = 0;
  }
}

/* The position the copying starts from: q back, every stage's next block
 * was its next one now less its repeat; -1 when there is none. */
static int prep_repeat_from(const prep_run *r)
{
  const int *start = r->s->start;
  int p = r->s->par.p, from = r->pr->n;
  for (int st = 0; st < p; st++) {
    int c = r->cursor[st] - r->rep[st];
    if (c < start[st] || r->cursor[st] >= start[st + 1])
      return -1;
    from = r->pos_of[c] < from ? r->pos_of[c] : from;
  }
  for (int st = 0; st < p; st++) {
    int c = r->cursor[st] - r->rep[st];
    if (c > start[st] && r->pos_of[c - 1] >= from)
      return -1;
  }
  return from < r->pr->n ? from : -1;
}

/* The position of the block that ends, m microbatches later, the part
 * block ib of stage sb ends (an F&B's by its stage's repeat, as it ends
 * two); -1 when it has not run or is not known. */
static int prep_moved(const prep_run *r, int ib, int sb)
{
  const plc_sched *s = r->s;
  const plc_sched_block *b = &s->blocks[ib];
  if (b->phase == PLC_SCHED_F || b->phase == PLC_SCHED_B) {
    if (b->mb + r->m >= s->par.mu)
      return -1;
    return r->ended[2 * part_key(s, b->mb + r->m, b->chunk) + (b->phase == PLC_SCHED_B)] - 1;
  }
  int jb = ib + r->rep[sb];
  if (jb >= r->cursor[sb] || !prep_shifted(s, &s->blocks[jb], b, r->m))
    return -1;
  return r->pos_of[jb];
}

/* Copying's state: where it started (x1, the copies from x2 = x1 + q),
 * and per span (all, far) the run of steps that are each the one q back
 * moved on (their dependencies too) so far, and the longest. */
typedef struct prep_copying {
  int x1, x2, q;
  int bulk_end;        /* the end of the last period copied at once */
  int virt;            /* the unwritten copies are this copying's */
  int bulk_clean;      /* none of that period's dependencies was placed before x1 */
  int bulk_reach[2];   /* how far back its steps read (all, far) */
  prep_span run[2], best[2];
} prep_copying;

/* Run c of the copies ends before position end (a step that is not the
 * one q back moved on): kept when the longest. */
static void prep_run_end(prep_copying *c, int k, int end)
{
  prep_span *run = &c->run[k];
  if (end - run->pa > c->best[k].phi - c->best[k].pa)
    c->best[k] = (prep_span){run->pa, end, run->reach, 0};
  *run = (prep_span){end + 1, 0, 0, 0};
}

/* The span's run k after the copy at n: reach grows, or the run ends
 * there when the copy is not the step q back moved on (not exact). */
static inline void prep_run_step(prep_copying *c, int k, int exact, int n, int least)
{
  if (!exact)
    prep_run_end(c, k, n);
  else if (n - least > c->run[k].reach)
    c->run[k].reach = n - least;
}

/* Write the unwritten copies in [from, to) (see plc_sched_prep), whole
 * periods at a time, and with r (while preparing) their tables too.
 * Writing leaves what the prepared order is unchanged: a walk of a
 * const prep may call it. */
static void prep_fill_run(plc_sched_prep *pr, prep_run *r, int from, int to)
{
  int q = pr->v_q;
  if (pr->v_hi <= pr->v_lo || to <= pr->v_lo || from >= pr->v_hi)
    return;
  int u0 = from > pr->v_lo ? (from - pr->v_lo) / q : 0;
  int u1 = ((to < pr->v_hi ? to : pr->v_hi) - pr->v_lo + q - 1) / q;
  for (int u = u0; u < u1; u++) {
    if (pr->filled[u])
      continue;
    pr->filled[u] = 1;
    int t0 = pr->v_lo + u * q, tt0 = pr->v_lo - q, shift = (u + 1) * q;
    long dshift = (long)(u + 1) * pr->v_d;
    for (int i = 0, off = pr->v_off; i < q; i++) {
      const prep_step *k = &pr->step[tt0 + i];
      pr->step[t0 + i] = *k;
      for (int j = 0; j < k->ndep; j++)
        pr->dep[off + dshift + j] = (prep_dep){pr->dep[off + j].pos + shift, pr->dep[off + j].lat};
      if (r) {
        r->at[t0 + i].idx = r->at[tt0 + i].idx + (u + 1) * r->rep[k->st];
        r->at[t0 + i].off = r->at[tt0 + i].off + (int)dshift;
        r->at[t0 + i].prev = r->at[tt0 + i].prev + shift;
      }
      off += k->ndep;
    }
  }
}

static void prep_fill(const plc_sched_prep *pr, int from, int to)
{
  prep_fill_run((plc_sched_prep *)pr, NULL, from, to);
}

/* prep_moved for the step at pb, which may be an unwritten copy (its
 * block is its template's moved on by its stage's repeat a period). */
static int prep_moved_from(const prep_run *r, int pb)
{
  const plc_sched_prep *pr = r->pr;
  int u = 0;
  if (pb >= pr->v_lo && pb < pr->v_hi && !pr->filled[(pb - pr->v_lo) / pr->v_q]) {
    u = (pb - pr->v_lo) / pr->v_q + 1;
    pb -= u * pr->v_q;
  }
  int st = pr->step[pb].st;
  return prep_moved(r, r->at[pb].idx + u * r->rep[st], st);
}

/* Copy a whole period at n = pr->n at once, when every step of it is
 * shown right in advance: each stage st's next rep[st] blocks are its
 * blocks of the q steps before n (the template) moved on by m
 * microbatches, none of them marked, and each dependency of the template
 * moved on is found: placed at x1 or later, the step q later (its copy,
 * holding its block moved on), else by its part (prep_moved_from).  Each
 * step is then the template's, without a mark, its stage's previous step
 * q later when that was placed at x1 or later (a copy of it is, and the
 * steps between are copies of other stages' steps), else the stage's
 * last before n.  A step with a dependency or previous step found
 * otherwise than q later, or whose template has a mark, is not the one q
 * back moved on and ends the runs.  A template copied at once with no
 * dependency placed before x1 (clean) has none of those: every copy is
 * the template's with everything q later (the runs go on, reaching back
 * as far as the template's steps, bulk_reach, whether or not those were
 * in a run), and only the blocks are checked per step.  Returns whether
 * it copied. */
static int prep_copy_period(prep_run *r, prep_copying *c)
{
  const plc_sched *s = r->s;
  const plc_sched_block *blocks = s->blocks;
  plc_sched_prep *pr = r->pr;
  int n = pr->n, q = c->q, p = s->par.p, m = r->m;
  int clean = c->bulk_end == n && c->bulk_clean; /* a template copied at once, none of its
                                                    dependencies placed before x1 */
  if (n + q > s->nblocks)
    return 0;
  int fast = s->place != PLC_SCHED_PLACE_BIDIR;
  for (int st = 0; st < p; st++) {
    int a = r->cursor[st], e = a + r->rep[st], back = r->rep[st];
    if (e > s->start[st + 1] || (r->warm_at[st] >= a && r->warm_at[st] < e) ||
        (r->steady_at[st] >= a && r->steady_at[st] < e))
      return 0;
    if (s->copy_m == m && s->copy[3 * st] == back && a >= s->copy[3 * st + 1] &&
        e <= s->copy[3 * st + 2]) { /* the generator copied them so (plc_sched.copy) */
      pr->trusted += e - a;
      continue;
    }
    for (int i = a; i < e; i++) {
      const plc_sched_block *x = &blocks[i], *y = &blocks[i - back];
      if (x->mb != y->mb + m || x->chunk != y->chunk || x->phase != y->phase ||
          x->split != y->split || ((x->phase == PLC_SCHED_FB || !fast) && !prep_shifted(s, x, y, m)))
        return 0;
    }
  }
  /* a period copied from one copied at once is left unwritten (the first
   * such starts the range, the template before it written) */
  int breach[2] = {0, 0};
  int virt = clean && (pr->v_hi == pr->v_lo || (c->virt && pr->v_hi == n)), low = 0;
  int more = virt && pr->v_hi > pr->v_lo; /* the template unwritten too */
  int off = more ? 0 : r->at[n - q].off, nd = more ? pr->v_d : pr->ndep - off;
  if (pr->ndep + nd > pr->cap_dep) { /* unwritten ones keep their room */
    pr->cap_dep = 2 * pr->cap_dep + nd;
    pr->dep = plc_xrealloc(pr->dep, (size_t)pr->cap_dep * sizeof *pr->dep);
  }
  const prep_dep *od = &pr->dep[off];
  prep_dep *dd = &pr->dep[pr->ndep];
  for (int j = 0; j < nd && !virt; j++) {
    int pb = od[j].pos, np = pb >= c->x1 || clean ? pb + q : prep_moved_from(r, pb);
    if (np < 0)
      return 0;
    low |= np < c->x1;
    dd[j] = (prep_dep){np, od[j].lat};
  }
  if (virt && !more) {
    c->virt = 1;
    pr->v_lo = pr->v_hi = n;
    pr->v_q = q;
    pr->v_off = off;
    pr->v_d = nd;
    pr->filled = plc_xcalloc((size_t)(s->nblocks / q + 2), 1);
  }
  int *pos_of = r->pos_of, *ended = r->ended, mu = s->par.mu;
  for (int st = 0; st < p; st++) {
    int a = r->cursor[st], e = a + r->rep[st], back = r->rep[st];
    for (int i = a; i < e && !virt; i++)
      r->at[pos_of[i - back] + q].idx = i;
    for (int i = a; i < e; i++) {
      const plc_sched_block *b = &s->blocks[i];
      int pos = pos_of[i - back] + q;
      pos_of[i] = pos;
      if (b->phase <= PLC_SCHED_B) /* F ends its part's slot 2 key, B 2 key + 1 */
        ended[2 * (b->chunk * mu + b->mb) + b->phase] = pos + 1;
      else
        prep_ended(r, b, pos);
    }
    r->cursor[st] = e;
  }
  for (int i = n - q, jo = 0; i < n && !virt; i++) { /* no memcpy (a string move for valgrind) */
    const prep_step *k = &pr->step[i];
    int t = i + q, prev = r->at[i].prev;
    pr->step[t] = *k;
    pr->step[t].mark = MARK_NONE;
    r->at[t].off = r->at[i].off + nd;
    r->at[t].prev = prev >= c->x1 ? prev + q : r->last_pos[k->st];
    if (clean)
      continue;
    int exact[2], least[2] = {r->at[t].prev, r->at[t].prev};
    exact[0] = exact[1] = prev >= c->x1 && k->mark == MARK_NONE;
    for (int j = 0; j < k->ndep; j++, jo++) {
      int np = dd[jo].pos;
      if (np != od[jo].pos + q) {
        exact[0] = 0;
        exact[1] &= j >= k->nfar;
      }
      least[0] = np < least[0] ? np : least[0];
      if (j < k->nfar)
        least[1] = np < least[1] ? np : least[1];
    }
    prep_run_step(c, 0, exact[0], t, least[0]);
    prep_run_step(c, 1, exact[1], t, least[1]);
    for (int k2 = 0; k2 < 2; k2++) /* every copy's, for the clean copies of it */
      breach[k2] = t - least[k2] > breach[k2] ? t - least[k2] : breach[k2];
  }
  for (int k2 = 0; k2 < 2; k2++) {
    if (clean) /* copies of the template reach back as far as it does */
      c->run[k2].reach = c->bulk_reach[k2] > c->run[k2].reach ? c->bulk_reach[k2] : c->run[k2].reach;
    else
      c->bulk_reach[k2] = breach[k2];
  }
  if (virt)
    pr->v_hi = n + q;
  for (int st = 0; st < p; st++) /* every stage has steps in the template */
    r->last_pos[st] += q;
  pr->n = n + q;
  c->bulk_end = n + q;
  c->bulk_clean = !low;
  pr->ndep += nd;
  return 1;
}

/* Copy the order from q back while it is shown right (see above), and
 * note the spans timing may skip in: at each period boundary whole
 * periods at once while they pass (prep_copy_period), else step by step,
 * the step at n copying the one at src = n - q.  A dependency placed at
 * x1 or later moved on is the one q positions later (its copy, holding
 * its block moved on); one placed before, the block that ends its part
 * moved on, found by the part (prep_moved_from).  Returns the steps
 * copied. */
static int prep_repeat(prep_run *r, int from)
{
  const plc_sched *s = r->s;
  plc_sched_prep *pr = r->pr;
  const plc_sched_block *blocks = s->blocks;
  const int *start = s->start, *rep = r->rep, *warm_at = r->warm_at, *steady_at = r->steady_at;
  int *cursor = r->cursor, *pos_of = r->pos_of;
  prep_pos *at = r->at;
  int *ended = r->ended;
  prep_step *step = pr->step;
  prep_dep *dep = pr->dep;
  int n = pr->n, ndep = pr->ndep, m = r->m, q = n - from, x1 = from;
  int plain = s->place != PLC_SCHED_PLACE_BIDIR; /* no half to stay in */
  prep_copying c = {.x1 = from, .x2 = n, .q = q};
  for (int k = 0; k < 2; k++)
    c.run[k] = (prep_span){c.x2, 0, 0, 0};
  for (;; n++) {
    if ((n - c.x2) % q == 0) {
      pr->n = n;
      pr->ndep = ndep;
      while (prep_copy_period(r, &c))
        ;
      prep_fill_run(pr, r, pr->n - q, pr->n); /* the next copies read it */
      n = pr->n;
      ndep = pr->ndep;
      dep = pr->dep;
    }
    const prep_step *o = &step[n - q];
    int st = o->st, idx = cursor[st], io = at[n - q].idx;
    if (idx != io + rep[st] || idx >= start[st + 1])
      break;
    const plc_sched_block *a = &blocks[idx], *b = &blocks[io];
    if (a->mb != b->mb + m || a->chunk != b->chunk || a->phase != b->phase ||
        a->split != b->split || ((a->phase == PLC_SCHED_FB || !plain) && !prep_shifted(s, a, b, m)))
      break;
    if (ndep + 4 > pr->cap_dep) {
      pr->cap_dep = 2 * pr->cap_dep + 4;
      dep = pr->dep = plc_xrealloc(pr->dep, (size_t)pr->cap_dep * sizeof *pr->dep);
    }
    const prep_dep *od = &dep[at[n - q].off];
    prep_dep *nd = &dep[ndep];
    /* its stage's previous step: exact when a copy (q after the copied
     * step's, the steps between copied in order) */
    int prev = r->last_pos[st];
    int nk = o->ndep, nfar = o->nfar, ex_all = prev >= c.x2, ex_far = ex_all, j;
    int l_all = prev >= 0 ? prev : n, l_far = l_all;
    for (j = 0; j < nk; j++) {
      int pb = od[j].pos, np = pb + q;
      if (pb < x1) {
        np = prep_moved_from(r, pb);
        if (np < 0)
          break;
        if (np != pb + q) {
          ex_all = 0;
          ex_far &= j >= nfar;
        }
      }
      nd[j] = (prep_dep){np, od[j].lat};
      l_all = np < l_all ? np : l_all;
      if (j < nfar)
        l_far = np < l_far ? np : l_far;
    }
    if (j < nk)
      break;
    prep_step *k = &step[n];
    *k = *o;
    k->mark = idx == warm_at[st] ? MARK_WARM : idx == steady_at[st] ? MARK_STEADY : MARK_NONE;
    at[n].idx = idx;
    pos_of[idx] = n;
    at[n].off = ndep;
    r->at[n].prev = prev;
    r->last_pos[st] = n;
    int key = 2 * part_key(s, a->mb, a->chunk);
    if (a->phase == PLC_SCHED_F || a->phase == PLC_SCHED_FB)
      ended[key] = n + 1;
    else if (a->phase == PLC_SCHED_B)
      ended[key + 1] = n + 1;
    if (a->phase == PLC_SCHED_FB)
      ended[2 * part_key(s, a->mb2, a->chunk2) + 1] = n + 1;
    cursor[st] = idx + 1;
    ndep += nk;
    int plain_step = k->mark == MARK_NONE && o->mark == MARK_NONE;
    prep_run_step(&c, 0, ex_all && plain_step, n, l_all);
    prep_run_step(&c, 1, ex_far && plain_step, n, l_far);
  }
  pr->n = n;
  pr->ndep = ndep;
  for (int k = 0; k < 2; k++)
    prep_run_end(&c, k, n);
  if (c.best[1].phi - c.best[1].pa > pr->per.far.phi - pr->per.far.pa)
    pr->per = (prep_period){.q = q, .all = c.best[0], .far = c.best[1]};
  return n - c.x2;
}

/* A span's tail (prep_span), once the order is complete: at most the
 * least position the steps from phi - q on read (every dependency, or
 * those on other stages): those of the range, before phi, read at most
 * reach back, so only the steps after it are looked at. */
static void prep_tail_of(prep_run *r, prep_span *sp, int q, int far)
{
  plc_sched_prep *pr = r->pr;
  prep_fill_run(pr, r, sp->phi, pr->n);
  sp->tail = sp->phi - q - sp->reach > 0 ? sp->phi - q - sp->reach : 0;
  for (int i = sp->phi; i < pr->n; i++) {
    const prep_step *k = &pr->step[i];
    const prep_dep *d = &pr->dep[r->at[i].off];
    if (r->at[i].prev >= 0 && r->at[i].prev < sp->tail)
      sp->tail = r->at[i].prev;
    for (int j = 0, nj = far ? k->nfar : k->ndep; j < nj; j++)
      sp->tail = d[j].pos < sp->tail ? d[j].pos : sp->tail;
  }
}

static void prep_tail(prep_run *r)
{
  prep_period *per = &r->pr->per;
  if (!per->q)
    return;
  if (per->all.phi - per->all.pa < 2 * per->q)
    per->all.phi = per->all.pa = 0;
  if (per->far.phi - per->far.pa < 2 * per->q)
    per->far.phi = per->far.pa = 0;
  if (per->all.phi)
    prep_tail_of(r, &per->all, per->q, 0);
  if (per->far.phi)
    prep_tail_of(r, &per->far, per->q, 1);
}

/* The order in sweeps: each runs every stage's next block that waits only
 * for blocks of earlier sweeps, so a block's sweep is the length of the
 * longest chain of blocks ending in it (every block taking one unit).  In
 * a steady phase the sweeps repeat (prep_period_find) where a work queue's
 * order drifts.  Ends when a sweep runs nothing: every block has run, or
 * the order deadlocks. */
static void prep_sweeps(prep_run *r)
{
  const int *start = r->s->start;
  plc_sched_prep *pr = r->pr;
  while (r->nact > 0) {
    int from;
    if (r->m && r->tried != pr->n && (from = prep_repeat_from(r)) >= 0 &&
        prep_repeat(r, from) > 0) {
      r->tried = pr->n;
      int keep = 0;
      for (int a = 0; a < r->nact; a++)
        if (r->cursor[r->active[a]] < start[r->active[a] + 1])
          r->active[keep++] = r->active[a];
      r->nact = keep;
      continue;
    }
    r->tried = pr->n;
    int level = pr->n, keep = 0;
    for (int a = 0; a < r->nact; a++) {
      int st = r->active[a];
      prep_try(r, st, level);
      if (r->cursor[st] < start[st + 1])
        r->active[keep++] = st;
    }
    r->nact = keep;
    if (pr->n == level)
      break;
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
  const plc_sched_block *b = s->blocks;
  int end = s->start[st + 1], first_b = s->start[st], last_f = end - 1;
  while (first_b < end && b[first_b].phase == PLC_SCHED_F) /* from each end */
    first_b++;
  while (last_f >= s->start[st] && b[last_f].phase != PLC_SCHED_F &&
         b[last_f].phase != PLC_SCHED_FB)
    last_f--;
  r->warm_at[st] = first_b < end ? first_b : end - 1;
  r->steady_at[st] = last_f > first_b ? last_f : -1;
}

/* The sweeps' scratch and the per-chunk and per-stage tables of r (free
 * with prep_run_free). */
static void prep_run_init(prep_run *r)
{
  const plc_sched *s = r->s;
  int p = s->par.p;
  size_t keys = (size_t)s->par.mu * (size_t)s->nchunks;
  r->per = r->pr->per_chunk ? s->nchunks / p : 1;
  r->zero = p * r->per * D_N;
  r->cursor = plc_xmalloc((size_t)p * sizeof *r->cursor);
  size_t nb = (size_t)s->nblocks + 1;
  /* the two tables every block writes first, the one only written
   * positions touch last: freed, the first two are memory already in
   * use for what comes next (a walk's ends) */
  r->pos_of = plc_xmalloc(nb * sizeof *r->pos_of);
  r->ended = plc_xcalloc(2 * keys + 1, sizeof *r->ended);
  r->at = plc_xmalloc(nb * sizeof *r->at);
  r->rep = plc_xmalloc((size_t)p * sizeof *r->rep);
  r->last_pos = plc_xmalloc((size_t)p * sizeof *r->last_pos);
  memset(r->last_pos, -1, (size_t)p * sizeof *r->last_pos);
  r->active = plc_xmalloc((size_t)p * sizeof *r->active);
  r->wait = plc_xmalloc((size_t)p * sizeof *r->wait);
  r->warm_at = plc_xmalloc((size_t)p * sizeof *r->warm_at);
  r->steady_at = plc_xmalloc((size_t)p * sizeof *r->steady_at);
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
    r->wait[st] = -1;
    prep_phases(r, st);
    if (s->start[st] < s->start[st + 1])
      r->active[r->nact++] = st;
  }
  prep_repeat_init(r);
}

static void prep_run_free(prep_run *r)
{
  free(r->cursor);
  free(r->active);
  free(r->wait);
  free(r->rep);
  free(r->at);
  free(r->last_pos);
  free(r->pos_of);
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
  prep_sweeps(&r);
  int ok = deadlock(&r, msg, msglen);
  if (ok)
    prep_tail(&r);
  prep_run_free(&r);
  if (!ok) {
    plc_sched_prep_free(pr);
    return NULL;
  }
  return pr;
}

long plc_sched_prep_trusted(const plc_sched_prep *prep)
{
  return prep->trusted;
}

void plc_sched_prep_free(plc_sched_prep *prep)
{
  if (!prep)
    return;
  free(prep->step);
  free(prep->dep);
  free(prep->filled);
  free(prep);
}

/* ---- timing ---------------------------------------------------------- */

/* Positions between two tries of the steady phase's repeat (schedule_
 * walk.h): a failed try mostly stops at its first comparison, one that
 * holds reads as many ends as a step of the range reads back. */
#define PERIOD_STRIDE 256

/* The walk on plc_sched_int: every step bounded by fast_fits. */
#define WALK_INT plc_sched_int
#define WALK(name) wide_##name
#define WALK_CHECK 0
#include "schedule_walk.h"
#undef WALK_INT
#undef WALK
#undef WALK_CHECK

#ifdef __SIZEOF_INT128__
/* The walk on int64_t: ends checked against WALK64_LIM as written. */
#define WALK64_LIM ((int64_t)1 << 62)
#define WALK64_DUR ((int64_t)1 << 52) /* every duration and latency below */
#define WALK_INT int64_t
#define WALK(name) narrow_##name
#define WALK_CHECK 1
#include "schedule_walk.h"
#undef WALK_INT
#undef WALK
#undef WALK_CHECK
#endif

static void set_qz(mpq_t q, const mpz_t v, const mpz_t den)
{
  mpz_set(mpq_numref(q), v);
  mpz_set(mpq_denref(q), den);
  mpq_canonicalize(q);
}

/* The walk on mpz_t, recording each block when asked. */
static void time_stepsz(sim_run *r)
{
  plc_sched_sim *sim = r->sim;
  mpz_t *d = sim->durz;
  const prep_dep *dep = r->pr->dep;
  int *block = NULL; /* per stage, the index of its next block, when recording */
  prep_fill(r->pr, 0, r->pr->n);
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
  if (mpz_fits_slong_p(v) && SIM_BITS - 3 >= 8 * (int)sizeof(long)) { /* most times */
    *out = mpz_get_si(v);
    return 1;
  }
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
 * fit in a quarter of the range.  f is den over the denominator *fd
 * (NULL: none yet), kept from one time to the next: times of one run
 * mostly share a few denominators. */
static int scale_stage(plc_sched_sim *sim, const plc_sched_times *t, plc_sched_int *d, mpz_t v,
                       mpz_t f, mpz_srcptr *fd)
{
  mpq_srcptr q[D_IN] = {t->f, t->b, t->w, t->fb, t->p2p, t->fbo};
  for (int k = 0; k < D_IN; k++) {
#ifdef __SIZEOF_INT128__
    /* den, the denominator and the numerator in a limb each: the product
     * on 128 bits, with z_to_sim's bound (magnitude below 2^125) */
    mpz_srcptr qn = mpq_numref(q[k]), qd = mpq_denref(q[k]);
    if (SIM_BITS == 128 && GMP_NUMB_BITS == 64 && mpz_size(sim->den) == 1 && mpz_size(qd) == 1 &&
        mpz_size(qn) <= 1) {
      sim_uint u = (sim_uint)(mpz_getlimbn(sim->den, 0) / mpz_getlimbn(qd, 0)) *
                   (sim_uint)mpz_getlimbn(qn, 0);
      if (u >= (sim_uint)1 << (SIM_BITS - 3))
        return 0;
      d[k] = mpz_sgn(qn) < 0 ? -(plc_sched_int)u : (plc_sched_int)u;
      continue;
    }
#endif
    if (!*fd || mpz_cmp(*fd, mpq_denref(q[k])) != 0) {
      mpz_divexact(f, sim->den, mpq_denref(q[k]));
      *fd = mpq_denref(q[k]);
    }
    mpz_mul(v, f, mpq_numref(q[k]));
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
  mpz_t v, f;
  mpz_inits(v, f, NULL);
  mpz_srcptr fd = NULL;
  int ok = 1;
  plc_sched_int maxd = 0, maxp = 0, lim = SIM_MAX / 2;
  for (int st = 0; ok && st < r->nt; st++) {
    plc_sched_int *d = &sim->duri[(size_t)st * D_N];
    ok = scale_stage(sim, &r->t[st], d, v, f, &fd);
    for (int k = 0; ok && k < D_N; k++) {
      plc_sched_int a = d[k] < 0 ? -d[k] : d[k];
      if (k == D_P2P)
        maxp = a > maxp ? a : maxp;
      else
        maxd = a > maxd ? a : maxd;
    }
  }
  mpz_clears(v, f, NULL);
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
 * w: so when those a step takes (pr->used) are >= 0 and the least fbo is
 * at least the largest w.  (A schedule without F&B blocks need not be
 * given fb.) */
static int durs_nonneg(const sim_run *r)
{
  static const int dur[] = {D_F, D_B, D_W, D_FB, D_FBO, D_BS, D_FBS};
  const plc_sched_int *d = r->sim->duri;
  plc_sched_int minfbo = d[D_FBO], maxw = 0;
  unsigned used = r->pr->used;
  for (int st = 0; st < r->nt; st++, d += D_N) {
    for (size_t k = 0; k < sizeof dur / sizeof dur[0]; k++)
      if ((used >> dur[k] & 1) && d[dur[k]] < 0)
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
    for (int k = 0; k < D_IN; k++) {
      mpz_srcptr d = mpq_denref(q[k]);
      if (mpz_size(sim->den) == 1 && mpz_size(d) == 1 &&
          mpz_getlimbn(sim->den, 0) % mpz_getlimbn(d, 0) == 0)
        continue; /* a divisor of den already (most: den soon has their factors) */
      mpz_lcm(sim->den, sim->den, d);
    }
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

/* Stage st's figures from the machine-integer run (sim_results). */
static void sim_stage_fast(plc_sched_sim *sim, int st)
{
  set_qi(sim->stage_free[st], sim->freei[st], sim->den);
  set_qi(sim->busy[st], sim->busyi[st], sim->den);
  set_qi(sim->warmup[st], sim->warmi[st], sim->den);
  set_qi(sim->steady[st], sim->steadyi[st], sim->den);
  mpq_sub(sim->idle[st], sim->makespan, sim->busy[st]);
  mpq_sub(sim->cooldown[st], sim->idle[st], sim->warmup[st]);
  mpq_sub(sim->cooldown[st], sim->cooldown[st], sim->steady[st]);
}

void plc_sched_sim_stage(plc_sched_sim *sim, int st)
{
  if (sim->pending)
    sim_stage_fast(sim, st);
}

/* Makespan, idle, the critical stage and its bubble.  On the machine-
 * integer path the makespan and the critical stage are found on the
 * integers (over one positive denominator they compare as the times
 * do), and with sim->lazy each stage's figures wait for
 * plc_sched_sim_stage. */
static void sim_results(sim_run *r)
{
  plc_sched_sim *sim = r->sim;
  int p = r->s->par.p;
  sim->pending = 0;
  if (r->fast) {
    plc_sched_int mk = 0;
    sim->critical = 0;
    for (int st = 0; st < p; st++) {
      mk = sim->freei[st] > mk ? sim->freei[st] : mk;
      if (sim->busyi[st] > sim->busyi[sim->critical])
        sim->critical = st;
    }
    set_qi(sim->makespan, mk, sim->den);
    set_qi(sim->bubble, mk - sim->busyi[sim->critical], sim->den);
    sim->pending = sim->lazy;
    for (int st = 0; st < p && !sim->lazy; st++)
      sim_stage_fast(sim, st);
    return;
  }
  for (int st = 0; st < p; st++) {
    set_qz(sim->stage_free[st], sim->freez[st], sim->den);
    set_qz(sim->busy[st], sim->busyz[st], sim->den);
    set_qz(sim->warmup[st], sim->warmz[st], sim->den);
    set_qz(sim->steady[st], sim->steadyz[st], sim->den);
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

/* The walk on plc_sched_int (fast_fits). */
static void time_wide(sim_run *r)
{
  plc_sched_sim *sim = r->sim;
  sim_grow_i(sim, r->s->nblocks);
  wide_walk w = {r, sim->duri, sim->endi, sim->freei, sim->busyi, sim->warmi, sim->steadyi,
                 sim->busyq, 0};
  wide_run(&w, r->nonneg);
}

/* The walk on int64_t, when every duration and latency is below
 * WALK64_DUR (no block takes a negative time: the caller's nonneg) and
 * no end passes WALK64_LIM; its figures then go where time_wide puts
 * them.  Returns whether it ran (0: the caller walks on plc_sched_int). */
static int time_narrow(sim_run *r)
{
#ifdef __SIZEOF_INT128__
  plc_sched_sim *sim = r->sim;
  int p = r->s->par.p, nd = r->nt * D_N + 1;
  if (sim->wide_only)
    return 0;
  sim_grow_64(sim, r->s->nblocks);
  for (int k = 0; k < nd; k++) {
    if (sim->duri[k] >= WALK64_DUR || sim->duri[k] <= -WALK64_DUR)
      return 0;
    sim->dur64[k] = (int64_t)sim->duri[k];
  }
  for (int st = 0; st < p; st++)
    sim->free64[st] = sim->busy64[st] = sim->warm64[st] = sim->steady64[st] = 0;
  narrow_walk w = {r, sim->dur64, sim->end64, sim->free64, sim->busy64, sim->warm64,
                   sim->steady64, sim->grow64, 0};
  if (!narrow_run(&w, 1))
    return 0;
  for (int st = 0; st < p; st++) {
    sim->freei[st] = sim->free64[st];
    sim->busyi[st] = sim->busy64[st];
    sim->warmi[st] = sim->warm64[st];
    sim->steadyi[st] = sim->steady64[st];
  }
  sim->used_narrow = 1;
  return 1;
#else
  (void)r;
  return 0;
#endif
}

/* Time s through pr with times into sim. */
static void sim_time(const plc_sched *s, const plc_sched_prep *pr, const plc_sched_times *times,
                     plc_sched_sim *sim)
{
  int nt = sim->per_chunk ? s->nchunks : s->par.p;
  sim_grow(sim, s->par.p, nt);
  sim_run r = {.s = s, .t = times, .sim = sim, .pr = pr, .nt = nt};
  r.fast = sim->used_fast = scale_setup(&r);
  r.nonneg = r.fast && durs_nonneg(&r);
  sim->skipped = 0;
  sim->used_narrow = 0;
  if (!r.fast)
    sim_grow_z(sim, s->nblocks);
  sim_start(&r);
  if (r.fast && !(r.nonneg && time_narrow(&r)))
    time_wide(&r);
  else if (!r.fast)
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
