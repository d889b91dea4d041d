/* test_step.c - the whole step as one simulation (runtime/engine/step.c),
 * on small plans written in the plan language with pinned op times, so
 * every value below is derived by hand in its comment. */
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "drive.h"
#include "load.h"
#include "sema.h"
#include "schedule.h"
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

/* Run c's whole step, links shared or not: it must run. */
static void run_ok(const compiled *c, int share, plc_step *st)
{
  char msg[256] = "";
  plc_step_opts o = {.share = share};
  CU_ASSERT(plc_step_run(st, c->run->ir, &o, msg, sizeof msg));
  PLC_CU_STR_EQ(msg, "");
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
  run_ok(&c, 1, &st);
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
  run_ok(&c, 1, &st);
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

/* ---- interleaved and DualPipe: per-chunk blocks ------------------------------- */

/* Makespan minus the critical stage's compute: the simulated bubble. */
static void bubble_of(const plc_step *st, mpq_t out)
{
  mpq_sub(out, st->makespan, st->stages[st->critical].compute);
}

/* Uniform stages for interleaved: p x v chunks of L layers, each layer
 * forward 1 ms and backward 2 ms; with `sends`, the pipeline template sends
 * at every chunk boundary (chunk c of stage s to stage s+1's chunk c, the
 * last stage's chunk c to stage 0's chunk c+1), 1 ms on stream pp_comm. */
static void interleaved_plan(char *text, size_t len, int p, int v, int L, int mu, int sends)
{
  snprintf(text, len,
    "%s" /* HW */
    "model M { layers { dense = %d } }\n"
    "framework F {\n"
    "  template dense {\n"
    "    forward { op f: compute { time = 1 ms } }\n"
    "    backward { op b: compute { time = 2 ms } }\n"
    "  }\n"
    "%s"
    "}\n"
    "train t { model = M; cluster = C; framework = F; tp = 1; pp = %d; dp = 1; vpp = %d\n"
    "  micro_batch = 1; global_batch = %d; seq = 16; recompute = none; "
    "schedule = \"interleaved\" }\n",
    HW, p * v * L,
    sends ? "  template pipeline {\n"
            "    let v = run.schedule == \"dualpipev\"\n"
    "    forward { for c in 0 .. run.vpp { if v ? (c == 0 ? layer.stage < run.pp - 1 : "
    "layer.stage > 0) : layer.stage + c * run.pp < run.pp * run.vpp - 1 {\n"
            "      op send_act[c]: p2p(pp) { time = 1 ms; stream = pp_comm; chunk = c } } } }\n"
            "    backward { for c in 0 .. run.vpp { if v ? (c == 0 ? layer.stage > 0 : "
    "layer.stage < run.pp - 1) : layer.stage + c * run.pp > 0 {\n"
            "      op send_grad[c]: p2p(pp) { time = 1 ms; stream = pp_comm; chunk = c } } } }\n"
            "  }\n" : "",
    p, v, mu);
}

/* Interleaved, uniform stages, no p2p time: the bubble is Megatron's
 * closed form (p - 1)(t_f + t_b)/v exactly, where a stage's t_f = v L x
 * 1 ms and t_b = v L x 2 ms, so (p - 1) L x 3 ms; every stage computes
 * mu (t_f + t_b) = 3 mu v L ms.  E.g. p 2, v 2, L 1, mu 4: bubble 3 ms,
 * step 24 + 3 = 27 ms.  Over (p, v, L, mu) meeting Megatron's
 * preconditions (mu a multiple of p). */
static void test_interleaved_closed_form(void)
{
  static const int grid[][4] = {{2, 2, 1, 2}, {2, 2, 1, 4}, {2, 3, 1, 6}, {3, 2, 1, 6},
                                {4, 2, 1, 8}, {4, 3, 2, 4}, {2, 4, 2, 8}, {4, 2, 1, 12}};
  for (size_t k = 0; k < sizeof grid / sizeof grid[0]; k++) {
    int p = grid[k][0], v = grid[k][1], L = grid[k][2], mu = grid[k][3];
    char text[4096], name[64];
    snprintf(name, sizeof name, "interleaved p %d v %d L %d mu %d", p, v, L, mu);
    interleaved_plan(text, sizeof text, p, v, L, mu, 0);
    compiled c;
    CU_ASSERT_FATAL(compile(&c, text));
    plc_step st;
    run_ok(&c, 1, &st);
    mpq_t bub;
    mpq_init(bub);
    bubble_of(&st, bub);
    PLC_CU_ASSERT_MSG(is_ms(bub, (long)(p - 1) * L * 3, 1), name);
    PLC_CU_ASSERT_MSG(is_ms(st.stages[st.critical].compute, 3L * mu * v * L, 1), name);
    CU_ASSERT(adds_up(&st));
    mpq_clear(bub);
    plc_step_free(&st);
    release(&c);
  }
}

/* The block-level simulator (schedule.c) on the same schedule with each
 * chunk block F = L ms, B = 2L ms and a p2p latency of `p2p` ms on every
 * dependency between stages; returns its makespan in out. */
static void block_makespan(plc_sched_kind kind, int p, int v, int mu, long f, long bb, long w,
                           long p2p, mpq_t out)
{
  plc_sched_params par = {.p = p, .v = v, .mu = mu};
  plc_sched s;
  CU_ASSERT_FATAL(plc_sched_generate(kind, &par, &s) == NULL);
  plc_sched_times *t = calloc((size_t)p, sizeof *t);
  plc_sched_times_init(t, p);
  for (int i = 0; i < p; i++) {
    mpq_set_si(t[i].f, f, 1000);
    mpq_set_si(t[i].b, bb, 1000);
    mpq_set_si(t[i].w, w, 1000);
    mpq_add(t[i].fb, t[i].f, t[i].b);
    mpq_set_si(t[i].p2p, p2p, 1000);
  }
  plc_sched_sim sim;
  plc_sched_sim_init(&sim);
  char msg[160];
  CU_ASSERT(plc_sched_simulate(&s, t, &sim, msg, sizeof msg));
  mpq_set(out, sim.makespan);
  plc_sched_sim_clear(&sim);
  plc_sched_times_clear(t, p);
  free(t);
  plc_sched_free(&s);
}

/* With the pipeline template's per-chunk sends of 1 ms on their own stream
 * (dedicated links), each chunk's F or B waits for the send of the chunk
 * before it, which is what the block simulator's p2p latency of 1 ms on
 * every dependency between stages says: the makespans agree exactly (no
 * two sends of a stage queue, as every block is at least as long as a
 * send).  The hand case p 2, v 2, L 1, mu 2 is 21 ms (derived in
 * tests/golden/step-interleaved.plan); without the sends it is 15 ms. */
static void test_interleaved_sends(void)
{
  static const int grid[][4] = {{2, 2, 1, 2}, {2, 2, 1, 4}, {3, 2, 1, 6}, {4, 2, 1, 8},
                                {2, 3, 2, 4}, {4, 3, 1, 4}};
  for (size_t k = 0; k < sizeof grid / sizeof grid[0]; k++) {
    int p = grid[k][0], v = grid[k][1], L = grid[k][2], mu = grid[k][3];
    char text[4096], name[64];
    snprintf(name, sizeof name, "interleaved sends p %d v %d L %d mu %d", p, v, L, mu);
    interleaved_plan(text, sizeof text, p, v, L, mu, 1);
    compiled c;
    CU_ASSERT_FATAL(compile(&c, text));
    plc_step st;
    run_ok(&c, 0, &st);
    mpq_t want;
    mpq_init(want);
    block_makespan(PLC_SCHED_INTERLEAVED, p, v, mu, L, 2L * L, 0, 1, want);
    PLC_CU_ASSERT_MSG(mpq_equal(st.makespan, want), name);
    if (p == 2 && v == 2 && L == 1 && mu == 2)
      CU_ASSERT(is_ms(st.makespan, 21, 1));
    CU_ASSERT(adds_up(&st));
    mpq_clear(want);
    plc_step_free(&st);
    release(&c);
  }
}

/* Uniform stages for DualPipe: p stages of one layer each, forward 1 ms,
 * input gradient 1 ms, weight gradient 1 ms (wgrad), so t_f = 1, t_b = 2,
 * t_w = 1 ms: the setting of DualPipe's figure, where the closed form
 * (p/2 - 1)(t_F&B + t_b - 3 t_w) holds with t_F&B = t_f + t_b = 3 ms (an
 * F&B block of compute only cannot overlap on one compute stream):
 * (p/2 - 1) x 2 ms.  Every device runs mu forwards and mu backwards of its
 * two chunks (mu/2 microbatches each way), mu x 3 ms of compute.  E.g.
 * p 4, mu 8: 24 + 2 = 26 ms. */
static void test_dualpipe_closed_form(void)
{
  static const int grid[][2] = {{2, 4}, {2, 6}, {4, 8}, {4, 12}, {6, 12}, {8, 16}, {8, 20}};
  for (size_t k = 0; k < sizeof grid / sizeof grid[0]; k++) {
    int p = grid[k][0], mu = grid[k][1];
    char text[4096], name[64];
    snprintf(name, sizeof name, "dualpipe p %d mu %d", p, mu);
    snprintf(text, sizeof text,
      "%s" /* HW, and eight devices for p up to 8 */
      "cluster C8 { device = D; tier node { size = 8; link = L } }\n"
      "model M { layers { dense = %d } }\n"
      "framework F {\n"
      "  template dense {\n"
      "    forward { op f: compute { time = 1 ms } }\n"
      "    backward {\n"
      "      op b: compute { time = 1 ms }\n"
      "      op w: compute { time = 1 ms; wgrad = true; after = [b] }\n"
      "    }\n"
      "  }\n"
      "}\n"
      "train t { model = M; cluster = C8; framework = F; tp = 1; pp = %d; dp = 1\n"
      "  micro_batch = 1; global_batch = %d; seq = 16; recompute = none; "
      "schedule = \"dualpipe\" }\n", HW, p, p, mu);
    compiled c;
    CU_ASSERT_FATAL(compile(&c, text));
    plc_step st;
    run_ok(&c, 1, &st);
    mpq_t bub, want;
    mpq_inits(bub, want, NULL);
    bubble_of(&st, bub);
    PLC_CU_ASSERT_MSG(is_ms(bub, (long)(p / 2 - 1) * 2, 1), name);
    PLC_CU_ASSERT_MSG(is_ms(st.stages[st.critical].compute, 3L * mu, 1), name);
    block_makespan(PLC_SCHED_DUALPIPE, p, 2, mu, 1, 2, 1, 0, want);
    PLC_CU_ASSERT_MSG(mpq_equal(st.makespan, want), name);
    CU_ASSERT(adds_up(&st));
    mpq_clears(bub, want, NULL);
    plc_step_free(&st);
    release(&c);
  }
}

/* Uneven DualPipe op by op: device s runs its reverse-direction blocks
 * with model stage p-1-s's op lists.  p 4, mu 8, one layer per stage;
 * layer 1 (model stage 1) takes 2 ms per op (f 2, input gradient 2, wgrad
 * 2), the others 1 ms.  Compute only, no transfers: the block-level hand
 * case of test_analysis.c (test_dualpipe_uneven), where device 1 (model
 * stages 1 and 2) does 4 x 6 + 4 x 3 = 36 ms, devices 0 and 3 (stages 0
 * and 3) 4 x 3 + 4 x 3 = 24 ms, and the step ends at 37 ms (device 1 idles
 * 1 ms before its first forward).  Running every block of device s with
 * stage s's lists would give device 1 8 x 6 = 48 ms. */
static void test_dualpipe_uneven(void)
{
  char text[4096];
  snprintf(text, sizeof text,
    "%s"
    "cluster C8 { device = D; tier node { size = 8; link = L } }\n"
    "model M { layers { dense = 4 } }\n"
    "framework F {\n"
    "  template dense {\n"
    "    forward { op f: compute { time = layer.index == 1 ? 2 ms : 1 ms } }\n"
    "    backward {\n"
    "      op b: compute { time = layer.index == 1 ? 2 ms : 1 ms }\n"
    "      op w: compute { time = layer.index == 1 ? 2 ms : 1 ms; wgrad = true; after = [b] }\n"
    "    }\n"
    "  }\n"
    "}\n"
    "train t { model = M; cluster = C8; framework = F; tp = 1; pp = 4; dp = 1\n"
    "  micro_batch = 1; global_batch = 8; seq = 16; recompute = none; "
    "schedule = \"dualpipe\" }\n", HW);
  compiled c;
  CU_ASSERT_FATAL(compile(&c, text));
  plc_step st;
  run_ok(&c, 1, &st);
  CU_ASSERT(is_ms(st.makespan, 37, 1));
  CU_ASSERT(is_ms(st.stages[0].compute, 24, 1));
  CU_ASSERT(is_ms(st.stages[1].compute, 36, 1));
  CU_ASSERT(is_ms(st.stages[2].compute, 36, 1));
  CU_ASSERT(is_ms(st.stages[3].compute, 24, 1));
  CU_ASSERT(adds_up(&st));
  plc_step_free(&st);
  release(&c);
}

/* DualPipe's F&B overlap, by hand: 2 stages, mu 4, dp = ep = 2.  A layer's
 * forward is a (1 ms), the EP all-to-all d (1 ms, stream ep, after a), e
 * (1 ms, after d); its backward eb, db, ab likewise.  Alone a block takes
 * 3 ms, 1 ms of it waiting for its all-to-all.  The F&B block interleaves
 * the two at their wait points: a | eb while d runs | e while db runs |
 * ab: 4 ms, nothing exposed (6 ms, 2 exposed, run one after the other).
 * Stage 0's order (schedule.c, DualPipe with P = 1): F(0,c0) F(2,c3)
 * F(1,c0) B(2,c3) FB(F(3,c3), B(0,c0)) B(3,c3) B(1,c0) W(1,c0) (W empty:
 * nothing is wgrad); stage 1's mirrors it with chunks 1 and 2.  Both
 * stages: F 0-3, F 3-6 (waiting for the other stage's first F), F 6-9,
 * B 9-12, FB 12-16 (waiting for the other stage's B, which ends at 12),
 * B 16-19, B 19-22: step 22 ms (24 without the overlap); per stage 16 ms
 * of compute and 6 ms of EP exposed (the six blocks outside the F&B),
 * where the per-microbatch model exposes 1 ms per block: 8 ms.
 * The analysis (block level) runs the same F&B as one list: 4 ms, where
 * its parts take 3 + 3 apart.  Each device runs one, the forward through
 * model stage 1 and the backward through model stage 0: on device 0 its
 * second slot's forward (F of chunk 3, model stage 1 = p-1-0), on device 1
 * its first slot's (chunk 1).
 * Device 0's work: 2 microbatches x (3 + 3) per part = 24 ms, less the
 * 2 ms its F&B hides = 22 ms: 16 of compute and 6 of EP exposed; the
 * order at block level is the op level's above, so the makespan is 22 ms
 * and the bubble 0 (no gradient sync: no DP tail). */
static const char *fb_plan =
  HW
  "model M { layers { dense = 2 } }\n"
  "framework F {\n"
  "  template dense {\n"
  "    forward {\n"
  "      op a: compute { time = 1 ms }\n"
  "      op d: all_to_all(ep) { time = 1 ms; stream = ep; after = [a] }\n"
  "      op e: compute { time = 1 ms; after = [d] }\n"
  "    }\n"
  "    backward {\n"
  "      op eb: compute { time = 1 ms }\n"
  "      op db: all_to_all(ep) { time = 1 ms; stream = ep; after = [eb] }\n"
  "      op ab: compute { time = 1 ms; after = [db] }\n"
  "    }\n"
  "  }\n"
  "}\n"
  "train t { model = M; cluster = C; framework = F; tp = 1; pp = 2; dp = 2; ep = 2\n"
  "  micro_batch = 1; global_batch = 8; seq = 16; recompute = none; schedule = \"dualpipe\" }\n";

static void test_dualpipe_fb_overlap(void)
{
  compiled c;
  CU_ASSERT_FATAL(compile(&c, fb_plan));
  CU_ASSERT_EQUAL(c.run->ir->mu, 4);
  for (int share = 0; share <= 1; share++) {
    plc_step st;
    char msg[256] = "";
    plc_step_opts o = {.share = share};
    CU_ASSERT(plc_step_run(&st, c.run->ir, &o, msg, sizeof msg));
    PLC_CU_STR_EQ(msg, "");
    CU_ASSERT(is_ms(st.makespan, 22, 1));
    for (int s = 0; s < 2; s++) {
      CU_ASSERT(is_ms(st.stages[s].compute, 16, 1));
      CU_ASSERT(is_ms(st.stages[s].exposed[PLC_PD_EP], 6, 1));
      CU_ASSERT(is_ms(st.stages[s].wait_stage, 0, 1));
    }
    CU_ASSERT(adds_up(&st));
    plc_step_free(&st);
  }
  const plc_result *r = &c.run->res;
  CU_ASSERT_FATAL(r->fbo != NULL);
  CU_ASSERT_EQUAL(r->nfb[0], 0);
  CU_ASSERT_EQUAL(r->nfb[1], 1);
  CU_ASSERT_EQUAL(r->nfb[2], 1);
  CU_ASSERT_EQUAL(r->nfb[3], 0);
  CU_ASSERT(is_ms(r->fbo[1], 4, 1));
  CU_ASSERT(is_ms(r->fbo[2], 4, 1));
  CU_ASSERT(is_ms(r->work, 22, 1));
  CU_ASSERT(is_ms(r->dev_compute, 16, 1));
  CU_ASSERT(is_ms(r->dev_exposed[PLC_PD_EP], 6, 1));
  CU_ASSERT(r->bubble_measured);
  CU_ASSERT(is_ms(r->bubble, 0, 1));
  CU_ASSERT(is_ms(r->step, 22, 1));
  release(&c);
}

/* Schedules whose chunks the lowered lists do not give are refused with
 * a reason: 1f1b over a stage split into vpp = 2 round-robin chunks. */
static void test_refuses_vpp_without_interleaving(void)
{
  char text[2048];
  interleaved_plan(text, sizeof text, 2, 2, 1, 4, 0);
  char *sched = strstr(text, "\"interleaved\"");
  CU_ASSERT_FATAL(sched != NULL);
  memcpy(sched, "\"1f1b\"       ", 13);
  compiled c;
  CU_ASSERT_FATAL(compile(&c, text));
  plc_step st;
  char msg[256] = "";
  plc_step_opts o = {.share = 1};
  CU_ASSERT(!plc_step_run(&st, c.run->ir, &o, msg, sizeof msg));
  CU_ASSERT(strstr(msg, "only interleaved runs") != NULL);
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

/* A random plan: pp stages of vpp chunks (dualpipev: its V's two) of one
 * or two layers, a forward of compute and a gather on a side stream, a
 * backward with a weight-gradient op and a reduce-scatter, pipeline sends
 * per chunk (round robin, or the V's: none at its turn on the last stage);
 * op times t[] in ms, transfer sizes in MB.  With `half`, every transfer
 * is half as large: the same plan on a link twice as fast. */
static void random_plan(char *text, size_t len, int pp, int vpp, int layers, int mb,
                        const char *sched, const int *t, int half)
{
  const char *u = "1 ms";
  int nch = strcmp(sched, "dualpipev") ? vpp : 2;
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
    "    let v = run.schedule == \"dualpipev\"\n"
    "    forward { for c in 0 .. run.vpp { if v ? (c == 0 ? layer.stage < run.pp - 1 : "
    "layer.stage > 0) : layer.stage + c * run.pp < run.pp * run.vpp - 1 {\n"
    "      op send[c]: p2p(pp) { size = %d MB; stream = s3; chunk = c } } } }\n"
    "    backward { for c in 0 .. run.vpp { if v ? (c == 0 ? layer.stage > 0 : "
    "layer.stage < run.pp - 1) : layer.stage + c * run.pp > 0 {\n"
    "      op sendb[c]: p2p(pp) { size = %d MB; stream = s3; chunk = c } } } }\n"
    "  }\n"
    "}\n"
    "train t { model = M; cluster = C; framework = F; tp = 1; pp = %d; dp = %d; vpp = %d\n"
    "  micro_batch = 1; global_batch = %d; seq = 16; recompute = none; schedule = \"%s\" }\n",
    HW, layers * pp * nch, t[0], u, t[1] * (half ? 1 : 2), t[2], u, t[3], u, t[4], u,
    t[5] * (half ? 1 : 2), t[6] * (half ? 1 : 2), t[6] * (half ? 1 : 2), pp, 4 / pp, vpp,
    mb * (4 / pp), sched);
}

/* The block level's F&B blocks on a DualPipe or dualpipev run (the
 * analysis of c): an F&B never takes longer than its two parts one after
 * the other, and the critical device's compute, exposed and waits add up
 * to its work exactly.  Returns the number of failures. */
static int fb_block_faults(const plc_result *r)
{
  int bad = r->fbo == NULL;
  mpq_t x;
  mpq_init(x);
  for (int d = 0; !bad && d < r->run->nstages; d++)
    for (int a = 0; a < 2; a++) {
      mpq_srcptr f, b;
      int fm, bm;
      plc_fb_parts(r, d, a, &fm, &bm, &f, &b);
      mpq_add(x, f, b);
      bad += mpq_cmp(r->fbo[d * 2 + a], x) > 0;
    }
  mpq_add(x, r->dev_compute, r->dev_stall);
  for (int d = 0; d < PLC_PD_COUNT; d++) mpq_add(x, x, r->dev_exposed[d]);
  bad += !mpq_equal(x, r->work);
  mpq_clear(x);
  return bad;
}

/* Over random plans, links shared and not: every stage's parts add up to
 * the step; no stage's compute exceeds the step (busy <= 100%); and with
 * dedicated links, a link twice as fast never makes the step longer (with
 * sharing a faster link can slow a step: see plc(5) and test_flow).  The
 * block level, with DualPipe's and dualpipev's F&B blocks overlapped:
 * fb_block_faults, and a link twice as fast never makes its step longer.
 * The report's step with links shared (the default) is never shorter
 * than with shared_links = false: within a list no op then takes less
 * than its time, and every order is fixed. */
static void test_random_plans(void)
{
  static const char *scheds[] = {"gpipe", "1f1b", "zb_h1", "interleaved", "dualpipe",
                                 "dualpipev"};
  int bad_sum = 0, bad_busy = 0, bad_mono = 0, ran = 0, ran_chunks = 0, ran_v = 0;
  int bad_fb = 0, bad_fb_mono = 0, ran_fb = 0, bad_dedicated = 0, ran_dedicated = 0, slower = 0;
  for (int round = 0; round < 72; round++) {
    int kind = (int)rnd(6), pp = 1 << rnd(3), layers = 1 + (int)rnd(2), mb = pp + (int)rnd(4);
    int vpp = 1;
    const char *sched = scheds[kind];
    if (kind >= 3) { /* interleaved: mu a multiple of pp; dualpipe: even pp, even mu >= 2 pp;
                        dualpipev: the same suits it (mu >= 2 pp, vpp 1: the V is its pair) */
      pp = 2 << rnd(2);
      vpp = kind == 3 ? 2 + (int)rnd(2) : 1;
      mb = kind == 3 ? pp * (1 + (int)rnd(2)) : 2 * pp + 2 * (int)rnd(2);
    }
    int t[7];
    for (int k = 0; k < 7; k++) t[k] = 1 + (int)rnd(6);
    char text[4096];
    mpq_t full, block;
    mpq_inits(full, block, NULL);
    for (int half = 0; half <= 1; half++) {
      random_plan(text, sizeof text, pp, vpp, layers, mb, sched, t, half);
      compiled c;
      if (!compile(&c, text)) {
        release(&c);
        continue;
      }
      if (!half) { /* the report with links dedicated: never slower than shared */
        char ded[4200];
        snprintf(ded, sizeof ded, "%s", text);
        char *end = strrchr(ded, '}');
        compiled d;
        if (end && (size_t)(end - ded) + 40 < sizeof ded) {
          snprintf(end, sizeof ded - (size_t)(end - ded), "; shared_links = false }\n");
          if (compile(&d, ded)) {
            ran_dedicated++;
            bad_dedicated += mpq_cmp(d.run->res.step, c.run->res.step) > 0;
            slower += mpq_cmp(d.run->res.step, c.run->res.step) < 0;
          }
          release(&d);
        }
      }
      if (kind >= 4) { /* the block level */
        ran_fb++;
        bad_fb += fb_block_faults(&c.run->res);
        if (!half) mpq_set(block, c.run->res.step);
        else bad_fb_mono += mpq_cmp(c.run->res.step, block) > 0;
      }
      for (int share = 0; share <= 1; share++) {
        plc_step st;
        char msg[256];
        plc_step_opts o = {.share = share};
        if (plc_step_run(&st, c.run->ir, &o, msg, sizeof msg)) {
          ran++;
          ran_chunks += kind >= 3;
          ran_v += kind == 5;
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
    mpq_clears(full, block, NULL);
  }
  CU_ASSERT(ran_dedicated >= 60);
  CU_ASSERT(slower >= 10); /* sharing shows: 23 of the 72 today */
  CU_ASSERT_EQUAL(bad_dedicated, 0);
  CU_ASSERT(ran_fb >= 30);
  CU_ASSERT_EQUAL(bad_fb, 0);
  CU_ASSERT_EQUAL(bad_fb_mono, 0);
  CU_ASSERT(ran >= 150);
  CU_ASSERT(ran_chunks >= 40);
  CU_ASSERT(ran_v >= 10);
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
    {"interleaved, uniform stages: the closed form", test_interleaved_closed_form},
    {"interleaved with per-chunk sends: the block simulator", test_interleaved_sends},
    {"dualpipe, uniform stages: the closed form", test_dualpipe_closed_form},
    {"dualpipe, uneven stages: each device's two parts' op lists", test_dualpipe_uneven},
    {"dualpipe F&B hides the EP all-to-all (hand case)", test_dualpipe_fb_overlap},
    {"vpp > 1 with a one-chunk schedule is refused", test_refuses_vpp_without_interleaving},
    {"properties over random plans", test_random_plans},
    {NULL, NULL},
  };
  return plc_cu_run("step", tests);
}
