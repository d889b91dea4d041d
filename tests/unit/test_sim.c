/* test_sim.c - CUnit tests of the stream interpreter: hand-checked
 * schedules, and properties over many random op lists.
 *
 * Properties (DESIGN.md section 4): exposure is never negative and never
 * above the collective's time; the compute stream's makespan is exactly the
 * sum of its ops' durations plus the charged stalls; making any op faster
 * never makes the makespan longer; with collectives 1000 times faster the
 * makespan approaches the compute alone; the interpreter on machine
 * integers gives exactly what it gives on rationals. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "cu_main.h"
#include "ir.h"
#include "sim.h"

static plc_arena *ar;

/* Append an op: kind, stream, time in ms (as p/q), deps. */
static int add(plc_ir_list *l, plc_opk kind, int stream, long num, long den, int ndeps, ...)
{
  plc_ir_op op = {0};
  op.name = "op";
  op.kind = kind;
  op.stream = stream;
  op.useful = kind == PLC_OPK_COMPUTE;
  op.time = plc_arena_mpq(ar);
  op.flops = plc_arena_mpq(ar);
  op.size = plc_arena_mpq(ar);
  mpq_set_si(op.time, num, (unsigned long)den);
  mpq_canonicalize(op.time);
  op.deps = plc_arena_alloc(ar, (size_t)(ndeps + 1) * sizeof(int));
  va_list ap;
  va_start(ap, ndeps);
  for (int i = 0; i < ndeps; i++)
    op.deps[i] = va_arg(ap, int);
  va_end(ap);
  op.ndeps = ndeps;
  return plc_ir_push(ar, l, &op);
}

static int eq_si(mpq_srcptr v, long n) { return mpq_cmp_si(v, n, 1) == 0; }

/* The article's four-step test on a hand schedule (times in ms):
 * compute A (10) on the compute stream; collective C (6) on comm after A;
 * compute B (3) independent of C; compute D (5) consumes C.
 * C runs 10..16, B 10..13, D waits 13..16: 3 exposed, window 3 (B). */
static void test_window_and_exposure(void)
{
  plc_ir_list l = {0};
  mpq_t zero;
  mpq_init(zero);
  int a = add(&l, PLC_OPK_COMPUTE, 0, 10, 1, 0);
  int c = add(&l, PLC_OPK_ALL_REDUCE, 1, 6, 1, 1, a);
  add(&l, PLC_OPK_COMPUTE, 0, 3, 1, 0);
  int d = add(&l, PLC_OPK_COMPUTE, 0, 5, 1, 1, c);
  plc_sim s;
  plc_sim_run(&s, &l, 2, 0, zero, NULL);
  plc_sim_times(&s);
  CU_ASSERT(eq_si(s.ops[c].start, 10));
  CU_ASSERT(eq_si(s.ops[c].exposed, 3));
  CU_ASSERT(eq_si(s.ops[c].window, 3));
  CU_ASSERT_EQUAL(s.ops[c].consumer, d);
  CU_ASSERT_EQUAL(s.ops[c].why, PLC_WHY_SHORT);
  CU_ASSERT(eq_si(s.makespan, 21)); /* 10 + 3 + 3 stall + 5 */
  plc_sim_free(&s);
  mpq_clear(zero);
}

/* A collective on the compute stream is all exposed; a queued one says so. */
static void test_same_stream_and_queue(void)
{
  plc_ir_list l = {0};
  mpq_t zero;
  mpq_init(zero);
  int a = add(&l, PLC_OPK_COMPUTE, 0, 4, 1, 0);
  int c1 = add(&l, PLC_OPK_ALL_REDUCE, 0, 2, 1, 1, a);
  int c2 = add(&l, PLC_OPK_ALL_TO_ALL, 1, 5, 1, 0);
  int c3 = add(&l, PLC_OPK_ALL_TO_ALL, 1, 5, 1, 0); /* waits for c2 on stream 1 */
  add(&l, PLC_OPK_COMPUTE, 0, 1, 1, 1, c3);
  plc_sim s;
  plc_sim_run(&s, &l, 2, 0, zero, NULL);
  plc_sim_times(&s);
  CU_ASSERT(eq_si(s.ops[c1].exposed, 2));
  CU_ASSERT_EQUAL(s.ops[c1].why, PLC_WHY_SAME_STREAM);
  CU_ASSERT(eq_si(s.ops[c3].start, 5));
  CU_ASSERT_EQUAL(s.ops[c3].queued_behind, c2);
  CU_ASSERT_EQUAL(s.ops[c3].why, PLC_WHY_QUEUED);
  CU_ASSERT(eq_si(s.ops[c3].exposed, 4)); /* compute free at 6, c3 ends at 10 */
  CU_ASSERT(eq_si(s.makespan, 11));
  plc_sim_free(&s);
  mpq_clear(zero);
}

/* Streams other than compute bound the list too.  Only collectives, on a
 * comm stream: r1 (3) then r2 (4) queued behind it, nothing on the compute
 * stream: the list takes 7 (it took 0), all of it exposure.  With compute
 * a (2) on the compute stream and r (5) after it on comm, no consumer: 7,
 * the 5 past the compute charged to r. */
static void test_other_streams_bound(void)
{
  plc_ir_list l = {0}, m = {0};
  mpq_t zero;
  mpq_init(zero);
  int r1 = add(&l, PLC_OPK_ALL_REDUCE, 1, 3, 1, 0);
  int r2 = add(&l, PLC_OPK_REDUCE_SCATTER, 1, 4, 1, 0);
  plc_sim s;
  plc_sim_run(&s, &l, 2, 0, zero, NULL);
  plc_sim_times(&s);
  CU_ASSERT(eq_si(s.makespan, 7));
  CU_ASSERT(eq_si(s.exposed, 7));
  CU_ASSERT(eq_si(s.ops[r1].exposed, 3));
  CU_ASSERT(eq_si(s.ops[r2].exposed, 4));
  CU_ASSERT_EQUAL(s.ops[r1].why, PLC_WHY_NO_CONSUMER);
  CU_ASSERT_EQUAL(s.ops[r2].why, PLC_WHY_QUEUED);
  plc_sim_free(&s);
  int a = add(&m, PLC_OPK_COMPUTE, 0, 2, 1, 0);
  int r = add(&m, PLC_OPK_ALL_GATHER, 1, 5, 1, 1, a);
  plc_sim_run(&s, &m, 2, 0, zero, NULL);
  plc_sim_times(&s);
  CU_ASSERT(eq_si(s.makespan, 7));
  CU_ASSERT(eq_si(s.busy, 2));
  CU_ASSERT(eq_si(s.ops[r].exposed, 5));
  plc_sim_free(&s);
  mpq_clear(zero);
}

/* Compute on two streams shares the device: compute ops run one at a time
 * in program order.  a (10) on the compute stream from 0; b (6) on another
 * stream waits for the device: 10..16; c (4) after b on that stream:
 * 16..20; d (5) on the compute stream, free at 10, waits for the device
 * until 20: 20..25.  Compute 25 in all (the union), 15 of it on the compute
 * stream; the 10 that d waited is compute on another stream (stall_other),
 * held by b then c; the list takes 25. */
static void test_compute_union(void)
{
  plc_ir_list l = {0};
  mpq_t zero;
  mpq_init(zero);
  add(&l, PLC_OPK_COMPUTE, 0, 10, 1, 0);
  int b = add(&l, PLC_OPK_COMPUTE, 1, 6, 1, 0);
  int c = add(&l, PLC_OPK_COMPUTE, 1, 4, 1, 1, b);
  int d = add(&l, PLC_OPK_COMPUTE, 0, 5, 1, 0);
  plc_sim s;
  plc_sim_run(&s, &l, 2, 0, zero, NULL);
  plc_sim_times(&s);
  CU_ASSERT(eq_si(s.ops[b].start, 10));
  CU_ASSERT(eq_si(s.ops[c].start, 16));
  CU_ASSERT(eq_si(s.ops[d].start, 20));
  CU_ASSERT_EQUAL(s.ops[d].queued_behind, c);
  CU_ASSERT(eq_si(s.all_compute, 25));
  CU_ASSERT(eq_si(s.useful, 25));
  CU_ASSERT(eq_si(s.compute, 15)); /* on the compute stream: 10 + 5 */
  CU_ASSERT(eq_si(s.stall_other, 10));
  CU_ASSERT(eq_si(s.makespan, 25));
  plc_sim_free(&s);
  mpq_clear(zero);
}

/* A small deterministic generator (xorshift), so failures reproduce. */
static unsigned long rng_state = 88172645463325252UL;
static unsigned long rnd(unsigned long n)
{
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state % n;
}

static void random_list(plc_ir_list *l, int n, int nstreams)
{
  memset(l, 0, sizeof *l);
  for (int i = 0; i < n; i++) {
    plc_opk kind = rnd(2) ? PLC_OPK_COMPUTE : (plc_opk)(1 + rnd(PLC_OPK_COUNT - 1));
    int stream = kind == PLC_OPK_COMPUTE ? (rnd(5) ? 0 : 1 + (int)rnd(nstreams - 1))
                                         : (int)rnd(nstreams);
    int nd = i == 0 ? 0 : (int)rnd(3);
    int d[3] = {0, 0, 0};
    for (int k = 0; k < nd; k++)
      d[k] = (int)rnd((unsigned long)i);
    add(l, kind, stream, 1 + (long)rnd(50), 1 + (long)rnd(7), nd, d[0], d[1], d[2]);
  }
}

static void check_invariants(const plc_sim *s, const plc_ir_list *l, int *bad)
{
  mpq_t sum;
  mpq_init(sum);
  for (int i = 0; i < l->n; i++) {
    if (mpq_sgn(s->ops[i].exposed) < 0 || mpq_cmp(s->ops[i].exposed, l->ops[i].time) > 0)
      (*bad)++;
    /* an op that ran took its own time, from a start no earlier than it
     * was ready (so the times are there: plc_sim_times) */
    mpq_sub(sum, s->ops[i].end, s->ops[i].start);
    if (s->ops[i].ran && (!mpq_equal(sum, l->ops[i].time) ||
                          mpq_cmp(s->ops[i].start, s->ops[i].ready) < 0))
      (*bad)++;
  }
  mpq_add(sum, s->busy, s->exposed);
  mpq_add(sum, sum, s->stall_other);
  /* busy already counts collectives on the compute stream, which are also
   * their own exposure: take them out once */
  for (int i = 0; i < l->n; i++)
    if (l->ops[i].stream == 0 && l->ops[i].kind != PLC_OPK_COMPUTE)
      mpq_sub(sum, sum, l->ops[i].time);
  if (!mpq_equal(sum, s->makespan))
    (*bad)++;
  /* compute ops share the device: their times add up to the union of
   * compute time, which the list's time bounds (so busy <= 100%) */
  mpq_set_ui(sum, 0, 1);
  for (int i = 0; i < l->n; i++)
    if (l->ops[i].kind == PLC_OPK_COMPUTE)
      mpq_add(sum, sum, l->ops[i].time);
  if (!mpq_equal(sum, s->all_compute) || mpq_cmp(sum, s->makespan) > 0)
    (*bad)++;
  /* ... because no two of them that take time overlap: in program order
   * each starts no earlier than the one before ends (sim.c computes the
   * union as that sum) */
  int last = -1;
  for (int i = 0; i < l->n; i++) {
    if (!s->ops[i].ran || l->ops[i].kind != PLC_OPK_COMPUTE || mpq_sgn(l->ops[i].time) == 0)
      continue;
    if (last >= 0 && mpq_cmp(s->ops[i].start, s->ops[last].end) < 0)
      (*bad)++;
    last = i;
  }
  mpq_clear(sum);
}

static void test_random_invariants(void)
{
  int bad = 0;
  mpq_t zero;
  mpq_init(zero);
  for (int trial = 0; trial < 400; trial++) {
    plc_ir_list l;
    random_list(&l, 1 + (int)rnd(60), 4);
    plc_sim s;
    plc_sim_run(&s, &l, 4, 0, zero, NULL);
    plc_sim_times(&s);
    check_invariants(&s, &l, &bad);
    plc_sim_free(&s);
  }
  CU_ASSERT_EQUAL(bad, 0);
  mpq_clear(zero);
}

/* The stall parts drawn by timelines add up to what the run charged: each
 * collective's parts to its exposure, the others to stall_other, and every
 * part lies within the op it is charged to. */
typedef struct parts_sum {
  const plc_sim *s;
  mpq_t *got;
  mpq_t other;
  int outside;
} parts_sum;

static void add_part(void *ctx, int op, mpq_srcptr lo, mpq_srcptr hi)
{
  parts_sum *p = ctx;
  mpq_t d;
  mpq_init(d);
  mpq_sub(d, hi, lo);
  if (mpq_sgn(d) <= 0)
    p->outside++;
  if (op >= 0 && (mpq_cmp(lo, p->s->ops[op].start) < 0 || mpq_cmp(hi, p->s->ops[op].end) > 0))
    p->outside++;
  mpq_add(op >= 0 ? p->got[op] : p->other, op >= 0 ? p->got[op] : p->other, d);
  mpq_clear(d);
}

static void check_parts(const plc_sim *s, const plc_ir_list *l, mpq_srcptr t0, int *bad)
{
  parts_sum p;
  p.s = s;
  p.got = malloc(((size_t)l->n + 1) * sizeof(mpq_t));
  p.outside = 0;
  mpq_init(p.other);
  for (int i = 0; i < l->n; i++)
    mpq_init(p.got[i]);
  plc_sim_stalls(s, l, t0, add_part, &p);
  for (int i = 0; i < l->n; i++) {
    int coll = l->ops[i].kind != PLC_OPK_COMPUTE;
    if (coll && l->ops[i].stream != 0 && !mpq_equal(p.got[i], s->ops[i].exposed))
      (*bad)++;
    if (!coll)
      mpq_add(p.other, p.other, p.got[i]);
    mpq_clear(p.got[i]);
  }
  if (!mpq_equal(p.other, s->stall_other) || p.outside)
    (*bad)++;
  mpq_clear(p.other);
  free(p.got);
}

static void test_random_stall_parts(void)
{
  int bad = 0;
  mpq_t t0;
  mpq_init(t0);
  for (int trial = 0; trial < 300; trial++) {
    plc_ir_list l;
    random_list(&l, 1 + (int)rnd(60), 4);
    mpq_set_si(t0, (long)rnd(5), 3);
    mpq_canonicalize(t0); /* GMP's functions take canonical rationals */
    plc_sim s;
    plc_sim_run(&s, &l, 4, 0, t0, NULL);
    plc_sim_times(&s);
    check_parts(&s, &l, t0, &bad);
    plc_sim_free(&s);
  }
  CU_ASSERT_EQUAL(bad, 0);
  mpq_clear(t0);
}

/* Faster collectives (a higher bandwidth) never lengthen the makespan, and
 * at 1000x they leave at most 1/1000 of their time over the compute. */
static void test_random_faster(void)
{
  int worse = 0, far = 0;
  mpq_t zero, k, bound, comm;
  mpq_inits(zero, k, bound, comm, NULL);
  mpq_set_ui(k, 1, 1000);
  for (int trial = 0; trial < 300; trial++) {
    plc_ir_list l;
    random_list(&l, 1 + (int)rnd(60), 3);
    plc_sim slow, fast, faster;
    plc_sim_run(&slow, &l, 3, 0, zero, NULL);
    plc_sim_times(&slow);
    mpq_set_ui(comm, 0, 1);
    for (int i = 0; i < l.n; i++)
      if (l.ops[i].kind != PLC_OPK_COMPUTE) {
        mpq_add(comm, comm, l.ops[i].time);
        mpq_set_si(bound, 1 + (long)rnd(4), 5); /* scale by 1/5 .. 4/5 */
        mpq_mul(l.ops[i].time, l.ops[i].time, bound);
      }
    plc_sim_run(&fast, &l, 3, 0, zero, NULL);
    plc_sim_times(&fast);
    if (mpq_cmp(fast.makespan, slow.makespan) > 0)
      worse++;
    for (int i = 0; i < l.n; i++)
      if (l.ops[i].kind != PLC_OPK_COMPUTE)
        mpq_mul(l.ops[i].time, l.ops[i].time, k);
    plc_sim_run(&faster, &l, 3, 0, zero, NULL);
    plc_sim_times(&faster);
    /* compute-only schedule length plus what the remaining comm can add */
    mpq_mul(comm, comm, k);
    mpq_add(bound, faster.all_compute, comm);
    if (mpq_cmp(faster.makespan, bound) > 0)
      far++;
    plc_sim_free(&slow);
    plc_sim_free(&fast);
    plc_sim_free(&faster);
  }
  CU_ASSERT_EQUAL(worse, 0);
  CU_ASSERT_EQUAL(far, 0);
  mpq_clears(zero, k, bound, comm, NULL);
}

/* Do two runs of a list agree on every figure (exactly)? */
static int same_sim(const plc_sim *a, const plc_sim *b)
{
  int ok = a->n == b->n && mpq_equal(a->makespan, b->makespan) && mpq_equal(a->end, b->end) &&
           mpq_equal(a->busy, b->busy) && mpq_equal(a->compute, b->compute) &&
           mpq_equal(a->all_compute, b->all_compute) && mpq_equal(a->useful, b->useful) &&
           mpq_equal(a->exposed, b->exposed) && mpq_equal(a->stall_other, b->stall_other);
  for (int i = 0; ok && i < a->n; i++) {
    const plc_sim_op *x = &a->ops[i], *y = &b->ops[i];
    ok = mpq_equal(x->ready, y->ready) && mpq_equal(x->start, y->start) &&
         mpq_equal(x->end, y->end) && mpq_equal(x->exposed, y->exposed) &&
         mpq_equal(x->window, y->window) && x->consumer == y->consumer &&
         x->queued_behind == y->queued_behind && x->why == y->why && x->ran == y->ran;
  }
  return ok;
}

/* The interpreter on machine integers over a common denominator gives
 * exactly what it gives on rationals (plc_sim_no_fast), `once` ops in or
 * out, from any start, and plc_sim_end the end (and makespan) of both
 * (the integer path leaves the ops' times to plc_sim_times); also when a
 * time's denominator is too large for integers (3^81 > 2^128: the
 * rational path, whichever is asked) or for 64-bit ones (3^50: 128-bit
 * integers where the compiler has them). */
static void test_random_integers(void)
{
  int bad = 0, nlazy = 0;
  mpq_t t0;
  mpq_init(t0);
  for (int trial = 0; trial < 400; trial++) {
    plc_ir_list l;
    random_list(&l, 1 + (int)rnd(60), 4);
    for (int i = 0; i < l.n; i++)
      l.ops[i].once = rnd(6) == 0;
    if (trial % 10 == 0 || trial % 10 == 5) { /* past 128 bits; past 64 only */
      mpz_ui_pow_ui(mpq_denref(l.ops[0].time), 3, trial % 10 ? 50 : 81);
      mpq_canonicalize(l.ops[0].time);
    }
    mpq_set_si(t0, (long)rnd(5), 1 + rnd(3));
    mpq_canonicalize(t0);
    int once = (int)rnd(2);
    plc_sim a, b;
    plc_sim_run(&a, &l, 4, once, t0, NULL);
    nlazy += a.lazy != NULL; /* on integers the op times wait for plc_sim_times */
    plc_sim_times(&a);
    bad += a.lazy != NULL;
    plc_sim_no_fast = 1;
    plc_sim_run(&b, &l, 4, once, t0, NULL);
    bad += b.lazy != NULL; /* on rationals they are set at once */
    plc_sim_times(&b);
    mpq_t e;
    mpq_init(e);
    plc_sim_end(e, &l, 4, once, t0, NULL); /* on rationals */
    bad += !mpq_equal(e, b.end) || !mpq_equal(e, b.makespan);
    plc_sim_no_fast = 0;
    plc_sim_end(e, &l, 4, once, t0, NULL);
    bad += !mpq_equal(e, b.end);
    mpq_clear(e);
    bad += !same_sim(&a, &b);
    plc_sim_free(&a);
    plc_sim_free(&b);
  }
  CU_ASSERT_EQUAL(bad, 0);
  CU_ASSERT(nlazy > 0); /* the integer path ran, and left its times to plc_sim_times */
  mpq_clear(t0);
}

/* ---- links shared ---------------------------------------------------------- */

/* One link for every dimension, no latency: every transfer shares it. */
static plc_sim_net one_link(int share)
{
  plc_sim_net net;
  memset(&net, 0, sizeof net);
  net.share = share;
  net.nlinks = 1;
  return net;
}

/* Two all-gathers on streams 1 and 2, 3 ms each alone on one link, beside
 * 4 ms of compute; then 1 ms that needs all three (tests/golden/
 * step-sharing.plan's forward).  Dedicated: the gathers end at 3, the
 * compute at 4, d runs 4..5: 5 ms, nothing exposed.  Shared: both gathers
 * progress at half speed and end at 6; d waits 6 - 4 = 2 ms, charged to
 * the first gather (the dependency that finished last, the first on a
 * tie), whose window (4 ms of compute before d) would have hidden its 3
 * ms alone: "slowed by sharing its link"; it took 6 ms. */
static void test_shared_gathers(void)
{
  plc_ir_list l = {0};
  mpq_t zero, e, took;
  mpq_inits(zero, e, took, NULL);
  int c = add(&l, PLC_OPK_COMPUTE, 0, 4, 1, 0);
  int g1 = add(&l, PLC_OPK_ALL_GATHER, 1, 3, 1, 0);
  int g2 = add(&l, PLC_OPK_ALL_GATHER, 2, 3, 1, 0);
  add(&l, PLC_OPK_COMPUTE, 0, 1, 1, 3, c, g1, g2);
  plc_sim_net on = one_link(1), off = one_link(0);
  plc_sim s;
  plc_sim_run(&s, &l, 3, 0, zero, &on);
  CU_ASSERT(s.shared);
  CU_ASSERT(eq_si(s.makespan, 7));
  CU_ASSERT(eq_si(s.ops[g1].exposed, 2));
  CU_ASSERT(eq_si(s.ops[g2].exposed, 0));
  CU_ASSERT(eq_si(s.exposed, 2));
  CU_ASSERT(eq_si(s.compute, 5));
  CU_ASSERT_EQUAL(s.ops[g1].why, PLC_WHY_SHARED);
  CU_ASSERT(eq_si(s.ops[g1].window, 4));
  plc_sim_took(&s, &l, g1, took);
  CU_ASSERT(eq_si(took, 6));
  plc_sim_free(&s);
  plc_sim_end(e, &l, 3, 0, zero, &on);
  CU_ASSERT(eq_si(e, 7));
  plc_sim_run(&s, &l, 3, 0, zero, &off);
  CU_ASSERT(!s.shared);
  CU_ASSERT(eq_si(s.makespan, 5));
  CU_ASSERT(eq_si(s.exposed, 0));
  plc_sim_free(&s);
  plc_sim_end(e, &l, 3, 0, zero, &off);
  CU_ASSERT(eq_si(e, 5));
  mpq_clears(zero, e, took, NULL);
}

/* Over random lists whose transfers fall on two links: sharing never makes
 * a list shorter (every order is fixed, and no op takes less than its
 * time) nor longer than all its ops one after the other; each op took at
 * least its time from when it was ready; exposure stays within what an op
 * took; the figures add up to the makespan; plc_sim_end gives the same
 * end; and with sharing off the run is the one without links.  The flow
 * taken up where the run on integers first had two transfers meet gives
 * exactly what the flow of the whole list gives (plc_sim_no_fast). */
static void test_random_shared(void)
{
  int bad = 0, shared = 0;
  mpq_t zero, sum, took, e;
  mpq_inits(zero, sum, took, e, NULL);
  plc_sim_net on = one_link(1), off = one_link(0);
  on.nlinks = off.nlinks = 2;
  for (int d = 0; d < PLC_PD_COUNT; d++)
    on.link[d] = off.link[d] = d % 2;
  for (int trial = 0; trial < 300; trial++) {
    plc_ir_list l;
    random_list(&l, 1 + (int)rnd(40), 4);
    for (int i = 0; i < l.n; i++)
      l.ops[i].dim = (plc_pdim)rnd(3);
    plc_sim a, b, c;
    plc_sim_run(&a, &l, 4, 0, zero, NULL);
    plc_sim_run(&b, &l, 4, 0, zero, &on);
    plc_sim_run(&c, &l, 4, 0, zero, &off);
    plc_sim_times(&a);
    plc_sim_times(&b);
    plc_sim_times(&c);
    shared += b.shared;
    mpq_set_ui(sum, 0, 1);
    for (int i = 0; i < l.n; i++)
      mpq_add(sum, sum, l.ops[i].time);
    bad += mpq_cmp(b.makespan, a.makespan) < 0 || mpq_cmp(b.makespan, sum) > 0;
    bad += !mpq_equal(c.makespan, a.makespan) || !mpq_equal(c.exposed, a.exposed);
    mpq_add(sum, b.busy, b.exposed);
    mpq_add(sum, sum, b.stall_other);
    for (int i = 0; i < l.n; i++) {
      plc_sim_took(&b, &l, i, took);
      bad += mpq_cmp(took, l.ops[i].time) < 0 || mpq_cmp(b.ops[i].start, b.ops[i].ready) < 0;
      bad += mpq_sgn(b.ops[i].exposed) < 0 || mpq_cmp(b.ops[i].exposed, took) > 0;
      if (l.ops[i].stream == 0 && l.ops[i].kind != PLC_OPK_COMPUTE)
        mpq_sub(sum, sum, took); /* in busy and in its own exposure */
    }
    bad += !mpq_equal(sum, b.makespan);
    plc_sim_end(e, &l, 4, 0, zero, &on);
    bad += !mpq_equal(e, b.makespan);
    plc_sim whole; /* the flow over the whole list */
    plc_sim_no_fast = 1;
    plc_sim_run(&whole, &l, 4, 0, zero, &on);
    plc_sim_end(e, &l, 4, 0, zero, &on);
    plc_sim_no_fast = 0;
    bad += !mpq_equal(e, b.makespan) || !mpq_equal(whole.makespan, b.makespan) ||
           !mpq_equal(whole.exposed, b.exposed) || !mpq_equal(whole.stall_other, b.stall_other);
    for (int i = 0; i < l.n; i++)
      bad += !mpq_equal(whole.ops[i].end, b.ops[i].end) || whole.ops[i].why != b.ops[i].why;
    plc_sim_free(&whole);
    plc_sim_free(&a);
    plc_sim_free(&b);
    plc_sim_free(&c);
  }
  CU_ASSERT_EQUAL(bad, 0);
  CU_ASSERT(shared >= 100); /* most lists have two transfers on one link */
  mpq_clears(zero, sum, took, e, NULL);
}

/* ---- sums and the analysis's memo ---------------------------------------- */

static int is_transfer(const plc_ir_op *op) { return op->kind != PLC_OPK_COMPUTE; }

/* Per stream, what the ops that ran took, their windows and exposures,
 * op by op on rationals, into sums[3][4] (initialised). */
static void sums_by_hand(const plc_sim *s, const plc_ir_list *l, mpq_t sums[3][4])
{
  mpq_t took;
  mpq_init(took);
  for (int i = 0; i < l->n; i++) {
    if (!s->ops[i].ran)
      continue;
    int g = l->ops[i].stream;
    plc_sim_took(s, l, i, took);
    mpq_add(sums[0][g], sums[0][g], took);
    mpq_add(sums[1][g], sums[1][g], s->ops[i].window);
    mpq_add(sums[2][g], sums[2][g], s->ops[i].exposed);
  }
  mpq_clear(took);
}

/* plc_sim_add_sums, per stream, equals the sums op by op, from a run on
 * integers (the run's own integers, before plc_sim_times) and from one on
 * rationals, links shared or not.  Within a memo (plc_sim_memo_push) a
 * stage list's ends are those without, and plc_sim_memo_sum is the sum of
 * the times of its ops not `once` that count (0 for a list not the run's,
 * or on rationals). */
static void test_random_sums_and_memo(void)
{
  int bad = 0, lazy = 0, summed = 0;
  mpq_t zero, e, f, want, got[3][4], hand[3][4];
  mpq_inits(zero, e, f, want, NULL);
  plc_sim_net on = one_link(1);
  for (int trial = 0; trial < 200; trial++) {
    plc_ir_list l;
    random_list(&l, 1 + (int)rnd(40), 4);
    int once = (int)rnd(2);
    for (int i = 0; i < l.n; i++)
      l.ops[i].once = rnd(6) == 0;
    int group[64];
    for (int i = 0; i < l.n; i++)
      group[i] = l.ops[i].stream;
    mpq_ptr out[3][4];
    for (int k = 0; k < 3; k++)
      for (int g = 0; g < 4; g++) {
        mpq_inits(got[k][g], hand[k][g], NULL);
        out[k][g] = got[k][g];
      }
    plc_sim s;
    plc_sim_no_fast = trial % 4 == 3;
    plc_sim_run(&s, &l, 4, once, zero, trial % 2 ? &on : NULL);
    lazy += s.lazy != NULL;
    plc_sim_add_sums(&s, &l, group, 4, out[0], out[1], out[2]);
    sums_by_hand(&s, &l, hand);
    for (int k = 0; k < 3; k++)
      for (int g = 0; g < 4; g++) {
        bad += !mpq_equal(got[k][g], hand[k][g]);
        mpq_clears(got[k][g], hand[k][g], NULL);
      }
    plc_sim_free(&s);
    plc_ir_stage st = {.fwd = l};
    plc_ir_run run = {.stages = &st, .nstages = 1};
    plc_sim_end(e, &l, 4, once, zero, &on);
    plc_sim_memo memo;
    plc_sim_memo_push(&memo, &run);
    plc_sim_end(f, &st.fwd, 4, once, zero, &on);
    bad += !mpq_equal(e, f);
    mpq_set_ui(want, 0, 1);
    for (int i = 0; i < l.n; i++)
      if (!l.ops[i].once && is_transfer(&l.ops[i]))
        mpq_add(want, want, l.ops[i].time);
    int ok = plc_sim_memo_sum(f, &st.fwd, is_transfer);
    summed += ok;
    bad += ok == plc_sim_no_fast || (ok && !mpq_equal(f, want)) ||
           plc_sim_memo_sum(f, &l, is_transfer);
    plc_sim_memo_pop(&memo);
    plc_sim_no_fast = 0;
  }
  CU_ASSERT_EQUAL(bad, 0);
  CU_ASSERT(lazy > 0 && summed > 0); /* both paths ran */
  mpq_clears(zero, e, f, want, NULL);
}

static int on_stream0(const plc_ir_op *op) { return op->stream == 0; }

/* What the analysis reads from one run instead of running a list again:
 * plc_sim_end_in of a run (on integers, on rationals, links shared or
 * not, `once` ops in or out, from any start) is plc_sim_end_of of the
 * list, for every counts; a run inside a memo (which reads the memo's
 * durations in place) is the run outside; plc_sim_memo_sum with no counts
 * is the sum of the times of the ops not `once`; and a compute op's
 * exposure and window (a read-only 0, not rationals of its own) are 0. */
static void test_random_end_in(void)
{
  int bad = 0, lazy = 0, ro = 0;
  mpq_t t0, e, f, want;
  mpq_inits(t0, e, f, want, NULL);
  plc_sim_net on = one_link(1);
  plc_sim_counts_fn *counts[3] = {NULL, is_transfer, on_stream0};
  for (int trial = 0; trial < 300; trial++) {
    plc_ir_list l;
    random_list(&l, 1 + (int)rnd(40), 4);
    for (int i = 0; i < l.n; i++)
      l.ops[i].once = rnd(6) == 0;
    int once = (int)rnd(2);
    const plc_sim_net *net = trial % 2 ? &on : NULL;
    mpq_set_si(t0, trial % 3 ? 0 : (long)rnd(5), 1 + rnd(3));
    mpq_canonicalize(t0);
    plc_sim_no_fast = trial % 5 == 4;
    plc_ir_stage st = {.bwd = l};
    plc_ir_run run = {.stages = &st, .nstages = 1};
    plc_sim out, in;
    plc_sim_run(&out, &l, 4, once, t0, net);
    plc_sim_memo memo;
    plc_sim_memo_push(&memo, &run);
    plc_sim_run(&in, &st.bwd, 4, once, t0, net);
    lazy += in.lazy != NULL;
    for (int k = 0; k < 3; k++) {
      plc_sim_end_in(e, &in, &st.bwd, t0, counts[k]);
      plc_sim_end_of(f, &st.bwd, 4, once, t0, counts[k], net);
      bad += !mpq_equal(e, f);
      plc_sim_end_of(f, &l, 4, once, t0, counts[k], net); /* outside the memo */
      bad += !mpq_equal(e, f);
    }
    mpq_set_ui(want, 0, 1);
    for (int i = 0; i < l.n; i++)
      if (!l.ops[i].once)
        mpq_add(want, want, l.ops[i].time);
    int ok = plc_sim_memo_sum(f, &st.bwd, NULL);
    bad += ok == plc_sim_no_fast || (ok && !mpq_equal(f, want));
    plc_sim_memo_pop(&memo);
    plc_sim_times(&out);
    plc_sim_times(&in);
    bad += !same_sim(&out, &in);
    for (int i = 0; i < l.n; i++)
      if (l.ops[i].kind == PLC_OPK_COMPUTE) {
        ro += !in.ops[i].own_figs;
        bad += mpq_sgn(in.ops[i].exposed) != 0 || mpq_sgn(in.ops[i].window) != 0;
      }
    plc_sim_free(&out);
    plc_sim_free(&in);
    plc_sim_no_fast = 0;
  }
  CU_ASSERT_EQUAL(bad, 0);
  CU_ASSERT(lazy > 0 && ro > 0);
  mpq_clears(t0, e, f, want, NULL);
}

/* plc_sim_run_figs (on integers with no rational per op, when it can)
 * gives exactly plc_sim_run's compute, all_compute, useful and
 * stall_other, and its collectives' exposures summed per dimension, over
 * random lists on two links, shared or not, `once` ops in or out, from
 * any start, on integers and on rationals. */
static void test_random_figs(void)
{
  int bad = 0;
  mpq_t t0, want[PLC_PD_COUNT];
  mpq_init(t0);
  for (int k = 0; k < PLC_PD_COUNT; k++)
    mpq_init(want[k]);
  plc_sim_net on = one_link(1);
  on.nlinks = 2;
  for (int d = 0; d < PLC_PD_COUNT; d++)
    on.link[d] = d % 2;
  for (int trial = 0; trial < 300; trial++) {
    plc_ir_list l;
    random_list(&l, 1 + (int)rnd(40), 4);
    for (int i = 0; i < l.n; i++) {
      l.ops[i].once = rnd(6) == 0;
      l.ops[i].dim = (plc_pdim)rnd(3);
      l.ops[i].useful = rnd(2) == 0;
    }
    int once = (int)rnd(2);
    const plc_sim_net *net = trial % 3 ? &on : NULL;
    mpq_set_si(t0, (long)rnd(5), 1 + rnd(3));
    mpq_canonicalize(t0);
    plc_sim_no_fast = trial % 7 == 6;
    plc_sim s;
    plc_sim_run(&s, &l, 4, once, t0, net);
    plc_sim_times(&s);
    for (int k = 0; k < PLC_PD_COUNT; k++)
      mpq_set_ui(want[k], 0, 1);
    for (int i = 0; i < l.n; i++)
      if (s.ops[i].ran && l.ops[i].kind != PLC_OPK_COMPUTE)
        mpq_add(want[l.ops[i].dim], want[l.ops[i].dim], s.ops[i].exposed);
    plc_sim_figs f;
    mpq_inits(f.compute, f.all_compute, f.useful, f.stall_other, NULL);
    for (int k = 0; k < PLC_PD_COUNT; k++)
      mpq_init(f.exposed[k]);
    mpq_set_si(f.stall_other, 7, 1); /* overwritten, not added to */
    plc_sim_run_figs(&f, &l, 4, once, t0, net);
    bad += !mpq_equal(f.compute, s.compute) || !mpq_equal(f.all_compute, s.all_compute) ||
           !mpq_equal(f.useful, s.useful) || !mpq_equal(f.stall_other, s.stall_other);
    for (int k = 0; k < PLC_PD_COUNT; k++) {
      bad += !mpq_equal(f.exposed[k], want[k]);
      mpq_clear(f.exposed[k]);
    }
    mpq_clears(f.compute, f.all_compute, f.useful, f.stall_other, NULL);
    plc_sim_free(&s);
    plc_sim_no_fast = 0;
  }
  CU_ASSERT_EQUAL(bad, 0);
  mpq_clear(t0);
  for (int k = 0; k < PLC_PD_COUNT; k++)
    mpq_clear(want[k]);
}

/* A list made of some ops of a stage list, registered with the memo
 * (plc_sim_memo_part), runs with the stage list's durations picked out:
 * the same run (every figure and time) and the same ends as outside the
 * memo, `once` in or out, links shared or not, and plc_sim_memo_sum sums
 * its own ops; when the stage list's times do not fit on integers (an op
 * left out of the part has a denominator of 3^81) the part's own do; once
 * dropped the memo no longer keeps it. */
static void test_random_memo_part(void)
{
  int bad = 0, summed = 0;
  mpq_t zero, e, f, want;
  mpq_inits(zero, e, f, want, NULL);
  plc_sim_net on = one_link(1);
  for (int trial = 0; trial < 200; trial++) {
    plc_ir_list l;
    random_list(&l, 2 + (int)rnd(40), 4);
    for (int i = 0; i < l.n; i++)
      l.ops[i].once = rnd(6) == 0;
    int big = trial % 5 == 0; /* op 0, never in the part, does not fit */
    if (big) {
      mpz_ui_pow_ui(mpq_denref(l.ops[0].time), 3, 81);
      mpq_canonicalize(l.ops[0].time);
    }
    plc_ir_list c = {0}; /* every op kept with chance 2/3 (not op 0 when big) */
    int map[64], from[64];
    c.ops = plc_arena_alloc(ar, (size_t)l.n * sizeof *c.ops);
    for (int i = 0; i < l.n; i++) {
      map[i] = -1;
      if ((big && i == 0) || rnd(3) == 0)
        continue;
      plc_ir_op *o = &c.ops[c.n];
      *o = l.ops[i];
      o->deps = plc_arena_alloc(ar, (size_t)(l.ops[i].ndeps + 1) * sizeof *o->deps);
      o->ndeps = 0;
      for (int d = 0; d < l.ops[i].ndeps; d++)
        if (map[l.ops[i].deps[d]] >= 0)
          o->deps[o->ndeps++] = map[l.ops[i].deps[d]];
      from[c.n] = i;
      map[i] = c.n++;
    }
    int once = (int)rnd(2);
    const plc_sim_net *net = trial % 2 ? &on : NULL;
    plc_sim out, in;
    plc_sim_run(&out, &c, 4, once, zero, net);
    plc_sim_end(e, &c, 4, once, zero, net);
    plc_ir_stage st = {.fwd = l};
    plc_ir_run run = {.stages = &st, .nstages = 1};
    plc_sim_memo memo;
    plc_sim_memo_push(&memo, &run);
    plc_sim_memo_part(&c, &st.fwd, from);
    plc_sim_run(&in, &c, 4, once, zero, net);
    plc_sim_end(f, &c, 4, once, zero, net);
    bad += !mpq_equal(e, f);
    mpq_set_ui(want, 0, 1);
    for (int j = 0; j < c.n; j++)
      if (!c.ops[j].once && is_transfer(&c.ops[j]))
        mpq_add(want, want, c.ops[j].time);
    int ok = plc_sim_memo_sum(f, &c, is_transfer);
    summed += ok;
    bad += !ok || !mpq_equal(f, want);
    plc_sim_memo_drop(&c);
    bad += plc_sim_memo_sum(f, &c, is_transfer);
    plc_sim_memo_pop(&memo);
    plc_sim_times(&out);
    plc_sim_times(&in);
    bad += !same_sim(&out, &in);
    plc_sim_free(&out);
    plc_sim_free(&in);
  }
  CU_ASSERT_EQUAL(bad, 0);
  CU_ASSERT(summed == 200);
  mpq_clears(zero, e, f, want, NULL);
}

/* plc_sim_ends_once, which reads the run without the `once` ops off the
 * run with them when they provably changed no other op's times, gives
 * what the two runs give on their own (plc_sim_ends without them,
 * plc_sim_end_of with them), for every counts, links shared or not, from
 * any start, in a memo or not.  Half the lists are shaped as a stage's
 * backward (the once ops alone on a stream, nothing waiting for them), so
 * the one-run path is taken; in the others a once op often holds a
 * stream, the device or a dependency of another op, so the two-run path
 * is too; with one shared link a once transfer may slow another, and
 * the transfers that stay may meet (the run without the once ops then
 * shares its link from the one run's head).  In a memo, the once ops'
 * sum (plc_sim_memo_once_sum) is read off the durations those runs made. */
static void test_random_ends_once(void)
{
  int bad = 0;
  mpq_t t0, a0, o0, o1, b0, p0, p1;
  mpq_inits(t0, a0, o0, o1, b0, p0, p1, NULL);
  plc_sim_net on = one_link(1);
  plc_sim_counts_fn *counts[3] = {NULL, is_transfer, on_stream0};
  long merged0 = plc_sim_once_merged, calls = 0, summed = 0;
  for (int trial = 0; trial < 400; trial++) {
    plc_ir_list l;
    int shaped = trial % 2;
    random_list(&l, 1 + (int)rnd(40), shaped ? 3 : 4);
    for (int i = 0; i < l.n; i++) {
      if (shaped && l.ops[i].kind != PLC_OPK_COMPUTE && rnd(4) == 0) {
        l.ops[i].stream = 3; /* the grad stream: only once ops */
        l.ops[i].once = 1;
      } else if (!shaped) {
        l.ops[i].once = rnd(5) == 0;
      }
    }
    for (int i = 0; shaped && i < l.n; i++) /* nothing that stays waits for a once op */
      for (int k = 0; !l.ops[i].once && k < l.ops[i].ndeps; k++)
        if (l.ops[l.ops[i].deps[k]].once)
          l.ops[i].ndeps = 0;
    const plc_sim_net *net = trial % 3 ? &on : NULL;
    mpq_set_si(t0, trial % 4 ? 0 : (long)rnd(5), 1 + rnd(3));
    mpq_canonicalize(t0);
    plc_sim_no_fast = trial % 7 == 6;
    plc_ir_stage st = {.bwd = l};
    plc_ir_run run = {.stages = &st, .nstreams = 4, .nstages = 1};
    plc_sim_memo memo;
    int in_memo = trial % 5 < 3;
    if (in_memo)
      plc_sim_memo_push(&memo, &run);
    for (int k = 0; k < 3; k++) {
      plc_sim_ends_once(a0, o0, o1, &st.bwd, 4, t0, counts[k], net);
      calls++;
      plc_sim_ends(b0, p0, &l, 4, 0, t0, counts[k], net);
      plc_sim_end_of(p1, &l, 4, 1, t0, counts[k], net);
      bad += !mpq_equal(a0, b0) + !mpq_equal(o0, p0) + !mpq_equal(o1, p1);
    }
    if (in_memo) { /* the once ops' sum from the durations those runs made */
      mpq_set_ui(b0, 0, 1);
      for (int i = 0; i < l.n; i++)
        if (l.ops[i].once)
          mpq_add(b0, b0, l.ops[i].time);
      int ok = plc_sim_memo_once_sum(a0, &st.bwd);
      summed += ok;
      bad += ok && !mpq_equal(a0, b0);
      bad += ok && plc_sim_no_fast;
      plc_sim_memo_pop(&memo);
    }
    bad += plc_sim_memo_once_sum(a0, &st.bwd); /* no memo: nothing */
    plc_sim_no_fast = 0;
  }
  long merged = plc_sim_once_merged - merged0;
  CU_ASSERT(summed > 0);
  CU_ASSERT_EQUAL(bad, 0);
  CU_ASSERT(merged > calls / 5 && merged < calls); /* both paths ran */
  mpq_clears(t0, a0, o0, o1, b0, p0, p1, NULL);
}


/* ---- episodes ---------------------------------------------------------------- */

/* A stage-like list of n ops: compute mostly on stream 0 (now and then on
 * stream 1: the device's compute is serial whatever the stream), and
 * after some of it a transfer on stream 1, 2 or 3 (dimension stream - 1,
 * a group of 2 to 8) that waits for the compute before it; compute waits
 * now and then for an earlier transfer; the transfers of stream 3 are
 * `once` (a gradient sync) in half the lists.  Transfers of different
 * streams on one link meet again and again along the list, apart. */
static void episode_list(plc_ir_list *l, int n, int once)
{
  memset(l, 0, sizeof *l);
  int last = -1, ntr = 0, tr[64];
  for (int i = 0; i < n; i++) {
    if (last < 0 || rnd(5) < 3) {
      int dep = ntr > 0 && rnd(3) == 0 ? tr[rnd((unsigned long)ntr)] : -1;
      last = add(l, PLC_OPK_COMPUTE, rnd(8) ? 0 : 1, 1 + (long)rnd(20), 1 + (long)rnd(3),
                 dep >= 0, dep);
      continue;
    }
    int st = 1 + (int)rnd(3);
    int k = add(l, (plc_opk)(1 + rnd(PLC_OPK_COUNT - 1)), st, 1 + (long)rnd(40),
                1 + (long)rnd(4), 1, last);
    l->ops[k].dim = (plc_pdim)(st - 1);
    l->ops[k].group = 2 + (int)rnd(7);
    l->ops[k].once = once && st == 3;
    if (ntr < 64)
      tr[ntr++] = k;
  }
}

/* Runs with links shared taken episode by episode (the flow only where
 * transfers meet, the walk between) give exactly what the flow over the
 * whole list from where transfers first met gives (plc_sim_no_episodes):
 * every op's start, end, exposure and reason and the figures of
 * plc_sim_run, the ends of plc_sim_ends and plc_sim_ends_once, over
 * random stage-like lists (episode_list) on links shared by several
 * dimensions, with latencies, `once` ops in or out, from any start; some
 * with the rounds cut short (the rest in one flow).  Many lists take
 * several episodes. */
static void test_random_episodes(void)
{
  int bad = 0;
  mpq_t t0, v[2][6], lat[PLC_PD_COUNT];
  mpq_init(t0);
  for (int k = 0; k < 6; k++)
    mpq_inits(v[0][k], v[1][k], NULL);
  for (int d = 0; d < PLC_PD_COUNT; d++)
    mpq_init(lat[d]);
  plc_sim_counts_fn *counts[3] = {NULL, is_transfer, on_stream0};
  plc_sim_ep_stats st0 = plc_sim_ep_stat;
  int meets = plc_sim_ep_meets;
  plc_sim_ep_meets = 1000; /* episodes however many meetings the lists have */
  for (int trial = 0; trial < 400; trial++) {
    plc_ir_list l;
    episode_list(&l, 20 + (int)rnd(100), trial % 2);
    plc_sim_net net = one_link(1);
    net.nlinks = 2;
    net.link[1] = trial % 3 == 0; /* else TP, PP and DP on one link */
    for (int d = 0; d < PLC_PD_COUNT; d++) {
      mpq_set_ui(lat[d], 1, trial % 8 == 5 ? 7 : 1 + rnd(4)); /* a fixed part of each transfer */
      net.latency[d] = trial % 4 ? lat[d] : NULL;
    }
    mpq_set_si(t0, trial % 5 ? 0 : (long)rnd(5), 1 + rnd(3));
    mpq_canonicalize(t0);
    int with_once = trial % 3 == 1;
    plc_sim_ep_rounds = trial % 7 == 3 ? 1 + (int)rnd(3) : 64;
    plc_sim s[2];
    for (int w = 0; w < 2; w++) { /* w = 1: the whole flow */
      plc_sim_no_episodes = w;
      plc_sim_run(&s[w], &l, 4, with_once, t0, &net);
      plc_sim_times(&s[w]);
      plc_sim_counts_fn *c = counts[trial % 3];
      plc_sim_ends(v[w][0], v[w][1], &l, 4, with_once, t0, c, &net);
      plc_sim_ends_once(v[w][2], v[w][3], v[w][4], &l, 4, t0, c, &net);
    }
    plc_sim_no_episodes = 0;
    for (int k = 0; k < 5; k++)
      bad += !mpq_equal(v[0][k], v[1][k]);
    bad += !mpq_equal(s[0].makespan, s[1].makespan) || !mpq_equal(s[0].end, s[1].end) ||
           !mpq_equal(s[0].exposed, s[1].exposed) || !mpq_equal(s[0].busy, s[1].busy) ||
           !mpq_equal(s[0].stall_other, s[1].stall_other) || s[0].shared != s[1].shared;
    for (int i = 0; i < l.n; i++) {
      const plc_sim_op *a = &s[0].ops[i], *b = &s[1].ops[i];
      bad += a->ran != b->ran || a->why != b->why || !mpq_equal(a->exposed, b->exposed) ||
             !mpq_equal(a->window, b->window);
      bad += a->ran && (!mpq_equal(a->start, b->start) || !mpq_equal(a->end, b->end));
    }
    plc_sim_free(&s[0]);
    plc_sim_free(&s[1]);
  }
  plc_sim_ep_rounds = 64;
  plc_sim_ep_meets = meets;
  long flows = plc_sim_ep_stat.flows - st0.flows, multi = plc_sim_ep_stat.multi - st0.multi;
  CU_ASSERT_EQUAL(bad, 0);
  CU_ASSERT(multi >= 200);      /* runs taken in several episodes */
  CU_ASSERT(flows >= 4 * multi); /* ... most of them in many */
  CU_ASSERT(plc_sim_ep_stat.fallbacks - st0.fallbacks < multi / 4); /* latency not whole */
  mpq_clear(t0);
  for (int k = 0; k < 6; k++)
    mpq_clears(v[0][k], v[1][k], NULL);
  for (int d = 0; d < PLC_PD_COUNT; d++)
    mpq_clear(lat[d]);
}

/* ---- repeated blocks ------------------------------------------------------------ */

/* A list shaped as a stage's: a prefix of p random ops, then k copies of
 * a block of b ops, then a suffix of q random ops that wait on any op
 * before them.  A block's op is compute mostly on stream 0, or a
 * transfer on stream 1 or 2, or, with once, a `once` transfer on stream 3
 * (a gradient sync); it waits for ops of its own block before it and of
 * the block before it (block 0: of the prefix, when there is one), with
 * far of the two blocks before that too (which no region may hold).  The
 * copies share their times by address (copy 0's are equal rationals of
 * their own, as lowering's first layer), unless the block has a time of
 * its own in one copy (broken: a copy then differs, by its time or a
 * dependency), which ends the repetition there.  The durations of the
 * streams are drawn apart so that in some lists a stream falls behind
 * block after block (the walk never settles), in others not. */
static void block_list(plc_ir_list *l, int p, int b, int k, int q, int once, int broken,
                       int far)
{
  memset(l, 0, sizeof *l);
  random_list(l, p, 3);
  int kind[16], st[16], nd[16], dep[16][2];
  long num[16], den[16], slow = 1 + (long)rnd(4);
  for (int j = 0; j < b; j++) {
    st[j] = rnd(3) ? 0 : 1 + (int)rnd(once ? 3 : 2);
    kind[j] = st[j] == 0 && rnd(6) ? PLC_OPK_COMPUTE : 1 + (int)rnd(PLC_OPK_COUNT - 1);
    num[j] = (st[j] ? slow * 4 : 1) + (long)rnd(st[j] ? 30 : 12);
    den[j] = 1 + (long)rnd(3);
    nd[j] = (int)rnd(3);
    for (int d = 0; d < nd[j]; d++) /* its block's (j - b .. j - 1) or the one before */
      dep[j][d] = j - 1 - (int)rnd((unsigned long)(far ? 3 : 1) * (unsigned long)b +
                                   (j > 0 ? (unsigned long)j : 0));
  }
  int cut = broken ? 1 + (int)rnd((unsigned long)k) : -1, cutj = (int)rnd((unsigned long)b);
  mpq_ptr shared[16];
  for (int c = 0; c < k; c++) {
    int base = l->n;
    for (int j = 0; j < b; j++) {
      int ds[2] = {0, 0}, n = 0;
      for (int d = 0; d < nd[j]; d++) {
        int at = base + dep[j][d];
        if (at >= 0 && at < base + j)
          ds[n++] = at;
      }
      if (c == cut && j == cutj && n > 0 && rnd(2))
        ds[0] = ds[0] > 0 ? ds[0] - 1 : ds[0] + 1 < base + j ? ds[0] + 1 : ds[0];
      int o = add(l, (plc_opk)kind[j], st[j], num[j], den[j], n, ds[0], ds[1]);
      plc_ir_op *op = &l->ops[o];
      op->once = once && st[j] == 3;
      op->dim = (plc_pdim)(st[j] > 0 ? st[j] - 1 : 0);
      op->group = 2;
      op->useful = kind[j] == PLC_OPK_COMPUTE;
      if (c == 1)
        shared[j] = op->time;
      if (c == cut && j == cutj && rnd(2)) { /* its own time */
        op->time = plc_arena_mpq(ar);
        mpq_set_si(op->time, num[j] + 1, (unsigned long)den[j]);
      } else if (c > 1) {
        op->time = shared[j];
      }
    }
  }
  for (int i = 0; i < q; i++) {
    int n = l->n, nd2 = n ? (int)rnd(3) : 0, d[2] = {0, 0};
    for (int x = 0; x < nd2; x++)
      d[x] = (int)rnd((unsigned long)n);
    add(l, rnd(2) ? PLC_OPK_COMPUTE : PLC_OPK_ALL_REDUCE, (int)rnd(3), 1 + (long)rnd(20),
        1 + (long)rnd(3), nd2, d[0], d[1]);
  }
}

/* Every op's start and end of every walk to a list's end, in order
 * (plc_sim_walk_hook). */
typedef struct walk_log {
  int n, cap;
  int *op;
  mpq_t *v;
} walk_log;

static void walk_note(void *ctx, const plc_ir_list *l, int i, mpq_srcptr start, mpq_srcptr end)
{
  (void)l;
  walk_log *w = ctx;
  if (w->n == w->cap) {
    w->cap = 2 * w->cap + 64;
    w->op = realloc(w->op, (size_t)w->cap * sizeof *w->op);
    w->v = realloc(w->v, 2 * (size_t)w->cap * sizeof *w->v);
  }
  w->op[w->n] = i;
  mpq_init(w->v[2 * w->n]);
  mpq_init(w->v[2 * w->n + 1]);
  mpq_set(w->v[2 * w->n], start);
  mpq_set(w->v[2 * w->n + 1], end);
  w->n++;
}

static void walk_clear(walk_log *w)
{
  for (int k = 0; k < 2 * w->n; k++)
    mpq_clear(w->v[k]);
  w->n = 0;
}

static int same_walks(const walk_log *a, const walk_log *b)
{
  int ok = a->n == b->n;
  for (int k = 0; ok && k < a->n; k++)
    ok = a->op[k] == b->op[k] && mpq_equal(a->v[2 * k], b->v[2 * k]) &&
         mpq_equal(a->v[2 * k + 1], b->v[2 * k + 1]);
  return ok;
}

/* With repeated blocks found (durations taken from a block before, the
 * walk taking settled blocks from the one before them, plc_s64_steady)
 * every run gives exactly what it gives without (plc_sim_no_steady):
 * every start and end of every walk to a list's end, the ends of
 * plc_sim_ends (with each counts), plc_sim_end_of with `once` ops and
 * plc_sim_ends_once, every op and figure of plc_sim_run, the sums of
 * durations (plc_sim_memo_sum, plc_sim_memo_once_sum: block by block),
 * over lists of
 * repeated blocks (block_list: deps into the block before and into the
 * prefix, once ops, copies that differ, streams that fall behind), links
 * shared or not, from any start, in a memo or not.  Many walks settle
 * and skip blocks, some never settle. */
static void test_random_steady(void)
{
  int bad = 0;
  mpq_t t0, sum, v[2][9];
  mpq_inits(t0, sum, NULL);
  for (int k = 0; k < 9; k++)
    mpq_inits(v[0][k], v[1][k], NULL);
  plc_sim_net on = one_link(1);
  plc_sim_counts_fn *counts[3] = {NULL, is_transfer, on_stream0};
  walk_log log[2] = {{0}, {0}};
  long skipped = 0, unsettled = 0, walks = 0;
  for (int trial = 0; trial < 600; trial++) {
    plc_ir_list l;
    int b = 1 + (int)rnd(12), k = 2 + (int)rnd(9);
    int far = trial % 7 == 3;
    block_list(&l, far ? 2 * b + (int)rnd(6) : (int)rnd(6), b, k, (int)rnd(6), trial % 2,
               trial % 5 == 4, far);
    const plc_sim_net *net = trial % 3 ? &on : NULL;
    mpq_set_si(t0, trial % 4 ? 0 : (long)rnd(5), 1 + rnd(3));
    mpq_canonicalize(t0);
    plc_sim_counts_fn *c = counts[trial % 3];
    int in_memo = trial % 4 < 2;
    plc_sim s[2];
    for (int w = 0; w < 2; w++) { /* w = 1: no repeated blocks */
      plc_sim_no_steady = w;
      plc_ir_stage st = {.bwd = l};
      plc_ir_run run = {.stages = &st, .nstreams = 4, .nstages = 1};
      plc_sim_memo memo;
      if (in_memo)
        plc_sim_memo_push(&memo, &run);
      plc_sim_walk_hook = walk_note;
      plc_sim_walk_ctx = &log[w];
      long before = plc_sim_steady_ops, n0 = log[w].n;
      plc_sim_ends(v[w][0], v[w][1], &st.bwd, 4, 0, t0, c, net);
      plc_sim_ends(v[w][2], v[w][3], &st.bwd, 4, 1, t0, c, net);
      plc_sim_end_of(v[w][4], &st.bwd, 4, 1, t0, c, net);
      plc_sim_ends_once(v[w][5], v[w][6], v[w][7], &st.bwd, 4, t0, c, net);
      plc_sim_end(v[w][8], &st.bwd, 4, trial % 2, t0, net);
      plc_sim_walk_hook = NULL;
      plc_sim_run(&s[w], &st.bwd, 4, trial % 3 == 1, t0, net);
      plc_sim_times(&s[w]);
      if (in_memo) { /* the sums of durations, blocks by blocks */
        mpq_set_ui(sum, 0, 1);
        for (int i = 0; i < l.n; i++)
          if (!l.ops[i].once && (!c || c(&l.ops[i])))
            mpq_add(sum, sum, l.ops[i].time);
        bad += plc_sim_memo_sum(v[w][0], &st.bwd, c) && !mpq_equal(v[w][0], sum);
        mpq_set_ui(sum, 0, 1);
        for (int i = 0; i < l.n; i++)
          if (l.ops[i].once)
            mpq_add(sum, sum, l.ops[i].time);
        bad += plc_sim_memo_once_sum(v[w][0], &st.bwd) && !mpq_equal(v[w][0], sum);
        plc_sim_memo_pop(&memo);
      }
      if (w == 0) {
        skipped += plc_sim_steady_ops - before;
        unsettled += plc_sim_steady_ops == before && log[w].n > n0;
        walks++;
      }
    }
    plc_sim_no_steady = 0;
    for (int x = 0; x < 9; x++)
      bad += !mpq_equal(v[0][x], v[1][x]);
    bad += !same_walks(&log[0], &log[1]);
    bad += !same_sim(&s[0], &s[1]);
    walk_clear(&log[0]);
    walk_clear(&log[1]);
    plc_sim_free(&s[0]);
    plc_sim_free(&s[1]);
  }
  CU_ASSERT_EQUAL(bad, 0);
  CU_ASSERT(skipped > 20000); /* the walk skipped blocks, ... */
  CU_ASSERT(unsettled > walks / 10); /* ... but not in every list */
  for (int w = 0; w < 2; w++) {
    free(log[w].op);
    free(log[w].v);
  }
  mpq_clears(t0, sum, NULL);
  for (int k = 0; k < 9; k++)
    mpq_clears(v[0][k], v[1][k], NULL);
}

/* A list for an episode's steady state: a prefix whose transfers of
 * streams 1 and 2 meet at the start on link 0, then a chain of nc
 * transfers of stream 2 on link 1 (dimension 2), then one more of stream
 * 2 on link 0, which starts late: after the blocks have settled, meeting
 * their transfers there; then k copies of a block of b ops: compute on
 * stream 0 waiting for the op before it (now and then for one of the
 * block before too) and transfers waiting so, on stream 1 or, with two,
 * on stream 2 too (both on link 0: in some lists they meet again block
 * after block, in others not).  The copies share their times by
 * address. */
static void ep_block_list(plc_ir_list *l, int b, int k, int nc, int two)
{
  memset(l, 0, sizeof *l);
  int p0 = add(l, PLC_OPK_ALL_GATHER, 1, 1 + (long)rnd(6), 1, 0);
  int p1 = add(l, PLC_OPK_ALL_GATHER, 2, 1 + (long)rnd(6), 1, 0);
  l->ops[p1].dim = 1;
  for (int c = 0; c < nc; c++)
    l->ops[add(l, PLC_OPK_P2P, 2, 5 + (long)rnd(30), 1, 0)].dim = 2;
  if (nc > 0)
    l->ops[add(l, PLC_OPK_ALL_GATHER, 2, 1 + (long)rnd(4), 1, 0)].dim = 1;
  int last = add(l, PLC_OPK_COMPUTE, 0, 1 + (long)rnd(5), 1, 2, p0, p1);
  int kind[16], st[16], dep2[16];
  long num[16];
  for (int j = 0; j < b; j++) {
    kind[j] = j == 0 || rnd(2) ? PLC_OPK_COMPUTE : PLC_OPK_REDUCE_SCATTER;
    st[j] = kind[j] == PLC_OPK_COMPUTE ? 0 : two && rnd(2) ? 2 : 1;
    num[j] = kind[j] == PLC_OPK_COMPUTE ? 1 + (long)rnd(8) : 1 + (long)rnd(st[j] == 2 ? 40 : 10);
    dep2[j] = rnd(4) == 0 ? 1 + (int)rnd((unsigned long)b) : 0; /* j - dep2 - 1 too */
  }
  mpq_ptr shared[16];
  for (int c = 0; c < k; c++) {
    int base = l->n;
    for (int j = 0; j < b; j++) {
      int d1 = j > 0 ? base + j - 1 : last, d2 = base + j - dep2[j] - 1;
      int two_deps = dep2[j] && d2 >= base - b && d2 >= 0 && d2 != d1;
      int o = add(l, (plc_opk)kind[j], st[j], num[j], 1, 1 + two_deps, d1, d2);
      l->ops[o].dim = st[j] == 2 ? 1 : 0;
      if (c == 1)
        shared[j] = l->ops[o].time;
      else if (c > 1)
        l->ops[o].time = shared[j];
    }
    last = base + b - 1;
  }
}

/* An episode's walk taking settled blocks from the block before them
 * (plc_sim_ep_skip) gives exactly what it gives without (plc_sim_no_steady)
 * and what the whole flow gives (plc_sim_no_episodes): the ends of
 * plc_sim_ends (with or without once ops, each counts) and
 * plc_sim_ends_once, every op and figure of plc_sim_run, over lists of
 * repeated blocks on shared links, in a memo, with or without latencies,
 * from any start: half of them ep_block_list's (a late transfer that
 * meets settled blocks), half block_list's (in a third of those the
 * blocks' transfers of stream 2 moved to stream 1: quiet, only the
 * prefix's and the once ops' meet; in the others transfers of two
 * streams meet now and then).  Many walks skip blocks. */
static void test_random_ep_steady(void)
{
  int bad = 0;
  mpq_t t0, lat, v[3][5];
  mpq_inits(t0, lat, NULL);
  for (int k = 0; k < 5; k++)
    mpq_inits(v[0][k], v[1][k], v[2][k], NULL);
  plc_sim_counts_fn *counts[3] = {NULL, is_transfer, on_stream0};
  int meets = plc_sim_ep_meets;
  plc_sim_ep_meets = 1000; /* episodes however many meetings the lists have */
  long steady0 = plc_sim_ep_stat.steady, flows0 = plc_sim_ep_stat.flows;
  for (int trial = 0; trial < 1000; trial++) {
    plc_ir_list l;
    int b = 2 + (int)rnd(10), k = 4 + (int)rnd(12);
    plc_sim_net net = one_link(1);
    if (trial % 2) {
      block_list(&l, 2 + (int)rnd(4), b, k, (int)rnd(4), trial % 4 == 1, trial % 7 == 6, 0);
      for (int i = 0; trial % 3 == 0 && i < l.n; i++)
        if (l.ops[i].stream == 2 && i >= 6) /* quiet blocks */
          l.ops[i].stream = 1, l.ops[i].dim = 0;
    } else {
      ep_block_list(&l, b, k, (int)rnd(4), trial % 4 == 2);
      net.nlinks = 2;
      net.link[2] = 1;
    }
    mpq_set_ui(lat, 1, 1 + rnd(3));
    for (int d = 0; d < PLC_PD_COUNT; d++)
      net.latency[d] = trial % 4 == 1 ? lat : NULL;
    mpq_set_si(t0, trial % 5 ? 0 : (long)rnd(5), 1 + rnd(3));
    mpq_canonicalize(t0);
    plc_sim_counts_fn *c = counts[trial % 3];
    plc_sim s[3];
    for (int w = 0; w < 3; w++) { /* 1: no steady state, 2: the whole flow */
      plc_sim_no_steady = w == 1;
      plc_sim_no_episodes = w == 2;
      plc_ir_stage st = {.bwd = l};
      plc_ir_run run = {.stages = &st, .nstreams = 4, .nstages = 1};
      plc_sim_memo memo;
      plc_sim_memo_push(&memo, &run);
      plc_sim_ends(v[w][0], v[w][1], &st.bwd, 4, trial % 4 == 1, t0, c, &net);
      plc_sim_ends_once(v[w][2], v[w][3], v[w][4], &st.bwd, 4, t0, c, &net);
      plc_sim_run(&s[w], &st.bwd, 4, trial % 3 == 1, t0, &net);
      plc_sim_times(&s[w]);
      plc_sim_memo_pop(&memo);
    }
    plc_sim_no_steady = plc_sim_no_episodes = 0;
    for (int w = 1; w < 3; w++) {
      for (int x = 0; x < 5; x++)
        bad += !mpq_equal(v[0][x], v[w][x]);
      bad += !same_sim(&s[0], &s[w]) || s[0].shared != s[w].shared;
    }
    for (int w = 0; w < 3; w++)
      plc_sim_free(&s[w]);
  }
  plc_sim_ep_meets = meets;
  CU_ASSERT_EQUAL(bad, 0);
  CU_ASSERT(plc_sim_ep_stat.flows - flows0 > 500);    /* runs by episodes, ... */
  CU_ASSERT(plc_sim_ep_stat.steady - steady0 > 40000); /* ... many taking blocks so */
  mpq_clears(t0, lat, NULL);
  for (int k = 0; k < 5; k++)
    mpq_clears(v[0][k], v[1][k], v[2][k], NULL);
}

/* Times read by value (copies with rationals of their own, plc_s64_seen):
 * many distinct times, some the same but for a numerator's high limb or
 * a denominator (so that they meet in the table of times seen), each op
 * its own rational: the run on integers (their sum fits) ends where the
 * run on rationals does, op by op. */
static void test_times_by_value(void)
{
  int bad = 0;
  mpq_t zero, e, f;
  mpq_inits(zero, e, f, NULL);
  for (int trial = 0; trial < 40; trial++) {
    plc_ir_list l = {0};
    int n = 300 + (int)rnd(200);
    for (int i = 0; i < n; i++) {
      int o = add(&l, PLC_OPK_COMPUTE, 0, 1, 1, i > 0, i - 1);
      mpq_ptr q = l.ops[o].time;
      if (trial % 2) { /* numerators apart in their high limb only */
        static const unsigned long dens[] = {1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 24, 30, 40};
        mpz_set_ui(mpq_numref(q), 1 + rnd(3));
        mpz_mul_2exp(mpq_numref(q), mpq_numref(q), 64 * rnd(2));
        mpz_add_ui(mpq_numref(q), mpq_numref(q), 1 + rnd(2));
        mpz_set_ui(mpq_denref(q), dens[rnd(14)]);
      } else { /* a few numerators over many denominators far apart */
        mpz_set_ui(mpq_numref(q), 1 + rnd(2));
        mpz_ui_pow_ui(mpq_denref(q), 3, rnd(25));
        mpz_mul_2exp(mpq_denref(q), mpq_denref(q), rnd(40));
      }
      mpq_canonicalize(q); /* either way their sum fits machine integers */
    }
    plc_sim a, b;
    plc_sim_run(&a, &l, 1, 0, zero, NULL);
    plc_sim_end(e, &l, 1, 0, zero, NULL);
    plc_sim_no_fast = 1;
    plc_sim_run(&b, &l, 1, 0, zero, NULL);
    plc_sim_end(f, &l, 1, 0, zero, NULL);
    plc_sim_no_fast = 0;
    plc_sim_times(&a);
    bad += !mpq_equal(e, f) || !same_sim(&a, &b);
    plc_sim_free(&a);
    plc_sim_free(&b);
  }
  CU_ASSERT_EQUAL(bad, 0);
  mpq_clears(zero, e, f, NULL);
}

int main(void)
{
  ar = plc_arena_new();
  static const plc_cu_test tests[] = {
    {"window and exposure (four-step test)", test_window_and_exposure},
    {"same stream, queueing", test_same_stream_and_queue},
    {"compute on two streams shares the device", test_compute_union},
    {"other streams bound the list", test_other_streams_bound},
    {"invariants over random lists", test_random_invariants},
    {"faster links never slow a step", test_random_faster},
    {"stall parts add up to the charges", test_random_stall_parts},
    {"integers and rationals agree", test_random_integers},
    {"two gathers share a link (hand case)", test_shared_gathers},
    {"links shared over random lists", test_random_shared},
    {"sums and the memo over random lists", test_random_sums_and_memo},
    {"a run's ends are the end-only runs' (random lists)", test_random_end_in},
    {"a run's figures without the ops' own (random lists)", test_random_figs},
    {"a part of a stage list runs with its durations (random lists)", test_random_memo_part},
    {"the ends with and without once ops from one run (random lists)", test_random_ends_once},
    {"runs by episodes are the whole flow's (random stage-like lists)", test_random_episodes},
    {"repeated blocks change no run (random lists of blocks)", test_random_steady},
    {"episodes take settled blocks as they walk (random lists of blocks)",
     test_random_ep_steady},
    {"times read by value (many, meeting in the table)", test_times_by_value},
    {NULL, NULL},
  };
  int rc = plc_cu_run("sim", tests);
  plc_arena_free(ar);
  return rc;
}
