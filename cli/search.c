/* search.c - evaluating a search, candidate by candidate (see search.h).
 *
 * Threads: each candidate's compilation (arena, diagnostics, evaluator,
 * driver) is its own; what threads share is read only (the main
 * compilation's trees, sources and top-level names, this search's set-up).
 * The code on the way has no mutable static state: the non-const statics
 * of the tree are output.c's (-o FILE, main thread only) and
 * plc_eval_max_steps (set by tests, read here); GMP's allocator is set
 * before main() and jansson's by main() before any thread.  Only the
 * progress count is shared, atomically. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "search.h"
#include "lower.h"
#include "memory.h"
#include "report_parts.h"
#include "schema.h"
#include "sspec.h"
#include "xalloc.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The name of the candidate train in its compilation; messages say
 * "the candidate" instead. */
#define PLC_SEARCH_CANDIDATE "__plc_candidate"

/* What every thread reads and nobody writes while candidates run. */
typedef struct plc_search {
  const plc_program *prog;  /* the main compilation: its trees, import directories */
  plc_env *global;          /* ... and its top-level names (read only) */
  plc_env *names;           /* the same names, no value: each candidate copies them */
  plc_arena *names_arena;
  const plc_ast *decl;
  plc_sspec sp;
  const plc_ast ***elems;   /* per varied field: its candidates' expressions */
  int *nelems;
  char ***text, ***plan;    /* per varied field and candidate */
  const plc_search_opts *o;
  uint64_t space;
  uint64_t slice;           /* candidates this process evaluates */
  int top;                  /* rows kept */
  char *objective;          /* its source text */
  int cut;                  /* a candidate is cut once its step shows it cannot enter the
                               ranking (plc_search_cut): 1 minimizing step_time, 2
                               maximizing tokens_per_s, 0 never */
  atomic_uint_least64_t done;
  struct timespec start;
  /* The threads' bar (plc_search_bar): the best `top` objectives of the
   * rows ranked by any thread so far, best first; written under bar_lock. */
  pthread_mutex_t bar_lock;
  mpq_t *bar;
  int nbar;
} plc_search;

/* One thread's share: its candidates' ranking and skip counts. */
typedef struct plc_sworker {
  plc_search *S;
  uint64_t first, stride;
  int show_progress;
  plc_sresult *res;
  plc_lcache *cache;  /* instances its candidates lowered (lower.h) */
  struct plc_cshare *calls; /* calls its candidates evaluated (eval.h) */
  uint64_t cut;       /* candidates it cut before ranking (plc_search_cut) */
  uint64_t cut_failed; /* ... of them failing a requirement */
} plc_sworker;

static char *plc_search_expr_text(const plc_ast *e);

/* ---- rows and results ------------------------------------------------------ */

plc_srow *plc_srow_new(int nvary)
{
  plc_srow *w = plc_xcalloc(1, sizeof *w);
  w->text = plc_xcalloc((size_t)nvary, sizeof *w->text);
  w->plan = plc_xcalloc((size_t)nvary, sizeof *w->plan);
  mpq_init(w->objective);
  mpq_init(w->step);
  mpq_init(w->tokens_per_s);
  mpq_init(w->bubble);
  mpq_init(w->mfu);
  mpq_init(w->peak);
  mpq_init(w->share);
  for (int d = 0; d < PLC_PD_COUNT; d++)
    mpq_init(w->exposed[d]);
  return w;
}

void plc_srow_free(plc_srow *w, int nvary)
{
  if (!w)
    return;
  for (int i = 0; i < nvary; i++) {
    free(w->text[i]);
    free(w->plan[i]);
  }
  free(w->text);
  free(w->plan);
  mpq_clear(w->objective);
  mpq_clear(w->step);
  mpq_clear(w->tokens_per_s);
  mpq_clear(w->bubble);
  mpq_clear(w->mfu);
  mpq_clear(w->peak);
  mpq_clear(w->share);
  for (int d = 0; d < PLC_PD_COUNT; d++)
    mpq_clear(w->exposed[d]);
  free(w->bottleneck);
  free(w);
}

void plc_sresult_free(plc_sresult *r)
{
  if (!r)
    return;
  for (int i = 0; i < r->nrows; i++)
    plc_srow_free(r->rows[i], r->nvary);
  for (int i = 0; i < r->nreasons; i++)
    free(r->reasons[i].text);
  for (int i = 0; i < r->nvary; i++)
    free(r->vary[i]);
  free(r->vary);
  for (int i = 0; i < r->nentries; i++) {
    free(r->entry_names[i]);
    free(r->entry_texts[i]);
  }
  free(r->entry_names);
  free(r->entry_texts);
  free(r->rows);
  free(r->reasons);
  free(r->name);
  free(r->train);
  free(r->file);
  free(r->objective);
  free(r);
}

/* The ranking: objective (lower first, or higher with maximize), then peak
 * memory (lower first; known before unknown), then enumeration order. */
static int plc_srow_cmp(const plc_sresult *r, const plc_srow *a, const plc_srow *b)
{
  int c = mpq_cmp(a->objective, b->objective);
  if (c)
    return r->maximize ? -c : c;
  if (a->peak_known != b->peak_known)
    return a->peak_known ? -1 : 1;
  if (a->peak_known && (c = mpq_cmp(a->peak, b->peak)) != 0)
    return c;
  return a->index < b->index ? -1 : a->index > b->index;
}

/* Keep row w if it is among the best `top`; takes it. */
static void plc_sresult_offer(plc_sresult *r, plc_srow *w)
{
  int at = r->nrows;
  while (at > 0 && plc_srow_cmp(r, w, r->rows[at - 1]) < 0)
    at--;
  if (at >= r->top) {
    plc_srow_free(w, r->nvary);
    return;
  }
  if (r->nrows == r->top)
    plc_srow_free(r->rows[--r->nrows], r->nvary);
  else
    r->rows = plc_xrealloc(r->rows, (size_t)(r->nrows + 1) * sizeof *r->rows);
  memmove(r->rows + at + 1, r->rows + at, (size_t)(r->nrows - at) * sizeof *r->rows);
  r->rows[at] = w;
  r->nrows++;
}

static void plc_sresult_skip(plc_sresult *r, const char *why, uint64_t count)
{
  for (int i = 0; i < r->nreasons; i++)
    if (!strcmp(r->reasons[i].text, why)) {
      r->reasons[i].count += count;
      return;
    }
  r->reasons = plc_xrealloc(r->reasons, (size_t)(r->nreasons + 1) * sizeof *r->reasons);
  r->reasons[r->nreasons].text = plc_xstrdup(why);
  r->reasons[r->nreasons++].count = count;
}

void plc_sresult_merge(plc_sresult *dst, plc_sresult *src)
{
  dst->evaluated += src->evaluated;
  dst->ranked += src->ranked;
  for (int i = 0; i < src->nrows; i++) {
    plc_sresult_offer(dst, src->rows[i]);
    src->rows[i] = NULL;
  }
  src->nrows = 0;
  for (int i = 0; i < src->nreasons; i++)
    plc_sresult_skip(dst, src->reasons[i].text, src->reasons[i].count);
  plc_sresult_free(src);
}

static int plc_sreason_cmp(const void *x, const void *y)
{
  const plc_sreason *a = x, *b = y;
  if (a->count != b->count)
    return a->count > b->count ? -1 : 1;
  return strcmp(a->text, b->text);
}

void plc_sresult_sort_reasons(plc_sresult *r)
{
  if (r->nreasons > 1)
    qsort(r->reasons, (size_t)r->nreasons, sizeof *r->reasons, plc_sreason_cmp);
}

/* An empty result with the search's description. */
static plc_sresult *plc_sresult_new(const plc_search *S)
{
  plc_sresult *r = plc_xcalloc(1, sizeof *r);
  const plc_ast *decl = S->decl;
  r->name = plc_xstrdup(decl->name);
  r->train = plc_xstrdup(decl->a->name ? decl->a->name : "?");
  r->file = plc_xstrdup(decl->loc.src ? decl->loc.src->path : "?");
  r->line = decl->loc.first_line;
  r->maximize = S->sp.maximize;
  r->objective = plc_xstrdup(S->objective);
  r->top = S->top;
  r->nvary = S->sp.nvary;
  r->vary = plc_xcalloc((size_t)r->nvary, sizeof *r->vary);
  for (int i = 0; i < r->nvary; i++)
    r->vary[i] = plc_xstrdup(S->sp.vary[i]->name);
  const char **dflt; /* fields the entries read at their defaults: written out */
  int nd = plc_sspec_defaults(&S->sp, S->global, &dflt);
  r->nentries = nd + S->sp.nsets;
  r->entry_names = plc_xcalloc((size_t)r->nentries + 1, sizeof *r->entry_names);
  r->entry_texts = plc_xcalloc((size_t)r->nentries + 1, sizeof *r->entry_texts);
  for (int i = 0; i < r->nentries; i++) {
    const plc_ast *set = i < nd ? NULL : S->sp.sets[i - nd];
    r->entry_names[i] = plc_xstrdup(set ? set->name : dflt[i]);
    r->entry_texts[i] = set ? plc_search_expr_text(set->a)
                            : plc_xstrdup(plc_schema_field(PLC_DECL_TRAIN, dflt[i])->dflt);
  }
  free(dflt);
  r->space = S->space;
  r->shard_k = S->o->shard_k;
  r->shard_n = S->o->shard_n;
  return r;
}

/* ---- source text ----------------------------------------------------------- */

static void plc_search_span(const plc_ast *e, plc_loc *lo, plc_loc *hi)
{
  if (!e)
    return;
  if (e->loc.src == lo->src) {
    if (e->loc.first_line < lo->first_line ||
        (e->loc.first_line == lo->first_line && e->loc.first_column < lo->first_column))
      lo->first_line = e->loc.first_line, lo->first_column = e->loc.first_column;
    if (e->loc.last_line > hi->last_line ||
        (e->loc.last_line == hi->last_line && e->loc.last_column > hi->last_column))
      hi->last_line = e->loc.last_line, hi->last_column = e->loc.last_column;
  }
  plc_search_span(e->a, lo, hi);
  plc_search_span(e->b, lo, hi);
  plc_search_span(e->c, lo, hi);
  for (const plc_ast *x = e->list.head; x; x = x->next)
    plc_search_span(x, lo, hi);
}

/* Byte offset of a display column of a line (the text's end past it),
 * scanning from *at, the start of line *l (*l <= line), which are left at
 * the start of line: an expression's end is found from its start's line,
 * not from the text's start again. */
static size_t plc_search_offset(const plc_source *src, size_t *at, int *l, int line, int col)
{
  size_t i = *at;
  for (; *l < line && i < src->len; i++)
    if (src->text[i] == '\n')
      ++*l;
  *at = i;
  for (int c = 1; i < src->len && src->text[i] != '\n' && c < col; i++)
    c = plc_loc_advance(c, (unsigned char)src->text[i]);
  return i;
}

/* The source text of an expression: from its first node to its last, with
 * the brackets around a part that the tree does not record. */
static char *plc_search_expr_text(const plc_ast *e)
{
  plc_loc lo = e->loc, hi = e->loc;
  if (!e->loc.src)
    return plc_xstrdup("?");
  plc_search_span(e, &lo, &hi);
  const plc_source *src = e->loc.src;
  size_t at = 0;
  int l = 1;
  size_t a = plc_search_offset(src, &at, &l, lo.first_line, lo.first_column);
  if (hi.last_line < l) /* not after the start (the span's end is): from the top */
    at = 0, l = 1;
  size_t b = plc_search_offset(src, &at, &l, hi.last_line, hi.last_column);
  int depth = 0, low = 0;
  for (size_t i = a; i < b; i++) {
    depth += src->text[i] == '(' || src->text[i] == '[';
    depth -= src->text[i] == ')' || src->text[i] == ']';
    low = depth < low ? depth : low;
  }
  for (; low < 0 && a > 0; a--) /* a ')' closes a '(' before the first node */
    if (src->text[a - 1] == '(' || src->text[a - 1] == '[')
      low++, depth++;
  for (; depth > 0 && b < src->len; b++) /* ... and the other way round */
    if (src->text[b] == ')' || src->text[b] == ']')
      depth--;
  char *s = plc_xmalloc(b - a + 1);
  memcpy(s, src->text + a, b - a);
  s[b - a] = '\0';
  for (char *p = s; *p; p++) /* one line */
    if (*p == '\n' || *p == '\t')
      *p = ' ';
  return s;
}

/* ---- setting up ---------------------------------------------------------------- */

/* A candidate's value as shown in tables. */
static char *plc_search_show(plc_eval *ev, const plc_ast *e, const plc_report_opts *o)
{
  plc_value *v = plc_eval_expr(ev, e, ev->global);
  if (v->tag == PLC_V_STR)
    return plc_xstrdup(v->s);
  if (v->tag == PLC_V_BOOL && v->known)
    return plc_xstrdup(v->b ? "true" : "false");
  if (v->tag == PLC_V_NUM && v->known) {
    plc_quantity q;
    plc_q_init(&q);
    mpq_set(q.v, v->q);
    q.dim = v->dim;
    char *s = plc_q_format(&q, o->digits, o->exact);
    plc_q_clear(&q);
    return s;
  }
  return plc_search_expr_text(e);
}

static void plc_search_free_setup(plc_search *S)
{
  for (int i = 0; i < S->sp.nvary; i++) {
    for (int k = 0; S->text && k < S->nelems[i]; k++) {
      free(S->text[i][k]);
      free(S->plan[i][k]);
    }
    if (S->text) {
      free(S->text[i]);
      free(S->plan[i]);
    }
    free(S->elems[i]);
  }
  free(S->text);
  free(S->plan);
  free(S->elems);
  free(S->nelems);
  free(S->objective);
  plc_sspec_free(&S->sp);
  for (int i = 0; S->bar && i < S->top; i++)
    mpq_clear(S->bar[i]);
  free(S->bar);
  pthread_mutex_destroy(&S->bar_lock);
}

/* The results a requirement may read and still be decided when its
 * candidate is cut (plc_search_cut): plc_report_figure's that
 * plc_analyse_first sets (the step, its parts, the run's counts) and the
 * two plc_analyse_step_ratios adds. */
static const char *const plc_search_step_figures[] = {
  "step_time", "bubble", "t_f", "t_b", "dp_tail_time", "mu", "world", "tokens",
  "tokens_per_s", "mfu",
};

/* Does e read nothing but numbers, booleans and those results, through
 * operators?  (A result name is bound before any other: plc_search_name.)
 * Anything else (a field of the train, a call, another train's result)
 * could read what a cut run does not have, or evaluate a run. */
static int plc_search_step_only(const plc_ast *e)
{
  if (!e)
    return 1;
  switch (e->kind) {
  case PLC_AST_NUM:
  case PLC_AST_BOOL:
    return 1;
  case PLC_AST_NAME:
    for (size_t i = 0; i < sizeof plc_search_step_figures / sizeof *plc_search_step_figures; i++)
      if (!strcmp(e->name, plc_search_step_figures[i]))
        return 1;
    return 0;
  case PLC_AST_LIST:
    for (const plc_ast *x = e->list.head; x; x = x->next)
      if (!plc_search_step_only(x))
        return 0;
    return 1;
  case PLC_AST_UNARY:
  case PLC_AST_BINARY:
  case PLC_AST_COND:
    return plc_search_step_only(e->a) && plc_search_step_only(e->b) &&
           plc_search_step_only(e->c);
  default:
    return 0;
  }
}

/* Whether and how candidates are cut (plc_search_cut): when nothing but
 * the objective and requirements on the step's figures (above) are asked
 * of a candidate that runs, and the objective is the step time or follows
 * from it alone (tokens/s).  PLC_SEARCH_NO_CUT=1 turns it off (tests
 * compare both). */
static int plc_search_cut_kind(const plc_search *S)
{
  const char *no = getenv("PLC_SEARCH_NO_CUT");
  if ((no && *no && strcmp(no, "0")) ||
      (S->sp.require && !plc_search_step_only(S->sp.require->a)))
    return 0;
  const plc_ast *e = S->sp.objective ? S->sp.objective->a : NULL;
  if (!e)
    return 1;
  if (e->kind != PLC_AST_NAME)
    return 0;
  if (!S->sp.maximize && !strcmp(e->name, "step_time"))
    return 1;
  return S->sp.maximize && !strcmp(e->name, "tokens_per_s") ? 2 : 0;
}

/* The candidates of each varied field, their texts, and the size of the
 * space; 0, or -1 after an error. */
static int plc_search_setup(plc_search *S, plc_drive *d, const plc_ast *decl)
{
  plc_sspec_get(&S->sp, decl);
  int n = S->sp.nvary;
  S->elems = plc_xcalloc((size_t)n, sizeof *S->elems);
  S->nelems = plc_xcalloc((size_t)n, sizeof *S->nelems);
  S->text = plc_xcalloc((size_t)n, sizeof *S->text);
  S->plan = plc_xcalloc((size_t)n, sizeof *S->plan);
  S->space = 1;
  S->objective = S->sp.objective ? plc_search_expr_text(S->sp.objective->a)
                                 : plc_xstrdup("step_time");
  S->cut = plc_search_cut_kind(S);
  S->top = PLC_SSPEC_DEFAULT_TOP;
  if (S->sp.top) {
    plc_value *v = plc_eval_expr(&d->sema->ev, S->sp.top->a, d->sema->ev.global);
    if (v->tag == PLC_V_NUM && v->known)
      S->top = (int)mpz_get_si(mpq_numref(v->q));
  }
  for (int i = 0; i < n; i++) {
    const plc_ast *list = plc_sspec_candidates(d->sema->ev.global, S->sp.vary[i]);
    int k = list->list.count;
    S->nelems[i] = k;
    S->elems[i] = plc_xcalloc((size_t)k, sizeof **S->elems);
    S->text[i] = plc_xcalloc((size_t)k, sizeof **S->text);
    S->plan[i] = plc_xcalloc((size_t)k, sizeof **S->plan);
    int j = 0;
    for (const plc_ast *x = list->list.head; x; x = x->next, j++) {
      S->elems[i][j] = x;
      S->text[i][j] = plc_search_show(&d->sema->ev, x, &S->o->report);
      S->plan[i][j] = plc_search_expr_text(x);
    }
    if (S->space > UINT64_MAX / 2 / (uint64_t)k) {
      plc_error(d->prog->diag, &decl->loc, "search '%s' has too many candidates (more "
                "than 2^63)", decl->name);
      return -1;
    }
    S->space *= (uint64_t)k;
  }
  return 0;
}

/* ---- one candidate ------------------------------------------------------------- */

static int plc_search_digit(char c) { return c >= '0' && c <= '9'; }
static int plc_search_word(char c)
{
  return plc_search_digit(c) || c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* A skip reason: the message with numbers made generic (so "tp 8 x pp 4"
 * and "tp 4 x pp 8" count together) and the candidate named as such. */
static char *plc_search_reason(const char *msg)
{
  size_t n = strlen(msg);
  char *s = plc_xmalloc(n + 1), *p = s;
  const char *cand = "train '" PLC_SEARCH_CANDIDATE "'";
  for (size_t i = 0; i < n;) {
    if (!strncmp(msg + i, cand, strlen(cand))) {
      i += strlen(cand);
      memcpy(p, "the candidate", 13); /* shorter than what it replaces */
      p += 13;
    } else if (plc_search_digit(msg[i]) && (i == 0 || !plc_search_word(msg[i - 1]))) {
      size_t j = i; /* a number, not the digits of a word such as 1f1b */
      while (j < n && (plc_search_digit(msg[j]) ||
                       (msg[j] == '.' && j + 1 < n && plc_search_digit(msg[j + 1]))))
        j++;
      if (j < n && plc_search_word(msg[j])) {
        memcpy(p, msg + i, j - i);
        p += j - i;
      } else {
        *p++ = 'N';
      }
      i = j;
    } else {
      *p++ = msg[i++];
    }
  }
  *p = '\0';
  return s;
}

/* One candidate's compilation. */
typedef struct plc_scand {
  plc_diag diag;
  plc_arena *arena;
  plc_program prog;
  plc_sema sema;
  plc_drive drive;
  int driving;
  plc_drive_run *run;
  plc_obj *train;
  plc_sworker *wk;
  char *cut_why;  /* a cut candidate's failed requirement (plc_search_cut) */
} plc_scand;

/* The candidate train: BASE with the entries and this candidate's values. */
static plc_ast *plc_search_train(const plc_search *S, plc_scand *c, const int *pick)
{
  plc_arena *ar = c->arena;
  const plc_ast *decl = S->decl;
  plc_ast *file = plc_ast_new(ar, PLC_AST_FILE, &decl->loc);
  file->name = decl->loc.src ? decl->loc.src->path : "<search>";
  plc_ast *t = plc_ast_new(ar, PLC_AST_DECL, &decl->loc);
  t->op = PLC_DECL_TRAIN;
  t->name = PLC_SEARCH_CANDIDATE;
  t->a = decl->a;
  int nv = S->sp.nvary;
  for (int i = 0; i < nv + S->sp.nsets; i++) {
    const plc_ast *src = i < nv ? S->sp.vary[i] : S->sp.sets[i - nv];
    plc_ast *set = plc_ast_new(ar, PLC_AST_SET, &src->loc);
    set->name = src->name;
    set->a = (plc_ast *)(i < nv ? S->elems[i][pick[i]] : src->a);
    plc_ast_list_push(&t->list, set);
  }
  plc_sspec_add_defaults(&S->sp, S->global, ar, t);
  plc_ast_list_push(&file->list, t);
  c->prog.files = plc_xrealloc(c->prog.files, (c->prog.nfiles + 1) * sizeof *c->prog.files);
  c->prog.files[c->prog.nfiles++] = file;
  return t;
}

/* A candidate that passes but cannot enter the ranking (plc_search_cut). */
static const char plc_search_passed[] = "passes, not ranked";

/* Would a run whose step is res->step rank after the worker's last row
 * while the worker keeps `top` rows already?  Its objective is then
 * strictly worse than that row's, so no tie-break (peak memory, then
 * order) could place it higher.  A worker compares with its own rows: the
 * ranking of the threads' or of the shards' rows merged is the same. */
static int plc_search_worse(const plc_search *S, const plc_result *res, mpq_srcptr objective)
{
  if (S->cut == 1)
    return mpq_cmp(res->step, objective) > 0;
  if (mpq_sgn(res->step) <= 0)
    return 0;
  mpq_t tok; /* as plc_ratios: tokens per step over the step */
  mpq_init(tok);
  mpq_set_si(tok, (long)res->run->global_batch * res->run->seq, 1);
  plc_q_rat_div(tok, tok, res->step);
  int worse = mpq_cmp(tok, objective) < 0;
  mpq_clear(tok);
  return worse;
}

static int plc_search_behind(const plc_sworker *wk, const plc_result *res)
{
  plc_search *S = wk->S;
  const plc_sresult *r = wk->res;
  if (!S->cut || r->top <= 0)
    return 0;
  if (r->nrows == r->top && plc_search_worse(S, res, r->rows[r->nrows - 1]->objective))
    return 1;
  if (S->o->jobs <= 1)
    return 0;
  /* the other threads' rows count as well: `top` rows ranked anywhere with
   * a better objective keep it out of the merged ranking just the same */
  pthread_mutex_lock(&S->bar_lock);
  int behind = S->nbar == r->top && plc_search_worse(S, res, S->bar[S->nbar - 1]);
  pthread_mutex_unlock(&S->bar_lock);
  return behind;
}

/* A ranked row's objective onto the threads' bar (kept best first; only
 * the best `top` count). */
static void plc_search_bar(plc_search *S, mpq_srcptr objective, int top)
{
  if (!S->cut || S->o->jobs <= 1 || top <= 0)
    return;
  pthread_mutex_lock(&S->bar_lock);
  if (!S->bar) {
    S->bar = plc_xcalloc((size_t)top, sizeof *S->bar);
    for (int i = 0; i < top; i++)
      mpq_init(S->bar[i]);
  }
  int at = S->nbar; /* minimizing the step, a smaller objective is better */
  while (at > 0 && (S->cut == 1 ? mpq_cmp(objective, S->bar[at - 1]) < 0
                                : mpq_cmp(objective, S->bar[at - 1]) > 0))
    at--;
  if (at < top) {
    if (S->nbar < top)
      S->nbar++;
    for (int i = S->nbar - 1; i > at; i--)
      mpq_set(S->bar[i], S->bar[i - 1]);
    mpq_set(S->bar[at], objective);
  }
  pthread_mutex_unlock(&S->bar_lock);
}

static int plc_search_cut(void *ctx, plc_result *res);

/* Compile, lower and analyse the candidate; NULL when it went well, else
 * why not (the first error, or c->diag's), or plc_search_passed. */
static const char *plc_search_compile(const plc_search *S, plc_scand *c, const int *pick,
                                      plc_sworker *wk)
{
  plc_lcache *cache = wk->cache;
  plc_diag_init(&c->diag, stderr);
  c->diag.capture = 1;
  c->diag.max_errors = c->diag.max_warnings = 0;
  c->arena = plc_arena_new();
  plc_program_init(&c->prog, c->arena, &c->diag);
  /* the main compilation's syntax trees, read only: the -D overrides are
   * in them already (so they are not applied again), and nothing after
   * parsing writes to a tree */
  c->prog.files = plc_xmalloc((S->prog->nfiles + 1) * sizeof *c->prog.files);
  memcpy(c->prog.files, S->prog->files, S->prog->nfiles * sizeof *c->prog.files);
  c->prog.nfiles = S->prog->nfiles;
  for (size_t i = 0; i < S->prog->ndirs; i++)
    plc_program_add_dir(&c->prog, S->prog->dirs[i]);
  const plc_ast *t = plc_search_train(S, c, pick);
  plc_sema_check_file(&c->sema, &c->prog, c->prog.files[c->prog.nfiles - 1], S->names);
  if (c->diag.errors != (int)c->sema.nfailed_asserts)
    return NULL; /* c->diag.first_error says why */
  plc_drive_init(&c->drive, &c->sema, &c->prog, &S->o->report);
  c->driving = 1;
  c->drive.sensitivity = 0;
  c->drive.unfit_stops = 1; /* skipped anyway: no analysis for it */
  c->drive.warn_stops = 1; /* likewise */
  c->sema.ev.lower_cache = cache; /* the trees are shared: so are instances */
  c->sema.ev.cshare = wk->calls;  /* and calls */
  c->sema.ev.lower_share_times = 1; /* no sensitivity rows */
  c->drive.cut = S->cut ? plc_search_cut : NULL;
  c->drive.cut_ctx = c;
  c->wk = wk;
  free(c->diag.first_warning); /* the plan's own warnings are the main compilation's */
  c->diag.first_warning = NULL;
  c->run = plc_drive_train(&c->drive, t);
  if (!c->run && c->drive.cut_seen)
    return plc_search_passed;
  if (!c->run && c->drive.unfit_seen)
    return "does not fit in memory";
  if (!c->run && c->drive.warn_seen && c->diag.first_warning)
    return c->diag.first_warning; /* the layout lint rules are filters */
  if (!c->run)
    return c->diag.first_error ? NULL : "the candidate has errors";
  plc_binding *b = plc_env_find_local(c->sema.ev.global, PLC_SEARCH_CANDIDATE);
  plc_value *v = b ? plc_eval_binding(&c->sema.ev, b, &t->loc) : NULL;
  c->train = v && v->tag == PLC_V_OBJ ? v->obj : NULL;
  const plc_mem *m = c->run->res.mem;
  if (m && m->known && m->capacity_known && !m->fits)
    return "does not fit in memory";
  return c->diag.first_warning; /* the layout lint rules are filters */
}

/* A bare name of require or the objective: a result, else a field. */
static plc_value *plc_search_name(void *ctx, const char *name, const plc_loc *at)
{
  plc_scand *c = ctx;
  plc_eval *ev = &c->sema.ev;
  if (plc_schema_field(PLC_SCHEMA_RESULT, name)) {
    plc_quantity q;
    plc_q_init(&q);
    const char *why = plc_report_figure(&c->run->res, name, &q);
    plc_value *v = why ? plc_value_err(ev) : plc_value_num(ev, &q);
    if (why)
      plc_error(ev->diag, at, "the candidate has %s", why);
    plc_q_clear(&q);
    return v;
  }
  return c->train ? plc_eval_field(ev, c->train, name, at) : NULL;
}

static plc_value *plc_search_value_by(plc_scand *c, const plc_ast *e, plc_sspec_lookup *lookup,
                                      void *ctx)
{
  plc_eval *ev = &c->sema.ev;
  return plc_eval_expr(ev, e, plc_sspec_env(ev, ev->global, e, lookup, ctx));
}

static plc_value *plc_search_value(plc_scand *c, const plc_ast *e)
{
  return plc_search_value_by(c, e, plc_search_name, c);
}

/* The requirements, their bare names read through lookup: 0 when all
 * hold; 1 when one is false, *why then its text (malloc'd); -1 when one
 * has no value. */
static int plc_search_check(const plc_search *S, plc_scand *c, plc_sspec_lookup *lookup,
                            void *ctx, char **why)
{
  const plc_ast *e = S->sp.require ? S->sp.require->a : NULL;
  if (!e)
    return 0;
  int list = e->kind == PLC_AST_LIST;
  for (const plc_ast *x = list ? e->list.head : e; x; x = list ? x->next : NULL) {
    plc_value *v = plc_search_value_by(c, x, lookup, ctx);
    if (v->tag == PLC_V_BOOL && v->known && v->b)
      continue;
    if (v->tag != PLC_V_BOOL || !v->known)
      return -1;
    char *t = plc_search_expr_text(x);
    *why = plc_report_sprintf("require %s is false", t);
    free(t);
    return 1;
  }
  return 0;
}

/* The requirements; NULL when all hold, else why not (malloc'd); *own
 * is set when that is a requirement's own text (kept as written). */
static char *plc_search_require(const plc_search *S, plc_scand *c, int *own)
{
  char *why = NULL;
  int k = plc_search_check(S, c, plc_search_name, c, &why);
  if (k > 0)
    *own = 1;
  if (k >= 0)
    return why;
  return plc_xstrdup(c->diag.first_error ? c->diag.first_error : "a requirement has no value");
}

/* A cut run's figures (plc_search_step_figures) for its requirements. */
typedef struct plc_scut {
  plc_scand *c;
  const plc_result *res;
  int missing; /* a figure it does not have (mfu of pinned compute) */
} plc_scut;

static plc_value *plc_search_step_name(void *ctx, const char *name, const plc_loc *at)
{
  (void)at;
  plc_scut *k = ctx;
  plc_eval *ev = &k->c->sema.ev;
  plc_quantity q;
  plc_q_init(&q);
  plc_value *v = NULL;
  if (plc_report_figure(k->res, name, &q))
    k->missing = 1;
  else
    v = plc_value_num(ev, &q);
  plc_q_clear(&q);
  return v;
}

/* The drive's ranking cut (drive.h): 1 when the run cannot enter the
 * ranking (plc_search_behind), so that its other figures (the critical
 * stage simulated in full, its memory, its report parts) are never
 * computed and the same ranking comes out.  The candidate still counts
 * as it would: when the search has requirements (on the step's figures
 * alone, plc_search_cut_kind), they are decided here from the step and
 * its ratios, and one that is false is kept in c->cut_why.  One that
 * cannot be decided so (no mfu, an error: its diagnostics go to a scratch
 * sink) leaves the run uncut, to fail as it would. */
static int plc_search_cut(void *ctx, plc_result *res)
{
  plc_scand *c = ctx;
  const plc_search *S = c->wk->S;
  if (!plc_search_behind(c->wk, res))
    return 0;
  if (!S->sp.require)
    return 1;
  plc_analyse_step_ratios(res);
  plc_eval *ev = &c->sema.ev;
  plc_diag scratch, *keep = ev->diag;
  plc_diag_init(&scratch, stderr);
  scratch.capture = 1;
  scratch.max_errors = scratch.max_warnings = 0;
  ev->diag = &scratch;
  plc_scut k = {.c = c, .res = res};
  char *why = NULL;
  int held = plc_search_check(S, c, plc_search_step_name, &k, &why);
  ev->diag = keep;
  int decided = held >= 0 && !k.missing && scratch.errors == 0 && scratch.warnings == 0;
  free(scratch.first_error);
  free(scratch.first_warning);
  if (!decided) {
    free(why);
    return 0;
  }
  c->cut_why = why;
  return 1;
}

/* The row of a candidate that passed: its figures and values. */
static plc_srow *plc_search_row(const plc_search *S, plc_scand *c, uint64_t index,
                                const int *pick, const plc_value *obj)
{
  const plc_result *r = &c->run->res;
  plc_srow *w = plc_srow_new(S->sp.nvary);
  w->index = index;
  for (int i = 0; i < S->sp.nvary; i++) {
    w->text[i] = plc_xstrdup(S->text[i][pick[i]]);
    w->plan[i] = plc_xstrdup(S->plan[i][pick[i]]);
  }
  mpq_set(w->objective, obj->q);
  memcpy(w->obj_dim, obj->dim.e, sizeof w->obj_dim);
  mpq_set(w->step, r->step);
  mpq_set(w->tokens_per_s, r->tokens_per_s);
  mpq_set(w->bubble, r->bubble);
  w->mfu_known = r->mfu_known;
  if (r->mfu_known)
    mpq_set(w->mfu, r->mfu);
  plc_quantity q;
  plc_q_init(&q);
  w->peak_known = plc_report_figure(r, "peak_memory", &q) == NULL;
  if (w->peak_known)
    mpq_set(w->peak, q.v);
  plc_q_clear(&q);
  plc_report_part parts[PLC_REPORT_MAX_PARTS];
  int n = plc_report_parts(r, 0, parts);
  for (int i = 0; i < n; i++)
    if (parts[i].kind == PLC_PART_EXPOSED)
      mpq_set(w->exposed[parts[i].dim], parts[i].time);
  plc_report_parts_clear(parts, n);
  plc_report_part b;
  if (plc_report_bottleneck(r, &b)) {
    w->bottleneck = plc_xstrdup(plc_report_part_label(&b));
    mpq_set(w->share, b.share);
    plc_report_parts_clear(&b, 1);
  }
  return w;
}

static void plc_scand_free(plc_scand *c)
{
  if (c->driving)
    plc_drive_free(&c->drive);
  plc_program_free(&c->prog);
  plc_arena_free(c->arena);
  free(c->diag.first_error);
  free(c->diag.first_warning);
  free(c->cut_why);
}

/* Evaluate candidate `index` into the worker's result. */
static void plc_search_candidate(plc_sworker *wk, uint64_t index)
{
  const plc_search *S = wk->S;
  int pick[64];
  uint64_t rest = index;
  for (int i = S->sp.nvary - 1; i >= 0; i--) { /* the last entry varies fastest */
    pick[i] = (int)(rest % (uint64_t)S->nelems[i]);
    rest /= (uint64_t)S->nelems[i];
  }
  plc_scand c;
  memset(&c, 0, sizeof c);
  const char *why = plc_search_compile(S, &c, pick, wk);
  char *owned = NULL;
  int own = 0;
  if (why == plc_search_passed) {
    wk->res->evaluated++;
    wk->cut++;
    if (c.cut_why) { /* a requirement of the step's figures is false */
      plc_sresult_skip(wk->res, c.cut_why, 1);
      wk->cut_failed++;
    } else
      wk->res->ranked++;
    plc_scand_free(&c);
    return;
  }
  if (!why && !c.run)
    why = c.diag.first_error ? c.diag.first_error : "the candidate has errors";
  if (!why)
    why = owned = plc_search_require(S, &c, &own);
  plc_value *obj = NULL;
  if (!why) {
    obj = S->sp.objective ? plc_search_value(&c, S->sp.objective->a)
                          : plc_search_name(&c, "step_time", &S->decl->loc);
    if (obj->tag != PLC_V_NUM || !obj->known)
      why = c.diag.first_error ? c.diag.first_error : "the objective has no value";
  }
  wk->res->evaluated++;
  if (why) {
    char *g = own ? plc_xstrdup(why) : plc_search_reason(why);
    plc_sresult_skip(wk->res, g, 1);
    free(g);
  } else {
    wk->res->ranked++;
    plc_search_bar(wk->S, obj->q, wk->res->top);
    plc_sresult_offer(wk->res, plc_search_row(S, &c, index, pick, obj));
  }
  free(owned);
  plc_scand_free(&c);
}

/* ---- progress and threads ------------------------------------------------------ */

static long plc_search_ms_since(const struct timespec *t0)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (long)(t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/* "search best: 1200/4096 candidates, 85/s, 34 s left" on one line. */
static void plc_search_progress(plc_search *S, int last)
{
  uint64_t done = atomic_load(&S->done);
  long ms = plc_search_ms_since(&S->start);
  unsigned long long rate = ms > 0 ? (unsigned long long)(done * 1000 / (uint64_t)ms) : 0;
  unsigned long long left = done ? (unsigned long long)((S->slice - done) * (uint64_t)ms / done
                                                          / 1000) : 0;
  fprintf(stderr, "\rsearch %s: %llu/%llu candidates, %llu/s, %llu s left  %s",
          S->decl->name, (unsigned long long)done, (unsigned long long)S->slice, rate, left,
          last ? "\n" : "");
  fflush(stderr);
}

static void *plc_search_work(void *arg)
{
  plc_sworker *wk = arg;
  long shown = 0;
  for (uint64_t i = wk->first; i < wk->S->space; i += wk->stride) {
    plc_search_candidate(wk, i);
    atomic_fetch_add(&wk->S->done, 1);
    if (wk->show_progress && plc_search_ms_since(&wk->S->start) - shown >= 250) {
      shown = plc_search_ms_since(&wk->S->start);
      plc_search_progress(wk->S, 0);
    }
  }
  return NULL;
}

/* The candidates of this shard (i % n == k - 1) over the threads: thread t
 * takes the shard's j-th candidate when j % jobs == t. */
static plc_sresult *plc_search_threads(plc_search *S)
{
  const plc_search_opts *o = S->o;
  int jobs = o->jobs > 0 ? o->jobs : 1;
  uint64_t k = (uint64_t)o->shard_k - 1, n = (uint64_t)o->shard_n;
  S->slice = S->space > k ? (S->space - k + n - 1) / n : 0;
  if ((uint64_t)jobs > S->slice && S->slice > 0)
    jobs = (int)S->slice;
  plc_sworker *w = plc_xcalloc((size_t)jobs, sizeof *w);
  pthread_t *th = plc_xcalloc((size_t)jobs, sizeof *th);
  clock_gettime(CLOCK_MONOTONIC, &S->start);
  for (int t = 0; t < jobs; t++) {
    w[t].S = S;
    w[t].first = k + (uint64_t)t * n;
    w[t].stride = (uint64_t)jobs * n;
    w[t].show_progress = t == 0 && o->progress;
    w[t].res = plc_sresult_new(S);
    w[t].cache = plc_lcache_new("");
    w[t].calls = plc_cshare_new();
  }
  for (int t = 1; t < jobs; t++)
    if (pthread_create(&th[t], NULL, plc_search_work, &w[t]) != 0) {
      fprintf(stderr, "plc: error: cannot start a thread; going on with fewer\n");
      plc_search_work(&w[t]);
      th[t] = 0;
      w[t].stride = 0; /* joined already */
    }
  plc_search_work(&w[0]);
  plc_sresult *res = w[0].res;
  for (int t = 1; t < jobs; t++) {
    if (w[t].stride)
      pthread_join(th[t], NULL);
    plc_sresult_merge(res, w[t].res);
  }
  const char *st = getenv("PLC_LOWER_XCACHE_STATS");
  for (int t = 0; t < jobs; t++) {
    if (st && *st && strcmp(st, "0"))
      fprintf(stderr, "plc: search: %llu candidates cut before ranking, %llu of them failing a "
              "requirement\n", (unsigned long long)w[t].cut, (unsigned long long)w[t].cut_failed);
    plc_lcache_free(w[t].cache);
    plc_cshare_free(w[t].calls);
  }
  if (o->progress)
    plc_search_progress(S, 1);
  free(w);
  free(th);
  plc_sresult_sort_reasons(res);
  return res;
}

plc_sresult *plc_search_run(plc_drive *d, const plc_ast *decl, const plc_search_opts *o)
{
  plc_search S;
  memset(&S, 0, sizeof S);
  S.prog = d->prog;
  S.global = d->sema->ev.global;
  S.decl = decl;
  S.o = o;
  atomic_init(&S.done, 0);
  pthread_mutex_init(&S.bar_lock, NULL);
  if (plc_search_setup(&S, d, decl) != 0 || S.sp.nvary > 64) {
    if (S.sp.nvary > 64)
      plc_error(d->prog->diag, &decl->loc, "a search varies at most 64 fields");
    plc_search_free_setup(&S);
    return NULL;
  }
  S.names_arena = plc_arena_new();
  S.names = plc_sema_names(S.prog, S.names_arena);
  plc_sresult *r = plc_search_threads(&S);
  plc_arena_free(S.names_arena);
  plc_search_free_setup(&S);
  return r;
}
