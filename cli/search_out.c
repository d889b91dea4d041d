/* search_out.c - a search's ranking as text, Markdown, CSV, JSON and a
 * train block; and shard outputs read back for plc --merge.
 *
 * Every format shows the same cells (plc_search_cells); JSON keeps each
 * figure exact as well, which is what lets --merge rebuild rows that rank
 * and print exactly as in the run that wrote them. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "search.h"
#include "report_parts.h"
#include "xalloc.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

/* ---- cells ------------------------------------------------------------------- */

/* Dimensions with exposed communication in some ranked row: their columns. */
static int plc_search_dims(const plc_sresult *r, int *dims)
{
  int n = 0;
  for (int d = 0; d < PLC_PD_COUNT; d++) {
    int any = 0;
    for (int i = 0; i < r->nrows && !any; i++)
      any = mpq_sgn(r->rows[i]->exposed[d]) != 0;
    if (any)
      dims[n++] = d;
  }
  return n;
}

/* Is the objective a figure the table has anyway (then no column of its own)? */
static int plc_search_obj_shown(const plc_sresult *r)
{
  static const char *const shown[] = {"step_time", "mfu", "tokens_per_s", "peak_memory",
                                      "bubble"};
  for (size_t i = 0; i < sizeof shown / sizeof shown[0]; i++)
    if (!strcmp(r->objective, shown[i]))
      return 1;
  return 0;
}

static int plc_search_ncols(const plc_sresult *r, int ndims)
{
  return 1 + r->nvary + 5 + !plc_search_obj_shown(r) + ndims + 1;
}

/* The header: rank, the varied fields, the figures, the exposed columns. */
static char **plc_search_header(const plc_sresult *r, const int *dims, int ndims)
{
  char **h = plc_xcalloc((size_t)plc_search_ncols(r, ndims), sizeof *h);
  int k = 0;
  h[k++] = plc_xstrdup("rank");
  for (int i = 0; i < r->nvary; i++)
    h[k++] = plc_xstrdup(r->vary[i]);
  static const char *const figs[] = {"step", "MFU", "tokens/s", "peak memory", "bubble"};
  for (int i = 0; i < 5; i++)
    h[k++] = plc_xstrdup(figs[i]);
  if (!plc_search_obj_shown(r))
    h[k++] = plc_xstrdup(r->objective);
  for (int i = 0; i < ndims; i++)
    h[k++] = plc_report_sprintf("exposed %s", plc_pdim_name(dims[i]));
  h[k] = plc_xstrdup("bottleneck");
  return h;
}

static char *plc_search_objective_cell(const plc_srow *w, const plc_report_opts *o)
{
  plc_quantity q;
  plc_q_init(&q);
  plc_q_set_raw(&q, w->objective, w->obj_dim[0], w->obj_dim[1], w->obj_dim[2]);
  char *s = plc_q_format(&q, o->digits, o->exact);
  plc_q_clear(&q);
  return s;
}

/* One ranked row's cells, as the header names them. */
static char **plc_search_cells(const plc_sresult *r, int i, const int *dims, int ndims,
                               const plc_report_opts *o)
{
  const plc_srow *w = r->rows[i];
  char **c = plc_xcalloc((size_t)plc_search_ncols(r, ndims), sizeof *c);
  int k = 0;
  c[k++] = plc_report_sprintf("%d", i + 1);
  for (int v = 0; v < r->nvary; v++)
    c[k++] = plc_xstrdup(w->text[v]);
  c[k++] = plc_report_time(o, w->step);
  c[k++] = w->mfu_known ? plc_report_pct(o, w->mfu) : plc_xstrdup("-");
  c[k++] = plc_report_num(o, w->tokens_per_s);
  c[k++] = w->peak_known ? plc_report_bytes(o, w->peak) : plc_xstrdup("-");
  c[k++] = plc_report_time(o, w->bubble);
  if (!plc_search_obj_shown(r))
    c[k++] = plc_search_objective_cell(w, o);
  for (int d = 0; d < ndims; d++)
    c[k++] = plc_report_time(o, w->exposed[dims[d]]);
  if (w->bottleneck) {
    char *pct = plc_report_pct(o, w->share);
    c[k] = plc_report_sprintf("%s %s", w->bottleneck, pct);
    free(pct);
  } else {
    c[k] = plc_xstrdup("-");
  }
  return c;
}

/* "search best (x.plan:12): 96 candidates ..." */
static char *plc_search_title(const plc_sresult *r)
{
  char shard[64] = "";
  if (r->shard_n > 1)
    snprintf(shard, sizeof shard, ", shard %d of %d", r->shard_k, r->shard_n);
  return plc_report_sprintf("search %s (%s:%d): train %s, %s %s%s", r->name, r->file, r->line,
                            r->train, r->maximize ? "maximize" : "minimize", r->objective,
                            shard);
}

static char *plc_search_counts(const plc_sresult *r)
{
  return plc_report_sprintf("%llu candidates, %llu evaluated: %llu pass, %llu skipped; "
                            "the best %d", (unsigned long long)r->space,
                            (unsigned long long)r->evaluated, (unsigned long long)r->ranked,
                            (unsigned long long)(r->evaluated - r->ranked),
                            r->nrows);
}

/* ---- text and Markdown ------------------------------------------------------------ */

static void plc_search_table(FILE *out, char ***rows, int nrows, int ncols, int md)
{
  size_t *wd = plc_xcalloc((size_t)ncols, sizeof *wd);
  for (int i = 0; i < nrows; i++)
    for (int k = 0; k < ncols; k++)
      if (strlen(rows[i][k]) > wd[k])
        wd[k] = strlen(rows[i][k]);
  for (int i = 0; i < nrows; i++) {
    fputs(md ? "|" : "", out);
    for (int k = 0; k < ncols; k++) {
      int last = k == ncols - 1; /* the bottleneck's words, left aligned, no blanks after */
      if (md)
        fprintf(out, " %*s |", last ? -(int)wd[k] : (int)wd[k], rows[i][k]);
      else if (last)
        fprintf(out, "  %s", rows[i][k]);
      else
        fprintf(out, "  %*s", (int)wd[k], rows[i][k]);
    }
    fputc('\n', out);
    if (md && i == 0) {
      fputc('|', out);
      for (int k = 0; k < ncols; k++)
        fputs(k == ncols - 1 ? " --- |" : " ---: |", out);
      fputc('\n', out);
    }
  }
  free(wd);
}

static void plc_search_tabulate(FILE *out, const plc_sresult *r, const plc_report_opts *o,
                                int md)
{
  int dims[PLC_PD_COUNT], nd = plc_search_dims(r, dims), nc = plc_search_ncols(r, nd);
  char ***rows = plc_xcalloc((size_t)r->nrows + 1, sizeof *rows);
  rows[0] = plc_search_header(r, dims, nd);
  for (int i = 0; i < r->nrows; i++)
    rows[i + 1] = plc_search_cells(r, i, dims, nd, o);
  if (r->nrows)
    plc_search_table(out, rows, r->nrows + 1, nc, md);
  for (int i = 0; i <= r->nrows; i++) {
    plc_report_cells_free(rows[i], nc);
    free(rows[i]);
  }
  free(rows);
}

static void plc_search_reasons(FILE *out, const plc_sresult *r, int md)
{
  if (!r->nreasons)
    return;
  fputs(md ? "\n**Skipped**\n\n| count | reason |\n| ---: | --- |\n" : "\nskipped\n", out);
  for (int i = 0; i < r->nreasons; i++)
    fprintf(out, md ? "| %llu | %s |\n" : "  %8llu  %s\n",
            (unsigned long long)r->reasons[i].count, r->reasons[i].text);
}

/* The title, the counts, the table and the skip reasons, as text or
 * Markdown. */
static void plc_search_print(FILE *out, const plc_sresult *r, const plc_report_opts *o, int md)
{
  char *t = plc_search_title(r), *c = plc_search_counts(r);
  fprintf(out, md ? "## %s\n\n%s\n%s" : "%s\n  %s\n%s", t, c, r->nrows ? "\n" : "");
  free(t);
  free(c);
  plc_search_tabulate(out, r, o, md);
  plc_search_reasons(out, r, md);
}

void plc_search_text(FILE *out, const plc_sresult *r, const plc_report_opts *o)
{
  plc_search_print(out, r, o, 0);
}

void plc_search_md(FILE *out, const plc_sresult *r, const plc_report_opts *o)
{
  plc_search_print(out, r, o, 1);
}

/* ---- CSV -------------------------------------------------------------------------- */

/* A field of RFC 4180: quoted when it holds a comma, a quote or a line
 * break, its quotes doubled. */
static void plc_search_csv_field(FILE *out, const char *s, int last)
{
  if (strpbrk(s, ",\"\r\n")) {
    fputc('"', out);
    for (; *s; s++) {
      if (*s == '"')
        fputc('"', out);
      fputc(*s, out);
    }
    fputc('"', out);
  } else {
    fputs(s, out);
  }
  fputs(last ? "\r\n" : ",", out);
}

/* A figure in base units: rounded to o->digits, or exact. */
static char *plc_search_csv_num(const plc_report_opts *o, mpq_srcptr v)
{
  return o->exact ? plc_fmt_exact(v) : plc_fmt_sig(v, o->digits);
}

/* CSV is for spreadsheets: numbers without units (the header names
 * them: seconds, bytes, fractions), one row per ranked candidate. */
void plc_search_csv(FILE *out, const plc_sresult *r, const plc_report_opts *o)
{
  int dims[PLC_PD_COUNT], nd = plc_search_dims(r, dims);
  plc_search_csv_field(out, "rank", 0);
  for (int i = 0; i < r->nvary; i++)
    plc_search_csv_field(out, r->vary[i], 0);
  fputs("step_time_s,mfu,tokens_per_s,peak_memory_B,bubble_s,objective", out);
  for (int d = 0; d < nd; d++)
    fprintf(out, ",exposed_%s_s", plc_pdim_name(dims[d]));
  fputs(",bottleneck,bottleneck_share\r\n", out);
  for (int i = 0; i < r->nrows; i++) {
    const plc_srow *w = r->rows[i];
    fprintf(out, "%d,", i + 1);
    for (int v = 0; v < r->nvary; v++)
      plc_search_csv_field(out, w->text[v], 0);
    mpq_srcptr figs[] = {w->step, w->mfu_known ? w->mfu : NULL, w->tokens_per_s,
                         w->peak_known ? w->peak : NULL, w->bubble, w->objective};
    for (int k = 0; k < 6 + nd; k++) {
      mpq_srcptr v = k < 6 ? figs[k] : w->exposed[dims[k - 6]];
      char *c = v ? plc_search_csv_num(o, v) : plc_xstrdup("");
      plc_search_csv_field(out, c, 0);
      free(c);
    }
    char *share = w->bottleneck ? plc_search_csv_num(o, w->share) : plc_xstrdup("");
    plc_search_csv_field(out, w->bottleneck ? w->bottleneck : "", 0);
    plc_search_csv_field(out, share, 1);
    free(share);
  }
}

int plc_search_emit_plan(FILE *out, const plc_sresult *r)
{
  if (!r->nrows) {
    fprintf(stderr, "plc: error: search '%s' has no candidate that passes\n", r->name);
    return 1;
  }
  fprintf(out, "# the best of search %s (%s:%d), %s %s\n", r->name, r->file, r->line,
          r->maximize ? "maximize" : "minimize", r->objective);
  fprintf(out, "train %s_best = %s {\n", r->name, r->train);
  for (int i = 0; i < r->nvary; i++)
    fprintf(out, "  %s = %s\n", r->vary[i], r->rows[0]->plan[i]);
  for (int i = 0; i < r->nentries; i++)
    fprintf(out, "  %s = %s\n", r->entry_names[i], r->entry_texts[i]);
  fputs("}\n", out);
  return 0;
}

/* ---- JSON -------------------------------------------------------------------------- */

static json_t *plc_search_jstr(const char *s)
{
  json_t *j = s ? json_string(s) : json_null();
  return j ? j : json_string("?"); /* not UTF-8 */
}

/* {"exact", "base_unit", "value", "unit"} as in the run reports. */
static json_t *plc_search_jq(const plc_report_opts *o, mpq_srcptr v, int b, int s, int f)
{
  plc_quantity q;
  plc_q_init(&q);
  plc_q_set_raw(&q, v, b, s, f);
  char *unit, *value = plc_q_format_split(&q, o->digits, &unit);
  char *base = plc_dim_str(q.dim), *exact = plc_fmt_exact(v);
  json_t *j = json_pack("{s:o, s:o, s:o, s:o}", "exact", plc_search_jstr(exact),
                        "base_unit", plc_search_jstr(base), "value", plc_search_jstr(value),
                        "unit", plc_search_jstr(unit));
  free(unit);
  free(value);
  free(base);
  free(exact);
  plc_q_clear(&q);
  return j;
}

static json_t *plc_search_jrow(const plc_sresult *r, int i, const plc_report_opts *o)
{
  const plc_srow *w = r->rows[i];
  json_t *vals = json_array();
  for (int v = 0; v < r->nvary; v++)
    json_array_append_new(vals, json_pack("{s:o, s:o, s:o}", "field",
                                          plc_search_jstr(r->vary[v]), "value",
                                          plc_search_jstr(w->text[v]), "plan",
                                          plc_search_jstr(w->plan[v])));
  json_t *exp = json_object();
  for (int d = 0; d < PLC_PD_COUNT; d++)
    if (mpq_sgn(w->exposed[d]))
      json_object_set_new(exp, plc_pdim_name(d), plc_search_jq(o, w->exposed[d], 0, 1, 0));
  json_t *bn = json_null();
  if (w->bottleneck)
    bn = json_pack("{s:o, s:o}", "part", plc_search_jstr(w->bottleneck), "share",
                   plc_search_jq(o, w->share, 0, 0, 0));
  json_t *dim = json_pack("[i, i, i]", w->obj_dim[0], w->obj_dim[1], w->obj_dim[2]);
  return json_pack("{s:i, s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
                   "rank", i + 1, "index", (json_int_t)w->index, "values", vals,
                   "objective", plc_search_jq(o, w->objective, w->obj_dim[0], w->obj_dim[1],
                                              w->obj_dim[2]),
                   "objective_dim", dim,
                   "step_time", plc_search_jq(o, w->step, 0, 1, 0),
                   "mfu", w->mfu_known ? plc_search_jq(o, w->mfu, 0, 0, 0) : json_null(),
                   "tokens_per_s", plc_search_jq(o, w->tokens_per_s, 0, -1, 0),
                   "peak_memory", w->peak_known ? plc_search_jq(o, w->peak, 1, 0, 0)
                                                : json_null(),
                   "bubble", plc_search_jq(o, w->bubble, 0, 1, 0),
                   "exposed", exp, "bottleneck", bn);
}

void *plc_search_json(const plc_sresult *r, const plc_report_opts *o)
{
  json_t *vary = json_array(), *rows = json_array(), *skip = json_array();
  json_t *entries = json_array();
  for (int i = 0; i < r->nvary; i++)
    json_array_append_new(vary, plc_search_jstr(r->vary[i]));
  for (int i = 0; i < r->nentries; i++)
    json_array_append_new(entries, json_pack("{s:o, s:o}", "field",
                                             plc_search_jstr(r->entry_names[i]), "plan",
                                             plc_search_jstr(r->entry_texts[i])));
  for (int i = 0; i < r->nrows; i++)
    json_array_append_new(rows, plc_search_jrow(r, i, o));
  for (int i = 0; i < r->nreasons; i++)
    json_array_append_new(skip, json_pack("{s:o, s:I}", "reason",
                                          plc_search_jstr(r->reasons[i].text), "count",
                                          (json_int_t)r->reasons[i].count));
  return json_pack("{s:o, s:o, s:o, s:i, s:o, s:o, s:i, s:o, s:o, s:I, s:{s:i, s:i}, s:I, "
                   "s:I, s:o, s:o}",
                   "name", plc_search_jstr(r->name), "train", plc_search_jstr(r->train),
                   "file", plc_search_jstr(r->file), "line", r->line,
                   "direction", plc_search_jstr(r->maximize ? "maximize" : "minimize"),
                   "objective", plc_search_jstr(r->objective), "top", r->top,
                   "vary", vary, "entries", entries, "space", (json_int_t)r->space,
                   "shard", "index", r->shard_k, "count", r->shard_n,
                   "evaluated", (json_int_t)r->evaluated, "passed", (json_int_t)r->ranked,
                   "ranked", rows, "skipped", skip);
}

/* ---- reading shard outputs ------------------------------------------------------------ */

static char *plc_search_jget_str(json_t *o, const char *key)
{
  const char *s = json_string_value(json_object_get(o, key));
  return s ? plc_xstrdup(s) : NULL;
}

/* q = the exact value of a quantity object; 0 when it has none. */
static int plc_search_jget_q(json_t *o, const char *key, mpq_t q)
{
  const char *s = json_string_value(json_object_get(json_object_get(o, key), "exact"));
  if (!s || mpq_set_str(q, s, 10) != 0)
    return 0;
  mpq_canonicalize(q);
  return 1;
}

static int plc_search_jrow_read(plc_sresult *r, json_t *j, plc_srow **out)
{
  plc_srow *w = plc_srow_new(r->nvary);
  *out = w;
  json_t *vals = json_object_get(j, "values"), *dim = json_object_get(j, "objective_dim");
  w->index = (uint64_t)json_integer_value(json_object_get(j, "index"));
  if (json_array_size(vals) != (size_t)r->nvary || json_array_size(dim) != 3)
    return -1;
  for (int v = 0; v < r->nvary; v++) {
    w->text[v] = plc_search_jget_str(json_array_get(vals, (size_t)v), "value");
    w->plan[v] = plc_search_jget_str(json_array_get(vals, (size_t)v), "plan");
    if (!w->text[v] || !w->plan[v])
      return -1;
  }
  for (int k = 0; k < 3; k++)
    w->obj_dim[k] = (int)json_integer_value(json_array_get(dim, (size_t)k));
  if (!plc_search_jget_q(j, "objective", w->objective) ||
      !plc_search_jget_q(j, "step_time", w->step) ||
      !plc_search_jget_q(j, "tokens_per_s", w->tokens_per_s) ||
      !plc_search_jget_q(j, "bubble", w->bubble))
    return -1;
  w->mfu_known = plc_search_jget_q(j, "mfu", w->mfu);
  w->peak_known = plc_search_jget_q(j, "peak_memory", w->peak);
  json_t *exp = json_object_get(j, "exposed");
  for (int d = 0; d < PLC_PD_COUNT; d++)
    if (json_object_get(exp, plc_pdim_name(d)))
      plc_search_jget_q(exp, plc_pdim_name(d), w->exposed[d]);
  json_t *bn = json_object_get(j, "bottleneck");
  if (json_is_object(bn)) {
    w->bottleneck = plc_search_jget_str(bn, "part");
    plc_search_jget_q(bn, "share", w->share);
  }
  return 0;
}

/* One search object of a shard's output. */
static plc_sresult *plc_search_jread(json_t *j)
{
  plc_sresult *r = plc_xcalloc(1, sizeof *r);
  json_t *vary = json_object_get(j, "vary"), *rows = json_object_get(j, "ranked");
  json_t *skip = json_object_get(j, "skipped"), *shard = json_object_get(j, "shard");
  r->name = plc_search_jget_str(j, "name");
  r->train = plc_search_jget_str(j, "train");
  r->file = plc_search_jget_str(j, "file");
  r->objective = plc_search_jget_str(j, "objective");
  const char *dir = json_string_value(json_object_get(j, "direction"));
  r->maximize = dir && !strcmp(dir, "maximize");
  r->line = (int)json_integer_value(json_object_get(j, "line"));
  r->top = (int)json_integer_value(json_object_get(j, "top"));
  r->space = (uint64_t)json_integer_value(json_object_get(j, "space"));
  r->evaluated = (uint64_t)json_integer_value(json_object_get(j, "evaluated"));
  r->ranked = (uint64_t)json_integer_value(json_object_get(j, "passed"));
  r->shard_k = (int)json_integer_value(json_object_get(shard, "index"));
  r->shard_n = (int)json_integer_value(json_object_get(shard, "count"));
  r->nvary = (int)json_array_size(vary);
  json_t *entries = json_object_get(j, "entries");
  r->nentries = (int)json_array_size(entries);
  r->entry_names = plc_xcalloc((size_t)r->nentries + 1, sizeof *r->entry_names);
  r->entry_texts = plc_xcalloc((size_t)r->nentries + 1, sizeof *r->entry_texts);
  for (int i = 0; i < r->nentries; i++) {
    r->entry_names[i] = plc_search_jget_str(json_array_get(entries, (size_t)i), "field");
    r->entry_texts[i] = plc_search_jget_str(json_array_get(entries, (size_t)i), "plan");
  }
  r->vary = plc_xcalloc((size_t)r->nvary + 1, sizeof *r->vary);
  int bad = !r->name || !r->train || !r->file || !r->objective || r->top < 1 ||
            !json_is_array(rows) || !json_is_array(skip) || r->shard_n < 1;
  for (int i = 0; i < r->nvary && !bad; i++) {
    const char *v = json_string_value(json_array_get(vary, (size_t)i));
    bad = !v;
    r->vary[i] = v ? plc_xstrdup(v) : NULL;
  }
  for (size_t i = 0; !bad && i < json_array_size(rows); i++) {
    plc_srow *w = NULL;
    bad = plc_search_jrow_read(r, json_array_get(rows, i), &w) != 0;
    r->rows = plc_xrealloc(r->rows, (size_t)(r->nrows + 1) * sizeof *r->rows);
    r->rows[r->nrows++] = w;
  }
  for (size_t i = 0; !bad && i < json_array_size(skip); i++) {
    json_t *s = json_array_get(skip, i);
    const char *t = json_string_value(json_object_get(s, "reason"));
    bad = !t;
    if (t) {
      r->reasons = plc_xrealloc(r->reasons, (size_t)(r->nreasons + 1) * sizeof *r->reasons);
      r->reasons[r->nreasons].text = plc_xstrdup(t);
      r->reasons[r->nreasons++].count = (uint64_t)json_integer_value(json_object_get(s, "count"));
    }
  }
  if (bad) {
    plc_sresult_free(r);
    return NULL;
  }
  return r;
}

int plc_search_read_json(const char *path, plc_sresult ***out, char *err, size_t errlen)
{
  json_error_t e;
  json_t *root = json_load_file(path, 0, &e);
  *out = NULL;
  if (!root) {
    snprintf(err, errlen, "%s:%d: %s", path, e.line, e.text);
    return -1;
  }
  json_t *a = json_object_get(root, "searches");
  int n = 0;
  for (size_t i = 0; i < json_array_size(a); i++) {
    plc_sresult *r = plc_search_jread(json_array_get(a, i));
    if (!r) {
      snprintf(err, errlen, "%s: search %zu is not a search of plc --format=json", path, i + 1);
      for (int k = 0; k < n; k++)
        plc_sresult_free((*out)[k]);
      free(*out);
      *out = NULL;
      json_decref(root);
      return -1;
    }
    *out = plc_xrealloc(*out, (size_t)(n + 1) * sizeof **out);
    (*out)[n++] = r;
  }
  json_decref(root);
  if (!n)
    snprintf(err, errlen, "%s has no searches", path);
  return n ? n : -1;
}
