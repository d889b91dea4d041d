/* compare.c - the comparison table of --compare. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "compare.h"
#include "xalloc.h"

#include <stdlib.h>
#include <string.h>

/* The figures compared, each read from a result into v (seconds, or a
 * fraction when sec == 0, or per second when sec == -1). */
typedef struct plc_cmp_fig {
  const char *label;
  int sec;
  int dim;            /* exposed communication of this dimension, or -1 */
  void (*get)(const plc_result *r, int dim, mpq_t v);
} plc_cmp_fig;

static void plc_cmp_mu(const plc_result *r, mpq_t v, mpq_srcptr per_mb)
{
  mpq_set_si(v, r->run->mu, 1);
  mpq_mul(v, v, per_mb);
}

static void plc_get_step(const plc_result *r, int d, mpq_t v) { (void)d; mpq_set(v, r->step); }
static void plc_get_tf(const plc_result *r, int d, mpq_t v) { (void)d; mpq_set(v, r->t_f); }
static void plc_get_tb(const plc_result *r, int d, mpq_t v) { (void)d; mpq_set(v, r->t_b); }
static void plc_get_compute(const plc_result *r, int d, mpq_t v)
{
  (void)d;
  plc_cmp_mu(r, v, r->compute_mb);
}
static void plc_get_exposed(const plc_result *r, int d, mpq_t v)
{
  plc_cmp_mu(r, v, r->exposed_mb[d]);
}
static void plc_get_waits(const plc_result *r, int d, mpq_t v)
{
  (void)d;
  plc_cmp_mu(r, v, r->stall_mb);
}
static void plc_get_bubble(const plc_result *r, int d, mpq_t v) { (void)d; mpq_set(v, r->bubble); }
static void plc_get_tail(const plc_result *r, int d, mpq_t v) { (void)d; mpq_set(v, r->tail); }
static void plc_get_eta(const plc_result *r, int d, mpq_t v) { (void)d; mpq_set(v, r->eta); }
static void plc_get_busy(const plc_result *r, int d, mpq_t v) { (void)d; mpq_set(v, r->busy); }
static void plc_get_tps(const plc_result *r, int d, mpq_t v)
{
  (void)d;
  mpq_set(v, r->tokens_per_s);
}

static char *plc_cmp_value(const plc_report_opts *o, const plc_cmp_fig *f, mpq_srcptr v)
{
  if (o->exact)
    return plc_fmt_exact(v);
  if (f->sec == 1)
    return plc_q_format_raw(v, 0, 1, 0, o->digits, 0);
  mpq_t p;
  mpq_init(p);
  mpq_set_ui(p, f->sec == 0 ? 100 : 1, 1);
  mpq_mul(p, p, v);
  char *n = plc_fmt_sig(p, o->digits), *s = plc_xmalloc(strlen(n) + 3);
  sprintf(s, "%s%s", n, f->sec == 0 ? "%" : "");
  free(n);
  mpq_clear(p);
  return s;
}

/* "+12.5%" of b against a, or "n/a" when a is zero. */
static char *plc_cmp_relative(const plc_report_opts *o, mpq_srcptr a, mpq_srcptr b)
{
  if (mpq_sgn(a) == 0)
    return plc_xstrdup(mpq_sgn(b) ? "n/a" : "0%");
  mpq_t r;
  mpq_init(r);
  mpq_sub(r, b, a);
  mpq_div(r, r, a);
  mpq_t h;
  mpq_init(h);
  mpq_set_ui(h, 100, 1);
  mpq_mul(r, r, h);
  char *n = o->exact ? plc_fmt_exact(r) : plc_fmt_sig(r, o->digits);
  char *s = plc_xmalloc(strlen(n) + 3);
  sprintf(s, "%s%s%%", mpq_sgn(r) > 0 ? "+" : "", n);
  free(n);
  mpq_clears(r, h, NULL);
  return s;
}

static void plc_cmp_line(FILE *out, const char *const *cells, int n, const int *w)
{
  fputs("  ", out);
  for (int c = 0; c < n; c++)
    fprintf(out, c == 0 ? "%-*s" : "  %*s", w[c], cells[c]);
  fputc('\n', out);
}

/* Cells of one figure: label, each run's value, then for each later run
 * its difference and relative difference from the first. */
static int plc_cmp_cells(const plc_result *const *runs, int n, const plc_cmp_fig *f,
                         const plc_report_opts *o, char **cells)
{
  int k = 0;
  mpq_t v0, v, d;
  mpq_inits(v0, v, d, NULL);
  cells[k++] = plc_xstrdup(f->label);
  for (int i = 0; i < n; i++) {
    f->get(runs[i], f->dim, v);
    cells[k++] = plc_cmp_value(o, f, v);
  }
  f->get(runs[0], f->dim, v0);
  for (int i = 1; i < n; i++) {
    f->get(runs[i], f->dim, v);
    mpq_sub(d, v, v0);
    char *a = plc_cmp_value(o, f, d);
    cells[k] = plc_xmalloc(strlen(a) + 2);
    sprintf(cells[k++], "%s%s", mpq_sgn(d) > 0 ? "+" : "", a);
    free(a);
    cells[k++] = plc_cmp_relative(o, v0, v);
  }
  mpq_clears(v0, v, d, NULL);
  return k;
}

static int plc_cmp_figures(const plc_result *const *runs, int n, plc_cmp_fig *f,
                           char labels[PLC_PD_COUNT][32])
{
  static const plc_cmp_fig fixed[] = {
    {"step", 1, -1, plc_get_step}, {"t_f (per microbatch)", 1, -1, plc_get_tf},
    {"t_b (per microbatch)", 1, -1, plc_get_tb}, {"compute", 1, -1, plc_get_compute},
  };
  static const plc_cmp_fig tail[] = {
    {"waits", 1, -1, plc_get_waits}, {"bubble", 1, -1, plc_get_bubble},
    {"dp tail", 1, -1, plc_get_tail}, {"eta", 0, -1, plc_get_eta}, {"busy", 0, -1, plc_get_busy},
    {"tokens/s", -1, -1, plc_get_tps},
  };
  int k = 0;
  for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
    f[k++] = fixed[i];
  for (int d = 0; d < PLC_PD_COUNT; d++) { /* exposed communication of dimensions any run has */
    int any = 0;
    for (int i = 0; i < n; i++)
      any |= mpq_sgn(runs[i]->exposed_mb[d]) != 0;
    if (!any)
      continue;
    snprintf(labels[d], sizeof labels[d], "exposed %s", plc_pdim_name(d));
    f[k++] = (plc_cmp_fig){labels[d], 1, d, plc_get_exposed};
  }
  for (size_t i = 0; i < sizeof tail / sizeof tail[0]; i++)
    f[k++] = tail[i];
  return k;
}

void plc_compare_text(FILE *out, const plc_result *const *runs, const char *const *labels, int n,
                      const plc_report_opts *o)
{
  plc_cmp_fig figs[32];
  char labels_dim[PLC_PD_COUNT][32];
  int nf = plc_cmp_figures(runs, n, figs, labels_dim);
  int cols = 1 + n + 2 * (n - 1);
  char ***rows = plc_xcalloc((size_t)nf + 1, sizeof *rows);
  int *w = plc_xcalloc((size_t)cols, sizeof *w);
  rows[0] = plc_xcalloc((size_t)cols, sizeof **rows);
  rows[0][0] = plc_xstrdup("");
  for (int i = 0; i < n; i++)
    rows[0][1 + i] = plc_xstrdup(labels[i]);
  for (int i = 1; i < n; i++) { /* "B - A" and "B / A - 1" for each later run B */
    size_t len = strlen(labels[i]) + 8;
    rows[0][n + 2 * i - 1] = plc_xmalloc(len);
    snprintf(rows[0][n + 2 * i - 1], len, "%s diff", labels[i]);
    rows[0][n + 2 * i] = plc_xmalloc(len);
    snprintf(rows[0][n + 2 * i], len, "%s rel", labels[i]);
  }
  for (int f = 0; f < nf; f++) {
    rows[f + 1] = plc_xcalloc((size_t)cols, sizeof **rows);
    plc_cmp_cells(runs, n, &figs[f], o, rows[f + 1]);
  }
  for (int r = 0; r <= nf; r++)
    for (int c = 0; c < cols; c++)
      if ((int)strlen(rows[r][c]) > w[c])
        w[c] = (int)strlen(rows[r][c]);
  fprintf(out, "comparison of %d runs (differences from %s)\n", n, labels[0]);
  for (int r = 0; r <= nf; r++) {
    plc_cmp_line(out, (const char *const *)rows[r], cols, w);
    for (int c = 0; c < cols; c++)
      free(rows[r][c]);
    free(rows[r]);
  }
  free(rows);
  free(w);
}
