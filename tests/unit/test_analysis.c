/* test_analysis.c - CUnit tests of the step analysis (runtime/engine/analysis.c):
 * the bubble of every schedule by its formula on hand-built op lists, the
 * critical stage, the DP tail (simulated, pinned, declared), the step, eta,
 * MFU and tokens/s; then the same figures end to end for a small plan.
 *
 * Hand-built runs (times in ms): every stage runs forward one compute op
 * of 10 ms (1e12 FLOP), backward a 12 ms op then an 8 ms one (1.2e12 and
 * 0.8e12 FLOP); peak 100 TFLOP/s, so compute runs at 100% of peak.  Then
 * t_f = 10, t_b = 20, t = 30 and, when the 8 ms op is marked wgrad,
 * t_w = 8 ms (unmarked: half the backward compute, 10 ms). */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <string.h>

#include "analysis.h"
#include "arena.h"
#include "cu_main.h"
#include "plan_fixture.h"

static plc_arena *ar;

static mpq_ptr q(long num, unsigned long den)
{
  mpq_ptr v = plc_arena_mpq(ar);
  mpq_set_si(v, num, den);
  mpq_canonicalize(v);
  return v;
}

/* Append a compute op of ms milliseconds and flops x 1e10 FLOP after dep. */
static int compute(plc_ir_list *l, plc_phase ph, long ms, long flops_e10, int wgrad, int dep)
{
  plc_ir_op op = {0};
  op.name = "c";
  op.phase = ph;
  op.kind = PLC_OPK_COMPUTE;
  op.useful = 1;
  op.wgrad = wgrad;
  op.time = q(ms, 1000);
  op.flops = q(flops_e10 * 10000000000L, 1);
  op.size = q(0, 1);
  op.deps = plc_arena_alloc(ar, sizeof(int));
  op.ndeps = dep >= 0;
  op.deps[0] = dep;
  return plc_ir_push(ar, l, &op);
}

/* A backward collective of ms milliseconds over a group of 2 on stream,
 * after dep (the caller sets what else it is). */
static plc_ir_op comm_op(const char *name, plc_opk kind, plc_pdim dim, int stream, long ms,
                         int dep)
{
  plc_ir_op op = {0};
  op.name = name;
  op.phase = PLC_PH_BWD;
  op.kind = kind;
  op.dim = dim;
  op.group = 2;
  op.stream = stream;
  op.time = q(ms, 1000);
  op.flops = q(0, 1);
  op.size = q(1000, 1);
  op.deps = plc_arena_alloc(ar, sizeof(int));
  op.deps[0] = dep;
  op.ndeps = 1;
  return op;
}

/* A dp all-reduce of ms milliseconds on stream 1, once per step, after dep. */
static void grad_sync(plc_ir_list *l, long ms, int dep)
{
  plc_ir_op op = comm_op("g", PLC_OPK_ALL_REDUCE, PLC_PD_DP, 1, ms, dep);
  op.once = 1;
  plc_ir_push(ar, l, &op);
}

/* A run of p stages as described above; mu 8, 16 sequences of 1024.
 * Interleaved with vpp > 1: each stage's ops split evenly over its vpp
 * chunks (a vpp-th of each time, chunk-tagged, the chunks chained as a
 * stage's layers are), so a chunk's blocks take t/vpp. */
static plc_ir_run *hand_run(int p, int vpp, const char *schedule, int wgrad)
{
  static const char *streams[] = {"compute", "grad"};
  plc_ir_run *r = plc_arena_alloc(ar, sizeof *r);
  memset(r, 0, sizeof *r);
  r->name = "hand";
  for (int d = 0; d < PLC_PD_COUNT; d++)
    r->size[d] = 1;
  r->size[PLC_PD_PP] = p;
  r->vpp = vpp;
  r->mu = 8;
  r->micro_batch = 2;
  r->global_batch = 16;
  r->seq = 1024;
  r->world = p;
  r->schedule = schedule;
  r->peak = q(100000000000000L, 1);
  r->streams = streams;
  r->nstreams = 2;
  r->nstages = p;
  r->stages = plc_arena_alloc(ar, (size_t)p * sizeof *r->stages);
  memset(r->stages, 0, (size_t)p * sizeof *r->stages);
  int n = !strcmp(schedule, "interleaved") ? vpp : 1;
  for (int s = 0; s < p; s++) {
    plc_ir_stage *st = &r->stages[s];
    int f = -1, b = -1;
    for (int k = 0; k < n; k++) {
      f = compute(&st->fwd, PLC_PH_FWD, 10 / n, 100 / n, 0, f);
      st->fwd.ops[f].chunk = k;
    }
    for (int k = n - 1; k >= 0; k--) {
      int i = compute(&st->bwd, PLC_PH_BWD, 12 / n, 120 / n, 0, b);
      b = compute(&st->bwd, PLC_PH_BWD, 8 / n, 80 / n, wgrad, i);
      st->bwd.ops[i].chunk = st->bwd.ops[b].chunk = k;
    }
  }
  return r;
}

/* Analyse and compare the bubble and the step with num/den seconds. */
static void bubble_is(plc_ir_run *r, long bnum, long snum, unsigned long den, unsigned line)
{
  plc_result res;
  plc_analyse(&res, r);
  char msg[120];
  snprintf(msg, sizeof msg, "%s p=%ld v=%ld: want bubble %ld/%lu, step %ld/%lu", r->schedule,
           (long)r->size[PLC_PD_PP], (long)r->vpp, bnum, den, snum, den);
  int ok = plc_fx_q(res.bubble, bnum, den) && plc_fx_q(res.step, snum, den);
  CU_assertImplementation(ok ? CU_TRUE : CU_FALSE, line, msg, __FILE__, "", CU_FALSE);
  plc_result_free(&res);
}
#define BUBBLE_IS(r, b, s) bubble_is(r, b, s, 1000, __LINE__)

/* The closed form of r's bubble is num/1000 s. */
static void formula_is(plc_ir_run *r, long num, unsigned line)
{
  plc_result res;
  plc_analyse(&res, r);
  char msg[120];
  snprintf(msg, sizeof msg, "%s p=%ld: want the formula's bubble %ld ms", r->schedule,
           (long)r->size[PLC_PD_PP], num);
  int ok = res.bubble_formula_known && plc_fx_q(res.bubble_formula, num, 1000);
  CU_assertImplementation(ok ? CU_TRUE : CU_FALSE, line, msg, __FILE__, "", CU_FALSE);
  plc_result_free(&res);
}

/* step = mu t + bubble = 8 x 30 + bubble ms.  The stages are uniform, so
 * the bubble measured at block level equals the closed form wherever the
 * schedule tests prove them equal (runtime/engine/schedule.h):
 *   gpipe, 1f1b: (p-1)(t_f + t_b) = 3 x 30 = 90, step 330
 *   interleaved, v = 2: (p-1)(t_f + t_b)/v = 90/2 = 45, step 285
 *   zb_h1: (p-1)(t_f + t_b - 2 t_w) = 3 x (30 - 16) = 42, step 282;
 *     unmarked t_w = 20/2 = 10: 3 x (30 - 20) = 30, step 270
 *   dualpipe with t_b - t_w = t_f (the unmarked split, t_w = 10): p = 4:
 *     (p/2 - 1)(t_F&B + t_b - 3 t_w) = 1 x (30 + 20 - 30) = 20, step 260;
 *     p = 2: 0 x ... = 0, step 240
 *   dualpipe with t_w = 8: the closed form gives 1 x (30 + 20 - 24) = 26,
 *     but its condition fails (t_b - t_w = 12, not t_f = 10), so that is
 *     only the reference; the step takes the simulated bubble
 *   p = 1: no bubble, step 240. */
static void test_bubbles(void)
{
  BUBBLE_IS(hand_run(4, 1, "gpipe", 1), 90, 330);
  BUBBLE_IS(hand_run(4, 1, "1f1b", 1), 90, 330);
  BUBBLE_IS(hand_run(4, 2, "interleaved", 1), 45, 285);
  BUBBLE_IS(hand_run(4, 1, "zb_h1", 1), 42, 282);
  BUBBLE_IS(hand_run(4, 1, "zb_h1", 0), 30, 270);
  BUBBLE_IS(hand_run(4, 1, "dualpipe", 0), 20, 260);
  BUBBLE_IS(hand_run(2, 1, "dualpipe", 0), 0, 240);
  formula_is(hand_run(4, 1, "dualpipe", 1), 26, __LINE__);
  BUBBLE_IS(hand_run(1, 1, "1f1b", 1), 0, 240);
}

/* 1f1b over 4 stages: step 330 ms.  eta = mu x useful / step = 8 x 30 /
 * 330 = 8/11; busy the same (no recompute); MFU = mu x sum of the stages'
 * useful FLOPs / (pp x peak x step) = 8 x 4 x 3e12 / (4 x 1e14 x 0.33) =
 * 8/11 (compute at full peak); tokens/s = 16 x 1024 / 0.33 = 1638400/33.
 * The bubble formula shows its numbers. */
static void test_ratios(void)
{
  plc_result res;
  plc_analyse(&res, hand_run(4, 1, "1f1b", 1));
  CU_ASSERT(plc_fx_q(res.t_f, 1, 100));
  CU_ASSERT(plc_fx_q(res.t_b, 1, 50));
  CU_ASSERT(plc_fx_q(res.t_w, 1, 125));
  CU_ASSERT(plc_fx_q(res.eta, 8, 11));
  CU_ASSERT(plc_fx_q(res.busy, 8, 11));
  CU_ASSERT(res.mfu_known);
  CU_ASSERT(plc_fx_q(res.mfu, 8, 11));
  CU_ASSERT(plc_fx_q(res.tokens_per_s, 1638400, 33));
  CU_ASSERT_EQUAL(res.tail_kind, PLC_TAIL_NONE);
  char *fm = plc_bubble_formula(&res, 4, 0);
  PLC_CU_STR_EQ(fm, "(p - 1)(t_f + t_b) = (4 - 1) x (10 ms + 20 ms)");
  free(fm);
  plc_result_free(&res);
}

/* The slowest stage is critical: stage 2 gets 20 ms more forward, so
 * t = 50 there (F 30, B 20) and 30 elsewhere (F 10, B 20).  The formula
 * charges 50 for every step of the fill and drain: 3 x 50 = 150.  Run at
 * block level (1F1B, warm-up p - s - 1 forwards): stage 2 starts F0 at 20
 * (after F0 on stages 0 and 1) and then never waits in its warm-up or
 * steady phase: stage 3 returns B(k) 30 ms after F(k) reaches it, while
 * stage 2 is busy 50 ms with B(k-1) and F(k+1); stage 1 is ahead.  In the
 * cool-down, F7 ends at t, B6 takes t..t+20, stage 3's B7 ends at t+30:
 * 10 ms idle.  Stage 2 ends at 20 + 8 x 50 + 10 = 430; B7 on stage 1 takes
 * 430..450, on stage 0 450..470.  Bubble 470 - 400 = 70 (warm-up 20,
 * steady 0, cool-down 10 + 40), step 470. */
static void test_critical_stage(void)
{
  plc_ir_run *r = hand_run(4, 1, "1f1b", 1);
  compute(&r->stages[2].fwd, PLC_PH_FWD, 20, 200, 0, 0);
  plc_result res;
  plc_analyse(&res, r);
  CU_ASSERT_EQUAL(res.critical, 2);
  CU_ASSERT(plc_fx_q(res.t, 1, 20));
  CU_ASSERT(plc_fx_q(res.bubble_formula, 3, 20));
  CU_ASSERT(res.bubble_measured);
  CU_ASSERT(plc_fx_q(res.bubble, 7, 100));
  CU_ASSERT(plc_fx_q(res.bubble_warmup, 1, 50));
  CU_ASSERT(plc_fx_q(res.bubble_steady, 0, 1));
  CU_ASSERT(plc_fx_q(res.bubble_cooldown, 1, 20));
  CU_ASSERT(plc_fx_q(res.step, 47, 100));
  plc_result_free(&res);
}

/* The analysis runs first in full the stage whose ops take the most time
 * in all (its guess at the critical one) and runs the critical one again
 * when the guess was wrong.  Two stages of hand_run (forward 10 ms,
 * backward 12 + 8 ms); stage 0's forward also has an 8 ms tp all-gather
 * on stream 1 from time 0, hidden behind its 10 ms of compute: makespan
 * 10, ops 18 ms in all (38 with the backward); stage 1's forward has 5 ms
 * more compute: makespan 15, 15 ms in all (35).  So the guess is stage 0,
 * and stage 1 is critical (15 + 20 = 35 ms > 30): t_f 15 ms, t_b 20 ms,
 * its forward's compute 15 ms and nothing exposed, and the kept runs are
 * stage 1's (two forward ops, no collective). */
static void test_critical_not_guessed(void)
{
  plc_ir_run *r = hand_run(2, 1, "1f1b", 1);
  plc_ir_op g = comm_op("ag", PLC_OPK_ALL_GATHER, PLC_PD_TP, 1, 8, 0);
  g.phase = PLC_PH_FWD;
  g.ndeps = 0;
  plc_ir_push(ar, &r->stages[0].fwd, &g);
  compute(&r->stages[1].fwd, PLC_PH_FWD, 5, 50, 0, 0);
  plc_result res;
  plc_analyse(&res, r);
  CU_ASSERT_EQUAL(res.critical, 1);
  CU_ASSERT(plc_fx_q(res.t_f, 15, 1000));
  CU_ASSERT(plc_fx_q(res.t_b, 20, 1000));
  CU_ASSERT(plc_fx_q(res.fwd.compute, 15, 1000));
  CU_ASSERT(plc_fx_q(res.fwd.exposed, 0, 1));
  CU_ASSERT_EQUAL(res.fwd.n, 2);
  CU_ASSERT_EQUAL(res.nrows, 0); /* the inventory is stage 1's: no collective */
  CU_ASSERT(plc_fx_q(res.tf[0], 10, 1000));
  CU_ASSERT(plc_fx_q(res.tb[1], 20, 1000));
  plc_result_free(&res);
}

/* ---- properties of the measured bubble over random uneven stages -------- */

static unsigned long prop_seed = 12345;

static long prop_rand(long lo, long hi) /* an LCG: the same runs every time */
{
  prop_seed = prop_seed * 6364136223846793005UL + 1442695040888963407UL;
  return lo + (long)((prop_seed >> 33) % (unsigned long)(hi - lo + 1));
}

/* hand_run's layout with mu microbatches and random times per stage: forward
 * f[s], backward an input-gradient op then a wgrad op, in whole ms.  For
 * interleaved, per chunk: stage s's chunk k takes f[s vpp + k], ... (its
 * own ops, chunk-tagged and chained as hand_run's). */
static plc_ir_run *rand_run(int p, int vpp, const char *schedule, long mu, const long *f,
                            const long *dg, const long *wg)
{
  plc_ir_run *r = hand_run(p, vpp, schedule, 1);
  r->mu = mu;
  r->global_batch = (int)(2 * mu);
  int n = !strcmp(schedule, "interleaved") ? vpp : 1;
  for (int s = 0; s < p; s++) {
    plc_ir_stage *st = &r->stages[s];
    memset(&st->fwd, 0, sizeof st->fwd);
    memset(&st->bwd, 0, sizeof st->bwd);
    int a = -1, b = -1;
    for (int k = 0; k < n; k++) {
      long x = f[s * n + k];
      a = compute(&st->fwd, PLC_PH_FWD, x, x * 10, 0, a);
      st->fwd.ops[a].chunk = k;
    }
    for (int k = n - 1; k >= 0; k--) {
      long x = dg[s * n + k], y = wg[s * n + k];
      int i = compute(&st->bwd, PLC_PH_BWD, x, x * 10, 0, b);
      b = compute(&st->bwd, PLC_PH_BWD, y, y * 10, 1, i);
      st->bwd.ops[i].chunk = st->bwd.ops[b].chunk = k;
    }
  }
  return r;
}

/* A hand-derived measured bubble (times in ms): the critical device, its
 * work, the bubble, its warm-up and cool-down parts (the steady part is
 * the rest), and the step. */
static void check_measured(const plc_result *res, int device, long work, long bubble,
                           long warmup, long cooldown, long step)
{
  CU_ASSERT(res->bubble_measured);
  CU_ASSERT_EQUAL(res->device, device);
  CU_ASSERT(plc_fx_q(res->work, work, 1000));
  CU_ASSERT(plc_fx_q(res->bubble, bubble, 1000));
  CU_ASSERT(plc_fx_q(res->bubble_warmup, warmup, 1000));
  CU_ASSERT(plc_fx_q(res->bubble_steady, bubble - warmup - cooldown, 1000));
  CU_ASSERT(plc_fx_q(res->bubble_cooldown, cooldown, 1000));
  CU_ASSERT(plc_fx_q(res->step, step, 1000));
}

/* DualPipe on uneven stages, by hand (ms): p = 4, mu = 8; model stage 1
 * takes f 2, input gradient 2, wgrad 2 (t 6), the others 1, 1, 1 (t 3).
 * Device d holds model stages d and 3 - d and runs 4 microbatches through
 * each: devices 1 and 2 hold stages 1 and 2, 4 x 6 + 4 x 3 = 36 of work;
 * devices 0 and 3 hold 0 and 3, 24.  Device 1's order (schedule.c; chunk
 * 1 is model stage 1, chunk 6 model stage 2 of the reverse direction,
 * F&B = forward of one + whole backward of the other), with each block's
 * start-end:
 *   F(0,c1) 1-3 (after F(0,c0) on device 0, 0-1)  F(4,c6) 3-4  F(1,c1) 4-6
 *   F(5,c6) 6-7  F(2,c1) 7-9  B(4,c6) 9-11 (after B(4,c7) on device 0,
 *   5-6)  F&B(F 6 c6, B 0 c1) 11-16  F&B(F 3 c1, B 5 c6) 16-20
 *   F&B(F 7 c6, B 1 c1) 20-25  B(6,c6) 25-27  B(2,c1) 27-31
 *   B(7,c6) input 31-32  B(3,c1) input 32-34  W(7,c6) 34-35  W(3,c1) 35-37
 * (each start is its device's previous end or the dependency's end, e.g.
 * F&B(F 3 c1, B 5 c6) waits for B(5,c7), which ends at 11 on device 0,
 * and F(3,c0) at 11: device 1 is free at 16).  Device 1 idles only
 * 0-1 ms, before its first block: makespan 37, bubble 37 - 36 = 1 ms, all
 * in warm-up; the step is 37 ms.  Per-stage times (device 1 running every
 * block at stage 1's) would charge mu x 6 = 48 ms of work.  With model
 * stage 3 the heavy one (f 2, 2, 2 there), devices 0 and 3 have 36, 0 the
 * critical (the lower), and every block chains without a gap: bubble 0,
 * step 36. */
static void test_dualpipe_uneven(void)
{
  long f[4] = {1, 2, 1, 1}, dg[4] = {1, 2, 1, 1}, wg[4] = {1, 2, 1, 1};
  plc_result res;
  plc_analyse(&res, rand_run(4, 1, "dualpipe", 8, f, dg, wg));
  CU_ASSERT_EQUAL(res.critical, 1);
  check_measured(&res, 1, 36, 1, 1, 0, 37);
  CU_ASSERT(plc_fx_q(res.dev_compute, 36, 1000)); /* all compute, nothing exposed */
  plc_result_free(&res);
  long f3[4] = {1, 1, 1, 2};
  plc_analyse(&res, rand_run(4, 1, "dualpipe", 8, f3, f3, f3));
  CU_ASSERT_EQUAL(res.critical, 3);
  CU_ASSERT_EQUAL(res.device, 0);
  CU_ASSERT(plc_fx_q(res.bubble, 0, 1));
  CU_ASSERT(plc_fx_q(res.step, 36, 1000));
  plc_result_free(&res);
}

/* dualpipev on uneven chunks, by hand (ms): p = 2, mu 4; stage s holds
 * model chunks s and 3 - s as its virtual chunks 0 and 1, each run as
 * blocks of its own ops (chunk-tagged).  Model chunk 1 (stage 1's chunk 0)
 * takes f 2, input gradient 2, wgrad 2; the others 1, 1, 1.  Stage 1
 * works 4 x (2 + 4) + 4 x (1 + 2) = 36, stage 0 4 x 3 + 4 x 3 = 24.
 * Stage 1's order (schedule.c) with start-end, Fm.c for F(mb m, chunk c):
 *   F0.1 1-3 (after F0.0 on stage 0, 0-1)  F0.2 3-4 (the V's turn, on
 *   stage 1)  F1.1 4-6  F1.2 6-7  F2.1 7-9  B0.2 9-11 (after B0.3 input,
 *   stage 0, 5-6)  F&B(F2.2, B0.1) 11-16  F&B(F3.1, B1.2) 16-20
 *   F&B(F3.2, B1.1) 20-25  B2.2 25-27  B2.1 27-31  B3.2 input 31-32
 *   B3.1 input 32-34  W3.2 34-35  W3.1 35-37
 * (F&B = forward of one chunk + whole backward of the other, e.g.
 * F&B(F3.1, B1.2) waits for B1.3, which stage 0 ends at 11, and F3.0 at
 * 11).  Idle only 0-1: bubble 37 - 36 = 1, in warm-up; step 37. */
static void test_dualpipev_uneven(void)
{
  plc_ir_run *r = hand_run(2, 2, "dualpipev", 1);
  for (int s = 0; s < 2; s++) {
    plc_ir_stage *st = &r->stages[s];
    memset(&st->fwd, 0, sizeof st->fwd);
    memset(&st->bwd, 0, sizeof st->bwd);
    for (int k = 0; k < 2; k++) {
      long t = s == 1 && k == 0 ? 2 : 1; /* model chunk 1 */
      int f = compute(&st->fwd, PLC_PH_FWD, t, t * 10, 0, -1);
      int b = compute(&st->bwd, PLC_PH_BWD, t, t * 10, 0, -1);
      int w = compute(&st->bwd, PLC_PH_BWD, t, t * 10, 1, b);
      st->fwd.ops[f].chunk = st->bwd.ops[b].chunk = st->bwd.ops[w].chunk = k;
    }
  }
  r->mu = 4;
  r->global_batch = 8;
  plc_result res;
  plc_analyse(&res, r);
  check_measured(&res, 1, 36, 1, 1, 0, 37);
  plc_result_free(&res);
}

/* Interleaved on uneven chunks, by hand (ms): p = 2, vpp = 2, mu = 4, so
 * stage 0 holds model chunks 0 and 2, stage 1 chunks 1 and 3; every chunk
 * takes F 1, B 2 (input gradient 1 + weight gradient 1, one block: no
 * split) but model chunk 0 (the embedding), F 2, B 2, and model chunk 3
 * (stage 1's chunk 1: the output layer and loss), F 2, B 3 (2 + 1).
 * Stage 1 works 4 x (1 + 2 + 2 + 3) = 32, stage 0 4 x 7 = 28: device 1
 * is critical.  The orders, start-end and the hand derivation are
 * tests/golden/step-interleaved-uneven.plan's: stage 1 idles 0-2 and 3-4
 * (warm-up) and 35-37 (after its last block, stage 0's B3.0 ends at 37):
 * makespan 37, bubble 5 (3 warm-up, 2 cool-down), step 37.  A vpp-th of
 * the stage's lists per block (the rule before) gave bubble 3.5, step
 * 35.5. */
static void test_interleaved_uneven(void)
{
  long f[4] = {2, 1, 1, 2}, dg[4] = {1, 1, 1, 2}, wg[4] = {1, 1, 1, 1};
  plc_result res;
  plc_analyse(&res, rand_run(2, 2, "interleaved", 4, f, dg, wg));
  CU_ASSERT_EQUAL(res.critical, 1);
  check_measured(&res, 1, 32, 5, 3, 2, 37);
  CU_ASSERT(plc_fx_q(res.dev_compute, 32, 1000));
  plc_result_free(&res);
}

/* Over random uneven stages, for each schedule (interleaved twice: its
 * chunks even, each a copy of its stage's times, and uneven, every chunk
 * its own random times, vpp 2 or 3):
 *  - warm-up + steady + cool-down = the bubble >= 0, and it was measured;
 *  - the critical device's work + bubble = the step, and its compute,
 *    exposed and waits add up to that work;
 *  - every device's own work fits in the step and is at most the critical
 *    device's, which is the largest: mu (t_f + t_b) of its stage, the sum
 *    of its blocks' times (interleaved: mu x the sum over its chunks,
 *    each the times of its own ops), or under DualPipe
 *    mu/2 (t_s + t_{p-1-s}) (it runs half the microbatches through each of
 *    model stages s and p-1-s); with even chunks that is mu (t_f + t_b)
 *    of the critical stage exactly;
 *  - when the critical stage is the slowest in each part (forward, input
 *    gradient, weight gradient), the measured bubble is at most the closed
 *    form (gpipe, 1f1b, even interleaved): raising every stage to its
 *    times gives the uniform pipeline, whose bubble is the closed form,
 *    and no block that gets longer makes the step shorter (max-plus);
 *  - so too directly: one stage's (or, uneven interleaved, one chunk's)
 *    forward, input gradient or weight gradient 1 ms longer never
 *    shortens the step (ZB-H1 with any mu >= p, its precondition). */
enum { PROP_KINDS = 7, PROP_UNEVEN = 6 };

static void test_bubble_properties(void)
{
  static const char *const scheds[PROP_KINDS] = {"gpipe", "1f1b", "interleaved", "zb_h1",
                                                 "dualpipe", "dualpipev", "interleaved"};
  for (int iter = 0; iter < 40 * PROP_KINDS; iter++) {
    int k = iter % PROP_KINDS;
    int vpp = k == 2 || k == 5 ? 2 : k == PROP_UNEVEN ? (int)prop_rand(2, 3) : 1;
    int n = k == 2 || k == PROP_UNEVEN ? vpp : 1; /* times per stage */
    int p = k == 4 ? 2 * (int)prop_rand(1, 3) : (int)prop_rand(2, 6);
    long mu = k == 3   ? prop_rand(p, 3L * p)      /* zb_h1: any mu >= p */
              : k == 5 ? prop_rand(2L * p, 3L * p) /* dualpipev: any mu >= 2p */
                       : p * prop_rand(2, 3);
    long f[18], dg[18], wg[18];
    int top = (int)prop_rand(0, p - 1);
    for (int i = 0; i < p * n; i++) {
      f[i] = prop_rand(1, 10);
      dg[i] = prop_rand(1, 12);
      wg[i] = prop_rand(1, 8);
    }
    for (int s = 0; s < p && k < 3; s++) { /* the top stage is slowest in each part */
      f[top * n] = f[s * n] > f[top * n] ? f[s * n] : f[top * n];
      dg[top * n] = dg[s * n] > dg[top * n] ? dg[s * n] : dg[top * n];
      wg[top * n] = wg[s * n] > wg[top * n] ? wg[s * n] : wg[top * n];
    }
    for (int i = 0; i < p * n && k == 2; i++) { /* even chunks: the stage's times */
      f[i] = f[i - i % n];
      dg[i] = dg[i - i % n];
      wg[i] = wg[i - i % n];
    }
    plc_result res;
    plc_analyse(&res, rand_run(p, vpp, scheds[k], mu, f, dg, wg));
    mpq_t sum, w, most;
    mpq_inits(sum, w, most, NULL);
    mpq_add(sum, res.bubble_warmup, res.bubble_steady);
    mpq_add(sum, sum, res.bubble_cooldown);
    CU_ASSERT(res.bubble_measured);
    CU_ASSERT(mpq_equal(sum, res.bubble));
    CU_ASSERT(mpq_sgn(res.bubble) >= 0 && mpq_sgn(res.bubble_steady) >= 0);
    mpq_add(sum, res.work, res.bubble);
    CU_ASSERT(mpq_equal(sum, res.step));
    mpq_set(sum, res.dev_compute);
    mpq_add(sum, sum, res.dev_stall);
    for (int d = 0; d < PLC_PD_COUNT; d++)
      mpq_add(sum, sum, res.dev_exposed[d]);
    CU_ASSERT(mpq_equal(sum, res.work));
    for (int s = 0; s < p; s++) {
      int m = p - 1 - s;
      long t = 0;
      for (int c = 0; c < n; c++)
        t += f[s * n + c] + dg[s * n + c] + wg[s * n + c];
      if (k == 4)
        mpq_set_si(w, mu * (t + f[m] + dg[m] + wg[m]), 2000);
      else
        mpq_set_si(w, mu * t, 1000);
      mpq_canonicalize(w);
      CU_ASSERT(mpq_cmp(w, res.step) <= 0);
      CU_ASSERT(mpq_cmp(w, res.work) <= 0);
      if (s == 0 || mpq_cmp(w, most) > 0)
        mpq_set(most, w);
    }
    CU_ASSERT(mpq_equal(most, res.work)); /* the busiest device's */
    if (k < 3) { /* even stages' chunks: mu (t_f + t_b) of the critical stage */
      mpq_set_si(w, mu, 1);
      mpq_mul(w, w, res.t);
      CU_ASSERT(mpq_equal(w, res.work));
      CU_ASSERT(mpq_cmp(res.bubble, res.bubble_formula) <= 0);
    }
    int s = (int)prop_rand(0, p * n - 1), part = (int)prop_rand(0, 2);
    if (k == 2)
      s -= s % n; /* even chunks stay even: every chunk of the stage */
    for (int c = s; c < (k == 2 ? s + n : s + 1); c++)
      (part == 0 ? f : part == 1 ? dg : wg)[c]++;
    plc_result slower;
    plc_analyse(&slower, rand_run(p, vpp, scheds[k], mu, f, dg, wg));
    CU_ASSERT(mpq_cmp(slower.step, res.step) >= 0);
    mpq_clears(sum, w, most, NULL);
    plc_result_free(&slower);
    plc_result_free(&res);
  }
}

/* DP tail, 1f1b over 2 stages (bubble 30, step 8 x 30 + 30 = 270 ms before
 * the tail):
 *   simulated: a once all-reduce of 6 ms after the last backward op ends at
 *     26 ms, 6 after t_b = 20: tail 6, step 276;
 *   declared: dp_hidden = 3/4 of that 6 ms sync leaves 1.5 ms, step 271.5;
 *   pinned: dp_tail = 5 ms, step 275; plus optimizer_time 7 ms: 282. */
static void test_tail(void)
{
  plc_ir_run *r = hand_run(2, 1, "1f1b", 1);
  for (int s = 0; s < 2; s++)
    grad_sync(&r->stages[s].bwd, 6, 1);
  plc_result res;
  plc_analyse(&res, r);
  CU_ASSERT_EQUAL(res.tail_kind, PLC_TAIL_SIMULATED);
  CU_ASSERT(plc_fx_q(res.tail_full, 6, 1000));
  CU_ASSERT(plc_fx_q(res.tail, 6, 1000));
  CU_ASSERT(plc_fx_q(res.t_b, 20, 1000)); /* the once op is not in every microbatch */
  CU_ASSERT(plc_fx_q(res.step, 276, 1000));
  plc_result_free(&res);
  r->dp_hidden = q(3, 4);
  plc_analyse(&res, r);
  CU_ASSERT_EQUAL(res.tail_kind, PLC_TAIL_DECLARED);
  CU_ASSERT(plc_fx_q(res.tail, 3, 2000));
  CU_ASSERT(plc_fx_q(res.step, 543, 2000));
  plc_result_free(&res);
  r->dp_tail = q(5, 1000);
  plc_analyse(&res, r);
  CU_ASSERT_EQUAL(res.tail_kind, PLC_TAIL_PINNED);
  CU_ASSERT(plc_fx_q(res.step, 275, 1000));
  plc_result_free(&res);
  r->optimizer_time = q(7, 1000);
  plc_analyse(&res, r);
  CU_ASSERT(plc_fx_q(res.step, 282, 1000));
  plc_result_free(&res);
}

/* A send over pp that leaves chunk k of l after its layers, on stream 2
 * (Megatron's overlapped p2p), of ms milliseconds after op dep. */
static void leaving_send(plc_ir_list *l, int k, long ms, int dep)
{
  plc_ir_op op = comm_op("send", PLC_OPK_P2P, PLC_PD_PP, 2, ms, dep);
  op.layer = -1;
  op.chunk = k;
  op.after_layers = 1;
  plc_ir_push(ar, l, &op);
}

/* The DP tail when chunks run as blocks of their own, and their sends
 * leave them (issue 10: a faster send lengthened the tail).  Interleaved,
 * p 2, vpp 2 (hand_run: a chunk's backward is 6 then 4 ms); each chunk's
 * backward ends with a send of s ms on a stream of its own, and the stage's
 * once all-reduce of 6 ms follows the last backward op.  Stage backward,
 * one microbatch: chunk 1 0-6-10, its send 10-(10 + s), chunk 0 10-16-20,
 * its send 20-(20 + s); the sync 20-26.  A block ends without its sends,
 * so the backward ends at 20 and the tail is 26 - 20 = 6 ms, whatever s
 * (t_b, the list's end with the send, was 23 for s = 3: a tail of 3 that
 * grew to 6 as the send got free).  And the step with free sends is never
 * longer.  Both on machine integers and on rationals (plc_sim_no_fast). */
static void test_tail_leaving_sends(void)
{
  static const char *streams[] = {"compute", "grad", "p2p"};
  plc_result res[2];
  for (int k = 0; k < 4; k++) { /* k >= 2: again on rationals only (sim.h) */
    plc_sim_no_fast = k >= 2;
    plc_ir_run *r = hand_run(2, 2, "interleaved", 1);
    r->streams = streams;
    r->nstreams = 3;
    for (int s = 0; s < 2; s++) {
      plc_ir_list *b = &r->stages[s].bwd;
      int n = b->n; /* chunk 1's two ops, then chunk 0's */
      leaving_send(b, 1, k % 2 ? 0 : 3, 1);
      leaving_send(b, 0, k % 2 ? 0 : 3, n - 1);
      grad_sync(b, 6, n - 1);
    }
    plc_result *x = &res[k % 2];
    if (k >= 2)
      plc_result_free(x);
    plc_analyse(x, r);
    CU_ASSERT_EQUAL(x->tail_kind, PLC_TAIL_SIMULATED);
    CU_ASSERT(plc_fx_q(x->tail, 6, 1000));
  }
  plc_sim_no_fast = 0;
  CU_ASSERT(plc_fx_q(res[0].t_b, 23, 1000)); /* the list's end counts the send */
  CU_ASSERT(mpq_cmp(res[1].step, res[0].step) <= 0);
  plc_result_free(&res[0]);
  plc_result_free(&res[1]);
}

/* Over random interleaved runs (p 2-4, vpp 2-3, uneven chunks) whose
 * chunks' backwards end with sends that leave them (0-5 ms each) and whose
 * stages sync gradients once (1-8 ms): making every send free never makes
 * the step longer, and never changes the DP tail (the tail is measured
 * without the sends, as blocks are; the rule before lengthened it). */
static void test_leaving_sends_properties(void)
{
  static const char *streams[] = {"compute", "grad", "p2p"};
  for (int iter = 0; iter < 60; iter++) {
    int p = (int)prop_rand(2, 4), v = (int)prop_rand(2, 3);
    long mu = p * prop_rand(2, 3), f[12], dg[12], wg[12], send[12], sync = prop_rand(1, 8);
    for (int i = 0; i < p * v; i++) {
      f[i] = prop_rand(1, 10);
      dg[i] = prop_rand(1, 12);
      wg[i] = prop_rand(1, 8);
      send[i] = prop_rand(0, 5);
    }
    plc_result res[2];
    for (int k = 0; k < 2; k++) {
      plc_ir_run *r = rand_run(p, v, "interleaved", mu, f, dg, wg);
      r->streams = streams;
      r->nstreams = 3;
      for (int s = 0; s < p; s++) {
        plc_ir_list *b = &r->stages[s].bwd;
        int n = b->n; /* chunk c's two ops at 2 (v - 1 - c) and after */
        for (int c = 0; c < v; c++)
          leaving_send(b, c, k ? 0 : send[s * v + c], 2 * (v - 1 - c) + 1);
        grad_sync(b, sync, n - 1);
      }
      plc_analyse(&res[k], r);
    }
    CU_ASSERT(mpq_cmp(res[1].step, res[0].step) <= 0);
    CU_ASSERT(mpq_equal(res[1].tail, res[0].tail));
    plc_result_free(&res[0]);
    plc_result_free(&res[1]);
  }
}

/* End to end: 4 layers over tp 2 x dp 2 x pp 2 on the fixture's machine.
 * Per layer forward: mm 2e12 FLOP = 40 ms, then a tp all-reduce of 1 GB on
 * the compute stream, 2(2-1)/2 x 10 ms + 2 x 1 us = 10.002 ms; backward:
 * bmm 4e12 FLOP = 80 ms, and a once dp all-reduce of 10.002 ms on grad.
 * Stage (2 layers): t_f = 100.004 ms, t_b = 160 ms, t = 260.004 ms;
 * mu = 8 / (2 x 1) = 4; bubble (2-1) x 260.004 = 260.004 ms; the last
 * sync ends 10.002 ms after the backward: tail 10.002 ms;
 * step = 4 x 260.004 + 260.004 + 10.002 = 1310.022 ms = 655011/500000 s;
 * eta = 4 x 240 / 1310.022 = 480000/655011; MFU = 4 x 2 stages x 12e12
 * / (2 x 1e14 x 1.310022) = 240000/655011; tokens/s = 8 x 1024 / 1.310022
 * = 4096000000/655011; 2 tp all-reduces in the communication rows. */
static void test_end_to_end(void)
{
  plc_fx f;
  CU_ASSERT_EQUAL_FATAL(plc_fx_load(&f, PLC_FX_MACHINE
    "model tiny { layers { dense = 4 } }\n"
    "framework fw { template dense {\n"
    "  op mm: compute { flops = 2e12 FLOP }\n"
    "  op ar: all_reduce(tp) { size = 1 GB; after = [mm] }\n"
    "  backward {\n"
    "    op bmm: compute { flops = 4e12 FLOP }\n"
    "    op g: all_reduce(dp) { size = 1 GB; stream = grad; once = true; after = [bmm] }\n"
    "  } } }\n"
    "train t { model = tiny; cluster = box; framework = fw; tp = 2; dp = 2; pp = 2\n"
    "  micro_batch = 1; global_batch = 8; seq = 1024 }\n"), 0);
  plc_drive_run *r = plc_fx_train(&f, "t");
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  const plc_result *res = &r->res;
  CU_ASSERT(plc_fx_qs(res->t_f, "25001/250000"));
  CU_ASSERT(plc_fx_qs(res->t_b, "4/25"));
  CU_ASSERT(plc_fx_qs(res->bubble, "65001/250000"));
  CU_ASSERT(plc_fx_qs(res->tail, "5001/500000"));
  CU_ASSERT(plc_fx_qs(res->step, "655011/500000"));
  CU_ASSERT(plc_fx_qs(res->eta, "480000/655011"));
  CU_ASSERT(res->mfu_known);
  CU_ASSERT(plc_fx_qs(res->mfu, "240000/655011"));
  CU_ASSERT(plc_fx_qs(res->tokens_per_s, "4096000000/655011"));
  CU_ASSERT_EQUAL_FATAL(res->nrows, 1); /* the forward tp all-reduces; g is `once` */
  CU_ASSERT_EQUAL(res->rows[0].dim, PLC_PD_TP);
  CU_ASSERT_EQUAL(res->rows[0].count, 2);
  CU_ASSERT(plc_fx_qs(res->rows[0].exposed, "5001/250000")); /* on the compute stream */
  plc_fx_free(&f);
}

/* Random run number iter of the re-analysis tests: its schedule by iter
 * (1f1b, interleaved, zb_h1, dualpipe, dualpipev in turn), uneven stages
 * and a once-per-step gradient sync in each stage's backward. */
static plc_ir_run *synced_run(int iter)
{
  static const char *const scheds[5] = {"1f1b", "interleaved", "zb_h1", "dualpipe", "dualpipev"};
  int sc = iter % 5, vpp = sc == 1 ? 2 : 1, n = sc == 1 ? 2 : 1;
  int p = sc == 3 ? 2 * (int)prop_rand(1, 3) : (int)prop_rand(2, 4);
  long mu = sc == 4 ? 2L * p : p * prop_rand(2, 3);
  long f[8], dg[8], wg[8];
  for (int i = 0; i < p * n; i++) {
    f[i] = prop_rand(1, 10);
    dg[i] = prop_rand(1, 12);
    wg[i] = prop_rand(1, 8);
  }
  plc_ir_run *r = rand_run(p, vpp, scheds[sc], mu, f, dg, wg);
  for (int st = 0; st < p; st++)
    grad_sync(&r->stages[st].bwd, prop_rand(1, 9), r->stages[st].bwd.n - 1);
  return r;
}

/* A re-analysis (plc_analyse_step) after every backward op got 3/2 of its
 * time gives what a fresh analysis of the changed run gives: step, work,
 * bubble, tail, t_f, t_b, t_w and, with F&B blocks, every device's F&B
 * counts (taken from the base, the schedule being the same) and times;
 * over random uneven runs of every schedule with a once-per-step gradient
 * sync in each stage's backward. */
static void test_step_reanalysis(void)
{
  int bad = 0, fb = 0;
  unsigned long seed = prop_seed; /* the other tests' runs stay theirs */
  mpq_t k;
  mpq_init(k);
  mpq_set_ui(k, 3, 2);
  for (int iter = 0; iter < 30; iter++) {
    plc_ir_run *r = synced_run(iter);
    int p = r->nstages;
    plc_result base, again, fresh;
    plc_analyse(&base, r);
    for (int st = 0; st < p; st++)
      for (int i = 0; i < r->stages[st].bwd.n; i++)
        mpq_mul(r->stages[st].bwd.ops[i].time, r->stages[st].bwd.ops[i].time, k);
    plc_analyse_step(&again, r, &base, PLC_CHANGED_BWD);
    plc_analyse(&fresh, r);
    bad += !mpq_equal(again.step, fresh.step) || !mpq_equal(again.work, fresh.work) ||
           !mpq_equal(again.bubble, fresh.bubble) || !mpq_equal(again.tail, fresh.tail) ||
           !mpq_equal(again.t_f, fresh.t_f) || !mpq_equal(again.t_b, fresh.t_b) ||
           !mpq_equal(again.t_w, fresh.t_w) || (!again.fbo) != (!fresh.fbo);
    for (int i = 0; again.fbo && fresh.fbo && i < 2 * p; i++) {
      fb++;
      bad += again.nfb[i] != fresh.nfb[i] || !mpq_equal(again.fbo[i], fresh.fbo[i]);
    }
    plc_result_free(&base);
    plc_result_free(&again);
    plc_result_free(&fresh);
  }
  mpq_clear(k);
  prop_seed = seed;
  CU_ASSERT_EQUAL(bad, 0);
  CU_ASSERT(fb > 0); /* DualPipe's and dualpipev's F&B blocks were compared */
}

/* The step first, then the rest (plc_analyse_first, plc_analyse_rest: a
 * search's candidate that may be cut) gives every figure plc_analyse
 * gives, over random uneven runs of every schedule with a gradient sync;
 * and the first part alone already has the step and what it is made of. */
static void test_first_then_rest(void)
{
  int bad = 0;
  unsigned long seed = prop_seed;
  for (int iter = 0; iter < 30; iter++) {
    plc_ir_run *r = synced_run(iter);
    plc_result whole, parts, first;
    plc_analyse(&whole, r);
    plc_analyse_first(&first, r);
    bad += !mpq_equal(first.step, whole.step) || !mpq_equal(first.work, whole.work) ||
           !mpq_equal(first.bubble, whole.bubble) || !mpq_equal(first.tail, whole.tail) ||
           first.critical != whole.critical;
    plc_analyse_rest(&first, 0);
    plc_analyse_first(&parts, r);
    plc_analyse_rest(&parts, 1);
    mpq_srcptr a[] = {whole.step, whole.t_f, whole.t_b, whole.t_w, whole.compute_mb,
                      whole.useful_mb, whole.stall_mb, whole.dev_compute, whole.dev_useful,
                      whole.eta, whole.busy, whole.mfu, whole.tokens_per_s};
    mpq_srcptr b[] = {parts.step, parts.t_f, parts.t_b, parts.t_w, parts.compute_mb,
                      parts.useful_mb, parts.stall_mb, parts.dev_compute, parts.dev_useful,
                      parts.eta, parts.busy, parts.mfu, parts.tokens_per_s};
    for (size_t i = 0; i < sizeof a / sizeof a[0]; i++)
      bad += !mpq_equal(a[i], b[i]);
    bad += whole.nrows != parts.nrows || whole.mfu_known != parts.mfu_known;
    for (int i = 0; i < whole.nrows && i < parts.nrows; i++)
      bad += !mpq_equal(whole.rows[i].exposed, parts.rows[i].exposed) ||
             !mpq_equal(whole.rows[i].time, parts.rows[i].time);
    plc_result_free(&whole);
    plc_result_free(&parts);
    plc_result_free(&first);
  }
  prop_seed = seed;
  CU_ASSERT_EQUAL(bad, 0);
}

/* ---- repeated blocks -------------------------------------------------------- */

/* A list of a prefix compute op then k copies of a block of b ops on
 * stream 0 (compute, useful or not, now and then pinned with no flops;
 * now and then a TP all-reduce), each after the op before it.  The copies
 * share their times and FLOPs by address but now and then: the first
 * copy's times equal ones of its own (as lowering's first copy), a copy's
 * op FLOPs of its own (equal or not). */
static void block_ops(plc_ir_list *l, plc_phase ph, int b, int k)
{
  mpq_ptr t[8], fl[8];
  int useful[8], pinned[8], coll[8];
  for (int j = 0; j < b; j++) {
    t[j] = q(prop_rand(1, 9), 1000);
    pinned[j] = prop_rand(0, 9) == 0;
    fl[j] = q(pinned[j] && prop_rand(0, 1) ? 0 : prop_rand(1, 99) * 1000000000L, 1);
    useful[j] = prop_rand(0, 3) > 0;
    coll[j] = j > 0 && prop_rand(0, 3) == 0;
  }
  int last = compute(l, ph, prop_rand(1, 9), prop_rand(1, 50), 0, -1);
  int own_first = prop_rand(0, 1);
  for (int c = 0; c < k; c++)
    for (int j = 0; j < b; j++) {
      plc_ir_op op = coll[j] ? comm_op("ar", PLC_OPK_ALL_REDUCE, PLC_PD_TP, 0, 1, last)
                             : (plc_ir_op){0};
      if (!coll[j]) {
        op.name = "c";
        op.kind = PLC_OPK_COMPUTE;
        op.useful = useful[j];
        op.pinned = pinned[j];
        op.size = q(0, 1);
        op.deps = plc_arena_alloc(ar, sizeof(int));
        op.deps[0] = last;
        op.ndeps = 1;
      }
      op.phase = ph;
      op.time = c == 0 && own_first ? q(1, 1) : t[j];
      if (c == 0 && own_first)
        mpq_set(op.time, t[j]);
      op.flops = fl[j];
      if (prop_rand(0, 30) == 0) { /* FLOPs of its own: equal, or not */
        op.flops = q(0, 1);
        mpq_set(op.flops, fl[j]);
        if (prop_rand(0, 1))
          mpq_set_si(op.flops, prop_rand(1, 99), 1);
      }
      last = plc_ir_push(ar, l, &op);
    }
}

/* Random runs of one stage whose lists repeat a block of ops (block_ops)
 * give the same MFU whether the FLOPs are tallied block by block (the
 * analysis's memo's regions, plc_sim_memo_blocks) or op by op
 * (plc_sim_no_steady: the memo finds none). */
static void test_blocks_mfu(void)
{
  int bad = 0, known = 0;
  unsigned long seed = prop_seed;
  for (int iter = 0; iter < 300; iter++) {
    plc_ir_run *r = hand_run(1, 1, "1f1b", 0);
    plc_ir_stage *st = &r->stages[0];
    memset(&st->fwd, 0, sizeof st->fwd);
    memset(&st->bwd, 0, sizeof st->bwd);
    block_ops(&st->fwd, PLC_PH_FWD, (int)prop_rand(1, 8), (int)prop_rand(1, 12));
    block_ops(&st->bwd, PLC_PH_BWD, (int)prop_rand(1, 8), (int)prop_rand(1, 12));
    if (prop_rand(0, 1))
      grad_sync(&st->bwd, prop_rand(1, 9), st->bwd.n - 1);
    plc_result res[2];
    for (int w = 0; w < 2; w++) {
      plc_sim_no_steady = w;
      plc_analyse(&res[w], r);
    }
    plc_sim_no_steady = 0;
    bad += res[0].mfu_known != res[1].mfu_known || !mpq_equal(res[0].mfu, res[1].mfu) ||
           !mpq_equal(res[0].step, res[1].step);
    known += res[0].mfu_known;
    plc_result_free(&res[0]);
    plc_result_free(&res[1]);
  }
  prop_seed = seed;
  CU_ASSERT_EQUAL(bad, 0);
  CU_ASSERT(known > 100);
}

int main(void)
{
  ar = plc_arena_new();
  static const plc_cu_test tests[] = {
    {"bubble of every schedule", test_bubbles},
    {"eta, busy, MFU, tokens/s", test_ratios},
    {"dualpipe, uneven stages: each device's two parts (hand case)", test_dualpipe_uneven},
    {"dualpipev, uneven chunks: each run alone (hand case)", test_dualpipev_uneven},
    {"interleaved, uneven chunks: each run alone (hand case)", test_interleaved_uneven},
    {"critical stage", test_critical_stage},
    {"critical stage not the guessed one (hand case)", test_critical_not_guessed},
    {"a re-analysis is a fresh analysis (random runs, every schedule)", test_step_reanalysis},
    {"the step first, then the rest: plc_analyse's figures (random runs)", test_first_then_rest},
    {"measured bubble: properties over random stages", test_bubble_properties},
    {"DP tail and optimizer", test_tail},
    {"DP tail: sends leaving chunks are not in it (hand case)", test_tail_leaving_sends},
    {"free leaving sends never lengthen the step or the tail (random runs)",
     test_leaving_sends_properties},
    {"a small plan end to end", test_end_to_end},
    {"repeated blocks: the MFU block by block is op by op's (random runs)", test_blocks_mfu},
    {NULL, NULL},
  };
  int status = plc_cu_run("analysis", tests);
  plc_arena_free(ar);
  return status;
}
