/* test_flow.c - the event-driven core: streams, dependencies and links
 * shared by processor sharing (runtime/engine/flow.c).
 *
 * Hand-derived cases, then a differential test against a naive simulator
 * written here independently (it re-evaluates every active op's rate at
 * each event, O(n^2)), then invariants over random graphs. */
#include <stdlib.h>

#include "flow.h"
#include "cu_main.h"

static mpq_t zero; /* every run starts at t0 = 0 */

/* ---- building ops from small integers ---------------------------------- */

#define MAXOPS 32

typedef struct fixture {
  plc_flow_op ops[MAXOPS];
  mpq_t fixed[MAXOPS], work[MAXOPS];
  plc_flow_q q[MAXOPS][2]; /* fixed and work on machine integers, for ops given so */
  int deps[MAXOPS][MAXOPS];
  int n;
} fixture;

static void fx_init(fixture *x)
{
  x->n = 0;
  for (int i = 0; i < MAXOPS; i++) mpq_inits(x->fixed[i], x->work[i], NULL);
}

static void fx_clear(fixture *x)
{
  for (int i = 0; i < MAXOPS; i++) mpq_clears(x->fixed[i], x->work[i], NULL);
}

/* Add an op: fixed and work as fractions fn/fd, wn/wd (seconds). */
static int fx_op(fixture *x, int stream, int link, long fn, long fd, long wn, long wd)
{
  int i = x->n++;
  mpq_set_si(x->fixed[i], fn, (unsigned long)fd);
  mpq_canonicalize(x->fixed[i]);
  mpq_set_si(x->work[i], wn, (unsigned long)wd);
  mpq_canonicalize(x->work[i]);
  x->ops[i] = (plc_flow_op){.stream = stream, .link = link, .fixed = x->fixed[i],
                            .work = x->work[i], .deps = x->deps[i], .ndeps = 0};
  return i;
}

static void fx_dep(fixture *x, int i, int on)
{
  x->deps[i][x->ops[i].ndeps++] = on;
}

static int q_is(mpq_srcptr q, long num, unsigned long den)
{
  mpq_t w;
  mpq_init(w);
  mpq_set_si(w, num, den);
  mpq_canonicalize(w);
  int eq = mpq_equal(q, w);
  mpq_clear(w);
  return eq;
}

/* ---- hand-derived cases ------------------------------------------------- */

/* Two transfers of 1 s each on one link from t = 0: sharing halves each
 * one's rate, so both end at 2 s (the link moves 2 s of work in 2 s); with
 * sharing off each has the whole link and ends at 1 s. */
static void test_two_equal(void)
{
  fixture x;
  fx_init(&x);
  fx_op(&x, 0, 0, 0, 1, 1, 1);
  fx_op(&x, 1, 0, 0, 1, 1, 1);
  for (int share = 0; share <= 1; share++) {
    plc_flow f;
    int stuck = 99;
    CU_ASSERT_EQUAL(plc_flow_run(&f, x.ops, x.n, 2, 1, share, zero,
                                 &stuck), 0);
    CU_ASSERT_EQUAL(stuck, -1);
    CU_ASSERT(q_is(f.end[0], share ? 2 : 1, 1));
    CU_ASSERT(q_is(f.end[1], share ? 2 : 1, 1));
    CU_ASSERT(q_is(f.makespan, share ? 2 : 1, 1));
    plc_flow_free(&f);
  }
  fx_clear(&x);
}

/* A: 3 s of link at t = 0 on stream 0.  C: 1 s of compute on stream 1, then
 * B: 1 s of the same link on stream 1.  Shared: A alone on [0, 1) does 1 s
 * of work; from 1 both progress at 1/2, B needs 2 s more and ends at 3, when
 * A has done 2 s; A's last second alone ends it at 4.  Unshared: A ends at
 * 3, B at 2. */
static void test_late_join(void)
{
  fixture x;
  fx_init(&x);
  int a = fx_op(&x, 0, 0, 0, 1, 3, 1);
  int c = fx_op(&x, 1, -1, 1, 1, 0, 1);
  int b = fx_op(&x, 1, 0, 0, 1, 1, 1);
  plc_flow f;
  CU_ASSERT_EQUAL(plc_flow_run(&f, x.ops, x.n, 2, 1, 1, zero, NULL), 0);
  CU_ASSERT(q_is(f.start[b], 1, 1));
  CU_ASSERT(q_is(f.end[b], 3, 1));
  CU_ASSERT(q_is(f.end[a], 4, 1));
  CU_ASSERT_EQUAL(f.cause[b], c);
  plc_flow_free(&f);
  CU_ASSERT_EQUAL(plc_flow_run(&f, x.ops, x.n, 2, 1, 0, zero, NULL), 0);
  CU_ASSERT(q_is(f.end[b], 2, 1));
  CU_ASSERT(q_is(f.end[a], 3, 1));
  plc_flow_free(&f);
  fx_clear(&x);
}

/* Latency is not shared.  P: 1/2 s latency then 1 s of link; Q: 1 s of the
 * link at once.  Q alone on [0, 1/2) does 1/2; both share from 1/2, Q's last
 * 1/2 takes 1 s and ends at 3/2, when P has done 1/2; P's last 1/2 alone
 * ends at 2.  The link is busy [0, 2) for 2 s of work: nothing is lost. */
static void test_latency_not_shared(void)
{
  fixture x;
  fx_init(&x);
  int p = fx_op(&x, 0, 0, 1, 2, 1, 1);
  int q = fx_op(&x, 1, 0, 0, 1, 1, 1);
  plc_flow f;
  CU_ASSERT_EQUAL(plc_flow_run(&f, x.ops, x.n, 2, 1, 1, zero, NULL), 0);
  CU_ASSERT(q_is(f.end[q], 3, 2));
  CU_ASSERT(q_is(f.end[p], 2, 1));
  plc_flow_free(&f);
  fx_clear(&x);
}

/* Three on one link, staggered: X 2 s at 0, Y 2 s at 1 (after 1 s of
 * compute), Z 1/2 s at 1 (after the same compute, other stream).  On
 * [0, 1) X alone: X has 1 left.  From 1, three share at 1/3: Z's 1/2 takes
 * 3/2, ending at 5/2, when X and Y have done 1/2 each (X 1/2 left, Y 3/2).
 * Then two at 1/2: X's 1/2 takes 1, ends at 7/2 (Y 1 left); Y alone ends at
 * 9/2.  Total work 9/2 s in [0, 9/2): the link never idles. */
static void test_three_staggered(void)
{
  fixture x;
  fx_init(&x);
  int xx = fx_op(&x, 0, 0, 0, 1, 2, 1);
  int c = fx_op(&x, 1, -1, 1, 1, 0, 1);
  int y = fx_op(&x, 1, 0, 0, 1, 2, 1);
  int z = fx_op(&x, 2, 0, 0, 1, 1, 2);
  fx_dep(&x, z, c);
  plc_flow f;
  CU_ASSERT_EQUAL(plc_flow_run(&f, x.ops, x.n, 3, 1, 1, zero, NULL), 0);
  CU_ASSERT(q_is(f.end[z], 5, 2));
  CU_ASSERT(q_is(f.end[xx], 7, 2));
  CU_ASSERT(q_is(f.end[y], 9, 2));
  plc_flow_free(&f);
  fx_clear(&x);
}

/* Different links do not share; one stream runs its ops one at a time. */
static void test_links_and_streams(void)
{
  fixture x;
  fx_init(&x);
  int a = fx_op(&x, 0, 0, 0, 1, 1, 1);
  int b = fx_op(&x, 1, 1, 0, 1, 1, 1);
  int c = fx_op(&x, 0, -1, 5, 1, 0, 1);  /* after a on stream 0 */
  plc_flow f;
  CU_ASSERT_EQUAL(plc_flow_run(&f, x.ops, x.n, 2, 2, 1, zero, NULL), 0);
  CU_ASSERT(q_is(f.end[a], 1, 1));
  CU_ASSERT(q_is(f.end[b], 1, 1));
  CU_ASSERT(q_is(f.start[c], 1, 1));
  CU_ASSERT(q_is(f.end[c], 6, 1));
  CU_ASSERT_EQUAL(f.cause[c], a);
  plc_flow_free(&f);
  fx_clear(&x);
}

/* A dependency on a later op of the same stream can never be met: the run
 * says which op is stuck instead of looping or inventing a time. */
static void test_stuck(void)
{
  fixture x;
  fx_init(&x);
  int a = fx_op(&x, 0, -1, 1, 1, 0, 1);
  int b = fx_op(&x, 0, -1, 1, 1, 0, 1);
  fx_dep(&x, a, b);
  plc_flow f;
  int stuck = -1;
  CU_ASSERT_EQUAL(plc_flow_run(&f, x.ops, x.n, 1, 0, 1, zero, &stuck), -1);
  CU_ASSERT_EQUAL(stuck, a);
  plc_flow_free(&f);
  fx_clear(&x);
}


/* An episode (plc_flow_run_calm).  A (stream 0) and B (stream 1) share
 * link 0 from t = 0 with 1 s and 3 s of work; C, 10 s of compute on
 * stream 2; D, 1 s on link 0 after C.  Both at half speed: A ends at 2 s
 * with B 1 s done, so from 2 s no link has two transfers under way: the
 * episode stops there, A ended (at 2), B under way with 2 s of work left,
 * C with 8 s of its fixed part, D not started.  With the horizon at 1 s
 * it stops then: A with 1/2 s of work left, B 5/2 s, C 9 s.  Run to the
 * end: B ends at 4 (alone from 2), C at 10, D alone at 11. */
static void test_calm(void)
{
  fixture x;
  fx_init(&x);
  long cost[4][2] = {{0, 1}, {0, 3}, {10, 0}, {0, 1}};
  for (int i = 0; i < 4; i++) {
    fx_op(&x, i < 3 ? i : 0, i == 2 ? -1 : 0, cost[i][0], 1, cost[i][1], 1);
    x.q[i][0] = (plc_flow_q){cost[i][0], 1};
    x.q[i][1] = (plc_flow_q){cost[i][1], 1};
    x.ops[i].q = x.q[i];
  }
  fx_dep(&x, 3, 2);
  long horizon[3] = {100, 1, 100};
  for (int k = 0; k < 3; k++) {
    unsigned char state[4];
    plc_flow_q rest[8];
    plc_flow_calm c = {.horizon = {horizon[k], 1}, .to_end = k == 2, .state = state,
                       .rest = rest};
    plc_flow f;
    CU_ASSERT_EQUAL(plc_flow_run_calm(&f, x.ops, x.n, 3, 1, zero, &c), 0);
    CU_ASSERT(!f.big);
    if (k == 0) {
      CU_ASSERT(c.stopped && c.t.n == 2 && c.t.d == 1);
      CU_ASSERT(state[0] == 2 && state[1] == 1 && state[2] == 1 && state[3] == 0);
      CU_ASSERT(f.qend[0].n == 2 && f.qend[0].d == 1);
      CU_ASSERT(rest[2].n == 0 && rest[3].n == 2 && rest[3].d == 1);
      CU_ASSERT(rest[4].n == 8 && rest[4].d == 1 && rest[5].n == 0);
    } else if (k == 1) {
      CU_ASSERT(c.stopped && c.t.n == 1 && c.t.d == 1);
      CU_ASSERT(state[0] == 1 && state[1] == 1 && state[2] == 1 && state[3] == 0);
      CU_ASSERT(rest[1].n == 1 && rest[1].d == 2 && rest[3].n == 5 && rest[3].d == 2);
      CU_ASSERT(rest[4].n == 9 && rest[4].d == 1);
    } else {
      CU_ASSERT(!c.stopped && c.t.n == 11 && c.t.d == 1);
      CU_ASSERT(state[0] == 2 && state[1] == 2 && state[2] == 2 && state[3] == 2);
      CU_ASSERT(f.qend[1].n == 4 && f.qend[2].n == 10 && f.qend[3].n == 11);
    }
    plc_flow_free(&f);
  }
  fx_clear(&x);
}

/* Ops whose dependency lists are equal (4 or more: a block's entry ops)
 * wait through one join node inside flow.c; times and causes must be
 * those of the edges it stands for.  Ops 0..3 on streams 0..3 take 1, 2,
 * 3, 4 s; ops 4, 5 and 6 each wait for all four.  Op 4 (stream 4, 1 s)
 * starts at 4 when op 3 ends: cause 3, ends 5.  Op 5 (stream 5, 2 s): the
 * same start and cause, ends 6.  Op 6 (stream 4 after op 4, 0 s): its
 * dependencies have ended at 4, its stream predecessor ends at 5: it
 * starts and ends at 5, cause 4. */
static void test_equal_dep_lists(void)
{
  fixture x;
  fx_init(&x);
  for (int i = 0; i < 4; i++) fx_op(&x, i, -1, i + 1, 1, 0, 1);
  int a = fx_op(&x, 4, -1, 1, 1, 0, 1);
  int b = fx_op(&x, 5, -1, 2, 1, 0, 1);
  int c = fx_op(&x, 4, -1, 0, 1, 0, 1);
  for (int i = 0; i < 4; i++) fx_dep(&x, a, i), fx_dep(&x, b, i), fx_dep(&x, c, i);
  plc_flow f;
  CU_ASSERT_EQUAL(plc_flow_run(&f, x.ops, x.n, 6, 0, 1, zero, NULL), 0);
  CU_ASSERT(q_is(f.start[a], 4, 1) && q_is(f.end[a], 5, 1));
  CU_ASSERT(q_is(f.start[b], 4, 1) && q_is(f.end[b], 6, 1));
  CU_ASSERT(q_is(f.start[c], 5, 1) && q_is(f.end[c], 5, 1));
  CU_ASSERT_EQUAL(f.cause[a], 3);
  CU_ASSERT_EQUAL(f.cause[b], 3);
  CU_ASSERT_EQUAL(f.cause[c], a);
  CU_ASSERT(q_is(f.makespan, 6, 1));
  plc_flow_free(&f);
  fx_clear(&x);
}

/* ---- the naive oracle ------------------------------------------------------ */

/* Step from event to event; at each, every active op's rate is recomputed
 * from scratch: 1 in its fixed part, 1/k on a link with k active. */
static void naive_run(const fixture *x, int share, mpq_t *start, mpq_t *end)
{
  int n = x->n, phase[MAXOPS] = {0}; /* 0 waiting, 1 fixed, 2 link, 3 done */
  mpq_t rem[MAXOPS], t, dt, r;
  mpq_inits(t, dt, r, NULL);
  for (int i = 0; i < n; i++) mpq_init(rem[i]);
  for (;;) {
    for (int changed = 1; changed;) {
      changed = 0;
      for (int i = 0; i < n; i++) {
        if (phase[i] == 0) {
          int ok = 1;
          for (int j = 0; j < i; j++)
            if (x->ops[j].stream == x->ops[i].stream && phase[j] != 3) ok = 0;
          for (int d = 0; d < x->ops[i].ndeps; d++)
            if (phase[x->ops[i].deps[d]] != 3) ok = 0;
          if (!ok) continue;
          mpq_set(start[i], t);
          phase[i] = 1;
          mpq_set(rem[i], x->fixed[i]);
          if (!share || x->ops[i].link < 0) mpq_add(rem[i], rem[i], x->work[i]);
          changed = 1;
        }
        if (phase[i] == 1 && mpq_sgn(rem[i]) == 0) {
          int link = share && x->ops[i].link >= 0 && mpq_sgn(x->work[i]) > 0;
          phase[i] = link ? 2 : 3;
          if (link) mpq_set(rem[i], x->work[i]);
          else mpq_set(end[i], t);
          changed = 1;
        }
        if (phase[i] == 2 && mpq_sgn(rem[i]) == 0) {
          phase[i] = 3;
          mpq_set(end[i], t);
          changed = 1;
        }
      }
    }
    int k[MAXOPS] = {0}, active = 0;
    for (int i = 0; i < n; i++) {
      if (phase[i] == 2) k[x->ops[i].link]++;
      if (phase[i] == 1 || phase[i] == 2) active = 1;
    }
    if (!active) break;
    int first = 1;
    for (int i = 0; i < n; i++) {
      if (phase[i] != 1 && phase[i] != 2) continue;
      mpq_set(r, rem[i]);
      if (phase[i] == 2) {
        mpz_mul_ui(mpq_numref(r), mpq_numref(r), (unsigned long)k[x->ops[i].link]);
        mpq_canonicalize(r);
      }
      if (first || mpq_cmp(r, dt) < 0) mpq_set(dt, r);
      first = 0;
    }
    mpq_add(t, t, dt);
    for (int i = 0; i < n; i++) {
      if (phase[i] == 1) mpq_sub(rem[i], rem[i], dt);
      if (phase[i] == 2) {
        mpq_set(r, dt);
        mpz_mul_ui(mpq_denref(r), mpq_denref(r), (unsigned long)k[x->ops[i].link]);
        mpq_canonicalize(r);
        mpq_sub(rem[i], rem[i], r);
      }
    }
  }
  for (int i = 0; i < n; i++) mpq_clear(rem[i]);
  mpq_clears(t, dt, r, NULL);
}

static unsigned long rng_state = 12345;
static unsigned rnd(unsigned m)
{
  rng_state = rng_state * 6364136223846793005UL + 1442695040888963407UL;
  return (unsigned)((rng_state >> 33) % m);
}

/* A random graph: edges only to earlier ops, so it never deadlocks. */
static void random_fixture(fixture *x, int *nstreams, int *nlinks)
{
  int want = 1 + (int)rnd(14);
  x->n = 0;
  *nstreams = 1 + (int)rnd(4);
  *nlinks = 1 + (int)rnd(3);
  for (int i = 0; i < want; i++) {
    int link = rnd(3) ? (int)rnd((unsigned)*nlinks) : -1;
    long fnum = rnd(3) ? 0 : (long)rnd(4);
    fx_op(x, (int)rnd((unsigned)*nstreams), link, fnum, 1 + rnd(3), link >= 0 ? (long)rnd(6) : 0,
          1 + rnd(4));
    for (int d = 0; d < i; d++)
      if (rnd(5) == 0) fx_dep(x, i, d);
  }
}

/* Run x with plc_flow and with the naive simulator: how many ops differ
 * (and, with causes, whose cause is neither a dependency nor the stream
 * predecessor ending at the op's start). */
static int against_naive(fixture *x, int ns, int nl, int share, int causes)
{
  int bad = 0, n = x->n;
  mpq_t s[MAXOPS], e[MAXOPS];
  for (int i = 0; i < n; i++) mpq_inits(s[i], e[i], NULL);
  naive_run(x, share, s, e);
  plc_flow f;
  if (plc_flow_run(&f, x->ops, n, ns, nl, share, zero, NULL) != 0) bad++;
  for (int i = 0; i < n; i++) {
    if (!mpq_equal(f.start[i], s[i]) || !mpq_equal(f.end[i], e[i])) bad++;
    if (!causes)
      continue;
    int c = f.cause[i], ok = c < 0;
    for (int d = 0; d < x->ops[i].ndeps; d++) ok |= x->ops[i].deps[d] == c;
    for (int j = i - 1; j >= 0; j--)
      if (x->ops[j].stream == x->ops[i].stream) {
        ok |= j == c;
        break;
      }
    if (!ok || (c >= 0 && !mpq_equal(f.end[c], f.start[i]))) bad++;
  }
  plc_flow_free(&f);
  for (int i = 0; i < n; i++) mpq_clears(s[i], e[i], NULL);
  return bad;
}

static void test_random_against_naive(void)
{
  int bad = 0;
  for (int round = 0; round < 400; round++) {
    fixture x;
    fx_init(&x);
    int ns, nl;
    random_fixture(&x, &ns, &nl);
    for (int share = 0; share <= 1; share++)
      bad += against_naive(&x, ns, nl, share, 0);
    fx_clear(&x);
  }
  CU_ASSERT_EQUAL(bad, 0);
}

/* Random graphs whose times are whole numbers, as sim.c gives the flow
 * (a list's times in units of their common denominator): every time
 * times 12 (whole: the fixtures' denominators divide 12) and by a factor
 * of one limb (3), of two (2^70 + 5) or none, against the naive
 * simulator.  Whole keys, sums and comparisons take the flow's fast
 * paths (small keys compared by fx, large ones by their numerators);
 * sharing makes keys that are not whole again. */
static void test_random_whole(void)
{
  int bad = 0;
  mpq_t k;
  mpq_init(k);
  for (int round = 0; round < 300; round++) {
    fixture x;
    fx_init(&x);
    int ns, nl;
    random_fixture(&x, &ns, &nl);
    mpz_set_ui(mpq_numref(k), 12);
    if (round % 3 == 1)
      mpz_mul_ui(mpq_numref(k), mpq_numref(k), 3);
    if (round % 3 == 2) {
      mpz_t big;
      mpz_init(big);
      mpz_ui_pow_ui(big, 2, 70);
      mpz_add_ui(big, big, 5);
      mpz_mul(mpq_numref(k), mpq_numref(k), big);
      mpz_clear(big);
    }
    for (int i = 0; i < x.n; i++) {
      mpq_mul(x.fixed[i], x.fixed[i], k);
      mpq_mul(x.work[i], x.work[i], k);
      bad += mpz_cmp_ui(mpq_denref(x.fixed[i]), 1) != 0 ||
             mpz_cmp_ui(mpq_denref(x.work[i]), 1) != 0;
    }
    for (int share = 0; share <= 1; share++)
      bad += against_naive(&x, ns, nl, share, 1);
    fx_clear(&x);
  }
  mpq_clear(k);
  CU_ASSERT_EQUAL(bad, 0);
}

/* plc_flow_run_ends (no start times) gives what plc_flow_run gives: each
 * op's end, cause and ran, the order of the ends, the shared flags and
 * the makespan, and whether some op never started (a random op waits
 * for a later one of its stream in a fifth of the graphs), over random
 * graphs, links shared or not. */
static void test_random_ends_only(void)
{
  int bad = 0, stuck_seen = 0;
  mpq_t e;
  mpq_init(e);
  for (int round = 0; round < 300; round++) {
    fixture x;
    fx_init(&x);
    int ns, nl;
    random_fixture(&x, &ns, &nl);
    if (round % 5 == 4 && x.n >= 2) { /* op 0 waits for the last op on its stream */
      x.ops[x.n - 1].stream = x.ops[0].stream;
      fx_dep(&x, 0, x.n - 1);
    }
    for (int share = 0; share <= 1; share++) {
      plc_flow a, b;
      int sa = -2, sb = -2;
      int ra = plc_flow_run(&a, x.ops, x.n, ns, nl, share, zero, &sa);
      int rb = plc_flow_run_ends(&b, x.ops, x.n, ns, nl, share, zero, &sb);
      stuck_seen += ra != 0;
      bad += ra != rb || sa != sb || b.start != NULL || a.nended != b.nended ||
             !mpq_equal(a.makespan, b.makespan);
      for (int i = 0; i < x.n; i++) {
        plc_flow_end_get(e, &b, i);
        bad += !mpq_equal(a.end[i], e) || a.cause[i] != b.cause[i] ||
               a.ran[i] != b.ran[i] || a.shared[i] != b.shared[i];
      }
      for (int k = 0; k < a.nended && k < b.nended; k++)
        bad += a.order[k] != b.order[k];
      plc_flow_free(&a);
      plc_flow_free(&b);
    }
    fx_clear(&x);
  }
  mpq_clear(e);
  CU_ASSERT_EQUAL(bad, 0);
  CU_ASSERT(stuck_seen > 0);
}

/* Random graphs in which later ops share one dependency list of 4 to 6
 * earlier ops (as a block's entry ops do), against the naive simulator;
 * and every op's cause is a dependency or its stream predecessor that
 * ended when it started. */
static void test_random_shared_lists(void)
{
  int bad = 0;
  for (int round = 0; round < 300; round++) {
    fixture x;
    fx_init(&x);
    int ns, nl;
    random_fixture(&x, &ns, &nl);
    int n = x.n, len = 4 + (int)rnd(3);
    for (int i = len; i < n; i++)
      if (rnd(2)) {
        x.ops[i].ndeps = 0;
        for (int d = 0; d < len; d++) fx_dep(&x, i, d);
      }
    for (int share = 0; share <= 1; share++)
      bad += against_naive(&x, ns, nl, share, 1);
    fx_clear(&x);
  }
  CU_ASSERT_EQUAL(bad, 0);
}

/* Invariants: an op starts after its dependencies and its stream's previous
 * op end; a stream's ops never overlap; sharing never shortens an op below
 * its own time; and a shared link does not idle while it has work: the
 * union of its ops' link phases is exactly as long as their work. */
static void test_random_invariants(void)
{
  int bad = 0;
  mpq_t lo, hi, len, sum, a;
  mpq_inits(lo, hi, len, sum, a, NULL);
  for (int round = 0; round < 400; round++) {
    fixture x;
    fx_init(&x);
    int ns, nl;
    random_fixture(&x, &ns, &nl);
    plc_flow f;
    plc_flow_run(&f, x.ops, x.n, ns, nl, 1, zero, NULL);
    for (int i = 0; i < x.n; i++) {
      for (int d = 0; d < x.ops[i].ndeps; d++)
        if (mpq_cmp(f.start[i], f.end[x.ops[i].deps[d]]) < 0) bad++;
      for (int j = 0; j < i; j++)
        if (x.ops[j].stream == x.ops[i].stream && mpq_cmp(f.start[i], f.end[j]) < 0) bad++;
      mpq_add(a, f.start[i], x.fixed[i]);
      mpq_add(a, a, x.work[i]);
      if (mpq_cmp(f.end[i], a) < 0) bad++;
    }
    /* Link phases [start + fixed, end) of one link, in order of start: they
     * come from a work-conserving link, so their union equals their work. */
    for (int l = 0; l < nl; l++) {
      mpq_set_ui(len, 0, 1), mpq_set_ui(sum, 0, 1), mpq_set_si(hi, -1, 1);
      int idx[MAXOPS], m = 0;
      for (int i = 0; i < x.n; i++)
        if (x.ops[i].link == l && mpq_sgn(x.work[i]) > 0) idx[m++] = i;
      for (int p = 1; p < m; p++) /* insertion sort by link-phase start */
        for (int q = p; q > 0; q--) {
          mpq_t *s1 = &f.start[idx[q - 1]], *s2 = &f.start[idx[q]];
          mpq_add(lo, *s1, x.fixed[idx[q - 1]]);
          mpq_add(a, *s2, x.fixed[idx[q]]);
          if (mpq_cmp(lo, a) <= 0) break;
          int t = idx[q]; idx[q] = idx[q - 1]; idx[q - 1] = t;
        }
      for (int p = 0; p < m; p++) {
        int i = idx[p];
        mpq_add(sum, sum, x.work[i]);
        mpq_add(lo, f.start[i], x.fixed[i]);
        if (mpq_cmp(lo, hi) < 0) mpq_set(lo, hi);
        if (mpq_cmp(f.end[i], lo) > 0) {
          mpq_sub(a, f.end[i], lo);
          mpq_add(len, len, a);
          mpq_set(hi, f.end[i]);
        }
      }
      if (!mpq_equal(len, sum)) bad++;
    }
    plc_flow_free(&f);
    fx_clear(&x);
  }
  CU_ASSERT_EQUAL(bad, 0);
  mpq_clears(lo, hi, len, sum, a, NULL);
}

/* Sharing has scheduling anomalies, as real networks do: here a faster
 * link makes the step slower.  Links 0 and 1; A (3 s on link 1) and P
 * (5 s on link 1) start at 0 and share it; C is 1 s of compute.  G (link
 * 0) waits for A and C, then Q (1 s on link 1) follows G on A's stream; R
 * is 2 s of compute after P.
 *   G takes 3 s: A ends at 6 (P has 2 left, alone: ends 8); G runs 6..9;
 *     Q alone 9..10; R 8..10.  Step 10.
 *   G takes 3/2 s: G ends at 15/2, when P still has 1/2 left; Q and P
 *     share, P ends at 17/2 and Q at 9; R runs 17/2..21/2.  Step 21/2.
 * plc(5) says so; without sharing a faster op never delays anything
 * (test_random_monotone_unshared). */
static void test_sharing_anomaly(void)
{
  fixture x;
  fx_init(&x);
  fx_op(&x, 1, 1, 0, 1, 3, 1);            /* A */
  int p = fx_op(&x, 0, 1, 0, 1, 5, 1);    /* P */
  fx_op(&x, 0, -1, 2, 1, 0, 1);           /* R, after P on stream 0 */
  fx_op(&x, 2, -1, 1, 1, 0, 1);           /* C */
  int g = fx_op(&x, 1, 0, 0, 1, 3, 1);    /* G, after A on stream 1 */
  fx_dep(&x, g, 3);
  fx_op(&x, 1, 1, 0, 1, 1, 1);            /* Q, after G */
  plc_flow f;
  plc_flow_run(&f, x.ops, x.n, 3, 2, 1, zero, NULL);
  CU_ASSERT(q_is(f.makespan, 10, 1));
  plc_flow_free(&f);
  mpq_set_si(x.work[g], 3, 2);
  plc_flow_run(&f, x.ops, x.n, 3, 2, 1, zero, NULL);
  CU_ASSERT(q_is(f.end[p], 17, 2));
  CU_ASSERT(q_is(f.makespan, 21, 2));
  plc_flow_free(&f);
  fx_clear(&x);
}

/* Without sharing every end is a max-plus expression of the durations:
 * halving any op's time never makes any op end later. */
static void test_random_monotone_unshared(void)
{
  int bad = 0;
  for (int round = 0; round < 400; round++) {
    fixture x;
    fx_init(&x);
    int ns, nl;
    random_fixture(&x, &ns, &nl);
    plc_flow a, b;
    plc_flow_run(&a, x.ops, x.n, ns, nl, 0, zero, NULL);
    int k = (int)rnd((unsigned)x.n);
    mpz_mul_ui(mpq_denref(x.fixed[k]), mpq_denref(x.fixed[k]), 2);
    mpq_canonicalize(x.fixed[k]);
    mpz_mul_ui(mpq_denref(x.work[k]), mpq_denref(x.work[k]), 2);
    mpq_canonicalize(x.work[k]);
    plc_flow_run(&b, x.ops, x.n, ns, nl, 0, zero, NULL);
    for (int i = 0; i < x.n; i++)
      if (mpq_cmp(b.end[i], a.end[i]) > 0) bad++;
    plc_flow_free(&a);
    plc_flow_free(&b);
    fx_clear(&x);
  }
  CU_ASSERT_EQUAL(bad, 0);
}

/* ---- machine integers against GMP ------------------------------------------ */

/* z = a random number of about `bits` bits. */
static void rnd_big(mpz_t z, int bits)
{
  mpz_set_ui(z, 1 + rnd(1000));
  while ((int)mpz_sizeinbase(z, 2) < bits) {
    mpz_mul_2exp(z, z, 16);
    mpz_add_ui(z, z, rnd(1u << 16));
  }
}

/* Scale the random fixture's times (x.fixed, x.work and t0) by one of a
 * few kinds of factor: 1 (small fractions), a whole number (sim.c's
 * units: whole times), a huge whole number (sums pass 2^127: the run
 * falls back to GMP), a fraction over a large denominator (cross
 * products and denominators pass 2^63: falls back, or not), 1/7 or 1/30
 * (small denominators that sharing multiplies). */
static void scale_times(fixture *x, mpq_t t0, int kind)
{
  mpq_t k;
  mpq_init(k);
  mpq_set_ui(k, 1, 1);
  if (kind == 1)
    rnd_big(mpq_numref(k), 1 + (int)rnd(80));
  if (kind == 2)
    rnd_big(mpq_numref(k), 120 + (int)rnd(10));
  if (kind == 3) {
    rnd_big(mpq_numref(k), 1 + (int)rnd(40));
    rnd_big(mpq_denref(k), 30 + (int)rnd(40));
    mpz_nextprime(mpq_denref(k), mpq_denref(k));
    mpq_canonicalize(k);
  }
  if (kind == 4)
    mpq_set_ui(k, 1, rnd(2) ? 7 : 30);
  for (int i = 0; i < x->n; i++) {
    mpq_mul(x->fixed[i], x->fixed[i], k);
    mpq_mul(x->work[i], x->work[i], k);
  }
  mpq_set_ui(t0, rnd(3), 1 + rnd(2));
  mpq_canonicalize(t0);
  mpq_mul(t0, t0, k);
  mpq_clear(k);
}

/* Give op i's times as machine integers (op->q) when they are whole and
 * fit 64 bits. */
static void give_q(fixture *x, int i)
{
  mpq_srcptr v[2] = {x->fixed[i], x->work[i]};
  for (int w = 0; w < 2; w++)
    if (mpz_cmp_ui(mpq_denref(v[w]), 1) != 0 || !mpz_fits_slong_p(mpq_numref(v[w])))
      return;
  for (int w = 0; w < 2; w++)
    x->q[i][w] = (plc_flow_q){mpz_get_si(mpq_numref(v[w])), 1};
  x->ops[i].q = x->q[i];
}

/* How many fields of two runs of one graph differ: the status and stuck
 * op, the number of ends and their order, each op's start (when both
 * have starts), end, cause, ran and shared flag, the makespan. */
static int flow_diff(const plc_flow *a, const plc_flow *b, int ra, int rb, int sa, int sb)
{
  int bad = (ra != rb) + (sa != sb) + (a->n != b->n) + (a->nended != b->nended) +
            !mpq_equal(a->makespan, b->makespan);
  mpq_t ea, eb;
  mpq_inits(ea, eb, NULL);
  for (int i = 0; i < a->n && i < b->n; i++) {
    plc_flow_end_get(ea, a, i);
    plc_flow_end_get(eb, b, i);
    bad += !mpq_equal(ea, eb) || a->cause[i] != b->cause[i] || a->ran[i] != b->ran[i] ||
           a->shared[i] != b->shared[i];
    if (a->start && b->start)
      bad += !mpq_equal(a->start[i], b->start[i]);
  }
  for (int k = 0; k < a->nended && k < b->nended; k++)
    bad += a->order[k] != b->order[k];
  mpq_clears(ea, eb, NULL);
  return bad;
}

/* The run on machine integers against the run on GMP (plc_flow_no_fast),
 * field by field, over random graphs: links shared or not, some ops'
 * times given as machine integers, times scaled by each kind of
 * scale_times, from a random t0; with starts (plc_flow_run) and without
 * (plc_flow_run_ends, whose ends are then in qend).  Both the runs that
 * fit and those that fall back to GMP are seen.  Ties are many (small
 * whole times), so an integer path that broke a tie otherwise, or
 * compared or added wrongly, would change an order, a cause or an end. */
static void test_random_integers_vs_gmp(void)
{
  int bad = 0, fit = 0, fell = 0, given = 0, stuck_seen = 0;
  mpq_t t0;
  mpq_init(t0);
  for (int round = 0; round < 1500; round++) {
    fixture x;
    fx_init(&x);
    int ns, nl;
    random_fixture(&x, &ns, &nl);
    if (round % 7 == 6 && x.n >= 2) { /* op 0 waits for the last op on its stream */
      x.ops[x.n - 1].stream = x.ops[0].stream;
      fx_dep(&x, 0, x.n - 1);
    }
    scale_times(&x, t0, round % 5);
    if (round % 2)
      for (int i = 0; i < x.n; i++)
        if (rnd(3)) give_q(&x, i);
    for (int i = 0; i < x.n; i++) given += x.ops[i].q != NULL;
    for (int k = 0; k < 4; k++) {
      int share = k & 1, starts = k >> 1;
      plc_flow a, b;
      int sa = -2, sb = -2, ra, rb;
      plc_flow_no_fast = 0;
      ra = starts ? plc_flow_run(&a, x.ops, x.n, ns, nl, share, t0, &sa)
                  : plc_flow_run_ends(&a, x.ops, x.n, ns, nl, share, t0, &sa);
      plc_flow_no_fast = 1;
      rb = starts ? plc_flow_run(&b, x.ops, x.n, ns, nl, share, t0, &sb)
                  : plc_flow_run_ends(&b, x.ops, x.n, ns, nl, share, t0, &sb);
      plc_flow_no_fast = 0;
      fit += !a.big, fell += a.big;
      stuck_seen += ra != 0;
      bad += !b.big || b.qend || flow_diff(&a, &b, ra, rb, sa, sb);
      bad += (starts || a.big) != (a.qend == NULL); /* qend: ends alone, on integers */
      bad += starts != (a.start != NULL);
      plc_flow_free(&a);
      plc_flow_free(&b);
    }
    fx_clear(&x);
  }
  mpq_clear(t0);
  CU_ASSERT_EQUAL(bad, 0);
  CU_ASSERT(fit > 1000);
  CU_ASSERT(fell > 500);
  CU_ASSERT(given > 1000);
  CU_ASSERT(stuck_seen > 0);
}

int main(void)
{
  static const plc_cu_test tests[] = {
    {"two equal transfers share a link", test_two_equal},
    {"a late transfer joins a busy link", test_late_join},
    {"latency is not shared", test_latency_not_shared},
    {"three staggered transfers", test_three_staggered},
    {"links and streams", test_links_and_streams},
    {"an op that can never start is named", test_stuck},
    {"ops with equal dependency lists (a join)", test_equal_dep_lists},
    {"an episode stops when no link is shared, or at its horizon", test_calm},
    {"random shared dependency lists against a naive simulator", test_random_shared_lists},
    {"random graphs against a naive simulator", test_random_against_naive},
    {"random graphs with whole-number times against a naive simulator", test_random_whole},
    {"the ends alone are the run's ends (random graphs)", test_random_ends_only},
    {"invariants over random graphs", test_random_invariants},
    {"sharing has anomalies: a faster link, a slower step", test_sharing_anomaly},
    {"without sharing, faster ops never end anything later", test_random_monotone_unshared},
    {"machine integers give what GMP gives (random graphs)", test_random_integers_vs_gmp},
    {NULL, NULL},
  };
  mpq_init(zero);
  int rc = plc_cu_run("flow", tests);
  mpq_clear(zero);
  return rc;
}
