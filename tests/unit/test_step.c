/* test_step.c - the whole step as one simulation (runtime/engine/step.c),
 * on small plans written in the plan language with pinned op times, so
 * every value below is derived by hand in its comment. */
#include <stdlib.h>
#include <string.h>

#include "drive.h"
#include "load.h"
#include "sema.h"
#include "step.h"
#include "cu_main.h"

/* A whole compilation of one plan text, and its first train lowered. */
typedef struct compiled {
  FILE *sink;
  plc_diag diag;
  plc_arena *arena;
  plc_program prog;
  plc_sema sema;
  plc_drive drive;
  plc_drive_run *run;
} compiled;

static int compile(compiled *c, const char *text)
{
  memset(c, 0, sizeof *c);
  c->sink = fopen("/dev/null", "w");
  plc_diag_init(&c->diag, c->sink);
  c->arena = plc_arena_new();
  plc_program_init(&c->prog, c->arena, &c->diag);
  c->prog.no_files = 1;
  plc_ast *file = plc_load_text(&c->prog, "step.plan", text, strlen(text));
  if (c->diag.errors || !file) return 0;
  plc_sema_check(&c->sema, &c->prog, NULL, 0);
  if (c->diag.errors) return 0;
  plc_report_opts opts = {.digits = 4};
  plc_drive_init(&c->drive, &c->sema, &c->prog, &opts);
  const plc_ast **decls;
  int n = plc_drive_select(&c->drive, &file, 1, &decls);
  c->run = n > 0 ? plc_drive_train(&c->drive, decls[0]) : NULL;
  free(decls);
  return c->run != NULL && c->run->ir != NULL;
}

static void release(compiled *c)
{
  if (c->run) plc_drive_free(&c->drive);
  plc_program_free(&c->prog);
  plc_arena_free(c->arena);
  fclose(c->sink);
}

/* ms as an exact rational */
static int is_ms(mpq_srcptr q, long num, unsigned long den)
{
  mpq_t w;
  mpq_init(w);
  mpq_set_si(w, num, den * 1000);
  mpq_canonicalize(w);
  int eq = mpq_equal(q, w);
  mpq_clear(w);
  return eq;
}

/* Every stage's compute stream adds up to the step exactly. */
static int adds_up(const plc_step *st)
{
  mpq_t sum;
  mpq_init(sum);
  int ok = 1;
  for (int s = 0; s < st->nstages; s++) {
    const plc_step_stage *ss = &st->stages[s];
    mpq_add(sum, ss->fill, ss->compute);
    for (int d = 0; d < PLC_PD_COUNT; d++) mpq_add(sum, sum, ss->exposed[d]);
    mpq_add(sum, sum, ss->stall_other);
    mpq_add(sum, sum, ss->wait_stage);
    mpq_add(sum, sum, ss->drain);
    ok &= mpq_equal(sum, st->makespan);
  }
  mpq_clear(sum);
  return ok;
}

#define HW \
  "device D { peak = 1000 TFLOPS; efficiency = 100%; memory = 80 GB; mem_bw = 1 TB/s }\n" \
  "link L { bw = 1 GB/s; latency = 0 s }\n"                                              \
  "cluster C { device = D; tier node { size = 4; link = L } }\n"

/* Four stages of one layer each: forward 1 ms, backward 2 ms, no p2p
 * cost; 8 microbatches.  The schedules' closed forms hold exactly here:
 *   1f1b, gpipe: mu (t_f + t_b) + (p - 1)(t_f + t_b) = 8 x 3 + 3 x 3 = 33 ms.
 * Stage 0 computes 24 ms from 0 and waits the other 9 ms for the
 * backwards coming back from the later stages: fill 0, drain 0. */
static const char *uniform_plan =
  "%s" /* HW */
  "model M { layers { dense = 4 } }\n"
  "framework F {\n"
  "  template dense {\n"
  "    forward { op f: compute { time = 1 ms } }\n"
  "    backward { op b: compute { time = 2 ms } }\n"
  "  }\n"
  "}\n"
  "train t { model = M; cluster = C; framework = F; tp = 1; pp = 4; dp = 1\n"
  "  micro_batch = 1; global_batch = 8; seq = 16; recompute = none; schedule = \"%s\" }\n";

static void run_uniform(const char *schedule, long want_ms)
{
  char text[2048];
  snprintf(text, sizeof text, uniform_plan, HW, schedule);
  compiled c;
  CU_ASSERT_FATAL(compile(&c, text));
  plc_step st;
  char msg[256] = "";
  plc_step_opts o = {.share = 1};
  CU_ASSERT(plc_step_run(&st, c.run->ir, &o, msg, sizeof msg));
  PLC_CU_STR_EQ(msg, "");
  PLC_CU_ASSERT_MSG(is_ms(st.makespan, want_ms, 1), schedule);
  CU_ASSERT(is_ms(st.stages[0].compute, 24, 1));
  CU_ASSERT(is_ms(st.stages[0].fill, 0, 1));
  CU_ASSERT(adds_up(&st));
  plc_step_free(&st);
  release(&c);
}

static void test_uniform_1f1b(void) { run_uniform("1f1b", 33); }
static void test_uniform_gpipe(void) { run_uniform("gpipe", 33); }

/* The same with the backward split: input gradient 1 ms, weight gradient
 * 1 ms (marked wgrad), so t_b = 2 ms and t_w = 1 ms.  ZB-H1's closed form:
 * mu (t_f + t_b) + (p - 1)(t_f + t_b - 2 t_w) = 24 + 3 x 1 = 27 ms. */
static void test_zb_h1(void)
{
  const char *text =
    HW
    "model M { layers { dense = 4 } }\n"
    "framework F {\n"
    "  template dense {\n"
    "    forward { op f: compute { time = 1 ms } }\n"
    "    backward {\n"
    "      op b: compute { time = 1 ms }\n"
    "      op w: compute { time = 1 ms; wgrad = true; after = [b] }\n"
    "    }\n"
    "  }\n"
    "}\n"
    "train t { model = M; cluster = C; framework = F; tp = 1; pp = 4; dp = 1\n"
    "  micro_batch = 1; global_batch = 8; seq = 16; recompute = none; schedule = \"zb_h1\" }\n";
  compiled c;
  CU_ASSERT_FATAL(compile(&c, text));
  plc_step st;
  char msg[256] = "";
  plc_step_opts o = {.share = 1};
  CU_ASSERT(plc_step_run(&st, c.run->ir, &o, msg, sizeof msg));
  PLC_CU_STR_EQ(msg, "");
  CU_ASSERT(is_ms(st.makespan, 27, 1));
  CU_ASSERT(adds_up(&st));
  plc_step_free(&st);
  release(&c);
}

/* One stage, dp = 4 on a 1 GB/s link: two all-gathers of a 4 MB buffer on
 * two streams, each (4-1)/4 x 4 MB / 1 GB/s = 3 ms alone, and 4 ms of
 * compute; then 1 ms that needs all three, and a 1 ms backward.
 * Dedicated links: the gathers end at 3, the compute at 4, the consumer
 * runs 4..5 and the backward 5..6: 6 ms, nothing exposed.
 * Shared link: both gathers progress at half speed and end at 6; the
 * consumer waits 6 - 4 = 2 ms, charged to dp, and the step is 8 ms. */
static void test_link_sharing(void)
{
  const char *text =
    HW
    "model M { layers { dense = 1 } }\n"
    "framework F {\n"
    "  template dense {\n"
    "    forward {\n"
    "      op c: compute { time = 4 ms }\n"
    "      op ag1: all_gather(dp) { size = 4 MB; stream = s1 }\n"
    "      op ag2: all_gather(dp) { size = 4 MB; stream = s2 }\n"
    "      op d: compute { time = 1 ms; after = [c, ag1, ag2] }\n"
    "    }\n"
    "    backward { op bb: compute { time = 1 ms } }\n"
    "  }\n"
    "}\n"
    "train t { model = M; cluster = C; framework = F; tp = 1; pp = 1; dp = 4\n"
    "  micro_batch = 1; global_batch = 4; seq = 16; recompute = none; schedule = \"1f1b\" }\n";
  compiled c;
  CU_ASSERT_FATAL(compile(&c, text));
  for (int share = 0; share <= 1; share++) {
    plc_step st;
    char msg[256] = "";
    plc_step_opts o = {.share = share};
    CU_ASSERT(plc_step_run(&st, c.run->ir, &o, msg, sizeof msg));
    CU_ASSERT(is_ms(st.makespan, share ? 8 : 6, 1));
    CU_ASSERT(is_ms(st.stages[0].exposed[PLC_PD_DP], share ? 2 : 0, 1));
    CU_ASSERT(is_ms(st.stages[0].compute, 6, 1));
    CU_ASSERT(adds_up(&st));
    plc_step_free(&st);
  }
  release(&c);
}

/* A schedule whose placement needs per-chunk lists is refused with a
 * reason, not simulated wrongly. */
static void test_refuses_interleaved(void)
{
  char text[2048];
  snprintf(text, sizeof text, uniform_plan, HW, "interleaved");
  char *vpp = strstr(text, "pp = 4");
  CU_ASSERT_FATAL(vpp != NULL);
  memcpy(vpp, "pp = 2", 6);
  strcpy(strstr(text, "dp = 1"), "dp = 1; vpp = 2\n  micro_batch = 1; global_batch = 8; "
                                 "seq = 16; recompute = none; schedule = \"interleaved\" }\n");
  compiled c;
  CU_ASSERT_FATAL(compile(&c, text));
  plc_step st;
  char msg[256] = "";
  plc_step_opts o = {.share = 1};
  CU_ASSERT(!plc_step_run(&st, c.run->ir, &o, msg, sizeof msg));
  CU_ASSERT(strstr(msg, "per-chunk") != NULL);
  plc_step_free(&st);
  release(&c);
}

/* ---- properties over random plans ---------------------------------------- */

static unsigned long rng = 2026;
static unsigned rnd(unsigned m)
{
  rng = rng * 6364136223846793005UL + 1442695040888963407UL;
  return (unsigned)((rng >> 33) % m);
}

/* A random plan: pp stages of one or two layers, a forward of compute and
 * a gather on a side stream, a backward with a weight-gradient op and a
 * reduce-scatter, pipeline sends; op times t[] in ms, transfer sizes in
 * MB.  With `half`, every transfer is half as large: the same plan on a
 * link twice as fast. */
static void random_plan(char *text, size_t len, int pp, int layers, int mb, const char *sched,
                        const int *t, int half)
{
  const char *u = "1 ms";
  snprintf(text, len,
    "%s" /* HW */
    "model M { layers { dense = %d } }\n"
    "framework F {\n"
    "  template dense {\n"
    "    forward {\n"
    "      op a: compute { time = %d * %s }\n"
    "      op g: all_gather(dp) { size = %d MB; stream = s1 }\n"
    "      op c: compute { time = %d * %s; after = [a, g] }\n"
    "    }\n"
    "    backward {\n"
    "      op b: compute { time = %d * %s }\n"
    "      op w: compute { time = %d * %s; wgrad = true; after = [b] }\n"
    "      op r: reduce_scatter(dp) { size = %d MB; stream = s2; after = [w] }\n"
    "    }\n"
    "  }\n"
    "  template pipeline {\n"
    "    forward { op send: p2p(pp) { size = %d MB; stream = s3 } }\n"
    "    backward { op sendb: p2p(pp) { size = %d MB; stream = s3 } }\n"
    "  }\n"
    "}\n"
    "train t { model = M; cluster = C; framework = F; tp = 1; pp = %d; dp = %d\n"
    "  micro_batch = 1; global_batch = %d; seq = 16; recompute = none; schedule = \"%s\" }\n",
    HW, layers * pp, t[0], u, t[1] * (half ? 1 : 2), t[2], u, t[3], u, t[4], u,
    t[5] * (half ? 1 : 2), t[6] * (half ? 1 : 2), t[6] * (half ? 1 : 2), pp, 4 / pp,
    mb * (4 / pp), sched);
}

/* Over random plans, links shared and not: every stage's parts add up to
 * the step; no stage's compute exceeds the step (busy <= 100%); and with
 * dedicated links, a link twice as fast never makes the step longer (with
 * sharing a faster link can slow a step: see plc(5) and test_flow). */
static void test_random_plans(void)
{
  static const char *scheds[] = {"gpipe", "1f1b", "zb_h1"};
  int bad_sum = 0, bad_busy = 0, bad_mono = 0, ran = 0;
  for (int round = 0; round < 40; round++) {
    int pp = 1 << rnd(3), layers = 1 + (int)rnd(2), mb = pp + (int)rnd(4);
    const char *sched = scheds[rnd(3)];
    int t[7];
    for (int k = 0; k < 7; k++) t[k] = 1 + (int)rnd(6);
    char text[4096];
    mpq_t full;
    mpq_init(full);
    for (int half = 0; half <= 1; half++) {
      random_plan(text, sizeof text, pp, layers, mb, sched, t, half);
      compiled c;
      if (!compile(&c, text)) {
        release(&c);
        continue;
      }
      for (int share = 0; share <= 1; share++) {
        plc_step st;
        char msg[256];
        plc_step_opts o = {.share = share};
        if (plc_step_run(&st, c.run->ir, &o, msg, sizeof msg)) {
          ran++;
          bad_sum += !adds_up(&st);
          for (int s = 0; s < st.nstages; s++)
            bad_busy += mpq_cmp(st.stages[s].compute, st.makespan) > 0;
          if (!share && !half) mpq_set(full, st.makespan);
          if (!share && half) bad_mono += mpq_cmp(st.makespan, full) > 0;
        }
        plc_step_free(&st);
      }
      release(&c);
    }
    mpq_clear(full);
  }
  CU_ASSERT(ran >= 100);
  CU_ASSERT_EQUAL(bad_sum, 0);
  CU_ASSERT_EQUAL(bad_busy, 0);
  CU_ASSERT_EQUAL(bad_mono, 0);
}

int main(void)
{
  static const plc_cu_test tests[] = {
    {"uniform stages, 1f1b: the closed form", test_uniform_1f1b},
    {"uniform stages, gpipe: the closed form", test_uniform_gpipe},
    {"zb_h1 with a split backward: the closed form", test_zb_h1},
    {"two gathers share a link", test_link_sharing},
    {"interleaved is refused until chunks are lowered", test_refuses_interleaved},
    {"properties over random plans", test_random_plans},
    {NULL, NULL},
  };
  return plc_cu_run("step", tests);
}
