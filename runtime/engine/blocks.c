/* blocks.c - the whole step at block level, for the pictures (blocks.h). */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "blocks.h"
#include "memory.h"
#include "runsched.h"
#include "sim.h"
#include "xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Stage s's block times: its lists' makespans (the analysis's, res, when
 * given), w its backward's weight-gradient part. */
static void plc_blocks_times(const plc_ir_run *run, const plc_result *res, int s, mpq_srcptr w,
                             int fb, plc_sched_times *t)
{
  mpq_t zero;
  mpq_init(zero);
  if (res && res->tf) {
    mpq_set(t->f, res->tf[res->cls[s]]);
    mpq_set(t->b, res->tb[res->cls[s]]);
  } else {
    plc_sim f, b;
    plc_sim_net net;
    plc_sim_net_of(run, &net);
    plc_sim_run(&f, &run->stages[s].fwd, run->nstreams, 0, zero, &net);
    plc_sim_run(&b, &run->stages[s].bwd, run->nstreams, 0, zero, &net);
    mpq_set(t->f, f.makespan);
    mpq_set(t->b, b.makespan);
    plc_sim_free(&f);
    plc_sim_free(&b);
  }
  mpq_set(t->w, w);
  if (mpq_cmp(t->w, t->b) > 0) /* a W longer than its whole backward: keep B >= 0 */
    mpq_set(t->w, t->b);
  if (fb)
    mpq_add(t->fb, t->f, t->b);
  mpq_set_ui(t->p2p, 0, 1);
  mpq_clear(zero);
}

/* The memory level while each block runs, stage by stage (memory.h's
 * walk, keeping every level instead of the highest). */
static void plc_blocks_levels(plc_blocks *bl, const plc_result *res, const plc_sched *s)
{
  const plc_mem *m = res->mem;
  plc_sched_params par;
  int nchunks;
  mpq_t *act, *buf;
  char why[160];
  if (!m || !m->known || m->why[0] ||
      !plc_mem_chunk_figures(res->run, &par, &nchunks, &act, &buf, NULL, why, sizeof why))
    return;
  bl->mem_known = 1;
  mpq_t level;
  mpq_init(level);
  for (int st = 0; st < s->par.p; st++) {
    const plc_mem_stage *ms = &m->st[st];
    mpq_add(level, ms->weights, ms->grads);
    mpq_add(level, level, ms->optimizer);
    for (int i = s->start[st]; i < s->start[st + 1]; i++) {
      plc_mem_ev e = plc_mem_event(&s->blocks[i]);
      if (e.alloc >= 0)
        mpq_add(level, level, act[e.alloc]);
      int b = e.buf2 >= 0 && mpq_cmp(buf[e.buf2], buf[e.buf1]) > 0 ? e.buf2 : e.buf1;
      mpq_add(bl->items[i].level, level, buf[b]);
      if (mpq_cmp(bl->items[i].level, bl->mem_max) > 0)
        mpq_set(bl->mem_max, bl->items[i].level);
      if (e.release >= 0)
        mpq_sub(level, level, act[e.release]);
      mpq_set(bl->items[i].after, level);
    }
  }
  mpq_clear(level);
  plc_mem_chunks_free(nchunks, act, buf);
}

static void plc_blocks_alloc(plc_blocks *bl, const plc_sched *s)
{
  bl->n = s->nblocks;
  bl->items = plc_xmalloc((size_t)bl->n * sizeof *bl->items);
  for (int st = 0; st < s->par.p; st++)
    for (int i = s->start[st]; i < s->start[st + 1]; i++) {
      plc_blocks_item *it = &bl->items[i];
      it->stage = st;
      it->b = s->blocks[i];
      mpq_inits(it->start, it->end, it->level, it->after, NULL);
    }
}

/* Chunk k of stage s's block times, its ops run alone (the analysis's,
 * res, when it has them: analysis.h); its sends on a stream of their own
 * are the p2p latency of what leaves it. */
static void plc_blocks_chunk_times(const plc_ir_run *run, const plc_result *res, int s, int k,
                                   int n, int fb, plc_sched_times *t)
{
  if (res && res->nck == n) {
    size_t i = (size_t)s * (size_t)n + (size_t)k;
    mpq_set(t->f, res->ckf[i]);
    mpq_set(t->b, res->ckb[i]);
    mpq_set(t->w, res->ckw[i]);
    mpq_set(t->p2p, res->ckp[i]);
  } else {
    plc_chunk_times(run, s, k, t->f, t->b, t->w, t->p2p);
  }
  if (mpq_cmp(t->w, t->b) > 0)
    mpq_set(t->w, t->b);
  if (fb)
    mpq_add(t->fb, t->f, t->b);
}

/* Every stage's weight-gradient part (plc_weight_grad_time), worked out
 * once per class of stages whose lists simulate alike (res->cls, when
 * given): their backward lists have the same ops with the same times and
 * wgrad flags, all it reads.  Free with plc_blocks_wgrad_free. */
static mpq_t *plc_blocks_wgrad(const plc_ir_run *run, const plc_result *res)
{
  mpq_t *w = plc_xmalloc((size_t)run->nstages * sizeof *w);
  for (int s = 0; s < run->nstages; s++) {
    mpq_init(w[s]);
    int c = res && res->cls ? res->cls[s] : s; /* the class's first stage, c <= s */
    if (c < s)
      mpq_set(w[s], w[c]);
    else
      plc_weight_grad_time(&run->stages[s].bwd, w[s]);
  }
  return w;
}

static void plc_blocks_wgrad_free(mpq_t *w, int n)
{
  for (int s = 0; s < n; s++)
    mpq_clear(w[s]);
  free(w);
}

/* The block times for s, into *n entries: per stage, or per chunk
 * (sim->per_chunk set) when a stage holds several, with the overlapped
 * F&B times the analysis worked out (res->fbo) for DualPipe and
 * dualpipev: for DualPipe device
 * st's second-direction chunk takes model stage p-1-st's lists; for
 * interleaved (round-robin) chunks and dualpipev's V each chunk takes its
 * own ops' times (plc_chunk_times), so an uneven chunk (more layers, the
 * output layer and loss) is as slow as its ops.  Allocated, free with
 * plc_blocks_times_free. */
static plc_sched_times *plc_blocks_all_times(const plc_ir_run *run, const plc_result *res,
                                             const plc_sched *s, plc_sched_sim *sim, int *n)
{
  int p = s->par.p, bidir = s->place == PLC_SCHED_PLACE_BIDIR;
  /* fb only for F&B blocks: DualPipe's and dualpipev's (else it stays 0,
   * which the simulator does not read) */
  int fb = bidir || s->place == PLC_SCHED_PLACE_V;
  int k = s->place == PLC_SCHED_PLACE_V || (s->place == PLC_SCHED_PLACE_ROUND && s->par.v > 1)
            ? s->nchunks / p
            : 0; /* chunks per stage run as blocks of their own */
  *n = bidir ? 2 * p : k ? s->nchunks : p;
  sim->per_chunk = bidir || k;
  sim->fb_pairs = res && res->fbo && (bidir || k == 2);
  plc_sched_times *t = plc_xmalloc((size_t)*n * sizeof *t);
  plc_sched_times_init(t, *n);
  mpq_t *w = k ? NULL : plc_blocks_wgrad(run, res);
  for (int i = 0; i < *n; i++) {
    int st = !bidir ? i : i % 2 ? p - 1 - i / 2 : i / 2;
    if (k)
      plc_blocks_chunk_times(run, res, i / k, i % k, k, fb, &t[i]);
    else
      plc_blocks_times(run, res, st, w[st], fb, &t[i]);
    if (sim->fb_pairs) /* device i / 2's F&B of slot i % 2's forward (analysis.h) */
      mpq_set(t[i].fbo, res->fbo[i]);
  }
  if (w)
    plc_blocks_wgrad_free(w, run->nstages);
  return t;
}

static void plc_blocks_times_free(plc_sched_times *t, int n)
{
  plc_sched_times_clear(t, n);
  free(t);
}

/* The schedule kept for the measures of one run's re-analyses
 * (plc_blocks_keep), on this thread: keyed by the run itself, whose
 * schedule, custom order, stages and microbatches a re-analysis never
 * changes (only op times), so its blocks and their prepared order are
 * those a new build would give; each measure still simulates with its own
 * times.  A schedule that cannot be built is not kept: each measure
 * tries again and says why. */
typedef struct plc_blocks_kept {
  const plc_ir_run *run;
  int depth;             /* scopes opened inside the first one */
  int built;
  plc_sched s;
  plc_sched_prep *prep;  /* prepared at the first measure */
  plc_sched_sim sim;     /* its scratch, and the figures of its last run */
  /* the times of that last run (nlast entries) and its flags: a
   * simulation is a function of the schedule, the times and the flags,
   * so a measure with the same ones reads the sim's figures again (two
   * re-analyses often change only lists that leave the stages' times
   * as they were) */
  plc_sched_times *last;
  int nlast, last_per_chunk, last_fb_pairs;
} plc_blocks_kept;

static _Thread_local plc_blocks_kept *plc_blocks_kept_now;

void plc_blocks_keep(const plc_ir_run *run)
{
  if (plc_blocks_kept_now) {
    plc_blocks_kept_now->depth++;
    return;
  }
  plc_blocks_kept *k = plc_xcalloc(1, sizeof *k);
  k->run = run;
  plc_sched_sim_init(&k->sim);
  k->sim.lazy = 1; /* only the critical device's figures are read */
  plc_blocks_kept_now = k;
}

/* k's last run: t (taken over; NULL when the run failed). */
static void plc_blocks_kept_last(plc_blocks_kept *k, plc_sched_times *t, int nt)
{
  if (k->last)
    plc_blocks_times_free(k->last, k->nlast);
  k->last = t;
  k->nlast = t ? nt : 0;
  k->last_per_chunk = k->sim.per_chunk;
  k->last_fb_pairs = k->sim.fb_pairs;
}

void plc_blocks_keep_end(void)
{
  plc_blocks_kept *k = plc_blocks_kept_now;
  if (!k || k->depth-- > 0)
    return;
  plc_blocks_kept_last(k, NULL, 0);
  plc_sched_prep_free(k->prep);
  if (k->built)
    plc_sched_free(&k->s);
  plc_sched_sim_clear(&k->sim);
  free(k);
  plc_blocks_kept_now = NULL;
}

/* Run's schedule for a measure into s: 0 with why when it is too large or
 * cannot be built. */
static int plc_blocks_measure_sched(const plc_ir_run *run, plc_sched *s, char *why, size_t len)
{
  plc_sched_params par;
  plc_sched_placement place;
  if (!plc_runsched_params(run, &place, &par, why, len))
    return 0;
  if (3L * par.v * par.mu * par.p > PLC_BLOCKS_STEP_MAX) {
    snprintf(why, len, "the step has more than %ld blocks", PLC_BLOCKS_STEP_MAX);
    return 0;
  }
  int stage;
  return plc_runsched_build(run, s, why, len, &stage);
}

/* r's bubble from sim's run: the makespan less the critical device's own
 * work, with the split on that device. */
static void plc_blocks_bubble(plc_result *r, plc_sched_sim *sim)
{
  int c = r->device;
  plc_sched_sim_stage(sim, c);
  mpq_sub(r->bubble, sim->makespan, r->work);
  mpq_set(r->bubble_warmup, sim->warmup[c]);
  mpq_set(r->bubble_steady, sim->steady[c]);
  mpq_set(r->bubble_cooldown, sim->cooldown[c]);
}

static int plc_blocks_times_equal(const plc_sched_times *a, const plc_sched_times *b, int n)
{
  for (int i = 0; i < n; i++)
    if (!mpq_equal(a[i].f, b[i].f) || !mpq_equal(a[i].b, b[i].b) || !mpq_equal(a[i].w, b[i].w) ||
        !mpq_equal(a[i].fb, b[i].fb) || !mpq_equal(a[i].p2p, b[i].p2p) ||
        !mpq_equal(a[i].fbo, b[i].fbo))
      return 0;
  return 1;
}

/* A measure of k's run: its prepared schedule simulated with r's times,
 * unless they are those of its last run. */
static int plc_blocks_measure_kept(plc_blocks_kept *k, plc_result *r, char *why, size_t len)
{
  plc_sched_sim *sim = &k->sim;
  int nt;
  plc_sched_times *t = plc_blocks_all_times(k->run, r, &k->s, sim, &nt);
  int ok = k->last && nt == k->nlast && sim->per_chunk == k->last_per_chunk &&
           sim->fb_pairs == k->last_fb_pairs && plc_blocks_times_equal(t, k->last, nt);
  if (ok) {
    plc_blocks_times_free(t, nt);
  } else {
    if (!k->prep)
      k->prep = plc_sched_prepare(&k->s, sim->per_chunk, sim->fb_pairs, why, len);
    sim->prep = k->prep;
    ok = k->prep && plc_sched_simulate(&k->s, t, sim, why, len);
    if (!ok) {
      plc_blocks_times_free(t, nt);
      t = NULL;
    }
    plc_blocks_kept_last(k, t, nt);
  }
  if (ok)
    plc_blocks_bubble(r, sim);
  return ok;
}

int plc_blocks_measure(const plc_ir_run *run, plc_result *r, char *why, size_t len)
{
  plc_blocks_kept *k = plc_blocks_kept_now;
  if (k && k->run == run) {
    if (!k->built && !(k->built = plc_blocks_measure_sched(run, &k->s, why, len)))
      return 0;
    return plc_blocks_measure_kept(k, r, why, len);
  }
  plc_sched s;
  if (!plc_blocks_measure_sched(run, &s, why, len))
    return 0;
  plc_sched_sim sim;
  plc_sched_sim_init(&sim);
  sim.lazy = 1; /* only the critical device's figures are read */
  int nt;
  plc_sched_times *t = plc_blocks_all_times(run, r, &s, &sim, &nt);
  int ok = plc_sched_simulate(&s, t, &sim, why, len);
  if (ok)
    plc_blocks_bubble(r, &sim);
  plc_blocks_times_free(t, nt);
  plc_sched_sim_clear(&sim);
  plc_sched_free(&s);
  return ok;
}

/* Simulate s with the stages' times, recording every block. */
static int plc_blocks_simulate(plc_blocks *bl, const plc_result *res, const plc_sched *s)
{
  plc_sched_sim sim;
  plc_sched_sim_init(&sim);
  int nt;
  plc_sched_times *t = plc_blocks_all_times(res->run, res, s, &sim, &nt);
  mpq_t *rs = plc_xmalloc((size_t)bl->n * sizeof *rs);
  mpq_t *re = plc_xmalloc((size_t)bl->n * sizeof *re);
  for (int i = 0; i < bl->n; i++)
    mpq_inits(rs[i], re[i], NULL);
  sim.rec_start = rs;
  sim.rec_end = re;
  int ok = plc_sched_simulate(s, t, &sim, bl->why, sizeof bl->why);
  if (ok) {
    mpq_set(bl->makespan, sim.makespan);
    for (int i = 0; i < bl->n; i++) {
      mpq_swap(bl->items[i].start, rs[i]);
      mpq_swap(bl->items[i].end, re[i]);
    }
  }
  plc_sched_sim_clear(&sim);
  for (int i = 0; i < bl->n; i++)
    mpq_clears(rs[i], re[i], NULL);
  free(rs);
  free(re);
  plc_blocks_times_free(t, nt);
  return ok;
}

int plc_blocks_build(plc_blocks *bl, const plc_result *res)
{
  memset(bl, 0, sizeof *bl);
  mpq_inits(bl->makespan, bl->mem_max, NULL);
  const plc_ir_run *run = res->run;
  bl->nstages = run->nstages;
  plc_sched_params par;
  plc_sched_placement place;
  if (!plc_runsched_params(run, &place, &par, bl->why, sizeof bl->why))
    return 0;
  if (3L * par.v * par.mu * par.p > 3L * PLC_BLOCKS_MAX) {
    snprintf(bl->why, sizeof bl->why, "the step has more than %d blocks", PLC_BLOCKS_MAX);
    return 0;
  }
  plc_sched s;
  int stage;
  if (!plc_runsched_build(run, &s, bl->why, sizeof bl->why, &stage))
    return 0;
  int ok = s.nblocks <= PLC_BLOCKS_MAX;
  if (!ok)
    snprintf(bl->why, sizeof bl->why, "the step has %d blocks, more than %d", s.nblocks,
             PLC_BLOCKS_MAX);
  if (ok) {
    plc_blocks_alloc(bl, &s);
    ok = plc_blocks_simulate(bl, res, &s);
  }
  if (ok)
    plc_blocks_levels(bl, res, &s);
  plc_sched_free(&s);
  return ok;
}

void plc_blocks_free(plc_blocks *bl)
{
  for (int i = 0; i < bl->n; i++)
    mpq_clears(bl->items[i].start, bl->items[i].end, bl->items[i].level, bl->items[i].after,
               NULL);
  free(bl->items);
  bl->items = NULL;
  bl->n = 0;
  mpq_clears(bl->makespan, bl->mem_max, NULL);
}
