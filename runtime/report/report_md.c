/* report_md.c - the report as Markdown: headings, a list and pipe tables.
 *
 * Text from plans (names, paths) is escaped so that it cannot start
 * emphasis, code or a table cell; the figures and words come from
 * report_parts.c, as in the text and JSON reports. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "report_md.h"
#include "memory.h"
#include "report_parts.h"
#include "report_whole.h"
#include "xalloc.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- escaping and tables ---------------------------------------------------------- */

/* Write s with Markdown's active characters escaped.  '_' inside a word
 * ("all_reduce", "t_f") cannot start emphasis and stays as it is. */
static void plc_md_text(FILE *out, const char *s)
{
  for (const char *p = s; *p; p++) {
    int c = (unsigned char)*p;
    int word = p > s && isalnum((unsigned char)p[-1]) && isalnum((unsigned char)p[1]);
    if (strchr("\\`*|<>[]~#", c) || (c == '_' && !word))
      fputc('\\', out);
    fputc(c, out);
  }
}

/* s as inline code, or as escaped text when it holds a backtick. */
static void plc_md_code(FILE *out, const char *s)
{
  if (strchr(s, '`')) {
    plc_md_text(out, s);
    return;
  }
  fprintf(out, "`%s`", s);
}

/* "| a | b |" with every cell escaped. */
static void plc_md_row(FILE *out, int cols, ...)
{
  va_list ap;
  va_start(ap, cols);
  fputc('|', out);
  for (int c = 0; c < cols; c++) {
    const char *s = va_arg(ap, const char *);
    fputc(' ', out);
    plc_md_text(out, s ? s : "");
    fputs(" |", out);
  }
  fputc('\n', out);
  va_end(ap);
}

/* The delimiter row: one column per character of align, 'l' left, 'r'
 * right (numbers). */
static void plc_md_rule(FILE *out, const char *align)
{
  fputc('|', out);
  for (const char *a = align; *a; a++)
    fputs(*a == 'r' ? "---:|" : "---|", out);
  fputc('\n', out);
}

/* ---- sections ---------------------------------------------------------------------- */

static void plc_md_header(FILE *out, const plc_result *r)
{
  const plc_ir_run *run = r->run;
  char *where = plc_report_sprintf("%s:%d", run->decl->loc.src->path, run->decl->loc.first_line);
  char *layout = plc_report_layout(run), *batch = plc_report_batch(run);
  fputs("## train ", out);
  plc_md_code(out, run->name);
  fputs("\n\n- declared at ", out);
  plc_md_code(out, where);
  fputs("\n- ", out);
  plc_md_text(out, layout);
  fputs("\n- ", out);
  plc_md_text(out, batch);
  fputc('\n', out);
  free(where);
  free(layout);
  free(batch);
}

static void plc_md_place(FILE *out, const plc_ir_place *p, plc_pdim d, const plc_report_opts *o)
{
  char *sz = plc_report_sprintf("%d", p->size), *st = plc_report_sprintf("%d", p->stride);
  char *sp = plc_report_sprintf("%ld", p->span), *bw = plc_report_bandwidths(p, o);
  char *link = plc_report_sprintf("%s%s", p->link, p->overridden ? " (set)" : "");
  plc_md_row(out, 7, plc_pdim_name(d), sz, st, sp, p->tier, link, bw);
  free(sz);
  free(st);
  free(sp);
  free(bw);
  free(link);
}

static void plc_md_placement(FILE *out, const plc_result *r, const plc_report_opts *o)
{
  const plc_ir_run *run = r->run;
  int any = 0;
  fputs("\n### Placement\n\n", out);
  for (int d = 0; d < PLC_PD_COUNT; d++) {
    if (!plc_report_place_shown(run, d))
      continue;
    if (!any++) {
      plc_md_row(out, 7, "dim", "size", "stride", "span", "tier", "link", "bandwidth used");
      plc_md_rule(out, "lrrrlll");
    }
    plc_md_place(out, &run->place[d], (plc_pdim)d, o);
  }
  if (!any)
    fputs("Every parallel dimension has size 1.\n", out);
}

static void plc_md_inventory_row(FILE *out, const plc_ir_run *run, const plc_coll_row *row,
                                 const plc_report_opts *o)
{
  char *cnt = plc_report_sprintf("%ld", row->count);
  char *b = row->uniform ? plc_report_bytes(o, row->size_each) : plc_xstrdup("mixed");
  char *br = plc_report_row_rank_each(o, run, row);
  char *te = row->uniform ? plc_report_time(o, row->time_each) : plc_xstrdup("mixed");
  char *tt = plc_report_time(o, row->time), *w = plc_report_time(o, row->window);
  char *e = plc_report_time(o, row->exposed);
  mpq_t h;
  mpq_init(h);
  plc_report_hidden(h, row);
  char *hp = plc_report_pct(o, h);
  plc_md_row(out, 12, plc_pdim_name(row->dim), plc_opk_name(row->kind),
             plc_report_phase(row->phase), cnt, b, br, te, tt, w, e, hp, plc_report_why(row));
  mpq_clear(h);
  free(cnt);
  free(b);
  free(br);
  free(te);
  free(tt);
  free(w);
  free(e);
  free(hp);
}

static void plc_md_inventory(FILE *out, const plc_result *r, const plc_report_opts *o)
{
  char *where = plc_report_critical_where(r, 1);
  fprintf(out, "\n### Communication per microbatch, %s\n\n", where);
  free(where);
  if (r->nrows == 0) {
    fputs("No collectives.\n", out);
    return;
  }
  plc_md_row(out, 12, "dim", "primitive", "phase", "count", "bytes/op", "bytes/rank", "time/op",
             "total", "window", "exposed", "hidden", "reason");
  plc_md_rule(out, "lllrrrrrrrrl");
  for (int i = 0; i < r->nrows; i++)
    plc_md_inventory_row(out, r->run, &r->rows[i], o);
}

typedef struct plc_md_ops_ctx {
  FILE *out;
  const plc_report_opts *o;
} plc_md_ops_ctx;

static void plc_md_op(void *ctx, const char *list, const plc_ir_list *l, int i,
                      const plc_sim_op *so)
{
  const plc_md_ops_ctx *c = ctx;
  char *v[PLC_REPORT_OP_CELLS];
  plc_report_op_cells(c->o, list, l, i, so, v);
  plc_md_row(c->out, 11, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10]);
  plc_report_cells_free(v, PLC_REPORT_OP_CELLS);
}

static void plc_md_ops(FILE *out, const plc_result *r, const plc_report_opts *o)
{
  char *where = plc_report_critical_where(r, 0);
  fprintf(out, "\n### Collectives of one microbatch, %s\n\n", where);
  free(where);
  plc_md_row(out, 11, "list", "layer", "op", "primitive", "bytes/rank", "start", "consumer",
             "window", "time", "exposed", "reason");
  plc_md_rule(out, "lrllrrlrrrl");
  plc_md_ops_ctx c = {out, o};
  plc_report_each_coll(r, plc_md_op, &c);
}

static void plc_md_bubble(FILE *out, const plc_result *r, const plc_report_opts *o)
{
  char *how, *split, *formula, *b = plc_report_time(o, r->bubble);
  plc_report_bubble_text(r, o, &how, &split, &formula);
  fputs("\n### Bubble (", out);
  plc_md_text(out, r->run->schedule);
  fputs(")\n\n**", out);
  plc_md_text(out, b);
  fputs("**, ", out);
  plc_md_text(out, how);
  if (split) {
    fputs(": ", out);
    plc_md_text(out, split);
  }
  fputs(".\n", out);
  if (formula) {
    fputs("\n", out);
    plc_md_text(out, formula);
    fputs(".\n", out);
  }
  free(how);
  free(split);
  free(formula);
  free(b);
}

static void plc_md_step(FILE *out, const plc_result *r, const plc_report_opts *o)
{
  char *tf = plc_report_time(o, r->t_f), *tb = plc_report_time(o, r->t_b);
  char *tt = plc_report_time(o, r->t);
  char *mb = plc_report_sprintf("Per microbatch: t_f %s + t_b %s = %s (backward includes "
                                "recompute).", tf, tb, tt);
  fputs("\n### Step time\n\n", out);
  plc_md_text(out, mb);
  char *fb = plc_report_fb_text(r, o);
  if (fb) {
    fputs("\n", out);
    plc_md_text(out, fb);
    fputs(".", out);
  }
  free(fb);
  fputs("\n\n", out);
  plc_md_row(out, 4, "part", "time", "share", "how");
  plc_md_rule(out, "lrrl");
  plc_report_part parts[PLC_REPORT_MAX_PARTS];
  int n = plc_report_parts(r, 0, parts);
  for (int i = 0; i < n; i++) {
    char *a = plc_report_time(o, parts[i].time), *p = plc_report_pct(o, parts[i].share);
    char *note = plc_report_part_note(r, o, &parts[i]);
    plc_md_row(out, 4, plc_report_part_label(&parts[i]), a, p, note);
    free(a);
    free(p);
    free(note);
  }
  plc_report_parts_clear(parts, n);
  free(tf);
  free(tb);
  free(tt);
  free(mb);
}

static void plc_md_efficiency(FILE *out, const plc_result *r, const plc_report_opts *o)
{
  char *eta = plc_report_pct(o, r->eta), *busy = plc_report_pct(o, r->busy);
  char *mfu = r->mfu_known ? plc_report_pct(o, r->mfu) : plc_xstrdup("n/a");
  char *tps = plc_report_num(o, r->tokens_per_s);
  fputs("\n### Efficiency\n\n", out);
  plc_md_row(out, 3, "figure", "value", "what");
  plc_md_rule(out, "lrl");
  plc_md_row(out, 3, "eta", eta, "useful compute / step");
  plc_md_row(out, 3, "busy", busy, "all compute, recompute included / step");
  plc_md_row(out, 3, "MFU", mfu, r->mfu_known ? "model FLOPs / (world x peak x step)"
                                              : r->mfu_why);
  plc_md_row(out, 3, "tokens/s", tps, "global batch x seq / step");
  free(eta);
  free(busy);
  free(mfu);
  free(tps);
}

static void plc_md_bottleneck(FILE *out, const plc_result *r, const plc_report_opts *o)
{
  plc_report_part b;
  fputs("\n### Bottleneck\n\n", out);
  if (!plc_report_bottleneck(r, &b)) {
    fputs("None: the step is all compute.\n", out);
    return;
  }
  char *what = plc_report_part_what(&b), *p = plc_report_pct(o, b.share);
  fputs("**", out);
  plc_md_text(out, what);
  fputs("**: ", out);
  plc_md_text(out, p);
  fputs(" of the step\n", out);
  free(what);
  free(p);
  plc_report_parts_clear(&b, 1);
}

/* For each exposed row: the bandwidth that would hide it, and the step. */
static void plc_md_sensitivity(FILE *out, const plc_result *r, const plc_report_opts *o)
{
  if (r->nsense == 0)
    return;
  char *note = plc_report_critical_note(r);
  fprintf(out, "\n### What would hide the exposed communication%s\n\n", note);
  free(note);
  plc_md_row(out, 7, "dim", "primitive", "phase", "exposed/mb", "bandwidth", "to hide",
             "step if hidden");
  plc_md_rule(out, "lllrrrr");
  for (int i = 0; i < r->nsense; i++) {
    char *v[PLC_REPORT_SENSE_CELLS];
    plc_report_sense_cells(o, r, i, v);
    plc_md_row(out, 7, v[0], v[1], v[2], v[3], v[4], v[5], v[6]);
    plc_report_cells_free(v, PLC_REPORT_SENSE_CELLS);
  }
}

/* Peak memory per stage with its breakdown, and whether it fits. */
static void plc_md_memory(FILE *out, const plc_result *r, const plc_report_opts *o)
{
  fputs("\n### Memory per device\n\n", out);
  char *sum = plc_report_mem_summary(r, o);
  if (r->mem && r->mem->known) {
    fprintf(out, "At each stage's peak over the step (%s order).\n\n", r->run->schedule);
    plc_md_row(out, PLC_REPORT_MEM_CELLS, "stage", "weights", "grads", "optimizer",
               "activations", "buffers", "peak", "headroom");
    plc_md_rule(out, "rrrrrrrr");
    for (int s = 0; s < r->mem->nstages; s++) {
      char *v[PLC_REPORT_MEM_CELLS];
      plc_report_mem_cells(o, r, s, v);
      plc_md_row(out, PLC_REPORT_MEM_CELLS, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]);
      plc_report_cells_free(v, PLC_REPORT_MEM_CELLS);
    }
    fputc('\n', out);
  }
  plc_md_text(out, sum);
  fputc('\n', out);
  free(sum);
}

/* The whole step simulated by the op-level engine (report_whole.h). */
static void plc_md_whole(FILE *out, const plc_result *r, const plc_report_opts *o)
{
  const plc_whole *w = plc_whole_get(r);
  char *head = plc_report_whole_head(w, r, o);
  fputs("\n### Whole step (simulated)\n\n", out);
  plc_md_text(out, head);
  fputs(w->known ? ".\n\n" : "\n", out);
  free(head);
  plc_report_whole_row rows[PLC_REPORT_WHOLE_MAX_ROWS];
  int n = plc_report_whole_rows(w, r, o, rows);
  if (n == 0)
    return;
  plc_md_row(out, 4, "part", "time", "share", "how");
  plc_md_rule(out, "lrrl");
  for (int i = 0; i < n; i++)
    plc_md_row(out, 4, rows[i].label, rows[i].t, rows[i].share, rows[i].note);
  plc_report_whole_rows_free(rows, n);
}

void plc_md_report(FILE *out, const plc_result *r, const plc_report_opts *o)
{
  plc_md_header(out, r);
  plc_md_placement(out, r, o);
  plc_md_inventory(out, r, o);
  if (o->ops)
    plc_md_ops(out, r, o);
  plc_md_bubble(out, r, o);
  plc_md_step(out, r, o);
  if (o->whole_step)
    plc_md_whole(out, r, o);
  plc_md_sensitivity(out, r, o);
  plc_md_memory(out, r, o);
  plc_md_efficiency(out, r, o);
  plc_md_bottleneck(out, r, o);
}
