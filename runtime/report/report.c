/* report.c - writing the analysis of a training run as text tables. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "report.h"
#include "memory.h"
#include "report_parts.h"
#include "report_whole.h"
#include "sensitivity.h"
#include "xalloc.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

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

/* s (len bytes) padded with blanks to w bytes at o, on the right when left
 * (printf's "%-*s") else on the left ("%*s"); returns the end. */
static char *plc_table_cell(char *o, const char *s, size_t len, size_t w, int left)
{
  size_t pad = w > len ? w - len : 0;
  if (!left) {
    memset(o, ' ', pad);
    o += pad;
  }
  memcpy(o, s, len);
  o += len;
  if (left) {
    memset(o, ' ', pad);
    o += pad;
  }
  return o;
}

/* Print with columns padded to their widths; the first column left-aligned,
 * the others right-aligned (numbers), the last left-aligned (text).  The
 * table is laid out in one buffer and written at once: a report prints a
 * hundred cells, and a printf or fwrite per cell took most of its
 * instructions. */
static void plc_table_print(FILE *out, plc_table *t, int text_last)
{
  int rows = t->n / t->cols;
  size_t *w = plc_xcalloc((size_t)t->cols, sizeof *w);
  size_t *len = plc_xmalloc((t->n > 0 ? (size_t)t->n : 1) * sizeof *len);
  size_t line = 3 + 2 * (size_t)t->cols; /* indent, separators, newline */
  for (int i = 0; i < t->n; i++) {
    len[i] = strlen(t->cells[i]);
    if (len[i] > w[i % t->cols])
      w[i % t->cols] = len[i];
  }
  for (int c = 0; c < t->cols; c++)
    line += w[c];
  char *buf = plc_xmalloc((size_t)rows * line + 1), *o = buf;
  for (int r = 0; r < rows; r++) {
    *o++ = ' ';
    *o++ = ' ';
    for (int c = 0; c < t->cols; c++) {
      int i = r * t->cols + c;
      int left = c == 0 || (text_last && c == t->cols - 1);
      int last = c == t->cols - 1;
      /* a left-aligned last cell takes no padding */
      o = plc_table_cell(o, t->cells[i], len[i], left && last ? 0 : w[c], left);
      if (!last) {
        *o++ = ' ';
        *o++ = ' ';
      }
    }
    *o++ = '\n';
  }
  fwrite(buf, 1, (size_t)(o - buf), out);
  free(buf);
  free(len);
  free(w);
  plc_table_free(t);
}

/* ---- sections -------------------------------------------------------------- */

static void plc_report_header(FILE *out, const plc_result *r, const plc_report_opts *o)
{
  const plc_ir_run *run = r->run;
  char *layout = plc_report_layout(run), *batch = plc_report_batch(run);
  fprintf(out, "train %s (%s:%d)\n  %s\n  %s\n", run->name, run->decl->loc.src->path,
          run->decl->loc.first_line, layout, batch);
  for (int i = 0; i < o->noverrides; i++) /* a result says what it assumed */
    fprintf(out, "  with -D %s\n", o->overrides[i]);
  free(layout);
  free(batch);
}

static void plc_report_placement(FILE *out, const plc_result *r, const plc_report_opts *o)
{
  const plc_ir_run *run = r->run;
  plc_table t = {.cols = 7};
  plc_table_row(&t, "dim", "size", "stride", "span", "tier", "link", "bandwidth used");
  for (int d = 0; d < PLC_PD_COUNT; d++) {
    const plc_ir_place *p = &run->place[d];
    if (!plc_report_place_shown(run, d))
      continue;
    char *sz = plc_report_sprintf("%d", p->size), *st = plc_report_sprintf("%d", p->stride);
    char *sp = plc_report_sprintf("%ld", p->span), *bw = plc_report_bandwidths(p, o);
    char *link = plc_report_sprintf("%s%s", p->link, p->overridden ? " (set)" : "");
    plc_table_row(&t, plc_pdim_name(d), sz, st, sp, p->tier, link, bw);
    free(sz);
    free(st);
    free(sp);
    free(bw);
    free(link);
  }
  fputs("\nplacement\n", out);
  if (t.n == t.cols) {
    fputs("  (every parallel dimension has size 1)\n", out);
    plc_table_free(&t);
  } else {
    plc_table_print(out, &t, 1);
  }
}

static void plc_report_inventory_row(plc_table *t, const plc_ir_run *run,
                                     const plc_coll_row *row, const plc_report_opts *o)
{
  char cnt[24];
  snprintf(cnt, sizeof cnt, "%ld", row->count);
  char *b = row->uniform ? plc_report_bytes(o, row->size_each) : plc_xstrdup("mixed");
  char *br = plc_report_row_rank_each(o, run, row);
  char *te = row->uniform ? plc_report_time(o, row->time_each) : plc_xstrdup("mixed");
  char *tt = plc_report_time(o, row->time), *w = plc_report_time(o, row->window);
  char *e = plc_report_time(o, row->exposed);
  mpq_t h;
  mpq_init(h);
  plc_report_hidden(h, row);
  char *hp = plc_report_pct(o, h);
  plc_table_row(t, plc_pdim_name(row->dim), plc_opk_name(row->kind),
                plc_report_phase(row->phase), cnt, b, br, te, tt, w, e, hp, plc_report_why(row));
  mpq_clear(h);
  free(b);
  free(br);
  free(te);
  free(tt);
  free(w);
  free(e);
  free(hp);
}

static void plc_report_inventory(FILE *out, const plc_result *r, const plc_report_opts *o)
{
  plc_table t = {.cols = 12};
  plc_table_row(&t, "dim", "primitive", "phase", "count", "bytes/op", "bytes/rank", "time/op",
                "total", "window", "exposed", "hidden", "reason");
  for (int i = 0; i < r->nrows; i++)
    plc_report_inventory_row(&t, r->run, &r->rows[i], o);
  char *where = plc_report_critical_where(r, 1);
  fprintf(out, "\ncommunication per microbatch, %s\n", where);
  free(where);
  if (r->nrows == 0) {
    fputs("  (no collectives)\n", out);
    plc_table_free(&t);
  } else {
    plc_table_print(out, &t, 1);
  }
}

typedef struct plc_report_ops_ctx {
  plc_table *t;
  const plc_report_opts *o;
} plc_report_ops_ctx;

/* The article's four-step test for one collective: its consumer, its
 * window of independent compute, its time, what is exposed. */
static void plc_report_op(void *ctx, const char *list, const plc_ir_list *l, int i,
                          const plc_sim_op *so)
{
  const plc_report_ops_ctx *c = ctx;
  char *v[PLC_REPORT_OP_CELLS];
  plc_report_op_cells(c->o, list, l, i, so, v);
  plc_table_row(c->t, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10]);
  plc_report_cells_free(v, PLC_REPORT_OP_CELLS);
}

static void plc_report_ops(FILE *out, const plc_result *r, const plc_report_opts *o)
{
  plc_table t = {.cols = 11};
  plc_table_row(&t, "list", "layer", "op", "primitive", "bytes/rank", "start", "consumer",
                "window", "time", "exposed", "reason");
  plc_report_ops_ctx c = {&t, o};
  plc_report_each_coll(r, plc_report_op, &c);
  char *where = plc_report_critical_where(r, 0);
  fprintf(out, "\ncollectives of one microbatch, %s\n", where);
  free(where);
  plc_table_print(out, &t, 1);
}

static void plc_report_bubble(FILE *out, const plc_result *r, const plc_report_opts *o)
{
  char *how, *split, *formula, *b = plc_report_time(o, r->bubble);
  plc_report_bubble_text(r, o, &how, &split, &formula);
  fprintf(out, "\nbubble (%s): %s, %s\n", r->run->schedule, b, how);
  if (split)
    fprintf(out, "  %s\n", split);
  if (formula)
    fprintf(out, "  %s\n", formula);
  free(how);
  free(split);
  free(formula);
  free(b);
}

static void plc_report_step(FILE *out, const plc_result *r, const plc_report_opts *o)
{
  plc_report_part parts[PLC_REPORT_MAX_PARTS];
  int n = plc_report_parts(r, 0, parts);
  plc_table t = {.cols = 4};
  for (int i = 0; i < n; i++) {
    char *a = plc_report_time(o, parts[i].time), *p = plc_report_pct(o, parts[i].share);
    char *note = plc_report_part_note(r, o, &parts[i]);
    plc_table_row(&t, plc_report_part_label(&parts[i]), a, p, note);
    free(a);
    free(p);
    free(note);
  }
  plc_report_parts_clear(parts, n);
  char *tf = plc_report_time(o, r->t_f), *tb = plc_report_time(o, r->t_b);
  char *tt = plc_report_time(o, r->t);
  fprintf(out, "\nstep time\n  per microbatch: t_f %s + t_b %s = %s (backward includes "
          "recompute)\n", tf, tb, tt);
  char *fb = plc_report_fb_text(r, o);
  if (fb)
    fprintf(out, "  %s\n", fb);
  free(fb);
  plc_table_print(out, &t, 1);
  free(tf);
  free(tb);
  free(tt);
}

static void plc_report_efficiency(FILE *out, const plc_result *r, const plc_report_opts *o)
{
  char *eta = plc_report_pct(o, r->eta), *busy = plc_report_pct(o, r->busy);
  char *mfu = r->mfu_known ? plc_report_pct(o, r->mfu)
                           : plc_report_sprintf("n/a (%s)", r->mfu_why);
  char *tps = plc_report_num(o, r->tokens_per_s);
  fprintf(out, "\nefficiency\n  eta  %s  (useful compute / step)\n  busy %s  (all compute, "
          "recompute included / step)\n  MFU  %s\n  tokens/s %s\n", eta, busy, mfu, tps);
  free(eta);
  free(busy);
  free(mfu);
  free(tps);
}

static void plc_report_bottleneck_text(FILE *out, const plc_result *r, const plc_report_opts *o)
{
  plc_report_part b;
  if (!plc_report_bottleneck(r, &b)) {
    fputs("\nbottleneck\n  none: the step is all compute\n", out);
    return;
  }
  char *what = plc_report_part_what(&b), *p = plc_report_pct(o, b.share);
  fprintf(out, "\nbottleneck\n  %s: %s of the step\n", what, p);
  free(what);
  free(p);
  plc_report_parts_clear(&b, 1);
}

/* Peak memory per stage with its breakdown, and whether it fits. */
static void plc_report_memory(FILE *out, const plc_result *r, const plc_report_opts *o)
{
  char *sum = plc_report_mem_summary(r, o);
  if (!r->mem || !r->mem->known) {
    fprintf(out, "\nmemory per device\n  %s\n", sum);
    free(sum);
    return;
  }
  plc_table t = {.cols = PLC_REPORT_MEM_CELLS};
  plc_table_row(&t, "stage", "weights", "grads", "optimizer", "activations", "buffers", "peak",
                "headroom");
  for (int s = 0; s < r->mem->nstages; s++) {
    char *v[PLC_REPORT_MEM_CELLS];
    plc_report_mem_cells(o, r, s, v);
    plc_table_row(&t, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]);
    plc_report_cells_free(v, PLC_REPORT_MEM_CELLS);
  }
  fprintf(out, "\nmemory per device, at each stage's peak over the step (%s order)\n",
          r->run->schedule);
  plc_table_print(out, &t, 1);
  fprintf(out, "  %s\n", sum);
  free(sum);
}

/* For each exposed row: the bandwidth that would hide it, and the step. */
static void plc_report_sensitivity(FILE *out, const plc_result *r, const plc_report_opts *o)
{
  if (r->nsense == 0)
    return;
  plc_table t = {.cols = 7};
  plc_table_row(&t, "dim", "primitive", "phase", "exposed/mb", "bandwidth", "to hide",
                "step if hidden");
  for (int i = 0; i < r->nsense; i++) {
    char *v[PLC_REPORT_SENSE_CELLS];
    plc_report_sense_cells(o, r, i, v);
    plc_table_row(&t, v[0], v[1], v[2], v[3], v[4], v[5], v[6]);
    plc_report_cells_free(v, PLC_REPORT_SENSE_CELLS);
  }
  char *note = plc_report_critical_note(r);
  fprintf(out, "\nwhat would hide the exposed communication%s\n", note);
  free(note);
  plc_table_print(out, &t, 1);
}

/* The whole step simulated by the op-level engine (report_whole.h). */
static void plc_report_whole_text(FILE *out, const plc_result *r, const plc_report_opts *o)
{
  const plc_whole *w = plc_whole_get(r);
  char *head = plc_report_whole_head(w, r, o);
  fprintf(out, "\nwhole step (simulated)\n  %s\n", head);
  free(head);
  plc_report_whole_row rows[PLC_REPORT_WHOLE_MAX_ROWS];
  int n = plc_report_whole_rows(w, r, o, rows);
  if (n == 0)
    return;
  plc_table t = {.cols = 4};
  for (int i = 0; i < n; i++)
    plc_table_row(&t, rows[i].label, rows[i].t, rows[i].share, rows[i].note);
  plc_table_print(out, &t, 1);
  plc_report_whole_rows_free(rows, n);
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
  if (o->whole_step)
    plc_report_whole_text(out, r, o);
  plc_report_sensitivity(out, r, o);
  plc_report_memory(out, r, o);
  plc_report_efficiency(out, r, o);
  plc_report_bottleneck_text(out, r, o);
}

/* peak_memory and its parts on the device that reaches it (the first on
 * ties), memory_headroom over all devices; NULL when known, else why not. */
static const char *plc_report_mem_figure(const plc_result *r, const char *name, plc_quantity *q)
{
  const plc_mem *m = r->mem;
  if (!m || !m->known)
    return "no memory model: no template of its framework has a memory section";
  q->dim.e[PLC_DIM_BYTE] = 1;
  const plc_mem_stage *w = &m->st[m->worst];
  static const char *const parts[] = {"peak_memory", "memory_weights", "memory_grads",
                                      "memory_optimizer", "memory_activations",
                                      "memory_buffers"};
  mpq_srcptr vals[] = {w->peak, w->weights, w->grads, w->optimizer, w->activations, w->buffers};
  for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
    if (!strcmp(name, parts[i])) {
      mpq_set(q->v, vals[i]);
      return NULL;
    }
  if (!m->capacity_known)
    return "no memory headroom: its device declares no memory";
  mpq_set(q->v, m->st[0].headroom);
  for (int s = 1; s < m->nstages; s++)
    if (mpq_cmp(m->st[s].headroom, q->v) < 0)
      mpq_set(q->v, m->st[s].headroom);
  return NULL;
}

const char *plc_report_figure(const plc_result *r, const char *name, plc_quantity *q)
{
  static const struct { const char *name; int sec; } figs[] = {
    {"step_time", 1}, {"bubble", 1}, {"eta", 0}, {"busy", 0}, {"mfu", 0},
    {"tokens_per_s", -1}, {"mu", 0}, {"t_f", 1}, {"t_b", 1}, {"dp_tail_time", 1},
    {"world", 0}, {"tokens", 0},
  };
  mpq_srcptr vals[] = {r->step, r->bubble, r->eta, r->busy, r->mfu, r->tokens_per_s, NULL,
                       r->t_f, r->t_b, r->tail, NULL, NULL};
  q->dim = plc_dim_none();
  if (!strncmp(name, "sim_", 4))
    return plc_report_whole_figure(r, name, q);
  if (!strcmp(name, "peak_memory") || !strncmp(name, "memory_", 7))
    return plc_report_mem_figure(r, name, q);
  for (size_t i = 0; i < sizeof figs / sizeof figs[0]; i++) {
    if (strcmp(figs[i].name, name))
      continue;
    q->dim.e[PLC_DIM_SEC] = figs[i].sec;
    if (vals[i])
      mpq_set(q->v, vals[i]);
    else if (!strcmp(name, "mu"))
      mpq_set_si(q->v, r->run->mu, 1);
    else if (!strcmp(name, "world"))
      mpq_set_si(q->v, r->run->world, 1);
    else
      mpq_set_si(q->v, (long)r->run->micro_batch * r->run->seq, 1);
    if (!strcmp(name, "mfu") && !r->mfu_known)
      return "no mfu (its compute times are pinned, so its FLOPs are unknown)";
    return NULL;
  }
  return "no such result";
}
