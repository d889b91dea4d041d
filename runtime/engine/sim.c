/* sim.c - the list scheduler, exposure charging and overlap windows. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "sim.h"
#include "flow.h"
#include "xalloc.h"

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Every field but the ops' ready, start and end times, which only a run
 * on rationals or plc_sim_times sets (plc_sim_init_times): most runs on
 * integers never need them, and three rationals per op were much of the
 * cost of making and freeing a run. */
/* A compute op's exposure and window stay 0 in every run (only
 * collectives are charged and have windows), as do many collectives'
 * (hidden, or a window of no work), so rather than two rationals of its
 * own each (two allocations, made and freed per op and run: much of a
 * run's cost) they are the read-only 0 of GMP's MPZ_ROINIT_N, which any
 * function may read and none writes, until a run is about to write one
 * (plc_sim_own). */
static mp_limb_t plc_sim_limb_one[1] = {1};
static const mpz_t plc_sim_ro_num = MPZ_ROINIT_N(plc_sim_limb_one, 0);
static const mpz_t plc_sim_ro_den = MPZ_ROINIT_N(plc_sim_limb_one, 1);

static void plc_sim_ro_zero(mpq_ptr q)
{
  *mpq_numref(q) = plc_sim_ro_num[0];
  *mpq_denref(q) = plc_sim_ro_den[0];
}

static void plc_sim_init(plc_sim *s, const plc_ir_list *l)
{
  int n = l->n;
  s->n = n;
  s->ops = plc_xmalloc(((size_t)n + 1) * sizeof *s->ops);
  for (int i = 0; i < n; i++) {
    plc_sim_op *o = &s->ops[i];
    o->own_figs = 0;
    plc_sim_ro_zero(o->exposed);
    plc_sim_ro_zero(o->window);
    o->consumer = o->queued_behind = -1;
    o->why = PLC_WHY_HIDDEN;
    o->ran = 0;
  }
  mpq_inits(s->makespan, s->end, s->busy, s->compute, s->all_compute, s->useful, s->exposed,
            s->stall_other, NULL);
  s->lazy = NULL;
  s->shared = 0;
  s->timed = 0;
}

/* Op o's exposure and window made its own rationals (0), before a run
 * writes either (a collective's). */
static void plc_sim_own(plc_sim_op *o)
{
  if (o->own_figs)
    return;
  mpq_inits(o->exposed, o->window, NULL);
  o->own_figs = 1;
}

/* The ops' ready, start and end times, all 0 (once). */
static void plc_sim_init_times(plc_sim *s)
{
  if (s->timed)
    return;
  for (int i = 0; i < s->n; i++)
    mpq_inits(s->ops[i].ready, s->ops[i].start, s->ops[i].end, NULL);
  s->timed = 1;
}

static void plc_sim_lazy_free(plc_sim *s);

void plc_sim_free(plc_sim *s)
{
  plc_sim_lazy_free(s);
  for (int i = 0; i < s->n; i++) {
    plc_sim_op *o = &s->ops[i];
    if (s->timed)
      mpq_clears(o->ready, o->start, o->end, NULL);
    if (o->own_figs)
      mpq_clears(o->exposed, o->window, NULL);
  }
  free(s->ops);
  mpq_clears(s->makespan, s->end, s->busy, s->compute, s->all_compute, s->useful, s->exposed,
             s->stall_other, NULL);
}

/* The op that made x start no earlier than it did: the op holding its
 * stream when it was queued, else its dependency that finished last. */
static int plc_sim_blocker(const plc_sim *s, const plc_ir_list *l, int x)
{
  const plc_sim_op *so = &s->ops[x];
  if (so->queued_behind >= 0 && mpq_cmp(so->start, so->ready) > 0)
    return so->queued_behind;
  int last = -1;
  for (int d = 0; d < l->ops[x].ndeps; d++) {
    int k = l->ops[x].deps[d];
    if (s->ops[k].ran && (last < 0 || mpq_cmp(s->ops[k].end, s->ops[last].end) > 0))
      last = k;
  }
  return last;
}

static void plc_sim_add_charge(plc_sim *s, const plc_ir_list *l, int x, mpq_srcptr t)
{
  if (x >= 0 && l->ops[x].kind != PLC_OPK_COMPUTE) {
    plc_sim_own(&s->ops[x]);
    mpq_add(s->ops[x].exposed, s->ops[x].exposed, t);
    mpq_add(s->exposed, s->exposed, t);
  } else {
    mpq_add(s->stall_other, s->stall_other, t);
  }
}

/* Split the compute-stream stall [a, b) before op i by what held it up.
 * The part of it during which the op it waited for ran goes to that op;
 * the part before that op started goes, the same way, to what that op
 * waited for; a part before anything held it goes to -1.  Each op gets only
 * time while it ran, so a collective's share never exceeds its time, and
 * the parts add up to the stall exactly.  Parts come latest first. */
static void plc_sim_parts_from(const plc_sim *s, const plc_ir_list *l, int x, mpq_srcptr a,
                               mpq_srcptr b, plc_sim_part_fn *fn, void *ctx)
{
  mpq_t lo, hi;
  mpq_inits(lo, hi, NULL);
  mpq_set(hi, b);
  while (mpq_cmp(hi, a) > 0) {
    if (x < 0) {
      fn(ctx, -1, a, hi);
      break;
    }
    mpq_set(lo, mpq_cmp(s->ops[x].start, a) > 0 ? s->ops[x].start : a);
    if (mpq_cmp(hi, s->ops[x].end) > 0) /* cannot happen: x ends by b */
      mpq_set(hi, s->ops[x].end);
    if (mpq_cmp(hi, lo) > 0)
      fn(ctx, x, lo, hi);
    mpq_set(hi, lo);
    x = plc_sim_blocker(s, l, x);
  }
  mpq_clears(lo, hi, NULL);
}

void plc_sim_stall_parts(const plc_sim *s, const plc_ir_list *l, int i, mpq_srcptr a,
                         mpq_srcptr b, plc_sim_part_fn *fn, void *ctx)
{
  plc_sim_times(s);
  plc_sim_parts_from(s, l, plc_sim_blocker(s, l, i), a, b, fn, ctx);
}

typedef struct plc_sim_charging {
  plc_sim *s;
  const plc_ir_list *l;
} plc_sim_charging;

static void plc_sim_charge_part(void *ctx, int x, mpq_srcptr lo, mpq_srcptr hi)
{
  plc_sim_charging *c = ctx;
  mpq_t part;
  mpq_init(part);
  mpq_sub(part, hi, lo);
  plc_sim_add_charge(c->s, c->l, x, part);
  mpq_clear(part);
}

/* Charge the compute-stream stall [a, b) before op i: a collective's part
 * is its exposure, the rest is compute waiting for other streams. */
static void plc_sim_charge(plc_sim *s, const plc_ir_list *l, int i, mpq_srcptr a, mpq_srcptr b)
{
  plc_sim_charging c = {s, l};
  plc_sim_stall_parts(s, l, i, a, b, plc_sim_charge_part, &c);
}

/* Ops on other streams that outlive the compute stream hold the list up as
 * much as a stall does (the next list cannot start before every stream is
 * free): the tail [compute end, end) is charged like a stall, from the op
 * that ends last, and the makespan is the end of every stream.  So a list
 * whose compute stream is empty still takes the time of its collectives. */
static int plc_sim_last(const plc_sim *s, const plc_ir_list *l)
{
  int last = -1;
  for (int i = 0; i < l->n; i++)
    if (s->ops[i].ran && (last < 0 || mpq_cmp(s->ops[i].end, s->ops[last].end) >= 0))
      last = i;
  return last;
}

static void plc_sim_tail(plc_sim *s, const plc_ir_list *l, mpq_srcptr compute_end)
{
  if (mpq_cmp(s->end, compute_end) <= 0)
    return;
  plc_sim_charging c = {s, l};
  plc_sim_parts_from(s, l, plc_sim_last(s, l), compute_end, s->end, plc_sim_charge_part, &c);
  mpq_set(s->makespan, s->end);
}

void plc_sim_stalls(const plc_sim *s, const plc_ir_list *l, mpq_srcptr t0, plc_sim_part_fn *fn,
                    void *ctx)
{
  plc_sim_times(s);
  mpq_t free_at;
  mpq_init(free_at);
  mpq_set(free_at, t0);
  for (int i = 0; i < l->n; i++) {
    if (!s->ops[i].ran || l->ops[i].stream != 0)
      continue;
    if (mpq_cmp(s->ops[i].start, free_at) > 0)
      plc_sim_stall_parts(s, l, i, free_at, s->ops[i].start, fn, ctx);
    mpq_set(free_at, s->ops[i].end);
  }
  if (mpq_cmp(s->makespan, free_at) > 0) /* the tail other streams leave */
    plc_sim_parts_from(s, l, plc_sim_last(s, l), free_at, s->makespan, fn, ctx);
  mpq_clear(free_at);
}

static int plc_sim_lazy_took(const plc_sim *s, int i, mpq_t out);

void plc_sim_took(const plc_sim *s, const plc_ir_list *l, int i, mpq_t out)
{
  if (!s->shared)
    mpq_set(out, l->ops[i].time);
  else if (!plc_sim_lazy_took(s, i, out)) /* times on rationals already */
    mpq_sub(out, s->ops[i].end, s->ops[i].start);
}

static void plc_sim_account(plc_sim *s, const plc_ir_list *l, int i)
{
  const plc_ir_op *op = &l->ops[i];
  plc_sim_op *so = &s->ops[i];
  if (op->stream != 0)
    return;
  if (op->kind == PLC_OPK_COMPUTE) {
    mpq_add(s->busy, s->busy, op->time);
    mpq_add(s->compute, s->compute, op->time);
  } else { /* a collective on the compute stream blocks it all along */
    plc_sim_own(so);
    plc_sim_took(s, l, i, so->exposed);
    mpq_add(s->busy, s->busy, so->exposed);
    mpq_add(s->exposed, s->exposed, so->exposed);
  }
}

/* Start so no earlier than a resource's free time, behind its holder. */
static void plc_sim_queue(plc_sim_op *so, mpq_srcptr free_at, int holder)
{
  if (mpq_cmp(free_at, so->start) > 0) {
    mpq_set(so->start, free_at);
    so->queued_behind = holder;
  }
}

/* One op: ready when its dependencies are done, started when its stream is
 * free too, and a compute op that takes time when the device's compute is
 * free (slot dev of free_at and holder): compute ops run one at a time
 * whatever their stream, so compute on a side stream is not free.  With
 * end_at (links shared) the op ends then, not after its time. */
static void plc_sim_step(plc_sim *s, const plc_ir_list *l, int i, mpq_t *free_at, int *holder,
                         int dev, mpq_srcptr t0, mpq_srcptr end_at)
{
  const plc_ir_op *op = &l->ops[i];
  plc_sim_op *so = &s->ops[i];
  mpq_set(so->ready, t0);
  for (int d = 0; d < op->ndeps; d++)
    if (s->ops[op->deps[d]].ran && mpq_cmp(s->ops[op->deps[d]].end, so->ready) > 0)
      mpq_set(so->ready, s->ops[op->deps[d]].end);
  int st = op->stream;
  int uses_dev = op->kind == PLC_OPK_COMPUTE && mpq_sgn(op->time) > 0;
  mpq_set(so->start, so->ready);
  plc_sim_queue(so, free_at[st], holder[st]);
  if (uses_dev)
    plc_sim_queue(so, free_at[dev], holder[dev]);
  if (st == 0 && mpq_cmp(so->start, free_at[0]) > 0)
    plc_sim_charge(s, l, i, free_at[0], so->start);
  if (end_at) /* with links shared: when the flow ended it (same start) */
    mpq_set(so->end, end_at);
  else
    mpq_add(so->end, so->start, op->time);
  mpq_set(free_at[st], so->end);
  holder[st] = i;
  if (uses_dev) {
    mpq_set(free_at[dev], so->end);
    holder[dev] = i;
  }
  so->ran = 1;
  plc_sim_account(s, l, i);
  if (mpq_cmp(so->end, s->end) > 0)
    mpq_set(s->end, so->end);
}

/* Compute-stream busy time before t: the stream's ops are in start order
 * and never overlap, so with cum[k] the summed durations of the first k,
 * it is cum[j] plus the part of op j before t, j the first op ending
 * after t.  O(log n). */
static void plc_sim_busy_to(mpq_t out, const plc_sim *s, const int *order, const mpq_t *cum,
                            int n, mpq_srcptr t)
{
  int left = 0, right = n;
  while (left < right) {
    int mid = (left + right) / 2;
    if (mpq_cmp(s->ops[order[mid]].end, t) <= 0)
      left = mid + 1;
    else
      right = mid;
  }
  mpq_set(out, cum[left]);
  if (left < n && mpq_cmp(t, s->ops[order[left]].start) > 0) {
    mpq_t part;
    mpq_init(part);
    mpq_sub(part, t, s->ops[order[left]].start);
    mpq_add(out, out, part);
    mpq_clear(part);
  }
}

/* Compute-stream busy time in [a, b]. */
static void plc_sim_busy_between(mpq_t out, const plc_sim *s, const int *order,
                                 const mpq_t *cum, int n, mpq_srcptr a, mpq_srcptr b)
{
  mpq_t lo;
  mpq_init(lo);
  plc_sim_busy_to(out, s, order, cum, n, b);
  plc_sim_busy_to(lo, s, order, cum, n, a);
  mpq_sub(out, out, lo);
  mpq_clear(lo);
}

/* The compute stream's ops that ran, in order, into order (returns how
 * many), and each op's consumer: the first op that ran waiting for it. */
static int plc_sim_consumers(plc_sim *s, const plc_ir_list *l, int *order)
{
  int n = 0;
  for (int i = 0; i < l->n; i++) {
    if (s->ops[i].ran && l->ops[i].stream == 0)
      order[n++] = i;
    for (int d = 0; d < l->ops[i].ndeps; d++) {
      plc_sim_op *dep = &s->ops[l->ops[i].deps[d]];
      if (dep->consumer < 0 && s->ops[i].ran)
        dep->consumer = i;
    }
  }
  return n;
}

/* The four-step test of every collective: consumer, window, why. */
static void plc_sim_windows(plc_sim *s, const plc_ir_list *l)
{
  int *order = plc_xmalloc(((size_t)l->n + 1) * sizeof *order);
  int n = plc_sim_consumers(s, l, order);
  mpq_t *cum = plc_xmalloc(((size_t)n + 1) * sizeof *cum);
  mpq_init(cum[0]);
  mpq_t took;
  mpq_init(took);
  for (int k = 0; k < n; k++) {
    mpq_init(cum[k + 1]);
    plc_sim_took(s, l, order[k], took);
    mpq_add(cum[k + 1], cum[k], took);
  }
  /* blocks[i]: an op that something waits for queued behind op i and so
   * started late (then i's exposure is that wait, not outliving the list) */
  unsigned char *blocks = plc_xcalloc((size_t)l->n + 1, 1);
  for (int i = 0; i < l->n; i++)
    if (s->ops[i].ran && s->ops[i].queued_behind >= 0 && s->ops[i].consumer >= 0 &&
        mpq_cmp(s->ops[i].start, s->ops[i].ready) > 0)
      blocks[s->ops[i].queued_behind] = 1;
  for (int i = 0; i < l->n; i++) {
    const plc_ir_op *op = &l->ops[i];
    plc_sim_op *so = &s->ops[i];
    if (!so->ran || op->kind == PLC_OPK_COMPUTE)
      continue;
    if (op->stream == 0) {
      so->why = PLC_WHY_SAME_STREAM;
      continue;
    }
    mpq_srcptr until = so->consumer >= 0 ? s->ops[so->consumer].start : s->makespan;
    plc_sim_own(so);
    plc_sim_busy_between(so->window, s, order, cum, n, so->start, until);
    if (mpq_sgn(so->exposed) == 0)
      so->why = so->consumer < 0 ? PLC_WHY_NO_CONSUMER : PLC_WHY_HIDDEN;
    else if (so->queued_behind >= 0 && mpq_cmp(so->start, so->ready) > 0)
      so->why = PLC_WHY_QUEUED;
    else if (s->shared && (plc_sim_took(s, l, i, took), mpq_cmp(took, op->time) > 0) &&
             mpq_cmp(so->window, op->time) >= 0)
      so->why = PLC_WHY_SHARED; /* alone at full speed it would have fitted */
    else if (mpq_cmp(so->window, op->time) >= 0 || (so->consumer < 0 && blocks[i]))
      so->why = PLC_WHY_BLOCKS; /* with no consumer, what queued behind it was waited for */
    else if (so->consumer < 0) /* exposed by outliving the compute stream */
      so->why = PLC_WHY_NO_CONSUMER;
    else
      so->why = mpq_sgn(so->window) == 0 ? PLC_WHY_NO_WORK : PLC_WHY_SHORT;
  }
  for (int k = 0; k <= n; k++)
    mpq_clear(cum[k]);
  mpq_clear(took);
  free(cum);
  free(order);
  free(blocks);
}

/* The time during which at least one compute op (a useful one, when
 * useful_only) runs, on any stream: compute overlapped on two streams
 * would count once, so eta and busy never pass 100%.  No two compute ops
 * that take time overlap: each waits for the device's compute
 * (plc_sim_step), so the union of their intervals is the sum of their
 * durations (an op of no time adds nothing either way); lowering makes no
 * negative time. */
static void plc_sim_union(plc_sim *s, const plc_ir_list *l, int useful_only, mpq_t out)
{
  mpq_set_ui(out, 0, 1);
  for (int i = 0; i < l->n; i++)
    if (s->ops[i].ran && l->ops[i].kind == PLC_OPK_COMPUTE && (!useful_only || l->ops[i].useful))
      mpq_add(out, out, l->ops[i].time);
}

/* ---- machine integers ---------------------------------------------------------- */

/* The same run on machine integers when it fits: every time the run
 * computes is t0 plus a sum of op durations, a difference of two such, or
 * a part of one (a stall, an exposure, a window), so with t0 and every
 * duration scaled to their common denominator d, and t0 plus the sum of
 * all the durations below 2^PLC_SI_BITS in units of 1/d, nothing
 * overflows and every figure is exact; they are turned into rationals in
 * lowest terms at the end.  128-bit integers where the compiler has them
 * (op times' denominators are products of the device's and links' figures:
 * a Llama 3 70B list's common one has 69 bits), else 64-bit.  The steps
 * mirror the rational ones above one for one. */
#if defined(__SIZEOF_INT128__) && GMP_NUMB_BITS == 64
__extension__ typedef __int128 plc_si;
__extension__ typedef unsigned __int128 plc_su;
#define PLC_SI_BITS 126
#define PLC_SI_MAX ((plc_si)((plc_su)-1 >> 1))
#else
typedef int64_t plc_si;
typedef uint64_t plc_su;
#define PLC_SI_BITS 62
#define PLC_SI_MAX INT64_MAX
#endif

typedef struct plc_s64 {
  plc_sim *s;
  const plc_ir_list *l;
  plc_si *t;                        /* durations, in units of 1/d (the memo's when only read) */
  plc_si *ready, *start, *end, *exposed, *window;
  plc_si makespan, end_all, busy, compute, all_compute, useful, exposed_all, stall_other;
  /* links shared (plc_s64_given): each op ends at given[i]; t then holds
   * what it took and nominal its time */
  const plc_si *given;
  plc_si *nominal;
} plc_s64;

/* A run with links shared, replayed on integers: each op's end in units
 * of 1/(d x mul), d the list's common denominator (plc_s64_scale). */
typedef struct plc_s64_given {
  plc_su mul;
  const plc_si *end;
} plc_s64_given;

int plc_sim_no_fast; /* tests: always the rational path */

static plc_su plc_s64_gcd(plc_su a, plc_su b)
{
  while (b) {
    plc_su r = a % b;
    a = b;
    b = r;
  }
  return a;
}

static int plc_s64_bits(plc_su v)
{
  int n = 0;
  for (; v >> 31 >> 31 >> 2; v = v >> 31 >> 31 >> 2) /* v >> 64, for either width */
    n += 64;
  unsigned long long lo = (unsigned long long)v;
  return lo ? n + 64 - __builtin_clzll(lo) : n;
}

/* |z| as an integer, when it has at most PLC_SI_BITS bits: its limbs
 * (inline in gmp.h, unlike mpz_sizeinbase), when so few that they fit. */
static int plc_s64_get(mpz_srcptr z, plc_su *out)
{
  size_t n = mpz_size(z);
  if (n * GMP_NUMB_BITS > PLC_SI_BITS + GMP_NUMB_BITS)
    return 0;
  plc_su v = 0;
  for (size_t k = n; k-- > 0;)
    v = (v << (GMP_NUMB_BITS - 1) << 1) | (plc_su)mpz_getlimbn(z, (mp_size_t)k);
  if (plc_s64_bits(v) > PLC_SI_BITS)
    return 0;
  *out = v;
  return 1;
}

static void plc_s64_put(mpz_ptr z, plc_su v)
{
  int n = 0;
  for (plc_su w = v; w; w = w >> (GMP_NUMB_BITS - 1) >> 1)
    n++;
  mp_limb_t *p = mpz_limbs_write(z, n > 0 ? n : 1);
  for (int k = 0; k < n; k++, v = v >> (GMP_NUMB_BITS - 1) >> 1)
    p[k] = (mp_limb_t)v;
  mpz_limbs_finish(z, n);
}

static int plc_s64_ctz(plc_su v)
{
  int n = 0;
  while (!(unsigned long)v) { /* v != 0 */
    v = v >> (sizeof(unsigned long) * CHAR_BIT - 1) >> 1;
    n += (int)(sizeof(unsigned long) * CHAR_BIT);
  }
  return n + __builtin_ctzl((unsigned long)v);
}

/* The binary gcd of nonzero a and b of unsigned type T, ctz counting a
 * value's trailing zero bits: the body of both widths below. */
#define PLC_S64_BGCD_BODY(T, ctz)                                                             \
  int sh = ctz(a | b);                                                                        \
  a >>= ctz(a);                                                                               \
  do {                                                                                        \
    b >>= ctz(b);                                                                             \
    if (a > b) {                                                                              \
      T t = a;                                                                                \
      a = b;                                                                                  \
      b = t;                                                                                  \
    }                                                                                         \
    b -= a;                                                                                   \
  } while (b);                                                                                \
  return a << sh

/* Binary gcd of nonzero a and b that fit 64 bits, on 64-bit words (half
 * the instructions of the wide one, the same steps). */
static uint64_t plc_s64_bgcd64(uint64_t a, uint64_t b)
{
  PLC_S64_BGCD_BODY(uint64_t, __builtin_ctzll);
}

/* Binary gcd (a, b not both 0).  With one of them below 2^64 (a
 * common denominator, mostly) the other is first taken modulo it:
 * gcd(a, b) = gcd(a, b mod a), then both narrow. */
static plc_su plc_s64_bgcd(plc_su a, plc_su b)
{
  if (!a || !b)
    return a | b;
  if (!((a | b) >> 31 >> 31 >> 2)) /* both below 2^64 (either width) */
    return plc_s64_bgcd64((uint64_t)a, (uint64_t)b);
  int a_wide = (a >> 31 >> 31 >> 2) != 0, b_wide = (b >> 31 >> 31 >> 2) != 0;
  if (!a_wide || !b_wide) {
    plc_su n = a_wide ? b : a, r = (a_wide ? a : b) % n; /* n below 2^64, r below n */
    return r ? plc_s64_bgcd64((uint64_t)n, (uint64_t)r) : n;
  }
  PLC_S64_BGCD_BODY(plc_su, plc_s64_ctz);
}

/* A small cache of times already read, by address: the copies of a
 * layer's ops share their times, so a list of thousands of ops holds a
 * few dozen distinct ones.  A slot is overwritten on a collision (the
 * time is then read again): a multiplicative hash over 256 slots keeps
 * those rare (64 slots indexed by address bits re-read many times).
 * Where copies do not share their times (a plan lowered without the
 * instance memo), equal times at other addresses are found by value. */
#define PLC_S64_SEEN 256
typedef struct plc_s64_seen {
  mpq_srcptr q[PLC_S64_SEEN];  /* by address */
  plc_su v[PLC_S64_SEEN];
  int qi[PLC_S64_SEEN];        /* the last op read with it (plc_s64_dur_fill) */
  unsigned qg[PLC_S64_SEEN];   /* the slot's generation */
  mpq_srcptr vq[PLC_S64_SEEN]; /* by value */
  plc_su vv[PLC_S64_SEEN];
  unsigned vg[PLC_S64_SEEN];
  unsigned gen;                /* a slot holds something when of this generation */
} plc_s64_seen;

/* This thread's: a slot of another generation is empty, so clearing it
 * all is a new generation (plc_s64_seen_clear), not writing 4 KB, as
 * often as lists are read (a list holds a few dozen distinct times).
 * Zeroed, it is empty: generation 0 with no time in it. */
static _Thread_local plc_s64_seen plc_s64_seen_tls;

static unsigned plc_s64_slot(mpq_srcptr q)
{
  return (unsigned)(((uint64_t)(uintptr_t)q * 0x9E3779B97F4A7C15u) >> 40) % PLC_S64_SEEN;
}

static unsigned plc_s64_value_slot(mpq_srcptr q)
{
  uint64_t a = (uint64_t)mpz_getlimbn(mpq_numref(q), 0);
  uint64_t b = (uint64_t)mpz_getlimbn(mpq_denref(q), 0);
  return (unsigned)(((a * 0x9E3779B97F4A7C15u ^ b) * 0x9E3779B97F4A7C15u) >> 40) % PLC_S64_SEEN;
}

/* mpq_equal(x, y), inline for the one or two limbs of a time (a call
 * each was much of reading a list whose copies have times of their own):
 * rationals in lowest terms (GMP keeps them so) are equal when their
 * numerators and denominators have the same sizes and limbs. */
static inline int plc_s64_qeq(mpq_srcptr x, mpq_srcptr y)
{
  const __mpz_struct *xn = mpq_numref(x), *yn = mpq_numref(y);
  const __mpz_struct *xd = mpq_denref(x), *yd = mpq_denref(y);
  int sn = xn->_mp_size, sd = xd->_mp_size;
  if (sn != yn->_mp_size || sd != yd->_mp_size)
    return 0;
  if (sn < -2 || sn > 2 || sd > 2)
    return mpq_equal(x, y);
  for (int k = 0; k < (sn < 0 ? -sn : sn); k++)
    if (xn->_mp_d[k] != yn->_mp_d[k])
      return 0;
  for (int k = 0; k < sd; k++)
    if (xd->_mp_d[k] != yd->_mp_d[k])
      return 0;
  return 1;
}

static void plc_s64_seen_clear(plc_s64_seen *seen)
{
  if (++seen->gen == 0) { /* the generations wrapped: empty by hand */
    memset(seen->q, 0, sizeof seen->q);
    memset(seen->vq, 0, sizeof seen->vq);
  }
}

/* The value of q seen before (by address, else by value), into *v, and
 * when by address the op that read it before into *prev (op i reads it
 * now): copies of a layer share their times by address. */
static inline __attribute__((always_inline)) int
plc_s64_seen_find(plc_s64_seen *seen, mpq_srcptr q, plc_su *v, int i, int *prev)
{
  unsigned h = plc_s64_slot(q);
  if (seen->q[h] == q && seen->qg[h] == seen->gen) {
    *v = seen->v[h];
    *prev = seen->qi[h];
    seen->qi[h] = i;
    return 1;
  }
  unsigned hv = plc_s64_value_slot(q);
  if (!seen->vq[hv] || seen->vg[hv] != seen->gen || !plc_s64_qeq(seen->vq[hv], q))
    return 0;
  *v = seen->v[h] = seen->vv[hv]; /* found by address next time */
  seen->q[h] = q;
  seen->qg[h] = seen->gen;
  seen->qi[h] = i;
  return 1;
}

static void plc_s64_seen_put(plc_s64_seen *seen, mpq_srcptr q, plc_su v, int i)
{
  unsigned h = plc_s64_slot(q), hv = plc_s64_value_slot(q);
  seen->q[h] = seen->vq[hv] = q;
  seen->v[h] = seen->vv[hv] = v;
  seen->qg[h] = seen->vg[hv] = seen->gen;
  seen->qi[h] = i;
}

/* ---- repeated blocks -------------------------------------------------------------
 * A stage list of a dense model is a prefix, one layer's ops again and
 * again, a suffix; lowering copies the layers, their times the same
 * rationals.  A region is where each op is alike the op b before it
 * (plc_s64_alike): then what reads times takes op i's from op i - b,
 * and the walk (plc_s64_walk_run) may find the blocks repeating
 * themselves later in time (plc_s64_steady). */
typedef struct plc_s64_reg {
  int a, b, e; /* every op of [a + b, e) alike the op b before it (b > 0): its
                  blocks are [a + k b, a + (k + 1) b), (e - a) / b of them whole */
} plc_s64_reg;

#define PLC_S64_REGS PLC_SIM_BLOCKS
typedef struct plc_s64_per {
  int n;        /* regions, in list order; no two overlap */
  plc_s64_reg r[PLC_S64_REGS];
} plc_s64_per;

int plc_sim_no_steady; /* tests: no region, no steady state */
_Thread_local long plc_sim_steady_ops;
_Thread_local plc_sim_walk_fn *plc_sim_walk_hook;
_Thread_local void *plc_sim_walk_ctx;

/* Is op x (op i of a list) alike op y, the op b before it, in a region
 * whose block 0 starts at a: the same time (the same rational at the
 * same address; with value, an equal one elsewhere) and the same fields
 * that a run reads or a counts function may (sim.h): kind, stream, once,
 * dim, group, phase, wgrad, chunk, after_layers, useful (and pinned,
 * which the useful FLOPs read: plc_sim_memo_blocks); its dependencies
 * y's shifted by b, none before a (so an op waits for ops of its own
 * block or the block before it, never further back: plc_s64_steady rests
 * on it).  The fields are compared as
 * one run of the struct, group to its end (ir.h puts them there, pinned
 * too: copies share it), a few loads rather than a branch a field; the
 * assertion below keeps the run's fields in and padding out (padding
 * could only make ops that are alike look different, never the other
 * way). */
_Static_assert(offsetof(plc_ir_op, group) < offsetof(plc_ir_op, stream) &&
               offsetof(plc_ir_op, stream) < offsetof(plc_ir_op, ndeps) &&
               offsetof(plc_ir_op, ndeps) < offsetof(plc_ir_op, chunk) &&
               offsetof(plc_ir_op, chunk) + sizeof(int) + 8 == sizeof(plc_ir_op) &&
               offsetof(plc_ir_op, replica) < offsetof(plc_ir_op, group) &&
               offsetof(plc_ir_op, layer) < offsetof(plc_ir_op, group) &&
               offsetof(plc_ir_op, deps) < offsetof(plc_ir_op, group),
               "plc_s64_alike compares group to the end of an op as one run");

static inline __attribute__((always_inline)) int
plc_s64_alike_op(const plc_ir_op *x, const plc_ir_op *y, int b, int a, const int value)
{
  const char *xc = (const char *)x, *yc = (const char *)y;
  const size_t o = offsetof(plc_ir_op, group), n = sizeof(plc_ir_op) - o;
  if (memcmp(xc + o, yc + o, n))
    return 0;
  for (int k = 0; k < x->ndeps; k++)
    if (x->deps[k] != y->deps[k] + b || x->deps[k] < a)
      return 0;
  return x->time == y->time || (value && mpq_equal(x->time, y->time));
}

/* plc_s64_alike_op of l's op i and op i - b. */
static inline __attribute__((always_inline)) int plc_s64_alike(const plc_ir_list *l, int i,
                                                                 int b, int a, const int value)
{
  return plc_s64_alike_op(&l->ops[i], &l->ops[i - b], b, a, value);
}

/* The region from a, b ops a block, alike up to e, into p: when it has
 * three whole blocks or more (the walk compares two before it may skip
 * one) and p has room.  Regions close in list order; one that opened
 * before the last one's end starts its blocks after it (whole blocks
 * later: the ops after are alike still), so that none overlap. */
static void plc_s64_per_close(plc_s64_per *p, int a, int b, int e)
{
  int from = p->n > 0 ? p->r[p->n - 1].e : 0; /* no two overlap: after the last one */
  if (a < from)
    a += (from - a + b - 1) / b * b;
  if ((e - a) / b >= 3 && p->n < PLC_S64_REGS)
    p->r[p->n++] = (plc_s64_reg){a, b, e};
}

/* A list's durations on integers: those of the ops that run (0 for the
 * others) in units of 1/d, d the common denominator of their times, and
 * their sum, below 2^PLC_SI_BITS.  What every run on machine integers
 * starts from; working it out reads every op's time, much of a short
 * run's cost, so plc_sim_memo keeps it for the lists an analysis runs
 * again. */
typedef struct plc_s64_dur {
  int ok;        /* 0: some time does not fit (runs take the rational path) */
  plc_su d, sum;
  plc_si *t;
  plc_s64_per *per; /* its repeated blocks, found on the way (plc_s64_dur_fill):
                       the caller's (a memo's after t, in its block) */
} plc_s64_dur;

/* Put q (not negative) over u's denominator too, into *v: the
 * denominator grows to the least common multiple, u's n durations with
 * it, and *v joins the sum; 0 when something would not fit. */
static int plc_s64_dur_put(plc_s64_dur *u, int n, mpq_srcptr q, plc_si *v)
{
  const plc_su lim = (plc_su)1 << PLC_SI_BITS;
  plc_su num, den;
  if (mpq_sgn(q) < 0 || !plc_s64_get(mpq_denref(q), &den) || !plc_s64_get(mpq_numref(q), &num))
    return 0;
  if (u->d % den) {
    plc_su k = den / plc_s64_gcd(u->d, den);
    if (u->d > lim / k || u->sum >= lim / k)
      return 0;
    u->d *= k;
    u->sum *= k;
    if (!(k >> 31 >> 31 >> 2)) /* k below 2^64: a narrower product (the same) */
      for (int i = 0; i < n; i++)
        u->t[i] = (plc_si)((plc_su)u->t[i] * (uint64_t)k);
    else
      for (int i = 0; i < n; i++)
        u->t[i] *= (plc_si)k;
  }
  plc_su m = u->d / den;
  if (num && plc_s64_bits(num) + plc_s64_bits(m) > PLC_SI_BITS)
    return 0;
  if (num * m >= lim - u->sum)
    return 0;
  u->sum += num * m;
  *v = (plc_si)(num * m);
  return 1;
}

/* Put q over u's denominator into *v as plc_s64_dur_put does (scaling
 * u's n durations before it), through seen, the values of the times
 * met so far over u->d: a time met before costs an addition.  Op i
 * reads it; *prev is the op that read it before at the same address,
 * when seen knows it (else left). */
static inline __attribute__((always_inline)) int
plc_s64_dur_take(plc_s64_dur *u, int n, mpq_srcptr q, plc_si *v, plc_s64_seen *seen, int i,
                 int *prev)
{
  const plc_su lim = (plc_su)1 << PLC_SI_BITS;
  plc_su w, d = u->d;
  if (plc_s64_seen_find(seen, q, &w, i, prev)) {
    if (w >= lim - u->sum)
      return 0;
    u->sum += w;
    *v = (plc_si)w;
    return 1;
  }
  if (!plc_s64_dur_put(u, n, q, v))
    return 0;
  if (u->d != d) /* the values seen were over the old denominator */
    plc_s64_seen_clear(seen);
  plc_s64_seen_put(seen, q, (plc_su)*v, i);
  return 1;
}

/* Op i's duration v, over u's denominator, joins u's sum: 0 when the
 * sum would not fit (plc_s64_dur_take's test for a time seen before,
 * v >= 2^PLC_SI_BITS - sum: the sum and v are both below that bound, so
 * their sum cannot wrap, and the test is whether it reaches the bound). */
static inline int plc_s64_dur_again(plc_s64_dur *u, plc_si v)
{
  u->sum += (plc_su)v;
  return !(u->sum >> PLC_SI_BITS);
}

/* Fill u->t (l->n entries) and set u->d, u->sum from l's op times, in
 * one pass: the denominator grows as times come (plc_s64_dur_put scales
 * what came before), which happens a few times early in a list (its
 * first layer has every kind of op); 0 when something does not fit.
 * On the way, l's repeated blocks into u->per (plc_s64_per): an op
 * alike the op a block before it has its time, so its duration (over
 * the same denominator, scaled with it since) without reading it; a
 * region opens where an op is alike the op that last read its time at
 * the same address (seen knows which: the copies of a layer share their
 * times), and takes in the block before that one when it is alike too
 * with times equal elsewhere (lowering's first copy of a layer has
 * rationals of its own).  Where no copies share times (a plan lowered
 * for sensitivity) no region opens, and reading costs what it did.  A
 * copied duration's sum is tested as for a time seen before, so the
 * durations are what reading every time gives; a time that could have
 * failed plc_s64_dur_put's test (a product's bits, not its value) on a
 * second reading no longer does, which changes no figure: a duration
 * that fits with a sum that fits is exact, whichever path reads it. */
static int plc_s64_dur_read(const plc_ir_list *l, int with_once, plc_s64_dur *u,
                            plc_s64_seen *seen)
{
  u->d = 1;
  u->sum = 0;
  u->per->n = 0;
  int a = 0, b = 0; /* the open block: from a, b ops long (0: none) */
  for (int i = 0; i < l->n; i++) {
    if (b) { /* the region's ops, alike the op b before: its duration */
      const plc_ir_op *x = &l->ops[i];
      plc_si *t = u->t + i;
      for (; i < l->n && plc_s64_alike_op(x, x - b, b, a, 0); i++, x++, t++) {
        *t = t[-b];
        if (!plc_s64_dur_again(u, *t))
          return 0;
      }
      plc_s64_per_close(u->per, a, b, i);
      b = 0;
      if (i == l->n)
        break;
    }
    u->t[i] = 0;
    int prev = -1;
    if ((with_once || !l->ops[i].once) &&
        !plc_s64_dur_take(u, i, l->ops[i].time, &u->t[i], seen, i, &prev))
      return 0;
    if (prev >= 0 && !plc_sim_no_steady && plc_s64_alike(l, i, i - prev, prev, 0)) {
      a = prev, b = i - prev;
      int x = a; /* the block before, its times equal elsewhere (a first copy)? */
      while (x < i && a >= b && plc_s64_alike(l, x, b, a - b, 1))
        x++;
      if (x == i)
        a -= b;
    }
  }
  return 1;
}

/* plc_s64_dur_read through this thread's seen, left empty. */
static int plc_s64_dur_fill(const plc_ir_list *l, int with_once, plc_s64_dur *u)
{
  int ok = plc_s64_dur_read(l, with_once, u, &plc_s64_seen_tls);
  plc_s64_seen_clear(&plc_s64_seen_tls);
  return ok;
}

/* u, l's durations with its `once` ops, from w, those without: the
 * gradient sync adds a few distinct times over many ops.  Each region of
 * w->per has its once ops past its first block alike those a block
 * before them: once too, the same duration; so only the ops outside the
 * regions' later blocks are looked at one by one, and in a region each
 * once op of its first block gives its copies, block after block.  The
 * sum then takes the copies in another order than the list's, but
 * between the same two reads of a time (no time is read in a region past
 * its first block): the sum only grows and each step is tested (it
 * cannot wrap), so it fails or not as in list order, and each time is
 * read with the same sum. */
static int plc_s64_dur_add_once(const plc_ir_list *l, const plc_s64_dur *w, plc_s64_dur *u,
                                plc_s64_seen *seen)
{
  memcpy(u->t, w->t, (size_t)l->n * sizeof *u->t);
  u->d = w->d;
  u->sum = w->sum;
  *u->per = *w->per;
  int i = 0, prev;
  for (int r = 0; r <= u->per->n; r++) {
    const plc_s64_reg *g = r < u->per->n ? &u->per->r[r] : NULL;
    for (int to = g ? g->a + g->b : l->n; i < to; i++)
      if (l->ops[i].once && !plc_s64_dur_take(u, l->n, l->ops[i].time, &u->t[i], seen, i, &prev))
        return 0;
    if (!g)
      break;
    for (int j = g->a; j < g->a + g->b; j++) /* its first block's once ops: their copies */
      for (int x = j + g->b; l->ops[j].once && x < g->e; x += g->b) {
        u->t[x] = u->t[x - g->b];
        if (!plc_s64_dur_again(u, u->t[x]))
          return 0;
      }
    i = g->e;
  }
  return 1;
}

/* plc_s64_dur_add_once through this thread's seen, left empty. */
static int plc_s64_dur_with_once(const plc_ir_list *l, const plc_s64_dur *w, plc_s64_dur *u)
{
  int ok = plc_s64_dur_add_once(l, w, u, &plc_s64_seen_tls);
  plc_s64_seen_clear(&plc_s64_seen_tls);
  return ok;
}

/* ---- the memo of one analysis ---------------------------------------------------- */

static _Thread_local plc_sim_memo *plc_sim_memo_top; /* the innermost, this thread's */

/* A list made of a stage list's ops (plc_sim_memo_part) and its
 * durations, without and with `once`, made on first use. */
typedef struct plc_sim_part {
  const plc_ir_list *l, *parent;
  const int *from;
  plc_s64_dur dur[2];
} plc_sim_part;

void plc_sim_memo_push(plc_sim_memo *m, const plc_ir_run *run)
{
  m->run = run;
  m->dur = plc_xcalloc(6 * (size_t)run->nstages + 1, sizeof *m->dur);
  m->part = NULL;
  m->npart = m->cap = 0;
  m->prev = plc_sim_memo_top;
  plc_sim_memo_top = m;
}

void plc_sim_memo_pop(plc_sim_memo *m)
{
  for (int k = 0; k < 6 * m->run->nstages; k++)
    free(m->dur[k].t);
  free(m->dur);
  for (int k = 0; k < m->npart; k++)
    free(m->part[k].dur[0].t), free(m->part[k].dur[1].t);
  free(m->part);
  plc_sim_memo_top = m->prev;
}

/* The memo's entry for l run so, when l is a list of the memo's run: per
 * stage its forward, backward and step lists, without and with `once`. */
static plc_s64_dur *plc_sim_memo_slot(const plc_ir_list *l, int with_once)
{
  plc_sim_memo *m = plc_sim_memo_top;
  if (!m || m->run->nstages <= 0)
    return NULL;
  /* the stage whose struct would hold l, by address (a run has many
   * stages: not a search through them) */
  uintptr_t at = (uintptr_t)l, base = (uintptr_t)m->run->stages;
  if (at < base || at - base >= (uintptr_t)m->run->nstages * sizeof *m->run->stages)
    return NULL;
  int s = (int)((at - base) / sizeof *m->run->stages);
  const plc_ir_stage *st = &m->run->stages[s];
  int k = l == &st->fwd ? 0 : l == &st->bwd ? 1 : l == &st->step ? 2 : -1;
  return k >= 0 ? &m->dur[(s * 3 + k) * 2 + (with_once != 0)] : NULL;
}

/* The innermost memo's part entry of l, or NULL. */
static plc_sim_part *plc_sim_memo_find_part(const plc_ir_list *l)
{
  plc_sim_memo *m = plc_sim_memo_top;
  for (int k = 0; m && k < m->npart; k++)
    if (m->part[k].l == l)
      return &m->part[k];
  return NULL;
}

void plc_sim_memo_part(const plc_ir_list *l, const plc_ir_list *parent, const int *from)
{
  plc_sim_memo *m = plc_sim_memo_top;
  if (!m || !plc_sim_memo_slot(parent, 0))
    return;
  plc_sim_memo_drop(l);
  if (m->npart == m->cap) {
    m->cap = 2 * m->cap + 8;
    m->part = plc_xrealloc(m->part, (size_t)m->cap * sizeof *m->part);
  }
  m->part[m->npart++] = (plc_sim_part){.l = l, .parent = parent, .from = from};
}

void plc_sim_memo_drop(const plc_ir_list *l)
{
  plc_sim_memo *m = plc_sim_memo_top;
  plc_sim_part *p = plc_sim_memo_find_part(l);
  if (!p)
    return;
  free(p->dur[0].t);
  free(p->dur[1].t);
  *p = m->part[--m->npart];
}

static const plc_s64_dur *plc_sim_memo_dur(const plc_ir_list *l, int with_once);

/* Part p's durations run so, into u (its t allocated): its parent's
 * picked out, over the parent's denominator (their sum fits, a part of
 * the parent's); its own when the parent's do not fit. */
static void plc_sim_part_dur(const plc_sim_part *p, int with_once, plc_s64_dur *u)
{
  const plc_ir_list *l = p->l;
  const plc_s64_dur *w = plc_sim_memo_dur(p->parent, with_once);
  if (!w || !w->ok) {
    u->ok = plc_s64_dur_fill(l, with_once, u);
    return;
  }
  u->ok = 1;
  u->d = w->d;
  u->sum = 0;
  u->per->n = 0; /* not looked for in a part */
  for (int j = 0; j < l->n; j++) {
    u->t[j] = w->t[p->from[j]];
    u->sum += (plc_su)u->t[j];
  }
}

/* l's durations run so from the memo (made on first use), or NULL when
 * the memo does not keep l.  With `once` they are made from those
 * without, adding the once ops (the gradient sync: a few). */
static const plc_s64_dur *plc_sim_memo_dur(const plc_ir_list *l, int with_once)
{
  plc_s64_dur *u = plc_sim_memo_slot(l, with_once);
  plc_sim_part *p = u ? NULL : plc_sim_memo_find_part(l);
  if (p)
    u = &p->dur[with_once != 0];
  if (!u || u->t)
    return u;
  u->t = plc_xmalloc(((size_t)l->n + 1) * sizeof *u->t + sizeof *u->per);
  u->per = (plc_s64_per *)(void *)(u->t + l->n + 1); /* ints after plc_si: aligned */
  const plc_s64_dur *w = with_once && !p ? plc_sim_memo_dur(l, 0) : NULL;
  if (p)
    plc_sim_part_dur(p, with_once, u);
  else
    u->ok = w && w->ok ? plc_s64_dur_with_once(l, w, u) : plc_s64_dur_fill(l, with_once, u);
  return u;
}

/* The common denominator *d of t0 and the durations of the ops that run,
 * and the durations (into x->t) and t0 scaled to it; 0 when something
 * does not fit (op times are never negative; t0 neither).  With borrow
 * (the run only reads x->t) and t0 = 0, x->t may be pointed at the
 * memo's durations instead: the same values, over the same d.  The
 * list's regions into per when given. */
static int plc_s64_scale(plc_s64 *x, int with_once, mpq_srcptr t0, plc_su *d, plc_si *t0s,
                         int borrow, plc_s64_per *per)
{
  const plc_ir_list *l = x->l;
  plc_s64_per own;
  plc_s64_dur u = {.t = x->t, .per = per ? per : &own};
  const plc_s64_dur *m = plc_sim_memo_dur(l, with_once);
  if (m) {
    if (!m->ok)
      return 0;
    if (per)
      *per = *m->per;
    if (borrow && mpq_sgn(t0) == 0) {
      x->t = m->t;
      *d = m->d;
      *t0s = 0;
      return 1;
    }
    memcpy(x->t, m->t, (size_t)l->n * sizeof *x->t);
    u.d = m->d;
    u.sum = m->sum;
  } else if (!plc_s64_dur_fill(l, with_once, &u)) {
    return 0;
  }
  if (!plc_s64_dur_put(&u, l->n, t0, t0s))
    return 0;
  *d = u.d;
  return 1;
}

static int plc_s64_blocker(const plc_s64 *x, int i)
{
  const plc_sim_op *so = &x->s->ops[i];
  if (so->queued_behind >= 0 && x->start[i] > x->ready[i])
    return so->queued_behind;
  int last = -1;
  for (int d = 0; d < x->l->ops[i].ndeps; d++) {
    int k = x->l->ops[i].deps[d];
    if (x->s->ops[k].ran && (last < 0 || x->end[k] > x->end[last]))
      last = k;
  }
  return last;
}

/* plc_sim_parts_from charging each part (plc_sim_add_charge). */
static void plc_s64_charge_from(plc_s64 *x, int k, plc_si a, plc_si b)
{
  plc_si hi = b;
  while (hi > a) {
    plc_si lo = k < 0 ? a : x->start[k] > a ? x->start[k] : a;
    if (k >= 0 && hi > x->end[k])
      hi = x->end[k];
    if (hi > lo) {
      if (k >= 0 && x->l->ops[k].kind != PLC_OPK_COMPUTE) {
        x->exposed[k] += hi - lo;
        x->exposed_all += hi - lo;
      } else {
        x->stall_other += hi - lo;
      }
    }
    if (k < 0)
      break;
    hi = lo;
    k = plc_s64_blocker(x, k);
  }
}

static void plc_s64_queue(plc_s64 *x, int i, plc_si free_at, int holder)
{
  if (free_at > x->start[i]) {
    x->start[i] = free_at;
    x->s->ops[i].queued_behind = holder;
  }
}

static void plc_s64_step(plc_s64 *x, int i, plc_si *free_at, int *holder, int dev, plc_si t0)
{
  const plc_ir_op *op = &x->l->ops[i];
  plc_sim_op *so = &x->s->ops[i];
  x->exposed[i] = x->window[i] = 0; /* charged only once it ran */
  x->ready[i] = t0;
  for (int d = 0; d < op->ndeps; d++)
    if (x->s->ops[op->deps[d]].ran && x->end[op->deps[d]] > x->ready[i])
      x->ready[i] = x->end[op->deps[d]];
  int st = op->stream;
  int uses_dev = op->kind == PLC_OPK_COMPUTE && x->t[i] > 0;
  x->start[i] = x->ready[i];
  plc_s64_queue(x, i, free_at[st], holder[st]);
  if (uses_dev)
    plc_s64_queue(x, i, free_at[dev], holder[dev]);
  if (st == 0 && x->start[i] > free_at[0])
    plc_s64_charge_from(x, plc_s64_blocker(x, i), free_at[0], x->start[i]);
  if (x->given) { /* links shared: it took until then */
    x->end[i] = x->given[i];
    x->t[i] = x->end[i] - x->start[i];
  } else {
    x->end[i] = x->start[i] + x->t[i];
  }
  free_at[st] = x->end[i];
  holder[st] = i;
  if (uses_dev) {
    free_at[dev] = x->end[i];
    holder[dev] = i;
  }
  so->ran = 1;
  if (st == 0) { /* plc_sim_account */
    x->busy += x->t[i];
    if (op->kind == PLC_OPK_COMPUTE) {
      x->compute += x->t[i];
    } else {
      x->exposed[i] = x->t[i];
      x->exposed_all += x->t[i];
    }
  }
  if (x->end[i] > x->end_all)
    x->end_all = x->end[i];
}

/* Compute-stream busy time before t (plc_sim_busy_to). */
static plc_si plc_s64_busy_to(const plc_s64 *x, const int *order, const plc_si *cum, int n,
                               plc_si t)
{
  int left = 0, right = n;
  while (left < right) {
    int mid = (left + right) / 2;
    if (x->end[order[mid]] <= t)
      left = mid + 1;
    else
      right = mid;
  }
  plc_si out = cum[left];
  if (left < n && t > x->start[order[left]])
    out += t - x->start[order[left]];
  return out;
}

/* plc_sim_windows. */
static void plc_s64_windows(plc_s64 *x)
{
  plc_sim *s = x->s;
  const plc_ir_list *l = x->l;
  int *order = plc_xmalloc(((size_t)l->n + 1) * sizeof *order);
  int n = plc_sim_consumers(s, l, order);
  plc_si *cum = plc_xmalloc(((size_t)n + 1) * sizeof *cum);
  cum[0] = 0;
  for (int k = 0; k < n; k++)
    cum[k + 1] = cum[k] + x->t[order[k]];
  unsigned char *blocks = plc_xcalloc((size_t)l->n + 1, 1);
  for (int i = 0; i < l->n; i++)
    if (s->ops[i].ran && s->ops[i].queued_behind >= 0 && s->ops[i].consumer >= 0 &&
        x->start[i] > x->ready[i])
      blocks[s->ops[i].queued_behind] = 1;
  for (int i = 0; i < l->n; i++) {
    const plc_ir_op *op = &l->ops[i];
    plc_sim_op *so = &s->ops[i];
    if (!so->ran || op->kind == PLC_OPK_COMPUTE)
      continue;
    if (op->stream == 0) {
      so->why = PLC_WHY_SAME_STREAM;
      continue;
    }
    plc_si until = so->consumer >= 0 ? x->start[so->consumer] : x->makespan;
    x->window[i] = plc_s64_busy_to(x, order, cum, n, until) -
                   plc_s64_busy_to(x, order, cum, n, x->start[i]);
    plc_si time = x->nominal ? x->nominal[i] : x->t[i];
    if (x->exposed[i] == 0)
      so->why = so->consumer < 0 ? PLC_WHY_NO_CONSUMER : PLC_WHY_HIDDEN;
    else if (so->queued_behind >= 0 && x->start[i] > x->ready[i])
      so->why = PLC_WHY_QUEUED;
    else if (x->t[i] > time && x->window[i] >= time)
      so->why = PLC_WHY_SHARED; /* alone at full speed it would have fitted */
    else if (x->window[i] >= time || (so->consumer < 0 && blocks[i]))
      so->why = PLC_WHY_BLOCKS;
    else if (so->consumer < 0)
      so->why = PLC_WHY_NO_CONSUMER;
    else
      so->why = x->window[i] == 0 ? PLC_WHY_NO_WORK : PLC_WHY_SHORT;
  }
  free(cum);
  free(order);
  free(blocks);
}

/* v / d (v >= 0) as a rational in lowest terms. */
static void plc_s64_set(mpq_ptr q, plc_si v, plc_su d)
{
  plc_su g = plc_s64_bgcd((plc_su)v, d);
  plc_s64_put(mpq_numref(q), (plc_su)v / g);
  plc_s64_put(mpq_denref(q), d / g);
}


static int plc_s64_is_once(const plc_ir_op *op) { return op->once; }

/* The durations of l's ops from..to that counts is true for, summed (the
 * once ops' flag read in place rather than through a call each). */
static plc_si plc_s64_sum_of(const plc_ir_list *l, const plc_si *t, int from, int to,
                             plc_sim_counts_fn *counts)
{
  plc_si sum = 0;
  if (counts == plc_s64_is_once) {
    for (int i = from; i < to; i++)
      if (l->ops[i].once)
        sum += t[i];
    return sum;
  }
  for (int i = from; i < to; i++)
    if (t[i] && counts(&l->ops[i]))
      sum += t[i];
  return sum;
}

/* The durations of u (l's) of the ops counts is true for, summed: a
 * region's whole blocks (u->per) sum to so many times their first, each
 * op of the others alike the op a block before it, its duration the
 * same and counts the same for it (it reads only fields they share). */
static plc_si plc_s64_sum_counted(const plc_ir_list *l, const plc_s64_dur *u,
                                  plc_sim_counts_fn *counts)
{
  plc_si sum = 0; /* at most u->sum: no overflow */
  for (int i = 0, r = 0; i < l->n; r++) {
    const plc_s64_reg *g = r < u->per->n ? &u->per->r[r] : NULL;
    sum += plc_s64_sum_of(l, u->t, i, g ? g->a : l->n, counts);
    if (!g)
      break;
    int k = (g->e - g->a) / g->b;
    sum += plc_s64_sum_of(l, u->t, g->a, g->a + g->b, counts) * k;
    i = g->a + k * g->b;
  }
  return sum;
}

int plc_sim_memo_once_sum(mpq_t out, const plc_ir_list *l)
{
  const plc_s64_dur *u = plc_sim_no_fast ? NULL : plc_sim_memo_slot(l, 1);
  if (!u || !u->t || !u->ok)
    return 0;
  plc_s64_set(out, plc_s64_sum_counted(l, u, plc_s64_is_once), u->d);
  return 1;
}

int plc_sim_memo_sum(mpq_t out, const plc_ir_list *l, plc_sim_counts_fn *counts)
{
  const plc_s64_dur *u = plc_sim_no_fast ? NULL : plc_sim_memo_dur(l, 0);
  if (!u || !u->ok)
    return 0;
  plc_s64_set(out, counts ? plc_s64_sum_counted(l, u, counts) : (plc_si)u->sum, u->d);
  return 1;
}

int plc_sim_memo_blocks(const plc_ir_list *l, plc_sim_block *out)
{
  const plc_s64_dur *u = plc_sim_no_steady ? NULL : plc_sim_memo_slot(l, 0);
  if (!u || !u->t || !u->ok)
    return 0;
  for (int r = 0; r < u->per->n; r++)
    out[r] = (plc_sim_block){u->per->r[r].a, u->per->r[r].b, u->per->r[r].e};
  return u->per->n;
}

/* Converted values by value (open addressing, a power of two slots): the
 * same time recurs (an op's start is its ready time or another's end),
 * and copying a rational costs less than reducing one. */
typedef struct plc_s64_memo {
  plc_si *v;
  mpq_srcptr *q;
  size_t mask;
  plc_su d;
} plc_s64_memo;

/* A memo for about n values over d. */
static void plc_s64_memo_init(plc_s64_memo *m, plc_su d, size_t n)
{
  m->d = d;
  for (m->mask = 15; m->mask < 2 * n; m->mask = 2 * m->mask + 1)
    ;
  m->v = plc_xmalloc((m->mask + 1) * sizeof *m->v);
  m->q = plc_xcalloc(m->mask + 1, sizeof *m->q);
}

static void plc_s64_memo_free(plc_s64_memo *m)
{
  free(m->v);
  free(m->q);
}

static void plc_s64_out(plc_s64_memo *m, mpq_ptr q, plc_si v)
{
  size_t i = (size_t)(((plc_su)v * 0x9E3779B97F4A7C15u) >> 17) & m->mask;
  for (; m->q[i]; i = (i + 1) & m->mask)
    if (m->v[i] == v) {
      mpq_set(q, m->q[i]);
      return;
    }
  plc_s64_set(q, v, m->d);
  m->v[i] = v;
  m->q[i] = q;
}

/* A run's op times on integers over d, until plc_sim_times needs them. */
struct plc_sim_lazy {
  plc_si *mem;                      /* plc_s64_run's arrays, ready/start/end among them */
  plc_si *ready, *start, *end;
  plc_si *exposed, *window;         /* made rationals already; kept for plc_sim_add_sums */
  plc_su d;
};

/* The transfers that took time in a run with links dedicated (start,
 * end; ran[i] for the ops that ran), by link then stream, each group in
 * list order: group g (link x ns + stream) is idx[at[g] .. at[g + 1]). */
typedef struct plc_s64_groups {
  int ns;        /* the run's streams */
  int *at, *idx;
} plc_s64_groups;

static int plc_s64_is_transfer(const plc_ir_list *l, int i, const plc_si *start,
                               const plc_si *end, const unsigned char *ran)
{
  return ran[i] && l->ops[i].kind != PLC_OPK_COMPUTE && end[i] > start[i];
}

/* The groups of the transfers among the ops cand[0 .. nc) (all of l's
 * when cand is NULL), in list order. */
static void plc_s64_group(plc_s64_groups *g, const plc_ir_list *l, int nstreams,
                          const plc_si *start, const plc_si *end, const unsigned char *ran,
                          const plc_sim_net *net, const int *cand, int nc)
{
  g->ns = nstreams;
  size_t ng = (size_t)net->nlinks * (size_t)g->ns;
  if (!cand)
    nc = l->n;
  g->at = plc_xcalloc(ng + 2, sizeof *g->at);
  g->idx = plc_xmalloc(((size_t)nc + 1) * sizeof *g->idx);
  int *key = plc_xmalloc(((size_t)nc + 1) * sizeof *key);
  for (int c = 0; c < nc; c++) {
    int i = cand ? cand[c] : c;
    key[c] = plc_s64_is_transfer(l, i, start, end, ran)
             ? net->link[l->ops[i].dim] * g->ns + l->ops[i].stream : -1;
    if (key[c] >= 0)
      g->at[key[c] + 2]++;
  }
  for (size_t k = 2; k <= ng + 1; k++)
    g->at[k] += g->at[k - 1];
  for (int c = 0; c < nc; c++) /* at[k + 1] is group k's next free place */
    if (key[c] >= 0)
      g->idx[g->at[key[c] + 1]++] = cand ? cand[c] : c;
  free(key);
}

/* What plc_s64_overlap finds over some transfers of a list: whether two
 * met (hit), when first, how many met (up to one past limit), and, per
 * link as the merge goes, the latest end so far (of a transfer seen). */
typedef struct plc_s64_meet {
  int hit, count, limit, seen, stop;
  plc_si first, latest;
} plc_s64_meet;

/* Transfer i (starting at s, ending at e) comes next on its link in the
 * merge: into m as plc_s64_overlap takes it. */
static inline __attribute__((always_inline)) void plc_s64_meet_next(plc_s64_meet *m, plc_si s,
                                                                      plc_si e)
{
  if (m->stop)
    return;
  if (m->seen && s < m->latest) {
    if (!m->hit || s < m->first)
      m->first = s;
    m->hit = 1;
    if (++m->count > m->limit) {
      m->stop = 1;
      return;
    }
  }
  if (!m->seen || e > m->latest)
    m->latest = e;
  m->seen = 1;
}

/* plc_s64_overlap into all and, when given, over the transfers that are
 * not `once` alone into own, from one grouping and one merge.  The merge
 * takes a link's transfers by start, streams in order on a tie (within a
 * stream starts only grow: a transfer takes time): an order of them all,
 * which left with those not `once` is the merge of those alone; so own
 * sees what a run over them alone would, in the same order. */
static void plc_s64_overlaps(const plc_ir_list *l, int nstreams, const plc_si *start,
                             const plc_si *end, const unsigned char *ran,
                             const plc_sim_net *net, const int *cand, int nc,
                             plc_s64_meet *all, plc_s64_meet *own)
{
  plc_s64_groups g;
  plc_s64_group(&g, l, nstreams, start, end, ran, net, cand, nc);
  int *head = plc_xmalloc(2 * ((size_t)g.ns + 1) * sizeof *head);
  int *last = head + g.ns + 1; /* per stream with transfers, its group's end */
  plc_s64_meet a = *all, b = own ? *own : *all; /* in locals: registers */
  for (int k = 0; k < net->nlinks; k++) {
    const int *at = g.at + (size_t)k * (size_t)g.ns;
    int na = 0; /* the streams with transfers on the link, in stream order */
    for (int t = 0; t < g.ns; t++)
      if (at[t] < at[t + 1])
        head[na] = at[t], last[na++] = at[t + 1];
    if (na < 2) /* one stream's transfers never meet (above): nothing to merge */
      continue;
    a.seen = a.stop = b.seen = b.stop = 0;
    while (!a.stop || (own && !b.stop)) {
      int s = -1; /* the stream whose next transfer starts first */
      for (int t = 0; t < na; t++)
        if (head[t] < last[t] && (s < 0 || start[g.idx[head[t]]] < start[g.idx[head[s]]]))
          s = t;
      if (s < 0)
        break;
      int i = g.idx[head[s]++];
      plc_s64_meet_next(&a, start[i], end[i]);
      if (own && !l->ops[i].once)
        plc_s64_meet_next(&b, start[i], end[i]);
    }
  }
  *all = a;
  if (own)
    *own = b;
  free(head);
  free(g.at);
  free(g.idx);
}

/* Did two transfers that took time run at once on one link of net, in a
 * run with links dedicated (start, end; ran[i] for the ops that ran)?  If
 * not, sharing the links would change nothing: every transfer would have
 * had its link to itself all along (flow.h).  If so, *first is when two
 * first met: up to then the run with links shared is this one.  The
 * transfers of one stream run one after another in list order (each
 * starts once the one before it on its stream ended): they never meet,
 * and their starts come sorted.  So per link the streams' transfers are
 * merged by start, each checked against the latest end before it.  With
 * cand, only the ops cand[0 .. nc) are looked at (in list order): the
 * caller's every op that is not a compute op.  *meets (when asked) counts
 * the transfers that met one before them, but only so far as anyone reads
 * it: up to one past plc_sim_ep_meets, which it is compared with
 * (plc_sim_episodes).  Past that, a link's merge stops at its first
 * meeting, its earliest (starts come in order), which is all *first needs
 * of it (without meets, at once). */
static int plc_s64_overlap(const plc_ir_list *l, int nstreams, const plc_si *start,
                           const plc_si *end, const unsigned char *ran, const plc_sim_net *net,
                           const int *cand, int nc, plc_si *first, int *meets)
{
  plc_s64_meet m = {.limit = meets ? plc_sim_ep_meets : 0};
  plc_s64_overlaps(l, nstreams, start, end, ran, net, cand, nc, &m, NULL);
  if (m.hit)
    *first = m.first;
  if (meets)
    *meets = m.count;
  return m.hit;
}

/* A run with links dedicated on integers (units of 1/d) whose transfers
 * first met on a link at `first`: every op that ended by then ran the
 * same with links shared, and the flow takes up the rest from there. */
typedef struct plc_sim_head {
  plc_si *mem;               /* owns start and end */
  const plc_si *start, *end;
  plc_su d;
  plc_si first;
  int meets;                 /* transfers that started while another of another
                              stream was on their link (plc_s64_overlap: up
                              to one past plc_sim_ep_meets) */
} plc_sim_head;

static void plc_sim_lazy_free(plc_sim *s)
{
  if (!s->lazy)
    return;
  free(s->lazy->mem);
  free(s->lazy);
  s->lazy = NULL;
}

/* Op i's end - start of a run on integers whose times are still lazy,
 * into out; 0 when they are rationals already. */
static int plc_sim_lazy_took(const plc_sim *s, int i, mpq_t out)
{
  if (!s->lazy)
    return 0;
  plc_s64_set(out, s->lazy->end[i] - s->lazy->start[i], s->lazy->d);
  return 1;
}

/* plc_sim_add_sums on the integers of a run whose times are still lazy:
 * a sum per group and figure, one rational each at the end; 0 when there
 * are none or a sum would overflow. */
static int plc_sim_lazy_sums(const plc_sim *s, const plc_ir_list *l, const int *group,
                             int ngroups, mpq_ptr *sums[3])
{
  const struct plc_sim_lazy *z = s->lazy;
  if (!z)
    return 0;
  plc_si *sum = plc_xcalloc(3 * (size_t)ngroups + 1, sizeof *sum);
  int ok = 1;
  for (int i = 0; ok && i < l->n; i++) {
    if (group[i] < 0 || !s->ops[i].ran)
      continue;
    plc_si v[3] = {z->end[i] - z->start[i], z->window[i], z->exposed[i]}, *at = sum + 3 * group[i];
    for (int k = 0; k < 3; k++)
      ok = ok && !__builtin_add_overflow(at[k], v[k], &at[k]);
  }
  mpq_t q;
  mpq_init(q);
  for (int g = 0; ok && g < ngroups; g++)
    for (int k = 0; k < 3; k++)
      if (sums[k] && sum[3 * g + k]) {
        plc_s64_set(q, sum[3 * g + k], z->d);
        mpq_add(sums[k][g], sums[k][g], q);
      }
  mpq_clear(q);
  free(sum);
  return ok;
}

void plc_sim_add_sums(const plc_sim *s, const plc_ir_list *l, const int *group, int ngroups,
                      mpq_ptr *took, mpq_ptr *window, mpq_ptr *exposed)
{
  mpq_ptr *sums[3] = {took, window, exposed};
  if (plc_sim_lazy_sums(s, l, group, ngroups, sums))
    return;
  mpq_t t;
  mpq_init(t);
  for (int i = 0; i < l->n; i++) {
    int g = group[i];
    if (g < 0 || !s->ops[i].ran)
      continue;
    plc_sim_took(s, l, i, t);
    mpq_srcptr v[3] = {t, s->ops[i].window, s->ops[i].exposed};
    for (int k = 0; k < 3; k++)
      if (sums[k])
        mpq_add(sums[k][g], sums[k][g], v[k]);
  }
  mpq_clear(t);
}

/* plc_s64_overlap on a run on integers whose times are still lazy; on a
 * meeting its times go to *h (the run keeps none). */
static int plc_sim_lazy_overlap(plc_sim *s, const plc_ir_list *l, int nstreams,
                                const plc_sim_net *net, plc_sim_head *h)
{
  unsigned char *ran = plc_xmalloc((size_t)l->n + 1);
  for (int i = 0; i < l->n; i++)
    ran[i] = (unsigned char)s->ops[i].ran;
  int hit = plc_s64_overlap(l, nstreams, s->lazy->start, s->lazy->end, ran, net, NULL, 0,
                            &h->first, &h->meets);
  free(ran);
  if (hit) {
    struct plc_sim_lazy *z = s->lazy;
    *h = (plc_sim_head){z->mem, z->start, z->end, z->d, h->first, h->meets};
    free(z);
    s->lazy = NULL;
  }
  return hit;
}

void plc_sim_times(const plc_sim *cs)
{
  plc_sim *s = (plc_sim *)cs; /* never defined const: plc_sim_init made it */
  struct plc_sim_lazy *z = s->lazy;
  if (!z)
    return;
  plc_sim_init_times(s);
  size_t n = (size_t)s->n;
  plc_s64_memo m;
  plc_s64_memo_init(&m, z->d, 4 * n);
  for (size_t i = 0; i < n; i++) {
    plc_sim_op *o = &s->ops[i];
    if (!o->ran)
      continue;
    plc_s64_out(&m, o->ready, z->ready[i]);
    plc_s64_out(&m, o->start, z->start[i]);
    plc_s64_out(&m, o->end, z->end[i]);
  }
  plc_s64_memo_free(&m);
  plc_sim_lazy_free(s);
}

/* Scale x's times, t0 and d by g->mul for a replay with links shared,
 * keeping the times as nominal (n entries at nominal): 0 when they could
 * not fit (the caller checked the ends). */
static int plc_s64_given_scale(plc_s64 *x, const plc_s64_given *g, plc_su *d, plc_si *t0s,
                               plc_si *nominal)
{
  int mb = plc_s64_bits(g->mul);
  if (plc_s64_bits(*d) + mb > PLC_SI_BITS || plc_s64_bits((plc_su)*t0s) + mb > PLC_SI_BITS - 2)
    return 0;
  *d *= g->mul;
  *t0s *= (plc_si)g->mul;
  for (int i = 0; i < x->l->n; i++) {
    if (x->t[i] && plc_s64_bits((plc_su)x->t[i]) + mb > PLC_SI_BITS - 2)
      return 0;
    x->t[i] *= (plc_si)g->mul;
    nominal[i] = x->t[i];
  }
  x->nominal = nominal;
  x->given = g->end;
  return 1;
}

/* The ops' exposures and windows (those not 0) into s's rationals: the
 * copies of a layer's collectives mostly have the same ones, which a memo
 * copies rather than reduce again. */
static void plc_s64_figs_out(const plc_s64 *x, plc_su d)
{
  size_t nz = 0;
  for (int i = 0; i < x->l->n; i++)
    nz += (x->s->ops[i].ran && x->exposed[i]) + (x->s->ops[i].ran && x->window[i]);
  plc_s64_memo m;
  plc_s64_memo_init(&m, d, nz);
  for (int i = 0; i < x->l->n; i++) {
    plc_sim_op *o = &x->s->ops[i];
    if (o->ran && (x->exposed[i] || x->window[i]))
      plc_sim_own(o);
    if (o->ran && x->exposed[i])
      plc_s64_out(&m, o->exposed, x->exposed[i]);
    if (o->ran && x->window[i])
      plc_s64_out(&m, o->window, x->window[i]);
  }
  plc_s64_memo_free(&m);
}

static int plc_sim_may_share(const plc_ir_list *l, int with_once, const plc_sim_net *net);

/* The first part of a run on integers (plc_s64_run): its durations
 * scaled, every op run, every stall and the tail charged, into x (x->s
 * and x->l set; its arrays in one block, x->t's after them when given,
 * returned in *mem) and the common denominator *d; 0, with nothing
 * allocated and x->s untouched, when the figures could pass 62 bits. */
static int plc_s64_sched(plc_s64 *x, int nstreams, int with_once, mpq_srcptr t0,
                         const plc_s64_given *g, plc_si **mem_out, plc_su *d)
{
  plc_sim *s = x->s;
  const plc_ir_list *l = x->l;
  if (plc_sim_no_fast || l->n == 0)
    return 0;
  size_t n = (size_t)l->n;
  /* nothing needs zeros: an op's sums (exposed, window) are zeroed when
   * it runs (plc_s64_step), and only the ops that ran are read */
  plc_si *mem = plc_xmalloc((g ? 7 : 6) * n * sizeof *mem);
  x->t = mem;
  plc_si t0s = 0;
  if (!plc_s64_scale(x, with_once, t0, d, &t0s, g == NULL, NULL) ||
      (g && !plc_s64_given_scale(x, g, d, &t0s, mem + 6 * n))) {
    free(mem);
    return 0;
  }
  s->shared = g != NULL;
  x->ready = mem + n;
  x->start = mem + 2 * n;
  x->end = mem + 3 * n;
  x->exposed = mem + 4 * n;
  x->window = mem + 5 * n;
  plc_si *free_at = plc_xmalloc((size_t)(nstreams + 1) * sizeof *free_at);
  int *holder = plc_xmalloc((size_t)(nstreams + 1) * sizeof *holder);
  for (int k = 0; k <= nstreams; k++) {
    free_at[k] = t0s;
    holder[k] = -1;
  }
  x->end_all = t0s;
  for (int i = 0; i < l->n; i++)
    if (with_once || !l->ops[i].once)
      plc_s64_step(x, i, free_at, holder, nstreams, t0s);
  x->makespan = free_at[0];
  if (x->end_all > free_at[0]) { /* plc_sim_tail */
    int last = -1;
    for (int i = 0; i < l->n; i++)
      if (s->ops[i].ran && (last < 0 || x->end[i] >= x->end[last]))
        last = i;
    plc_s64_charge_from(x, last, free_at[0], x->end_all);
    x->makespan = x->end_all;
  }
  for (int i = 0; i < l->n; i++) /* plc_sim_union */
    if (s->ops[i].ran && l->ops[i].kind == PLC_OPK_COMPUTE) {
      x->all_compute += x->t[i];
      if (l->ops[i].useful)
        x->useful += x->t[i];
    }
  free(free_at);
  free(holder);
  *mem_out = mem;
  return 1;
}

/* The run on integers into s (initialised); 0, leaving s untouched, when
 * the figures could pass 62 bits.  With g, links shared: the ops end as g
 * says (plc_s64_given). */
static int plc_s64_run(plc_sim *s, const plc_ir_list *l, int nstreams, int with_once,
                       mpq_srcptr t0, const plc_s64_given *g)
{
  plc_s64 x = {.s = s, .l = l};
  plc_si *mem;
  plc_su d;
  if (!plc_s64_sched(&x, nstreams, with_once, t0, g, &mem, &d))
    return 0;
  plc_s64_windows(&x);
  plc_s64_figs_out(&x, d);
  s->lazy = plc_xmalloc(sizeof *s->lazy); /* the times, for plc_sim_times */
  *s->lazy = (struct plc_sim_lazy){.mem = mem, .ready = x.ready, .start = x.start, .end = x.end,
                                   .exposed = x.exposed, .window = x.window, .d = d};
  plc_s64_set(s->makespan, x.makespan, d);
  plc_s64_set(s->end, x.end_all, d);
  plc_s64_set(s->busy, x.busy, d);
  plc_s64_set(s->compute, x.compute, d);
  plc_s64_set(s->all_compute, x.all_compute, d);
  plc_s64_set(s->useful, x.useful, d);
  plc_s64_set(s->exposed, x.exposed_all, d);
  plc_s64_set(s->stall_other, x.stall_other, d);
  return 1;
}

/* plc_sim_run_figs on integers, as plc_s64_run runs (the windows, the
 * reasons and the ops' own figures left out: none of them moves a
 * figure); 0 when it cannot run so, or when two transfers met on a link
 * (sharing would change the run). */
static int plc_s64_figs(plc_sim_figs *f, const plc_ir_list *l, int nstreams, int with_once,
                        mpq_srcptr t0, const plc_sim_net *net)
{
  plc_sim s = {.n = l->n}; /* the ops' flags only: no rationals */
  s.ops = plc_xmalloc(((size_t)l->n + 1) * sizeof *s.ops);
  for (int i = 0; i < l->n; i++) {
    s.ops[i].ran = 0;
    s.ops[i].queued_behind = s.ops[i].consumer = -1;
  }
  plc_s64 x = {.s = &s, .l = l};
  plc_si *mem = NULL;
  plc_su d;
  int ok = plc_s64_sched(&x, nstreams, with_once, t0, NULL, &mem, &d);
  if (ok && plc_sim_may_share(l, with_once, net)) {
    unsigned char *ran = plc_xmalloc((size_t)l->n + 1);
    for (int i = 0; i < l->n; i++)
      ran[i] = (unsigned char)s.ops[i].ran;
    plc_si first;
    ok = !plc_s64_overlap(l, nstreams, x.start, x.end, ran, net, NULL, 0, &first, NULL);
    free(ran);
  }
  if (ok) {
    plc_si by_dim[PLC_PD_COUNT] = {0}; /* each at most the sum of the durations */
    for (int i = 0; i < l->n; i++)
      if (s.ops[i].ran && l->ops[i].kind != PLC_OPK_COMPUTE)
        by_dim[l->ops[i].dim] += x.exposed[i];
    for (int k = 0; k < PLC_PD_COUNT; k++)
      plc_s64_set(f->exposed[k], by_dim[k], d);
    plc_s64_set(f->compute, x.compute, d);
    plc_s64_set(f->all_compute, x.all_compute, d);
    plc_s64_set(f->useful, x.useful, d);
    plc_s64_set(f->stall_other, x.stall_other, d);
  }
  free(mem);
  free(s.ops);
  return ok;
}

void plc_sim_run_figs(plc_sim_figs *f, const plc_ir_list *l, int nstreams, int with_once,
                      mpq_srcptr t0, const plc_sim_net *net)
{
  if (plc_s64_figs(f, l, nstreams, with_once, t0, net))
    return;
  plc_sim s;
  plc_sim_run(&s, l, nstreams, with_once, t0, net);
  mpq_set(f->compute, s.compute);
  mpq_set(f->all_compute, s.all_compute);
  mpq_set(f->useful, s.useful);
  mpq_set(f->stall_other, s.stall_other);
  int *group = plc_xmalloc(((size_t)l->n + 1) * sizeof *group);
  mpq_ptr out[PLC_PD_COUNT];
  for (int k = 0; k < PLC_PD_COUNT; k++) {
    mpq_set_ui(f->exposed[k], 0, 1);
    out[k] = f->exposed[k];
  }
  for (int i = 0; i < l->n; i++)
    group[i] = l->ops[i].kind != PLC_OPK_COMPUTE ? (int)l->ops[i].dim : -1;
  plc_sim_add_sums(&s, l, group, PLC_PD_COUNT, NULL, NULL, out);
  free(group);
  plc_sim_free(&s);
}

/* The run without the `once` ops, read off a run with them (plc_s64_end
 * given o): set when it could be.  Why it can: an op starts at the latest
 * of t0, the ends of its dependencies that ran, when its stream is free
 * and (compute that takes time) when the device is.  Say no op that is
 * not `once` waits for a `once` op, follows one on its stream, or (taking
 * time on the device) follows one that takes time on the device.  Then,
 * by induction in list order, each op that is not `once` starts and ends
 * in the run with them as in the run without: its dependencies are ops
 * that are not `once`, ran in both and ended the same; its stream (and
 * the device) was last held by such an op, or by none, in both.  With
 * links dedicated (times on integers) the run without the `once` ops is
 * then those ops' times, and holds when no two of its transfers met on a
 * link (plc_s64_overlap over them alone); else the run with links
 * shared takes up from when they first met, as plc_sim_ends would, with
 * these times as its head (met).  When a `once` op may have changed the
 * others' times it is run on its own. */
typedef struct plc_s64_once {
  mpq_ptr all, out;  /* plc_sim_end and plc_sim_end_of without the once ops */
  const plc_sim_net *net; /* as plc_sim_ends would run it: NULL unless it may share */
  int done;          /* all and out were set */
  int met;           /* two of its transfers met on a link at head.first; head
                        holds the run's starts and ends (owning them when
                        head.mem is set) */
  plc_sim_head head;
} plc_s64_once;

/* The run without the once ops into o (plc_s64_once), from a run with
 * them in which they changed no other op's times: unless its own
 * transfers (those of cand[0 .. nc) that are not once; cand holds every
 * op that is not compute when o->net is given) met on a link. */
static void plc_s64_once_out(plc_s64_once *o, const plc_ir_list *l, int nstreams,
                             const plc_si *starts, const plc_si *end, const unsigned char *ran,
                             const int *cand, int nc, plc_si end_all0, plc_si end_cnt0,
                             plc_su d, const plc_s64_meet *mine)
{
  if (mine) { /* found with the run's own (plc_s64_overlaps) */
    o->met = mine->hit;
    if (mine->hit)
      o->head.first = mine->first;
    o->head.meets = mine->count;
    if (o->met)
      return;
  } else if (o->net) {
    int *own = plc_xmalloc(((size_t)nc + 1) * sizeof *own), m = 0;
    for (int c = 0; c < nc; c++)
      if (!l->ops[cand[c]].once)
        own[m++] = cand[c];
    o->met = plc_s64_overlap(l, nstreams, starts, end, ran, o->net, own, m, &o->head.first,
                             &o->head.meets);
    free(own);
    if (o->met)
      return;
  }
  if (o->all)
    plc_s64_set(o->all, end_all0, d);
  if (o->out)
    plc_s64_set(o->out, end_cnt0, d);
  o->done = 1;
}

/* plc_s64_end's walk over the ops: each op's start and end (as
 * plc_s64_step), the latest end (end_all) and that of the ops counts is
 * true for (end_cnt), the ops that are not compute into cand when given.
 * With once (plc_s64_once), also whether the once ops held a stream, the
 * device or a dependency of another op (indep cleared), and the same two
 * ends over the ops that are not once (end_all0, end_cnt0).  With per,
 * the list's regions: where its blocks repeat themselves in time, it
 * takes them from the block before (plc_s64_steady). */
typedef struct plc_s64_walk {
  const plc_ir_list *l;
  const plc_si *t;
  plc_si *end, *starts, *free_at;
  unsigned char *ran, *held;
  int *cand, nc, nstreams, with_once, indep;
  plc_sim_counts_fn *counts;
  plc_si t0s, end_all, end_cnt, end_all0, end_cnt0;
  const plc_s64_per *per;
} plc_s64_walk;

/* Op op, which ended at e, into w's latest ends, as the walk does. */
static inline void plc_s64_walk_ends(plc_s64_walk *w, const plc_ir_op *op, plc_si e, int once)
{
  if (e > w->end_all)
    w->end_all = e;
  if (once && !op->once && e > w->end_all0)
    w->end_all0 = e;
  if ((e > w->end_cnt || (once && !op->once && e > w->end_cnt0)) &&
      (!w->counts || w->counts(op))) {
    if (e > w->end_cnt)
      w->end_cnt = e;
    if (once && !op->once && e > w->end_cnt0)
      w->end_cnt0 = e;
  }
}

/* The steady state.  Say the walk has reached i = a + (m + 1) b, the end
 * of block m >= 1 of a region g (plc_s64_reg), and every op of block m
 * that ran ended exactly D after its op of block m - 1 (the walk's ends).
 * Then every op of every later whole block k ends (and starts) D (k - m)
 * after its op of block m; so the walk need not run them.  Why:
 *   - An op starts at the latest of t0 (no later than its stream's free
 *     time, which starts at t0 and only grows: it never decides), the
 *     ends of its dependencies that ran, its stream's free time and, for
 *     compute that takes time, the device's; it ends its duration later.
 *   - What block m + 1 reads from before it: the free times of the
 *     streams (and the device) its ops use, which are the ends of block
 *     m's last ops on them (block m uses the same ones: its ops are
 *     alike), and the ends of its dependencies outside it, which are in
 *     block m (the region's ops are alike from block 1 on, none waiting
 *     on an op before block 0: shifted block by block, none of block k's
 *     before block k - 1).  What block m read
 *     from before it is the same of block m - 1, one block earlier op by
 *     op (alike: dependencies shifted by b; whether an op runs, the same).
 *     So block m + 1 reads what block m read, each D later.
 *   - In list order within the block, each op of block m + 1 then takes
 *     the latest of values each D after those its op of block m took, and
 *     the same duration: it ends D after it.  So block m + 1 is block m
 *     shifted by D, and by induction every later block.
 *   - D >= 0: an op starts after the op of its stream a block before it.
 *     So the latest ends (overall, without once ops, those counts is true
 *     for: a counts function reads only fields that alike ops share) over
 *     the skipped blocks are those of the last one, which the walk takes
 *     as it would; as the streams' and the device's free times after it.
 *   - With once (plc_s64_once), the bookkeeping of what once ops held
 *     (while indep holds; cleared, it is read no more): block m - 1's once
 *     ops held the streams and the device that block m's hold (alike), so
 *     block m found them held and left them so, and block m + 1 finds the
 *     same and, its ops alike (their dependencies' once too), does the
 *     same as block m: clears indep no more than it did.
 * The ops of the skipped blocks that are not compute go into cand in
 * order, as the walk puts them: block m's last in it, shifted.  Returns
 * where the walk goes on: the end of g's last whole block, or i when
 * block m is not so (or none of it ran). */
static int plc_s64_steady(plc_s64_walk *w, const plc_s64_reg *g, int i, int once)
{
  const plc_ir_list *l = w->l;
  int b = g->b, to = g->a + (g->e - g->a) / b * b, x = i - 1;
  plc_si *end = w->end, *starts = w->starts;
  unsigned char *ran = w->ran;
  while (x >= i - b && !ran[x])
    x--;
  if (x < i - b)
    return i;
  plc_si dt = end[x] - end[x - b];
  for (; x >= i - b; x--) /* from the block's end: a stream falling behind shows there first */
    if (ran[x] && end[x] - end[x - b] != dt)
      return i;
  int *cand = w->cand, nc = w->nc, nb = 0; /* block m's in cand: the last nb */
  while (cand && nb < nc && cand[nc - nb - 1] >= i - b)
    nb++;
  for (int at = i; at < to; at += b) { /* each block from the one before */
    for (x = at; x < at + b; x++)
      if (ran[x - b]) {
        ran[x] = 1;
        starts[x] = starts[x - b] + dt;
        end[x] = end[x - b] + dt;
      }
    for (int c = 0; cand && c < nb; c++, nc++)
      cand[nc] = cand[nc - nb] + b;
  }
  w->nc = nc;
  for (x = to - b; x < to; x++) { /* the last block: free times and latest ends */
    if (!ran[x])
      continue;
    const plc_ir_op *op = &l->ops[x];
    w->free_at[op->stream] = end[x];
    if (op->kind == PLC_OPK_COMPUTE && w->t[x] > 0)
      w->free_at[w->nstreams] = end[x];
    plc_s64_walk_ends(w, op, end[x], once);
  }
  plc_sim_steady_ops += to - i;
  return to;
}

/* Where the walk looks next for a steady state, from op i on: the first
 * end of a block m >= 1 of region *r or a later one (r moves on) at or
 * after i with a whole block after it; INT_MAX when there is none. */
static int plc_s64_next_check(const plc_s64_per *per, int *r, int i)
{
  for (; per && *r < per->n; ++*r) {
    const plc_s64_reg *g = &per->r[*r];
    int c = g->a + 2 * g->b, to = g->a + (g->e - g->a) / g->b * g->b;
    if (c < i)
      c += (i - c + g->b - 1) / g->b * g->b;
    if (c + g->b <= to)
      return c;
  }
  return INT_MAX;
}

/* The walk, with once a constant in each copy (the plain runs pay
 * nothing for the other). */
static inline __attribute__((always_inline)) void plc_s64_walk_run(plc_s64_walk *w,
                                                                  const int once)
{
  const plc_ir_list *l = w->l;
  const plc_si *t = w->t, t0s = w->t0s;
  plc_si *end = w->end, *starts = w->starts, *free_at = w->free_at;
  unsigned char *ran = w->ran, *held = w->held;
  int *cand = w->cand, nc = 0, nstreams = w->nstreams, with_once = w->with_once, indep = 1;
  plc_sim_counts_fn *counts = w->counts;
  plc_si end_all = t0s, end_cnt = t0s, end_all0 = t0s, end_cnt0 = t0s;
  int r = 0, chk = plc_s64_next_check(w->per, &r, 0), i = 0;
  for (;;) {
    for (int stop = chk < l->n ? chk : l->n; i < stop; i++) { /* plc_s64_step's times */
      const plc_ir_op *op = &l->ops[i];
      if (!with_once && op->once)
        continue;
      plc_si start = t0s;
      for (int k = 0; k < op->ndeps; k++)
        if (ran[op->deps[k]] && end[op->deps[k]] > start)
          start = end[op->deps[k]];
      int uses_dev = op->kind == PLC_OPK_COMPUTE && t[i] > 0;
      if (once && indep) {
        if (op->once) {
          held[op->stream] = 1;
          if (uses_dev)
            held[nstreams] = 1;
        } else {
          if (held[op->stream] || (uses_dev && held[nstreams]))
            indep = 0;
          for (int k = 0; k < op->ndeps; k++)
            if (l->ops[op->deps[k]].once)
              indep = 0;
        }
      }
      if (free_at[op->stream] > start)
        start = free_at[op->stream];
      if (uses_dev && free_at[nstreams] > start)
        start = free_at[nstreams];
      plc_si e = start + t[i];
      starts[i] = start;
      end[i] = e;
      free_at[op->stream] = e;
      if (uses_dev)
        free_at[nstreams] = e;
      ran[i] = 1;
      if (cand && op->kind != PLC_OPK_COMPUTE)
        cand[nc++] = i;
      if (e > end_all)
        end_all = e;
      if (once && !op->once && e > end_all0)
        end_all0 = e;
      if (e > end_cnt || (once && !op->once && e > end_cnt0)) {
        if (!counts || counts(op)) {
          if (e > end_cnt)
            end_cnt = e;
          if (once && !op->once && e > end_cnt0)
            end_cnt0 = e;
        }
      }
    }
    if (i >= l->n)
      break;
    /* a block's end: has the walk settled? */
    w->nc = nc, w->indep = indep;
    w->end_all = end_all, w->end_cnt = end_cnt, w->end_all0 = end_all0, w->end_cnt0 = end_cnt0;
    int to = plc_s64_steady(w, &w->per->r[r], i, once);
    nc = w->nc;
    end_all = w->end_all, end_cnt = w->end_cnt, end_all0 = w->end_all0, end_cnt0 = w->end_cnt0;
    chk = plc_s64_next_check(w->per, &r, to == i ? i + 1 : to);
    i = to;
  }
  w->nc = nc;
  w->indep = indep;
  w->end_all = end_all;
  w->end_cnt = end_cnt;
  w->end_all0 = end_all0;
  w->end_cnt0 = end_cnt0;
}

/* Tests: each op's start and end of a walk, to plc_sim_walk_hook. */
static void plc_s64_walk_out(const plc_s64_walk *w, plc_su d)
{
  mpq_t a, b;
  mpq_inits(a, b, NULL);
  for (int i = 0; i < w->l->n; i++)
    if (w->ran[i]) {
      plc_s64_set(a, w->starts[i], d);
      plc_s64_set(b, w->end[i], d);
      plc_sim_walk_hook(plc_sim_walk_ctx, w->l, i, a, b);
    }
  mpq_clears(a, b, NULL);
}

/* plc_sim_end on integers: the scheduling alone (charging moves no op);
 * 0 when the figures could not fit. */
static int plc_s64_end(mpq_t all, mpq_t out, const plc_ir_list *l, int nstreams, int with_once,
                       mpq_srcptr t0, plc_sim_counts_fn *counts, const plc_sim_net *net,
                       plc_sim_head *h, plc_s64_once *o)
{
  if (plc_sim_no_fast || l->n == 0)
    return 0;
  plc_s64 x = {.l = l};
  size_t n = (size_t)l->n;
  plc_si *mem = plc_xmalloc((3 * n + (size_t)nstreams + 1) * sizeof *mem); /* read once written */
  x.t = mem;
  plc_su d;
  plc_si t0s = 0;
  plc_s64_per per;
  if (!plc_s64_scale(&x, with_once, t0, &d, &t0s, 1, &per)) {
    free(mem);
    return 0;
  }
  plc_si *end = mem + n, *starts = mem + 2 * n, *free_at = mem + 3 * n;
  unsigned char *ran = plc_xcalloc(n, 1);
  int *cand = net ? plc_xmalloc((n + 1) * sizeof *cand) : NULL; /* not compute */
  for (int k = 0; k <= nstreams; k++)
    free_at[k] = t0s;
  plc_s64_walk w = {.l = l, .t = x.t, .end = end, .starts = starts, .free_at = free_at,
                    .ran = ran, .cand = cand, .nstreams = nstreams, .with_once = with_once,
                    .counts = counts, .t0s = t0s, .indep = 1,
                    .per = per.n > 0 && !plc_sim_no_steady ? &per : NULL};
  /* with o: per stream (and the device, at nstreams), was it held by a
   * once op */
  unsigned char *held = o ? plc_xcalloc((size_t)nstreams + 1, 1) : NULL;
  w.held = held;
  if (o)
    plc_s64_walk_run(&w, 1);
  else
    plc_s64_walk_run(&w, 0);
  if (plc_sim_walk_hook)
    plc_s64_walk_out(&w, d);
  int nc = w.nc, indep = w.indep;
  plc_si end_all = w.end_all, end_cnt = w.end_cnt;
  /* links shared: did the transfers meet, and (o) those not `once`? */
  plc_s64_meet met = {.limit = plc_sim_ep_meets}, mine = met;
  int both = held && indep && o->net == net && net;
  if (net) {
    plc_s64_overlaps(l, nstreams, starts, end, ran, net, cand, nc, &met, both ? &mine : NULL);
    if (met.hit)
      h->first = met.first;
    h->meets = met.count;
  }
  if (held && indep)
    plc_s64_once_out(o, l, nstreams, starts, end, ran, cand, nc, w.end_all0, w.end_cnt0, d,
                     both ? &mine : NULL);
  free(held);
  int ok = !net || !met.hit;
  free(ran);
  free(cand);
  if (o && o->met) /* its own run's head: the same times */
    o->head = (plc_sim_head){ok ? mem : NULL, starts, end, d, o->head.first, o->head.meets};
  if (ok) {
    if (all)
      plc_s64_set(all, end_all, d);
    if (out)
      plc_s64_set(out, end_cnt, d);
    if (!(o && o->met))
      free(mem);
  } else { /* the head of the run with links shared */
    *h = (plc_sim_head){mem, starts, end, d, h->first, h->meets};
  }
  return ok;
}

/* After the ops ran (the compute stream free at compute_end): the tail,
 * the windows and the compute unions. */
static void plc_sim_finish(plc_sim *s, const plc_ir_list *l, mpq_srcptr compute_end)
{
  mpq_set(s->makespan, compute_end);
  plc_sim_tail(s, l, compute_end);
  plc_sim_windows(s, l);
  plc_sim_union(s, l, 0, s->all_compute);
  plc_sim_union(s, l, 1, s->useful);
}

/* The run on rationals: the ops that run in list order, each ending at
 * ends[i] when given (links shared), else after its time. */
static void plc_sim_rational(plc_sim *s, const plc_ir_list *l, int nstreams, int with_once,
                             mpq_srcptr t0, mpq_t *ends)
{
  plc_sim_init_times(s);
  /* the streams, then the device's compute (slot nstreams) */
  mpq_t *free_at = plc_xmalloc((size_t)(nstreams + 1) * sizeof *free_at);
  int *holder = plc_xmalloc((size_t)(nstreams + 1) * sizeof *holder);
  for (int k = 0; k <= nstreams; k++) {
    mpq_init(free_at[k]);
    mpq_set(free_at[k], t0);
    holder[k] = -1;
  }
  mpq_set(s->end, t0);
  for (int i = 0; i < l->n; i++)
    if (with_once || !l->ops[i].once)
      plc_sim_step(s, l, i, free_at, holder, nstreams, t0, ends ? ends[i] : NULL);
  plc_sim_finish(s, l, free_at[0]);
  for (int k = 0; k <= nstreams; k++)
    mpq_clear(free_at[k]);
  free(free_at);
  free(holder);
}

/* ---- links shared ---------------------------------------------------------------- */

void plc_sim_net_of(const plc_ir_run *run, plc_sim_net *net)
{
  const char *names[PLC_PD_COUNT];
  net->share = run->shared_links;
  net->nlinks = 0;
  for (int d = 0; d < PLC_PD_COUNT; d++) {
    const plc_ir_place *pl = &run->place[d];
    const char *t = pl->port ? pl->port : pl->tier ? pl->tier : "";
    int k = 0;
    while (k < net->nlinks && strcmp(names[k], t))
      k++;
    if (k == net->nlinks)
      names[net->nlinks++] = t;
    net->link[d] = k;
    net->latency[d] = pl->latency;
  }
}

/* A collective's latency steps (Collective cost): 2 (n - 1) for an
 * all-reduce, 1 for a p2p send, n - 1 for the others. */
static long plc_sim_steps(const plc_ir_op *op)
{
  return op->kind == PLC_OPK_ALL_REDUCE ? 2L * (op->group - 1)
         : op->kind == PLC_OPK_P2P ? 1 : (long)op->group - 1;
}

void plc_sim_cost_split(const plc_sim_net *net, const plc_ir_op *op, mpq_t fixed, mpq_t work)
{
  mpq_set(fixed, op->time);
  mpq_set_ui(work, 0, 1);
  if (op->kind == PLC_OPK_COMPUTE)
    return;
  long k = plc_sim_steps(op);
  mpq_set_ui(fixed, 0, 1);
  if (net->latency[op->dim]) {
    mpq_set_si(fixed, k, 1);
    mpq_mul(fixed, fixed, net->latency[op->dim]);
    if (mpq_cmp(fixed, op->time) > 0)
      mpq_set(fixed, op->time);
  }
  mpq_sub(work, op->time, fixed);
}

/* plc_sim_may_share over l's ops from..to, first (per link, the stream
 * of its first transfer) kept from one call to the next. */
static int plc_sim_share_scan(const plc_ir_list *l, int from, int to, int with_once,
                              const plc_sim_net *net, int *first)
{
  for (int i = from; i < to; i++) {
    const plc_ir_op *op = &l->ops[i];
    if (op->kind == PLC_OPK_COMPUTE || (!with_once && op->once) || mpq_sgn(op->time) <= 0)
      continue;
    int k = net->link[op->dim];
    if (first[k] < 0)
      first[k] = op->stream;
    else if (first[k] != op->stream)
      return 1;
  }
  return 0;
}

/* Could two transfers of l share a link: with sharing on, two that take
 * time on one link from different streams (on one stream they run one
 * after the other)?  Else sharing changes nothing.  The ops of a region
 * after its first block (from the memo's durations, when it keeps l)
 * are passed over: each is alike an op before it, a transfer on the same
 * link and stream or not, as that op. */
static int plc_sim_may_share(const plc_ir_list *l, int with_once, const plc_sim_net *net)
{
  if (!net || !net->share)
    return 0;
  int first[PLC_PD_COUNT]; /* per link, the stream of its first transfer */
  for (int k = 0; k < net->nlinks; k++)
    first[k] = -1;
  const plc_s64_dur *m = plc_sim_no_fast ? NULL : plc_sim_memo_dur(l, 0);
  const plc_s64_per *per = m && m->ok ? m->per : NULL;
  int i = 0;
  for (int r = 0; per && r < per->n; i = per->r[r++].e)
    if (plc_sim_share_scan(l, i, per->r[r].a + per->r[r].b, with_once, net, first))
      return 1;
  return plc_sim_share_scan(l, i, l->n, with_once, net, first);
}

/* Each dimension's latency in units of 1/den when a whole number that
 * fits, into lat; else -1 (its transfers are split on rationals). */
static void plc_sim_int_latency(const plc_sim_net *net, mpq_srcptr scale, plc_si *lat)
{
  mpq_t q;
  mpq_init(q);
  for (int d = 0; d < PLC_PD_COUNT; d++) {
    plc_su v = 0;
    lat[d] = 0;
    if (!net->latency[d])
      continue;
    mpq_mul(q, net->latency[d], scale);
    lat[d] = mpz_cmp_ui(mpq_denref(q), 1) == 0 && mpq_sgn(q) >= 0 &&
             mpz_sizeinbase(mpq_numref(q), 2) < PLC_SI_BITS / 2 &&
             plc_s64_get(mpq_numref(q), &v) ? (plc_si)v : -1;
  }
  mpq_clear(q);
}

/* An op under way when transfers first met (h->first): it has run
 * h->first - start of its fixed part, then of its work, alone (nothing
 * shared before then); fixed and work (units of 1/d) keep what is left. */
static void plc_sim_late(const plc_sim_head *h, int i, mpq_t fixed, mpq_t work)
{
  mpq_t done;
  mpq_init(done);
  plc_s64_put(mpq_numref(done), (plc_su)(h->first - h->start[i]));
  if (mpq_cmp(done, fixed) <= 0) {
    mpq_sub(fixed, fixed, done);
  } else {
    mpq_sub(done, done, fixed);
    mpq_set_ui(fixed, 0, 1);
    mpq_sub(work, work, done);
  }
  mpq_clear(done);
}

/* The fixed part (plc_sim_cost_split) of an op that took t in units of
 * 1/d, lat its dimension's latency so (plc_sim_int_latency, >= 0): k
 * latency steps, at most t.  k lat > t decides, not lat > t / k (the same
 * for t >= 0: a 128-bit division less); k lat fits, lat being below
 * 2^(PLC_SI_BITS / 2) and k below 2^32. */
static plc_si plc_sim_int_fix(const plc_ir_op *op, plc_si t, const plc_si *lat)
{
  if (op->kind == PLC_OPK_COMPUTE)
    return t;
  long k = plc_sim_steps(op);
  if (k <= 0)
    return 0;
  plc_si kl = (plc_si)k * lat[op->dim];
  return kl > t ? t : kl;
}

/* Op i's fixed part and work in units of 1/den (plc_sim_cost_split):
 * with h in integers, its time being what it took there (lat from
 * plc_sim_int_latency), and what is left of it when h->first came. */
static void plc_sim_flow_cost(const plc_sim_net *net, const plc_ir_op *op, int i,
                              const plc_sim_head *h, const plc_si *lat, mpq_srcptr scale,
                              mpq_t fixed, mpq_t work)
{
  if (h && (op->kind == PLC_OPK_COMPUTE || lat[op->dim] >= 0)) {
    plc_si t = h->end[i] - h->start[i], fix = plc_sim_int_fix(op, t, lat);
    if (op->kind != PLC_OPK_COMPUTE)
      plc_s64_put(mpq_numref(work), (plc_su)(t - fix));
    plc_s64_put(mpq_numref(fixed), (plc_su)fix);
  } else {
    plc_sim_cost_split(net, op, fixed, work);
    mpq_mul(fixed, fixed, scale);
    mpq_mul(work, work, scale);
  }
  if (h && h->start[i] < h->first) /* under way then: what is left of it */
    plc_sim_late(h, i, fixed, work);
}

/* Flow ops' costs in units of 1/den (plc_sim_flow_cost): whole numbers
 * on machine integers, a pair (fixed, work) per op shared by the ops
 * whose costs are the same (the copies of a layer's ops: most of a
 * list), found by value (open addressing); else a pair of rationals. */
typedef struct plc_sim_costs {
  plc_flow_q *w;  /* whole pairs: w[k] fixed, w[k + 1] work; nw used */
  int nw;
  mpq_t *q;       /* rational pairs, likewise; nq used */
  int nq;
  plc_si *key;    /* per slot, its pair's fixed and work */
  int *at;        /* per slot, its pair's k, or -1 */
  size_t mask;
} plc_sim_costs;

_Static_assert(sizeof(plc_flow_int) >= sizeof(plc_si), "a whole cost is a plc_flow_int");

/* Room for n ops' costs. */
static void plc_sim_costs_init(plc_sim_costs *c, int n)
{
  c->w = plc_xmalloc(2 * ((size_t)n + 1) * sizeof *c->w);
  c->q = plc_xmalloc(2 * ((size_t)n + 1) * sizeof *c->q);
  c->nw = c->nq = 0;
  c->mask = 63; /* grows with the pairs (few: most ops' costs are equal) */
  c->key = plc_xmalloc(2 * (c->mask + 1) * sizeof *c->key);
  c->at = plc_xmalloc((c->mask + 1) * sizeof *c->at);
  for (size_t k = 0; k <= c->mask; k++)
    c->at[k] = -1;
}

static void plc_sim_costs_free(plc_sim_costs *c)
{
  for (int k = 0; k < c->nq; k++)
    mpq_clear(c->q[k]);
  free(c->w);
  free(c->q);
  free(c->key);
  free(c->at);
}

/* The slot of (fix, work) in c's table: its own, or the empty one where
 * it would go.  Times in units of a common denominator share many low
 * zero bits: the slot comes from the high half of a product, which all
 * bits move. */
static size_t plc_sim_costs_slot(const plc_sim_costs *c, plc_si fix, plc_si work)
{
  uint64_t hf = (uint64_t)(plc_su)fix ^ (uint64_t)((plc_su)fix >> 31 >> 31 >> 2),
           hw = (uint64_t)(plc_su)work ^ (uint64_t)((plc_su)work >> 31 >> 31 >> 2);
  uint64_t hh = (hf * 0x9E3779B97F4A7C15u + hw) * 0xC2B2AE3D27D4EB4Fu;
  size_t s = (size_t)(hh >> 32) & c->mask;
  while (c->at[s] >= 0 && (c->key[2 * s] != fix || c->key[2 * s + 1] != work))
    s = (s + 1) & c->mask;
  return s;
}

/* Twice the room in c's table, its pairs put back. */
static void plc_sim_costs_grow(plc_sim_costs *c)
{
  plc_si *key = c->key;
  int *at = c->at;
  size_t old = c->mask;
  c->mask = 2 * c->mask + 1;
  c->key = plc_xmalloc(2 * (c->mask + 1) * sizeof *c->key);
  c->at = plc_xmalloc((c->mask + 1) * sizeof *c->at);
  for (size_t k = 0; k <= c->mask; k++)
    c->at[k] = -1;
  for (size_t k = 0; k <= old; k++)
    if (at[k] >= 0) {
      size_t s = plc_sim_costs_slot(c, key[2 * k], key[2 * k + 1]);
      c->key[2 * s] = key[2 * k];
      c->key[2 * s + 1] = key[2 * k + 1];
      c->at[s] = at[k];
    }
  free(key);
  free(at);
}

/* The whole pair (fix, work) of c (made on first use). */
static const plc_flow_q *plc_sim_costs_int(plc_sim_costs *c, plc_si fix, plc_si work)
{
  size_t s = plc_sim_costs_slot(c, fix, work);
  if (c->at[s] >= 0)
    return &c->w[c->at[s]];
  if ((size_t)c->nw >= c->mask) { /* half full (two entries a pair) */
    plc_sim_costs_grow(c);
    s = plc_sim_costs_slot(c, fix, work);
  }
  int k = c->nw;
  c->nw += 2;
  c->w[k] = (plc_flow_q){fix, 1};
  c->w[k + 1] = (plc_flow_q){work, 1};
  c->key[2 * s] = fix;
  c->key[2 * s + 1] = work;
  c->at[s] = k;
  return &c->w[k];
}

/* Op i's costs (plc_sim_flow_cost) into o: on machine integers when h
 * has them and the op was not under way when transfers met (the costs
 * of most ops, shared by value), else a pair of rationals of its own. */
static void plc_sim_flow_pair(plc_sim_costs *c, plc_flow_op *o, const plc_sim_net *net,
                              const plc_ir_op *op, int i, const plc_sim_head *h,
                              const plc_si *lat, mpq_srcptr scale)
{
  if (h && (op->kind == PLC_OPK_COMPUTE || lat[op->dim] >= 0) && h->start[i] >= h->first) {
    plc_si t = h->end[i] - h->start[i], fix = plc_sim_int_fix(op, t, lat);
    o->q = plc_sim_costs_int(c, fix, t - fix);
    o->fixed = o->work = NULL;
    return;
  }
  int k = c->nq;
  c->nq += 2;
  mpq_inits(c->q[k], c->q[k + 1], NULL);
  plc_sim_flow_cost(net, op, i, h, lat, scale, c->q[k], c->q[k + 1]);
  o->q = NULL;
  o->fixed = c->q[k];
  o->work = c->q[k + 1];
}

/* Flow ops being built (the whole flow's, an episode's): nf at most,
 * their dependencies in pool (nd entries), their costs, the device's last
 * compute op. */
typedef struct plc_sim_fops {
  plc_flow_op *ops;
  int *pool, n, last_dev;
  size_t used;
  plc_sim_costs cost;
} plc_sim_fops;

static void plc_sim_fops_new(plc_sim_fops *b, int nf, size_t nd)
{
  b->ops = plc_xmalloc(((size_t)nf + 1) * sizeof *b->ops);
  b->pool = plc_xmalloc(nd * sizeof *b->pool);
  plc_sim_costs_init(&b->cost, nf);
  b->n = 0;
  b->last_dev = -1;
  b->used = 0;
}

static void plc_sim_fops_free(plc_sim_fops *b)
{
  plc_sim_costs_free(&b->cost);
  free(b->pool);
  free(b->ops);
}

/* The next flow op, b->n, for list op op: its dependencies that are flow
 * ops (through map) and, for an op that holds the device (dev: compute
 * with a time), the device's previous one (which it becomes); its stream
 * and link.  Its costs are the caller's; map[op] too. */
static inline plc_flow_op *plc_sim_flow_wire(plc_sim_fops *b, const int *map,
                                             const plc_ir_op *op, int dev,
                                             const plc_sim_net *net)
{
  plc_flow_op *o = &b->ops[b->n];
  o->deps = b->pool + b->used;
  o->ndeps = 0;
  for (int d = 0; d < op->ndeps; d++)
    if (map[op->deps[d]] >= 0)
      b->pool[b->used + (size_t)o->ndeps++] = map[op->deps[d]];
  if (dev && b->last_dev >= 0)
    b->pool[b->used + (size_t)o->ndeps++] = b->last_dev;
  b->used += (size_t)o->ndeps;
  o->stream = op->stream;
  o->link = op->kind == PLC_OPK_COMPUTE ? -1 : net->link[op->dim];
  if (dev)
    b->last_dev = b->n;
  return o;
}

/* Op i's whole costs in a flow from h (plc_sim_flow_pair) when they are
 * the op's a block before it (in region g, which holds op i past its
 * first block), or NULL: that op's pair, when it has one, is op
 * i's, their fixed part and work the same functions of their kind,
 * group, dimension and what they took, and both not under way when
 * transfers met (checked).  In a region the ops are alike
 * (plc_s64_alike_op): the same kind, group and dimension, and the same
 * time, so the same duration in h, whose times are a walk's on one
 * denominator (each op ends its duration after it starts). */
static inline const plc_flow_q *plc_sim_flow_again(const plc_sim_fops *b, const int *map,
                                                   const plc_sim_head *h,
                                                   const plc_s64_reg *g, int i)
{
  int j = g ? i - g->b : -1;
  if (j < 0 || map[j] < 0 || !b->ops[map[j]].q || h->start[i] < h->first)
    return NULL;
  return b->ops[map[j]].q;
}

/* The region of per that holds op i past its first block, or NULL; *r
 * the first region not ended before i (i comes in list order). */
static inline const plc_s64_reg *plc_sim_reg_at(const plc_s64_per *per, int *r, int i)
{
  while (*r < per->n && i >= per->r[*r].e)
    ++*r;
  return *r < per->n && i >= per->r[*r].a + per->r[*r].b ? &per->r[*r] : NULL;
}

/* The list's ops that run as flow ops (flow.h), into f: each on its
 * stream, after its dependencies and, a compute op that takes time, after
 * the one before it (the device's compute is serial, plc_sim_step);
 * transfers on their dimension's link.  map[i] is op i's flow op, -1 when
 * it does not run, -2 when it ended (in h) before transfers met.  The flow
 * runs in units of 1/den, den the common denominator of t0 and the ops'
 * times (into den; h's with h), so that its times are integers until
 * links are shared (the dynamics scale with time; the rationals' gcds
 * were most of its cost): f's times are in those units. */
static void plc_sim_flow(plc_flow *f, const plc_ir_list *l, int nstreams, int with_once,
                         mpq_srcptr t0, const plc_sim_net *net, int *map, mpz_t den,
                         const plc_sim_head *h)
{
  size_t nd = 1; /* the flow ops' dependencies, and how many there are */
  int nf = 0;
  for (int i = 0; i < l->n; i++)
    if ((with_once || !l->ops[i].once) && !(h && h->end[i] <= h->first)) {
      nd += (size_t)l->ops[i].ndeps + 1;
      nf++;
    }
  plc_sim_fops b;
  plc_sim_fops_new(&b, nf, nd);
  mpq_t t0s, scale;
  mpq_inits(t0s, scale, NULL);
  plc_si lat[PLC_PD_COUNT];
  if (h) { /* from when transfers first met; what ended by then is h's */
    plc_s64_put(den, h->d);
    mpz_set(mpq_numref(scale), den);
    plc_s64_put(mpq_numref(t0s), (plc_su)h->first);
    plc_sim_int_latency(net, scale, lat);
  } else {
    mpz_set(den, mpq_denref(t0));
    for (int i = 0; i < l->n; i++)
      if (with_once || !l->ops[i].once)
        mpz_lcm(den, den, mpq_denref(l->ops[i].time));
    mpz_set(mpq_numref(scale), den);
    mpq_mul(t0s, t0, scale);
  }
  const plc_s64_dur *m = h ? plc_sim_memo_dur(l, with_once) : NULL;
  const plc_s64_per *per = m && m->ok && m->per->n > 0 ? m->per : NULL;
  int r = 0, next = per ? 0 : INT_MAX; /* the region at i, looked up again at next */
  const plc_s64_reg *g = NULL;
  for (int i = 0; i < l->n; i++) {
    const plc_ir_op *op = &l->ops[i];
    map[i] = -1;
    if (!with_once && op->once)
      continue;
    if (h && h->end[i] <= h->first) {
      map[i] = -2; /* ended before any sharing */
      continue;
    }
    if (i >= next) { /* at a region's end or past its first block: which one now */
      g = plc_sim_reg_at(per, &r, i);
      next = g ? g->e : r < per->n ? per->r[r].a + per->r[r].b : INT_MAX;
    }
    int uses_dev = op->kind == PLC_OPK_COMPUTE && mpq_sgn(op->time) > 0;
    plc_flow_op *o = plc_sim_flow_wire(&b, map, op, uses_dev, net);
    const plc_flow_q *q = g ? plc_sim_flow_again(&b, map, h, g, i) : NULL;
    if (q)
      o->q = q, o->fixed = o->work = NULL;
    else
      plc_sim_flow_pair(&b.cost, o, net, op, i, h, lat, scale);
    map[i] = b.n++;
  }
  int stuck;
  plc_flow_run_ends(f, b.ops, b.n, nstreams, net->nlinks, 1, t0s, &stuck); /* deps point back */
  mpq_clears(t0s, scale, NULL);
  plc_sim_fops_free(&b);
}

/* End of op i of a shared run into q (seconds): h's for an op that ended
 * before transfers met (map -2), else the flow's (units of 1/den). */
static void plc_sim_shared_end(mpq_t q, const plc_flow *f, const int *map, int i,
                               const plc_sim_head *h, const mpz_t den)
{
  if (map[i] == -2) {
    plc_s64_set(q, h->end[i], h->d);
    return;
  }
  plc_flow_end_get(q, f, map[i]);
  mpz_mul(mpq_denref(q), mpq_denref(q), den);
  mpq_canonicalize(q);
}

/* The flow's ends put over one denominator for plc_s64_run (d x the least
 * common multiple of the flow's, which sharing keeps small), into end
 * and *mul; 0 when the step would not fit in a quarter of the range, or
 * the flow's times did not fit machine integers (f->qend NULL: it ran on
 * GMP), and then the replay is on rationals, to the same figures. */
static int plc_sim_int_ends(const plc_ir_list *l, const plc_flow *f, const int *map,
                            const plc_sim_head *h, plc_si *end, plc_su *mul)
{
  if (!f->qend)
    return 0;
  plc_su lcm = 1;
  for (int g = 0; g < f->n; g++) {
    plc_su d = f->qend[g].d; /* below 2^63 */
    if (d != 1 && __builtin_mul_overflow(lcm / plc_s64_gcd(lcm, d), d, &lcm))
      return 0;
  }
  if (plc_s64_bits(lcm) + plc_s64_bits(h->d) > PLC_SI_BITS)
    return 0;
  *mul = lcm;
  for (int i = 0; i < l->n; i++) {
    plc_si v;
    if (map[i] == -1)
      continue;
    if (map[i] == -2) { /* ended before transfers met: h's end */
      if (__builtin_mul_overflow(h->end[i], lcm, &v))
        return 0;
    } else {
      const plc_flow_q *q = &f->qend[map[i]];
      if (__builtin_mul_overflow(q->n, q->d == lcm ? 1 : lcm / q->d, &v))
        return 0;
    }
    if (v < 0 || plc_s64_bits((plc_su)v) >= PLC_SI_BITS - 2)
      return 0;
    end[i] = v;
  }
  return 1;
}

/* ---- episodes -------------------------------------------------------------------
 * Links are shared only where transfers meet, and they meet in episodes:
 * two TP collectives at a forward's start, a TP collective and a bucket
 * of the DP gradient sync, again and again along a backward.  Between
 * episodes every transfer has its link to itself and the run is the
 * list-order walk's (plc_s64_end).  So rather than the flow over the
 * whole list from the head (plc_sim_flow), the flow runs one episode at
 * a time and the walk the rest:
 *
 *   1. From a meeting at F (at first the head's; every op that ended by
 *      F did so as the walk says, plc_s64_overlap), the flow takes up the
 *      ops that had not ended by F and that the walk starts before a
 *      horizon X > F, those under way at F with what is left of them.
 *      It stops at the first time tau > F, every event up to tau done,
 *      at which no link has two transfers under way, or at X
 *      (plc_flow_run_calm).
 *   2. The state at tau determines the rest of the run: the ops that
 *      ended, with their ends (final); the ops under way, each with what
 *      is left of its fixed part and of its work (a link's virtual time
 *      counts work at full speed however many share it); the ops not
 *      started, each to start when what it waits for has ended: its
 *      dependencies, its stream's op before it and, for compute that
 *      takes time, the device's compute op before it (as plc_sim_flow
 *      chains them).
 *   3. From tau on, the walk runs the ops not started in list order, each
 *      op under way ending alone (from tau, with what is left).  That is
 *      the run with links shared unless two transfers meet in it (the
 *      premise plc_s64_overlap rests on, from a state rather than from
 *      t0); if two do, first at F' > F, it is the run up to F', and 1
 *      goes on from F'.
 *
 * Runs with links shared are no earlier than the walk, op by op: the
 * orders are fixed (each op starts at the latest end of what it waits
 * for: a max-plus recursion, monotone in the durations), and a transfer
 * sharing its link takes no less than alone (at the hand-off, what is
 * left of it is no less than its walk's time less the time since its
 * walk's start).  So each op's walk start only grows from round to
 * round (a walk that would move an op earlier gives up: a check, not a
 * case), and the latest known start of an op not yet walked again is a
 * lower bound of its next.  Two uses:
 *   - the flow of 1 leaves out the ops the walk starts at X or later:
 *     none of them starts before X >= tau, so up to tau the flow over
 *     the others is the whole run's (checked too: the walk from tau
 *     gives up when one would start before tau);
 *   - the walk of 3 need not go on past the point in list order from
 *     which every op still to walk starts at X or later (minl, the
 *     suffix minimum of those bounds): the meeting F' it found first is
 *     then the first, and the ops past that point wait for the next
 *     round's walk.
 * So a round costs the ops it walks and flows, not the whole list.
 *
 * Everything is on machine integers: units of 1/(d M), d the head's and
 * M the least common multiple of the denominators of the flows' times
 * (sharing by k divides by k), grown as the rounds need.  Each op's
 * figures are kept in the units of the round that wrote them (its
 * epoch): fac[e] takes them to the current units, so growing M costs a
 * round's few factors, not the list.  Whatever does not fit, or a flow
 * that would not run on machine integers, falls back to the whole flow
 * from the head.
 *
 * A round costs more per op walked than the flow per op it runs, and
 * setting up costs a pass over the list: episodes are taken only where
 * they pay, for a list whose head shows one meeting (plc_sim_ep_meets)
 * early enough (PLC_EP_PER_OP); the others run the whole flow from the
 * head, as PLC_SIM_NO_EPISODES=1 runs every list. */

int plc_sim_no_episodes;
_Thread_local plc_sim_ep_stats plc_sim_ep_stat;

/* PLC_SIM_NO_EPISODES=1 runs the whole flow from the head, as before
 * episodes (tests compare both; cli/main.c reads PLC_SIM_NO_FAST, this
 * one is read here, before main). */
static void __attribute__((constructor)) plc_sim_episodes_env(void)
{
  const char *v = getenv("PLC_SIM_NO_EPISODES");
  plc_sim_no_episodes = v && *v && strcmp(v, "0");
  v = getenv("PLC_SIM_NO_STEADY"); /* likewise: no repeated blocks (plc_s64_per) */
  plc_sim_no_steady = v && *v && strcmp(v, "0");
}

enum { PLC_EP_WAIT, PLC_EP_UNDER_WAY, PLC_EP_ENDED };

/* Rounds at most: after so many the rest goes in one flow (a safety
 * valve for lists whose transfers meet all along; tests set it low). */
int plc_sim_ep_rounds = 64;
/* A round costs a few passes over the ops it walks, each more than the
 * flow's per op, and about every meeting makes one: a list whose
 * transfers meet all along (a backward with its gradient sync, expert
 * all-to-alls) costs less in the whole flow.  The head's meetings
 * (plc_sim_head.meets) foretell them: with more than so many, the whole
 * flow (tests set it high).  One: a forward's two TP collectives at its
 * start, the case that pays (llama3-8b-search: 220.4M instructions with
 * 1, 220.4M with 2, 220.4M with 4, 223.2M with no limit; bench/
 * search-70b: 212.8M, 214.7M, 218.1M, 218.7M). */
int plc_sim_ep_meets = 1;
/* Episodes pass over the whole list a few times (copying the head,
 * reading the ends): a list whose transfers first meet late, so that
 * the whole flow takes up at most 1/PLC_EP_PER_OP of its ops (a backward
 * whose gradient sync meets a last collective), goes to the whole flow
 * (bench/search-70b: 212.9M instructions with none so, 212.5M with 1/4;
 * llama3-405b-h100: 72.55M, 72.48M). */
#define PLC_EP_PER_OP 4

/* A run put together from rounds. */
typedef struct plc_sim_ep {
  const plc_ir_list *l;
  const plc_sim_net *net;
  int n, nstreams;
  unsigned char *run;   /* takes part (with_once, or not once) */
  unsigned char *dev;   /* compute that takes time (the device's, serial) */
  unsigned char *state; /* PLC_EP_*: at the last hand-off */
  int *ep;              /* per op, the epoch of its start, end (and fix, work) */
  plc_si *start, *end;  /* the walk's (under way: the hand-off's time, its end alone) */
  plc_si *fix, *work;   /* under way: what is left of them from start */
  plc_si *time;         /* alone, in the head's units (epoch 0) */
  plc_si *minl;         /* minl[i], from mfrom on: no op from i on still
                           to walk starts before it (epoch mep[i]) */
  int *mep, mfrom;
  int *win, nwin;       /* the ops of a round's flow */
  int *trav, ntrav;     /* the ops a round's walk passed */
  int *sprev, *dprev;   /* the op before it on its stream, on the device (-1) */
  int *next, head;      /* the ops not ended, in list order (next[i], n ends) */
  plc_si *mem;
  plc_si lat[PLC_PD_COUNT], latc[PLC_PD_COUNT]; /* the head's units, the current */
  plc_si *fac;          /* per epoch, to the current units */
  int cur, cap;         /* the current epoch; room in fac */
  plc_su d, m;
  plc_si top;           /* no figure is above it (current units) */
  int hi;               /* ops under way are before it */
  const plc_s64_per *per; /* the list's regions (plc_sim_ep_steady), or NULL */
} plc_sim_ep;

/* Op i's figure a[i] in the current units. */
static inline plc_si plc_sim_ep_v(const plc_sim_ep *e, const plc_si *a, int i)
{
  return e->ep[i] == e->cur ? a[i] : a[i] * e->fac[e->ep[i]];
}

/* Op i's figures to the current units. */
static inline void plc_sim_ep_norm(plc_sim_ep *e, int i)
{
  if (e->ep[i] == e->cur)
    return;
  plc_si k = e->fac[e->ep[i]];
  e->start[i] *= k, e->end[i] *= k;
  if (e->state[i] == PLC_EP_UNDER_WAY)
    e->fix[i] *= k, e->work[i] *= k;
  e->ep[i] = e->cur;
}

/* minl[i] in the current units, made (down from mfrom) when not yet. */
static plc_si plc_sim_ep_minl_at(plc_sim_ep *e, int i)
{
  for (; e->mfrom > i; e->mfrom--) {
    int k = e->mfrom - 1;
    plc_si v = e->minl[k + 1] == PLC_SI_MAX ? PLC_SI_MAX : e->minl[k + 1] * e->fac[e->mep[k + 1]];
    if (e->run[k] && e->state[k] == PLC_EP_WAIT && plc_sim_ep_v(e, e->start, k) < v)
      v = plc_sim_ep_v(e, e->start, k);
    e->minl[k] = v;
    e->mep[k] = e->cur;
  }
  return e->minl[i] == PLC_SI_MAX ? PLC_SI_MAX : e->minl[i] * e->fac[e->mep[i]];
}

/* From h: 0 when a transfer's latency is not a whole number of units, or
 * the figures are too near the range. */
static int plc_sim_ep_init(plc_sim_ep *e, const plc_ir_list *l, int nstreams, int with_once,
                           const plc_sim_net *net, const plc_sim_head *h)
{
  size_t n = (size_t)l->n;
  *e = (plc_sim_ep){.l = l, .net = net, .n = l->n, .nstreams = nstreams, .d = h->d, .m = 1,
                    .cap = 16, .mfrom = l->n};
  mpq_t scale;
  mpq_init(scale);
  plc_s64_put(mpq_numref(scale), h->d);
  plc_sim_int_latency(net, scale, e->lat);
  mpq_clear(scale);
  memcpy(e->latc, e->lat, sizeof e->lat);
  e->mem = plc_xmalloc((6 * n + 1) * sizeof *e->mem); /* each read once written */
  e->start = e->mem, e->end = e->start + n, e->fix = e->end + n, e->work = e->fix + n;
  e->time = e->work + n, e->minl = e->time + n;
  e->run = plc_xcalloc(3 * n + 3, 1);
  e->dev = e->run + n + 1;
  e->state = e->dev + n + 1;
  e->ep = plc_xmalloc((7 * n + 8 + (size_t)nstreams) * sizeof *e->ep);
  e->mep = e->ep + n + 1;
  e->win = e->mep + n + 1;
  e->trav = e->win + n + 1;
  e->sprev = e->trav + n + 1;
  e->dprev = e->sprev + n + 1;
  e->next = e->dprev + n + 1;
  int *last = e->next + n + 1, *link = &e->head; /* per stream and the device */
  for (int k = 0; k <= nstreams; k++)
    last[k] = -1;
  e->fac = plc_xmalloc((size_t)e->cap * sizeof *e->fac);
  e->fac[0] = 1;
  e->minl[n] = PLC_SI_MAX;
  e->mep[n] = 0;
  /* in locals: stores through the arrays (run's chars above all) could
   * alias e's fields, which the compiler would load again each time */
  unsigned char *run = e->run, *dev = e->dev;
  int *ep = e->ep, *sprev = e->sprev, *dprev = e->dprev, *next = e->next;
  plc_si *start = e->start, *end = e->end, *time = e->time, top = e->top;
  const plc_si *hs = h->start, *he = h->end;
  for (int i = 0; i < l->n; i++) {
    const plc_ir_op *op = &l->ops[i];
    if (!with_once && op->once)
      continue;
    if (op->kind != PLC_OPK_COMPUTE && e->lat[op->dim] < 0)
      return 0;
    run[i] = 1;
    ep[i] = 0;
    start[i] = hs[i];
    end[i] = he[i];
    time[i] = he[i] - hs[i];
    int d = op->kind == PLC_OPK_COMPUTE && time[i] > 0;
    dev[i] = (unsigned char)d;
    sprev[i] = last[op->stream];
    dprev[i] = d ? last[nstreams] : -1;
    last[op->stream] = i;
    if (d)
      last[nstreams] = i;
    *link = i;
    link = &next[i];
    if (end[i] > top)
      top = end[i];
  }
  *link = l->n;
  e->top = top;
  return plc_s64_bits((plc_su)top) < PLC_SI_BITS - 2;
}

static void plc_sim_ep_free(plc_sim_ep *e)
{
  free(e->mem);
  free(e->run);
  free(e->ep);
  free(e->fac);
}

/* Every figure times k (the flow's times have denominators dividing k),
 * as a new epoch; 0 when they could pass the range (checked also for k
 * 1: e->top may have grown). */
static int plc_sim_ep_scale(plc_sim_ep *e, plc_su k)
{
  int kb = plc_s64_bits(k);
  if (plc_s64_bits((plc_su)e->top) + 1 + kb > PLC_SI_BITS - 2)
    return 0;
  if (k == 1)
    return 1;
  if (plc_s64_bits(e->d) + plc_s64_bits(e->m) + kb > PLC_SI_BITS)
    return 0;
  for (int dd = 0; dd < PLC_PD_COUNT; dd++) /* k lat fits (plc_sim_int_fix) */
    if (e->latc[dd] > 0 && plc_s64_bits((plc_su)e->latc[dd]) + kb >= PLC_SI_BITS / 2)
      return 0;
  if (e->cur + 1 == e->cap) {
    e->cap *= 2;
    e->fac = plc_xrealloc(e->fac, (size_t)e->cap * sizeof *e->fac);
  }
  plc_si s = (plc_si)k;
  for (int x = 0; x <= e->cur; x++)
    e->fac[x] *= s;
  e->fac[++e->cur] = 1;
  for (int dd = 0; dd < PLC_PD_COUNT; dd++)
    if (e->latc[dd] > 0)
      e->latc[dd] *= s;
  e->top *= s;
  e->m *= k;
  return 1;
}

/* v (a flow time, units of 1/(d m) before k) in units of 1/(d m k). */
static plc_si plc_sim_ep_whole(const plc_flow_q *v, plc_su k)
{
  return (plc_si)v->n * (plc_si)(k / v->d);
}

/* Op i's fixed part and work left at f (current units), alone until
 * then: its state's, or its time's split (plc_sim_cost_split). */
static void plc_sim_ep_cost(plc_sim_ep *e, int i, plc_si f, plc_si *fix, plc_si *work)
{
  plc_sim_ep_norm(e, i);
  if (e->state[i] == PLC_EP_UNDER_WAY) {
    *fix = e->fix[i], *work = e->work[i];
  } else {
    plc_si t = e->time[i] * e->fac[0];
    *fix = plc_sim_int_fix(&e->l->ops[i], t, e->latc);
    *work = t - *fix;
  }
  if (e->start[i] < f) { /* under way at f: what is left */
    plc_si done = f - e->start[i];
    if (done <= *fix) {
      *fix -= done;
    } else {
      *work -= done - *fix;
      *fix = 0;
    }
  }
}

/* The ops of the flow from f to x into e->win, from the ops not ended
 * before to: those under way or walked this round that had not ended by
 * f (else ended now, and out of the list) and start before x; with x
 * PLC_SI_MAX (the last round), every op still to walk too (the walk
 * starts those at x or later). */
static void plc_sim_ep_window(plc_sim_ep *e, int to, const int *stamp, int round, plc_si f,
                              plc_si x)
{
  unsigned char *state = e->state; /* in locals: the stores could alias e's fields */
  int *next = e->next, *win = e->win, nwin = 0;
  for (int *at = &e->head, i = *at; i < to; i = *at) {
    if (state[i] == PLC_EP_WAIT && stamp[i] != round) {
      if (x == PLC_SI_MAX)
        win[nwin++] = i;
    } else if (plc_sim_ep_v(e, e->end, i) <= f) {
      state[i] = PLC_EP_ENDED; /* as walked, or alone from the hand-off */
      *at = next[i];
      continue;
    } else if (plc_sim_ep_v(e, e->start, i) < x) {
      win[nwin++] = i;
    }
    at = &next[i];
  }
  e->nwin = nwin;
}

/* Step 1: the flow from f over the window (plc_sim_ep_window), into fl
 * (map[i] op i's flow op, -1 as it was for the others). */
static int plc_sim_ep_flow(plc_sim_ep *e, plc_si f, plc_si x, plc_flow *fl, plc_flow_calm *calm,
                           int *map)
{
  const plc_ir_list *l = e->l;
  size_t nd = 1;
  int nf = e->nwin;
  for (int w = 0; w < nf; w++)
    nd += (size_t)l->ops[e->win[w]].ndeps + 1;
  plc_sim_fops b;
  plc_sim_fops_new(&b, nf, nd);
  for (int w = 0; w < nf; w++) {
    int i = e->win[w];
    const plc_ir_op *op = &l->ops[i];
    plc_flow_op *o = plc_sim_flow_wire(&b, map, op, e->dev[i], e->net);
    plc_si fix, work;
    plc_sim_ep_cost(e, i, f, &fix, &work);
    o->q = plc_sim_costs_int(&b.cost, fix, work);
    o->fixed = o->work = NULL;
    map[i] = b.n++;
  }
  int n = b.n;
  calm->horizon = (plc_flow_q){x, 1};
  calm->to_end = x == PLC_SI_MAX;
  calm->state = plc_xmalloc((size_t)n + 1);
  calm->rest = plc_xmalloc(2 * ((size_t)n + 1) * sizeof *calm->rest);
  mpq_t t0;
  mpq_init(t0);
  plc_s64_put(mpq_numref(t0), (plc_su)f);
  int r = plc_flow_run_calm(fl, b.ops, n, e->nstreams, e->net->nlinks, t0, calm);
  mpq_clear(t0);
  plc_sim_fops_free(&b);
  plc_sim_ep_stat.flows++;
  plc_sim_ep_stat.ops += n;
  return r == 0;
}

/* The least common multiple of the denominators of the hand-off's
 * times; 0 when it does not fit.  e->top is raised to the latest of
 * them (ends after sharing come later than the walk's). */
static plc_su plc_sim_ep_lcm(plc_sim_ep *e, const plc_flow *fl, const plc_flow_calm *calm)
{
  plc_su lcm = calm->t.d;
  for (int g = 0; g < fl->n; g++) {
    const plc_flow_q *q[3] = {calm->state[g] == 2 ? &fl->qend[g] : NULL,
                              calm->state[g] == 1 ? &calm->rest[2 * g] : NULL,
                              calm->state[g] == 1 ? &calm->rest[2 * g + 1] : NULL};
    plc_si v = calm->state[g] == 1 ? (plc_si)(calm->t.n / (plc_flow_int)calm->t.d) + 1 : 0;
    for (int k = 0; k < 3; k++) {
      plc_su d = q[k] ? q[k]->d : 1;
      if (q[k] && __builtin_add_overflow(v, (plc_si)(q[k]->n / (plc_flow_int)d) + 1, &v))
        return 0;
      if (d != 1 && __builtin_mul_overflow(lcm / plc_s64_gcd(lcm, d), d, &lcm))
        return 0;
    }
    if (v > e->top)
      e->top = v;
  }
  return plc_s64_bits(lcm) > PLC_SI_BITS / 2 ? 0 : lcm;
}

/* Step 2: the hand-off's state into e's window ops (the figures rescaled
 * to its denominators), its time into *tau, f into the new units; map
 * cleared.  0 when it does not fit. */
static int plc_sim_ep_take(plc_sim_ep *e, const plc_flow *fl, const plc_flow_calm *calm,
                           int *map, plc_si *f, plc_si *tau)
{
  plc_su k = plc_sim_ep_lcm(e, fl, calm);
  if (!k || !plc_sim_ep_scale(e, k))
    return 0;
  *f *= (plc_si)k;
  *tau = plc_sim_ep_whole(&calm->t, k);
  e->hi = 0;
  for (int w = 0; w < e->nwin; w++) {
    int i = e->win[w], g = map[i];
    map[i] = -1;
    plc_sim_ep_norm(e, i);
    e->state[i] = calm->state[g];
    if (e->state[i] == PLC_EP_ENDED) {
      e->end[i] = plc_sim_ep_whole(&fl->qend[g], k);
    } else if (e->state[i] == PLC_EP_UNDER_WAY) { /* alone from tau: start it then */
      e->start[i] = *tau;
      e->fix[i] = plc_sim_ep_whole(&calm->rest[2 * g], k);
      e->work[i] = plc_sim_ep_whole(&calm->rest[2 * g + 1], k);
      e->end[i] = *tau + e->fix[i] + e->work[i];
      e->hi = i + 1;
    }
    if (e->end[i] > e->top)
      e->top = e->end[i];
  }
  return 1;
}

/* The transfers of a round's walk per link and stream, in list order (so
 * by start), and the first meeting of two so far. */
typedef struct plc_sim_ep_meet {
  int ng, ns;
  int *len, *cap, *blk; /* blk: per group, scratch (0) for plc_sim_ep_apart */
  plc_si **se;          /* per group: start, end pairs */
  plc_si first, x;      /* the first meeting (PLC_SI_MAX: none) and its horizon */
} plc_sim_ep_meet;

/* Transfer [s, t) into group g of m, last: the end of plc_sim_ep_add, and where
 * plc_sim_ep_skip takes transfers without looking for meetings. */
static void plc_sim_ep_put(plc_sim_ep_meet *m, int g, plc_si s, plc_si t)
{
  if (m->len[g] == m->cap[g]) {
    m->cap[g] = m->cap[g] ? 2 * m->cap[g] : 16;
    m->se[g] = plc_xrealloc(m->se[g], 2 * (size_t)m->cap[g] * sizeof *m->se[g]);
  }
  m->se[g][2 * m->len[g]] = s;
  m->se[g][2 * m->len[g] + 1] = t;
  m->len[g]++;
}

/* Transfer [s, t) on link k of stream a: a meeting with one of another
 * stream of the link at the later start, when they overlap.  Each
 * stream's transfers run one after another: scanning back, the first
 * that ends by s ends all that came before. */
static void plc_sim_ep_add(plc_sim_ep_meet *m, int k, int a, plc_si s, plc_si t)
{
  for (int b = 0; b < m->ns; b++) {
    int g = k * m->ns + b;
    for (int j = b == a ? 0 : m->len[g]; j-- > 0;) {
      plc_si ys = m->se[g][2 * j], ye = m->se[g][2 * j + 1];
      if (ye <= s)
        break;
      if (ys >= t)
        continue;
      plc_si at = ys > s ? ys : s, last = ye > t ? ye : t;
      if (at < m->first) {
        m->first = at;
        m->x = at + 2 * (last - at);
      }
    }
  }
  plc_sim_ep_put(m, k * m->ns + a, s, t);
}

/* Op i, walked or under way (current units), into m when a transfer that
 * takes time. */
static void plc_sim_ep_note(const plc_sim_ep *e, plc_sim_ep_meet *m, int i)
{
  const plc_ir_op *op = &e->l->ops[i];
  if (op->kind != PLC_OPK_COMPUTE && e->end[i] > e->start[i])
    plc_sim_ep_add(m, e->net->link[op->dim], op->stream, e->start[i], e->end[i]);
}

/* The end of op i (-1: none, 0) in the current units. */
static inline plc_si plc_sim_ep_end(const plc_sim_ep *e, int i)
{
  return i < 0 ? 0 : plc_sim_ep_v(e, e->end, i);
}

/* The steady state of a round's walk (plc_sim_ep_walk), as the walk to
 * a list's end has it (plc_s64_steady).  Say the walk, no meeting found
 * yet, has reached the end c of block m >= 1 of a region (plc_s64_reg, b
 * ops a block), every op of blocks m - 1 and m that runs walked this
 * round, each with the duration of its op a block before, and every op
 * of block m ends exactly D after its op of block m - 1
 * (plc_sim_ep_settled); and the transfers of block m are apart enough
 * (plc_sim_ep_apart).  Then the walk takes each op i of the region's
 * later whole blocks from the op a block before it: it starts at
 * start[i - b] + D, ends its duration later, and meets no transfer:
 *   - the same start as the walk's: the walk starts an op x at the
 *     latest end of the op before it on its stream (sprev), of its
 *     dependencies that run and, for compute that takes time (dev), of
 *     the op before it on the device (dprev).  In a region the ops are
 *     alike (plc_s64_alike_op: kind, stream, once so whether it runs,
 *     dependencies shifted by b, none before block k - 1 for an op of
 *     block k); their durations the same (checked, op by op: so dev is
 *     too), sprev[x] = sprev[x - b] + b and dprev[x] = dprev[x - b] + b
 *     for x past block m (x - b is on x's stream and a dev op when x is,
 *     so both lie in the two blocks before x's).  So x waits for the ops
 *     x - b waits for, each a block later, none before block m - 1; those
 *     were walked this round (blocks m - 1 and m: checked; later ones:
 *     taken so, block by block in list order, the walk passing no op that
 *     runs: checked) and end D after (block m: checked; later: by
 *     induction).  So x reads what x - b read, each D later: it starts D
 *     after x - b, and ends D after it.  D >= 0: x - b is before x on its
 *     stream.
 *   - no meeting: two transfers meet when on one link, of two streams,
 *     they overlap in time.  Take x of a block k > m it takes, on link L,
 *     and y of another stream on L, noted before block m or of a block j
 *     from m to k (a pair of two blocks it takes: x the later one's; a
 *     transfer after the region looks for its meetings itself, among
 *     those noted, as the walk's would).  If y was noted before block
 *     m (under way, or walked), it ended no later than the last such of
 *     its stream and link (a stream's transfers end in list order), which
 *     ended by the start of x's op of block m (apart: checked), which
 *     is no later than x's start (D >= 0).  If y is in block j >= m, shift
 *     both back by j - m blocks (every block is the one before D later):
 *     y to y0 of block m, x to x0 + n D, x0 of block m, n = k - j.  With
 *     n = 0 both are of block m, which met nothing (no meeting yet).  With
 *     n >= 1: y0 is y1 + D, y1 its op of block m - 1, which ended no
 *     later than the last transfer of its stream and link before block
 *     m, so by x0's start (apart): y0 ends by x0's start + D, no later
 *     than x0 + n D starts.
 *   - so the first meeting stays none, the walk does not stop before the
 *     region's last whole block ends, and what else the walk does with
 *     each op (its checks against tau and the start before, its place in
 *     the list of ops passed, the transfers noted for later ops) is done
 *     as the walk does it, op by op.
 * The walk takes ops so until the region's last whole block ends or an
 * op does not fit (another duration, an op that runs passed, one that
 * ran in the flow): from there it walks again. */
typedef struct plc_sim_ep_steady {
  int r, chk;     /* the region, and the block end where to look next */
} plc_sim_ep_steady;

/* Does op x of a walk note its transfer (plc_sim_ep_note)? */
static inline int plc_sim_ep_noted(const plc_sim_ep *e, int x)
{
  return e->l->ops[x].kind != PLC_OPK_COMPUTE && e->end[x] > e->start[x];
}

/* Is the walk settled at c, the end of block m of a region of blocks of
 * b, the walk at op i (c <= i < c + b)?  None of the ops from c to i
 * runs; every op of blocks m - 1 and m that runs was walked this round
 * and has the duration of the op b before it; block m's end D (into
 * *dt) after those; one of them runs. */
static int plc_sim_ep_settled(const plc_sim_ep *e, const int *stamp, int round, int c, int i,
                              int b, plc_si *dt)
{
  for (int x = c; x < i; x++)
    if (e->run[x])
      return 0;
  int any = 0;
  for (int x = c - 1; x >= c - b; x--) { /* from the end: a stream falling behind shows there */
    if (!e->run[x])
      continue;
    if (stamp[x] != round || stamp[x - b] != round || e->time[x] != e->time[x - b] ||
        (any && e->end[x] - e->end[x - b] != *dt))
      return 0;
    *dt = e->end[x] - e->end[x - b];
    any = 1;
  }
  return any;
}

/* Are the transfers of block m ([c - b, c), the last noted in m) apart
 * (plc_sim_ep_steady): each, on link L of stream s, starts no earlier
 * than the last transfer noted before block m on L of every other stream
 * ends? */
static int plc_sim_ep_apart(const plc_sim_ep *e, plc_sim_ep_meet *m, int c, int b)
{
  const plc_ir_op *ops = e->l->ops;
  int ok = 1;
  for (int x = c - b; x < c; x++) /* block m's in each group: the last ones */
    if (e->run[x] && plc_sim_ep_noted(e, x))
      m->blk[e->net->link[ops[x].dim] * m->ns + ops[x].stream]++;
  for (int x = c - b; ok && x < c; x++) {
    if (!e->run[x] || !plc_sim_ep_noted(e, x))
      continue;
    int k = e->net->link[ops[x].dim], a = ops[x].stream;
    for (int s = 0; ok && s < m->ns; s++) {
      int g = k * m->ns + s, j = m->len[g] - m->blk[g] - 1;
      ok = s == a || j < 0 || m->se[g][2 * j + 1] <= e->start[x];
    }
  }
  for (int x = c - b; x < c; x++)
    if (e->run[x] && plc_sim_ep_noted(e, x))
      m->blk[e->net->link[ops[x].dim] * m->ns + ops[x].stream] = 0;
  return ok;
}

/* The walk's op i starts at s and ends after its time (slowed within an
 * episode): 1, or 0 when s is earlier than tau or than a walk before (the
 * walk gives up). */
static inline int plc_sim_ep_place(plc_sim_ep *e, int i, plc_si s, plc_si tau, int *stamp,
                                   int round)
{
  if (s < tau || s < plc_sim_ep_v(e, e->start, i))
    return 0;
  e->ep[i] = e->cur;
  e->start[i] = s;
  e->end[i] = s + (e->cur ? e->time[i] * e->fac[0] : e->time[i]);
  stamp[i] = round;
  if (e->end[i] > e->top)
    e->top = e->end[i];
  return 1;
}

/* The ops from i (the walk's next) taken by the
 * steady state (plc_sim_ep_steady) when the walk is settled at i, as the
 * walk takes them (for tau, stamp and round, see plc_sim_ep_walk); returns
 * the op from which the walk goes on (i when it took none), -1 when an
 * op would start earlier than the walk's before (the walk gives up). */
static __attribute__((noinline)) int plc_sim_ep_skip(plc_sim_ep *e, plc_sim_ep_meet *m,
                                                     plc_sim_ep_steady *y, plc_si tau,
                           int *stamp, int round, int i)
{
  int to = 0, b = 0;
  plc_si dt = 0;
  while (i >= y->chk) { /* the block ends passed: the latest */
    const plc_s64_reg *g = &e->per->r[y->r];
    int c = y->chk;
    if (i < c + g->b && plc_sim_ep_settled(e, stamp, round, c, i, g->b, &dt) &&
        plc_sim_ep_apart(e, m, c, g->b)) {
      to = g->a + (g->e - g->a) / g->b * g->b;
      b = g->b;
    }
    y->chk = plc_s64_next_check(e->per, &y->r, c + 1);
  }
  for (int last = i - 1; i < to; last = i, i = e->next[i]) { /* none runs from c to i */
    int ok = e->state[i] == PLC_EP_WAIT && e->time[i] == e->time[i - b];
    for (int x = last + 1; ok && x < i; x++) /* no op that runs passed */
      ok = !e->run[x];
    if (!ok)
      break;
    e->trav[e->ntrav++] = i;
    if (!plc_sim_ep_place(e, i, e->start[i - b] + dt, tau, stamp, round))
      return -1;
    if (plc_sim_ep_noted(e, i))
      plc_sim_ep_put(m, e->net->link[e->l->ops[i].dim] * m->ns + e->l->ops[i].stream,
                     e->start[i], e->end[i]);
    plc_sim_ep_stat.steady++;
  }
  if (to)
    y->chk = plc_s64_next_check(e->per, &y->r, i);
  return i;
}

/* Step 3's ops (plc_sim_ep_walk) from the first not ended: the op it
 * stopped before (l->n at the list's end), -1 when one would start
 * earlier than tau or than a walk before.  With steady (a constant in
 * each copy: lists without regions pay nothing for it), blocks that
 * repeat themselves are taken from the block before (plc_sim_ep_skip). */
static inline __attribute__((always_inline)) int
plc_sim_ep_walk_ops(plc_sim_ep *e, plc_sim_ep_meet *m, plc_si tau, int *stamp, int round,
                    const int steady)
{
  const plc_ir_list *l = e->l;
  int i = e->head;
  plc_sim_ep_steady y = {0};
  y.chk = steady ? plc_s64_next_check(e->per, &y.r, 0) : INT_MAX;
  for (; i < l->n; i = e->next[i]) {
    if (steady && i >= y.chk) { /* while no meeting was found */
      i = m->first == PLC_SI_MAX ? plc_sim_ep_skip(e, m, &y, tau, stamp, round, i) : i;
      if (m->first < PLC_SI_MAX)
        y.chk = INT_MAX; /* the first meeting stays found */
      if (i < 0 || i >= l->n)
        return i;
    }
    if (i >= e->hi && m->first < PLC_SI_MAX && plc_sim_ep_minl_at(e, i) >= m->x)
      break;
    e->trav[e->ntrav++] = i;
    if (e->state[i] != PLC_EP_WAIT)
      continue;
    const plc_ir_op *op = &l->ops[i];
    plc_si s = plc_sim_ep_end(e, e->sprev[i]);
    for (int k = 0; k < op->ndeps; k++)
      if (e->run[op->deps[k]] && plc_sim_ep_v(e, e->end, op->deps[k]) > s)
        s = plc_sim_ep_v(e, e->end, op->deps[k]);
    if (e->dev[i] && plc_sim_ep_end(e, e->dprev[i]) > s)
      s = plc_sim_ep_end(e, e->dprev[i]);
    if (!plc_sim_ep_place(e, i, s, tau, stamp, round))
      return -1;
    plc_sim_ep_note(e, m, i);
  }
  return i;
}

/* Step 3: the walk from tau over the ops still to walk, in list order,
 * each after its dependencies, its stream's op before it and (compute
 * that takes time) the device's, until every op still to walk starts at
 * or after the horizon of the first meeting found (1, *to the op it
 * stopped before, m->first and m->x the meeting), or the list ends
 * without one (2); 0 when an op would start earlier than tau or than a
 * walk before.  Only the ops not ended are passed (the list e->next). */
static int plc_sim_ep_walk(plc_sim_ep *e, plc_sim_ep_meet *m, plc_si tau, int *stamp,
                           int round, int *to)
{
  for (int g = 0; g < m->ng; g++)
    m->len[g] = 0;
  m->first = PLC_SI_MAX;
  for (int i = e->head; i < e->hi; i = e->next[i]) /* under way: each its stream's first */
    if (e->state[i] == PLC_EP_UNDER_WAY)
      plc_sim_ep_note(e, m, i);
  e->ntrav = 0;
  int i = e->per ? plc_sim_ep_walk_ops(e, m, tau, stamp, round, 1)
                 : plc_sim_ep_walk_ops(e, m, tau, stamp, round, 0);
  if (i < 0)
    return 0;
  *to = i;
  if (plc_s64_bits((plc_su)e->top) >= PLC_SI_BITS - 2)
    return 0;
  if (m->first < PLC_SI_MAX && i >= e->mfrom) { /* another round: the bounds moved */
    for (int k = e->ntrav; k-- > 0;) {
      int j = e->trav[k], nx = k + 1 < e->ntrav ? e->trav[k + 1] : i;
      plc_si v = e->minl[nx] == PLC_SI_MAX ? PLC_SI_MAX : e->minl[nx] * e->fac[e->mep[nx]];
      if (e->state[j] == PLC_EP_WAIT && e->start[j] < v)
        v = e->start[j];
      e->minl[j] = v;
      e->mep[j] = e->cur;
    }
    if (e->ntrav > 0 && e->trav[0] < e->mfrom)
      e->mfrom = e->trav[0];
  }
  return m->first < PLC_SI_MAX ? 1 : 2;
}

/* The run with links shared from h, by episodes, into e (its ends
 * e->end[i] for the ops with e->run, units of 1/(e->d e->m)); 0 when it
 * cannot (e freed then). */
static int plc_sim_episodes(plc_sim_ep *e, const plc_ir_list *l, int nstreams, int with_once,
                            const plc_sim_net *net, const plc_sim_head *h)
{
  if (plc_sim_no_episodes || plc_flow_no_fast || h->meets > plc_sim_ep_meets)
    return 0;
  int left = 0, need = l->n / PLC_EP_PER_OP; /* the whole flow's ops: those not */
  for (int i = 0; i < l->n && left <= need; i++) /* ended by the head's first meeting */
    left += (with_once || !l->ops[i].once) && h->end[i] > h->first; /* ops that ran */
  if (left <= need)
    return 0; /* a few ops at the list's end: the whole flow costs less than the passes */
  int ok = plc_sim_ep_init(e, l, nstreams, with_once, net, h), rounds = 0, to = l->n;
  const plc_s64_dur *md = plc_sim_no_steady ? NULL : plc_sim_memo_dur(l, with_once);
  e->per = md && md->ok && md->per->n > 0 ? md->per : NULL; /* plc_sim_ep_steady */
  int *map = plc_xmalloc(2 * ((size_t)l->n + 1) * sizeof *map), *stamp = map + l->n + 1;
  for (int i = 0; i < l->n; i++)
    map[i] = -1, stamp[i] = 0;
  plc_sim_ep_meet m = {.ng = net->nlinks * nstreams, .ns = nstreams};
  m.len = plc_xcalloc(3 * (size_t)m.ng + 3, sizeof *m.len);
  m.cap = m.len + m.ng + 1;
  m.blk = m.cap + m.ng + 1;
  m.se = plc_xcalloc((size_t)m.ng + 1, sizeof *m.se);
  plc_si f = h->first, x = f + 1; /* the head's horizon: from the ops under way at f */
  for (int i = 0; ok && i < l->n; i++)
    if (e->run[i] && e->start[i] <= f && e->end[i] > x)
      x = e->end[i];
  x = f + 2 * (x - f);
  for (int walked = 1; ok && walked == 1; rounds++) {
    plc_flow fl;
    plc_flow_calm calm;
    plc_si tau;
    if (rounds == plc_sim_ep_rounds) /* the rest in one flow: no more walks to pay */
      x = PLC_SI_MAX, to = l->n;
    plc_sim_ep_window(e, to, stamp, rounds, f, x);
    ok = plc_sim_ep_flow(e, f, x, &fl, &calm, map);
    if (ok) {
      ok = plc_sim_ep_take(e, &fl, &calm, map, &f, &tau);
      plc_flow_free(&fl);
    }
    free(calm.state);
    free(calm.rest);
    walked = ok ? plc_sim_ep_walk(e, &m, tau, stamp, rounds + 1, &to) : 0;
    ok = walked && (walked == 2 || m.first > f); /* every round moves on */
    f = m.first, x = m.x;
  }
  for (int g = 0; g < m.ng; g++)
    free(m.se[g]);
  free(m.se);
  free(m.len);
  free(map);
  if (!ok) {
    plc_sim_ep_stat.fallbacks++;
    plc_sim_ep_free(e);
    return 0;
  }
  if (rounds > 1)
    plc_sim_ep_stat.multi++;
  for (int i = 0; i < l->n; i++) /* every end in the last units */
    if (e->run[i])
      e->end[i] = plc_sim_ep_v(e, e->end, i);
  return 1;
}

/* The latest end of the ops of a run by episodes (those counts is true
 * for, when given) into out, or t0 when none ran (each starts no earlier). */
static void plc_sim_ep_last(mpq_t out, const plc_sim_ep *e, mpq_srcptr t0,
                            plc_sim_counts_fn *counts)
{
  plc_si last = -1;
  for (int i = 0; i < e->n; i++)
    if (e->run[i] && e->end[i] > last && (!counts || counts(&e->l->ops[i])))
      last = e->end[i];
  if (last < 0)
    mpq_set(out, t0);
  else
    plc_s64_set(out, last, e->d * e->m);
}

/* The replay on rationals of a run with links shared (ends per op: those
 * of l's ops that run), ends cleared. */
static void plc_sim_replay(plc_sim *s, const plc_ir_list *l, int nstreams, int with_once,
                           mpq_srcptr t0, mpq_t *ends)
{
  s->shared = 1;
  plc_sim_rational(s, l, nstreams, with_once, t0, ends);
  for (int i = 0; i < l->n; i++)
    mpq_clear(ends[i]);
  free(ends);
}

/* plc_sim_run_shared from h by episodes: 0 when they cannot run it. */
static int plc_sim_run_episodes(plc_sim *s, const plc_ir_list *l, int nstreams, int with_once,
                                mpq_srcptr t0, const plc_sim_net *net, const plc_sim_head *h)
{
  plc_sim_ep e;
  if (!plc_sim_episodes(&e, l, nstreams, with_once, net, h))
    return 0;
  plc_s64_given g = {e.m, e.end};
  if (!plc_s64_run(s, l, nstreams, with_once, t0, &g)) {
    mpq_t *ends = plc_xmalloc(((size_t)l->n + 1) * sizeof *ends);
    for (int i = 0; i < l->n; i++) {
      mpq_init(ends[i]);
      if (e.run[i])
        plc_s64_set(ends[i], e.end[i], e.d * e.m);
    }
    plc_sim_replay(s, l, nstreams, with_once, t0, ends);
  }
  plc_sim_ep_free(&e);
  return 1;
}

/* plc_sim_run with links shared: the times from the flow (from h when
 * given), then the same charging, windows and unions, on machine integers
 * when they fit, else on rationals. */
static void plc_sim_run_shared(plc_sim *s, const plc_ir_list *l, int nstreams, int with_once,
                               mpq_srcptr t0, const plc_sim_net *net, const plc_sim_head *h)
{
  if (h && plc_sim_run_episodes(s, l, nstreams, with_once, t0, net, h))
    return;
  plc_flow f;
  int *map = plc_xmalloc(((size_t)l->n + 1) * sizeof *map);
  plc_si *end = plc_xmalloc(((size_t)l->n + 1) * sizeof *end);
  mpz_t den;
  mpz_init(den);
  plc_sim_flow(&f, l, nstreams, with_once, t0, net, map, den, h);
  plc_s64_given g = {0, end};
  if (!h || !plc_sim_int_ends(l, &f, map, h, end, &g.mul) ||
      !plc_s64_run(s, l, nstreams, with_once, t0, &g)) {
    mpq_t *ends = plc_xmalloc(((size_t)l->n + 1) * sizeof *ends);
    for (int i = 0; i < l->n; i++) {
      mpq_init(ends[i]);
      if (map[i] != -1)
        plc_sim_shared_end(ends[i], &f, map, i, h, den);
    }
    plc_sim_replay(s, l, nstreams, with_once, t0, ends);
  }
  free(map);
  free(end);
  mpz_clear(den);
  plc_flow_free(&f);
}

/* The op of l whose flow op ended last among those counts is true for
 * (all when NULL), or -1: the flow ends its ops in time order. */
static int plc_sim_flow_latest(const plc_ir_list *l, const plc_flow *f, const int *map,
                               plc_sim_counts_fn *counts)
{
  int *op_of = plc_xmalloc(((size_t)f->n + 1) * sizeof *op_of), last = -1;
  for (int i = 0; i < l->n; i++)
    if (map[i] >= 0)
      op_of[map[i]] = i;
  for (int k = f->nended; k-- > 0 && last < 0;)
    if (!counts || counts(&l->ops[op_of[f->order[k]]]))
      last = op_of[f->order[k]];
  free(op_of);
  return last;
}

/* The latest end of a shared run's ops (those counts is true for, when
 * given) into out: h's for the ops that ended before transfers met, the
 * flow's for the others. */
static void plc_sim_flow_last(mpq_t out, const plc_ir_list *l, const plc_flow *f, const int *map,
                              const plc_sim_head *h, const mpz_t den, mpq_srcptr t0,
                              plc_sim_counts_fn *counts)
{
  int last = plc_sim_flow_latest(l, f, map, counts), early = -1; /* and of h */
  /* the flow starts when transfers first met, by when every op left to
   * h had ended: an op of the flow that counts ends no earlier */
  for (int i = 0; h && last < 0 && i < l->n; i++)
    if (map[i] == -2 && (!counts || counts(&l->ops[i])) &&
        (early < 0 || h->end[i] > h->end[early]))
      early = i;
  mpq_t end;
  mpq_init(end);
  mpq_set(out, t0);
  for (int k = 0; k < 2; k++) {
    int i = k ? early : last;
    if (i < 0)
      continue;
    plc_sim_shared_end(end, f, map, i, h, den);
    if (mpq_cmp(end, out) > 0)
      mpq_set(out, end);
  }
  mpq_clear(end);
}

/* plc_sim_ends once plc_s64_end (given may and h, the head of the run
 * when two transfers met, or NULL) could not: the flow's ends when links
 * may be shared, else a run on rationals. */
static void plc_sim_ends_rest(mpq_t all, mpq_t out, const plc_ir_list *l, int nstreams,
                              int with_once, mpq_srcptr t0, plc_sim_counts_fn *counts,
                              const plc_sim_net *net, int may, const plc_sim_head *h)
{
  plc_sim_ep e;
  if (may && h && plc_sim_episodes(&e, l, nstreams, with_once, net, h)) {
    if (all)
      plc_sim_ep_last(all, &e, t0, NULL);
    if (out)
      plc_sim_ep_last(out, &e, t0, counts);
    plc_sim_ep_free(&e);
    return;
  }
  if (may) { /* the flow's ends, and the head's */
    plc_flow f;
    int *map = plc_xmalloc(((size_t)l->n + 1) * sizeof *map);
    mpz_t den;
    mpz_init(den);
    plc_sim_flow(&f, l, nstreams, with_once, t0, net, map, den, h);
    if (all)
      plc_sim_flow_last(all, l, &f, map, h, den, t0, NULL);
    if (out)
      plc_sim_flow_last(out, l, &f, map, h, den, t0, counts);
    mpz_clear(den);
    free(map);
    plc_flow_free(&f);
    return;
  }
  plc_sim s;
  plc_sim_run(&s, l, nstreams, with_once, t0, NULL);
  plc_sim_times(&s);
  for (int k = 0; k < 2; k++) {
    mpq_ptr o = k ? out : all;
    if (!o)
      continue;
    mpq_set(o, t0);
    for (int i = 0; i < l->n; i++)
      if (s.ops[i].ran && (!k || !counts || counts(&l->ops[i])) && mpq_cmp(s.ops[i].end, o) > 0)
        mpq_set(o, s.ops[i].end);
  }
  plc_sim_free(&s);
}

void plc_sim_ends(mpq_t all, mpq_t out, const plc_ir_list *l, int nstreams, int with_once,
                  mpq_srcptr t0, plc_sim_counts_fn *counts, const plc_sim_net *net)
{
  int may = plc_sim_may_share(l, with_once, net);
  plc_sim_head head = {0};
  if (plc_s64_end(all, out, l, nstreams, with_once, t0, counts, may ? net : NULL, &head, NULL))
    return; /* no two transfers met on a link: sharing changes nothing */
  plc_sim_ends_rest(all, out, l, nstreams, with_once, t0, counts, net, may,
                    head.mem ? &head : NULL);
  free(head.mem);
}

_Thread_local long plc_sim_once_merged;

void plc_sim_ends_once(mpq_t all0, mpq_t out0, mpq_t out1, const plc_ir_list *l, int nstreams,
                       mpq_srcptr t0, plc_sim_counts_fn *counts, const plc_sim_net *net)
{
  int any = 0;
  for (int i = 0; i < l->n && !any; i++)
    any = l->ops[i].once;
  if (!any) { /* one run, the same with them or without */
    plc_sim_ends(all0, out0 ? out0 : out1, l, nstreams, 0, t0, counts, net);
    if (out0 && out1)
      mpq_set(out1, out0);
    return;
  }
  int may = plc_sim_may_share(l, 1, net);
  plc_sim_head head = {0};
  plc_s64_once o = {.all = all0, .out = out0,
                    .net = plc_sim_may_share(l, 0, net) ? net : NULL};
  int ok = plc_s64_end(NULL, out1, l, nstreams, 1, t0, counts, may ? net : NULL, &head, &o);
  if (o.met) { /* its transfers met: shared from its head on (its times are in it) */
    plc_sim_ends_rest(all0, out0, l, nstreams, 0, t0, counts, net, 1, &o.head);
    free(o.head.mem);
    o.done = 1;
  }
  if (!ok)
    plc_sim_ends_rest(NULL, out1, l, nstreams, 1, t0, counts, net, may,
                      head.mem ? &head : NULL);
  free(head.mem);
  if (!o.done) /* the once ops may have changed the others' times: on its own */
    plc_sim_ends(all0, out0, l, nstreams, 0, t0, counts, net);
  else
    plc_sim_once_merged++;
}

void plc_sim_end_in(mpq_t out, const plc_sim *s, const plc_ir_list *l, mpq_srcptr t0,
                    plc_sim_counts_fn *counts)
{
  const struct plc_sim_lazy *z = s->lazy;
  if (z) { /* on its integers: t0 is at most every op's start */
    plc_si end = -1;
    for (int i = 0; i < l->n; i++)
      if (s->ops[i].ran && (!counts || counts(&l->ops[i])) && z->end[i] > end)
        end = z->end[i];
    if (end >= 0) {
      plc_s64_set(out, end, z->d);
      if (mpq_cmp(out, t0) >= 0)
        return;
    }
    mpq_set(out, t0);
    return;
  }
  mpq_set(out, t0);
  for (int i = 0; i < l->n; i++)
    if (s->ops[i].ran && (!counts || counts(&l->ops[i])) && mpq_cmp(s->ops[i].end, out) > 0)
      mpq_set(out, s->ops[i].end);
}

void plc_sim_end_of(mpq_t out, const plc_ir_list *l, int nstreams, int with_once,
                    mpq_srcptr t0, plc_sim_counts_fn *counts, const plc_sim_net *net)
{
  plc_sim_ends(NULL, out, l, nstreams, with_once, t0, counts, net);
}

void plc_sim_end(mpq_t out, const plc_ir_list *l, int nstreams, int with_once, mpq_srcptr t0,
                 const plc_sim_net *net)
{
  plc_sim_end_of(out, l, nstreams, with_once, t0, NULL, net);
}

void plc_sim_run(plc_sim *s, const plc_ir_list *l, int nstreams, int with_once, mpq_srcptr t0,
                 const plc_sim_net *net)
{
  plc_sim_init(s, l);
  int may = plc_sim_may_share(l, with_once, net);
  plc_sim_head head = {0};
  if (plc_s64_run(s, l, nstreams, with_once, t0, NULL)) {
    if (!may || !plc_sim_lazy_overlap(s, l, nstreams, net, &head))
      return; /* no two transfers met on a link: sharing changes nothing */
    plc_sim_free(s);
    plc_sim_init(s, l);
  }
  if (may) {
    plc_sim_run_shared(s, l, nstreams, with_once, t0, net, head.mem ? &head : NULL);
    free(head.mem);
    return;
  }
  plc_sim_rational(s, l, nstreams, with_once, t0, NULL);
}

const char *plc_why_text(plc_why w)
{
  static const char *const text[PLC_WHY_COUNT] = {
    "hidden", "on the compute stream", "consumer follows at once", "window too short",
    "queued behind another op", "no consumer", "an op queued behind it was waited for",
    "slowed by sharing its link",
  };
  return text[w];
}
