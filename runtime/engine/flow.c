/* flow.c - the event-driven core: serial streams, dependencies and links
 * shared by processor sharing, over exact rationals (see flow.h). */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "flow.h"
#include "xalloc.h"

#include <stdlib.h>
#include <string.h>

/* ---- a binary min-heap of (rational key, a, b, c) ------------------------
 * Entries are swapped with mpq_swap, so keys are initialised once and
 * reused; ties are broken by a, b, c, which makes every run deterministic.
 * Comparing rationals multiplies numerators by denominators; each key
 * also keeps fx = floor(key x 2^40) when key < 2^22 (an integer, exact),
 * and two keys whose fx differ compare by fx alone: only keys within
 * 2^-40 s of each other are compared as rationals.  A whole key of at
 * most two limbs (sim.c's: times in units of a list's common
 * denominator) also keeps its value as a machine integer, w: two such
 * keys compare by w alone, exactly. */

enum { PLC_FLOW_FX_BITS = 40, PLC_FLOW_FX_MAX_LOG2 = 22 };

#if defined(__SIZEOF_INT128__) && GMP_NUMB_BITS == 64
__extension__ typedef unsigned __int128 plc_flow_wide;
enum { PLC_FLOW_W_LIMBS = 2 };
#else
typedef unsigned long plc_flow_wide;
enum { PLC_FLOW_W_LIMBS = 1 };
#endif

typedef struct plc_flow_ent {
  mpq_t key;
  unsigned long fx;
  int fx_ok, w_ok;
  plc_flow_wide w;
  int a, b;
  unsigned c;
} plc_flow_ent;

typedef struct plc_flow_heap {
  plc_flow_ent *e;
  int n, cap;
  mpz_t z;              /* scratch for fx */
} plc_flow_heap;

/* Is q a whole number?  Most times are (sim.c runs a list's flow in
 * units of its common denominator): read from the limbs (inline in
 * gmp.h), not by a call. */
static inline int plc_flow_whole(mpq_srcptr q)
{
  mpz_srcptr den = mpq_denref(q);
  return mpz_size(den) == 1 && mpz_getlimbn(den, 0) == 1;
}

/* fx of a key >= 0 (see above); fx_ok 0 when the key is too large.  A
 * whole key k is below 2^22 when it has one limb below it, and then fx is
 * k x 2^40 (the division's own result, for less). */
static void plc_flow_fx(plc_flow_heap *h, plc_flow_ent *e)
{
  mpz_srcptr num = mpq_numref(e->key), den = mpq_denref(e->key);
  e->w_ok = 0;
  if (plc_flow_whole(e->key) && mpz_sgn(num) >= 0) {
    size_t n = mpz_size(num);
    mp_limb_t k = n ? mpz_getlimbn(num, 0) : 0;
    e->w_ok = n <= PLC_FLOW_W_LIMBS;
    e->w = k;
    if (n == 2 && PLC_FLOW_W_LIMBS == 2)
      e->w |= (plc_flow_wide)mpz_getlimbn(num, 1) << (GMP_NUMB_BITS - 1) << 1;
    e->fx_ok = n <= 1 && k < ((mp_limb_t)1 << PLC_FLOW_FX_MAX_LOG2);
    if (e->fx_ok)
      e->fx = (unsigned long)k << PLC_FLOW_FX_BITS;
    return;
  }
  e->fx_ok = mpz_sgn(num) >= 0 &&
             (long)mpz_sizeinbase(num, 2) - (long)mpz_sizeinbase(den, 2) < PLC_FLOW_FX_MAX_LOG2;
  if (!e->fx_ok)
    return;
  mpz_mul_2exp(h->z, num, PLC_FLOW_FX_BITS);
  mpz_tdiv_q(h->z, h->z, den);
  e->fx = mpz_get_ui(h->z);
}

/* mpq_cmp, on the numerators alone when both are whole numbers. */
static int plc_flow_cmp(mpq_srcptr a, mpq_srcptr b)
{
  if (plc_flow_whole(a) && plc_flow_whole(b))
    return mpz_cmp(mpq_numref(a), mpq_numref(b));
  return mpq_cmp(a, b);
}

static int plc_flow_less(const plc_flow_ent *x, const plc_flow_ent *y)
{
  int c = x->w_ok && y->w_ok ? (x->w > y->w) - (x->w < y->w)
          : x->fx_ok && y->fx_ok && x->fx != y->fx ? (x->fx < y->fx ? -1 : 1)
                                                   : plc_flow_cmp(x->key, y->key);
  if (c) return c < 0;
  if (x->a != y->a) return x->a < y->a;
  if (x->b != y->b) return x->b < y->b;
  return x->c < y->c;
}

/* Entries trade places whole: each key's limbs move with it, as
 * mpq_swap would move them. */
static void plc_flow_swap(plc_flow_heap *h, int i, int j)
{
  plc_flow_ent t = h->e[i];
  h->e[i] = h->e[j];
  h->e[j] = t;
}

/* Push key's value, swapped in (not copied): key is left holding some
 * other value, its limbs reused. */
static void plc_flow_push(plc_flow_heap *h, mpq_ptr key, int a, int b, unsigned c)
{
  if (h->n == h->cap) {
    if (h->cap == 0) mpz_init(h->z);
    int cap = h->cap ? 2 * h->cap : 16;
    h->e = plc_xrealloc(h->e, (size_t)cap * sizeof *h->e);
    for (int i = h->cap; i < cap; i++) mpq_init(h->e[i].key);
    h->cap = cap;
  }
  int i = h->n++;
  mpq_swap(h->e[i].key, key);
  plc_flow_fx(h, &h->e[i]);
  h->e[i].a = a, h->e[i].b = b, h->e[i].c = c;
  while (i > 0 && plc_flow_less(&h->e[i], &h->e[(i - 1) / 2])) {
    plc_flow_swap(h, i, (i - 1) / 2);
    i = (i - 1) / 2;
  }
}

/* Remove the root; it stays readable at h->e[h->n] until the next push. */
static void plc_flow_pop(plc_flow_heap *h)
{
  plc_flow_swap(h, 0, --h->n);
  for (int i = 0;;) {
    int l = 2 * i + 1, r = l + 1, m = i;
    if (l < h->n && plc_flow_less(&h->e[l], &h->e[m])) m = l;
    if (r < h->n && plc_flow_less(&h->e[r], &h->e[m])) m = r;
    if (m == i) break;
    plc_flow_swap(h, i, m);
    i = m;
  }
}

static void plc_flow_heap_free(plc_flow_heap *h)
{
  for (int i = 0; i < h->cap; i++) mpq_clear(h->e[i].key);
  if (h->cap) mpz_clear(h->z);
  free(h->e);
}

/* ---- the simulation state ------------------------------------------------ */

enum { PLC_FLOW_EV_FIXED, PLC_FLOW_EV_LINK };

/* A physical link: k transfers active; its virtual time was v at real time
 * tv and advances at 1/k; `ends` holds each active transfer's virtual end. */
typedef struct plc_flow_link {
  int k;
  unsigned stamp;       /* only the newest scheduled event of a link counts */
  mpq_t v, tv;
  plc_flow_heap ends;
} plc_flow_link;

typedef struct plc_flow_state {
  const plc_flow_op *ops;
  plc_flow *f;
  int n, share;
  int nnodes;           /* n ops, then the joins (see plc_flow_joins) */
  int *waiting;         /* per node: dependencies and stream predecessor not yet ended */
  int *succ, *succ_at;  /* successors of node i: succ[succ_at[i] .. succ_at[i+1]) */
  int *join_of;         /* per op: the join it waits through, or -1 */
  int last_end;         /* the op that ended last, or -1 */
  int *work_phase;      /* the op's fixed part is over and it holds its link */
  int *ready, nready;   /* ops that may start now */
  plc_flow_link *links;
  int nlinks;
  plc_flow_heap events;
  mpq_t tmp;
} plc_flow_state;

static int plc_flow_has_work(const plc_flow_state *st, int i)
{
  return st->share && st->ops[i].link >= 0 && st->ops[i].work && mpq_sgn(st->ops[i].work) > 0;
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

/* join_of[i]: the join op i waits through, or -1; returns how many. */
static int plc_flow_joins(plc_flow_state *st)
{
  const plc_flow_op *ops = st->ops;
  int n = st->n, nj = 0, cand = 0;
  st->join_of = plc_xmalloc(((size_t)n + 1) * sizeof *st->join_of);
  for (int i = 0; i < n; i++) {
    st->join_of[i] = -1;
    cand += ops[i].ndeps >= PLC_FLOW_JOIN_MIN;
  }
  if (cand < 2)
    return 0;
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

/* Count (fill == NULL) or write op i's incoming edges: from its
 * dependencies, or from its join (and, for the join's first op, the join's
 * from the dependencies). */
static void plc_flow_edges_in(plc_flow_state *st, int i, const int *first_of, int *fill)
{
  const plc_flow_op *o = &st->ops[i];
  int j = st->join_of[i], to = i;
  if (j >= 0) {
    int jn = st->n + j;
    if (fill) st->succ[fill[jn]++] = i;
    else st->succ_at[jn + 1]++, st->waiting[i]++;
    if (first_of[j] != i)
      return;
    to = jn;
  }
  for (int d = 0; d < o->ndeps; d++) {
    if (fill) st->succ[fill[o->deps[d]]++] = to;
    else st->succ_at[o->deps[d] + 1]++, st->waiting[to]++;
  }
}

/* Successor lists in one array: each dependency edge reversed (through
 * joins), and each op to the next op of its stream. */
static void plc_flow_graph(plc_flow_state *st, int nstreams)
{
  int n = st->n, nj = plc_flow_joins(st), nn = n + nj;
  int *last = plc_xmalloc(((size_t)nstreams + 1) * sizeof *last);
  int *next = plc_xmalloc(((size_t)n + 1) * sizeof *next);
  int *first_of = plc_xmalloc(((size_t)nj + 1) * sizeof *first_of);
  for (int j = 0; j < nj; j++) first_of[j] = -1;
  for (int i = 0; i < n; i++)
    if (st->join_of[i] >= 0 && first_of[st->join_of[i]] < 0) first_of[st->join_of[i]] = i;
  for (int s = 0; s < nstreams; s++) last[s] = -1;
  st->nnodes = nn;
  st->waiting = plc_xcalloc((size_t)nn + 1, sizeof *st->waiting);
  st->succ_at = plc_xcalloc((size_t)nn + 2, sizeof *st->succ_at);
  for (int i = n - 1; i >= 0; i--) {
    int s = st->ops[i].stream;
    next[i] = last[s];
    last[s] = i;
  }
  for (int i = 0; i < n; i++) {
    plc_flow_edges_in(st, i, first_of, NULL);
    if (next[i] >= 0) st->succ_at[i + 1]++, st->waiting[next[i]]++;
  }
  for (int i = 0; i < nn; i++) st->succ_at[i + 1] += st->succ_at[i];
  st->succ = plc_xmalloc(((size_t)st->succ_at[nn] + 1) * sizeof *st->succ);
  int *fill = plc_xmalloc(((size_t)nn + 1) * sizeof *fill);
  for (int i = 0; i < nn; i++) fill[i] = st->succ_at[i];
  for (int i = 0; i < n; i++) {
    plc_flow_edges_in(st, i, first_of, fill);
    if (next[i] >= 0) st->succ[fill[i]++] = next[i];
  }
  free(fill);
  free(first_of);
  free(next);
  free(last);
}

/* r = a + b, or a - b with sub: on the numerators alone when both are
 * whole numbers, as most times are (sim.c runs a list's flow in units of
 * its common denominator), without the gcds of mpq_add and mpq_sub. */
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
  if (k == 1) /* one transfer on its link: the most common case */
    return;
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

/* Bring a link's virtual time to real time t. */
static void plc_flow_advance(plc_flow_state *st, plc_flow_link *l, mpq_srcptr t)
{
  if (l->k > 0) {
    plc_flow_add(st->tmp, t, l->tv, 1);
    plc_flow_scale(st->tmp, (unsigned long)l->k, 1);
    plc_flow_add(l->v, l->v, st->tmp, 0);
  }
  mpq_set(l->tv, t);
}

/* Schedule the link's next end: real time tv + (earliest virtual end - v) k. */
static void plc_flow_reschedule(plc_flow_state *st, int li)
{
  plc_flow_link *l = &st->links[li];
  l->stamp++;
  if (l->k == 0) return;
  plc_flow_add(st->tmp, l->ends.e[0].key, l->v, 1);
  plc_flow_scale(st->tmp, (unsigned long)l->k, 0);
  plc_flow_add(st->tmp, st->tmp, l->tv, 0);
  plc_flow_push(&st->events, st->tmp, PLC_FLOW_EV_LINK, li, l->stamp);
}

static void plc_flow_join_link(plc_flow_state *st, int i, mpq_srcptr t)
{
  int li = st->ops[i].link;
  plc_flow_link *l = &st->links[li];
  plc_flow_advance(st, l, t);
  plc_flow_add(st->tmp, l->v, st->ops[i].work, 0);
  plc_flow_push(&l->ends, st->tmp, i, 0, 0);
  l->k++;
  if (l->k > 1) /* every transfer on the link now shares it */
    for (int e = 0; e < l->ends.n; e++) st->f->shared[l->ends.e[e].a] = 1;
  st->work_phase[i] = 1;
  plc_flow_reschedule(st, li);
}

/* mpq_init and mpq_set in one (GMP has no mpq_init_set). */
static void plc_flow_init_set(mpq_ptr q, mpq_srcptr v)
{
  mpz_init_set(mpq_numref(q), mpq_numref(v));
  mpz_init_set(mpq_denref(q), mpq_denref(v));
}

/* Node x's predecessor i ended: x is ready (op) or releases its ops (join)
 * once nothing else holds it. */
static void plc_flow_release(plc_flow_state *st, int x, int i)
{
  if (--st->waiting[x] != 0)
    return;
  if (x < st->n) {
    st->f->cause[x] = i;
    st->ready[st->nready++] = x;
    return;
  }
  for (int k = st->succ_at[x]; k < st->succ_at[x + 1]; k++) plc_flow_release(st, st->succ[k], i);
}

static void plc_flow_end(plc_flow_state *st, int i, mpq_srcptr t)
{
  plc_flow_init_set(st->f->end[i], t);
  st->f->ran[i] = 1;
  st->f->order[st->f->nended++] = i;
  st->last_end = i; /* times only grow: the last op to end ends latest */
  for (int k = st->succ_at[i]; k < st->succ_at[i + 1]; k++) plc_flow_release(st, st->succ[k], i);
}

/* Start op i at t: its fixed part as a timed event, else its transfer on
 * its link, else (nothing to do) it ends at once. */
static void plc_flow_start(plc_flow_state *st, int i, mpq_srcptr t)
{
  const plc_flow_op *o = &st->ops[i];
  if (st->f->start)
    plc_flow_init_set(st->f->start[i], t);
  int fixed = o->fixed && mpq_sgn(o->fixed) > 0;
  int work = !st->share && o->work && mpq_sgn(o->work) > 0;
  if (fixed || work) { /* times are never negative */
    mpq_set(st->tmp, t);
    if (fixed) plc_flow_add(st->tmp, st->tmp, o->fixed, 0);
    if (work) plc_flow_add(st->tmp, st->tmp, o->work, 0);
    plc_flow_push(&st->events, st->tmp, PLC_FLOW_EV_FIXED, i, 0);
  }
  else if (plc_flow_has_work(st, i))
    plc_flow_join_link(st, i, t);
  else
    plc_flow_end(st, i, t);
}

static void plc_flow_start_ready(plc_flow_state *st, mpq_srcptr t)
{
  while (st->nready > 0) plc_flow_start(st, st->ready[--st->nready], t);
}

/* The link's earliest transfers have reached their virtual end at t. */
static void plc_flow_link_event(plc_flow_state *st, int li, unsigned stamp, mpq_srcptr t)
{
  plc_flow_link *l = &st->links[li];
  if (stamp != l->stamp) return;
  plc_flow_advance(st, l, t);
  while (l->ends.n > 0 && plc_flow_cmp(l->ends.e[0].key, l->v) <= 0) {
    int i = l->ends.e[0].a;
    plc_flow_pop(&l->ends);
    l->k--;
    plc_flow_end(st, i, t);
  }
  plc_flow_reschedule(st, li);
}

static void plc_flow_loop(plc_flow_state *st, mpq_srcptr t0)
{
  mpq_t t;
  mpq_init(t);
  if (t0)
    mpq_set(t, t0);
  plc_flow_start_ready(st, t);
  while (st->events.n > 0) {
    plc_flow_pop(&st->events);
    plc_flow_ent *e = &st->events.e[st->events.n];
    mpq_swap(t, e->key); /* e is out of the heap: its key is scratch now */
    if (e->a == PLC_FLOW_EV_LINK)
      plc_flow_link_event(st, e->b, e->c, t);
    else if (plc_flow_has_work(st, e->b) && !st->work_phase[e->b])
      plc_flow_join_link(st, e->b, t);
    else
      plc_flow_end(st, e->b, t);
    plc_flow_start_ready(st, t);
  }
  mpq_clear(t);
}

/* Start and end times are initialised when an op starts and ends, each
 * straight to its value (one allocation of the right size, not an
 * mpq_init and a reallocation); plc_flow_finish initialises those of the
 * ops that never ran.  An op that starts always ends. */
static void plc_flow_init(plc_flow *f, int n, mpq_srcptr t0, int starts)
{
  f->n = n;
  f->start = starts ? plc_xmalloc(((size_t)n + 1) * sizeof *f->start) : NULL;
  f->end = plc_xmalloc(((size_t)n + 1) * sizeof *f->end);
  f->cause = plc_xmalloc(((size_t)n + 1) * sizeof *f->cause);
  f->ran = plc_xcalloc((size_t)n + 1, sizeof *f->ran);
  f->order = plc_xmalloc(((size_t)n + 1) * sizeof *f->order);
  f->nended = 0;
  f->shared = plc_xcalloc((size_t)n + 1, sizeof *f->shared);
  for (int i = 0; i < n; i++) f->cause[i] = -1;
  mpq_init(f->makespan);
  if (t0)
    mpq_set(f->makespan, t0);
}

/* Which op never ran (the first); the makespan is the end of the op that
 * ended last (last, -1 for none), or t0. */
static int plc_flow_finish(plc_flow *f, int last, int *stuck)
{
  int first = -1;
  for (int i = 0; i < f->n; i++)
    if (!f->ran[i]) {
      if (first < 0) first = i;
      if (f->start) mpq_init(f->start[i]);
      mpq_init(f->end[i]);
    }
  if (last >= 0)
    mpq_set(f->makespan, f->end[last]);
  if (stuck) *stuck = first;
  return first < 0 ? 0 : -1;
}

/* plc_flow_run, the ops' start times kept when starts. */
static int plc_flow_go(plc_flow *f, const plc_flow_op *ops, int n, int nstreams, int nlinks,
                       int share, mpq_srcptr t0, int *stuck, int starts)
{
  plc_flow_state st = {.ops = ops, .f = f, .n = n, .share = share, .nlinks = nlinks,
                       .last_end = -1};
  plc_flow_init(f, n, t0, starts);
  st.work_phase = plc_xcalloc((size_t)n + 1, sizeof *st.work_phase);
  st.ready = plc_xmalloc(((size_t)n + 1) * sizeof *st.ready);
  st.links = plc_xcalloc((size_t)nlinks + 1, sizeof *st.links);
  for (int li = 0; li < nlinks; li++) mpq_inits(st.links[li].v, st.links[li].tv, NULL);
  mpq_init(st.tmp);
  plc_flow_graph(&st, nstreams);
  for (int i = n - 1; i >= 0; i--)
    if (st.waiting[i] == 0) st.ready[st.nready++] = i;
  plc_flow_loop(&st, t0);
  for (int li = 0; li < nlinks; li++) {
    mpq_clears(st.links[li].v, st.links[li].tv, NULL);
    plc_flow_heap_free(&st.links[li].ends);
  }
  plc_flow_heap_free(&st.events);
  mpq_clear(st.tmp);
  free(st.links), free(st.ready), free(st.work_phase), free(st.waiting);
  free(st.succ), free(st.succ_at), free(st.join_of);
  return plc_flow_finish(f, st.last_end, stuck);
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

void plc_flow_free(plc_flow *f)
{
  for (int i = 0; i < f->n; i++) {
    if (f->start) mpq_clear(f->start[i]);
    mpq_clear(f->end[i]);
  }
  mpq_clear(f->makespan);
  free(f->start), free(f->end), free(f->cause), free(f->ran), free(f->order), free(f->shared);
}
