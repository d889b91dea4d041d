/* pipeline_text.c - the ASCII picture of a whole step's pipeline: one row
 * per stage, each block of the schedule (blocks.h: the schedule simulated
 * at block level with the stages' per-microbatch times) drawn where it
 * runs, in the style of the zero-bubble and DualPipe papers' figures.
 *
 * A cell covers a fixed span of time; a block covers the cells between its
 * rounded start and end, the first showing its phase letter (F, B, W, or X
 * for a DualPipe F&B pair) and, when the block is wide enough, its label
 * (F12, B3.1 for chunk 1, X5/2 for forward 5 with backward 2), the rest
 * filled by its phase's character (- F, = B, ~ W, + X).  A block narrower
 * than a cell keeps the cell of its midpoint if no other block took it;
 * idle cells are blank.  Every position is computed exactly (rationals
 * rounded to cells by integer arithmetic).
 *
 * A step whose blocks would be narrower than PLC_PIPELINE_MIN_CELLS cells on
 * average is drawn in two windows at one scale (PLC_PIPELINE_ZOOM_CELLS
 * per block on average), the start and the end at their true times, the
 * middle elided and said so.  The windows show at
 * least the fill (until every stage has ended its first block) and the
 * drain (from the first start of a stage's last block): the scale is
 * coarser when those need it.  A pipeline
 * of more than PLC_PIPELINE_MAX_ROWS stages shows its first and last
 * stages and the critical one. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "pipeline.h"
#include "blocks.h"
#include "quantity.h"
#include "runsched.h"
#include "timeline.h"
#include "xalloc.h"

#include <stdlib.h>
#include <string.h>

#define PLC_PIPELINE_MAX_ROWS 16  /* more stages: the first and last 4 and the critical one */
#define PLC_PIPELINE_MIN_CELLS 2  /* average cells per block below which the middle is elided */
#define PLC_PIPELINE_ZOOM_CELLS 6 /* average cells per block in the two windows then */

typedef struct plc_pipeline_win {
  mpq_t from;   /* the time of the window's left edge */
  int cols;     /* its width in cells */
  char *cells;  /* [row][cols] */
} plc_pipeline_win;

typedef struct plc_pipeline_pic {
  const plc_blocks *bl;
  plc_sched_placement place;
  int p;
  int *rows;     /* the stages drawn, in order */
  int nrows;
  mpq_t k;       /* cells per second */
  plc_pipeline_win win[2];
  int nwin;      /* 1, or 2 when the middle is elided */
} plc_pipeline_pic;

/* The chunk of a stage a block runs, as a stage counts them (0 for the
 * first chunk it holds, 1 for the second). */
static int plc_pipeline_local_chunk(const plc_pipeline_pic *pic, int chunk)
{
  if (pic->place == PLC_SCHED_PLACE_ROUND)
    return chunk / pic->p;
  if (pic->place == PLC_SCHED_PLACE_V || pic->place == PLC_SCHED_PLACE_BIDIR)
    return chunk >= pic->p;
  return 0;
}

static void plc_pipeline_label(const plc_pipeline_pic *pic, const plc_sched_block *b, char *buf,
                               size_t n)
{
  static const char letters[] = "FBWX";
  int two = pic->place != PLC_SCHED_PLACE_STAGE;
  int c = plc_pipeline_local_chunk(pic, b->chunk);
  if (b->phase == PLC_SCHED_FB)
    snprintf(buf, n, "X%d/%d", (int)b->mb, (int)b->mb2);
  else if (two && c)
    snprintf(buf, n, "%c%d.%d", letters[b->phase & 3], (int)b->mb, c);
  else
    snprintf(buf, n, "%c%d", letters[b->phase & 3], (int)b->mb);
}

/* Stages to draw: all of them, or the first and last four and the
 * critical one between them. */
static void plc_pipeline_rows(plc_pipeline_pic *pic, int critical)
{
  int p = pic->p;
  pic->rows = plc_xmalloc((size_t)p * sizeof *pic->rows);
  pic->nrows = 0;
  for (int s = 0; s < p; s++)
    if (p <= PLC_PIPELINE_MAX_ROWS || s < 4 || s >= p - 4 || s == critical)
      pic->rows[pic->nrows++] = s;
}

/* cell = round((t - from) k), half up; t >= from. */
static long plc_pipeline_cell(const plc_pipeline_pic *pic, const plc_pipeline_win *w,
                              mpq_srcptr t)
{
  mpq_t d;
  mpz_t c;
  mpq_init(d);
  mpz_init(c);
  mpq_sub(d, t, w->from);
  long out;
  if (mpq_sgn(d) < 0) {
    out = -1;
  } else {
    plc_timeline_round(c, d, pic->k);
    out = mpz_fits_slong_p(c) ? mpz_get_si(c) : w->cols + 1;
  }
  mpz_clear(c);
  mpq_clear(d);
  return out;
}

/* Draw one block on row r of window w. */
static void plc_pipeline_put(plc_pipeline_pic *pic, plc_pipeline_win *w, int r,
                             const plc_blocks_item *it)
{
  static const char fills[] = "-=~+", letters[] = "FBWX";
  char *row = w->cells + (size_t)r * (size_t)w->cols;
  long c0 = plc_pipeline_cell(pic, w, it->start), c1 = plc_pipeline_cell(pic, w, it->end);
  if (c1 <= 0 || c0 >= w->cols)
    return;
  int ph = it->b.phase & 3;
  if (c1 <= c0) { /* narrower than a cell: its midpoint's, if free */
    mpq_t mid;
    mpq_init(mid);
    mpq_add(mid, it->start, it->end);
    mpq_div_2exp(mid, mid, 1);
    mpq_sub(mid, mid, w->from);
    mpq_mul(mid, mid, pic->k);
    mpz_t m;
    mpz_init(m);
    mpz_fdiv_q(m, mpq_numref(mid), mpq_denref(mid));
    long cm = mpz_fits_slong_p(m) ? mpz_get_si(m) : -1;
    if (cm >= 0 && cm < w->cols && row[cm] == ' ')
      row[cm] = letters[ph];
    mpz_clear(m);
    mpq_clear(mid);
    return;
  }
  long a = c0 < 0 ? 0 : c0, b = c1 > w->cols ? w->cols : c1;
  memset(row + a, fills[ph], (size_t)(b - a));
  if (c0 < 0)
    return; /* begun before the window: no label */
  char label[32];
  plc_pipeline_label(pic, &it->b, label, sizeof label);
  size_t len = strlen(label);
  if ((long)len < b - a)
    memcpy(row + a, label, len);
  else
    row[a] = letters[ph];
}

/* The longer of the fill (until every stage has ended its first block)
 * and the drain (from the first start of a stage's last block). */
static void plc_pipeline_ends(const plc_blocks *bl, mpq_t out)
{
  mpq_t drain;
  mpq_init(drain);
  mpq_set_ui(out, 0, 1);
  mpq_set(drain, bl->makespan);
  for (int i = 0; i < bl->n; i++) {
    const plc_blocks_item *it = &bl->items[i];
    if ((i == 0 || bl->items[i - 1].stage != it->stage) && mpq_cmp(it->end, out) > 0)
      mpq_set(out, it->end);
    if ((i == bl->n - 1 || bl->items[i + 1].stage != it->stage) &&
        mpq_cmp(it->start, drain) < 0)
      mpq_set(drain, it->start);
  }
  mpq_sub(drain, bl->makespan, drain);
  if (mpq_cmp(drain, out) > 0)
    mpq_set(out, drain);
  mpq_clear(drain);
}

static void plc_pipeline_windows(plc_pipeline_pic *pic, int cols)
{
  const plc_blocks *bl = pic->bl;
  mpq_t busy, span;
  mpq_inits(busy, span, NULL);
  for (int i = 0; i < bl->n; i++) {
    mpq_sub(span, bl->items[i].end, bl->items[i].start);
    mpq_add(busy, busy, span);
  }
  /* elide when the average block would be under PLC_PIPELINE_MIN_CELLS:
   * mean block = busy / n, so cols / makespan < MIN n / busy */
  mpq_set_si(pic->k, cols, 1);
  mpq_div(pic->k, pic->k, bl->makespan);
  mpq_set_si(span, PLC_PIPELINE_MIN_CELLS * (long)bl->n, 1);
  int elide = mpq_sgn(busy) > 0 && cols >= 21;
  if (elide) {
    mpq_div(span, span, busy); /* cells per second for the minimum */
    elide = mpq_cmp(pic->k, span) < 0;
    mpq_set_si(span, PLC_PIPELINE_ZOOM_CELLS * (long)bl->n, 1);
    mpq_div(span, span, busy);
  }
  if (elide) { /* coarser if a window would not hold the fill or the drain */
    mpq_t ends, fit;
    mpq_inits(ends, fit, NULL);
    plc_pipeline_ends(bl, ends);
    mpq_set_si(fit, (cols - 3) / 2, 1);
    if (mpq_sgn(ends) > 0) {
      mpq_div(fit, fit, ends);
      if (mpq_cmp(fit, span) < 0)
        mpq_set(span, fit);
    }
    elide = mpq_cmp(pic->k, span) < 0;
    mpq_clears(ends, fit, NULL);
  }
  for (int w = 0; w < 2; w++)
    mpq_init(pic->win[w].from);
  if (!elide) {
    pic->nwin = 1;
    pic->win[0].cols = cols;
  } else {
    mpq_set(pic->k, span);
    pic->nwin = 2;
    pic->win[0].cols = pic->win[1].cols = (cols - 3) / 2;
    mpq_set_si(span, pic->win[1].cols, 1);
    mpq_div(span, span, pic->k); /* the window's duration */
    mpq_sub(pic->win[1].from, bl->makespan, span);
  }
  for (int w = 0; w < pic->nwin; w++) {
    size_t n = (size_t)pic->nrows * (size_t)pic->win[w].cols;
    pic->win[w].cells = plc_xmalloc(n + 1);
    memset(pic->win[w].cells, ' ', n);
  }
  mpq_clears(busy, span, NULL);
}

static void plc_pipeline_draw(plc_pipeline_pic *pic)
{
  const plc_blocks *bl = pic->bl;
  int *row_of = plc_xmalloc((size_t)pic->p * sizeof *row_of);
  for (int s = 0; s < pic->p; s++)
    row_of[s] = -1;
  for (int r = 0; r < pic->nrows; r++)
    row_of[pic->rows[r]] = r;
  for (int i = 0; i < bl->n; i++) {
    const plc_blocks_item *it = &bl->items[i];
    if (it->stage < 0 || it->stage >= pic->p || row_of[it->stage] < 0)
      continue;
    for (int w = 0; w < pic->nwin; w++)
      plc_pipeline_put(pic, &pic->win[w], row_of[it->stage], it);
  }
  free(row_of);
}

static void plc_pipeline_free(plc_pipeline_pic *pic)
{
  for (int w = 0; w < 2; w++) {
    mpq_clear(pic->win[w].from);
    if (w < pic->nwin)
      free(pic->win[w].cells);
  }
  mpq_clear(pic->k);
  free(pic->rows);
}

/* ---- text -------------------------------------------------------------------- */

static void plc_pipeline_print_rows(FILE *out, const plc_pipeline_pic *pic, int lw, int critical)
{
  for (int r = 0; r < pic->nrows; r++) {
    int s = pic->rows[r];
    if (r > 0 && s != pic->rows[r - 1] + 1)
      fprintf(out, "  %*s\n", lw, "...");
    char name[24];
    snprintf(name, sizeof name, "%sstage %d", s == critical ? "*" : "", s);
    fprintf(out, "  %*s |", lw, name);
    for (int w = 0; w < pic->nwin; w++) {
      if (w > 0)
        fputs(" ~ ", out);
      fwrite(pic->win[w].cells + (size_t)r * (size_t)pic->win[w].cols, 1,
             (size_t)pic->win[w].cols, out);
    }
    fputs("|\n", out);
  }
}

/* The axis: each window's edges. */
static void plc_pipeline_axis(FILE *out, const plc_pipeline_pic *pic, int lw,
                              const plc_report_opts *o)
{
  mpq_t t;
  mpq_init(t);
  fprintf(out, "  %*s  ", lw, "time");
  for (int w = 0; w < pic->nwin; w++) {
    const plc_pipeline_win *win = &pic->win[w];
    mpq_set_si(t, win->cols, 1);
    mpq_div(t, t, pic->k);
    mpq_add(t, t, win->from);
    if (w == pic->nwin - 1)
      mpq_set(t, pic->bl->makespan);
    char *a = plc_q_format_raw(win->from, 0, 1, 0, o->digits, o->exact);
    char *b = plc_q_format_raw(t, 0, 1, 0, o->digits, o->exact);
    int gap = win->cols - (int)strlen(a) - (int)strlen(b);
    fprintf(out, "%s%s%*s%s", w > 0 ? "   " : "", a, gap > 1 ? gap : 1, "", b);
    free(a);
    free(b);
  }
  fputc('\n', out);
  mpq_clear(t);
}

static void plc_pipeline_legend(FILE *out, const plc_pipeline_pic *pic, int critical,
                                const plc_report_opts *o)
{
  mpq_t cell;
  mpq_init(cell);
  mpq_inv(cell, pic->k);
  char *c = plc_q_format_raw(cell, 0, 1, 0, o->digits, o->exact);
  int seen[4] = {0};
  for (int i = 0; i < pic->bl->n; i++)
    seen[pic->bl->items[i].b.phase & 3] = 1;
  fprintf(out, "  one column = %s; F3 forward of microbatch 3, B backward (recompute "
          "included)%s\n", c, seen[PLC_SCHED_W] ? ", W weight gradient" : "");
  if (seen[PLC_SCHED_FB])
    fprintf(out, "  X a DualPipe F&B pair (X5/2: forward of microbatch 5, backward of 2)\n");
  if (pic->place != PLC_SCHED_PLACE_STAGE)
    fprintf(out, "  F3.1 the stage's chunk 1 (its second), F3 its first\n");
  free(c);
  if (pic->nwin == 2) {
    mpq_set_si(cell, pic->win[0].cols, 1);
    mpq_div(cell, cell, pic->k);
    mpq_sub(cell, pic->win[1].from, cell);
    char *m = plc_q_format_raw(cell, 0, 1, 0, o->digits, o->exact);
    fprintf(out, "  ~ the middle %s of the step is elided: both windows are at their true "
            "times\n", m);
    free(m);
  }
  if (critical >= 0)
    fprintf(out, "  * the critical device: the most work over the step\n");
  mpq_clear(cell);
}

void plc_pipeline_print(FILE *out, const plc_result *res, int width, const plc_report_opts *o)
{
  const plc_ir_run *run = res->run;
  plc_blocks bl;
  int ok = plc_blocks_build(&bl, res);
  fprintf(out, "\npipeline of the whole step at block level (%s, %d stage%s, %d microbatch%s)\n",
          run->schedule ? run->schedule : "?", run->nstages, run->nstages == 1 ? "" : "s",
          (int)run->mu, run->mu == 1 ? "" : "es");
  plc_sched_placement place = PLC_SCHED_PLACE_STAGE;
  plc_sched_params par;
  char why[160];
  if (ok && !plc_runsched_params(run, &place, &par, why, sizeof why))
    place = PLC_SCHED_PLACE_STAGE;
  if (!ok || mpq_sgn(bl.makespan) <= 0) {
    fprintf(out, "  not drawn: %s\n", ok ? "the step takes no time" : bl.why);
    plc_blocks_free(&bl);
    return;
  }
  plc_pipeline_pic pic;
  memset(&pic, 0, sizeof pic);
  pic.bl = &bl;
  pic.place = place;
  pic.p = run->nstages;
  mpq_init(pic.k);
  plc_pipeline_rows(&pic, res->device);
  int lw = 9; /* "*stage NN" */
  int cols = width - (2 + lw + 2) - 1;
  plc_pipeline_windows(&pic, cols < 12 ? 12 : cols);
  plc_pipeline_draw(&pic);
  plc_pipeline_print_rows(out, &pic, lw, res->device);
  plc_pipeline_axis(out, &pic, lw, o);
  plc_pipeline_legend(out, &pic, res->device, o);
  plc_pipeline_free(&pic);
  plc_blocks_free(&bl);
}
