/* sim.c - the list scheduler, exposure charging and overlap windows. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "sim.h"
#include "xalloc.h"

#include <stdlib.h>

static void plc_sim_init(plc_sim *s, int n)
{
  s->n = n;
  s->ops = plc_xcalloc((size_t)n + 1, sizeof *s->ops);
  for (int i = 0; i < n; i++) {
    plc_sim_op *o = &s->ops[i];
    mpq_inits(o->ready, o->start, o->end, o->exposed, o->window, NULL);
    o->consumer = o->queued_behind = -1;
  }
  mpq_inits(s->makespan, s->end, s->busy, s->compute, s->all_compute, s->useful, s->exposed,
            s->stall_other, NULL);
}

void plc_sim_free(plc_sim *s)
{
  for (int i = 0; i < s->n; i++) {
    plc_sim_op *o = &s->ops[i];
    mpq_clears(o->ready, o->start, o->end, o->exposed, o->window, NULL);
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

static void plc_sim_account(plc_sim *s, const plc_ir_op *op, plc_sim_op *so)
{
  if (op->stream != 0)
    return;
  mpq_add(s->busy, s->busy, op->time);
  if (op->kind == PLC_OPK_COMPUTE) {
    mpq_add(s->compute, s->compute, op->time);
  } else { /* a collective on the compute stream blocks it all along */
    mpq_set(so->exposed, op->time);
    mpq_add(s->exposed, s->exposed, op->time);
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
 * whatever their stream, so compute on a side stream is not free. */
static void plc_sim_step(plc_sim *s, const plc_ir_list *l, int i, mpq_t *free_at, int *holder,
                         int dev, mpq_srcptr t0)
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
  mpq_add(so->end, so->start, op->time);
  mpq_set(free_at[st], so->end);
  holder[st] = i;
  if (uses_dev) {
    mpq_set(free_at[dev], so->end);
    holder[dev] = i;
  }
  so->ran = 1;
  plc_sim_account(s, op, so);
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

/* The four-step test of every collective: consumer, window, why. */
static void plc_sim_windows(plc_sim *s, const plc_ir_list *l)
{
  int *order = plc_xmalloc(((size_t)l->n + 1) * sizeof *order), n = 0;
  for (int i = 0; i < l->n; i++) {
    if (s->ops[i].ran && l->ops[i].stream == 0)
      order[n++] = i;
    for (int d = 0; d < l->ops[i].ndeps; d++) {
      plc_sim_op *dep = &s->ops[l->ops[i].deps[d]];
      if (dep->consumer < 0 && s->ops[i].ran)
        dep->consumer = i;
    }
  }
  mpq_t *cum = plc_xmalloc(((size_t)n + 1) * sizeof *cum);
  mpq_init(cum[0]);
  for (int k = 0; k < n; k++) {
    mpq_init(cum[k + 1]);
    mpq_add(cum[k + 1], cum[k], l->ops[order[k]].time);
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
    plc_sim_busy_between(so->window, s, order, cum, n, so->start, until);
    if (mpq_sgn(so->exposed) == 0)
      so->why = so->consumer < 0 ? PLC_WHY_NO_CONSUMER : PLC_WHY_HIDDEN;
    else if (so->queued_behind >= 0 && mpq_cmp(so->start, so->ready) > 0)
      so->why = PLC_WHY_QUEUED;
    else if (mpq_cmp(so->window, op->time) >= 0 || (so->consumer < 0 && blocks[i]))
      so->why = PLC_WHY_BLOCKS; /* with no consumer, what queued behind it was waited for */
    else if (so->consumer < 0) /* exposed by outliving the compute stream */
      so->why = PLC_WHY_NO_CONSUMER;
    else
      so->why = mpq_sgn(so->window) == 0 ? PLC_WHY_NO_WORK : PLC_WHY_SHORT;
  }
  for (int k = 0; k <= n; k++)
    mpq_clear(cum[k]);
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

void plc_sim_run(plc_sim *s, const plc_ir_list *l, int nstreams, int with_once, mpq_srcptr t0)
{
  plc_sim_init(s, l->n);
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
      plc_sim_step(s, l, i, free_at, holder, nstreams, t0);
  mpq_set(s->makespan, free_at[0]);
  plc_sim_tail(s, l, free_at[0]);
  plc_sim_windows(s, l);
  plc_sim_union(s, l, 0, s->all_compute);
  plc_sim_union(s, l, 1, s->useful);
  for (int k = 0; k <= nstreams; k++)
    mpq_clear(free_at[k]);
  free(free_at);
  free(holder);
}

const char *plc_why_text(plc_why w)
{
  static const char *const text[PLC_WHY_COUNT] = {
    "hidden", "on the compute stream", "consumer follows at once", "window too short",
    "queued behind another op", "no consumer", "an op queued behind it was waited for",
  };
  return text[w];
}
