/* test_memory.c - device memory over a step (runtime/engine/memory.h): the
 * walk along a schedule's order against the in-flight counts of the
 * schedule module, the machine-integer walk against the rational one, and
 * whole plans whose memory sections add up to figures derived by hand in
 * the comments. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu_main.h"
#include "memory.h"
#include "plan_fixture.h"
#include "report.h"

/* ---- the walk ----------------------------------------------------------- */

/* Walk stage st of schedule k with per-chunk activations act[c] = c + 1
 * bytes (times scale) and buffers 0; returns the stage's figures. */
static void walk(plc_sched_kind k, int p, int v, int mu, int st, const char *scale,
                 plc_mem_stage *out)
{
  plc_sched s;
  plc_sched_params par = {p, v, mu, 0};
  PLC_CU_STR_EQ(plc_sched_generate(k, &par, &s) ? "refused" : "ok", "ok");
  int nc = s.nchunks;
  mpq_t *act = malloc((size_t)nc * sizeof *act), *buf = malloc((size_t)nc * sizeof *buf);
  for (int c = 0; c < nc; c++) {
    mpq_inits(act[c], buf[c], NULL);
    mpq_set_str(act[c], scale, 10);
    mpq_canonicalize(act[c]);
    mpq_t n;
    mpq_init(n);
    mpq_set_si(n, c + 1, 1);
    mpq_mul(act[c], act[c], n);
    mpq_clear(n);
  }
  plc_mem_stage_init(out);
  plc_mem_walk(s.blocks + s.start[st], s.start[st + 1] - s.start[st], nc, act, buf, out);
  for (int c = 0; c < nc; c++)
    mpq_clears(act[c], buf[c], NULL);
  free(act);
  free(buf);
  plc_sched_free(&s);
}

/* With one chunk per stage of equal activations, the peak is the
 * schedule's own in-flight count (plc_sched_inflight, tested against the
 * sources in test_schedule.c) times one microbatch's bytes: counting
 * until W when the schedule splits B, until B otherwise. */
static void test_walk_counts(void)
{
  static const plc_sched_kind kinds[] = {PLC_SCHED_GPIPE, PLC_SCHED_1F1B, PLC_SCHED_ZB_H1};
  for (size_t k = 0; k < 3; k++)
    for (int p = 1; p <= 6; p++)
      for (int mu = 1; mu <= 12; mu++) {
        plc_sched s;
        plc_sched_params par = {p, 1, mu, 0};
        if (plc_sched_generate(kinds[k], &par, &s)) {
          CU_ASSERT(kinds[k] == PLC_SCHED_ZB_H1 && mu < p); /* the hand schedule's rule */
          continue;
        }
        for (int st = 0; st < p; st++) {
          int b, w;
          plc_sched_inflight(&s, st, &b, &w);
          plc_mem_stage m;
          /* chunk c holds c + 1 units: stage st's chunk is st */
          walk(kinds[k], p, 1, mu, st, "3", &m);
          CU_ASSERT_EQUAL(m.inflight, w);
          CU_ASSERT_EQUAL(m.max_inflight, w);
          CU_ASSERT(plc_fx_q(m.activations, 3L * (st + 1) * w, 1));
          plc_mem_stage_clear(&m);
        }
        plc_sched_free(&s);
      }
}

/* Interleaved, p = 4, v = 2, mu = 8: stage 0 holds chunks 0 and 4
 * (1 and 5 units).  Megatron's warm-up on stage 0 is (p - 1) * 2 +
 * (v - 1) * p = 10 forwards: mb 0-3 of chunk 0, mb 0-3 of chunk 4, mb 4-5
 * of chunk 0; the first steady-state forward (mb 6 of chunk 0, as
 * Megatron's groups of p alternate chunks by mb 4-7 of chunk 0 first) then
 * makes 11 in flight: 7 of chunk 0 and 4 of chunk 4, 7 * 1 + 4 * 5 = 27
 * units, and no later point is higher (a backward frees a chunk-4 one
 * before each new chunk-4 forward). */
static void test_walk_interleaved(void)
{
  plc_mem_stage m;
  walk(PLC_SCHED_INTERLEAVED, 4, 2, 8, 0, "1", &m);
  CU_ASSERT_EQUAL(m.inflight, 11);
  CU_ASSERT(plc_fx_q(m.activations, 27, 1));
  plc_mem_stage_clear(&m);
}

/* DualPipe, p = 4, mu = 8: every stage reaches PP + 1 = 5 chunk
 * microbatches in flight (the DualPipe README's activation column). */
static void test_walk_dualpipe(void)
{
  for (int st = 0; st < 4; st++) {
    plc_mem_stage m;
    walk(PLC_SCHED_DUALPIPE, 4, 2, 8, st, "1", &m);
    CU_ASSERT_EQUAL(m.max_inflight, 5);
    plc_mem_stage_clear(&m);
  }
}

/* Activations too large for 62 bits take the rational path; the result is
 * the integer path's scaled: 2^70 per unit instead of 1. */
static void test_walk_big(void)
{
  plc_mem_stage a, b;
  walk(PLC_SCHED_INTERLEAVED, 4, 2, 8, 0, "1", &a);
  walk(PLC_SCHED_INTERLEAVED, 4, 2, 8, 0, "1180591620717411303424", &b); /* 2^70 */
  mpq_t k;
  mpq_init(k);
  mpq_set_str(k, "1180591620717411303424", 10);
  mpq_mul(k, k, a.activations);
  CU_ASSERT(mpq_equal(k, b.activations));
  CU_ASSERT_EQUAL(a.inflight, b.inflight);
  /* and fractions: 1/3 per unit scales to a third */
  plc_mem_stage c;
  walk(PLC_SCHED_INTERLEAVED, 4, 2, 8, 0, "1/3", &c);
  CU_ASSERT(plc_fx_q(c.activations, 27, 3));
  mpq_clear(k);
  plc_mem_stage_clear(&a);
  plc_mem_stage_clear(&b);
  plc_mem_stage_clear(&c);
}

/* ---- random properties ------------------------------------------------------- */

static unsigned long rng = 4242;
static int rnd(int n)
{
  rng = rng * 6364136223846793005UL + 1442695040888963407UL;
  return (int)((rng >> 33) % (unsigned long)n);
}

/* Over random schedules of every kind and random per-chunk activations and
 * buffers, on every stage:
 *   - bounds: activations + buffers at the peak is at least the first
 *     block's (its chunk's activations and buffers), and activations at most
 *     mu x the activations of the stage's chunks (all of them in flight);
 *     0 <= in flight <= max in flight <= mu x chunks per stage;
 *   - identity: activations at the peak = sum over chunks of (in flight of
 *     that chunk) x its bytes (checked through scaling: doubling every
 *     chunk's bytes doubles the peak exactly);
 *   - monotonicity: more bytes for one chunk never lowers the peak. */
static void test_walk_random(void)
{
  for (int iter = 0; iter < 300; iter++) {
    plc_sched_kind k = (plc_sched_kind)rnd(PLC_SCHED_NKINDS);
    plc_sched_params par = {1 + rnd(5), 1, 1 + rnd(12), 0};
    if (k == PLC_SCHED_INTERLEAVED)
      par.v = 2 + rnd(2);
    if (k >= PLC_SCHED_DUALPIPE)
      par.v = 2;
    plc_sched s;
    if (plc_sched_generate(k, &par, &s))
      continue;
    int nc = s.nchunks, per = nc / par.p;
    mpq_t *act = malloc((size_t)nc * sizeof *act), *buf = malloc((size_t)nc * sizeof *buf);
    mpq_t *two = malloc((size_t)nc * sizeof *two), *more = malloc((size_t)nc * sizeof *more);
    for (int c = 0; c < nc; c++) {
      mpq_inits(act[c], buf[c], two[c], more[c], NULL);
      mpq_set_si(act[c], rnd(10), (unsigned long)(1 + rnd(3)));
      mpq_canonicalize(act[c]);
      mpq_set_si(buf[c], rnd(5), 1);
      mpq_add(two[c], act[c], act[c]);
      mpq_set(more[c], act[c]);
    }
    int bump = rnd(nc);
    mpq_set_si(more[bump], 0, 1);
    mpq_add(more[bump], act[bump], buf[bump]);
    mpq_add(more[bump], more[bump], act[bump]); /* a bigger chunk: never less */
    for (int st = 0; st < par.p; st++) {
      const plc_sched_block *b = s.blocks + s.start[st];
      int n = s.start[st + 1] - s.start[st];
      plc_mem_stage m, m2, m3;
      plc_mem_stage_init(&m);
      plc_mem_stage_init(&m2);
      plc_mem_stage_init(&m3);
      mpq_t zero[64];
      for (int c = 0; c < nc && c < 64; c++)
        mpq_init(zero[c]);
      plc_mem_walk(b, n, nc, act, buf, &m);
      plc_mem_walk(b, n, nc, two, zero, &m2);
      plc_mem_walk(b, n, nc, more, buf, &m3);
      mpq_t lo, hi, x;
      mpq_inits(lo, hi, x, NULL);
      mpq_add(lo, act[b[0].chunk], buf[b[0].chunk]);
      CU_ASSERT(mpq_cmp(m.peak, lo) >= 0);
      for (int c = 0; c < nc; c++)
        if (plc_sched_stage_of(s.place, &par, c) == st)
          mpq_add(hi, hi, act[c]);
      mpq_set_si(x, par.mu, 1);
      mpq_mul(hi, hi, x);
      CU_ASSERT(mpq_cmp(m.activations, hi) <= 0);
      CU_ASSERT(m.inflight >= 0 && m.inflight <= m.max_inflight && m.max_inflight <= par.mu * per);
      /* doubling the bytes (no buffers) doubles the highest activations */
      plc_mem_stage m4;
      plc_mem_stage_init(&m4);
      plc_mem_walk(b, n, nc, act, zero, &m4);
      mpq_add(x, m4.activations, m4.activations);
      CU_ASSERT(mpq_equal(x, m2.activations));
      CU_ASSERT(mpq_cmp(m3.peak, m.peak) >= 0);
      mpq_clears(lo, hi, x, NULL);
      for (int c = 0; c < nc && c < 64; c++)
        mpq_clear(zero[c]);
      plc_mem_stage_clear(&m);
      plc_mem_stage_clear(&m2);
      plc_mem_stage_clear(&m3);
      plc_mem_stage_clear(&m4);
    }
    for (int c = 0; c < nc; c++)
      mpq_clears(act[c], buf[c], two[c], more[c], NULL);
    free(act);
    free(buf);
    free(two);
    free(more);
    plc_sched_free(&s);
  }
}

/* ---- whole plans ---------------------------------------------------------- */

#define MEM_MACHINE                                                              \
  "device gpu { peak = 100 TFLOP/s; memory = 80 GB; memory_reserve = 2 GB }\n"  \
  "link nv { bw = 100 GB/s }\n"                                                  \
  "cluster c { device = gpu; tier node { size = 8; link = nv } }\n"

/* Layers declare 1 GB weights, 2 GB grads, 3 GB optimizer, 1 GB
 * activations; buffers 1 GB on even layers, 4 GB on odd ones (the largest
 * counts, not the sum).  The pipeline template adds 5 GB of weights and
 * 2 GB of activations (embedding on stage 0, output layer on the last). */
static const char *mem_plan =
  MEM_MACHINE
  "model m { layers { dense = 8 } }\n"
  "framework f {\n"
  "  template dense {\n"
  "    memory { weights = 1 GB; grads = 2 GB; optimizer = 3 GB; activations = 1 GB\n"
  "             buffers = floor(layer.index / 2) * 2 == layer.index ? 1 GB : 4 GB }\n"
  "    op mm: compute { flops = 1 TFLOP }\n"
  "  }\n"
  "  template pipeline {\n"
  "    memory { weights = layer.first || layer.last ? 5 GB : 0 GB\n"
  "             activations = layer.first || layer.last ? 2 GB : 0 GB }\n"
  "  }\n"
  "}\n"
  "train t { model = m; cluster = c; framework = f; pp = 4; dp = 2; micro_batch = 1\n"
  "          global_batch = 16; seq = 1 }\n";

/* mem_plan with the train's layout from pp on replaced by tail, loaded and
 * its train t lowered; NULL on errors.  Free f with plc_fx_free. */
static plc_drive_run *variant(plc_fx *f, const char *tail)
{
  char *text = malloc(strlen(mem_plan) + strlen(tail) + 1);
  strcpy(text, mem_plan);
  strcpy(strstr(text, "pp = 4;"), tail);
  int errors = plc_fx_load(f, text);
  free(text);
  return errors ? NULL : plc_fx_train(f, "t");
}

/* pp 4, 1F1B, mu 8: stage s holds layers 2s and 2s+1 and has 4 - s in
 * flight.  Stage 0: weights 2 + 5 = 7 GB, grads 4, optimizer 6; one
 * microbatch keeps 2 + 2 = 4 GB, 4 in flight: 16 GB; buffers 4 GB;
 * peak 7 + 4 + 6 + 16 + 4 = 37 GB, headroom 78 - 37 = 41 GB.
 * Stage 1: 2 + 4 + 6 + 3 x 2 + 4 = 22 GB.  Stage 3: 7 + 4 + 6 + 1 x 4 + 4
 * = 25 GB. */
static void test_plan_1f1b(void)
{
  plc_fx f;
  CU_ASSERT_EQUAL_FATAL(plc_fx_load(&f, mem_plan), 0);
  plc_drive_run *r = plc_fx_train(&f, "t");
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  const plc_mem *m = r->res.mem;
  CU_ASSERT_FATAL(m && m->known && m->capacity_known);
  const long G = 1000000000L;
  CU_ASSERT(plc_fx_q(m->st[0].weights, 7 * G, 1));
  CU_ASSERT(plc_fx_q(m->st[0].activations, 16 * G, 1));
  CU_ASSERT(plc_fx_q(m->st[0].buffers, 4 * G, 1));
  CU_ASSERT(plc_fx_q(m->st[0].peak, 37 * G, 1));
  CU_ASSERT(plc_fx_q(m->st[0].headroom, 41 * G, 1));
  CU_ASSERT(plc_fx_q(m->st[1].peak, 22 * G, 1));
  CU_ASSERT(plc_fx_q(m->st[3].peak, 25 * G, 1));
  CU_ASSERT_EQUAL(m->worst, 0);
  CU_ASSERT(m->fits);
  plc_quantity q;
  plc_q_init(&q);
  CU_ASSERT_PTR_NULL(plc_report_figure(&r->res, "memory_headroom", &q));
  CU_ASSERT(plc_fx_q(q.v, 41 * G, 1)); /* the least of 41, 56, 55, 53 */
  CU_ASSERT_EQUAL(q.dim.e[PLC_DIM_BYTE], 1);
  plc_q_clear(&q);
  plc_fx_free(&f);
}

/* The same model with vpp 2 (interleaved, mu 8): stage 0 holds chunks 0
 * and 4 (layers 0 and 4); chunk 0 keeps 1 + 2 GB (the embedding), chunk 4
 * 1 GB.  Megatron's order on stage 0: warm-up F(mb 0-3, chunk 0), F(0-3,
 * 4), F(4-5, 0); then F(6, 0) (7 of chunk 0 and 4 of chunk 4 in flight:
 * 25 GB), B(0, 4), F(7, 0): 8 and 3 in flight, 8 x 3 + 3 x 1 = 27 GB, the
 * most (the next forwards are of chunk 4, each after a backward).  With 1
 * and 5 units instead (test_walk_interleaved) the first point is higher.
 * The last stage (3) holds chunks 3 and 7; the output layer's 2 GB go with
 * chunk 7.  Its warm-up is (v - 1) p = 4 forwards (mb 0-3 of chunk 3),
 * then F(mb 0, chunk 7) makes 5 in flight: 4 x 1 + 1 x 3 = 7 GB; later a
 * chunk-7 forward always follows a chunk-7 backward, so 7 GB is its
 * peak. */
static void test_plan_interleaved(void)
{
  plc_fx f;
  plc_drive_run *r = variant(&f, "pp = 4; vpp = 2; dp = 2; micro_batch = 1\n"
         "          global_batch = 16; seq = 1 }\n");
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  const plc_mem *m = r->res.mem;
  const long G = 1000000000L;
  CU_ASSERT(plc_fx_q(m->st[0].activations, 27 * G, 1));
  CU_ASSERT_EQUAL(m->st[0].inflight, 11);
  CU_ASSERT_EQUAL(m->st[0].max_inflight, 11);
  CU_ASSERT(plc_fx_q(m->st[3].activations, 7 * G, 1));
  plc_fx_free(&f);
}

/* Interleaved with fewer microbatches (2) than stages (4): Megatron refuses
 * the schedule, so no order exists and every microbatch of every chunk is
 * counted in flight, the most any order holds: stage 0's chunks keep 3 GB
 * (layer 0 and the embedding) and 1 GB (layer 4), so 2 x 4 = 8 GB, 4 in
 * flight, and the report says why. */
static void test_plan_fallback(void)
{
  plc_fx f;
  plc_drive_run *r = variant(&f, "pp = 4; vpp = 2; dp = 2; micro_batch = 1\n"
         "          global_batch = 4; seq = 1 }\n");
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  const plc_mem *m = r->res.mem;
  CU_ASSERT(plc_fx_q(m->st[0].activations, 8000000000L, 1));
  CU_ASSERT_EQUAL(m->st[0].inflight, 4);
  CU_ASSERT(strstr(m->why, "interleaved") != NULL);
  plc_fx_free(&f);
}

/* DualPipe (pp 4, mu 8): a stage holds model stages s and 3 - s, so stage
 * 0 has stage 0's and stage 3's static state: weights 2 x 1 + 5 + 2 x 1 +
 * 5 = 14 GB, grads 8 GB, optimizer 12 GB. */
static void test_plan_dualpipe(void)
{
  plc_fx f;
  plc_drive_run *r = variant(&f, "pp = 4; schedule = dualpipe; dp = 2; micro_batch = 1\n"
         "          global_batch = 16; seq = 1 }\n");
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  const plc_mem *m = r->res.mem;
  const long G = 1000000000L;
  CU_ASSERT(plc_fx_q(m->st[0].weights, 14 * G, 1));
  CU_ASSERT(plc_fx_q(m->st[0].grads, 8 * G, 1));
  CU_ASSERT(plc_fx_q(m->st[1].weights, 4 * G, 1)); /* stages 1 and 2: no embedding */
  plc_fx_free(&f);
}

/* DualPipe's activations with each model stage's sizes: layer i keeps
 * i + 1 GB per microbatch and weighs i + 1 GB, so over pp 4 (layers 2s
 * and 2s+1 on model stage s) a microbatch keeps 3, 7, 11 and 15 GB on
 * model stages 0 to 3.  Device 0 holds model stages 0 (chunk 0) and 3
 * (chunk 7, the reverse direction's first); its order (mu 8, schedule.c)
 * and level after each block, GB (F allocates its chunk's, a whole B or a
 * W frees it, an F&B allocates its forward's before its backward frees):
 *   F0.0 3, F1.0 6, F2.0 9, F4.7 24, B4.7 input 24, W4.7 9, F5.7 24,
 *   F&B(F3.0 27, B5.7 12), F&B(F6.7 27, B0.0 24), B6.7 9,
 *   F&B(F7.7 24, B1.0 21), B7.7 6, then 6, 3, 3, 0:
 * peak 27 GB = 4 x 3 + 1 x 15 (5 in flight; the first time it is reached
 * counts).  Device 1 (model stages 1, chunk 1, and 2, chunk 6):
 *   F0.1 7, F4.6 18, F1.1 25, F5.6 36, F2.1 43, B4.6 32, F&B(F6.6 43, 36),
 *   F&B(F3.1 43, 32), F&B(F7.6 43, 36), ...: peak 43 GB = 3 x 7 + 2 x 11.
 * Weights: device 0 1 + 2 + 7 + 8 = 18 GB, device 1 3 + 4 + 5 + 6 = 18 GB.
 * (Running device s's both parts at model stage s's sizes would give
 * 5 x 3 = 15 and 5 x 7 = 35 GB.) */
static void test_plan_dualpipe_activations(void)
{
  static const char *text =
    MEM_MACHINE
    "model m { layers { dense = 8 } }\n"
    "framework f {\n"
    "  template dense {\n"
    "    memory { weights = (layer.index + 1) * 1 GB; activations = (layer.index + 1) * 1 GB }\n"
    "    op mm: compute { flops = 1 TFLOP }\n"
    "  }\n"
    "}\n"
    "train t { model = m; cluster = c; framework = f; pp = 4; dp = 2; micro_batch = 1\n"
    "          global_batch = 16; seq = 1; schedule = dualpipe }\n";
  plc_fx f;
  CU_ASSERT_EQUAL_FATAL(plc_fx_load(&f, text), 0);
  plc_drive_run *r = plc_fx_train(&f, "t");
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  const plc_mem *m = r->res.mem;
  const long G = 1000000000L;
  CU_ASSERT(plc_fx_q(m->st[0].activations, 27 * G, 1));
  CU_ASSERT_EQUAL(m->st[0].inflight, 5);
  CU_ASSERT(plc_fx_q(m->st[1].activations, 43 * G, 1));
  CU_ASSERT(plc_fx_q(m->st[2].activations, 43 * G, 1));
  CU_ASSERT(plc_fx_q(m->st[3].activations, 27 * G, 1));
  CU_ASSERT(plc_fx_q(m->st[0].weights, 18 * G, 1));
  CU_ASSERT(plc_fx_q(m->st[1].weights, 18 * G, 1));
  plc_fx_free(&f);
}

/* dualpipev's V lowered: pp 2, four layers, layer i keeping i + 1 GB per
 * microbatch, one layer per chunk; stage 0 holds model chunks 0 (1 GB)
 * and 3 (4 GB), stage 1 chunks 1 (2 GB) and 2 (3 GB).  Stage 0's order
 * (schedule.c, mu 4) and level after each block, GB:
 *   F0.0 1, F1.0 2, F2.0 3, F0.3 7, B0.3 input 7, W0.3 3, F1.3 7,
 *   F&B(F3.0 8, B1.3 4), F&B(F2.3 8, B0.0 7), B2.3 3, ...: peak 8 GB
 *   = 4 x 1 + 1 x 4 (5 in flight, the first time it is reached);
 * stage 1: F0.1 2, F0.2 5, F1.1 7, F1.2 10, F2.1 12, B0.2 9,
 *   F&B(F2.2 12, 10), F&B(F3.1 12, 9), ...: peak 12 GB = 3 x 2 + 2 x 3.
 * (Round robin, layers 0 and 2 on stage 0, would give other sums.) */
static void test_plan_dualpipev(void)
{
  static const char *text =
    MEM_MACHINE
    "model m { layers { dense = 4 } }\n"
    "framework f {\n"
    "  template dense {\n"
    "    memory { activations = (layer.index + 1) * 1 GB }\n"
    "    op mm: compute { flops = 1 TFLOP }\n"
    "  }\n"
    "}\n"
    "train t { model = m; cluster = c; framework = f; pp = 2; dp = 2; micro_batch = 1\n"
    "          global_batch = 8; seq = 1; schedule = dualpipev }\n";
  plc_fx f;
  CU_ASSERT_EQUAL_FATAL(plc_fx_load(&f, text), 0);
  plc_drive_run *r = plc_fx_train(&f, "t");
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  const plc_mem *m = r->res.mem;
  const long G = 1000000000L;
  CU_ASSERT(plc_fx_q(m->st[0].activations, 8 * G, 1));
  CU_ASSERT_EQUAL(m->st[0].inflight, 5);
  CU_ASSERT(plc_fx_q(m->st[1].activations, 12 * G, 1));
  CU_ASSERT_EQUAL(m->st[1].inflight, 5);
  plc_fx_free(&f);
}

/* A train's memory_reserve overrides the device's 2 GB: 45 GB leaves
 * 35 GB, and stage 0's 37 GB do not fit (headroom -2 GB), which the driver
 * reports as a warning at the train. */
static void test_plan_reserve(void)
{
  plc_fx f;
  plc_drive_run *r = variant(&f, "pp = 4; dp = 2; micro_batch = 1\n"
                             "          global_batch = 16; seq = 1; memory_reserve = 45 GB }\n");
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  const plc_mem *m = r->res.mem;
  CU_ASSERT(!m->fits);
  CU_ASSERT(plc_fx_q(m->reserve, 45000000000L, 1));
  CU_ASSERT(plc_fx_q(m->st[0].headroom, -2000000000L, 1));
  CU_ASSERT(plc_fx_reported(&f, "train 't' does not fit in memory: stage 0 needs 37 GB"));
  plc_fx_free(&f);
}

/* The static state alone (plc_mem_static_unfit): stage 0's weights,
 * grads and optimizer are 7 + 4 + 6 = 17 GB (the other stages' less).
 * Reserve 64 GB leaves 16 GB: 17 passes it, so no order could fit, and
 * the walk agrees.  Reserve 63 GB leaves 17 GB: the static state fits
 * exactly, so it says nothing, though the peak (37 GB) does not fit.
 * Reserve 45 GB (35 GB usable, test_plan_reserve): nothing either. */
static void test_plan_static(void)
{
  static const char *const reserve[] = {"64", "63", "45"};
  static const int unfit[] = {1, 0, 0};
  for (int i = 0; i < 3; i++) {
    char tail[160];
    snprintf(tail, sizeof tail, "pp = 4; dp = 2; micro_batch = 1\n"
             "          global_batch = 16; seq = 1; memory_reserve = %s GB }\n", reserve[i]);
    plc_fx f;
    plc_drive_run *r = variant(&f, tail);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_EQUAL(plc_mem_static_unfit(r->ir), unfit[i]);
    CU_ASSERT(!r->res.mem->fits);
    plc_fx_free(&f);
  }
}

/* No capacity: peaks are known, headroom is not. */
static void test_plan_no_capacity(void)
{
  plc_fx f;
  char *text = malloc(strlen(mem_plan) + 1);
  strcpy(text, mem_plan);
  memcpy(strstr(text, "memory = 80 GB;"), "               ", 15);
  CU_ASSERT_EQUAL_FATAL(plc_fx_load(&f, text), 0);
  plc_drive_run *r = plc_fx_train(&f, "t");
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  CU_ASSERT(!r->res.mem->capacity_known && r->res.mem->fits);
  plc_quantity q;
  plc_q_init(&q);
  CU_ASSERT_PTR_NULL(plc_report_figure(&r->res, "peak_memory", &q));
  CU_ASSERT(plc_fx_q(q.v, 37000000000L, 1));
  CU_ASSERT_PTR_NOT_NULL(plc_report_figure(&r->res, "memory_headroom", &q));
  plc_q_clear(&q);
  plc_fx_free(&f);
  free(text);
}

int main(void)
{
  static const plc_cu_test tests[] = {
    {"walk: in flight as the schedule counts it", test_walk_counts},
    {"walk: interleaved chunks of different sizes", test_walk_interleaved},
    {"walk: dualpipe PP + 1", test_walk_dualpipe},
    {"walk: rational path equals the integer one", test_walk_big},
    {"walk: bounds, scaling and monotonicity over random schedules", test_walk_random},
    {"plan: 1f1b static, activations, buffers, headroom", test_plan_1f1b},
    {"plan: interleaved chunks", test_plan_interleaved},
    {"plan: dualpipe holds two parts", test_plan_dualpipe},
    {"plan: dualpipe activations, each part's sizes", test_plan_dualpipe_activations},
    {"plan: dualpipev's V, each chunk's sizes", test_plan_dualpipev},
    {"plan: no order, every microbatch in flight", test_plan_fallback},
    {"plan: train reserve, does not fit", test_plan_reserve},
    {"plan: no capacity", test_plan_no_capacity},
    {"plan: the static state alone does not fit", test_plan_static},
    {NULL, NULL},
  };
  return plc_cu_run("memory", tests);
}
