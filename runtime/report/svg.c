/* svg.c - drawing timelines as SVG (see svg.h).
 *
 * Layout, top to bottom, per train: a title, then per stage a heading
 * (name, t_f, t_b, exposed; "fwd" and "bwd" over the phases) and a lane per
 * stream, then the time axis and the legend.  Lane backgrounds go first,
 * then the axis grid, then the ops, so the grid shows between ops only. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "svg.h"
#include "blocks.h"
#include "timeline.h"
#include "xalloc.h"

#include <stdlib.h>
#include <string.h>

#define PLC_SVG_WIDTH 1200
#define PLC_SVG_LEFT 150      /* the label column */
#define PLC_SVG_CHART 1010    /* the chart's width */
#define PLC_SVG_TITLE 56
#define PLC_SVG_HEAD 30       /* a stage's heading */
#define PLC_SVG_LANE 18
#define PLC_SVG_LANE_GAP 4
#define PLC_SVG_STAGE_GAP 12
#define PLC_SVG_AXIS 46
#define PLC_SVG_LEGEND_ROW 20
#define PLC_SVG_LEGEND_ITEM 250
#define PLC_SVG_LEGEND_COLS 4
#define PLC_SVG_STRIP 5       /* the red line under exposed communication */
#define PLC_SVG_BOTTOM 16
#define PLC_SVG_MEM 26        /* a stage's memory strip in the whole-step panel */
#define PLC_SVG_MAX_BLOCKS 20000 /* more blocks than this: the middle microbatches elided */

#define PLC_SVG_EXPOSED "#d62728"
#define PLC_SVG_WAIT "#f7c4c4"
#define PLC_SVG_OTHER "#bdbdbd"

static const char *const plc_svg_colours[PLC_OPK_COUNT] = {
  "#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#edc948", "#76b7b2", "#9c755f",
};

typedef struct plc_svg_train {
  plc_timeline tl;
  plc_blocks bl;             /* the whole step, block level */
  int has_blocks;            /* bl was built and is small enough to draw */
  long keep;                 /* 0, or: only microbatches < keep and >= mu - keep drawn */
  int kinds[PLC_OPK_COUNT];  /* which kinds of op appear */
  int other;                 /* the compute stream waits for compute elsewhere */
} plc_svg_train;

struct plc_svg {
  plc_report_opts o;
  plc_svg_train *trains;
  int n;
};

typedef struct plc_svg_draw {
  FILE *f;
  const plc_svg *svg;
  const plc_svg_train *tr;
  mpq_t k;                   /* pixels per second */
  int *lane_y;               /* per stream: the top of its lane in the current stage */
} plc_svg_draw;

/* ---- building ---------------------------------------------------------------- */

plc_svg *plc_svg_new(const plc_report_opts *o)
{
  plc_svg *s = plc_xcalloc(1, sizeof *s);
  s->o = *o;
  return s;
}

void plc_svg_free(plc_svg *s)
{
  if (!s)
    return;
  for (int i = 0; i < s->n; i++) {
    plc_timeline_free(&s->trains[i].tl);
    plc_blocks_free(&s->trains[i].bl);
  }
  free(s->trains);
  free(s);
}

static void plc_svg_scan(void *ctx, const plc_timeline_item *it)
{
  plc_svg_train *tr = ctx;
  if (it->what == PLC_TL_OP)
    tr->kinds[it->op->kind] = 1;
  else if (it->what == PLC_TL_WAIT && (!it->op || it->op->kind == PLC_OPK_COMPUTE))
    tr->other = 1;
}

void plc_svg_add(plc_svg *s, const plc_result *res)
{
  s->trains = plc_xrealloc(s->trains, (size_t)(s->n + 1) * sizeof *s->trains);
  plc_svg_train *tr = &s->trains[s->n++];
  memset(tr, 0, sizeof *tr);
  plc_timeline_microbatch(&tr->tl, res, -1);
  tr->kinds[PLC_OPK_COMPUTE] = 1;
  for (int st = 0; st < tr->tl.nstages; st++)
    plc_timeline_each(&tr->tl.stages[st], plc_svg_scan, tr);
  tr->has_blocks = plc_blocks_build(&tr->bl, res);
  long mu = res->run->mu, per = tr->bl.n / (mu > 0 ? mu : 1); /* blocks of one microbatch */
  if (tr->has_blocks && tr->bl.n > PLC_SVG_MAX_BLOCKS) {
    /* a readable picture: the first and last microbatches, at their true
     * times (fill, the first steady cycles, drain) */
    tr->keep = PLC_SVG_MAX_BLOCKS / (2 * (per > 0 ? per : 1));
    tr->has_blocks = tr->keep >= 1 && 2 * tr->keep < mu;
  }
}

/* Is block b drawn (not among the elided middle microbatches)? */
static int plc_svg_drawn(const plc_svg_train *tr, const plc_sched_block *b)
{
  return !tr->keep || b->mb < tr->keep || b->mb >= tr->tl.run->mu - tr->keep;
}

/* ---- text -------------------------------------------------------------------- */

void plc_svg_escape(FILE *f, const char *text)
{
  for (const char *p = text; *p; p++) {
    switch (*p) {
    case '&': fputs("&amp;", f); break;
    case '<': fputs("&lt;", f); break;
    case '>': fputs("&gt;", f); break;
    case '"': fputs("&quot;", f); break;
    case '\'': fputs("&apos;", f); break;
    default: fputc(*p, f);
    }
  }
}

static void plc_svg_text(FILE *f, int x, int y, const char *attrs, const char *text)
{
  fprintf(f, "<text x=\"%d\" y=\"%d\"%s%s>", x, y, *attrs ? " " : "", attrs);
  plc_svg_escape(f, text);
  fputs("</text>\n", f);
}

/* A time as the report prints it, into buf. */
static void plc_svg_time(const plc_svg_draw *d, char *buf, size_t n, mpq_srcptr t)
{
  char *s = plc_q_format_raw(t, 0, 1, 0, d->svg->o.digits, d->svg->o.exact);
  snprintf(buf, n, "%s", s);
  free(s);
}

/* ---- geometry ------------------------------------------------------------------ */

static int plc_svg_x(const plc_svg_draw *d, mpq_srcptr t)
{
  mpz_t z;
  mpz_init(z);
  plc_timeline_round(z, t, d->k);
  long x = mpz_cmp_si(z, PLC_SVG_CHART) > 0 ? PLC_SVG_CHART : mpz_get_si(z);
  mpz_clear(z);
  return PLC_SVG_LEFT + (int)x;
}

static int plc_svg_stage_height(const plc_timeline_stage *st)
{
  return PLC_SVG_HEAD + st->nstreams * (PLC_SVG_LANE + PLC_SVG_LANE_GAP) + PLC_SVG_STAGE_GAP;
}

static int plc_svg_legend_items(const plc_svg_train *tr)
{
  int n = 4 + tr->other; /* exposed, waits, the backward's start; waits for compute */
  for (int k = 0; k < PLC_OPK_COUNT; k++)
    n += tr->kinds[k];
  return n;
}

static int plc_svg_step_height(const plc_svg_train *tr);

static int plc_svg_train_height(const plc_svg_train *tr)
{
  int h = PLC_SVG_TITLE + PLC_SVG_AXIS + PLC_SVG_BOTTOM;
  for (int s = 0; s < tr->tl.nstages; s++)
    h += plc_svg_stage_height(&tr->tl.stages[s]);
  int items = plc_svg_legend_items(tr);
  h += (items + PLC_SVG_LEGEND_COLS - 1) / PLC_SVG_LEGEND_COLS * PLC_SVG_LEGEND_ROW;
  return h + plc_svg_step_height(tr);
}

/* Where each lane of a stage lies, from the stage's top. */
static void plc_svg_lanes(plc_svg_draw *d, const plc_timeline_stage *st, int top)
{
  for (int r = 0; r < st->nstreams; r++)
    d->lane_y[st->streams[r]] = top + PLC_SVG_HEAD + r * (PLC_SVG_LANE + PLC_SVG_LANE_GAP);
}

/* ---- ops ------------------------------------------------------------------------ */

static void plc_svg_rect(FILE *f, int x, int y, int w, int h, const char *fill)
{
  fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"", x, y, w, h, fill);
}

/* The span [a, b) in pixels; 0 when it is empty, at least 1 otherwise. */
static int plc_svg_span(const plc_svg_draw *d, const plc_timeline_item *it, int *x)
{
  *x = plc_svg_x(d, it->a);
  int w = plc_svg_x(d, it->b) - *x;
  if (w == 0 && mpq_cmp(it->a, it->b) < 0)
    w = 1;
  return w;
}

/* An op's tooltip: label, kind, exact-to-the-digits times, exposure. */
static void plc_svg_op_title(const plc_svg_draw *d, const plc_timeline_item *it)
{
  const plc_ir_op *op = it->op;
  char label[128], a[64], b[64], t[64], text[512];
  plc_timeline_label(label, sizeof label, op, 1);
  plc_svg_time(d, a, sizeof a, it->a);
  plc_svg_time(d, b, sizeof b, it->b);
  plc_svg_time(d, t, sizeof t, op->time);
  int n = snprintf(text, sizeof text, "%s (%s): %s, %s to %s, %s", label,
                   plc_phase_name(op->phase), plc_opk_name(op->kind), a, b, t);
  if (op->kind != PLC_OPK_COMPUTE && n > 0 && (size_t)n < sizeof text) {
    char e[64];
    plc_svg_time(d, e, sizeof e, it->so->exposed);
    snprintf(text + n, sizeof text - (size_t)n, " over %s n=%d; exposed %s: %s",
             plc_pdim_name(op->dim), op->group, e, plc_why_text(it->so->why));
  }
  fputs("<title>", d->f);
  plc_svg_escape(d->f, text);
  fputs("</title>", d->f);
}

static void plc_svg_op(const plc_svg_draw *d, const plc_timeline_item *it)
{
  int x, w = plc_svg_span(d, it, &x), y = d->lane_y[it->stream];
  if (w <= 0)
    return;
  plc_svg_rect(d->f, x, y, w >= 4 ? w - 1 : w, PLC_SVG_LANE, plc_svg_colours[it->op->kind]);
  fputc('>', d->f);
  plc_svg_op_title(d, it);
  fputs("</rect>\n", d->f);
  if (it->op->kind != PLC_OPK_COMPUTE && it->stream == 0) { /* blocks the stream: all exposed */
    plc_svg_rect(d->f, x, y + PLC_SVG_LANE - PLC_SVG_STRIP, w, PLC_SVG_STRIP, PLC_SVG_EXPOSED);
    fputs("/>\n", d->f);
  }
}

/* A stall of the compute stream, shaded, with what it waited for. */
static void plc_svg_wait(const plc_svg_draw *d, const plc_timeline_item *it)
{
  int x, w = plc_svg_span(d, it, &x);
  int comm = it->op && it->op->kind != PLC_OPK_COMPUTE;
  mpq_t len;
  char t[64], text[256];
  mpq_init(len);
  mpq_sub(len, it->b, it->a);
  plc_svg_time(d, t, sizeof t, len);
  mpq_clear(len);
  snprintf(text, sizeof text, "the compute stream waits %s for %s", t,
           it->op ? it->op->name : "nothing");
  plc_svg_rect(d->f, x, d->lane_y[0], w, PLC_SVG_LANE, comm ? PLC_SVG_WAIT : PLC_SVG_OTHER);
  fputs("><title>", d->f);
  plc_svg_escape(d->f, text);
  fputs("</title></rect>\n", d->f);
}

static void plc_svg_item(void *ctx, const plc_timeline_item *it)
{
  const plc_svg_draw *d = ctx;
  int x, w;
  switch (it->what) {
  case PLC_TL_OP: plc_svg_op(d, it); break;
  case PLC_TL_WAIT: plc_svg_wait(d, it); break;
  case PLC_TL_EXPOSED:
    w = plc_svg_span(d, it, &x);
    plc_svg_rect(d->f, x, d->lane_y[it->stream] + PLC_SVG_LANE - PLC_SVG_STRIP, w, PLC_SVG_STRIP,
                 PLC_SVG_EXPOSED);
    fputs("/>\n", d->f);
    break;
  }
}

/* ---- stages ---------------------------------------------------------------------- */

static void plc_svg_backgrounds(plc_svg_draw *d, const plc_timeline_stage *st, int top)
{
  plc_svg_lanes(d, st, top);
  for (int r = 0; r < st->nstreams; r++) {
    int k = st->streams[r];
    plc_svg_rect(d->f, PLC_SVG_LEFT, d->lane_y[k], PLC_SVG_CHART, PLC_SVG_LANE, "#f2f2f2");
    fputs("/>\n", d->f);
    plc_svg_text(d->f, PLC_SVG_LEFT - 8, d->lane_y[k] + 13, "text-anchor=\"end\"",
                 d->tr->tl.run->streams[k]);
  }
}

/* The stage's name, its t_f, t_b and exposed communication. */
static void plc_svg_heading(plc_svg_draw *d, const plc_timeline_stage *st, int top)
{
  const plc_sim *f = &st->sims[0], *b = &st->sims[1];
  char name[64], tf[64], tb[64], e[64], text[256];
  mpq_t x;
  mpq_init(x);
  snprintf(name, sizeof name, "stage %d%s", st->stage,
           st->stage == d->tr->tl.critical ? " (critical)" : "");
  plc_svg_text(d->f, 8, top + 14, "font-weight=\"bold\"", name);
  plc_svg_time(d, tf, sizeof tf, f->makespan);
  plc_svg_time(d, tb, sizeof tb, b->makespan);
  mpq_add(x, f->exposed, b->exposed);
  plc_svg_time(d, e, sizeof e, x);
  snprintf(text, sizeof text, "t_f %s + t_b %s; exposed communication %s", tf, tb, e);
  plc_svg_text(d->f, PLC_SVG_LEFT, top + 14, "fill=\"#333\"", text);
  mpq_clear(x);
}

/* "fwd" and "bwd" over the phases, and a dashed line where the backward starts. */
static void plc_svg_phases(plc_svg_draw *d, const plc_timeline_stage *st, int top)
{
  int x = plc_svg_x(d, st->bwd_at);
  int bottom = top + PLC_SVG_HEAD + st->nstreams * (PLC_SVG_LANE + PLC_SVG_LANE_GAP) - PLC_SVG_LANE_GAP;
  const char *small = "font-size=\"10\" fill=\"#666\"";
  if (x - PLC_SVG_LEFT >= 28)
    plc_svg_text(d->f, PLC_SVG_LEFT + 2, top + 27, small, "fwd");
  plc_svg_text(d->f, x + 3, top + 27, small, "bwd");
  fprintf(d->f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#444\" "
          "stroke-dasharray=\"4 3\"/>\n", x, top + 18, x, bottom);
}

static void plc_svg_stage(plc_svg_draw *d, const plc_timeline_stage *st, int top)
{
  plc_svg_heading(d, st, top);
  plc_svg_lanes(d, st, top);
  plc_timeline_each(st, plc_svg_item, d);
  plc_svg_phases(d, st, top);
}

/* ---- axis and legend ---------------------------------------------------------------- */

/* The least of 1, 2, 5 x 10^e seconds (from 1 ns) that splits the span
 * into at most 10 steps. */
static void plc_svg_tick_step(mpq_t step, mpq_srcptr span)
{
  static const unsigned long mult[] = {1, 2, 5};
  mpq_t base, ten;
  mpq_inits(base, ten, NULL);
  mpq_set_ui(base, 1, 1000000000);
  mpq_set_ui(ten, 10, 1);
  for (int i = 0;; i = (i + 1) % 3) {
    mpq_set_ui(step, mult[i], 1);
    mpq_mul(step, step, base);
    mpq_mul(step, step, ten);
    if (mpq_cmp(span, step) <= 0)
      break;
    if (i == 2)
      mpq_mul(base, base, ten);
  }
  mpq_div(step, step, ten);
  mpq_clears(base, ten, NULL);
}

/* Ticks at the multiples of the step: grid lines from y0 to y1, or marks
 * and labels (in ms) under the axis at y1. */
static void plc_svg_ticks(plc_svg_draw *d, mpq_srcptr end, int y0, int y1, int labels)
{
  mpq_t step, t, ms;
  mpq_inits(step, t, ms, NULL);
  plc_svg_tick_step(step, end);
  for (long j = 1; mpq_cmp(t, end) <= 0; j++) {
    int x = plc_svg_x(d, t);
    if (labels) {
      fprintf(d->f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#444\"/>\n", x, y1,
              x, y1 + 5);
      mpq_set_ui(ms, 1000, 1);
      mpq_mul(ms, ms, t);
      char *text = plc_fmt_sig(ms, 15);
      plc_svg_text(d->f, x, y1 + 18, "text-anchor=\"middle\" font-size=\"11\"", text);
      free(text);
    } else {
      fprintf(d->f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#dddddd\"/>\n", x,
              y0, x, y1);
    }
    mpq_set_si(t, j, 1);
    mpq_mul(t, t, step);
  }
  mpq_clears(step, t, ms, NULL);
}

static void plc_svg_axis(plc_svg_draw *d, mpq_srcptr end, int y)
{
  fprintf(d->f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#444\"/>\n",
          PLC_SVG_LEFT, y, PLC_SVG_LEFT + PLC_SVG_CHART, y);
  plc_svg_ticks(d, end, 0, y, 1);
  plc_svg_text(d->f, PLC_SVG_LEFT - 8, y + 18, "text-anchor=\"end\" font-size=\"11\"", "time (ms)");
}

/* Legend item i: a swatch (a box, the red line or the dashed line) and text. */
static void plc_svg_legend_item(FILE *f, int i, int y, char swatch, const char *colour,
                                const char *text)
{
  int x = PLC_SVG_LEFT + i % PLC_SVG_LEGEND_COLS * PLC_SVG_LEGEND_ITEM;
  y += i / PLC_SVG_LEGEND_COLS * PLC_SVG_LEGEND_ROW;
  if (swatch == 'b')
    plc_svg_rect(f, x, y, 14, 12, colour);
  else if (swatch == 's')
    plc_svg_rect(f, x, y + 7, 14, PLC_SVG_STRIP, colour);
  else
    fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" "
            "stroke-dasharray=\"4 3\"", x + 7, y, x + 7, y + 12, colour);
  fputs("/>\n", f);
  plc_svg_text(f, x + 20, y + 11, "font-size=\"11\"", text);
}

static void plc_svg_legend(plc_svg_draw *d, int y)
{
  int i = 0;
  for (int k = 0; k < PLC_OPK_COUNT; k++)
    if (d->tr->kinds[k])
      plc_svg_legend_item(d->f, i++, y, 'b', plc_svg_colours[k], plc_opk_name(k));
  plc_svg_legend_item(d->f, i++, y, 's', PLC_SVG_EXPOSED, "exposed communication");
  plc_svg_legend_item(d->f, i++, y, 'b', PLC_SVG_WAIT, "compute stream waits for it");
  if (d->tr->other)
    plc_svg_legend_item(d->f, i++, y, 'b', PLC_SVG_OTHER, "waits for compute elsewhere");
  plc_svg_legend_item(d->f, i++, y, 'd', "#444", "the backward starts");
}

/* ---- the whole step, block level --------------------------------------------------------- */

static const char *const plc_svg_block_colours[] = {"#4e79a7", "#59a14f", "#f28e2b", "#b07aa1"};

/* The panel's height: a heading, a lane (and a memory strip) per stage,
 * the axis; 0 without blocks. */
static int plc_svg_step_height(const plc_svg_train *tr)
{
  if (!tr->has_blocks)
    return 0;
  int lane = PLC_SVG_LANE + PLC_SVG_LANE_GAP + (tr->bl.mem_known ? PLC_SVG_MEM : 0);
  return PLC_SVG_TITLE + tr->bl.nstages * lane + PLC_SVG_AXIS;
}

static void plc_svg_block(plc_svg_draw *d, const plc_blocks_item *it, int y)
{
  char name[64], a[64], b[64], text[256];
  plc_sched_block_name(&it->b, name, sizeof name);
  int x = plc_svg_x(d, it->start), w = plc_svg_x(d, it->end) - x;
  if (w > 2)
    w--; /* a pixel between neighbours */
  if (w < 1)
    w = 1;
  plc_svg_rect(d->f, x, y, w, PLC_SVG_LANE, plc_svg_block_colours[it->b.phase]);
  plc_svg_time(d, a, sizeof a, it->start);
  plc_svg_time(d, b, sizeof b, it->end);
  snprintf(text, sizeof text, "stage %d: %s, %s to %s", it->stage, name, a, b);
  fputs("><title>", d->f);
  plc_svg_escape(d->f, text);
  fputs("</title></rect>\n", d->f);
  static const char ph[] = "FBW";
  if (w >= 22 && it->b.phase != PLC_SCHED_FB) {
    snprintf(name, sizeof name, "%c%d", ph[it->b.phase], it->b.mb);
    plc_svg_text(d->f, x + 2, y + 13, "font-size=\"10\" fill=\"#fff\"", name);
  }
}

/* A stage's memory over the step as a step line, scaled to the highest
 * level of the train, under its lane. */
static void plc_svg_memory(plc_svg_draw *d, const plc_blocks *bl, int s, int y)
{
  const int h = PLC_SVG_MEM - 6;
  mpq_t k, v;
  mpq_inits(k, v, NULL);
  mpq_set_ui(k, (unsigned long)h, 1);
  if (mpq_sgn(bl->mem_max) > 0)
    mpq_div(k, k, bl->mem_max);
  mpz_t z;
  mpz_init(z);
  fputs("<polyline fill=\"none\" stroke=\"#d62728\" points=\"", d->f);
  for (int i = 0; i < bl->n; i++) {
    const plc_blocks_item *it = &bl->items[i];
    if (it->stage != s || !plc_svg_drawn(d->tr, &it->b))
      continue;
    plc_timeline_round(z, it->level, k);
    long up = mpz_get_si(z);
    plc_timeline_round(z, it->after, k);
    long down = mpz_get_si(z);
    int xa = plc_svg_x(d, it->start), xb = plc_svg_x(d, it->end);
    fprintf(d->f, "%d,%ld %d,%ld %d,%ld ", xa, y + h - up, xb, y + h - up, xb, y + h - down);
  }
  fputs("\"/>\n", d->f);
  mpz_clear(z);
  mpq_clears(k, v, NULL);
}

static void plc_svg_step_title(plc_svg_draw *d, const plc_blocks *bl, int y)
{
  const plc_ir_run *run = d->tr->tl.run;
  char text[512], t[64], m[64] = "";
  plc_svg_time(d, t, sizeof t, bl->makespan);
  if (bl->mem_known) {
    char *p = plc_q_format_raw(bl->mem_max, 1, 0, 0, d->svg->o.digits, d->svg->o.exact);
    snprintf(m, sizeof m, "; memory in red, highest %s", p);
    free(p);
  }
  snprintf(text, sizeof text, "whole step, block level: %s schedule, %ld microbatches, %s",
           run->schedule, run->mu, t);
  plc_svg_text(d->f, 8, y + 22, "font-size=\"14\" font-weight=\"bold\"", text);
  char e[160] = "";
  if (d->tr->keep)
    snprintf(e, sizeof e, "; microbatches %ld to %ld elided, the others at their true times",
             d->tr->keep, run->mu - d->tr->keep - 1);
  snprintf(text, sizeof text, "each block its stage's per-microbatch time; F forward, B backward, "
           "W weight gradient, F&B overlapped (colours)%s%s", m, e);
  plc_svg_text(d->f, 8, y + 42, "fill=\"#555\"", text);
}

static void plc_svg_step_draw(plc_svg_draw *d, int y)
{
  const plc_blocks *bl = &d->tr->bl;
  mpq_set_ui(d->k, 0, 1);
  if (mpq_sgn(bl->makespan) > 0) {
    mpq_set_ui(d->k, PLC_SVG_CHART, 1);
    mpq_div(d->k, d->k, bl->makespan);
  }
  plc_svg_step_title(d, bl, y);
  int lane = PLC_SVG_LANE + PLC_SVG_LANE_GAP + (bl->mem_known ? PLC_SVG_MEM : 0);
  int top = y + PLC_SVG_TITLE, bottom = top + bl->nstages * lane;
  plc_svg_ticks(d, bl->makespan, top, bottom, 0);
  for (int s = 0; s < bl->nstages; s++) {
    char name[32];
    snprintf(name, sizeof name, "stage %d", s);
    plc_svg_text(d->f, PLC_SVG_LEFT - 8, top + s * lane + 13, "text-anchor=\"end\"", name);
    if (bl->mem_known)
      plc_svg_memory(d, bl, s, top + s * lane + PLC_SVG_LANE + 2);
  }
  for (int i = 0; i < bl->n; i++)
    if (plc_svg_drawn(d->tr, &bl->items[i].b))
      plc_svg_block(d, &bl->items[i], top + bl->items[i].stage * lane);
  plc_svg_axis(d, bl->makespan, bottom);
}

/* ---- trains and the file ---------------------------------------------------------------- */

static void plc_svg_title(plc_svg_draw *d, int y)
{
  const plc_ir_run *run = d->tr->tl.run;
  char text[512];
  snprintf(text, sizeof text, "plc timeline: train %s", run->name);
  plc_svg_text(d->f, 8, y + 22, "font-size=\"16\" font-weight=\"bold\"", text);
  snprintf(text, sizeof text, "one microbatch of each of its %d pipeline stage%s, forward then "
           "backward, each from 0; a lane per stream; critical stage %d", run->nstages,
           run->nstages == 1 ? "" : "s", d->tr->tl.critical);
  plc_svg_text(d->f, 8, y + 42, "fill=\"#555\"", text);
}

static void plc_svg_step_draw(plc_svg_draw *d, int y);

/* One train from y; returns the y below it. */
static int plc_svg_train_draw(plc_svg_draw *d, int y)
{
  const plc_timeline *tl = &d->tr->tl;
  mpq_set_ui(d->k, 0, 1);
  if (mpq_sgn(tl->end) > 0) {
    mpq_set_ui(d->k, PLC_SVG_CHART, 1);
    mpq_div(d->k, d->k, tl->end);
  }
  plc_svg_title(d, y);
  int top = y + PLC_SVG_TITLE, bottom = top;
  for (int s = 0; s < tl->nstages; s++) {
    plc_svg_backgrounds(d, &tl->stages[s], bottom);
    bottom += plc_svg_stage_height(&tl->stages[s]);
  }
  plc_svg_ticks(d, tl->end, top, bottom, 0);
  for (int s = 0, at = top; s < tl->nstages; at += plc_svg_stage_height(&tl->stages[s]), s++)
    plc_svg_stage(d, &tl->stages[s], at);
  plc_svg_axis(d, tl->end, bottom);
  plc_svg_legend(d, bottom + PLC_SVG_AXIS - 14);
  int below = y + plc_svg_train_height(d->tr);
  if (d->tr->has_blocks)
    plc_svg_step_draw(d, below - plc_svg_step_height(d->tr));
  return below;
}

int plc_svg_print(FILE *f, const plc_svg *s)
{
  int h = 0;
  for (int i = 0; i < s->n; i++)
    h += plc_svg_train_height(&s->trains[i]);
  fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
          "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" "
          "font-size=\"12\">\n<rect width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n",
          PLC_SVG_WIDTH, h, PLC_SVG_WIDTH, h, PLC_SVG_WIDTH, h);
  plc_svg_draw d;
  d.f = f;
  d.svg = s;
  mpq_init(d.k);
  for (int i = 0, y = 0; i < s->n; i++) {
    d.tr = &s->trains[i];
    d.lane_y = plc_xcalloc((size_t)d.tr->tl.run->nstreams + 1, sizeof *d.lane_y);
    y = plc_svg_train_draw(&d, y);
    free(d.lane_y);
  }
  mpq_clear(d.k);
  fputs("</svg>\n", f);
  return ferror(f) ? -1 : 0;
}

static int plc_svg_write(FILE *f, void *ctx)
{
  return plc_svg_print(f, ctx);
}

int plc_svg_save(plc_svg *s, const char *path)
{
  return plc_timeline_save(path, plc_svg_write, s);
}
