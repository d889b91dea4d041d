/* test_search.c - searches (cli/search.h) in process: the ranking of a
 * small space derived by hand (tests/golden/search-small.plan has the
 * derivation), every ranked row equal to the figures of its layout
 * compiled alone as a derived train, and threads, shards and merging that
 * give the single-threaded ranking row for row. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cu_main.h"
#include "plan_fixture.h"
#include "report.h"
#include "search.h"

/* The plan of tests/golden/search-small.plan, without its comments. */
#define BASE                                                                                  \
  "device gpu { peak = 100 TFLOP/s; memory = 40 GB }\n"                                       \
  "link nv { bw = 100 GB/s }\n"                                                               \
  "cluster c { device = gpu; tier node { size = 8; link = nv } }\n"                           \
  "model m { layers { dense = 8 } }\n"                                                        \
  "framework f {\n"                                                                           \
  "  template dense {\n"                                                                      \
  "    memory { weights = 8 GB / run.tp; activations = 1 GB * run.micro_batch / run.tp }\n"   \
  "    op mm: compute { flops = 2 TFLOP * run.micro_batch / run.tp; useful = true }\n"        \
  "  }\n"                                                                                     \
  "}\n"                                                                                       \
  "train t { model = m; cluster = c; framework = f; micro_batch = 1; global_batch = 16; "     \
  "seq = 1 }\n"

static const char plan_text[] = BASE
  "search s = t {\n"
  "  vary { tp = [1, 2, 4]; pp = [1, 2, 4]; micro_batch = [1, 2] }\n"
  "  dp = 8 / (tp * pp)\n"
  "  require = [peak_memory < 30 GB]\n"
  "  top = 5\n"
  "}\n";

/* One compilation of the plan from a file (a search compiles it again). */
typedef struct sfx {
  char path[64];
  plc_diag diag;
  plc_arena *arena;
  plc_program prog;
  plc_sema sema;
  plc_drive drive;
} sfx;

static int sfx_open_text(sfx *x, const char *text);

static int sfx_open(sfx *x) { return sfx_open_text(x, plan_text); }

static int sfx_open_text(sfx *x, const char *text)
{
  memset(x, 0, sizeof *x);
  snprintf(x->path, sizeof x->path, "/tmp/plc-test-search-XXXXXX");
  int fd = mkstemp(x->path);
  if (fd < 0)
    return -1;
  FILE *f = fdopen(fd, "w");
  fputs(text, f);
  fclose(f);
  plc_diag_init(&x->diag, stderr);
  x->arena = plc_arena_new();
  plc_program_init(&x->prog, x->arena, &x->diag);
  if (plc_load_main(&x->prog, x->path) != 0 || x->diag.errors)
    return -1;
  plc_sema_check(&x->sema, &x->prog, NULL, 0);
  if (x->diag.errors)
    return -1;
  plc_report_opts o = {.digits = 4};
  plc_drive_init(&x->drive, &x->sema, &x->prog, &o);
  return 0;
}

static void sfx_close(sfx *x)
{
  plc_drive_free(&x->drive);
  plc_program_free(&x->prog);
  plc_arena_free(x->arena);
  unlink(x->path);
}

static plc_sresult *sfx_search(sfx *x, int jobs, int k, int n)
{
  plc_search_opts o = {.jobs = jobs, .shard_k = k, .shard_n = n, .report = {.digits = 4}};
  plc_binding *b = plc_env_find_local(x->sema.ev.global, "s");
  return b ? plc_search_run(&x->drive, b->def, &o) : NULL;
}

/* Do two results rank the same rows with the same figures? */
static int same_rows(const plc_sresult *a, const plc_sresult *b)
{
  if (a->nrows != b->nrows || a->evaluated != b->evaluated || a->ranked != b->ranked ||
      a->nreasons != b->nreasons)
    return 0;
  for (int i = 0; i < a->nrows; i++) {
    const plc_srow *x = a->rows[i], *y = b->rows[i];
    if (x->index != y->index || !mpq_equal(x->step, y->step) || !mpq_equal(x->peak, y->peak) ||
        !mpq_equal(x->mfu, y->mfu) || !mpq_equal(x->objective, y->objective) ||
        !mpq_equal(x->bubble, y->bubble) || strcmp(x->text[0], y->text[0]))
      return 0;
  }
  for (int i = 0; i < a->nreasons; i++)
    if (strcmp(a->reasons[i].text, b->reasons[i].text) ||
        a->reasons[i].count != b->reasons[i].count)
      return 0;
  return 1;
}

/* The hand derivation of search-small.plan: indexes (tp, pp, mb in
 * enumeration order, mb fastest), steps, peaks, skip counts. */
static void test_ranking(void)
{
  sfx x;
  CU_ASSERT_EQUAL_FATAL(sfx_open(&x), 0);
  plc_sresult *r = sfx_search(&x, 1, 1, 1);
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  CU_ASSERT_EQUAL(r->space, 18);
  CU_ASSERT_EQUAL(r->evaluated, 18);
  CU_ASSERT_EQUAL(r->ranked, 9);
  CU_ASSERT_EQUAL_FATAL(r->nrows, 5);
  static const unsigned idx[] = {12, 13, 14, 15, 8};
  static const char *const step[] = {"24/25", "24/25", "51/50", "27/25", "27/25"};
  static const long peak_gb[] = {18, 20, 10, 12, 20};
  for (int i = 0; i < 5; i++) {
    CU_ASSERT_EQUAL(r->rows[i]->index, idx[i]);
    CU_ASSERT(plc_fx_qs(r->rows[i]->step, step[i]));
    CU_ASSERT(r->rows[i]->peak_known && plc_fx_q(r->rows[i]->peak, peak_gb[i] * 1000000000L, 1));
  }
  CU_ASSERT_EQUAL_FATAL(r->nreasons, 3);
  PLC_CU_STR_EQ(r->reasons[0].text, "require peak_memory < 30 GB is false");
  CU_ASSERT_EQUAL(r->reasons[0].count, 4);
  PLC_CU_STR_EQ(r->reasons[1].text, "does not fit in memory");
  CU_ASSERT_EQUAL(r->reasons[1].count, 3);
  CU_ASSERT_EQUAL(r->reasons[2].count, 2);
  plc_sresult_free(r);
  sfx_close(&x);
}

/* Each ranked row against its layout as a derived train, compiled alone. */
static void test_alone(void)
{
  sfx x;
  CU_ASSERT_EQUAL_FATAL(sfx_open(&x), 0);
  plc_sresult *r = sfx_search(&x, 1, 1, 1);
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  for (int i = 0; i < r->nrows; i++) {
    const plc_srow *w = r->rows[i];
    char text[2048];
    snprintf(text, sizeof text, "%strain x = t { tp = %s; pp = %s; micro_batch = %s; "
             "dp = 8 / (tp * pp) }\n", BASE, w->plan[0], w->plan[1], w->plan[2]);
    plc_fx f;
    CU_ASSERT_EQUAL_FATAL(plc_fx_load(&f, text), 0);
    plc_drive_run *run = plc_fx_train(&f, "x");
    CU_ASSERT_PTR_NOT_NULL_FATAL(run);
    plc_quantity q;
    plc_q_init(&q);
    CU_ASSERT(mpq_equal(run->res.step, w->step));
    CU_ASSERT(mpq_equal(run->res.bubble, w->bubble));
    CU_ASSERT(mpq_equal(run->res.tokens_per_s, w->tokens_per_s));
    CU_ASSERT(run->res.mfu_known && mpq_equal(run->res.mfu, w->mfu));
    CU_ASSERT(plc_report_figure(&run->res, "peak_memory", &q) == NULL && mpq_equal(q.v, w->peak));
    plc_q_clear(&q);
    plc_fx_free(&f);
  }
  plc_sresult_free(r);
  sfx_close(&x);
}

/* Threads and shards: the same rows, the same skip counts. */
static void test_split(void)
{
  sfx x;
  CU_ASSERT_EQUAL_FATAL(sfx_open(&x), 0);
  plc_sresult *one = sfx_search(&x, 1, 1, 1), *three = sfx_search(&x, 3, 1, 1);
  CU_ASSERT_PTR_NOT_NULL_FATAL(one);
  CU_ASSERT_PTR_NOT_NULL_FATAL(three);
  CU_ASSERT(same_rows(one, three));
  plc_sresult *m = sfx_search(&x, 2, 2, 4);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  CU_ASSERT_EQUAL(m->evaluated, 5); /* 1, 5, 9, 13, 17 */
  for (int k = 1; k <= 4; k++)
    if (k != 2)
      plc_sresult_merge(m, sfx_search(&x, 1, k, 4));
  plc_sresult_sort_reasons(m);
  CU_ASSERT(same_rows(one, m));
  plc_sresult_free(one);
  plc_sresult_free(three);
  plc_sresult_free(m);
  sfx_close(&x);
}

/* ---- the call memo against plain evaluation, on random searches ---------- */

static unsigned long cm_rng;

static unsigned cm_rand(unsigned n)
{
  cm_rng = cm_rng * 6364136223846793005UL + 1442695040888963407UL;
  return (unsigned)(cm_rng >> 33) % n;
}

/* A random dimensionless expression of the parameters a, b, the run r and
 * the model m of function g<fn> (fn < 0: in a template, of run, model and
 * layer), calling the functions before it. */
static void cm_expr(char *buf, size_t cap, int fn, int depth)
{
  size_t n = strlen(buf);
  unsigned k = cm_rand(depth > 2 ? 3 : 7);
  static const char *const rf[] = {"tp", "pp", "micro_batch", "dp"};
  const char *r = fn < 0 ? "run" : "r", *m = fn < 0 ? "model" : "m";
  if (k == 0)
    snprintf(buf + n, cap - n, "%u", cm_rand(5));
  else if (k == 1)
    snprintf(buf + n, cap - n, "%s", fn < 0 ? "layer.index" : cm_rand(2) ? "a" : "b");
  else if (k == 2 && cm_rand(3))
    snprintf(buf + n, cap - n, "%s.%s", r, rf[cm_rand(4)]);
  else if (k == 2)
    snprintf(buf + n, cap - n, "%s.h", m);
  else if (k == 3 || k == 4) {
    snprintf(buf + n, cap - n, "(");
    cm_expr(buf, cap, fn, depth + 1);
    n = strlen(buf);
    snprintf(buf + n, cap - n, " %s ", cm_rand(2) ? "+" : "*");
    cm_expr(buf, cap, fn, depth + 1);
    n = strlen(buf);
    snprintf(buf + n, cap - n, ")");
  } else if (k == 5 || fn == 0) {
    snprintf(buf + n, cap - n, "max(");
    cm_expr(buf, cap, fn, depth + 1);
    n = strlen(buf);
    snprintf(buf + n, cap - n, ", %s.tp > 1 ? 1 : ", r);
    cm_expr(buf, cap, fn, depth + 1);
    n = strlen(buf);
    snprintf(buf + n, cap - n, ")");
  } else {
    int g = fn < 0 ? (int)cm_rand(5) : (int)cm_rand((unsigned)fn);
    snprintf(buf + n, cap - n, "g%d(", g);
    cm_expr(buf, cap, fn, depth + 2);
    n = strlen(buf);
    snprintf(buf + n, cap - n, ", %u, %s, %s)", cm_rand(3), r, m);
  }
}

/* The call memo (eval.c) within and across a search's candidates ranks
 * the same rows with the same figures and skip counts as evaluating every
 * call, on one thread and on two: 40 random searches whose template's op
 * and memory figures come from five functions of random arguments,
 * parameters, run and model fields, calling one another. */
static void test_call_memo(void)
{
  long replays = 0;
  cm_rng = 99;
  for (int it = 0; it < 40; it++) {
    char text[16384], g[2048];
    int n = snprintf(text, sizeof text, "%s",
                     "device gpu { peak = 100 TFLOP/s; memory = 40 GB }\n"
                     "link nv { bw = 100 GB/s }\n"
                     "cluster c { device = gpu; tier node { size = 8; link = nv } }\n");
    for (int k = 0; k < 5; k++) {
      g[0] = '\0';
      cm_expr(g, sizeof g, k, 0);
      n += snprintf(text + n, sizeof text - (size_t)n, "let g%d(a, b, r, m) = %s\n", k, g);
    }
    n += snprintf(text + n, sizeof text - (size_t)n,
                  "model m { h = %u; layers { dense = 8 } }\nframework f {\n  template dense {\n",
                  1 + cm_rand(4));
    g[0] = '\0';
    cm_expr(g, sizeof g, -1, 0);
    n += snprintf(text + n, sizeof text - (size_t)n,
                  "    memory { weights = 1 GB * (1 + %s) / (1 + g4(1, 2, run, model)) }\n", g);
    g[0] = '\0';
    cm_expr(g, sizeof g, -1, 0);
    n += snprintf(text + n, sizeof text - (size_t)n,
                  "    op mm: compute { flops = 1 TFLOP * (1 + %s); useful = true }\n"
                  "    op ar: all_reduce(tp) { size = 1 GB * (1 + g3(layer.index, 1, run, model)) }\n"
                  "  }\n}\n"
                  "train t { model = m; cluster = c; framework = f; micro_batch = 1; "
                  "global_batch = 16; seq = 1 }\n"
                  "search s = t {\n  vary { tp = [1, 2, 4]; pp = [1, 2]; micro_batch = [1, 2] }\n"
                  "  dp = 8 / (tp * pp)\n  top = 12\n}\n", g);
    sfx x;
    CU_ASSERT_EQUAL_FATAL(sfx_open_text(&x, text), 0);
    for (int jobs = 1; jobs <= 2; jobs++) {
      long r0 = plc_cshare_replays;
      plc_sresult *on = sfx_search(&x, jobs, 1, 1);
      replays += plc_cshare_replays - r0;
      plc_eval_call_memo = 0;
      plc_sresult *off = sfx_search(&x, jobs, 1, 1);
      plc_eval_call_memo = 1;
      CU_ASSERT_PTR_NOT_NULL_FATAL(on);
      CU_ASSERT_PTR_NOT_NULL_FATAL(off);
      PLC_CU_ASSERT_MSG(same_rows(on, off), text);
      plc_sresult_free(on);
      plc_sresult_free(off);
    }
    sfx_close(&x);
  }
  CU_ASSERT(replays > 400); /* calls replayed across candidates */
}

int main(void)
{
  static const plc_cu_test tests[] = {
    {"ranking and skip counts derived by hand", test_ranking},
    {"every ranked row equals its layout alone", test_alone},
    {"threads and shards rank as one run", test_split},
    {"call memo against plain evaluation", test_call_memo},
    {NULL, NULL},
  };
  return plc_cu_run("search", tests);
}
