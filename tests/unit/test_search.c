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

static int sfx_open(sfx *x)
{
  memset(x, 0, sizeof *x);
  snprintf(x->path, sizeof x->path, "/tmp/plc-test-search-XXXXXX");
  int fd = mkstemp(x->path);
  if (fd < 0)
    return -1;
  FILE *f = fdopen(fd, "w");
  fputs(plan_text, f);
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

int main(void)
{
  static const plc_cu_test tests[] = {
    {"ranking and skip counts derived by hand", test_ranking},
    {"every ranked row equals its layout alone", test_alone},
    {"threads and shards rank as one run", test_split},
    {NULL, NULL},
  };
  return plc_cu_run("search", tests);
}
