/* flow.c - the event-driven core: serial streams, dependencies and links
 * shared by processor sharing, exact (see flow.h).
 *
 * A run goes first on machine integers: each time is n/d in lowest terms
 * (plc_flow_q: n of 128 bits, 64 without __int128; d below 2^63).  Every
 * step the run takes on times -- a sum, a difference, a product or
 * quotient by a link's count of transfers, a comparison -- is computed
 * exactly on them or, when its result or an intermediate product would
 * not fit, flags the run (plc_flow_ar.over) instead.  So a run that ends
 * unflagged took every step on the very values GMP would have: the same
 * comparisons, so the same heap orders (ties broken by the same (a, b,
 * c)), the same events in the same order, the same ends, causes, order of
 * ends, shared flags and makespan.  A flagged run is dropped (the loop
 * stops at its next event; what it did meanwhile on a wrong value only
 * moved bounded indices) and run again, whole, on GMP rationals
 * (plc_flow_ar.big), where nothing overflows.  The event loop is written
 * once: its few steps on times (plc_flow_nadd and the like) take the one
 * number type or the other.
 *
 * Times are whole numbers mostly (sim.c runs a list in units of its
 * common denominator: below 2^80 in the shipped plans), and the steps on
 * whole numbers are a 128-bit add and compare; only a link shared by k
 * transfers divides by k. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "flow.h"
#include "xalloc.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

int plc_flow_no_fast;

/* ---- times on machine integers -------------------------------------------- */

#ifdef __SIZEOF_INT128__
__extension__ typedef unsigned __int128 plc_flow_uint;
#else
typedef unsigned long long plc_flow_uint;
#endif
typedef unsigned long long plc_flow_u64;

#define PLC_FLOW_INT_MAX ((plc_flow_int)((plc_flow_uint)-1 >> 1))
#define PLC_FLOW_D_MAX ((plc_flow_u64)LLONG_MAX) /* so a d is a plc_flow_int too */

static plc_flow_u64 plc_flow_gcd(plc_flow_u64 a, plc_flow_u64 b)
{
  while (b) {
    plc_flow_u64 r = a % b;
    a = b;
    b = r;
  }
  return a;
}

/* |n| mod m, m > 0 (a 64-bit division when |n| has 64 bits). */
static plc_flow_u64 plc_flow_mod(plc_flow_int n, plc_flow_u64 m)
{
  plc_flow_uint u = n < 0 ? -(plc_flow_uint)n : (plc_flow_uint)n;
  return u <= (plc_flow_u64)-1 ? (plc_flow_u64)u % m : (plc_flow_u64)(u % m);
}

/* q on machine integers into r; 0 when it does not fit. */
static int plc_fq_get(plc_flow_q *r, mpq_srcptr q)
{
  mpz_srcptr num = mpq_numref(q), den = mpq_denref(q);
  size_t n = mpz_size(num);
  if (mpz_size(den) != 1 || mpz_getlimbn(den, 0) > PLC_FLOW_D_MAX ||
      n * GMP_NUMB_BITS > sizeof(plc_flow_uint) * CHAR_BIT)
    return 0;
  plc_flow_uint v = 0;
  for (size_t k = n; k-- > 0;)
    v = (v << (GMP_NUMB_BITS - 1) << 1) | mpz_getlimbn(num, (mp_size_t)k);
  if (v > (plc_flow_uint)PLC_FLOW_INT_MAX)
    return 0;
  r->n = mpz_sgn(num) < 0 ? -(plc_flow_int)v : (plc_flow_int)v;
  r->d = mpz_getlimbn(den, 0);
  return 1;
}

/* z = v (z initialised). */
static void plc_flow_zput(mpz_ptr z, plc_flow_int v)
{
  plc_flow_uint u = v < 0 ? -(plc_flow_uint)v : (plc_flow_uint)v;
  int n = 0;
  for (plc_flow_uint w = u; w; w = w >> (GMP_NUMB_BITS - 1) >> 1)
    n++;
  mp_limb_t *p = mpz_limbs_write(z, n > 0 ? n : 1);
  for (int k = 0; k < n; k++, u = u >> (GMP_NUMB_BITS - 1) >> 1)
    p[k] = (mp_limb_t)u;
  mpz_limbs_finish(z, v < 0 ? -n : n);
}

/* q = v (q initialised; v is in lowest terms, so q is). */
static void plc_fq_put(mpq_ptr q, const plc_flow_q *v)
{
  plc_flow_zput(mpq_numref(q), v->n);
  plc_flow_zput(mpq_denref(q), (plc_flow_int)v->d);
}

/* r = a + b, or a - b with sub; 0 when it does not fit.  With g =
 * gcd(ad, bd), a/ad + b/bd = (a (bd/g) + b (ad/g)) / ((ad/g) bd), then
 * in lowest terms. */
static int plc_fq_add(plc_flow_q *r, const plc_flow_q *a, const plc_flow_q *b, int sub)
{
  plc_flow_u64 g = plc_flow_gcd(a->d, b->d), ad = a->d / g, bd = b->d / g, d;
  plc_flow_int n, x, y;
  if (__builtin_mul_overflow(a->n, (plc_flow_int)bd, &x) ||
      __builtin_mul_overflow(b->n, (plc_flow_int)ad, &y) ||
      (sub ? __builtin_sub_overflow(x, y, &n) : __builtin_add_overflow(x, y, &n)) ||
      __builtin_mul_overflow(ad, b->d, &d) || d > PLC_FLOW_D_MAX)
    return 0;
  plc_flow_u64 h = d == 1 ? 1 : plc_flow_gcd(d, plc_flow_mod(n, d)); /* d when n is 0: 0/1 */
  r->n = n / (plc_flow_int)h, r->d = d / h;
  return 1;
}

/* q x k or, with div, q / k (k > 1); 0 when it does not fit.  q is in
 * lowest terms, so only k can share factors with its denominator (its
 * numerator, dividing): a gcd with k keeps the result in lowest terms. */
static int plc_fq_scale(plc_flow_q *q, plc_flow_u64 k, int div)
{
  if (div) {
    plc_flow_u64 g = plc_flow_gcd(k, plc_flow_mod(q->n, k)), d; /* k when q is 0 */
    if (__builtin_mul_overflow(q->d, k / g, &d) || d > PLC_FLOW_D_MAX)
      return 0;
    q->n /= (plc_flow_int)g, q->d = d;
    return 1;
  }
  plc_flow_u64 g = q->d == 1 ? 1 : plc_flow_gcd(q->d, k);
  plc_flow_int n;
  if (__builtin_mul_overflow(q->n, (plc_flow_int)(k / g), &n))
    return 0;
  q->n = n, q->d /= g;
  return 1;
}

/* a against b (-1, 0, 1) over different denominators: the cross
 * products, when they fit; else *over is set. */
static int plc_fq_cmp_cross(const plc_flow_q *a, const plc_flow_q *b, int *over)
{
  plc_flow_int x, y;
  if (__builtin_mul_overflow(a->n, (plc_flow_int)b->d, &x) ||
      __builtin_mul_overflow(b->n, (plc_flow_int)a->d, &y)) {
    *over = 1;
    return 0;
  }
  return (x > y) - (x < y);
}

/* a against b; over one denominator (whole numbers, mostly) by the
 * numerators alone. */
static inline int plc_fq_cmp(const plc_flow_q *a, const plc_flow_q *b, int *over)
{
  if (a->d == b->d)
    return (a->n > b->n) - (a->n < b->n);
  return plc_fq_cmp_cross(a, b, over);
}

/* ---- times on GMP rationals (the fallback) -------------------------------- */

/* Is q a whole number?  Read from the limbs (inline in gmp.h), not by a
 * call. */
static inline int plc_flow_whole(mpq_srcptr q)
{
  mpz_srcptr den = mpq_denref(q);
  return mpz_size(den) == 1 && mpz_getlimbn(den, 0) == 1;
}

/* mpq_cmp, on the numerators alone when both are whole numbers. */
static int plc_flow_cmp(mpq_srcptr a, mpq_srcptr b)
{
  if (plc_flow_whole(a) && plc_flow_whole(b))
    return mpz_cmp(mpq_numref(a), mpq_numref(b));
  return mpq_cmp(a, b);
}

/* r = a + b, or a - b with sub: on the numerators alone when both are
 * whole numbers, without the gcds of mpq_add and mpq_sub. */
static void plc_flow_add(mpq_ptr r, mpq_srcptr a, mpq_srcptr b, int sub)
{
  if (plc_flow_whole(a) && plc_flow_whole(b)) {
    if (sub)
      mpz_sub(mpq_numref(r), mpq_numref(a), mpq_numref(b));
    else
      mpz_add(mpq_numref(r), mpq_numref(a), mpq_numref(b));
    if (!plc_flow_whole(r))
      mpz_set_ui(mpq_denref(r), 1);
  } else if (sub) {
    mpq_sub(r, a, b);
  } else {
    mpq_add(r, a, b);
  }
}

/* q x k or, with div, q / k (k > 0), q in lowest terms and so the
 * result: only k can share factors with q's denominator (its numerator),
 * so a gcd with k, not mpq_canonicalize's of the whole. */
static void plc_flow_scale(mpq_ptr q, unsigned long k, int div)
{
  if (!div && plc_flow_whole(q)) { /* no gcd to take */
    mpz_mul_ui(mpq_numref(q), mpq_numref(q), k);
    return;
  }
  mpz_ptr keep = div ? mpq_denref(q) : mpq_numref(q), cut = div ? mpq_numref(q) : mpq_denref(q);
  unsigned long g = mpz_gcd_ui(NULL, cut, k); /* k when cut is 0: q stays 0/1 */
  if (g > 1)
    mpz_divexact_ui(cut, cut, g);
  mpz_mul_ui(keep, keep, k / g);
}

/* mpq_init and mpq_set in one (GMP has no mpq_init_set). */
static void plc_flow_init_set(mpq_ptr q, mpq_srcptr v)
{
  mpz_init_set(mpq_numref(q), mpq_numref(v));
  mpz_init_set(mpq_denref(q), mpq_denref(v));
}

/* ---- a time of a run, on the one or the other ----------------------------- */

typedef union plc_flow_num {
  plc_flow_q s; /* machine integers */
  mpq_t q;      /* GMP, initialised */
} plc_flow_num;

/* The number type of a run: big for GMP; over is set when a step on
 * machine integers did not fit. */
typedef struct plc_flow_ar {
  int big, over;
  mpq_t given;          /* on GMP: scratch for an op's time given as plc_flow_q */
} plc_flow_ar;

static void plc_flow_ninit(const plc_flow_ar *ar, plc_flow_num *x)
{
  if (ar->big)
    mpq_init(x->q);
  else
    x->s = (plc_flow_q){0, 1};
}

static void plc_flow_nclear(const plc_flow_ar *ar, plc_flow_num *x)
{
  if (ar->big)
    mpq_clear(x->q);
}

static inline void plc_flow_nset(const plc_flow_ar *ar, plc_flow_num *r, const plc_flow_num *a)
{
  if (ar->big)
    mpq_set(r->q, a->q);
  else
    r->s = a->s;
}

/* r = a + b, or a - b with sub, on machine integers: a 128-bit add or
 * subtract when both are whole. */
static inline void plc_flow_qadd(plc_flow_ar *ar, plc_flow_q *r, const plc_flow_q *a,
                                 const plc_flow_q *b, int sub)
{
  plc_flow_int n;
  if (a->d == 1 && b->d == 1 &&
      !(sub ? __builtin_sub_overflow(a->n, b->n, &n) : __builtin_add_overflow(a->n, b->n, &n)))
    r->n = n, r->d = 1;
  else if (!plc_fq_add(r, a, b, sub))
    ar->over = 1;
}

/* r = a + b, or a - b with sub. */
static inline void plc_flow_nadd(plc_flow_ar *ar, plc_flow_num *r, const plc_flow_num *a,
                                 const plc_flow_num *b, int sub)
{
  if (ar->big)
    plc_flow_add(r->q, a->q, b->q, sub);
  else
    plc_flow_qadd(ar, &r->s, &a->s, &b->s, sub);
}

/* r = q, a given time (NULL: 0). */
static void plc_flow_nset_in(plc_flow_ar *ar, plc_flow_num *r, mpq_srcptr q)
{
  if (ar->big && q)
    mpq_set(r->q, q);
  else if (ar->big)
    mpq_set_ui(r->q, 0, 1);
  else if (!q)
    r->s = (plc_flow_q){0, 1};
  else if (!plc_fq_get(&r->s, q))
    ar->over = 1;
}

/* Op o's fixed part (work: its work), > 0? */
static inline int plc_flow_pos(const plc_flow_op *o, int work)
{
  if (o->q)
    return o->q[work].n > 0;
  mpq_srcptr x = work ? o->work : o->fixed;
  return x && mpq_sgn(x) > 0;
}

/* plc_flow_nadd_op but for machine integers given. */
static void plc_flow_nadd_op_rest(plc_flow_ar *ar, plc_flow_num *r, const plc_flow_num *a,
                                  const plc_flow_op *o, int work)
{
  mpq_srcptr x = work ? o->work : o->fixed;
  plc_flow_q b;
  if (ar->big) {
    if (o->q) {
      plc_fq_put(ar->given, &o->q[work]);
      x = ar->given;
    }
    plc_flow_add(r->q, a->q, x, 0);
  } else if (plc_fq_get(&b, x)) {
    plc_flow_qadd(ar, &r->s, &a->s, &b, 0);
  } else {
    ar->over = 1;
  }
}

/* r = a + op o's fixed part (work: its work), which is > 0. */
static inline void plc_flow_nadd_op(plc_flow_ar *ar, plc_flow_num *r, const plc_flow_num *a,
                                    const plc_flow_op *o, int work)
{
  if (!ar->big && o->q)
    plc_flow_qadd(ar, &r->s, &a->s, &o->q[work], 0);
  else
    plc_flow_nadd_op_rest(ar, r, a, o, work);
}

/* q x k or, with div, q / k (k > 0). */
static void plc_flow_nscale(plc_flow_ar *ar, plc_flow_num *q, unsigned long k, int div)
{
  if (k == 1) /* one transfer on its link: the most common case */
    return;
  if (ar->big)
    plc_flow_scale(q->q, k, div);
  else if (!plc_fq_scale(&q->s, k, div))
    ar->over = 1;
}

static inline int plc_flow_ncmp(plc_flow_ar *ar, const plc_flow_num *a, const plc_flow_num *b)
{
  return ar->big ? plc_flow_cmp(a->q, b->q) : plc_fq_cmp(&a->s, &b->s, &ar->over);
}

/* ---- a binary min-heap of (time key, a, b, c) ------------------------------
 * Ties are broken by a, b, c, which makes every run deterministic.
 * Entries move whole: on GMP each key's limbs move with it, as mpq_swap
 * would move them, so keys are initialised once and reused. */

typedef struct plc_flow_ent {
  plc_flow_num key;
  int a, b;
  unsigned c;
} plc_flow_ent;

typedef struct plc_flow_heap {
  plc_flow_ent *e;
  int n, cap;
  plc_flow_ar *ar;
} plc_flow_heap;

static inline int plc_flow_less(plc_flow_heap *h, const plc_flow_ent *x, const plc_flow_ent *y)
{
  int c = plc_flow_ncmp(h->ar, &x->key, &y->key);
  if (c) return c < 0;
  if (x->a != y->a) return x->a < y->a;
  if (x->b != y->b) return x->b < y->b;
  return x->c < y->c;
}

/* Push key's value, on GMP swapped in (not copied): key is left holding
 * some other value, its limbs reused; take it as scratch either way.  The
 * new entry sifts up as a hole that parents move down into. */
static void plc_flow_push_any(plc_flow_heap *h, plc_flow_num *key, int a, int b, unsigned c)
{
  if (h->n == h->cap) {
    int cap = h->cap ? 2 * h->cap : 16;
    h->e = plc_xrealloc(h->e, (size_t)cap * sizeof *h->e);
    for (int i = h->cap; i < cap; i++) plc_flow_ninit(h->ar, &h->e[i].key);
    h->cap = cap;
  }
  int i = h->n++;
  plc_flow_ent x;
  if (h->ar->big) {
    x.key = h->e[i].key; /* its limbs are reused */
    mpq_swap(x.key.q, key->q);
  } else {
    x.key.s = key->s;
  }
  x.a = a, x.b = b, x.c = c;
  for (; i > 0 && plc_flow_less(h, &x, &h->e[(i - 1) / 2]); i = (i - 1) / 2)
    h->e[i] = h->e[(i - 1) / 2];
  h->e[i] = x;
}

/* plc_flow_push_any, inline for a machine-integer key into an empty heap
 * (mostly: few events wait at once). */
static inline void plc_flow_push(plc_flow_heap *h, plc_flow_num *key, int a, int b, unsigned c)
{
  if (h->n == 0 && h->cap > 0 && !h->ar->big) {
    h->n = 1;
    h->e[0].key.s = key->s;
    h->e[0].a = a, h->e[0].b = b, h->e[0].c = c;
  } else {
    plc_flow_push_any(h, key, a, b, c);
  }
}

/* plc_flow_pop of a root not alone: the last entry sifts down from the
 * root as a hole. */
static void plc_flow_pop_rest(plc_flow_heap *h)
{
  plc_flow_ent root = h->e[0], x = h->e[h->n];
  int i = 0;
  for (;;) {
    int l = 2 * i + 1, m = l;
    if (l >= h->n) break;
    if (l + 1 < h->n && plc_flow_less(h, &h->e[l + 1], &h->e[l])) m = l + 1;
    if (!plc_flow_less(h, &h->e[m], &x)) break;
    h->e[i] = h->e[m];
    i = m;
  }
  h->e[i] = x;
  h->e[h->n] = root;
}

/* Remove the root; it stays readable at h->e[h->n] until the next push. */
static inline void plc_flow_pop(plc_flow_heap *h)
{
  if (--h->n > 0) /* else the root was alone (mostly) */
    plc_flow_pop_rest(h);
}

static void plc_flow_heap_free(plc_flow_heap *h)
{
  for (int i = 0; i < h->cap; i++) plc_flow_nclear(h->ar, &h->e[i].key);
  free(h->e);
}

/* ---- the simulation state ------------------------------------------------ */

enum { PLC_FLOW_EV_FIXED, PLC_FLOW_EV_LINK };

/* A physical link: k transfers active; its virtual time was v at real time
 * tv and advances at 1/k; `ends` holds each active transfer's virtual end. */
typedef struct plc_flow_link {
  int k;
  unsigned stamp;       /* only the newest scheduled event of a link counts */
  plc_flow_num v, tv;
  plc_flow_heap ends;
} plc_flow_link;

typedef struct plc_flow_state {
  const plc_flow_op *ops;
  plc_flow *f;
  plc_flow_ar ar;       /* the run's number type */
  int n, share, starts;
  int nnodes;           /* n ops, then the joins (see plc_flow_joins) */
  int *waiting;         /* per node: dependencies and stream predecessor not yet ended */
  int *succ, *succ_at;  /* successors of node i: succ[succ_at[i] .. succ_at[i+1]) */
  int *join_of;         /* per op: the join it waits through, or -1 */
  int last_end;         /* the op that ended last, or -1 */
  int *work_phase;      /* the op's fixed part is over and it holds its link */
  int *ready, nready;   /* ops that may start now */
  int *mem;             /* holds succ_at, waiting, ready and work_phase */
  plc_flow_q *qstart;   /* on machine integers, when starts are kept: per op */
  plc_flow_link *links;
  int nlinks;
  plc_flow_heap events;
  plc_flow_num tmp;
  plc_flow_calm *calm;  /* an episode (plc_flow_run_calm), else NULL; then */
  int *busy_on;         /* per link, its transfers under way, and */
  int crowded;          /* how many links have two or more */
} plc_flow_state;

static int plc_flow_has_work(const plc_flow_state *st, int i)
{
  return st->share && st->ops[i].link >= 0 && plc_flow_pos(&st->ops[i], 1);
}

/* ---- the graph ------------------------------------------------------------
 * Many ops wait for the same long list of ops: every entry op of a block
 * waits for all the ops the schedule makes the block wait for, so a graph
 * written op by op holds (entries x waits) edges, tens of millions on a
 * large step.  Ops whose dependency lists are equal (and at least
 * PLC_FLOW_JOIN_MIN long) share one join node instead: the list's ops lead
 * to the join, the join to each op.  A join takes no time and has no
 * stream; when its last dependency ends it releases its ops at once, with
 * that dependency as their cause, so times and causes are those of the
 * edges it replaces. */

enum { PLC_FLOW_JOIN_MIN = 4 };

/* A hash of a few elements of a list (its length, ends and 8 evenly
 * spaced ones): lists hundreds long cost O(1) here, and the few whose
 * samples agree are told apart by memcmp. */
static unsigned long plc_flow_hash(const int *d, int n)
{
  unsigned long h = 1469598103934665603UL ^ (unsigned long)n;
  for (int j = 0; j < 10; j++) {
    int k = j == 0 ? 0 : j == 9 ? n - 1 : (int)((long)n * j / 9);
    h = (h ^ (unsigned)d[k]) * 1099511628211UL;
  }
  return h;
}

static int plc_flow_same_deps(const plc_flow_op *a, const plc_flow_op *b)
{
  return a->ndeps == b->ndeps &&
         (a->deps == b->deps || !memcmp(a->deps, b->deps, (size_t)a->ndeps * sizeof *a->deps));
}

/* join_of[i]: the join op i waits through, or -1 (join_of NULL when no
 * op does); returns how many. */
static int plc_flow_joins(plc_flow_state *st)
{
  const plc_flow_op *ops = st->ops;
  int n = st->n, nj = 0, cand = 0;
  for (int i = 0; i < n; i++)
    cand += ops[i].ndeps >= PLC_FLOW_JOIN_MIN;
  st->join_of = NULL;
  if (cand < 2)
    return 0;
  st->join_of = plc_xmalloc(((size_t)n + 1) * sizeof *st->join_of);
  for (int i = 0; i < n; i++)
    st->join_of[i] = -1;
  size_t size = 4;
  while (size < 2 * (size_t)cand) size *= 2;
  int *tab = plc_xmalloc(size * sizeof *tab);
  for (size_t h = 0; h < size; h++) tab[h] = -1;
  for (int i = 0; i < n; i++) {
    if (ops[i].ndeps < PLC_FLOW_JOIN_MIN)
      continue;
    size_t h = plc_flow_hash(ops[i].deps, ops[i].ndeps) & (size - 1);
    while (tab[h] >= 0 && !plc_flow_same_deps(&ops[tab[h]], &ops[i])) h = (h + 1) & (size - 1);
    if (tab[h] < 0) {
      tab[h] = i;
      continue;
    }
    int k = tab[h];
    if (st->join_of[k] < 0) st->join_of[k] = nj++;
    st->join_of[i] = st->join_of[k];
  }
  free(tab);
  return nj;
}

/* The edge x -> y: counted (into succ_at[x + 2] and y's waiting), or
 * with fill written (at succ_at[x + 1], which moves on). */
static inline void plc_flow_edge(plc_flow_state *st, int x, int y, int fill)
{
  if (fill)
    st->succ[st->succ_at[x + 1]++] = y;
  else
    st->succ_at[x + 2]++, st->waiting[y]++;
}

/* Every edge, in one order both times: into op i from its dependencies,
 * or from its join (and, for the join's first op, into the join from the
 * dependencies), then from op i to the next op of its stream. */
static inline void plc_flow_edges(plc_flow_state *st, const int *first_of, const int *next,
                                  int fill)
{
  for (int i = 0; i < st->n; i++) {
    const plc_flow_op *o = &st->ops[i];
    int j = st->join_of ? st->join_of[i] : -1, to = i;
    if (j >= 0) {
      plc_flow_edge(st, st->n + j, i, fill);
      to = first_of[j] == i ? st->n + j : -1;
    }
    for (int d = 0; to >= 0 && d < o->ndeps; d++)
      plc_flow_edge(st, o->deps[d], to, fill);
    if (next[i] >= 0)
      plc_flow_edge(st, i, next[i], fill);
  }
}

/* Successor lists in one array: each dependency edge reversed (through
 * joins), and each op to the next op of its stream.  succ_at, waiting,
 * ready and work_phase are one zeroed block, st->mem. */
static void plc_flow_graph(plc_flow_state *st, int nstreams)
{
  int n = st->n, nj = plc_flow_joins(st), nn = n + nj;
  int *tmp = plc_xmalloc(((size_t)n + (size_t)nstreams + (size_t)nj + 1) * sizeof *tmp);
  int *next = tmp, *last = tmp + n, *first_of = last + nstreams;
  for (int j = 0; j < nj; j++) first_of[j] = -1;
  for (int i = 0; st->join_of && i < n; i++)
    if (st->join_of[i] >= 0 && first_of[st->join_of[i]] < 0) first_of[st->join_of[i]] = i;
  for (int s = 0; s < nstreams; s++) last[s] = -1;
  st->nnodes = nn;
  st->mem = plc_xcalloc(2 * (size_t)nn + 2 * (size_t)n + 4, sizeof *st->mem);
  st->succ_at = st->mem;                   /* nn + 2 */
  st->waiting = st->succ_at + nn + 2;      /* nn */
  st->ready = st->waiting + nn;            /* n + 1 */
  st->work_phase = st->ready + n + 1;      /* n + 1 */
  for (int i = n - 1; i >= 0; i--) {
    int s = st->ops[i].stream;
    next[i] = last[s];
    last[s] = i;
  }
  plc_flow_edges(st, first_of, next, 0);
  for (int x = 0; x < nn; x++) st->succ_at[x + 2] += st->succ_at[x + 1];
  st->succ = plc_xmalloc(((size_t)st->succ_at[nn + 1] + 1) * sizeof *st->succ);
  plc_flow_edges(st, first_of, next, 1); /* now x's are succ_at[x] .. succ_at[x + 1] */
  free(tmp);
}

/* Bring a link's virtual time to real time t. */
static void plc_flow_advance(plc_flow_state *st, plc_flow_link *l, const plc_flow_num *t)
{
  if (l->k > 0) {
    plc_flow_nadd(&st->ar, &st->tmp, t, &l->tv, 1);
    plc_flow_nscale(&st->ar, &st->tmp, (unsigned long)l->k, 1);
    plc_flow_nadd(&st->ar, &l->v, &l->v, &st->tmp, 0);
  }
  plc_flow_nset(&st->ar, &l->tv, t);
}

/* Schedule the link's next end: real time tv + (earliest virtual end - v) k. */
static void plc_flow_reschedule(plc_flow_state *st, int li)
{
  plc_flow_link *l = &st->links[li];
  l->stamp++;
  if (l->k == 0) return;
  plc_flow_nadd(&st->ar, &st->tmp, &l->ends.e[0].key, &l->v, 1);
  plc_flow_nscale(&st->ar, &st->tmp, (unsigned long)l->k, 0);
  plc_flow_nadd(&st->ar, &st->tmp, &st->tmp, &l->tv, 0);
  plc_flow_push(&st->events, &st->tmp, PLC_FLOW_EV_LINK, li, l->stamp);
}

static void plc_flow_join_link(plc_flow_state *st, int i, const plc_flow_num *t)
{
  int li = st->ops[i].link;
  plc_flow_link *l = &st->links[li];
  plc_flow_advance(st, l, t);
  plc_flow_nadd_op(&st->ar, &st->tmp, &l->v, &st->ops[i], 1);
  plc_flow_push(&l->ends, &st->tmp, i, 0, 0);
  l->k++;
  if (l->k > 1) /* every transfer on the link now shares it */
    for (int e = 0; e < l->ends.n; e++) st->f->shared[l->ends.e[e].a] = 1;
  st->work_phase[i] = 1;
  plc_flow_reschedule(st, li);
}

/* Node x's predecessor i ended: x is ready (op) or releases its ops (join)
 * once nothing else holds it. */
static void plc_flow_release(plc_flow_state *st, int x, int i);

/* A join's last predecessor i ended: its ops are released. */
static void plc_flow_release_join(plc_flow_state *st, int x, int i)
{
  for (int k = st->succ_at[x]; k < st->succ_at[x + 1]; k++) plc_flow_release(st, st->succ[k], i);
}

static inline void plc_flow_release(plc_flow_state *st, int x, int i)
{
  if (--st->waiting[x] != 0)
    return;
  if (x < st->n) {
    st->f->cause[x] = i;
    st->ready[st->nready++] = x;
  } else {
    plc_flow_release_join(st, x, i);
  }
}

/* An episode (plc_flow_run_calm) counts per link the transfers that
 * take time under way on it: op i starts (up 1) or ends (-1).  Out of
 * line: the runs that do not count keep start and end small enough for
 * GCC to take them into the loop. */
static __attribute__((noinline)) void plc_flow_calm_count(plc_flow_state *st, int i, int up)
{
  const plc_flow_op *o = &st->ops[i];
  if (o->link < 0 || !(plc_flow_pos(o, 0) || plc_flow_pos(o, 1)))
    return;
  if (up && ++st->busy_on[o->link] == 2)
    st->crowded++;
  if (!up && st->busy_on[o->link]-- == 2)
    st->crowded--;
}

/* Op i ends (or, with start, starts) at t. */
static inline void plc_flow_note(plc_flow_state *st, int i, const plc_flow_num *t, int start)
{
  if (!st->ar.big)
    (start ? st->qstart : st->f->qend)[i] = t->s;
  else
    plc_flow_init_set((start ? st->f->start : st->f->end)[i], t->q);
}

static inline __attribute__((always_inline)) void plc_flow_end(plc_flow_state *st, int i,
                                                               const plc_flow_num *t)
{
  plc_flow_note(st, i, t, 0);
  if (st->calm)
    plc_flow_calm_count(st, i, 0);
  st->f->ran[i] = 1;
  st->f->order[st->f->nended++] = i;
  st->last_end = i; /* times only grow: the last op to end ends latest */
  for (int k = st->succ_at[i]; k < st->succ_at[i + 1]; k++) plc_flow_release(st, st->succ[k], i);
}

/* Start op i at t: its fixed part as a timed event, else its transfer on
 * its link, else (nothing to do) it ends at once. */
static inline __attribute__((always_inline)) void plc_flow_start(plc_flow_state *st, int i,
                                                                 const plc_flow_num *t)
{
  const plc_flow_op *o = &st->ops[i];
  if (st->starts)
    plc_flow_note(st, i, t, 1);
  if (st->calm)
    plc_flow_calm_count(st, i, 1);
  int fixed = plc_flow_pos(o, 0), work = !st->share && plc_flow_pos(o, 1);
  if (fixed || work) { /* times are never negative */
    plc_flow_num *x = &st->tmp;
    if (fixed) plc_flow_nadd_op(&st->ar, x, t, o, 0);
    if (work) plc_flow_nadd_op(&st->ar, x, fixed ? x : t, o, 1);
    plc_flow_push(&st->events, x, PLC_FLOW_EV_FIXED, i, 0);
  }
  else if (plc_flow_has_work(st, i))
    plc_flow_join_link(st, i, t);
  else
    plc_flow_end(st, i, t);
}

static void plc_flow_start_ready(plc_flow_state *st, const plc_flow_num *t)
{
  while (st->nready > 0) plc_flow_start(st, st->ready[--st->nready], t);
}

/* The link's earliest transfers have reached their virtual end at t. */
static void plc_flow_link_event(plc_flow_state *st, int li, unsigned stamp,
                                const plc_flow_num *t)
{
  plc_flow_link *l = &st->links[li];
  if (stamp != l->stamp) return;
  plc_flow_advance(st, l, t);
  while (l->ends.n > 0 && plc_flow_ncmp(&st->ar, &l->ends.e[0].key, &l->v) <= 0) {
    int i = l->ends.e[0].a;
    plc_flow_pop(&l->ends);
    l->k--;
    plc_flow_end(st, i, t);
  }
  plc_flow_reschedule(st, li);
}

/* An episode stops before the next event (after every event up to t):
 * at t when t > t0 and no link is crowded, at the horizon when the next
 * event comes after it (t moves there: nothing happens in between). */
static __attribute__((noinline)) int plc_flow_calm_stop(plc_flow_state *st, plc_flow_num *t,
                                                       const plc_flow_num *t0)
{
  if (st->calm->to_end)
    return 0;
  plc_flow_num *next = &st->events.e[0].key;
  plc_flow_num horizon = {.s = st->calm->horizon};
  if (st->crowded == 0 && plc_flow_ncmp(&st->ar, t, t0) > 0 &&
      plc_flow_ncmp(&st->ar, next, t) > 0)
    return 1;
  if (plc_flow_ncmp(&st->ar, next, &horizon) <= 0)
    return 0;
  t->s = horizon.s;
  return 1;
}

/* An episode's state at t (plc_flow_calm): the ops ended, those under way
 * (in their fixed part: an event; on their link: its heap) and what is
 * left of them.  A transfer's work left is its virtual end less its
 * link's virtual time: seconds at full speed, however many share it. */
static __attribute__((noinline)) void plc_flow_calm_out(plc_flow_state *st, const plc_flow_num *t,
                                                       int stopped)
{
  plc_flow_calm *c = st->calm;
  c->stopped = stopped;
  c->t = t->s;
  for (int i = 0; i < st->n; i++) c->state[i] = st->f->ran[i] ? 2 : 0;
  for (int k = 0; k < st->events.n; k++) {
    const plc_flow_ent *e = &st->events.e[k];
    if (e->a != PLC_FLOW_EV_FIXED)
      continue;
    c->state[e->b] = 1;
    plc_flow_qadd(&st->ar, &c->rest[2 * e->b], &e->key.s, &t->s, 1);
    c->rest[2 * e->b + 1] = plc_flow_has_work(st, e->b) ? st->ops[e->b].q[1] : (plc_flow_q){0, 1};
  }
  for (int li = 0; li < st->nlinks; li++) {
    plc_flow_link *l = &st->links[li];
    if (l->ends.n == 0)
      continue;
    plc_flow_advance(st, l, t);
    for (int k = 0; k < l->ends.n; k++) {
      int i = l->ends.e[k].a;
      c->state[i] = 1;
      c->rest[2 * i] = (plc_flow_q){0, 1};
      plc_flow_qadd(&st->ar, &c->rest[2 * i + 1], &l->ends.e[k].key.s, &l->v.s, 1);
    }
  }
}

/* The events in time order, until none is left or (on machine integers)
 * a step did not fit, or an episode stops. */
static void plc_flow_loop(plc_flow_state *st, mpq_srcptr t0)
{
  plc_flow_num t, t0n;
  plc_flow_ninit(&st->ar, &t);
  plc_flow_nset_in(&st->ar, &t, t0);
  t0n = t; /* an episode runs on machine integers: a copy */
  int stopped = 0;
  if (!st->ar.over)
    plc_flow_start_ready(st, &t);
  while (st->events.n > 0 && !st->ar.over) {
    if (st->calm && (stopped = plc_flow_calm_stop(st, &t, &t0n)))
      break;
    plc_flow_pop(&st->events);
    plc_flow_ent *e = &st->events.e[st->events.n];
    if (st->ar.big)
      mpq_swap(t.q, e->key.q); /* e is out of the heap: its key is scratch now */
    else
      t.s = e->key.s;
    if (e->a == PLC_FLOW_EV_LINK)
      plc_flow_link_event(st, e->b, e->c, &t);
    else if (plc_flow_has_work(st, e->b) && !st->work_phase[e->b])
      plc_flow_join_link(st, e->b, &t);
    else
      plc_flow_end(st, e->b, &t);
    plc_flow_start_ready(st, &t);
  }
  if (st->calm && !st->ar.over)
    plc_flow_calm_out(st, &t, stopped);
  plc_flow_nclear(&st->ar, &t);
}

/* On GMP, start and end times are initialised when an op starts and ends,
 * each straight to its value (one allocation of the right size, not an
 * mpq_init and a reallocation); plc_flow_finish initialises those of the
 * ops that never ran.  An op that starts always ends.  On machine
 * integers they go to qstart and qend. */
static void plc_flow_init(plc_flow_state *st, int n, mpq_srcptr t0, int starts)
{
  plc_flow *f = st->f;
  int big = st->ar.big;
  f->n = n;
  f->big = big;
  f->start = starts && big ? plc_xmalloc(((size_t)n + 1) * sizeof *f->start) : NULL;
  st->qstart = starts && !big ? plc_xmalloc(((size_t)n + 1) * sizeof *st->qstart) : NULL;
  f->end = big ? plc_xmalloc(((size_t)n + 1) * sizeof *f->end) : NULL;
  f->qend = big ? NULL : plc_xmalloc(((size_t)n + 1) * sizeof *f->qend);
  f->cause = plc_xmalloc((3 * (size_t)n + 1) * sizeof *f->cause); /* and ran, order */
  f->ran = f->cause + n;
  f->order = f->ran + n;
  memset(f->ran, 0, (size_t)n * sizeof *f->ran);
  f->nended = 0;
  f->shared = plc_xcalloc((size_t)n + 1, sizeof *f->shared);
  for (int i = 0; i < n; i++) f->cause[i] = -1;
  mpq_init(f->makespan);
  if (t0)
    mpq_set(f->makespan, t0);
}

/* A run with starts on machine integers left as plc_flow_run leaves it:
 * starts and ends as rationals (0 for the ops that never ran). */
static void plc_flow_to_mpq(plc_flow_state *st)
{
  plc_flow *f = st->f;
  f->start = plc_xmalloc(((size_t)f->n + 1) * sizeof *f->start);
  f->end = plc_xmalloc(((size_t)f->n + 1) * sizeof *f->end);
  for (int i = 0; i < f->n; i++) {
    mpq_inits(f->start[i], f->end[i], NULL);
    if (f->ran[i]) {
      plc_fq_put(f->start[i], &st->qstart[i]);
      plc_fq_put(f->end[i], &f->qend[i]);
    }
  }
  free(f->qend);
  f->qend = NULL;
}

/* Which op never ran (the first), its times 0; the makespan is the end
 * of the op that ended last (st->last_end, -1 for none), or t0. */
static int plc_flow_finish(plc_flow_state *st, int *stuck)
{
  plc_flow *f = st->f;
  int first = -1, last = st->last_end;
  if (last >= 0 && f->big)
    mpq_set(f->makespan, f->end[last]);
  else if (last >= 0)
    plc_fq_put(f->makespan, &f->qend[last]);
  for (int i = 0; f->nended < f->n && i < f->n; i++)
    if (!f->ran[i]) {
      if (first < 0) first = i;
      if (!f->big) f->qend[i] = (plc_flow_q){0, 1};
      if (f->big && f->start) mpq_init(f->start[i]);
      if (f->big) mpq_init(f->end[i]);
    }
  if (!f->big && st->qstart)
    plc_flow_to_mpq(st);
  if (stuck) *stuck = first;
  return first < 0 ? 0 : -1;
}

/* One run on the number type big says, the ops' start times kept when
 * starts; -2 when a step on machine integers did not fit (f is freed). */
static int plc_flow_try(plc_flow *f, const plc_flow_op *ops, int n, int nstreams, int nlinks,
                        int share, mpq_srcptr t0, int *stuck, int starts, int big,
                        plc_flow_calm *calm)
{
  plc_flow_state st = {.ops = ops, .f = f, .ar = {.big = big}, .n = n, .share = share,
                       .starts = starts, .nlinks = nlinks, .last_end = -1, .calm = calm};
  if (calm)
    st.busy_on = plc_xcalloc((size_t)nlinks + 1, sizeof *st.busy_on);
  if (big) mpq_init(st.ar.given);
  plc_flow_init(&st, n, t0, starts);
  st.links = plc_xcalloc((size_t)nlinks + 1, sizeof *st.links);
  for (int li = 0; li < nlinks; li++) {
    plc_flow_ninit(&st.ar, &st.links[li].v);
    plc_flow_ninit(&st.ar, &st.links[li].tv);
    st.links[li].ends.ar = &st.ar;
  }
  st.events.ar = &st.ar;
  plc_flow_ninit(&st.ar, &st.tmp);
  plc_flow_graph(&st, nstreams);
  for (int i = n - 1; i >= 0; i--)
    if (st.waiting[i] == 0) st.ready[st.nready++] = i;
  plc_flow_loop(&st, t0);
  for (int li = 0; li < nlinks; li++) {
    plc_flow_nclear(&st.ar, &st.links[li].v);
    plc_flow_nclear(&st.ar, &st.links[li].tv);
    plc_flow_heap_free(&st.links[li].ends);
  }
  plc_flow_heap_free(&st.events);
  plc_flow_nclear(&st.ar, &st.tmp);
  if (big) mpq_clear(st.ar.given);
  free(st.links), free(st.mem), free(st.succ), free(st.join_of), free(st.busy_on);
  int r = -2;
  if (st.ar.over)
    plc_flow_free(f);
  else
    r = plc_flow_finish(&st, stuck);
  free(st.qstart);
  return r;
}

/* plc_flow_run, the ops' start times kept when starts: on machine
 * integers, else (a step did not fit) on GMP. */
static int plc_flow_go(plc_flow *f, const plc_flow_op *ops, int n, int nstreams, int nlinks,
                       int share, mpq_srcptr t0, int *stuck, int starts)
{
  int r = plc_flow_no_fast
          ? -2 : plc_flow_try(f, ops, n, nstreams, nlinks, share, t0, stuck, starts, 0, NULL);
  if (r == -2)
    r = plc_flow_try(f, ops, n, nstreams, nlinks, share, t0, stuck, starts, 1, NULL);
  return r;
}

int plc_flow_run_calm(plc_flow *f, const plc_flow_op *ops, int n, int nstreams, int nlinks,
                      mpq_srcptr t0, plc_flow_calm *calm)
{
  int stuck;
  return plc_flow_try(f, ops, n, nstreams, nlinks, 1, t0, &stuck, 0, 0, calm) == -2 ? -2 : 0;
}

int plc_flow_run(plc_flow *f, const plc_flow_op *ops, int n, int nstreams, int nlinks,
                 int share, mpq_srcptr t0, int *stuck)
{
  return plc_flow_go(f, ops, n, nstreams, nlinks, share, t0, stuck, 1);
}

int plc_flow_run_ends(plc_flow *f, const plc_flow_op *ops, int n, int nstreams, int nlinks,
                      int share, mpq_srcptr t0, int *stuck)
{
  return plc_flow_go(f, ops, n, nstreams, nlinks, share, t0, stuck, 0);
}

void plc_flow_end_get(mpq_ptr q, const plc_flow *f, int i)
{
  if (f->qend)
    plc_fq_put(q, &f->qend[i]);
  else
    mpq_set(q, f->end[i]);
}

void plc_flow_free(plc_flow *f)
{
  for (int i = 0; f->start && i < f->n; i++) mpq_clear(f->start[i]);
  for (int i = 0; f->end && i < f->n; i++) mpq_clear(f->end[i]);
  mpq_clear(f->makespan);
  free(f->start), free(f->end), free(f->qend), free(f->cause), free(f->shared);
}
