/* test_schedule.c - CUnit tests of the pipeline schedules as data
 * (runtime/engine/schedule.h): block orders against the sources, every
 * block once, in-flight counts, the closed-form bubbles as exact oracles
 * (and where they part from the simulation), custom orders, random
 * properties of the simulator, and its skipping of the steady phase's
 * repeats against the full walk, the mpz run and a reference that times
 * the blocks without the prepared order. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu_main.h"
#include "schedule.h"

/* ---- helpers ------------------------------------------------------------ */

static plc_sched gen(plc_sched_kind k, int p, int v, int mu, int group)
{
  plc_sched s;
  plc_sched_params par = {p, v, mu, group};
  const char *why = plc_sched_generate(k, &par, &s);
  PLC_CU_STR_EQ(why ? why : "ok", "ok");
  return s;
}

/* Stage st's order as "F0 B0' W0 FB3/5 ...": mb only (chunk given by the
 * stage for v = 1), ' on a split B.  With chunks: "F0.4". */
static const char *order(const plc_sched *s, int st, int chunks)
{
  static char buf[4096];
  size_t n = 0;
  buf[0] = 0;
  for (int i = s->start[st]; i < s->start[st + 1] && n + 40 < sizeof buf; i++) {
    const plc_sched_block *b = &s->blocks[i];
    if (n)
      buf[n++] = ' ';
    if (b->phase == PLC_SCHED_FB)
      n += (size_t)snprintf(buf + n, sizeof buf - n, "FB%d.%d/%d.%d", b->mb, b->chunk, b->mb2,
                            b->chunk2);
    else if (chunks)
      n += (size_t)snprintf(buf + n, sizeof buf - n, "%c%d.%d%s", "FBW"[b->phase], b->mb,
                            b->chunk, b->split ? "'" : "");
    else
      n += (size_t)snprintf(buf + n, sizeof buf - n, "%c%d%s", "FBW"[b->phase], b->mb,
                            b->split ? "'" : "");
  }
  return buf;
}

static int leading_f(const plc_sched *s, int st)
{
  int n = 0;
  for (int i = s->start[st]; i < s->start[st + 1] && s->blocks[i].phase == PLC_SCHED_F; i++)
    n++;
  return n;
}

static int count_phase(const plc_sched *s, int st, plc_sched_phase ph, int split)
{
  int n = 0;
  for (int i = s->start[st]; i < s->start[st + 1]; i++)
    if (s->blocks[i].phase == ph && (split < 0 || s->blocks[i].split == split))
      n++;
  return n;
}

/* Uniform times on every stage: f, b (whole backward), w, fb as p/q. */
static void set_times(plc_sched_times *t, int p, long fn, long bn, long wn, long fbn, long den)
{
  for (int i = 0; i < p; i++) {
    mpq_set_si(t[i].f, fn, (unsigned long)den);
    mpq_set_si(t[i].b, bn, (unsigned long)den);
    mpq_set_si(t[i].w, wn, (unsigned long)den);
    mpq_set_si(t[i].fb, fbn, (unsigned long)den);
    mpq_set_ui(t[i].p2p, 0, 1);
    mpq_canonicalize(t[i].f);
    mpq_canonicalize(t[i].b);
    mpq_canonicalize(t[i].w);
    mpq_canonicalize(t[i].fb);
  }
}

static void sim_ok(const plc_sched *s, const plc_sched_times *t, plc_sched_sim *sim)
{
  char msg[256];
  int ok = plc_sched_simulate(s, t, sim, msg, sizeof msg);
  PLC_CU_STR_EQ(ok ? "ok" : msg, "ok");
}

/* ---- the table ------------------------------------------------------------ */

static void test_table(void)
{
  static const char *const names[] = {"gpipe", "1f1b", "interleaved", "zb_h1", "dualpipe",
                                      "dualpipev"};
  for (int k = 0; k < PLC_SCHED_NKINDS; k++) {
    PLC_CU_STR_EQ(plc_sched_table[k].name, names[k]);
    CU_ASSERT_PTR_EQUAL(plc_sched_find(names[k]), &plc_sched_table[k]);
    CU_ASSERT(plc_sched_table[k].source && plc_sched_table[k].gen && plc_sched_table[k].check);
    /* 2 (F, B) a microbatch and chunk, 3 with zb_h1's W; F&B blocks vary */
    CU_ASSERT(plc_sched_table[k].per_mb == (k == PLC_SCHED_ZB_H1 ? 3 : k >= PLC_SCHED_DUALPIPE ? 0 : 2));
  }
  CU_ASSERT_PTR_NULL(plc_sched_find("zb_v"));
}

/* Placement: interleaved p=4 v=2: chunk 5 on stage 1; V p=4: chunk 6 on
 * stage 2*4-1-6 = 1; dualpipe p=4 mu=8: mb 5 runs chunks 4..7. */
static void test_placement(void)
{
  plc_sched_params par = {4, 2, 8, 0};
  int first, last;
  CU_ASSERT_EQUAL(plc_sched_stage_of(PLC_SCHED_PLACE_ROUND, &par, 5), 1);
  CU_ASSERT_EQUAL(plc_sched_stage_of(PLC_SCHED_PLACE_V, &par, 6), 1);
  CU_ASSERT_EQUAL(plc_sched_stage_of(PLC_SCHED_PLACE_BIDIR, &par, 4), 3);
  CU_ASSERT_EQUAL(plc_sched_nchunks(PLC_SCHED_PLACE_ROUND, &par), 8);
  plc_sched_mb_range(PLC_SCHED_PLACE_BIDIR, &par, 5, &first, &last);
  CU_ASSERT(first == 4 && last == 7);
  plc_sched_mb_range(PLC_SCHED_PLACE_BIDIR, &par, 3, &first, &last);
  CU_ASSERT(first == 0 && last == 3);
  CU_ASSERT_EQUAL(plc_sched_chunk_part(PLC_SCHED_PLACE_BIDIR, &par, 6), 2);
  CU_ASSERT_EQUAL(plc_sched_chunk_part(PLC_SCHED_PLACE_V, &par, 6), 6);
}

/* Dependencies: interleaved p=4 v=2, F(1, chunk 4) on stage 0 waits for
 * F(1, chunk 3) on stage 3; B(1, chunk 3) for F(1, 3) and B(1, 4).
 * DualPipe p=4 mu=8: mb 5 enters at chunk 4 (stage 3), so its F there
 * waits for nothing; an FB waits for its forward's and backward's. */
static void test_deps(void)
{
  plc_sched s = gen(PLC_SCHED_INTERLEAVED, 4, 2, 8, 0);
  plc_sched_dep d[4];
  plc_sched_block f = {PLC_SCHED_F, 0, 1, 4, -1, -1}, b = {PLC_SCHED_B, 0, 1, 3, -1, -1};
  CU_ASSERT_EQUAL(plc_sched_deps(&s, &f, d), 1);
  CU_ASSERT(d[0].phase == PLC_SCHED_F && d[0].mb == 1 && d[0].chunk == 3 && d[0].stage == 3);
  CU_ASSERT_EQUAL(plc_sched_deps(&s, &b, d), 2);
  CU_ASSERT(d[0].phase == PLC_SCHED_F && d[0].chunk == 3 && d[1].phase == PLC_SCHED_B &&
            d[1].chunk == 4 && d[1].stage == 0);
  plc_sched_free(&s);
  s = gen(PLC_SCHED_DUALPIPE, 4, 2, 8, 0);
  plc_sched_block f5 = {PLC_SCHED_F, 0, 5, 4, -1, -1}, b7 = {PLC_SCHED_B, 0, 5, 7, -1, -1};
  plc_sched_block fb = {PLC_SCHED_FB, 0, 6, 5, 0, 2};
  CU_ASSERT_EQUAL(plc_sched_deps(&s, &f5, d), 0);
  CU_ASSERT_EQUAL(plc_sched_deps(&s, &b7, d), 1); /* the last chunk of its direction */
  CU_ASSERT_EQUAL(plc_sched_deps(&s, &fb, d), 3);
  CU_ASSERT(d[0].chunk == 4 && d[0].stage == 3 && d[2].phase == PLC_SCHED_B && d[2].chunk == 3);
  plc_sched_free(&s);
}

/* ---- orders against the sources ------------------------------------------ */

/* Megatron 1F1B: warm-up min(p - s - 1, mu), then F/B pairs, then the
 * cool-down.  p=4 mu=6: stage 0 warms up 3, stage 3 none. */
static void test_1f1b_order(void)
{
  plc_sched s = gen(PLC_SCHED_1F1B, 4, 1, 6, 0);
  PLC_CU_STR_EQ(order(&s, 0, 0), "F0 F1 F2 F3 B0 F4 B1 F5 B2 B3 B4 B5");
  PLC_CU_STR_EQ(order(&s, 3, 0), "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5");
  plc_sched_free(&s);
  static const int cases[][2] = {{4, 8}, {4, 2}, {3, 5}, {1, 3}, {8, 3}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    int p = cases[c][0], mu = cases[c][1];
    s = gen(PLC_SCHED_1F1B, p, 1, mu, 0);
    for (int st = 0; st < p; st++) {
      int warm = p - st - 1 < mu ? p - st - 1 : mu;
      /* the first steady-state step is a forward too, unless all warmed */
      CU_ASSERT_EQUAL(leading_f(&s, st), warm < mu ? warm + 1 : mu);
    }
    plc_sched_free(&s);
  }
  s = gen(PLC_SCHED_GPIPE, 2, 1, 3, 0);
  PLC_CU_STR_EQ(order(&s, 1, 0), "F0 F1 F2 B0 B1 B2");
  plc_sched_free(&s);
}

/* Megatron's own example in get_schedule_table's comment: PP2, group N3,
 * M5, VP2: microbatch 0 1 2 0 1 2 3 4 3 4, chunk 0 0 0 1 1 1 0 0 1 1.
 * Warm-up (p - s - 1)*2 + (v - 1)*N: stage 0 2 + 3 = 5, stage 1 3.
 * Backward k runs the same microbatch on local chunk v-1-j. */
static void test_interleaved_order(void)
{
  plc_sched s = gen(PLC_SCHED_INTERLEAVED, 2, 2, 5, 3);
  /* stage 0: global chunk j*2 + 0 */
  PLC_CU_STR_EQ(order(&s, 0, 1),
                "F0.0 F1.0 F2.0 F0.2 F1.2 F2.2 B0.2 F3.0 B1.2 F4.0 B2.2 F3.2 B0.0 F4.2 B1.0 "
                "B2.0 B3.2 B4.2 B3.0 B4.0");
  CU_ASSERT_EQUAL(leading_f(&s, 0), 6); /* 5 warm-up + the first steady one */
  CU_ASSERT_EQUAL(leading_f(&s, 1), 4);
  plc_sched_free(&s);
  /* p=4 v=2 mu=8 (group p): warm-up 6+4, 4+4, 2+4, 0+4. */
  s = gen(PLC_SCHED_INTERLEAVED, 4, 2, 8, 0);
  for (int st = 0; st < 4; st++)
    CU_ASSERT_EQUAL(leading_f(&s, st), (4 - st - 1) * 2 + 4 + 1);
  plc_sched_free(&s);
  /* p=4 v=3 mu=4: warm-up 6 + 8 = 14 > 12 is capped at mu*v. */
  s = gen(PLC_SCHED_INTERLEAVED, 4, 3, 4, 0);
  CU_ASSERT_EQUAL(leading_f(&s, 0), 12);
  plc_sched_free(&s);
}

/* [ZB] get_hand_schedule(warmup_c=1), p=4 mu=6: stage 0 warms up 3 and
 * runs each W right after its B; stage 3 defers 3 Ws to the end. */
static void test_zb_h1_order(void)
{
  plc_sched s = gen(PLC_SCHED_ZB_H1, 4, 1, 6, 0);
  PLC_CU_STR_EQ(order(&s, 0, 0), "F0 F1 F2 F3 B0' W0 F4 B1' W1 F5 B2' W2 B3' W3 B4' W4 B5' W5");
  PLC_CU_STR_EQ(order(&s, 3, 0), "F0 B0' F1 B1' F2 B2' F3 B3' W0 F4 B4' W1 F5 B5' W2 W3 W4 W5");
  PLC_CU_STR_EQ(order(&s, 2, 0), "F0 F1 B0' F2 B1' F3 B2' W0 F4 B3' W1 F5 B4' W2 B5' W3 W4 W5");
  plc_sched_free(&s);
}

/* [DP] DualPipeV.step with 4 ranks and 10 micro-batches (its README
 * figure).  Rank r: step 1 (4-r-1)*2 F0, step 2 r+1 F0F1, step 3 4-r-1
 * B1W1F1, step 4 10-8+r+1 F0B1/F1B0 pairs (the last rank's first pair
 * unoverlapped), step 5 4-r-1 B1 F1B0, step 6 r+1 B1B0, step 7 4-r-1
 * W B0, step 8 r+1 W.  FB blocks: 2*step4 + step5 (- 1 on the last
 * rank); split Bs = Ws = step3 + (r+1) + step7. */
static void test_dualpipev_counts(void)
{
  plc_sched s = gen(PLC_SCHED_DUALPIPEV, 4, 2, 10, 0);
  for (int r = 0; r < 4; r++) {
    int step4 = 10 - 8 + r + 1, rest = 4 - r - 1;
    CU_ASSERT_EQUAL(count_phase(&s, r, PLC_SCHED_FB, -1), 2 * step4 + rest - (r == 3));
    CU_ASSERT_EQUAL(count_phase(&s, r, PLC_SCHED_W, -1), rest + r + 1 + rest);
    CU_ASSERT_EQUAL(count_phase(&s, r, PLC_SCHED_B, 1), rest + r + 1 + rest);
    /* the last rank has no step 3 and starts step 4 with its lone F0 */
    CU_ASSERT_EQUAL(leading_f(&s, r), rest * 2 + 2 * (r + 1) + (r == 3));
  }
  /* rank 3 (last): F0.3 F0.4 F1.3 F1.4 F2.3 F2.4 F3.3 F3.4 then step 4's
   * first pair unoverlapped: F4.3 B0.4 (whole), then FB(F4.4, B0.3). */
  const char *o = order(&s, 3, 1);
  CU_ASSERT(strncmp(o, "F0.3 F0.4 F1.3 F1.4 F2.3 F2.4 F3.3 F3.4 F4.3 B0.4 FB4.4/0.3", 59) == 0);
  plc_sched_free(&s);
}

/* DualPipeV's README figure (4 ranks, 10 micro-batches), devices 0 and 3
 * transcribed block by block: chunk 0..3 is the light forward direction,
 * 4..7 the way back; FBa.c/b.d is a forward of a on c overlapped with a
 * backward of b on d. */
static void test_dualpipev_figure(void)
{
  plc_sched s = gen(PLC_SCHED_DUALPIPEV, 4, 2, 10, 0);
  PLC_CU_STR_EQ(order(&s, 0, 1),
                "F0.0 F1.0 F2.0 F3.0 F4.0 F5.0 F6.0 F0.7 B0.7' W0.7 F1.7 B1.7' W1.7 F2.7 B2.7' "
                "W2.7 F3.7 FB7.0/3.7 FB4.7/0.0 FB8.0/4.7 FB5.7/1.0 FB9.0/5.7 FB6.7/2.0 B6.7 "
                "FB7.7/3.0 B7.7 FB8.7/4.0 B8.7 FB9.7/5.0 B9.7 B6.0' W6.0 B7.0' W7.0 B8.0' W8.0 "
                "B9.0' W9.0");
  PLC_CU_STR_EQ(order(&s, 3, 1),
                "F0.3 F0.4 F1.3 F1.4 F2.3 F2.4 F3.3 F3.4 F4.3 B0.4 FB4.4/0.3 FB5.3/1.4 FB5.4/1.3 "
                "FB6.3/2.4 FB6.4/2.3 FB7.3/3.4 FB7.4/3.3 FB8.3/4.4 FB8.4/4.3 FB9.3/5.4 FB9.4/5.3 "
                "B6.4 B6.3 B7.4 B7.3 B8.4' B8.3' B9.4' B9.3' W8.4 W8.3 W9.4 W9.3");
  plc_sched_free(&s);
}

/* Megatron's interleaved order rebuilt the way schedules.py does it: the
 * whole get_schedule_table as an array, warm-up forwards table[0..W),
 * then forward W+k and backward k, then the remaining backwards. */
static void test_interleaved_megatron(void)
{
  static const int grid[][4] = {{4, 2, 8, 0},  {4, 3, 12, 0}, {2, 4, 6, 0},   {4, 2, 9, 5},
                                {4, 2, 14, 5}, {3, 2, 3, 0},  {8, 2, 16, 0},  {2, 2, 5, 3},
                                {4, 2, 64, 0}, {3, 3, 51, 4}, {2, 4, 62, 3},  {4, 2, 46, 6},
                                {2, 2, 20, 2}, {5, 3, 82, 7}, {4, 4, 100, 0}, {2, 3, 34, 0}};
  int copied = 0;
  for (size_t c = 0; c < sizeof grid / sizeof grid[0]; c++) {
    int p = grid[c][0], v = grid[c][1], mu = grid[c][2], g = grid[c][3] ? grid[c][3] : p;
    int tmb[512], tch[512], n = 0;
    for (int m0 = 0; m0 < mu; m0 += g) {
      int hi = m0 + g >= mu ? mu : m0 + g;
      for (int j = 0; j < v; j++)
        for (int mb = m0; mb < hi; mb++)
          tmb[n] = mb, tch[n++] = j;
    }
    plc_sched s = gen(PLC_SCHED_INTERLEAVED, p, v, mu, grid[c][3]);
    for (int st = 0; st < p; st++) {
      int warm = (p - st - 1) * 2 + (v - 1) * g, i = s.start[st], ok = 1;
      warm = warm > n ? n : warm;
      for (int k = 0; k < warm; k++, i++)
        ok &= s.blocks[i].phase == PLC_SCHED_F && s.blocks[i].mb == tmb[k] &&
              s.blocks[i].chunk == tch[k] * p + st;
      for (int k = 0; k < n; k++) {
        if (k + warm < n) {
          ok &= s.blocks[i].phase == PLC_SCHED_F && s.blocks[i].mb == tmb[k + warm] &&
                s.blocks[i].chunk == tch[k + warm] * p + st;
          i++;
        }
        ok &= s.blocks[i].phase == PLC_SCHED_B && s.blocks[i].mb == tmb[k] &&
              s.blocks[i].chunk == (v - 1 - tch[k]) * p + st;
        i++;
      }
      PLC_CU_ASSERT_MSG(ok && i == s.start[st + 1], "interleaved order differs from Megatron's");
      copied += s.copy_m && s.copy[3 * st + 2] > s.copy[3 * st + 1];
    }
    plc_sched_free(&s);
  }
  CU_ASSERT(copied > 20); /* the generator's copies (checked above) are there */
}

/* [DP] DualPipe.step, 8 ranks and 20 micro-batches (its README figure):
 * half_rank h = min(r, 7-r), 4 ranks per half, 10 per direction.  Rank 0
 * first runs (4-0-1)*2 = 6 forwards of direction 0 (mbs 0..5, chunk 0);
 * rank 7 the same for direction 1 (mbs 10..15, chunk 2*8-1-7 = 8). */
static void test_dualpipe_counts(void)
{
  plc_sched s = gen(PLC_SCHED_DUALPIPE, 8, 2, 20, 0);
  for (int r = 0; r < 8; r++) {
    int h = r < 7 - r ? r : 7 - r, step4 = 10 - 8 + h + 1, rest = 4 - h - 1;
    int middle = r == 3 || r == 4;
    CU_ASSERT_EQUAL(count_phase(&s, r, PLC_SCHED_FB, -1), 2 * step4 + rest - middle);
    CU_ASSERT_EQUAL(count_phase(&s, r, PLC_SCHED_W, -1), 2 * rest + h + 1);
    CU_ASSERT_EQUAL(leading_f(&s, r), rest * 2 + 2 * (h + 1) + middle);
  }
  const char *o = order(&s, 0, 1);
  CU_ASSERT(strncmp(o, "F0.0 F1.0 F2.0 F3.0 F4.0 F5.0 F6.0 F10.15", 41) == 0);
  o = order(&s, 7, 1);
  CU_ASSERT(strncmp(o, "F10.8 F11.8 F12.8 F13.8 F14.8 F15.8 F16.8 F0.7", 46) == 0);
  plc_sched_free(&s);
}

/* ---- every block once, deadlock-free -------------------------------------- */

/* The validator counts every F and B of every microbatch's chunks once,
 * on the stage holding the chunk, and runs the order; it also recomputes
 * the split flags from the Ws present, which must agree with the
 * generators'. */
static void test_every_block_once(void)
{
  static const int grid[][3] = {{1, 1, 1}, {2, 2, 4}, {4, 2, 8}, {4, 3, 12}, {3, 2, 7},
                                {6, 2, 12}, {8, 2, 16}, {8, 2, 20}, {5, 2, 11}, {2, 2, 6}};
  int tried = 0;
  for (int k = 0; k < PLC_SCHED_NKINDS; k++)
    for (size_t g = 0; g < sizeof grid / sizeof grid[0]; g++) {
      plc_sched_params par = {grid[g][0], grid[g][1], grid[g][2], 0};
      if (k != PLC_SCHED_INTERLEAVED && k < PLC_SCHED_DUALPIPE)
        par.v = 1;
      plc_sched s;
      if (plc_sched_generate((plc_sched_kind)k, &par, &s))
        continue;
      tried++;
      plc_sched_block *copy = malloc((size_t)s.nblocks * sizeof *copy);
      memcpy(copy, s.blocks, (size_t)s.nblocks * sizeof *copy);
      char msg[256];
      int ok = plc_sched_validate(&s, msg, sizeof msg);
      PLC_CU_STR_EQ(ok ? "ok" : msg, "ok");
      int same = 1;
      for (int i = 0; i < s.nblocks; i++)
        same &= copy[i].phase == s.blocks[i].phase && copy[i].split == s.blocks[i].split &&
                copy[i].mb == s.blocks[i].mb && copy[i].chunk == s.blocks[i].chunk &&
                copy[i].mb2 == s.blocks[i].mb2 && copy[i].chunk2 == s.blocks[i].chunk2;
      CU_ASSERT(same);
      free(copy);
      plc_sched_free(&s);
    }
  CU_ASSERT(tried >= 40);
}

/* ---- in flight ------------------------------------------------------------- */

/* 1F1B: stage s warms up p-s-1 forwards and the first steady forward
 * makes p-s before a backward frees one: p - s (mu >= p).  GPipe: all mu.
 * Interleaved: warm-up + 1 chunk activations (capped at mu*v).  ZB-H1:
 * its Bs follow 1F1B's places, so p - s until B; stage s defers s Ws,
 * so p until W.  DualPipe: p+1 on every rank (the README's "PP+1"),
 * DualPipeV 2p+1 chunk activations (PP = 2p stages there). */
static void test_inflight(void)
{
  int b, w;
  plc_sched s = gen(PLC_SCHED_1F1B, 4, 1, 8, 0);
  for (int st = 0; st < 4; st++) {
    plc_sched_inflight(&s, st, &b, &w);
    CU_ASSERT(b == 4 - st && w == 4 - st);
  }
  plc_sched_free(&s);
  s = gen(PLC_SCHED_1F1B, 4, 1, 2, 0);
  plc_sched_inflight(&s, 0, &b, &w);
  CU_ASSERT_EQUAL(b, 2);
  plc_sched_free(&s);
  s = gen(PLC_SCHED_GPIPE, 3, 1, 5, 0);
  for (int st = 0; st < 3; st++) {
    plc_sched_inflight(&s, st, &b, &w);
    CU_ASSERT_EQUAL(b, 5);
  }
  plc_sched_free(&s);
  s = gen(PLC_SCHED_INTERLEAVED, 4, 2, 8, 0);
  for (int st = 0; st < 4; st++) {
    plc_sched_inflight(&s, st, &b, &w);
    CU_ASSERT_EQUAL(b, (4 - st - 1) * 2 + 4 + 1);
  }
  plc_sched_free(&s);
  s = gen(PLC_SCHED_ZB_H1, 4, 1, 8, 0);
  for (int st = 0; st < 4; st++) {
    plc_sched_inflight(&s, st, &b, &w);
    CU_ASSERT(b == 4 - st && w == 4);
  }
  plc_sched_free(&s);
  for (int p = 2; p <= 8; p += 2) {
    s = gen(PLC_SCHED_DUALPIPE, p, 2, 4 * p, 0);
    for (int st = 0; st < p; st++) {
      plc_sched_inflight(&s, st, &b, &w);
      CU_ASSERT(b == p + 1 && w == p + 1);
    }
    plc_sched_free(&s);
    s = gen(PLC_SCHED_DUALPIPEV, p, 2, 2 * p + 1, 0);
    for (int st = 0; st < p; st++) {
      plc_sched_inflight(&s, st, &b, &w);
      CU_ASSERT(b == 2 * p + 1 && w == 2 * p + 1);
    }
    plc_sched_free(&s);
  }
}

/* ---- the closed forms as exact oracles ------------------------------------ */

/* Simulated bubble of kind with uniform times (num/den) and no p2p, minus
 * the closed form; 0 when they agree exactly. */
static int oracle_gap(plc_sched_kind k, int p, int v, int mu, int g, const long t[4], long den)
{
  plc_sched s = gen(k, p, v, mu, g);
  plc_sched_times tm[16];
  plc_sched_times_init(tm, p);
  set_times(tm, p, t[0], t[1], t[2], t[3], den);
  plc_sched_sim sim;
  plc_sched_sim_init(&sim);
  sim_ok(&s, tm, &sim);
  /* closed form, in units of 1/den */
  long f = t[0], b = t[1], w = t[2], fb = t[3], form;
  switch (k) {
  case PLC_SCHED_GPIPE: case PLC_SCHED_1F1B: form = (p - 1) * (f + b); break;
  /* chunk times are the stage's t_f/v, t_b/v: (p-1)(t_f+t_b)/v */
  case PLC_SCHED_INTERLEAVED: form = (p - 1) * (v * f + v * b) / v; break;
  case PLC_SCHED_ZB_H1: form = (p - 1) * (f + b - 2 * w); break;
  case PLC_SCHED_DUALPIPE: form = (p / 2 - 1) * (fb + b - 3 * w); break;
  default: form = (2 * p / 2 - 1) * (fb + b - 3 * w); break; /* PP = 2p stages */
  }
  mpq_t q;
  mpq_init(q);
  mpq_set_si(q, form, (unsigned long)den);
  mpq_canonicalize(q);
  int gap = mpq_cmp(sim.bubble, q);
  mpq_clear(q);
  plc_sched_sim_clear(&sim);
  plc_sched_times_clear(tm, p);
  plc_sched_free(&s);
  return gap;
}

/* 1F1B and GPipe: exact for any mu >= 1 and any t_f, t_b.  Interleaved:
 * exact under Megatron's preconditions (mu mod group 0 or >= p). */
static void test_oracle_1f1b_interleaved(void)
{
  static const long times[][4] = {{1, 2, 0, 0}, {3, 3, 0, 0}, {5, 1, 0, 0}, {2, 7, 0, 0}};
  for (size_t i = 0; i < 4; i++)
    for (int p = 1; p <= 6; p++)
      for (int mu = 1; mu <= 2 * p + 3; mu++) {
        CU_ASSERT_EQUAL(oracle_gap(PLC_SCHED_1F1B, p, 1, mu, 0, times[i], 3), 0);
        CU_ASSERT_EQUAL(oracle_gap(PLC_SCHED_GPIPE, p, 1, mu, 0, times[i], 3), 0);
      }
  static const int il[][4] = {{4, 2, 8, 0}, {4, 3, 12, 0}, {2, 2, 6, 0}, {4, 2, 4, 0},
                              {2, 2, 5, 3}, {4, 2, 9, 5}, {3, 4, 9, 0}, {4, 2, 14, 5}};
  for (size_t i = 0; i < 4; i++)
    for (size_t c = 0; c < sizeof il / sizeof il[0]; c++)
      CU_ASSERT_EQUAL(oracle_gap(PLC_SCHED_INTERLEAVED, il[c][0], il[c][1], il[c][2], il[c][3],
                                 times[i], 5), 0);
}

/* ZB-H1: (p-1)(t_f + t_b - 2t_w), t_b the whole backward, is exact when
 * mu >= p, t_w <= t_f and t_w <= t_b - t_w (the paper's T_W <= T_F, T_B);
 * with mu = p - 1 or t_w above either, the simulation is longer. */
static void test_oracle_zb_h1(void)
{
  static const long ok[][4] = {{1, 2, 1, 0}, {3, 4, 2, 0}, {2, 5, 1, 0}, {2, 2, 0, 0},
                               {4, 6, 3, 0}, {3, 2, 1, 0}};
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
    for (int p = 1; p <= 6; p++)
      for (int mu = p; mu <= 2 * p + 2; mu++)
        CU_ASSERT_EQUAL(oracle_gap(PLC_SCHED_ZB_H1, p, 1, mu, 0, ok[i], 2), 0);
  static const long off[][4] = {{1, 4, 2, 0}, {2, 3, 2, 0}, {1, 1, 1, 0}};
  for (size_t i = 0; i < 3; i++)
    CU_ASSERT(oracle_gap(PLC_SCHED_ZB_H1, 4, 1, 8, 0, off[i], 1) > 0);
  static const long ok0[4] = {1, 2, 1, 0};
  CU_ASSERT(oracle_gap(PLC_SCHED_ZB_H1, 4, 1, 3, 0, ok0, 1) > 0);
}

/* DualPipe: (p/2-1)(t_FB + t_b - 3t_w) is exact when t_FB = t_f + t_b (no
 * overlap gain), t_b - t_w = t_f (the input-gradient backward as long as
 * the forward) and t_w <= t_f, for every even p and even mu >= 2p; the
 * README's figure has F = B_input = W.  DualPipeV: the same with PP = 2p
 * stages, (p-1)(...), for mu >= 2p. */
static void test_oracle_dualpipe(void)
{
  static const long ok[][4] = {{1, 2, 1, 3}, {2, 3, 1, 5}, {3, 3, 0, 6}, {3, 5, 2, 8},
                               {4, 7, 3, 11}};
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
    for (int p = 2; p <= 8; p += 2) {
      for (int mu = 2 * p; mu <= 4 * p; mu += 2)
        CU_ASSERT_EQUAL(oracle_gap(PLC_SCHED_DUALPIPE, p, 2, mu, 0, ok[i], 3), 0);
      for (int mu = 2 * p; mu <= 3 * p; mu++)
        CU_ASSERT_EQUAL(oracle_gap(PLC_SCHED_DUALPIPEV, p, 2, mu, 0, ok[i], 3), 0);
    }
  /* With overlap (t_FB < t_f + t_b) or t_b - t_w != t_f they part. */
  static const long off[][4] = {{2, 4, 1, 5}, {2, 2, 1, 4}, {1, 3, 1, 4}};
  for (size_t i = 0; i < 3; i++) {
    CU_ASSERT(oracle_gap(PLC_SCHED_DUALPIPE, 4, 2, 8, 0, off[i], 1) != 0);
    CU_ASSERT(oracle_gap(PLC_SCHED_DUALPIPE, 8, 2, 16, 0, off[i], 1) != 0);
  }
}

/* Uneven stages, 1F1B p=2 mu=2, stage 0 t_f=t_b=1, stage 1 t_f=t_b=2:
 * s0 F0 0-1 F1 1-2; s1 F0 1-3 B0 3-5 F1 5-7 B1 7-9; s0 B0 5-6 B1 9-10.
 * Makespan 10, critical stage 1 (work 8): bubble 2, while the closed form
 * on the critical stage's times gives (p-1)(2+2) = 4. */
static void test_uneven_parts(void)
{
  plc_sched s = gen(PLC_SCHED_1F1B, 2, 1, 2, 0);
  plc_sched_times t[2];
  plc_sched_times_init(t, 2);
  set_times(t, 2, 1, 1, 0, 0, 1);
  mpq_set_ui(t[1].f, 2, 1);
  mpq_set_ui(t[1].b, 2, 1);
  plc_sched_sim sim;
  plc_sched_sim_init(&sim);
  sim_ok(&s, t, &sim);
  CU_ASSERT(mpq_cmp_si(sim.makespan, 10, 1) == 0);
  CU_ASSERT_EQUAL(sim.critical, 1);
  CU_ASSERT(mpq_cmp_si(sim.bubble, 2, 1) == 0);
  CU_ASSERT(mpq_cmp_si(sim.idle[0], 6, 1) == 0);
  plc_sched_free(&s);
  /* p2p latency c = 1/2, p=2 mu=1, t_f=1 t_b=2: s0 F 0-1, s1 F 3/2-5/2,
   * B 5/2-9/2, s0 B 5-7: bubble 7-3 = 4 = (p-1)(t_f+t_b+2c), not 3. */
  s = gen(PLC_SCHED_1F1B, 2, 1, 1, 0);
  set_times(t, 2, 1, 2, 0, 0, 1);
  mpq_set_ui(t[0].p2p, 1, 2);
  mpq_set_ui(t[1].p2p, 1, 2);
  sim_ok(&s, t, &sim);
  CU_ASSERT(mpq_cmp_si(sim.bubble, 4, 1) == 0);
  plc_sched_free(&s);
  /* ZB-H1 p=2 mu=2, t_f=1 t_b=3 t_w=2 (T_B = 1 < T_W): s0 F0 0-1 F1 1-2;
   * s1 F0 1-2 B0 2-3 F1 3-4 B1 4-5 W0 5-7 W1 7-9; s0 B0 3-4 W0 4-6 B1 6-7
   * W1 7-9.  Work 8, bubble 1; the closed form gives 1+3-4 = 0. */
  s = gen(PLC_SCHED_ZB_H1, 2, 1, 2, 0);
  set_times(t, 2, 1, 3, 2, 0, 1);
  sim_ok(&s, t, &sim);
  CU_ASSERT(mpq_cmp_si(sim.makespan, 9, 1) == 0);
  CU_ASSERT(mpq_cmp_si(sim.bubble, 1, 1) == 0);
  plc_sched_free(&s);
  plc_sched_sim_clear(&sim);
  plc_sched_times_clear(t, 2);
}

/* ---- explicit orders -------------------------------------------------------- */

/* An order of p=2 stages, one chunk each, from a string per stage like
 * "F0 F1 B0 B1" (mb numbers; chunk = stage unless given as F0.1). */
static plc_sched custom(const char *s0, const char *s1, int mu)
{
  static plc_sched_block blocks[64];
  static int start[3];
  plc_sched s = {PLC_SCHED_PLACE_STAGE, {2, 1, mu, 0}, 2, 0, start, blocks, NULL, 0};
  const char *st[2] = {s0, s1};
  for (int k = 0; k < 2; k++) {
    start[k] = s.nblocks;
    for (const char *c = st[k]; *c;) {
      while (*c == ' ')
        c++;
      if (!*c)
        break;
      plc_sched_block *b = &blocks[s.nblocks++];
      b->phase = *c == 'F' ? PLC_SCHED_F : *c == 'B' ? PLC_SCHED_B : PLC_SCHED_W;
      b->split = 0;
      b->mb2 = b->chunk2 = -1;
      char *end;
      b->mb = (int32_t)strtol(c + 1, &end, 10);
      b->chunk = k;
      if (*end == '.')
        b->chunk = (int32_t)strtol(end + 1, &end, 10);
      c = end;
    }
  }
  start[2] = s.nblocks;
  return s;
}

static const char *check_custom(const char *s0, const char *s1, int mu)
{
  static char msg[256];
  plc_sched s = custom(s0, s1, mu);
  return plc_sched_validate(&s, msg, sizeof msg) ? "ok" : msg;
}

static void test_custom_orders(void)
{
  PLC_CU_STR_EQ(check_custom("F0 F1 B0 B1", "F0 B0 F1 B1", 2), "ok");
  /* ZB-style with a W: the B before it becomes split */
  plc_sched s = custom("F0 B0 W0", "F0 B0", 1);
  char msg[256];
  CU_ASSERT(plc_sched_validate(&s, msg, sizeof msg));
  CU_ASSERT(s.blocks[1].split == 1 && s.blocks[4].split == 0);
  PLC_CU_STR_EQ(check_custom("F0 F0 B0", "F0 B0", 1),
                "stage 0, block 1: F(mb 0, chunk 0): its forward appears twice");
  PLC_CU_STR_EQ(check_custom("F0 B0", "F0.0 B0", 1),
                "stage 1, block 0: F(mb 0, chunk 0): its chunk is on another stage");
  PLC_CU_STR_EQ(check_custom("F0 F1 B0 B1", "F0 B0 F1", 2),
                "B(mb 1, chunk 1) is missing (it belongs on stage 1)");
  PLC_CU_STR_EQ(check_custom("F0 B0 F2", "F0 B0", 1),
                "stage 0, block 2: F(mb 2, chunk 0): its microbatch is out of range");
  /* stage 1 puts B0 before F0: it waits for a block later on its own stage */
  PLC_CU_STR_EQ(check_custom("F0 B0", "B0 F0", 1),
                "deadlock: stage 1, block 0: B(mb 0, chunk 1) waits for F(mb 0, chunk 1), "
                "which comes later on stage 1");
  /* a cycle across stages: stage 0 wants B(0,1) before sending F1; stage 1
   * wants F(1,0) first */
  PLC_CU_STR_EQ(check_custom("F0 B0 F1 B1", "F1 B1 F0 B0", 2),
                "deadlock: stage 0, block 1: B(mb 0, chunk 0) waits for B(mb 0, chunk 1) on "
                "stage 1, which never runs");
  PLC_CU_STR_EQ(check_custom("F0 W0 B0", "F0 B0", 1),
                "deadlock: stage 0, block 1: W(mb 0, chunk 0) waits for B(mb 0, chunk 0), "
                "which comes later on stage 0");
}

/* Explicit orders with FB blocks: DualPipe p=2 mu=4 stage 0 is
 * F0.0 F2.3 F1.0 B2.3 FB3.3/0.0 B3.3 B1.0' W1.0; edit it. */
static void test_custom_fb(void)
{
  char msg[256];
  plc_sched s = gen(PLC_SCHED_DUALPIPE, 2, 2, 4, 0);
  plc_sched_block *fb = &s.blocks[4], *w = &s.blocks[7];
  CU_ASSERT(fb->phase == PLC_SCHED_FB && w->phase == PLC_SCHED_W);
  fb->mb2 = 1; /* the FB runs B(1, 0), which block 6 runs again */
  CU_ASSERT(!plc_sched_validate(&s, msg, sizeof msg));
  PLC_CU_STR_EQ(msg, "stage 0, block 6: B(mb 1, chunk 0): its backward appears twice");
  fb->mb2 = 0;
  w->mb = 0; /* a W for B(0,0), whose backward is inside the FB */
  CU_ASSERT(plc_sched_validate(&s, msg, sizeof msg));
  CU_ASSERT(s.blocks[4].split == 1 && s.blocks[6].split == 0);
  w->phase = PLC_SCHED_F; /* a second forward of (0, 0) */
  CU_ASSERT(!plc_sched_validate(&s, msg, sizeof msg));
  PLC_CU_STR_EQ(msg, "stage 0, block 7: F(mb 0, chunk 0): its forward appears twice");
  plc_sched_free(&s);
}

/* ---- preconditions ------------------------------------------------------------ */

static const char *why(plc_sched_kind k, int p, int v, int mu, int g)
{
  plc_sched s;
  plc_sched_params par = {p, v, mu, g};
  const char *w = plc_sched_generate(k, &par, &s);
  if (!w)
    plc_sched_free(&s);
  return w ? w : "ok";
}

static void test_preconditions(void)
{
  PLC_CU_STR_EQ(why(PLC_SCHED_1F1B, 4, 2, 8, 0), "this schedule places one chunk per stage (v = 1)");
  PLC_CU_STR_EQ(why(PLC_SCHED_1F1B, 4, 1, 0, 0), "a schedule needs p, v and mu of at least 1");
  /* mu=6, p=4: 6 mod 4 = 2 < 4 */
  PLC_CU_STR_EQ(why(PLC_SCHED_INTERLEAVED, 4, 2, 6, 0),
                "interleaved needs mu mod the microbatch group (default p) to be 0 or at least "
                "p, as Megatron-LM requires (else dependency bubbles)");
  PLC_CU_STR_EQ(why(PLC_SCHED_INTERLEAVED, 4, 2, 9, 5), "ok"); /* 9 mod 5 = 4 >= 4 */
  PLC_CU_STR_EQ(why(PLC_SCHED_INTERLEAVED, 4, 2, 3, 0),
                "interleaved needs the microbatch group (default p) within [p, mu]: Megatron-LM "
                "requires microbatch_group_size_per_vp_stage in [PP, M]");
  PLC_CU_STR_EQ(why(PLC_SCHED_INTERLEAVED, 4, 1, 8, 0),
                "interleaved needs v >= 2 chunks per stage (v = 1 is 1f1b)");
  PLC_CU_STR_EQ(why(PLC_SCHED_ZB_H1, 4, 1, 2, 0),
                "zb_h1 needs mu >= p - 1 microbatches (its p - 1 - s warm-up forwards)");
  PLC_CU_STR_EQ(why(PLC_SCHED_DUALPIPE, 3, 2, 12, 0), "dualpipe needs an even number of stages p");
  PLC_CU_STR_EQ(why(PLC_SCHED_DUALPIPE, 4, 2, 9, 0),
                "dualpipe needs an even mu >= 2p microbatches (half enter at each end)");
  PLC_CU_STR_EQ(why(PLC_SCHED_DUALPIPE, 4, 2, 6, 0),
                "dualpipe needs an even mu >= 2p microbatches (half enter at each end)");
  PLC_CU_STR_EQ(why(PLC_SCHED_DUALPIPEV, 4, 2, 7, 0), "dualpipev needs mu >= 2p microbatches");
  PLC_CU_STR_EQ(why(PLC_SCHED_DUALPIPEV, 4, 1, 8, 0), "dualpipev places two chunks per stage (v = 2)");
  PLC_CU_STR_EQ(why(PLC_SCHED_GPIPE, 1000, 1, 1000000, 0),
                "a schedule of more than 2^24 blocks is not supported");
  PLC_CU_STR_EQ(why((plc_sched_kind)99, 2, 1, 2, 0), "unknown schedule");
}

/* ---- random properties ----------------------------------------------------------- */

static unsigned long rng = 12345;
static int rnd(int n)
{
  rng = rng * 6364136223846793005UL + 1442695040888963407UL;
  return (int)((rng >> 33) % (unsigned long)n);
}

static void rnd_q(mpq_t q, int maxnum)
{
  mpq_set_si(q, rnd(maxnum + 1), (unsigned long)(1 + rnd(4)));
  mpq_canonicalize(q);
}

/* A random valid schedule of small size. */
static plc_sched rnd_sched(void)
{
  for (;;) {
    plc_sched_kind k = (plc_sched_kind)rnd(PLC_SCHED_NKINDS);
    plc_sched_params par = {1 + rnd(5), 1, 1 + rnd(13), 0};
    if (k == PLC_SCHED_INTERLEAVED)
      par.v = 2 + rnd(2);
    if (k >= PLC_SCHED_DUALPIPE)
      par.v = 2;
    plc_sched s;
    if (!plc_sched_generate(k, &par, &s))
      return s;
  }
}

static void rnd_times(plc_sched_times *t, int p)
{
  for (int i = 0; i < p; i++) {
    rnd_q(t[i].f, 9);
    rnd_q(t[i].w, 5);
    rnd_q(t[i].b, 9);
    mpq_add(t[i].b, t[i].b, t[i].w); /* w <= b */
    rnd_q(t[i].fb, 15);
    rnd_q(t[i].p2p, 2);
  }
}

/* makespan >= every stage's work; bubble, idle >= 0; making one block
 * kind of one stage longer (w together with b, so that the split B stays)
 * never makes the makespan shorter. */
static void test_random_properties(void)
{
  plc_sched_sim sim, sim2;
  plc_sched_sim_init(&sim);
  plc_sched_sim_init(&sim2);
  plc_sched_times t[8];
  plc_sched_times_init(t, 8);
  mpq_t d;
  mpq_init(d);
  for (int it = 0; it < 400; it++) {
    plc_sched s = rnd_sched();
    int p = s.par.p;
    rnd_times(t, p);
    sim_ok(&s, t, &sim);
    for (int st = 0; st < p; st++) {
      CU_ASSERT(mpq_cmp(sim.makespan, sim.busy[st]) >= 0);
      CU_ASSERT(mpq_sgn(sim.idle[st]) >= 0);
    }
    CU_ASSERT(mpq_sgn(sim.bubble) >= 0);
    int st = rnd(p), field = rnd(5);
    mpq_set_si(d, 1 + rnd(7), (unsigned long)(1 + rnd(3)));
    mpq_canonicalize(d);
    mpq_ptr fld[5] = {t[st].f, t[st].b, t[st].w, t[st].fb, t[st].p2p};
    mpq_add(fld[field], fld[field], d);
    if (field == 2)
      mpq_add(t[st].b, t[st].b, d);
    sim_ok(&s, t, &sim2);
    PLC_CU_ASSERT_MSG(mpq_cmp(sim2.makespan, sim.makespan) >= 0, "a longer block shortened the step");
    plc_sched_free(&s);
  }
  mpq_clear(d);
  plc_sched_times_clear(t, 8);
  plc_sched_sim_clear(&sim);
  plc_sched_sim_clear(&sim2);
}

static int same_results(const plc_sched_sim *a, const plc_sched_sim *b)
{
  int same = mpq_equal(a->makespan, b->makespan) && mpq_equal(a->bubble, b->bubble) &&
             a->critical == b->critical;
  for (int st = 0; st < a->p; st++)
    same &= mpq_equal(a->busy[st], b->busy[st]) && mpq_equal(a->idle[st], b->idle[st]) &&
            mpq_equal(a->warmup[st], b->warmup[st]) && mpq_equal(a->steady[st], b->steady[st]) &&
            mpq_equal(a->cooldown[st], b->cooldown[st]);
  return same;
}

/* The machine-integer path over a common denominator gives exactly the
 * mpz run's figures (the warm-up, steady and cool-down idle too); times
 * whose scaled values or whole step do not fit fall back to mpz: four
 * primes near 2^31 (2^31-1, -19, -61, -69) make a common denominator of
 * 124 bits, past the 128-bit path's quarter range (and the 64-bit one's). */
static void test_fast_path_exact(void)
{
  plc_sched_sim fast, slow, lazy;
  plc_sched_sim_init(&fast);
  plc_sched_sim_init(&slow);
  plc_sched_sim_init(&lazy);
  slow.exact_only = 1;
  lazy.lazy = 1;
  plc_sched_times t[8];
  plc_sched_times_init(t, 8);
  for (int it = 0; it < 300; it++) {
    plc_sched s = rnd_sched();
    rnd_times(t, s.par.p);
    sim_ok(&s, t, &fast);
    sim_ok(&s, t, &slow);
    sim_ok(&s, t, &lazy);
    CU_ASSERT(fast.used_fast && !slow.used_fast);
    PLC_CU_ASSERT_MSG(same_results(&fast, &slow), "machine-integer and mpz runs differ");
    /* a lazy run: the step's figures at once, a stage's when asked */
    CU_ASSERT(lazy.pending && !fast.pending && !slow.pending);
    CU_ASSERT(mpq_equal(lazy.makespan, fast.makespan) && mpq_equal(lazy.bubble, fast.bubble) &&
              lazy.critical == fast.critical);
    for (int st = s.par.p - 1; st >= 0; st--)
      plc_sched_sim_stage(&lazy, st);
    PLC_CU_ASSERT_MSG(same_results(&lazy, &slow), "a lazy run's stage figures differ");
    plc_sched_free(&s);
  }
  plc_sched_sim_clear(&lazy);
  plc_sched s = gen(PLC_SCHED_1F1B, 4, 1, 8, 0);
  set_times(t, 4, 1, 2, 0, 0, 1);
  mpq_set_ui(t[0].f, 5, 2147483647UL);
  mpq_set_ui(t[1].b, 7, 2147483629UL);
  mpq_set_ui(t[2].f, 3, 2147483587UL);
  mpq_set_ui(t[3].b, 11, 2147483579UL);
  sim_ok(&s, t, &fast);
  sim_ok(&s, t, &slow);
  CU_ASSERT(!fast.used_fast);
  CU_ASSERT(same_results(&fast, &slow));
  /* two odd denominators two apart near 2^35 (2^35-31, 2^35-33), so
   * coprime: a common denominator of 70 bits, past one limb (scaled through mpz, each time's quotient kept
   * while the denominator repeats) and within the 128-bit path */
  set_times(t, 4, 1, 2, 0, 0, 1);
  mpq_set_ui(t[0].f, 5, 34359738337UL);
  mpq_set_ui(t[1].b, 7, 34359738335UL);
  mpq_set_ui(t[2].f, 3, 34359738337UL);
  mpq_set_ui(t[2].b, 11, 34359738337UL);
  sim_ok(&s, t, &fast);
  sim_ok(&s, t, &slow);
  CU_ASSERT(fast.used_fast && mpz_sizeinbase(fast.den, 2) > 64);
  CU_ASSERT(same_results(&fast, &slow));
  plc_sched_free(&s);
  plc_sched_times_clear(t, 8);
  plc_sched_sim_clear(&fast);
  plc_sched_sim_clear(&slow);
}

/* A schedule prepared once (plc_sched_prepare) and simulated again with
 * other times, on either path, gives each time the figures of an mpz run
 * that prepares it itself, with times that make some blocks negative too
 * (w > b: a stage can then be free before its own earlier blocks end, and
 * a dependency on one of them counts); a preparation for other flags is
 * not used. */
static void test_prepared_reruns(void)
{
  plc_sched_sim kept, fresh;
  plc_sched_sim_init(&kept);
  plc_sched_times t[16];
  plc_sched_times_init(t, 16);
  char msg[256];
  for (int it = 0; it < 60; it++) {
    plc_sched s = rnd_sched();
    plc_sched_prep *prep = plc_sched_prepare(&s, 0, 0, msg, sizeof msg);
    PLC_CU_STR_EQ(prep ? "ok" : msg, "ok");
    kept.prep = prep;
    for (int run = 0; run < 6; run++) {
      kept.exact_only = run % 2;
      kept.per_chunk = run == 5; /* not what prep was made for */
      int n = kept.per_chunk ? s.nchunks : s.par.p;
      rnd_times(t, n);
      if (run % 3 == 2) /* a B shorter than its W: b - w < 0 */
        mpq_set_si(t[rnd(n)].w, 20, 1);
      plc_sched_sim_init(&fresh);
      fresh.exact_only = 1;
      fresh.per_chunk = kept.per_chunk;
      sim_ok(&s, t, &kept);
      sim_ok(&s, t, &fresh);
      PLC_CU_ASSERT_MSG(same_results(&kept, &fresh), "a prepared rerun differs");
      plc_sched_sim_clear(&fresh);
    }
    kept.prep = NULL;
    plc_sched_prep_free(prep);
    plc_sched_free(&s);
  }
  plc_sched_times_clear(t, 16);
  plc_sched_sim_clear(&kept);
}

/* The idle phases as schedule.h defines them, from each block's recorded
 * start and end: the gaps before a stage's blocks up to its first that is
 * not an F are warm-up, the next ones up to its last F or F&B steady. */
static void test_idle_phases_recorded(void)
{
  plc_sched_sim sim;
  plc_sched_sim_init(&sim);
  plc_sched_times t[8];
  plc_sched_times_init(t, 8);
  mpq_t warm, steady, gap, free_at;
  mpq_inits(warm, steady, gap, free_at, NULL);
  for (int it = 0; it < 100; it++) {
    plc_sched s = rnd_sched();
    rnd_times(t, s.par.p);
    mpq_t *rs = malloc((size_t)s.nblocks * sizeof *rs), *re = malloc((size_t)s.nblocks * sizeof *re);
    for (int i = 0; i < s.nblocks; i++)
      mpq_inits(rs[i], re[i], NULL);
    sim.rec_start = rs;
    sim.rec_end = re;
    sim_ok(&s, t, &sim);
    for (int st = 0; st < s.par.p; st++) {
      int first_b = s.start[st + 1], last_f = -1;
      for (int i = s.start[st]; i < s.start[st + 1]; i++) {
        int ph = s.blocks[i].phase;
        if (ph != PLC_SCHED_F && first_b == s.start[st + 1])
          first_b = i;
        if (ph == PLC_SCHED_F || ph == PLC_SCHED_FB)
          last_f = i;
      }
      mpq_set_ui(warm, 0, 1);
      mpq_set_ui(steady, 0, 1);
      mpq_set_ui(free_at, 0, 1);
      for (int i = s.start[st]; i < s.start[st + 1]; i++) {
        mpq_sub(gap, rs[i], free_at);
        if (i <= first_b)
          mpq_add(warm, warm, gap);
        else if (i <= last_f)
          mpq_add(steady, steady, gap);
        mpq_set(free_at, re[i]);
      }
      PLC_CU_ASSERT_MSG(mpq_equal(warm, sim.warmup[st]) && mpq_equal(steady, sim.steady[st]),
                        "idle phases differ from the recorded blocks'");
    }
    for (int i = 0; i < s.nblocks; i++)
      mpq_clears(rs[i], re[i], NULL);
    free(rs);
    free(re);
    plc_sched_free(&s);
  }
  sim.rec_start = sim.rec_end = NULL;
  mpq_clears(warm, steady, gap, free_at, NULL);
  plc_sched_times_clear(t, 8);
  plc_sched_sim_clear(&sim);
}

/* Times per chunk (sim->per_chunk, DualPipe's two model stages per
 * device): with each device's two entries equal to one per-stage entry
 * (fb = f + b) the run is the per-stage run; with random entries the
 * machine-integer and mpz runs agree, and a device's work is mu/2 x
 * (f + b) of each of its entries (every microbatch of a direction runs its
 * F and its whole backward there once), the rule the bubble subtracts. */
static void test_per_chunk_times(void)
{
  plc_sched_sim a, b;
  plc_sched_sim_init(&a);
  plc_sched_sim_init(&b);
  plc_sched_times t[4], tc[8];
  plc_sched_times_init(t, 4);
  plc_sched_times_init(tc, 8);
  mpq_t w, x;
  mpq_inits(w, x, NULL);
  for (int it = 0; it < 200; it++) {
    int p = 2 + 2 * rnd(2), mu = 2 * p + 2 * rnd(3);
    plc_sched s = gen(it % 2 ? PLC_SCHED_DUALPIPE : PLC_SCHED_DUALPIPEV, p, 2, mu, 0);
    rnd_times(t, p);
    for (int i = 0; i < 2 * p; i++) {
      const plc_sched_times *o = &t[i / 2];
      mpq_set(tc[i].f, o->f);
      mpq_set(tc[i].b, o->b);
      mpq_set(tc[i].w, o->w);
      mpq_set(tc[i].p2p, o->p2p);
    }
    for (int i = 0; i < p; i++)
      mpq_add(t[i].fb, t[i].f, t[i].b);
    for (int i = 0; i < 2 * p; i++)
      mpq_add(tc[i].fb, tc[i].f, tc[i].b);
    a.per_chunk = 0;
    b.per_chunk = 1;
    sim_ok(&s, t, &a);
    sim_ok(&s, tc, &b);
    PLC_CU_ASSERT_MSG(same_results(&a, &b), "per-chunk entries equal per stage differ");
    rnd_times(tc, 2 * p);
    for (int i = 0; i < 2 * p; i++)
      mpq_add(tc[i].fb, tc[i].f, tc[i].b);
    a.per_chunk = b.per_chunk = 1;
    a.exact_only = 1;
    sim_ok(&s, tc, &a);
    sim_ok(&s, tc, &b);
    CU_ASSERT(b.used_fast && !a.used_fast);
    PLC_CU_ASSERT_MSG(same_results(&a, &b), "machine-integer and mpz per-chunk runs differ");
    a.exact_only = 0;
    for (int st = 0; st < p && it % 2; st++) {
      mpq_add(w, tc[2 * st].f, tc[2 * st].b);
      mpq_add(w, w, tc[2 * st + 1].f);
      mpq_add(w, w, tc[2 * st + 1].b);
      mpq_set_si(x, mu, 2);
      mpq_canonicalize(x);
      mpq_mul(w, w, x);
      PLC_CU_ASSERT_MSG(mpq_equal(w, b.busy[st]), "a DualPipe device's work");
    }
    plc_sched_free(&s);
  }
  mpq_clears(w, x, NULL);
  plc_sched_times_clear(t, 4);
  plc_sched_times_clear(tc, 8);
  plc_sched_sim_clear(&a);
  plc_sched_sim_clear(&b);
}

/* ---- the steady phase skipped --------------------------------------------- */

/* The reference: each block's start and end by passes over the stages,
 * each running its next block once every block it waits for has ended
 * (found by name among all the blocks), without plc_sched_prepare's
 * order; per-stage times (per_chunk off).  Fills makespan, busy and the
 * idle phases as schedule.h defines them; 0 on a deadlock. */
static int naive_sim(const plc_sched *s, const plc_sched_times *t, mpq_t makespan, mpq_t *busy,
                     mpq_t *warm, mpq_t *steady)
{
  int n = s->nblocks, p = s->par.p, left = n;
  mpq_t *st_end = malloc((size_t)n * sizeof *st_end), *free_at = malloc((size_t)p * sizeof *free_at);
  int *done = calloc((size_t)n, sizeof *done), *cur = malloc((size_t)p * sizeof *cur);
  int *stage = malloc((size_t)n * sizeof *stage);
  mpq_t start, e, dur;
  mpq_inits(start, e, dur, NULL);
  for (int i = 0; i < n; i++)
    mpq_init(st_end[i]);
  for (int st = 0; st < p; st++) {
    mpq_init(free_at[st]);
    cur[st] = s->start[st];
    mpq_set_ui(busy[st], 0, 1);
    mpq_set_ui(warm[st], 0, 1);
    mpq_set_ui(steady[st], 0, 1);
    for (int i = s->start[st]; i < s->start[st + 1]; i++)
      stage[i] = st;
  }
  for (int progress = 1; progress && left > 0;) {
    progress = 0;
    for (int st = 0; st < p; st++) {
      while (cur[st] < s->start[st + 1]) {
        const plc_sched_block *b = &s->blocks[cur[st]];
        plc_sched_dep d[4];
        int nd = plc_sched_deps(s, b, d), ready = 1;
        mpq_set(start, free_at[st]);
        for (int k = 0; k < nd && ready; k++) {
          int at = -1;
          for (int i = 0; i < n && at < 0; i++) {
            const plc_sched_block *o = &s->blocks[i];
            if (d[k].phase == PLC_SCHED_F && (o->phase == PLC_SCHED_F || o->phase == PLC_SCHED_FB) &&
                o->mb == d[k].mb && o->chunk == d[k].chunk)
              at = i;
            if (d[k].phase == PLC_SCHED_B &&
                ((o->phase == PLC_SCHED_B && o->mb == d[k].mb && o->chunk == d[k].chunk) ||
                 (o->phase == PLC_SCHED_FB && o->mb2 == d[k].mb && o->chunk2 == d[k].chunk)))
              at = i;
          }
          if (at < 0 || !done[at]) {
            ready = 0;
            break;
          }
          mpq_set(e, st_end[at]);
          if (stage[at] != st)
            mpq_add(e, e, t[stage[at]].p2p);
          if (mpq_cmp(e, start) > 0)
            mpq_set(start, e);
        }
        if (!ready)
          break;
        const plc_sched_times *tt = &t[st];
        switch (b->phase) {
        case PLC_SCHED_F: mpq_set(dur, tt->f); break;
        case PLC_SCHED_W: mpq_set(dur, tt->w); break;
        case PLC_SCHED_B: mpq_set(dur, tt->b); break;
        default: mpq_set(dur, tt->fb); break;
        }
        if (b->split && b->phase != PLC_SCHED_W)
          mpq_sub(dur, dur, tt->w);
        /* the gap before the block, by phase (as test_idle_phases_recorded) */
        int first_b = s->start[st + 1], last_f = -1;
        for (int i = s->start[st]; i < s->start[st + 1]; i++) {
          int ph = s->blocks[i].phase;
          if (ph != PLC_SCHED_F && first_b == s->start[st + 1])
            first_b = i;
          if (ph == PLC_SCHED_F || ph == PLC_SCHED_FB)
            last_f = i;
        }
        mpq_sub(e, start, free_at[st]);
        if (cur[st] <= first_b)
          mpq_add(warm[st], warm[st], e);
        else if (cur[st] <= last_f)
          mpq_add(steady[st], steady[st], e);
        mpq_add(st_end[cur[st]], start, dur);
        mpq_set(free_at[st], st_end[cur[st]]);
        mpq_add(busy[st], busy[st], dur);
        done[cur[st]++] = 1;
        left--;
        progress = 1;
      }
    }
  }
  mpq_set_ui(makespan, 0, 1);
  for (int st = 0; st < p; st++)
    if (mpq_cmp(free_at[st], makespan) > 0)
      mpq_set(makespan, free_at[st]);
  for (int i = 0; i < n; i++)
    mpq_clear(st_end[i]);
  for (int st = 0; st < p; st++)
    mpq_clear(free_at[st]);
  mpq_clears(start, e, dur, NULL);
  free(st_end);
  free(free_at);
  free(done);
  free(cur);
  free(stage);
  return left == 0;
}

/* Every run a generator says it copied (plc_sched.copy) is there: each
 * block the one copy[3s] before it with copy_m microbatches more. */
static int copies_hold(const plc_sched *s)
{
  for (int st = 0; s->copy_m && st < s->par.p; st++) {
    const int *c = &s->copy[3 * st];
    if (c[2] > c[1] && (c[1] - c[0] < s->start[st] || c[2] > s->start[st + 1]))
      return 0;
    for (int i = c[1]; i < c[2]; i++) {
      plc_sched_block a = s->blocks[i], b = s->blocks[i - c[0]];
      b.mb += s->copy_m;
      if (b.phase == PLC_SCHED_FB)
        b.mb2 += s->copy_m;
      if (a.phase != b.phase || a.split != b.split || a.mb != b.mb || a.chunk != b.chunk ||
          a.mb2 != b.mb2 || a.chunk2 != b.chunk2)
        return 0;
    }
  }
  return 1;
}

/* A random schedule long enough for its steady phase to repeat. */
static plc_sched rnd_long_sched(void)
{
  for (;;) {
    plc_sched_kind k = (plc_sched_kind)rnd(PLC_SCHED_NKINDS);
    int p = 1 + rnd(6);
    plc_sched_params par = {p, 1, p + rnd(10 * p + 20), 0};
    if (k == PLC_SCHED_INTERLEAVED) {
      par.v = 2 + rnd(3);
      par.group = rnd(3) ? 0 : p + rnd(p + 1);
    }
    if (k >= PLC_SCHED_DUALPIPE)
      par.v = 2;
    plc_sched s;
    if (!plc_sched_generate(k, &par, &s))
      return s;
  }
}

/* Times for a long run: uniform over the stages (their steady phase
 * repeats soon), or each stage its own (a slow stage paces the others,
 * maybe only after a long transient, maybe never exactly), with p2p
 * time or without, sometimes a W longer than its B (negative split
 * blocks: the walk reads every dependency then). */
static void rnd_long_times(plc_sched_times *t, int n, int kind)
{
  rnd_times(t, n);
  for (int i = 1; i < n && kind == 0; i++) {
    mpq_set(t[i].f, t[0].f);
    mpq_set(t[i].b, t[0].b);
    mpq_set(t[i].w, t[0].w);
    mpq_set(t[i].fb, t[0].fb);
    mpq_set(t[i].p2p, t[0].p2p);
  }
  if (kind == 2)
    mpq_set_si(t[rnd(n)].w, 30, 1);
  if (kind == 3)
    for (int i = 0; i < n; i++)
      mpq_set_ui(t[i].p2p, 0, 1);
}

/* Skipping the steady phase's repeats (schedule_sim.c) gives exactly the
 * figures of the walk of every block (sim->full_walk), of the mpz path
 * (which never skips), and of a reference that times the blocks without
 * the prepared order, on random long schedules of every kind with times
 * that repeat soon, late or never; and it does skip in most of the
 * uniform runs (so the comparison tests something). */
static void test_steady_skip(void)
{
  plc_sched_sim fast, full, slow, wide;
  plc_sched_sim_init(&fast);
  plc_sched_sim_init(&full);
  plc_sched_sim_init(&slow);
  plc_sched_sim_init(&wide);
  full.full_walk = 1;
  slow.exact_only = 1;
  wide.wide_only = 1;
  plc_sched_times t[32];
  plc_sched_times_init(t, 32);
  mpq_t mk, busy[8], warm[8], steady[8];
  mpq_init(mk);
  for (int i = 0; i < 8; i++)
    mpq_inits(busy[i], warm[i], steady[i], NULL);
  int skipped = 0, uniform = 0, skipped_uniform = 0, narrow = 0, wide_skipped = 0, trusted = 0;
  for (int it = 0; it < 2000; it++) {
    plc_sched s = rnd_long_sched();
    int kind = rnd(4), chunks = s.nchunks > s.par.p && rnd(3) == 0;
    /* every third with times per chunk (and DualPipe's F&B pairs) */
    fast.per_chunk = full.per_chunk = slow.per_chunk = wide.per_chunk = chunks;
    fast.fb_pairs = full.fb_pairs = slow.fb_pairs = chunks && s.nchunks == 2 * s.par.p && rnd(2);
    wide.fb_pairs = fast.fb_pairs;
    rnd_long_times(t, chunks ? s.nchunks : s.par.p, kind);
    for (int i = 0; chunks && i < s.nchunks; i++)
      mpq_add(t[i].fbo, t[i].f, t[i].b);
    sim_ok(&s, t, &fast);
    sim_ok(&s, t, &full);
    sim_ok(&s, t, &slow);
    sim_ok(&s, t, &wide);
    CU_ASSERT(fast.used_fast && full.skipped == 0 && slow.skipped == 0);
    CU_ASSERT(wide.used_fast && !wide.used_narrow && !slow.used_narrow);
    skipped += fast.skipped > 0;
    narrow += fast.used_narrow;
    wide_skipped += wide.skipped > 0;
    if (kind == 0 && !chunks && s.par.mu >= 4 * s.par.p * s.par.v) {
      uniform++;
      skipped_uniform += fast.skipped > 0;
    }
    PLC_CU_ASSERT_MSG(same_results(&fast, &full), "skipping differs from the full walk");
    PLC_CU_ASSERT_MSG(same_results(&fast, &slow), "skipping differs from the mpz run");
    PLC_CU_ASSERT_MSG(same_results(&fast, &wide), "the 64-bit walk differs from the 128-bit one");
    PLC_CU_ASSERT_MSG(copies_hold(&s), "a generator's copied run is not its blocks' repeat");
    if (s.copy_m) { /* the same blocks, every repeat compared rather than trusted */
      plc_sched plain = s;
      plain.copy_m = 0;
      char msg[128];
      plc_sched_prep *pr = plc_sched_prepare(&s, chunks, fast.fb_pairs, msg, sizeof msg);
      trusted += pr && plc_sched_prep_trusted(pr) > 0;
      plc_sched_prep_free(pr);
      sim_ok(&plain, t, &wide);
      PLC_CU_ASSERT_MSG(same_results(&fast, &wide), "trusting the generator's copies differs");
    }
    if (it % 4 == 0 && s.nblocks < 1500 && !chunks) {
      CU_ASSERT(naive_sim(&s, t, mk, busy, warm, steady));
      int same = mpq_equal(mk, fast.makespan);
      for (int st = 0; st < s.par.p; st++)
        same &= mpq_equal(busy[st], fast.busy[st]) && mpq_equal(warm[st], fast.warmup[st]) &&
                mpq_equal(steady[st], fast.steady[st]);
      PLC_CU_ASSERT_MSG(same, "the prepared order's run differs from the reference's");
    }
    plc_sched_free(&s);
  }
  CU_ASSERT(skipped > 40 && wide_skipped > 40);
  CU_ASSERT(uniform > 10 && 2 * skipped_uniform > uniform);
  CU_ASSERT(narrow > 500); /* the runs whose blocks take no negative time */
  CU_ASSERT(trusted > 50);
  fast.per_chunk = full.per_chunk = fast.fb_pairs = full.fb_pairs = 0;
  /* one steady interleaved schedule: most of its blocks skipped */
  plc_sched s = gen(PLC_SCHED_INTERLEAVED, 4, 2, 64, 0);
  set_times(t, 4, 3, 5, 2, 8, 2);
  mpq_set_si(t[0].p2p, 1, 3);
  mpq_set_si(t[2].p2p, 1, 3);
  sim_ok(&s, t, &fast);
  sim_ok(&s, t, &full);
  CU_ASSERT(2 * fast.skipped > s.nblocks);
  CU_ASSERT(same_results(&fast, &full));
  plc_sched_free(&s);
  mpq_clear(mk);
  for (int i = 0; i < 8; i++)
    mpq_clears(busy[i], warm[i], steady[i], NULL);
  plc_sched_times_clear(t, 32);
  plc_sched_sim_clear(&fast);
  plc_sched_sim_clear(&full);
  plc_sched_sim_clear(&slow);
  plc_sched_sim_clear(&wide);
}

/* The 64-bit walk (schedule_walk.h) runs only while every duration is
 * below 2^52 and every end at most 2^62; past either the run is walked on
 * 128 bits, with the mpz run's figures.  1f1b over p = 2 stages and
 * mu = 2000 microbatches runs 4000 blocks a stage: with F and B taking
 * about 2^51 each the step ends near 2000 x 2^52 = 2^62.97 > 2^62 (found
 * by the loop); with mu = 5000, near 2^64.3, past int64_t itself (found
 * by the jump, before it wraps); with 2^40 it ends near 2^52 and the
 * 64-bit walk is the run; a duration of 2^52 is past its durations'
 * bound. */
static void test_narrow_walk(void)
{
  plc_sched_sim fast, slow;
  plc_sched_sim_init(&fast);
  plc_sched_sim_init(&slow);
  slow.exact_only = 1;
  plc_sched_times t[2];
  plc_sched_times_init(t, 2);
  static const struct {
    int mu;
    unsigned long f, b;
    int full, narrow;
  } cases[] = {
    {2000, (1UL << 51) - 3, (1UL << 51) + 5, 0, 0}, {2000, (1UL << 51) - 3, (1UL << 51) + 5, 1, 0},
    {5000, (1UL << 51) - 3, (1UL << 51) + 5, 0, 0}, {5000, (1UL << 51) - 3, (1UL << 51) + 5, 1, 0},
    {2000, (1UL << 40) + 7, (1UL << 40) + 9, 0, 1}, {2000, (1UL << 40) + 7, (1UL << 40) + 9, 1, 1},
    {2000, 1UL << 52, 1, 0, 0},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    plc_sched s = gen(PLC_SCHED_1F1B, 2, 1, cases[c].mu, 0);
    set_times(t, 2, 0, 0, 0, 0, 1);
    for (int st = 0; st < 2; st++) {
      mpq_set_ui(t[st].f, cases[c].f, 1);
      mpq_set_ui(t[st].b, cases[c].b, 1);
    }
    mpq_set_ui(t[1].p2p, 3, 1);
    fast.full_walk = cases[c].full;
    sim_ok(&s, t, &fast);
    sim_ok(&s, t, &slow);
    CU_ASSERT(fast.used_fast && fast.used_narrow == cases[c].narrow);
    CU_ASSERT(cases[c].full || fast.skipped > 0);
    PLC_CU_ASSERT_MSG(same_results(&fast, &slow), "the 64-bit walk's fallback differs");
    plc_sched_free(&s);
  }
  plc_sched_times_clear(t, 2);
  plc_sched_sim_clear(&fast);
  plc_sched_sim_clear(&slow);
}

int main(void)
{
  static const plc_cu_test tests[] = {
    {"table", test_table},
    {"placement", test_placement},
    {"dependencies", test_deps},
    {"1f1b and gpipe orders (Megatron warm-up)", test_1f1b_order},
    {"interleaved order (Megatron table, warm-up)", test_interleaved_order},
    {"zb_h1 order (the paper's hand schedule)", test_zb_h1_order},
    {"dualpipev step counts", test_dualpipev_counts},
    {"dualpipev order of its README figure", test_dualpipev_figure},
    {"interleaved order rebuilt as Megatron does", test_interleaved_megatron},
    {"dualpipe step counts", test_dualpipe_counts},
    {"every block once, deadlock-free", test_every_block_once},
    {"in-flight microbatches", test_inflight},
    {"oracle: 1f1b, gpipe, interleaved", test_oracle_1f1b_interleaved},
    {"oracle: zb_h1 and its conditions", test_oracle_zb_h1},
    {"oracle: dualpipe(v) and its conditions", test_oracle_dualpipe},
    {"formula and simulation part: uneven, p2p, zb_h1", test_uneven_parts},
    {"explicit orders", test_custom_orders},
    {"explicit orders with FB blocks", test_custom_fb},
    {"preconditions", test_preconditions},
    {"random properties", test_random_properties},
    {"machine-integer path equals the mpz run", test_fast_path_exact},
    {"times per chunk (DualPipe's two model stages)", test_per_chunk_times},
    {"a prepared schedule simulated again", test_prepared_reruns},
    {"idle phases from the recorded blocks", test_idle_phases_recorded},
    {"the steady phase's repeats skipped", test_steady_skip},
    {"the 64-bit walk and its bounds", test_narrow_walk},
    {NULL, NULL},
  };
  return plc_cu_run("schedule", tests);
}
