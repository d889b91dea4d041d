/* report.c - writing the analysis of a training run as text tables. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "report.h"
#include "sensitivity.h"
#include "xalloc.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- values ------------------------------------------------------------- */

static char *plc_rq(const plc_report_opts *o, mpq_srcptr v, int b, int s, int f)
{
  return plc_q_format_raw(v, b, s, f, o->digits, o->exact);
}

#define PLC_RQ_TIME(o, v) plc_rq((o), (v), 0, 1, 0)
#define PLC_RQ_BYTES(o, v) plc_rq((o), (v), 1, 0, 0)
#define PLC_RQ_BW(o, v) plc_rq((o), (v), 1, -1, 0)

/* A fraction as a percentage ("10.12%"), or exactly. */
static char *plc_rpct(const plc_report_opts *o, mpq_srcptr v)
{
  if (o->exact)
    return plc_fmt_exact(v);
  mpq_t p;
  mpq_init(p);
  mpq_set_ui(p, 100, 1);
  mpq_mul(p, p, v);
  char *n = plc_fmt_sig(p, o->digits), *s = plc_xmalloc(strlen(n) + 2);
  sprintf(s, "%s%%", n);
  free(n);
  mpq_clear(p);
  return s;
}

/* ---- tables -------------------------------------------------------------- */

typedef struct plc_table {
  char **cells;
  int cols, n, cap;
} plc_table;

static void plc_table_row(plc_table *t, ...)
{
  va_list ap;
  va_start(ap, t);
  for (int c = 0; c < t->cols; c++) {
    if (t->n == t->cap)
      t->cells = plc_xrealloc(t->cells, (size_t)(t->cap = t->cap ? t->cap * 2 : 64) * sizeof *t->cells);
    const char *s = va_arg(ap, const char *);
    t->cells[t->n++] = plc_xstrdup(s ? s : "");
  }
  va_end(ap);
}

static void plc_table_free(plc_table *t)
{
  for (int i = 0; i < t->n; i++)
    free(t->cells[i]);
  free(t->cells);
  t->cells = NULL;
  t->n = t->cap = 0;
}

/* Print with columns padded to their widths; the first column left-aligned,
 * the others right-aligned (numbers), the last left-aligned (text). */
static void plc_table_print(FILE *out, plc_table *t, int text_last)
{
  int rows = t->n / t->cols;
  int *w = plc_xcalloc((size_t)t->cols, sizeof *w);
  for (int i = 0; i < t->n; i++) {
    int len = (int)strlen(t->cells[i]);
    if (len > w[i % t->cols])
      w[i % t->cols] = len;
  }
  for (int r = 0; r < rows; r++) {
    fputs("  ", out);
    for (int c = 0; c < t->cols; c++) {
      const char *s = t->cells[r * t->cols + c];
      int left = c == 0 || (text_last && c == t->cols - 1);
      int last = c == t->cols - 1;
      if (left && last)
        fputs(s, out);
      else if (left)
        fprintf(out, "%-*s", w[c], s);
      else
        fprintf(out, "%*s", w[c], s);
      if (!last)
        fputs("  ", out);
    }
    fputc('\n', out);
  }
  free(w);
  plc_table_free(t);
}

/* ---- sections -------------------------------------------------------------- */

static void plc_report_header(FILE *out, const plc_result *r, const plc_report_opts *o)
{
  const plc_ir_run *run = r->run;
  const int *s = run->size;
  fprintf(out, "train %s (%s:%d)\n", run->name, run->decl->loc.src->path,
          run->decl->loc.first_line);
  fprintf(out, "  %d devices of %s: tp %d x cp %d x dp %d x pp %d", run->world, run->device,
          s[PLC_PD_TP], s[PLC_PD_CP], s[PLC_PD_DP], s[PLC_PD_PP]);
  if (s[PLC_PD_EP] > 1)
    fprintf(out, " (ep %d, edp %d)", s[PLC_PD_EP], s[PLC_PD_EDP]);
  if (s[PLC_PD_SHARD] > 1 || s[PLC_PD_REPLICATE] > 1)
    fprintf(out, " (shard %d x replicate %d)", s[PLC_PD_SHARD], s[PLC_PD_REPLICATE]);
  fprintf(out, "; vpp %d; %s schedule\n", run->vpp, run->schedule);
  fprintf(out, "  mu = %ld microbatches of %d x %d tokens per step; recompute %s\n", run->mu,
          run->micro_batch, run->seq,
          run->recompute == 2 ? "full" : run->recompute == 1 ? "selective" : "none");
  for (int i = 0; i < o->noverrides; i++) /* a result says what it assumed */
    fprintf(out, "  with -D %s\n", o->overrides[i]);
}

static void plc_report_placement(FILE *out, const plc_result *r, const plc_report_opts *o)
{
  const plc_ir_run *run = r->run;
  plc_table t = {.cols = 7};
  plc_table_row(&t, "dim", "size", "stride", "span", "tier", "link", "bandwidth used");
  for (int d = 0; d < PLC_PD_COUNT; d++) {
    const plc_ir_place *p = &run->place[d];
    if (p->size < 2)
      continue;
    char sz[16], st[16], sp[24], bw[256] = "";
    snprintf(sz, sizeof sz, "%d", p->size);
    snprintf(st, sizeof st, "%d", p->stride);
    snprintf(sp, sizeof sp, "%ld", p->span);
    for (int k = 1; k < PLC_OPK_COUNT; k++)
      if (p->bw[k]) {
        char *v = PLC_RQ_BW(o, p->bw[k]);
        size_t len = strlen(bw);
        snprintf(bw + len, sizeof bw - len, "%s%s %s", len ? ", " : "", plc_opk_name(k), v);
        free(v);
      }
    char link[128];
    snprintf(link, sizeof link, "%s%s", p->link, p->overridden ? " (set)" : "");
    plc_table_row(&t, plc_pdim_name(d), sz, st, sp, p->tier, link, bw);
  }
  fputs("\nplacement\n", out);
  if (t.n == t.cols) {
    fputs("  (every parallel dimension has size 1)\n", out);
    plc_table_free(&t);
  } else {
    plc_table_print(out, &t, 1);
  }
}

/* The commonest reason among the row's exposed ops (or among all of them
 * when none is exposed). */
static const char *plc_report_why(const plc_coll_row *row)
{
  const int *count = mpq_sgn(row->exposed) > 0 ? row->why_exposed : row->why;
  int best = -1;
  for (int w = 0; w < PLC_WHY_COUNT; w++)
    if (count[w] && (best < 0 || count[w] > count[best]))
      best = w;
  return best < 0 ? "" : plc_why_text((plc_why)best);
}

static void plc_report_inventory(FILE *out, const plc_result *r, const plc_report_opts *o)
{
  static const char *const phases[] = {"fwd", "recomp", "bwd", "step"};
  plc_table t = {.cols = 11};
  plc_table_row(&t, "dim", "primitive", "phase", "count", "bytes/op", "time/op", "total",
                "window", "exposed", "hidden", "reason");
  for (int i = 0; i < r->nrows; i++) {
    const plc_coll_row *row = &r->rows[i];
    char cnt[24];
    snprintf(cnt, sizeof cnt, "%ld", row->count);
    char *b = row->uniform ? PLC_RQ_BYTES(o, row->size_each) : plc_xstrdup("mixed");
    char *te = row->uniform ? PLC_RQ_TIME(o, row->time_each) : plc_xstrdup("mixed");
    char *tt = PLC_RQ_TIME(o, row->time), *w = PLC_RQ_TIME(o, row->window);
    char *e = PLC_RQ_TIME(o, row->exposed);
    mpq_t h;
    mpq_init(h);
    if (mpq_sgn(row->time)) {
      mpq_sub(h, row->time, row->exposed);
      mpq_div(h, h, row->time);
    }
    char *hp = plc_rpct(o, h);
    plc_table_row(&t, plc_pdim_name(row->dim), plc_opk_name(row->kind), phases[row->phase], cnt,
                  b, te, tt, w, e, hp, plc_report_why(row));
    mpq_clear(h);
    free(b);
    free(te);
    free(tt);
    free(w);
    free(e);
    free(hp);
  }
  fprintf(out, "\ncommunication per microbatch, critical stage %d of %d\n", r->critical,
          r->run->nstages);
  if (r->nrows == 0) {
    fputs("  (no collectives)\n", out);
    plc_table_free(&t);
  } else {
    plc_table_print(out, &t, 1);
  }
}

/* The article's four-step test for each collective of one list: its
 * consumer, its window of independent compute, its time, what is exposed. */
static void plc_report_ops_list(plc_table *t, const plc_ir_list *l, const plc_sim *s,
                                const char *list, const plc_report_opts *o)
{
  for (int i = 0; i < l->n; i++) {
    const plc_ir_op *op = &l->ops[i];
    const plc_sim_op *so = &s->ops[i];
    if (!so->ran || op->kind == PLC_OPK_COMPUTE)
      continue;
    char layer[16], what[64];
    snprintf(layer, sizeof layer, "%d", op->layer);
    snprintf(what, sizeof what, "%s(%s)", plc_opk_name(op->kind), plc_pdim_name(op->dim));
    const char *consumer = so->consumer >= 0 ? l->ops[so->consumer].name : "-";
    char *st = PLC_RQ_TIME(o, so->start), *w = PLC_RQ_TIME(o, so->window);
    char *tt = PLC_RQ_TIME(o, op->time), *e = PLC_RQ_TIME(o, so->exposed);
    plc_table_row(t, list, layer, op->name, what, st, consumer, w, tt, e, plc_why_text(so->why));
    free(st);
    free(w);
    free(tt);
    free(e);
  }
}

static void plc_report_ops(FILE *out, const plc_result *r, const plc_report_opts *o)
{
  const plc_ir_stage *st = &r->run->stages[r->critical];
  plc_table t = {.cols = 10};
  plc_table_row(&t, "list", "layer", "op", "primitive", "start", "consumer", "window", "time",
                "exposed", "reason");
  plc_report_ops_list(&t, &st->fwd, &r->fwd, "fwd", o);
  plc_report_ops_list(&t, &st->bwd, &r->bwd, "bwd", o);
  fprintf(out, "\ncollectives of one microbatch, critical stage %d\n", r->critical);
  plc_table_print(out, &t, 1);
}

static void plc_report_bubble(FILE *out, const plc_result *r, const plc_report_opts *o)
{
  char *f = plc_bubble_formula(r, o->digits, o->exact), *b = PLC_RQ_TIME(o, r->bubble);
  fprintf(out, "\nbubble (%s)\n  %s = %s\n", r->run->schedule, f, b);
  free(f);
  free(b);
}

/* One line of the step decomposition, with its share of the step. */
static void plc_report_part(plc_table *t, const plc_result *r, const plc_report_opts *o,
                            const char *label, mpq_srcptr v, const char *note)
{
  mpq_t share;
  mpq_init(share);
  if (mpq_sgn(r->step))
    mpq_div(share, v, r->step);
  char *a = PLC_RQ_TIME(o, v), *p = plc_rpct(o, share);
  plc_table_row(t, label, a, p, note);
  free(a);
  free(p);
  mpq_clear(share);
}

static void plc_report_tail_note(const plc_result *r, const plc_report_opts *o, char *buf,
                                 size_t n)
{
  char *full = PLC_RQ_TIME(o, r->tail_full);
  switch (r->tail_kind) {
  case PLC_TAIL_PINNED: snprintf(buf, n, "pinned by the plan"); break;
  case PLC_TAIL_DECLARED: {
    char *h = plc_rpct(o, r->run->dp_hidden);
    snprintf(buf, n, "%s of %s declared hidden", h, full);
    free(h);
    break;
  }
  case PLC_TAIL_SIMULATED: snprintf(buf, n, "simulated from %s of gradient sync", full); break;
  default: snprintf(buf, n, "no gradient sync in the plan"); break;
  }
  free(full);
}

static void plc_report_step(FILE *out, const plc_result *r, const plc_report_opts *o)
{
  const plc_ir_run *run = r->run;
  mpq_t mu, v;
  mpq_inits(mu, v, NULL);
  mpq_set_si(mu, run->mu, 1);
  plc_table t = {.cols = 4};
  char note[256];
  mpq_mul(v, mu, r->compute_mb);
  plc_report_part(&t, r, o, "compute", v, "mu x compute on the compute stream");
  for (int d = 0; d < PLC_PD_COUNT; d++)
    if (mpq_sgn(r->exposed_mb[d])) {
      mpq_mul(v, mu, r->exposed_mb[d]);
      snprintf(note, sizeof note, "mu x exposed %s communication", plc_pdim_name(d));
      plc_report_part(&t, r, o, plc_pdim_name(d), v, note);
    }
  if (mpq_sgn(r->stall_mb)) {
    mpq_mul(v, mu, r->stall_mb);
    plc_report_part(&t, r, o, "waits", v, "compute waiting for compute on other streams");
  }
  plc_report_part(&t, r, o, "bubble", r->bubble, "");
  plc_report_tail_note(r, o, note, sizeof note);
  plc_report_part(&t, r, o, "dp tail", r->tail, note);
  if (mpq_sgn(r->optimizer))
    plc_report_part(&t, r, o, "optimizer", r->optimizer, "pinned by the plan");
  plc_report_part(&t, r, o, "step", r->step, "");
  char *tf = PLC_RQ_TIME(o, r->t_f), *tb = PLC_RQ_TIME(o, r->t_b), *tt = PLC_RQ_TIME(o, r->t);
  fprintf(out, "\nstep time\n  per microbatch: t_f %s + t_b %s = %s (backward includes "
          "recompute)\n", tf, tb, tt);
  plc_table_print(out, &t, 1);
  free(tf);
  free(tb);
  free(tt);
  mpq_clears(mu, v, NULL);
}

/* For each exposed row: the bandwidth that would hide it, and the step. */
static void plc_report_sensitivity(FILE *out, const plc_result *r, const plc_report_opts *o)
{
  if (r->nsense == 0)
    return;
  static const char *const phases[] = {"fwd", "recomp", "bwd", "step"};
  plc_table t = {.cols = 7};
  plc_table_row(&t, "dim", "primitive", "phase", "exposed/mb", "bandwidth", "to hide",
                "step if hidden");
  for (int i = 0; i < r->nsense; i++) {
    const plc_sense *sn = &r->sense[i];
    const plc_coll_row *row = &r->rows[sn->row];
    char *e = PLC_RQ_TIME(o, row->exposed), *now = PLC_RQ_BW(o, sn->bw_now);
    char *need = sn->possible ? PLC_RQ_BW(o, sn->bw_needed) : plc_xstrdup("none suffices");
    char *st = PLC_RQ_TIME(o, sn->step_if);
    char *step = plc_xmalloc(strlen(st) + 16);
    sprintf(step, "%s%s", st, sn->possible ? "" : " (if free)");
    plc_table_row(&t, plc_pdim_name(row->dim), plc_opk_name(row->kind), phases[row->phase], e,
                  now, need, step);
    free(e);
    free(now);
    free(need);
    free(st);
    free(step);
  }
  fputs("\nwhat would hide the exposed communication\n", out);
  plc_table_print(out, &t, 1);
}

static void plc_report_efficiency(FILE *out, const plc_result *r, const plc_report_opts *o)
{
  char *eta = plc_rpct(o, r->eta), *busy = plc_rpct(o, r->busy);
  char *mfu = r->mfu_known ? plc_rpct(o, r->mfu) : plc_xstrdup("n/a (compute times pinned)");
  char *tps = o->exact ? plc_fmt_exact(r->tokens_per_s) : plc_fmt_sig(r->tokens_per_s, o->digits);
  fprintf(out, "\nefficiency\n  eta  %s  (useful compute / step)\n  busy %s  (all compute, "
          "recompute included / step)\n  MFU  %s\n  tokens/s %s\n", eta, busy, mfu, tps);
  free(eta);
  free(busy);
  free(mfu);
  free(tps);
}

/* The largest share of the step that is not compute. */
static void plc_report_bottleneck(FILE *out, const plc_result *r, const plc_report_opts *o)
{
  const char *what = NULL;
  mpq_t best, v, mu;
  mpq_inits(best, v, mu, NULL);
  mpq_set_si(mu, r->run->mu, 1);
  char label[64];
  for (int d = 0; d < PLC_PD_COUNT; d++) {
    mpq_mul(v, mu, r->exposed_mb[d]);
    if (mpq_cmp(v, best) > 0) {
      mpq_set(best, v);
      snprintf(label, sizeof label, "exposed %s communication", plc_pdim_name(d));
      what = label;
    }
  }
  if (mpq_cmp(r->bubble, best) > 0) {
    mpq_set(best, r->bubble);
    what = "the pipeline bubble";
  }
  if (mpq_cmp(r->tail, best) > 0) {
    mpq_set(best, r->tail);
    what = "the DP gradient tail";
  }
  mpq_mul(v, mu, r->stall_mb);
  if (mpq_cmp(v, best) > 0) {
    mpq_set(best, v);
    what = "compute waiting for compute on other streams";
  }
  if (mpq_cmp(r->optimizer, best) > 0) {
    mpq_set(best, r->optimizer);
    what = "the optimizer step";
  }
  if (what) {
    mpq_div(v, best, r->step);
    char *p = plc_rpct(o, v);
    fprintf(out, "\nbottleneck\n  %s: %s of the step\n", what, p);
    free(p);
  } else {
    fputs("\nbottleneck\n  none: the step is all compute\n", out);
  }
  mpq_clears(best, v, mu, NULL);
}

void plc_report_text(FILE *out, const plc_result *r, const plc_report_opts *o)
{
  plc_report_header(out, r, o);
  plc_report_placement(out, r, o);
  plc_report_inventory(out, r, o);
  if (o->ops)
    plc_report_ops(out, r, o);
  plc_report_bubble(out, r, o);
  plc_report_step(out, r, o);
  plc_report_sensitivity(out, r, o);
  plc_report_efficiency(out, r, o);
  plc_report_bottleneck(out, r, o);
}

int plc_report_figure(const plc_result *r, const char *name, plc_quantity *q)
{
  static const struct { const char *name; int sec; } figs[] = {
    {"step_time", 1}, {"bubble", 1}, {"eta", 0}, {"busy", 0}, {"mfu", 0},
    {"tokens_per_s", -1}, {"mu", 0}, {"t_f", 1}, {"t_b", 1}, {"dp_tail_time", 1},
    {"world", 0}, {"tokens", 0},
  };
  mpq_srcptr vals[] = {r->step, r->bubble, r->eta, r->busy, r->mfu, r->tokens_per_s, NULL,
                       r->t_f, r->t_b, r->tail, NULL, NULL};
  for (size_t i = 0; i < sizeof figs / sizeof figs[0]; i++) {
    if (strcmp(figs[i].name, name))
      continue;
    q->dim = plc_dim_none();
    q->dim.e[PLC_DIM_SEC] = figs[i].sec;
    if (vals[i])
      mpq_set(q->v, vals[i]);
    else if (!strcmp(name, "mu"))
      mpq_set_si(q->v, r->run->mu, 1);
    else if (!strcmp(name, "world"))
      mpq_set_si(q->v, r->run->world, 1);
    else
      mpq_set_si(q->v, (long)r->run->micro_batch * r->run->seq, 1);
    return !(!strcmp(name, "mfu") && !r->mfu_known);
  }
  return 0;
}
