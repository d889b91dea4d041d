/* report_parts.c - the figures and words the report writers share. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "report_parts.h"
#include "memory.h"
#include "sensitivity.h"
#include "xalloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *plc_report_sprintf(const char *fmt, ...)
{
  /* Formatted once into a stack buffer (nearly every text fits), a second
   * time only into a buffer of the length the first pass found. */
  char buf[256];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  size_t len = n > 0 ? (size_t)n : 0;
  char *s = plc_xmalloc(len + 1);
  if (len < sizeof buf) {
    memcpy(s, buf, len);
    s[len] = '\0';
    return s;
  }
  va_start(ap, fmt);
  vsnprintf(s, len + 1, fmt, ap);
  va_end(ap);
  return s;
}

/* ---- values ---------------------------------------------------------------- */

char *plc_report_time(const plc_report_opts *o, mpq_srcptr v)
{
  return plc_q_format_raw(v, 0, 1, 0, o->digits, o->exact);
}

char *plc_report_bytes(const plc_report_opts *o, mpq_srcptr v)
{
  return plc_q_format_raw(v, 1, 0, 0, o->digits, o->exact);
}

char *plc_report_bw(const plc_report_opts *o, mpq_srcptr v)
{
  return plc_q_format_raw(v, 1, -1, 0, o->digits, o->exact);
}

char *plc_report_pct(const plc_report_opts *o, mpq_srcptr v)
{
  if (o->exact)
    return plc_fmt_exact(v);
  mpq_t p;
  mpq_init(p);
  mpq_set_ui(p, 100, 1);
  plc_q_rat_mul(p, p, v); /* on longs when it fits */
  char *n = plc_fmt_sig(p, o->digits);
  mpq_clear(p);
  size_t len = strlen(n);
  n = plc_xrealloc(n, len + 2);
  memcpy(n + len, "%", 2);
  return n;
}

char *plc_report_num(const plc_report_opts *o, mpq_srcptr v)
{
  return o->exact ? plc_fmt_exact(v) : plc_fmt_sig(v, o->digits);
}

/* ---- words ----------------------------------------------------------------- */

char *plc_report_layout(const plc_ir_run *run)
{
  const int *s = run->size;
  char ep[64] = "", fsdp[64] = "";
  if (s[PLC_PD_EP] > 1)
    snprintf(ep, sizeof ep, " (ep %d, edp %d)", s[PLC_PD_EP], s[PLC_PD_EDP]);
  if (s[PLC_PD_SHARD] > 1 || s[PLC_PD_REPLICATE] > 1)
    snprintf(fsdp, sizeof fsdp, " (shard %d x replicate %d)", s[PLC_PD_SHARD],
             s[PLC_PD_REPLICATE]);
  return plc_report_sprintf("%d device%s of %s: tp %d x cp %d x dp %d x pp %d%s%s; vpp %d; "
                            "%s schedule", run->world, run->world == 1 ? "" : "s", run->device,
                            s[PLC_PD_TP],
                            s[PLC_PD_CP], s[PLC_PD_DP], s[PLC_PD_PP], ep, fsdp, run->vpp,
                            run->schedule);
}

char *plc_report_batch(const plc_ir_run *run)
{
  return plc_report_sprintf("mu = %ld microbatch%s of %d x %d tokens per step; recompute %s",
                            run->mu, run->mu == 1 ? "" : "es", run->micro_batch, run->seq,
                            plc_report_recompute(run->recompute));
}

char *plc_report_bandwidths(const plc_ir_place *p, const plc_report_opts *o)
{
  char *out = plc_xstrdup("");
  for (int k = 1; k < PLC_OPK_COUNT; k++)
    if (p->bw[k]) {
      char *v = plc_report_bw(o, p->bw[k]);
      char *n = plc_report_sprintf("%s%s%s %s", out, *out ? ", " : "", plc_opk_name(k), v);
      free(v);
      free(out);
      out = n;
    }
  return out;
}

int plc_report_place_shown(const plc_ir_run *run, int d)
{
  const plc_ir_place *p = &run->place[d];
  if (p->size < 2)
    return 0;
  if (d != PLC_PD_EDP || run->place[PLC_PD_EP].size >= 2)
    return 1;
  for (int k = 1; k < PLC_OPK_COUNT; k++)
    if (p->bw[k])
      return 1;
  return 0;
}

const char *plc_report_phase(plc_phase p) { return plc_phase_name(p); }

const char *plc_report_recompute(int recompute)
{
  return recompute == 2 ? "full" : recompute == 1 ? "selective" : "none";
}

const char *plc_report_tail_kind(plc_tail_kind k)
{
  switch (k) {
  case PLC_TAIL_PINNED: return "pinned";
  case PLC_TAIL_DECLARED: return "declared";
  case PLC_TAIL_SIMULATED: return "simulated";
  default: return "none";
  }
}

/* ---- communication rows ------------------------------------------------------ */

const char *plc_report_why(const plc_coll_row *row)
{
  const int *count = mpq_sgn(row->exposed) > 0 ? row->why_exposed : row->why;
  int best = -1;
  for (int w = 0; w < PLC_WHY_COUNT; w++)
    if (count[w] && (best < 0 || count[w] > count[best]))
      best = w;
  return best < 0 ? "" : plc_why_text((plc_why)best);
}

void plc_report_hidden(mpq_t out, const plc_coll_row *row)
{
  mpq_set_ui(out, 0, 1);
  if (mpq_sgn(row->time)) {
    mpq_sub(out, row->time, row->exposed);
    mpq_div(out, out, row->time);
  }
}

void plc_report_rank_bytes(mpq_t out, plc_opk kind, long n, mpq_srcptr size)
{
  if (kind == PLC_OPK_ALL_REDUCE)
    mpq_set_si(out, 2 * (n - 1), (unsigned long)n);
  else if (kind == PLC_OPK_P2P || kind == PLC_OPK_BROADCAST || n < 1)
    mpq_set_si(out, 1, 1);
  else
    mpq_set_si(out, n - 1, (unsigned long)n);
  mpq_canonicalize(out);
  mpq_mul(out, out, size);
}

/* Every op of a row has the group of its dimension (lower.c), so the
 * factor is the row's. */
char *plc_report_row_rank_each(const plc_report_opts *o, const plc_ir_run *run,
                               const plc_coll_row *row)
{
  if (!row->uniform)
    return plc_xstrdup("mixed");
  mpq_t b;
  mpq_init(b);
  plc_report_rank_bytes(b, row->kind, run->size[row->dim], row->size_each);
  char *s = plc_report_bytes(o, b);
  mpq_clear(b);
  return s;
}

void plc_report_row_rank_total(mpq_t out, const plc_ir_run *run, const plc_coll_row *row)
{
  plc_report_rank_bytes(out, row->kind, run->size[row->dim], row->bytes);
}

/* ---- the parts of the step ---------------------------------------------------- */

static plc_report_part *plc_report_part_add(const plc_result *r, plc_report_part *parts, int *n,
                                            plc_part_kind kind, int dim, mpq_srcptr per_step)
{
  plc_report_part *p = &parts[(*n)++];
  p->kind = kind;
  p->dim = (plc_pdim)dim;
  mpq_inits(p->time, p->share, NULL);
  mpq_set(p->time, per_step);
  if (mpq_sgn(r->step))
    mpq_div(p->share, p->time, r->step);
  return p;
}

int plc_report_parts(const plc_result *r, int all, plc_report_part *parts)
{
  int n = 0; /* the critical device's work over the step (analysis.h) */
  plc_report_part_add(r, parts, &n, PLC_PART_COMPUTE, 0, r->dev_compute);
  for (int d = 0; d < PLC_PD_COUNT; d++)
    if (mpq_sgn(r->dev_exposed[d]) || (all && r->run->size[d] > 1))
      plc_report_part_add(r, parts, &n, PLC_PART_EXPOSED, d, r->dev_exposed[d]);
  if (all || mpq_sgn(r->dev_stall))
    plc_report_part_add(r, parts, &n, PLC_PART_WAITS, 0, r->dev_stall);
  plc_report_part_add(r, parts, &n, PLC_PART_BUBBLE, 0, r->bubble);
  plc_report_part_add(r, parts, &n, PLC_PART_TAIL, 0, r->tail);
  if (all || mpq_sgn(r->optimizer))
    plc_report_part_add(r, parts, &n, PLC_PART_OPTIMIZER, 0, r->optimizer);
  plc_report_part_add(r, parts, &n, PLC_PART_STEP, 0, r->step);
  return n;
}

void plc_report_parts_clear(plc_report_part *parts, int n)
{
  for (int i = 0; i < n; i++)
    mpq_clears(parts[i].time, parts[i].share, NULL);
}

const char *plc_report_part_label(const plc_report_part *p)
{
  static const char *const labels[] = {"compute", "", "waits", "bubble", "dp tail",
                                       "optimizer", "step"};
  return p->kind == PLC_PART_EXPOSED ? plc_pdim_name(p->dim) : labels[p->kind];
}

static char *plc_report_tail_note(const plc_result *r, const plc_report_opts *o)
{
  char *full = plc_report_time(o, r->tail_full), *s;
  switch (r->tail_kind) {
  case PLC_TAIL_PINNED: s = plc_xstrdup("pinned by the plan"); break;
  case PLC_TAIL_DECLARED: {
    char *h = plc_report_pct(o, r->run->dp_hidden);
    s = plc_report_sprintf("%s of %s declared hidden", h, full);
    free(h);
    break;
  }
  case PLC_TAIL_SIMULATED: s = plc_report_sprintf("simulated from %s of gradient sync", full); break;
  default: s = plc_xstrdup("no gradient sync in the plan"); break;
  }
  free(full);
  return s;
}

char *plc_report_part_note(const plc_result *r, const plc_report_opts *o,
                           const plc_report_part *p)
{
  const char *mu = plc_two_parts(r->run) ? "mu/2 x each part's" : "mu x";
  switch (p->kind) {
  case PLC_PART_COMPUTE: return plc_report_sprintf("%s compute on the compute stream", mu);
  case PLC_PART_EXPOSED:
    return plc_report_sprintf("%s exposed %s communication%s", mu, plc_pdim_name(p->dim),
                              r->fbo ? ", F&B blocks overlapped" : "");
  case PLC_PART_WAITS: return plc_xstrdup("compute waiting for compute on other streams");
  case PLC_PART_TAIL: return plc_report_tail_note(r, o);
  case PLC_PART_OPTIMIZER: return plc_xstrdup("pinned by the plan");
  default: return plc_xstrdup("");
  }
}

char *plc_report_fb_text(const plc_result *r, const plc_report_opts *o)
{
  if (!r->fbo)
    return NULL;
  const char *unit = plc_two_parts(r->run) ? "model stage" : "model chunk";
  char *out = plc_report_sprintf("F&B blocks on device %d:", r->device);
  plc_fb_pair p[2];
  int n = plc_fb_pairs_of(r, r->device, p);
  for (int k = 0; k < n; k++) {
    char *t = plc_report_time(o, p[k].time);
    char *tf = plc_report_time(o, p[k].f), *tb = plc_report_time(o, p[k].b);
    char *more = plc_report_sprintf("%s%s %ld x F(%s %d) with B(%s %d), %s each (%s + %s apart)",
                                    out, k ? ";" : "", p[k].count, unit, p[k].fm, unit,
                                    p[k].bm, t, tf, tb);
    free(out);
    out = more;
    free(t);
    free(tf);
    free(tb);
  }
  return out;
}

/* ---- the bottleneck ---------------------------------------------------------- */

int plc_report_bottleneck(const plc_result *r, plc_report_part *b)
{
  plc_report_part parts[PLC_REPORT_MAX_PARTS];
  int n = plc_report_parts(r, 0, parts), best = -1;
  static const plc_part_kind order[] = {PLC_PART_EXPOSED, PLC_PART_BUBBLE, PLC_PART_TAIL,
                                        PLC_PART_WAITS, PLC_PART_OPTIMIZER};
  for (size_t k = 0; k < sizeof order / sizeof order[0]; k++)
    for (int i = 0; i < n; i++)
      if (parts[i].kind == order[k] && mpq_sgn(parts[i].time) > 0 &&
          (best < 0 || mpq_cmp(parts[i].time, parts[best].time) > 0))
        best = i;
  if (best >= 0) {
    b->kind = parts[best].kind;
    b->dim = parts[best].dim;
    mpq_inits(b->time, b->share, NULL);
    mpq_set(b->time, parts[best].time);
    mpq_set(b->share, parts[best].share);
  }
  plc_report_parts_clear(parts, n);
  return best >= 0;
}

char *plc_report_part_what(const plc_report_part *p)
{
  switch (p->kind) {
  case PLC_PART_EXPOSED:
    return plc_report_sprintf("exposed %s communication", plc_pdim_name(p->dim));
  case PLC_PART_BUBBLE: return plc_xstrdup("the pipeline bubble");
  case PLC_PART_TAIL: return plc_xstrdup("the DP gradient tail");
  case PLC_PART_WAITS: return plc_xstrdup("compute waiting for compute on other streams");
  case PLC_PART_OPTIMIZER: return plc_xstrdup("the optimizer step");
  default: return plc_xstrdup(plc_report_part_label(p));
  }
}

/* ---- collectives of the critical stage ------------------------------------------ */

static void plc_report_each_in(const plc_ir_list *l, const plc_sim *s, const char *list,
                               plc_report_coll_fn *fn, void *ctx)
{
  for (int i = 0; i < l->n; i++)
    if (s->ops[i].ran && l->ops[i].kind != PLC_OPK_COMPUTE)
      fn(ctx, list, l, i, &s->ops[i]);
}

void plc_report_each_coll(const plc_result *r, plc_report_coll_fn *fn, void *ctx)
{
  const plc_ir_stage *st = &r->run->stages[r->critical];
  plc_sim_times(&r->fwd); /* the rows give each op's start */
  plc_sim_times(&r->bwd);
  plc_report_each_in(&st->fwd, &r->fwd, "fwd", fn, ctx);
  plc_report_each_in(&st->bwd, &r->bwd, "bwd", fn, ctx);
}

void plc_report_op_cells(const plc_report_opts *o, const char *list, const plc_ir_list *l, int i,
                         const plc_sim_op *so, char **cells)
{
  const plc_ir_op *op = &l->ops[i];
  cells[0] = plc_xstrdup(list);
  cells[1] = plc_report_sprintf("%d", op->layer);
  cells[2] = plc_xstrdup(op->name);
  cells[3] = plc_report_sprintf("%s(%s)", plc_opk_name(op->kind), plc_pdim_name(op->dim));
  mpq_t b;
  mpq_init(b);
  plc_report_rank_bytes(b, op->kind, op->group, op->size);
  cells[4] = plc_report_bytes(o, b);
  mpq_clear(b);
  cells[5] = plc_report_time(o, so->start);
  cells[6] = plc_xstrdup(so->consumer >= 0 ? l->ops[so->consumer].name : "-");
  cells[7] = plc_report_time(o, so->window);
  cells[8] = plc_report_time(o, op->time);
  cells[9] = plc_report_time(o, so->exposed);
  cells[10] = plc_xstrdup(plc_why_text(so->why));
}

void plc_report_sense_cells(const plc_report_opts *o, const plc_result *r, int i, char **cells)
{
  const plc_sense *sn = &r->sense[i];
  const plc_coll_row *row = &r->rows[sn->row];
  cells[0] = plc_xstrdup(plc_pdim_name(row->dim));
  cells[1] = plc_xstrdup(plc_opk_name(row->kind));
  cells[2] = plc_xstrdup(plc_report_phase(row->phase));
  cells[3] = plc_report_time(o, row->exposed);
  cells[4] = plc_report_bw(o, sn->bw_now);
  cells[5] = sn->possible ? plc_report_bw(o, sn->bw_needed) : plc_xstrdup("none suffices");
  char *st = plc_report_time(o, sn->step_if);
  cells[6] = plc_report_sprintf("%s%s", st, sn->possible ? "" : " (if free)");
  free(st);
}

/* Is the critical device other than simply the critical stage? */
static int plc_report_device_apart(const plc_result *r)
{
  return plc_two_parts(r->run) || r->device != r->critical;
}

char *plc_report_critical_where(const plc_result *r, int total)
{
  int c = r->critical, p = r->run->nstages;
  char *stage = total ? plc_report_sprintf("critical stage %d of %d", c, p)
                      : plc_report_sprintf("critical stage %d", c);
  if (!plc_report_device_apart(r))
    return stage;
  char *out;
  if (plc_two_parts(r->run)) {
    int d = c < p - 1 - c ? c : p - 1 - c; /* device d holds stages d and p-1-d */
    out = d == r->device
            ? plc_report_sprintf("%s, on critical device %d", stage, d)
            : plc_report_sprintf("%s, on device %d; the critical device is %d", stage, d,
                                 r->device);
  } else {
    out = plc_report_sprintf("%s; the critical device is stage %d", stage, r->device);
  }
  free(stage);
  return out;
}

char *plc_report_critical_note(const plc_result *r)
{
  if (!plc_report_device_apart(r))
    return plc_xstrdup("");
  char *w = plc_report_critical_where(r, 0), *out = plc_report_sprintf(" (%s)", w);
  free(w);
  return out;
}

void plc_report_bubble_text(const plc_result *r, const plc_report_opts *o, char **how,
                            char **split, char **formula)
{
  *how = r->bubble_measured ? plc_xstrdup("simulated at block level")
                            : plc_report_sprintf("by the formula: %s", r->bubble_why);
  *split = *formula = NULL;
  if (r->bubble_measured) {
    char *f = plc_report_time(o, r->bubble_warmup), *w = plc_report_time(o, r->bubble_steady);
    char *d = plc_report_time(o, r->bubble_cooldown);
    char *who = plc_two_parts(r->run)
                  ? plc_report_sprintf("device %d (model stages %d and %d)", r->device, r->device,
                                       r->run->nstages - 1 - r->device)
                  : plc_report_sprintf("stage %d", r->device);
    *split = plc_report_sprintf("idle on critical %s: %s in warm-up, %s in the steady "
                                "phase, %s in cool-down", who, f, w, d);
    free(who);
    free(f);
    free(w);
    free(d);
  }
  if (r->bubble_formula_known) {
    char *f = plc_bubble_formula(r, o->digits, o->exact);
    char *v = plc_report_time(o, r->bubble_formula);
    *formula = plc_report_sprintf("formula %s = %s%s", f, v, !r->bubble_measured ? ""
                                  : mpq_equal(r->bubble_formula, r->bubble) ? " (the same)"
                                  : " (a reference)");
    free(f);
    free(v);
  }
}

void plc_report_mem_cells(const plc_report_opts *o, const plc_result *r, int s, char **cells)
{
  const plc_mem *m = r->mem;
  const plc_mem_stage *st = &m->st[s];
  cells[0] = plc_report_sprintf("%d", s);
  cells[1] = plc_report_bytes(o, st->weights);
  cells[2] = plc_report_bytes(o, st->grads);
  cells[3] = plc_report_bytes(o, st->optimizer);
  char *a = plc_report_bytes(o, st->activations);
  cells[4] = plc_report_sprintf("%s (%d in flight)", a, st->inflight);
  free(a);
  cells[5] = plc_report_bytes(o, st->buffers);
  cells[6] = plc_report_bytes(o, st->peak);
  cells[7] = m->capacity_known ? plc_report_bytes(o, st->headroom) : plc_xstrdup("-");
}

char *plc_report_mem_summary(const plc_result *r, const plc_report_opts *o)
{
  const plc_mem *m = r->mem;
  if (!m || !m->known)
    return plc_xstrdup("not modelled: no template of the framework has a memory section");
  char *why = m->why[0] ? plc_report_sprintf("; %s, so every microbatch of every chunk is "
                                             "counted in flight", m->why)
                         : plc_xstrdup("");
  char *out;
  if (!m->capacity_known) {
    out = plc_report_sprintf("the device declares no memory: fit not checked%s", why);
  } else {
    char *cap = plc_report_bytes(o, m->capacity), *res = plc_report_bytes(o, m->reserve);
    char *use = plc_report_bytes(o, m->usable);
    out = plc_report_sprintf("%s per device - %s reserve = %s usable: %s%s", cap, res, use,
                             m->fits ? "every stage fits" : "DOES NOT FIT", why);
    free(cap);
    free(res);
    free(use);
  }
  free(why);
  return out;
}

void plc_report_cells_free(char **cells, int n)
{
  for (int k = 0; k < n; k++)
    free(cells[k]);
}
