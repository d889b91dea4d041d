/* timeline_text.c - the ASCII timeline of one microbatch on a stage.
 *
 * One row per stream (compute first, then by name) in the style of the
 * reference article's diagrams.  The chart has `cols` cells; cell c covers
 * the time [c T/cols, (c+1) T/cols).  How much of each cell each kind of
 * item covers is summed exactly; a cell shows
 *   !  when any of it is exposed communication: on the compute row the
 *      stream waiting for a collective or running one (a collective on the
 *      compute stream blocks it: all of it is exposed), on a collective's
 *      row the part of it that was waited for;
 *   .  (compute row) when the stream waits for compute on another stream;
 *   #, = or !  otherwise, for compute, communication or a collective on
 *      the compute stream: whichever covers more of it, counting what the
 *      cells before it on the row covered and did not show (error
 *      diffusion, compute first on a tie), so that over a stretch of cells
 *      each kind gets its share even where it is the minority of every
 *      cell; blank when nothing runs.
 * A compute op still without a # in or beside its cells then gets the cell
 * of its midpoint, unless a wait is shown there: compute never vanishes
 * from a row that is mostly communication.
 * An op at least three cells wide (endpoints rounded to cells) is drawn
 * [like this] with its label where it fits, never over a wait. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "timeline.h"
#include "xalloc.h"

#include <stdlib.h>
#include <string.h>

/* What covers a cell: compute, a collective running on another stream, a
 * collective running on the compute stream (it blocks it), a wait for a
 * collective or its waited-for part, a wait for other compute. */
enum { PLC_TLC_COMPUTE, PLC_TLC_COMM, PLC_TLC_BLOCK, PLC_TLC_EXPOSED, PLC_TLC_OTHER, PLC_TLC_N };

#define PLC_TIMELINE_NAME_MAX 24 /* longest stream name shown whole */

typedef struct plc_timeline_grid {
  const plc_ir_run *run;
  int rows, cols;
  int *row_of;         /* stream -> row */
  mpq_t *cover;        /* [row][col][category] */
  char *cells;         /* [row][col] */
  int *ncompute;       /* [row][col]: compute ops touching the cell */
  mpq_t k;             /* cells per second */
  mpq_t ua, ub, lo, hi;
} plc_timeline_grid;

static void plc_timeline_grid_init(plc_timeline_grid *g, const plc_timeline *tl, int cols)
{
  const plc_timeline_stage *st = &tl->stages[0];
  g->run = tl->run;
  g->rows = st->nstreams;
  g->cols = cols;
  g->row_of = plc_xmalloc(((size_t)tl->run->nstreams + 1) * sizeof *g->row_of);
  for (int r = 0; r < st->nstreams; r++)
    g->row_of[st->streams[r]] = r;
  size_t n = (size_t)g->rows * (size_t)cols;
  g->cover = plc_xmalloc(n * PLC_TLC_N * sizeof *g->cover);
  for (size_t i = 0; i < n * PLC_TLC_N; i++)
    mpq_init(g->cover[i]);
  g->cells = plc_xmalloc(n + 1);
  g->ncompute = plc_xcalloc(n + 1, sizeof *g->ncompute);
  memset(g->cells, ' ', n);
  mpq_inits(g->k, g->ua, g->ub, g->lo, g->hi, NULL);
  if (mpq_sgn(tl->end) > 0) {
    mpq_set_si(g->k, cols, 1);
    mpq_div(g->k, g->k, tl->end);
  }
}

static void plc_timeline_grid_free(plc_timeline_grid *g)
{
  size_t n = (size_t)g->rows * (size_t)g->cols * PLC_TLC_N;
  for (size_t i = 0; i < n; i++)
    mpq_clear(g->cover[i]);
  free(g->cover);
  free(g->cells);
  free(g->ncompute);
  free(g->row_of);
  mpq_clears(g->k, g->ua, g->ub, g->lo, g->hi, NULL);
}

/* floor (up = 0) or ceiling (up = 1) of a cell position, within [0, cols]. */
static long plc_timeline_cell(const plc_timeline_grid *g, mpq_srcptr u, int up)
{
  mpz_t q;
  mpz_init(q);
  if (up)
    mpz_cdiv_q(q, mpq_numref(u), mpq_denref(u));
  else
    mpz_fdiv_q(q, mpq_numref(u), mpq_denref(u));
  long c = mpz_cmp_si(q, g->cols) > 0 ? g->cols : mpz_sgn(q) < 0 ? 0 : mpz_get_si(q);
  mpz_clear(q);
  return c;
}

/* Add the time [a, b) of one category to the cells of a row it touches. */
static void plc_timeline_cover(plc_timeline_grid *g, int row, int cat, mpq_srcptr a, mpq_srcptr b)
{
  mpq_mul(g->ua, a, g->k);
  mpq_mul(g->ub, b, g->k);
  if (mpq_cmp(g->ua, g->ub) >= 0)
    return;
  long c0 = plc_timeline_cell(g, g->ua, 0), c1 = plc_timeline_cell(g, g->ub, 1);
  for (long c = c0; c < c1 && cat == PLC_TLC_COMPUTE; c++)
    g->ncompute[(size_t)row * (size_t)g->cols + (size_t)c]++;
  for (long c = c0; c < c1; c++) {
    mpq_set_si(g->lo, c, 1);
    mpq_set_si(g->hi, c + 1, 1);
    if (mpq_cmp(g->ua, g->lo) > 0)
      mpq_set(g->lo, g->ua);
    if (mpq_cmp(g->ub, g->hi) < 0)
      mpq_set(g->hi, g->ub);
    if (mpq_cmp(g->hi, g->lo) > 0) {
      mpq_ptr v = g->cover[((size_t)row * (size_t)g->cols + (size_t)c) * PLC_TLC_N + (size_t)cat];
      mpq_sub(g->hi, g->hi, g->lo);
      mpq_add(v, v, g->hi);
    }
  }
}

static void plc_timeline_cover_item(void *ctx, const plc_timeline_item *it)
{
  plc_timeline_grid *g = ctx;
  int row = g->row_of[it->stream], cat;
  if (it->what == PLC_TL_OP && it->op->kind == PLC_OPK_COMPUTE)
    cat = PLC_TLC_COMPUTE;
  else if (it->what == PLC_TL_OP)
    cat = it->stream == 0 ? PLC_TLC_BLOCK : PLC_TLC_COMM;
  else if (it->what == PLC_TL_EXPOSED)
    cat = PLC_TLC_EXPOSED;
  else
    cat = it->op && it->op->kind != PLC_OPK_COMPUTE ? PLC_TLC_EXPOSED : PLC_TLC_OTHER;
  plc_timeline_cover(g, row, cat, it->a, it->b);
}

/* The cells of one row: waits first, then the diffused majority. */
static void plc_timeline_fill_row(plc_timeline_grid *g, int row, mpq_t *carry)
{
  static const char glyph[] = {'#', '=', '!'};
  for (int k = 0; k < 3; k++)
    mpq_set_ui(carry[k], 0, 1);
  for (long c = 0; c < g->cols; c++) {
    size_t i = (size_t)row * (size_t)g->cols + (size_t)c;
    mpq_t *v = &g->cover[i * PLC_TLC_N];
    if (mpq_sgn(v[PLC_TLC_EXPOSED]) > 0 || mpq_sgn(v[PLC_TLC_OTHER]) > 0) {
      g->cells[i] = mpq_sgn(v[PLC_TLC_EXPOSED]) > 0 ? '!' : '.';
      continue;
    }
    int best = -1;
    mpq_set_ui(g->lo, 0, 1);
    for (int k = 0; k < 3; k++)
      if (mpq_sgn(v[k]) > 0) {
        mpq_add(carry[k], carry[k], v[k]);
        mpq_add(g->lo, g->lo, v[k]);
        if (best < 0 || mpq_cmp(carry[k], carry[best]) > 0)
          best = k;
      }
    if (best < 0) {
      g->cells[i] = ' ';
      for (int k = 0; k < 3; k++)
        mpq_set_ui(carry[k], 0, 1);
      continue;
    }
    g->cells[i] = glyph[best];
    mpq_sub(carry[best], carry[best], g->lo);
  }
}

static void plc_timeline_fill(plc_timeline_grid *g)
{
  mpq_t carry[3];
  for (int k = 0; k < 3; k++)
    mpq_init(carry[k]);
  for (int r = 0; r < g->rows; r++)
    plc_timeline_fill_row(g, r, carry);
  for (int k = 0; k < 3; k++)
    mpq_clear(carry[k]);
}

/* A compute op alone in and beside the cells it touches, with no # there
 * (outweighed by communication sharing them), gets the cell of its
 * midpoint, unless a wait is shown there.  Where compute ops are many, the
 * diffusion already gives them their share. */
static void plc_timeline_keep_item(void *ctx, const plc_timeline_item *it)
{
  plc_timeline_grid *g = ctx;
  if (it->what != PLC_TL_OP || it->op->kind != PLC_OPK_COMPUTE)
    return;
  char *cell = &g->cells[(size_t)g->row_of[it->stream] * (size_t)g->cols];
  mpq_mul(g->ua, it->a, g->k);
  mpq_mul(g->ub, it->b, g->k);
  long c0 = plc_timeline_cell(g, g->ua, 0), c1 = plc_timeline_cell(g, g->ub, 1);
  const int *n = &g->ncompute[(size_t)g->row_of[it->stream] * (size_t)g->cols];
  for (long c = c0 > 0 ? c0 - 1 : 0; c < c1 + 1 && c < g->cols; c++)
    if (cell[c] == '#' || n[c] > (c >= c0 && c < c1))
      return;
  mpq_add(g->lo, g->ua, g->ub);
  mpq_div_2exp(g->lo, g->lo, 1);
  long mid = plc_timeline_cell(g, g->lo, 0);
  mid = mid < g->cols ? mid : g->cols - 1;
  const mpq_t *v = &g->cover[((size_t)g->row_of[it->stream] * (size_t)g->cols + (size_t)mid) *
                             PLC_TLC_N];
  if (mpq_sgn(v[PLC_TLC_EXPOSED]) == 0 && mpq_sgn(v[PLC_TLC_OTHER]) == 0)
    cell[mid] = '#';
}

/* Brackets and labels go over an op's own cells only: its fill character,
 * or on a collective's row its exposed part, never a compute-stream wait. */
static int plc_timeline_writable(const plc_timeline_grid *g, int row, long c, char fill)
{
  char ch = g->cells[(size_t)row * (size_t)g->cols + (size_t)c];
  return ch == fill || (row != 0 && ch == '!');
}

static void plc_timeline_put_label(plc_timeline_grid *g, int row, long c0, long w,
                                   const plc_ir_op *op, char fill)
{
  char text[2][96];
  plc_timeline_label(text[0], sizeof text[0], op, 1);
  plc_timeline_label(text[1], sizeof text[1], op, 0);
  for (int t = 0; t < 2; t++) {
    long len = (long)strlen(text[t]), at = c0 + 1 + (w - 2 - len) / 2, ok = len <= w - 2;
    for (long c = at; ok && c < at + len; c++)
      ok = plc_timeline_writable(g, row, c, fill);
    if (ok) {
      memcpy(&g->cells[(size_t)row * (size_t)g->cols + (size_t)at], text[t], (size_t)len);
      return;
    }
  }
}

static void plc_timeline_label_item(void *ctx, const plc_timeline_item *it)
{
  plc_timeline_grid *g = ctx;
  if (it->what != PLC_TL_OP)
    return;
  mpz_t a, b;
  mpz_inits(a, b, NULL);
  plc_timeline_round(a, it->a, g->k);
  plc_timeline_round(b, it->b, g->k);
  long c0 = mpz_get_si(a), c1 = mpz_get_si(b), w = c1 - c0; /* both within [0, cols] */
  mpz_clears(a, b, NULL);
  int row = g->row_of[it->stream];
  char fill = it->op->kind == PLC_OPK_COMPUTE ? '#' : it->stream == 0 ? '!' : '=';
  if (w < 3)
    return;
  plc_timeline_put_label(g, row, c0, w, it->op, fill);
  char *cell = &g->cells[(size_t)row * (size_t)g->cols];
  if (plc_timeline_writable(g, row, c0, fill))
    cell[c0] = '[';
  if (plc_timeline_writable(g, row, c1 - 1, fill))
    cell[c1 - 1] = ']';
}

/* ---- the text around the chart ---------------------------------------------- */

/* A time in milliseconds with the report's significant digits, no unit. */
static char *plc_timeline_ms(mpq_srcptr t, int digits)
{
  mpq_t ms;
  mpq_init(ms);
  mpq_set_ui(ms, 1000, 1);
  mpq_mul(ms, ms, t);
  char *s = plc_fmt_sig(ms, digits);
  mpq_clear(ms);
  return s;
}

static char *plc_timeline_time(mpq_srcptr t, const plc_report_opts *o)
{
  return plc_q_format_raw(t, 0, 1, 0, o->digits, o->exact);
}

/* The phase ruler: |fwd----|bwd---------| with the marker at the first
 * backward cell. */
static void plc_timeline_phases(FILE *out, const plc_timeline_grid *g, long cb, int lw)
{
  char *line = plc_xmalloc((size_t)g->cols + 3);
  memset(line, '-', (size_t)g->cols + 2);
  line[0] = line[g->cols + 1] = '|';
  line[g->cols + 2] = '\0';
  if (cb >= 3)
    memcpy(line + 1, "fwd", 3);
  if (cb > 0 && cb < g->cols)
    line[cb + 1] = '|';
  if (g->cols - cb >= 4)
    memcpy(line + cb + 1 + (cb > 0), "bwd", 3);
  fprintf(out, "  %-*s %s\n", lw, "phase", line);
  free(line);
}

/* The axis: 0 under the left edge, the end under the right one, and the
 * backward's start under its marker when there is room. */
static void plc_timeline_axis(FILE *out, const plc_timeline_grid *g, const plc_timeline *tl,
                              long cb, int lw, int digits)
{
  size_t n = (size_t)g->cols + 2;
  char *line = plc_xmalloc(n + 1);
  memset(line, ' ', n);
  line[n] = '\0';
  char *end = plc_timeline_ms(tl->end, digits), *mid = plc_timeline_ms(tl->stages[0].bwd_at, digits);
  size_t le = strlen(end), lm = strlen(mid);
  line[0] = '0';
  if (le < n - 1)
    memcpy(line + n - le, end, le);
  if (cb > 0 && (size_t)cb + 1 >= 2 && (size_t)cb + 1 + lm + 1 <= n - le)
    memcpy(line + cb + 1, mid, lm);
  while (n > 0 && line[n - 1] == ' ')
    line[--n] = '\0';
  fprintf(out, "  %-*s %s\n", lw, "time (ms)", line);
  free(end);
  free(mid);
  free(line);
}

static void plc_timeline_rows(FILE *out, const plc_timeline_grid *g, const plc_timeline_stage *st,
                              int lw)
{
  for (int r = 0; r < g->rows; r++) {
    const char *name = g->run->streams[st->streams[r]];
    fprintf(out, "  %-*.*s |%.*s|\n", lw, PLC_TIMELINE_NAME_MAX, name, g->cols,
            &g->cells[(size_t)r * (size_t)g->cols]);
  }
}

/* A note when ops on other streams outlive the compute stream's makespan. */
static void plc_timeline_trailing(FILE *out, const char *what, mpq_srcptr at, mpq_srcptr compute,
                                  const plc_report_opts *o)
{
  if (mpq_equal(at, compute))
    return;
  char *s = plc_timeline_time(at, o);
  fprintf(out, "  %s %s, when the last op on another stream ends\n", what, s);
  free(s);
}

/* t_f + t_b, and what the compute stream waited for. */
static void plc_timeline_summary(FILE *out, const plc_timeline *tl, const plc_report_opts *o)
{
  const plc_timeline_stage *st = &tl->stages[0];
  const plc_sim *f = &st->sims[0], *b = &st->sims[1];
  mpq_t t, exp, other;
  mpq_inits(t, exp, other, NULL);
  mpq_add(t, f->makespan, b->makespan);
  mpq_add(exp, f->exposed, b->exposed);
  mpq_add(other, f->stall_other, b->stall_other);
  char *tf = plc_timeline_time(f->makespan, o), *tb = plc_timeline_time(b->makespan, o);
  char *tt = plc_timeline_time(t, o), *e = plc_timeline_time(exp, o);
  fprintf(out, "  t_f %s + t_b %s = %s; exposed communication %s", tf, tb, tt, e);
  free(tf);
  free(tb);
  free(tt);
  free(e);
  if (mpq_sgn(other) > 0) {
    char *w = plc_timeline_time(other, o);
    fprintf(out, "; compute waiting for other streams %s", w);
    free(w);
  }
  fputc('\n', out);
  plc_timeline_trailing(out, "the backward starts at", st->bwd_at, f->makespan, o);
  mpq_add(t, st->bwd_at, b->makespan);
  plc_timeline_trailing(out, "the drawing ends at", st->end, t, o);
  mpq_clears(t, exp, other, NULL);
}

static void plc_timeline_legend(FILE *out, const plc_timeline *tl, int cols,
                                const plc_report_opts *o)
{
  mpq_t col;
  mpq_init(col);
  mpq_set_si(col, cols, 1);
  mpq_div(col, tl->end, col);
  char *c = plc_timeline_time(col, o);
  fprintf(out, "  one column = %s\n"
          "  # compute (every compute op keeps a column)  = communication, hidden\n"
          "  [L3 mm] an op of layer 3, labelled where it fits\n"
          "  ! exposed communication: the compute stream waits for it, and on the row of\n"
          "    the collective it waits for, the part it waits for; a collective on the\n"
          "    compute row blocks the stream, so all of its time is exposed and drawn !\n"
          "  . the compute stream waits for compute on another stream\n", c);
  free(c);
  mpq_clear(col);
}

void plc_timeline_print(FILE *out, const plc_result *res, int stage, int width,
                        const plc_report_opts *o)
{
  plc_timeline tl;
  plc_timeline_microbatch(&tl, res, stage < 0 ? res->critical : stage);
  const plc_timeline_stage *st = &tl.stages[0];
  int lw = 9; /* "time (ms)" */
  for (int r = 0; r < st->nstreams; r++) {
    int len = (int)strlen(tl.run->streams[st->streams[r]]);
    if (len > lw)
      lw = len > PLC_TIMELINE_NAME_MAX ? PLC_TIMELINE_NAME_MAX : len;
  }
  int cols = width - (2 + lw + 1) - 2;
  plc_timeline_grid g;
  plc_timeline_grid_init(&g, &tl, cols < 10 ? 10 : cols);
  plc_timeline_each(st, plc_timeline_cover_item, &g);
  plc_timeline_fill(&g);
  plc_timeline_each(st, plc_timeline_keep_item, &g);
  plc_timeline_each(st, plc_timeline_label_item, &g);
  mpz_t cb;
  mpz_init(cb);
  plc_timeline_round(cb, st->bwd_at, g.k);
  fprintf(out, "\ntimeline of one microbatch on stage %d of %d%s, forward then backward\n",
          st->stage, tl.run->nstages, st->stage == res->critical ? " (critical)" : "");
  plc_timeline_phases(out, &g, mpz_get_si(cb), lw);
  plc_timeline_rows(out, &g, st, lw);
  plc_timeline_axis(out, &g, &tl, mpz_get_si(cb), lw, o->digits);
  plc_timeline_summary(out, &tl, o);
  plc_timeline_legend(out, &tl, g.cols, o);
  mpz_clear(cb);
  plc_timeline_grid_free(&g);
  plc_timeline_free(&tl);
}
