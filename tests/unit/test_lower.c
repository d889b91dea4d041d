/* test_lower.c - CUnit tests of lowering (compiler/lower/lower.c): how layers
 * split into pipeline stages, which ops a template gives in each phase,
 * and their exact durations by the alpha-beta and compute formulas.
 * Mirrored backwards are tested on compute ops only. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "cu_main.h"
#include "lower.h"
#include "plan_fixture.h"

/* A train of `layers` with one `dense` template and the given fields. */
static plc_drive_run *lower(plc_fx *f, const char *layers, const char *tmpl, const char *fields)
{
  char text[4096];
  snprintf(text, sizeof text, "%s"
           "model m { layers { %s } }\n"
           "framework fw {\n%s\n}\n"
           "train t { model = m; cluster = box; framework = fw\n"
           "  micro_batch = 1; global_batch = 8; seq = 1024\n  %s\n}\n",
           PLC_FX_MACHINE, layers, tmpl, fields);
  if (plc_fx_load(f, text))
    return NULL;
  return plc_fx_train(f, "t");
}

static const char compute_only[] =
  "template dense { op mm: compute { flops = 2e12 FLOP } }";

/* Assert a stage's layers. */
static void stage_is(const plc_drive_run *r, int s, int n, const int *want, unsigned line)
{
  const plc_ir_stage *st = &r->ir->stages[s];
  int ok = st->nlayers == n;
  for (int k = 0; ok && k < n; k++)
    ok = st->layers[k] == want[k];
  char msg[64];
  snprintf(msg, sizeof msg, "stage %d has %d layers", s, st->nlayers);
  CU_assertImplementation(ok ? CU_TRUE : CU_FALSE, line, msg, __FILE__, "", CU_FALSE);
}
#define STAGE_IS(r, s, ...)                                                   \
  do {                                                                        \
    static const int w_[] = {__VA_ARGS__};                                    \
    stage_is(r, s, (int)(sizeof w_ / sizeof w_[0]), w_, __LINE__);            \
  } while (0)

/* 5 layers over pp = 2: chunks of 3 and 2 (the first one longer), with a
 * warning; 8 layers over pp 2 x vpp 2: four chunks of 2, chunk j on stage
 * j % 2, so stage 0 runs layers 0 1 4 5 and stage 1 runs 2 3 6 7. */
static void test_even_split(void)
{
  plc_fx f;
  plc_drive_run *r = lower(&f, "dense = 5", compute_only, "pp = 2");
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  CU_ASSERT_EQUAL(r->ir->nstages, 2);
  STAGE_IS(r, 0, 0, 1, 2);
  STAGE_IS(r, 1, 3, 4);
  CU_ASSERT(plc_fx_reported(&f, "warning: 5 layers do not divide into pp x vpp = 2 chunks"));
  plc_fx_free(&f);
  r = lower(&f, "dense = 8", compute_only, "pp = 2; vpp = 2");
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  STAGE_IS(r, 0, 0, 1, 4, 5);
  STAGE_IS(r, 1, 2, 3, 6, 7);
  CU_ASSERT(!plc_fx_reported(&f, "do not divide"));
  plc_fx_free(&f);
}

/* stages = [1, 3] puts layer 0 on stage 0 and layers 1..3 on stage 1; a
 * list that does not add up to the model's 4 layers is an error. */
static void test_explicit_split(void)
{
  plc_fx f;
  plc_drive_run *r = lower(&f, "dense = 4", compute_only, "pp = 2; stages = [1, 3]");
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  STAGE_IS(r, 0, 0);
  STAGE_IS(r, 1, 1, 2, 3);
  plc_fx_free(&f);
  CU_ASSERT_PTR_NULL(lower(&f, "dense = 4", compute_only, "pp = 2; stages = [2, 3]"));
  CU_ASSERT(plc_fx_reported(&f, "error: 'stages' adds up to 5 layers; the model has 4"));
  plc_fx_free(&f);
  CU_ASSERT_PTR_NULL(lower(&f, "dense = 4", compute_only, "pp = 2; stages = [4]"));
  CU_ASSERT(plc_fx_reported(&f, "error: 'stages' must list 2 layer counts (pp x vpp)"));
  plc_fx_free(&f);
}

/* Layer kinds keep the model's order: attn, then moe. */
static void test_kinds(void)
{
  plc_fx f;
  plc_drive_run *r = lower(&f, "attn = 1; moe = 1",
                           "template attn { op a: compute { flops = 1e12 FLOP } }\n"
                           "template moe { op e: compute { flops = 3e12 FLOP } }", "");
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  const plc_ir_list *fw = &r->ir->stages[0].fwd;
  CU_ASSERT_EQUAL_FATAL(fw->n, 2);
  PLC_CU_STR_EQ(fw->ops[0].name, "a");
  PLC_CU_STR_EQ(fw->ops[1].name, "e");
  CU_ASSERT_EQUAL(fw->ops[0].layer, 0);
  CU_ASSERT_EQUAL(fw->ops[1].layer, 1);
  plc_fx_free(&f);
}

/* Durations of one op of each primitive on tp = 4 (node, fast: 100 GB/s,
 * 1 us per step) for S = 1 GB, and p2p on pp (all, slow: 10 GB/s, 10 us):
 *   all_gather, reduce_scatter, all_to_all: (n-1)/n S/bw + (n-1) a
 *     = 3/4 x 1/100 s + 3 us = 7503/1000000 s
 *   all_reduce: 2(n-1)/n S/bw + 2(n-1) a = 15/1000 + 6 us = 7503/500000 s
 *   broadcast: S/bw + (n-1) a = 1/100 + 3 us = 10003/1000000 s
 *   p2p: S/bw + a = 1/10 + 10 us = 10001/100000 s
 *   compute 2e12 FLOP at 50 TFLOP/s = 1/25 s; bytes 1 GB at 2 TB/s = 1/2000 s. */
static void test_op_times(void)
{
  plc_fx f;
  plc_drive_run *r = lower(&f, "dense = 2",
    "template dense {\n"
    "  op mm: compute { flops = 2e12 FLOP }\n"
    "  op mem: compute { bytes = 1 GB }\n"
    "  op ag: all_gather(tp) { size = 1 GB }\n"
    "  op rs: reduce_scatter(tp) { size = 1 GB }\n"
    "  op a2a: all_to_all(tp) { size = 1 GB }\n"
    "  op ar: all_reduce(tp) { size = 1 GB }\n"
    "  op bc: broadcast(tp) { size = 1 GB }\n"
    "  op tx: p2p(pp) { size = 1 GB }\n"
    "  backward { op b: compute { time = 1 ms } }\n"
    "}", "tp = 4; pp = 2");
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  const plc_ir_list *fw = &r->ir->stages[0].fwd;
  CU_ASSERT_EQUAL_FATAL(fw->n, 8); /* one layer per stage, 8 ops */
  static const struct { const char *name; plc_opk kind; const char *time; } want[] = {
    {"mm", PLC_OPK_COMPUTE, "1/25"}, {"mem", PLC_OPK_COMPUTE, "1/2000"},
    {"ag", PLC_OPK_ALL_GATHER, "7503/1000000"}, {"rs", PLC_OPK_REDUCE_SCATTER, "7503/1000000"},
    {"a2a", PLC_OPK_ALL_TO_ALL, "7503/1000000"}, {"ar", PLC_OPK_ALL_REDUCE, "7503/500000"},
    {"bc", PLC_OPK_BROADCAST, "10003/1000000"}, {"tx", PLC_OPK_P2P, "10001/100000"},
  };
  for (int i = 0; i < 8; i++) {
    PLC_CU_STR_EQ(fw->ops[i].name, want[i].name);
    CU_ASSERT_EQUAL(fw->ops[i].kind, want[i].kind);
    PLC_CU_ASSERT_MSG(plc_fx_qs(fw->ops[i].time, want[i].time), want[i].name);
  }
  CU_ASSERT_EQUAL(fw->ops[2].group, 4);
  CU_ASSERT_EQUAL(fw->ops[2].dim, PLC_PD_TP);
  CU_ASSERT(plc_fx_qs(fw->ops[0].flops, "2000000000000"));
  CU_ASSERT(plc_fx_qs(fw->ops[2].size, "1000000000"));
  CU_ASSERT(fw->ops[0].useful);
  plc_fx_free(&f);
}

/* Without a backward section a compute-only layer mirrors its forward:
 * reverse order, twice the FLOPs and time (b: 2 x 3e12 FLOP = 6e12 at
 * 50 TFLOP/s = 3/25 s; a: 2e12 = 1/25 s); a's mirror waits for b's, as b
 * waited for a.  Full recompute first re-runs the forward (a 1/50 s, then
 * b 3/50 s after it), not useful, in phase recomp. */
static void test_mirror_and_recompute(void)
{
  plc_fx f;
  plc_drive_run *r = lower(&f, "dense = 1",
    "template dense {\n"
    "  op a: compute { flops = 1e12 FLOP }\n"
    "  op b: compute { flops = 3e12 FLOP; after = [a] }\n"
    "}", "recompute = full");
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  const plc_ir_list *bw = &r->ir->stages[0].bwd;
  CU_ASSERT_EQUAL_FATAL(bw->n, 4);
  static const struct { const char *name; plc_phase ph; const char *time; int useful; } want[] = {
    {"a", PLC_PH_RECOMP, "1/50", 0}, {"b", PLC_PH_RECOMP, "3/50", 0},
    {"b", PLC_PH_BWD, "3/25", 1}, {"a", PLC_PH_BWD, "1/25", 1},
  };
  for (int i = 0; i < 4; i++) {
    PLC_CU_STR_EQ(bw->ops[i].name, want[i].name);
    CU_ASSERT_EQUAL(bw->ops[i].phase, want[i].ph);
    CU_ASSERT(plc_fx_qs(bw->ops[i].time, want[i].time));
    CU_ASSERT_EQUAL(bw->ops[i].useful, want[i].useful);
  }
  CU_ASSERT(plc_fx_qs(bw->ops[2].flops, "6000000000000"));
  CU_ASSERT_EQUAL_FATAL(bw->ops[1].ndeps, 1);
  CU_ASSERT_EQUAL(bw->ops[1].deps[0], 0); /* recomputed b after recomputed a */
  CU_ASSERT_EQUAL_FATAL(bw->ops[3].ndeps, 1);
  CU_ASSERT_EQUAL(bw->ops[3].deps[0], 2); /* a's mirror after b's */
  plc_fx_free(&f);
}

/* Streams, once, the pipeline template on all stages but the last
 * (`if !layer.last`), and the step template once per stage. */
static void test_streams_pipeline_step(void)
{
  plc_fx f;
  plc_drive_run *r = lower(&f, "dense = 2",
    "template dense {\n"
    "  op mm: compute { flops = 2e12 FLOP }\n"
    "  backward {\n"
    "    op bmm: compute { flops = 4e12 FLOP }\n"
    "    op g: all_reduce(dp) { size = 1 GB; stream = grad; once = true; after = [bmm] }\n"
    "  }\n"
    "}\n"
    "template pipeline { if !layer.last { op send: p2p(pp) { size = 10 MB } } }\n"
    "template step { op opt: compute { time = 3 ms } }", "dp = 2; pp = 2");
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  const plc_ir_run *ir = r->ir;
  CU_ASSERT_EQUAL(ir->stages[0].fwd.n, 2); /* mm, send */
  CU_ASSERT_EQUAL(ir->stages[1].fwd.n, 1); /* mm */
  PLC_CU_STR_EQ(ir->stages[0].fwd.ops[1].name, "send");
  CU_ASSERT_EQUAL(ir->stages[0].fwd.ops[1].layer, -1);
  const plc_ir_op *g = &ir->stages[0].bwd.ops[1];
  PLC_CU_STR_EQ(g->name, "g");
  CU_ASSERT(g->once);
  PLC_CU_STR_EQ(ir->streams[g->stream], "grad");
  PLC_CU_STR_EQ(ir->streams[0], "compute");
  CU_ASSERT_EQUAL(g->deps[0], 0);
  for (int s = 0; s < 2; s++) {
    CU_ASSERT_EQUAL(ir->stages[s].step.n, 1);
    CU_ASSERT(plc_fx_qs(ir->stages[s].step.ops[0].time, "3/1000"));
  }
  plc_fx_free(&f);
}

/* Ops that cannot be costed are located errors. */
static void test_errors(void)
{
  plc_fx f;
  CU_ASSERT_PTR_NULL(lower(&f, "dense = 1", "template dense { op x: compute { } }", ""));
  CU_ASSERT(plc_fx_reported(&f, "error: compute op 'x' needs flops, bytes or time"));
  plc_fx_free(&f);
  CU_ASSERT_PTR_NULL(lower(&f, "dense = 1", "template dense { op c: all_reduce(tp) { } }",
                           "tp = 2"));
  CU_ASSERT(plc_fx_reported(&f, "error: collective 'c' needs a size (or a time)"));
  plc_fx_free(&f);
}

/* Precision: a device with peak 100 TFLOP/s and peak_fp8 200 TFLOP/s at
 * 50%; 2e12 FLOP take
 *   bf16 (default), fp16: 2e12 / (100e12 x 1/2) = 1/25 s
 *   fp8: 2e12 / (200e12 x 1/2) = 1/50 s
 *   fp8 at the op's 40%: 2e12 / (200e12 x 2/5) = 1/40 s
 * and a precision computed from a framework option (true: fp8) is 1/50 s. */
static void test_precision(void)
{
  plc_fx f;
  const char *text =
    "device g8 { peak = 100 TFLOPS; peak_fp8 = 200 TFLOPS; efficiency = 50% }\n"
    "link l { bw = 100 GB/s }\n"
    "cluster c8 { device = g8; tier node { size = 8; link = l } }\n"
    "model m { layers { dense = 1 } }\n"
    "framework fw {\n  option fp8 = true\n  template dense {\n"
    "    op mm: compute { flops = 2e12 FLOP }\n"
    "    op m16: compute { flops = 2e12 FLOP; precision = fp16 }\n"
    "    op m8: compute { flops = 2e12 FLOP; precision = fp8 }\n"
    "    op m8e: compute { flops = 2e12 FLOP; precision = \"fp8\"; efficiency = 40% }\n"
    "    op mx: compute { flops = 2e12 FLOP; precision = run.fp8 ? \"fp8\" : \"bf16\" }\n"
    "  }\n}\n"
    "train t { model = m; cluster = c8; framework = fw\n"
    "  micro_batch = 1; global_batch = 8; seq = 1024 }\n";
  CU_ASSERT_FATAL(plc_fx_load(&f, text) == 0);
  plc_drive_run *r = plc_fx_train(&f, "t");
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  const plc_ir_list *fw = &r->ir->stages[0].fwd;
  CU_ASSERT_EQUAL_FATAL(fw->n, 5);
  static const char *const want[] = {"1/25", "1/25", "1/50", "1/40", "1/50"};
  for (int i = 0; i < 5; i++)
    PLC_CU_ASSERT_MSG(plc_fx_qs(fw->ops[i].time, want[i]), fw->ops[i].name);
  plc_fx_free(&f);
}

/* fp8 on a device without peak_fp8, and a computed precision that is none
 * of the three, are errors of the op. */
static void test_precision_errors(void)
{
  plc_fx f;
  CU_ASSERT_PTR_NULL(lower(&f, "dense = 1", "template dense { op x: compute "
                           "{ flops = 1e12 FLOP; precision = fp8 } }", ""));
  CU_ASSERT(plc_fx_reported(&f, "error: op 'x' runs in fp8, but device 'gpu' has no peak_fp8"));
  plc_fx_free(&f);
  CU_ASSERT_PTR_NULL(lower(&f, "dense = 1", "option p = \"int8\"\ntemplate dense { op x: "
                           "compute { flops = 1e12 FLOP; precision = run.p } }", ""));
  CU_ASSERT(plc_fx_reported(&f, "error: op 'x': precision must be one of: bf16, fp16, fp8, "
                            "not 'int8'"));
  plc_fx_free(&f);
}

/* Lower train `name` directly (no analysis), with the evaluator as the
 * fixture left it (a test sets its lowering cache or memory check). */
static plc_ir_run *lower_direct(plc_fx *f, const char *name)
{
  plc_eval *ev = &f->sema.ev;
  plc_binding *b = plc_env_find_local(ev->global, name);
  if (!b || !b->def)
    return NULL;
  plc_value *v = plc_eval_binding(ev, b, &b->def->loc);
  return v && v->tag == PLC_V_OBJ ? plc_lower_train(ev, b->def, v->obj) : NULL;
}

/* The memory figures (weights, activations, buffers) of stage s, chunk c. */
static int mem_is(const plc_ir_mem *m, long w, long a, long b)
{
  return plc_fx_q(m->weights, w, 1) && plc_fx_q(m->activations, a, 1) &&
         plc_fx_q(m->buffers, b, 1) && plc_fx_q(m->grads, 0, 1) && plc_fx_q(m->optimizer, 0, 1);
}

/* What memory first (eval.h, lower_unfit) saw: the figures of two stages
 * of up to two chunks, as the run's lowering then sums them again. */
typedef struct mem_seen {
  mpq_t q[2][2][5];
  int calls;
} mem_seen;

static int mem_capture(void *ctx, const struct plc_ir_run *r)
{
  mem_seen *m = ctx;
  m->calls++;
  for (int s = 0; s < r->nstages && s < 2; s++)
    for (int c = 0; c < r->vpp && c < 2; c++) {
      const plc_ir_mem *x = &r->stages[s].mem[c];
      mpq_srcptr f[5] = {x->weights, x->grads, x->optimizer, x->activations, x->buffers};
      for (int k = 0; k < 5; k++)
        mpq_set(m->q[s][c][k], f[k]);
    }
  return 0; /* it fits: lowering goes on */
}

static int mem_seen_is(const mem_seen *m, int s, int c, const plc_ir_mem *x)
{
  mpq_srcptr f[5] = {x->weights, x->grads, x->optimizer, x->activations, x->buffers};
  for (int k = 0; k < 5; k++)
    if (!mpq_equal(m->q[s][c][k], f[k]))
      return 0;
  return 1;
}

/* Memory sections read layer fields; most layers copy an earlier one's
 * figures (memory first counts copies of the layer before, lowering's
 * instance memo adds n copies at a stage's end), and a copy must land in
 * its own chunk and kind.  16 layers on pp 2 x vpp 2, chunks of 4 layers,
 * chunk j on stage j % 2: stage 0 holds layers 0-3 | 8-11, stage 1 layers
 * 4-7 | 12-15 (chunks split by |; layer 3's and 8's instances are copies of
 * layer 2's, in two chunks).  Per layer: weights 100 B on the model's first
 * layer, else 10 B; activations (1000 B on the stage's first layer, else
 * 1 B) x (stage + 1); buffers 7 B on the stage's last layer, else 3 B (the
 * largest counts):
 *   stage 0 chunk 0 (layers 0-3): 130 B, 1000 + 3 = 1003 B, 3 B
 *   stage 0 chunk 1 (layers 8-11): 40 B, 4 B, max(3, 7) = 7 B
 *   stage 1 chunk 0 (layers 4-7): 40 B, (1000 + 3) x 2 = 2006 B, 3 B
 *   stage 1 chunk 1 (layers 12-15): 40 B, 4 x 2 = 8 B, 7 B
 * Then layers { dense = 2; wide = 2 } on one stage, wide layers declaring
 * 1000 B of weights only: a wide layer reads the same dense fields' values
 * as the dense layer before it, but is of another kind (its own figures):
 * 100 + 10 + 1000 + 1000 = 2110 B, 1000 + 1 = 1001 B, 3 B.  A flat
 * layer declares 10 B x (stage + 1) of weights, reading no other field
 * (memory first counts the rest of its run of layers in a chunk at once):
 * 8 of them on pp 2 x vpp 2 give 20 B in each of stage 0's two chunks
 * (layers 0 1 | 4 5), 40 B in each of stage 1's (2 3 | 6 7); flat = 2;
 * wide = 2 on one stage give 10 + 10 + 1000 + 1000 = 2020 B.  Memory first
 * saw the same figures as lowering summed. */
static void test_memory_copies(void)
{
  static const char tmpl[] =
    "template dense {\n"
    "  memory {\n"
    "    weights = layer.model_first ? 100 B : 10 B\n"
    "    activations = (layer.first ? 1000 B : 1 B) * (layer.stage + 1)\n"
    "    buffers = layer.last ? 7 B : 3 B\n"
    "  }\n"
    "  op mm: compute { flops = 1e12 FLOP }\n"
    "}\n"
    "template wide {\n"
    "  memory { weights = 1000 B }\n"
    "  op mw: compute { flops = 1e12 FLOP }\n"
    "}\n"
    "template flat {\n"
    "  memory { weights = 10 B * (layer.stage + 1) }\n"
    "  op mf: compute { flops = 1e12 FLOP }\n"
    "}";
  static const char *const layers[] = {"dense = 16", "dense = 2; wide = 2", "flat = 8",
                                       "flat = 2; wide = 2"};
  static const char *const fields[] = {"pp = 2; vpp = 2", "", "pp = 2; vpp = 2", ""};
  for (int t = 0; t < 4; t++) {
    plc_fx f;
    char text[4096];
    snprintf(text, sizeof text, "%smodel m { layers { %s } }\nframework fw {\n%s\n}\n"
             "train t { model = m; cluster = box; framework = fw\n"
             "  micro_batch = 1; global_batch = 8; seq = 1024\n  %s\n}\n",
             PLC_FX_MACHINE, layers[t], tmpl, fields[t]);
    CU_ASSERT_EQUAL_FATAL(plc_fx_load(&f, text), 0);
    mem_seen seen = {.calls = 0};
    for (int s = 0; s < 2; s++)
      for (int c = 0; c < 2; c++)
        for (int k = 0; k < 5; k++)
          mpq_init(seen.q[s][c][k]);
    f.sema.ev.lower_unfit = mem_capture;
    f.sema.ev.lower_unfit_ctx = &seen;
    plc_ir_run *r = lower_direct(&f, "t");
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_EQUAL(seen.calls, 1);
    if (t == 0) {
      CU_ASSERT(mem_is(&r->stages[0].mem[0], 130, 1003, 3));
      CU_ASSERT(mem_is(&r->stages[0].mem[1], 40, 4, 7));
      CU_ASSERT(mem_is(&r->stages[1].mem[0], 40, 2006, 3));
      CU_ASSERT(mem_is(&r->stages[1].mem[1], 40, 8, 7));
    } else if (t == 1) {
      CU_ASSERT(mem_is(&r->stages[0].mem[0], 2110, 1001, 3));
    } else if (t == 2) {
      CU_ASSERT(mem_is(&r->stages[0].mem[0], 20, 0, 0));
      CU_ASSERT(mem_is(&r->stages[0].mem[1], 20, 0, 0));
      CU_ASSERT(mem_is(&r->stages[1].mem[0], 40, 0, 0));
      CU_ASSERT(mem_is(&r->stages[1].mem[1], 40, 0, 0));
    } else {
      CU_ASSERT(mem_is(&r->stages[0].mem[0], 2020, 0, 0));
    }
    for (int s = 0; s < r->nstages; s++)
      for (int c = 0; c < r->vpp; c++)
        CU_ASSERT(mem_seen_is(&seen, s, c, &r->stages[s].mem[c]));
    for (int s = 0; s < 2; s++)
      for (int c = 0; c < 2; c++)
        for (int k = 0; k < 5; k++)
          mpq_clear(seen.q[s][c][k]);
    plc_fx_free(&f);
  }
}

/* The cross-instance cache replays an instance's names only when they are
 * needed, and a memo copy of such a replay moves them.  Train a (dp = 1)
 * fills the cache; in train b (dp = 2) the model's first layer has one op
 * more (emb), so every later instance lands one op further on: layers 1
 * and 2 are replays of a's (their `prev.b` finds the two b ops at the same
 * distances back), layer 3 a memo copy of layer 2's replay, and top's t
 * waits for layer 3's b[0] and b[1], found through those moved names.  b's
 * forward list: emb a b[0] b[1] (layer 0, ops 0-3), a b[0] b[1] (layer 1,
 * 4-6; a waits for 2 3), layer 2 at 7-9, layer 3 at 10-12, t at 13 waiting
 * for 11 and 12; the same lists, dependencies and all, as b lowered
 * without the cache. */
static void test_cache_names(void)
{
  static const char plan[] = PLC_FX_MACHINE
    "model m { layers { dense = 4; top = 1 } }\n"
    "framework fw {\n"
    "  template dense {\n"
    "    if layer.model_first && run.dp > 1 { op emb: compute { flops = 1e12 FLOP } }\n"
    "    op a: compute { flops = 1e12 FLOP; after = [prev.b] }\n"
    "    for i in 0 .. 2 { op b[i]: compute { flops = 1e12 FLOP; after = [a] } }\n"
    "  }\n"
    "  template top { op t: compute { flops = 1e12 FLOP; after = [prev.b] } }\n"
    "}\n"
    "train a { model = m; cluster = box; framework = fw\n"
    "  micro_batch = 1; global_batch = 8; seq = 1024 }\n"
    "train b = a { dp = 2 }\n";
  plc_fx f, g;
  CU_ASSERT_EQUAL_FATAL(plc_fx_load(&f, plan), 0);
  f.sema.ev.lower_cache = plc_lcache_new("test ");
  CU_ASSERT_PTR_NOT_NULL_FATAL(lower_direct(&f, "a"));
  const plc_ir_run *r = lower_direct(&f, "b");
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  CU_ASSERT_EQUAL_FATAL(plc_fx_load(&g, plan), 0); /* no cache */
  const plc_ir_run *w = lower_direct(&g, "b");
  CU_ASSERT_PTR_NOT_NULL_FATAL(w);
  const plc_ir_list *l = &r->stages[0].fwd, *m = &w->stages[0].fwd;
  CU_ASSERT_EQUAL_FATAL(l->n, 14);
  CU_ASSERT_EQUAL_FATAL(m->n, 14);
  PLC_CU_STR_EQ(l->ops[4].name, "a");
  CU_ASSERT(l->ops[4].ndeps == 2 && l->ops[4].deps[0] == 2 && l->ops[4].deps[1] == 3);
  PLC_CU_STR_EQ(l->ops[13].name, "t");
  CU_ASSERT_EQUAL(l->ops[13].layer, 4);
  CU_ASSERT(l->ops[13].ndeps == 2 && l->ops[13].deps[0] == 11 && l->ops[13].deps[1] == 12);
  for (int i = 0; i < l->n; i++) {
    int same = !strcmp(l->ops[i].name, m->ops[i].name) && l->ops[i].layer == m->ops[i].layer &&
               l->ops[i].ndeps == m->ops[i].ndeps;
    for (int k = 0; same && k < l->ops[i].ndeps; k++)
      same = l->ops[i].deps[k] == m->ops[i].deps[k];
    CU_ASSERT(same);
  }
  plc_lcache_free(f.sema.ev.lower_cache);
  f.sema.ev.lower_cache = NULL;
  plc_fx_free(&f);
  plc_fx_free(&g);
}

/* Are ops a and b (of two compilations of one plan) the same, field by
 * field (times, work and sizes exactly; the template op by its place)? */
static int op_same(const plc_ir_op *a, const plc_ir_op *b)
{
  int same = !strcmp(a->name, b->name) && a->layer == b->layer && a->phase == b->phase &&
             a->kind == b->kind && a->stream == b->stream && a->ndeps == b->ndeps &&
             a->useful == b->useful && a->once == b->once && a->wgrad == b->wgrad &&
             a->pinned == b->pinned && a->chunk == b->chunk &&
             a->after_layers == b->after_layers &&
             a->node->loc.first_line == b->node->loc.first_line &&
             a->node->loc.first_column == b->node->loc.first_column &&
             mpq_equal(a->time, b->time) && mpq_equal(a->flops, b->flops) &&
             mpq_equal(a->size, b->size);
  if (same && a->kind != PLC_OPK_COMPUTE)
    same = a->dim == b->dim && a->group == b->group;
  for (int k = 0; same && k < a->ndeps; k++)
    same = a->deps[k] == b->deps[k];
  return same;
}

/* Lists of every stage of r and w the same, op by op; the ops that differ
 * are counted in *bad. */
static void runs_same(const plc_ir_run *r, const plc_ir_run *w, int *bad)
{
  CU_ASSERT_EQUAL_FATAL(r->nstages, w->nstages);
  CU_ASSERT_EQUAL(r->nstreams, w->nstreams);
  for (int i = 0; i < r->nstreams && i < w->nstreams; i++)
    PLC_CU_STR_EQ(r->streams[i], w->streams[i]);
  for (int s = 0; s < r->nstages; s++) {
    const plc_ir_list *l[3] = {&r->stages[s].fwd, &r->stages[s].bwd, &r->stages[s].step};
    const plc_ir_list *m[3] = {&w->stages[s].fwd, &w->stages[s].bwd, &w->stages[s].step};
    for (int k = 0; k < 3; k++) {
      CU_ASSERT_EQUAL(l[k]->n, m[k]->n);
      for (int i = 0; i < l[k]->n && i < m[k]->n; i++)
        *bad += !op_same(&l[k]->ops[i], &m[k]->ops[i]);
    }
  }
}

/* Prev-free replays (lower.c, plc_xcache_keep_scripts): an instance that
 * waits for ops of the one before it is replayed from the cache after
 * whatever previous instance, its lookups of prev made again.  The
 * trains below share a cache as a search's candidates do, and each is
 * compared with itself lowered fresh (no cache, no memo), every op of
 * every list, field by field.  The template's `after` lists mix ops of
 * the instance, prev's ops and families (prev.b[1] then prev.b:
 * duplicates dropped), names the previous instance has only when it is
 * the model's first (prev.z) or last layer (prev.zb), and one it never has
 * (prev.none); g and gb vanish under tp = 1 (c and bb then wait for
 * what they waited for), and v always (dp = 1): under tp = 1 it waits for
 * prev.cb, and its instance is not prev-free (its name keeps what prev
 * gave; its replays are checked like the rest).  Over pp = 1, 2, 3 a
 * layer's instance is first of its stage (no previous one) or not, with
 * the same reads, so the cache replays instances after previous ones
 * other than the one recorded (prev_free > 0), with and without one.
 * The names of the instances before are looked up where they come from
 * (lower.c, plc_deps_lookup_in: a cache replay, a memo copy of one or of
 * a lowered instance): under full recompute a backward instance has two
 * ops named a (the recomputed one, then its own: prev.a is the latest)
 * and the family b[...] (prev.b; bb is not of it).  A forward instance
 * reads two layer fields (model_first, last), which a lookup in the cache
 * reads once each (lower.c, plc_xread_layer_holds). */
static void test_cache_prev_free(void)
{
  static const char plan[] = PLC_FX_MACHINE
    "model m { layers { dense = 6 } }\n"
    "framework fw {\n"
    "  template dense {\n"
    "    forward {\n"
    "      if layer.model_first { op z: compute { flops = 1e12 FLOP } }\n"
    "      op a: compute { flops = 1e12 FLOP; after = [prev.z, prev.c] }\n"
    "      for i in 0 .. 2 { op b[i]: compute { flops = 2e12 FLOP; after = [a, prev.b[1], prev.b] } }\n"
    "      op g: all_reduce(tp) { size = 1 MB; stream = tp_comm; after = [b[0]] }\n"
    "      op c: compute { flops = 1e12 FLOP; after = [g, prev.a, b, prev.none] }\n"
    "      if layer.last { op y: compute { flops = 1e12 FLOP; after = [prev.y, c] } }\n"
    "    }\n"
    "    backward {\n"
    "      if layer.model_last { op zb: compute { flops = 1e12 FLOP } }\n"
    "      op cb: compute { flops = 2e12 FLOP; after = [prev.ab, prev.zb] }\n"
    "      op gb: reduce_scatter(tp) { size = 1 MB; stream = tp_comm; after = [cb] }\n"
    "      op bb: compute { flops = 2e12 FLOP; after = [prev.bb, gb, prev.zb, cb] }\n"
    "      if run.tp > 1 { op v: all_gather(dp) { size = 1 MB; after = [bb] } } else {\n"
    "        op v: all_gather(tp) { size = 1 MB; after = [prev.cb] } }\n"
    "      op ab: compute { flops = 2e12 FLOP; after = [v, bb, prev.cb, prev.none, prev.b, prev.a] }\n"
    "      op a: compute { flops = 1e12 FLOP; after = [ab, prev.a] }\n"
    "    }\n"
    "  }\n"
    "}\n"
    "train t0 { model = m; cluster = box; framework = fw\n"
    "  micro_batch = 1; global_batch = 8; seq = 1024; tp = 1; pp = 2; dp = 1 }\n"
    "train t1 = t0 { pp = 1 }\n"
    "train t2 = t0 { pp = 3 }\n"
    "train t3 = t0 { tp = 2; pp = 3 }\n"
    "train t4 = t0 { tp = 2; pp = 1 }\n"
    "train t5 = t0 { tp = 2; pp = 2 }\n"
    "train t6 = t0 { tp = 1; pp = 2; recompute = \"full\" }\n"
    "train t7 = t0 { tp = 1; pp = 1; recompute = \"full\" }\n";
  static const char *const trains[] = {"t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7"};
  plc_fx f;
  CU_ASSERT_EQUAL_FATAL(plc_fx_load(&f, plan), 0);
  f.sema.ev.lower_cache = plc_lcache_new("test ");
  int bad = 0;
  for (int t = 0; t < 8; t++) {
    const plc_ir_run *r = lower_direct(&f, trains[t]);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    plc_fx g;
    CU_ASSERT_EQUAL_FATAL(plc_fx_load(&g, plan), 0);
    setenv("PLC_LOWER_NO_MEMO", "1", 1); /* read by a lowering without a cache */
    const plc_ir_run *w = lower_direct(&g, trains[t]);
    unsetenv("PLC_LOWER_NO_MEMO");
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    runs_same(r, w, &bad);
    plc_fx_free(&g);
  }
  CU_ASSERT_EQUAL(bad, 0);
  CU_ASSERT(!plc_fx_reported(&f, "error"));
  long hits, misses, prev_free;
  plc_lcache_counts(f.sema.ev.lower_cache, &hits, &misses, &prev_free);
  CU_ASSERT(prev_free > 0);
  plc_lcache_free(f.sema.ev.lower_cache);
  f.sema.ev.lower_cache = NULL;
  plc_fx_free(&f);
}

/* Memory sections cached entry by entry (lower.c, plc_lower_memory_cached):
 * each entry of a section is a cache entry of its own, keyed by what it
 * read (lets included) and what the entries evaluated before it in the
 * same environment read.  The trains below share a cache as a search's
 * candidates do and vary tp, dp, micro_batch, recompute and pp, of which
 * each entry reads a few (through lets shared by entries: P by weights,
 * grads and optimizer; A by activations and buffers), so entries are
 * replayed into candidates that differ in what later ones read; buffers
 * (the largest of a chunk's layers counts) reads dp on a stage's last
 * layer only.  pipeline reads the stage's ends.
 * Each train's figures, every stage, chunk and part, as memory first saw
 * them and as lowering summed them, and its diagnostics, are compared with
 * the same train lowered fresh (no cache, no memo).  Train e2 (tp = 2 and
 * micro_batch = 2) makes optimizer negative, after weights and grads came
 * from the cache: the error is reported once, as fresh, and a train after
 * it is right again. */
static const char mem_items_plan[] = PLC_FX_MACHINE
  "model m { layers { dense = 8 } }\n"
  "framework fw {\n"
  "  template dense {\n"
  "    let P = 1200 B / run.tp\n"
  "    let A = 64 B * run.micro_batch / run.tp\n"
  "    let bad = run.tp == 2 && run.micro_batch == 2\n"
  "    let Q = 3 B * run.dp\n"
  "    memory {\n"
  "      weights = layer.model_first ? 2 * P : P\n"
  "      grads = P\n"
  "      optimizer = bad ? -1 B : 12 * P / run.dp\n"
  "      activations = run.recompute == \"full\" ? A : A * (layer.stage + 2)\n"
  "      buffers = layer.last ? A + Q : A * (layer.stage + 1)\n"
  "    }\n"
  "    op mm: compute { flops = 1e12 FLOP }\n"
  "  }\n"
  "  template pipeline {\n"
  "    memory {\n"
  "      weights = layer.first ? 7 B : 0 B\n"
  "      optimizer = 4 B * run.dp\n"
  "      activations = layer.last ? 11 B * run.micro_batch : 1 B\n"
  "    }\n"
  "  }\n"
  "}\n"
  "train t0 { model = m; cluster = box; framework = fw\n"
  "  micro_batch = 1; global_batch = 8; seq = 1024; tp = 1; pp = 1; dp = 1 }\n"
  "train t1 = t0 { dp = 2 }\n"
  "train t2 = t0 { micro_batch = 2 }\n"
  "train t3 = t0 { recompute = \"full\"; dp = 2 }\n"
  "train t4 = t0 { tp = 2 }\n"
  "train t5 = t0 { tp = 2; dp = 2; recompute = \"full\" }\n"
  "train t6 = t0 { pp = 2 }\n"
  "train t7 = t0 { pp = 2; dp = 2; micro_batch = 2 }\n"
  "train e2 = t0 { tp = 2; micro_batch = 2 }\n"
  "train t8 = t0 { tp = 2; pp = 2; dp = 2 }\n"
  "train t9 = t0 { pp = 2; recompute = \"full\" }\n"
  "train t10 = t0 { dp = 2; micro_batch = 2; recompute = \"full\" }\n"
  "train v0 = t0 { pp = 2; vpp = 2 }\n"
  "train v1 = t0 { pp = 2; vpp = 2; dp = 2 }\n";

/* Train name lowered in f (with whatever cache it has): its run or NULL,
 * the figures memory first saw (seen) and what it reported (from *at on). */
static plc_ir_run *mem_items_lower(plc_fx *f, const char *name, mem_seen *seen, size_t *at,
                                   char **said)
{
  seen->calls = 0;
  f->sema.ev.lower_unfit = mem_capture;
  f->sema.ev.lower_unfit_ctx = seen;
  plc_ir_run *r = lower_direct(f, name);
  const char *d = plc_fx_diags(f);
  *said = strdup(d + *at);
  *at = strlen(d);
  return r;
}

static void test_cache_memory_items(void)
{
  static const char *const trains[] = {"t0", "t1", "t2", "t3", "t4", "t5", "t6",
                                       "t7", "e2", "t8", "t9", "t10", "v0", "v1", "t1", "t6"};
  int ntrains = (int)(sizeof trains / sizeof trains[0]), bad = 0, errors = 0;
  plc_fx f;
  CU_ASSERT_EQUAL_FATAL(plc_fx_load(&f, mem_items_plan), 0);
  f.sema.ev.lower_cache = plc_lcache_new("test ");
  size_t at = strlen(plc_fx_diags(&f));
  mem_seen seen, fresh_seen;
  for (int s = 0; s < 2; s++)
    for (int c = 0; c < 2; c++)
      for (int k = 0; k < 5; k++) {
        mpq_init(seen.q[s][c][k]);
        mpq_init(fresh_seen.q[s][c][k]);
      }
  for (int t = 0; t < ntrains; t++) {
    char *said, *fresh_said;
    plc_ir_run *r = mem_items_lower(&f, trains[t], &seen, &at, &said);
    plc_fx g;
    CU_ASSERT_EQUAL_FATAL(plc_fx_load(&g, mem_items_plan), 0);
    size_t gat = strlen(plc_fx_diags(&g));
    setenv("PLC_LOWER_NO_MEMO", "1", 1); /* read by a lowering without a cache */
    plc_ir_run *w = mem_items_lower(&g, trains[t], &fresh_seen, &gat, &fresh_said);
    unsetenv("PLC_LOWER_NO_MEMO");
    PLC_CU_STR_EQ(said, fresh_said);
    errors += strstr(said, "error: memory entry 'optimizer' is negative") != NULL;
    CU_ASSERT_EQUAL(r == NULL, w == NULL);
    CU_ASSERT_EQUAL(seen.calls, fresh_seen.calls);
    if (r && w) {
      CU_ASSERT_EQUAL_FATAL(r->nstages, w->nstages);
      for (int s = 0; s < r->nstages; s++)
        for (int c = 0; c < r->vpp; c++) {
          const plc_ir_mem *a = &r->stages[s].mem[c], *b = &w->stages[s].mem[c];
          bad += !mpq_equal(a->weights, b->weights) + !mpq_equal(a->grads, b->grads) +
                 !mpq_equal(a->optimizer, b->optimizer) +
                 !mpq_equal(a->activations, b->activations) +
                 !mpq_equal(a->buffers, b->buffers);
          bad += !mem_seen_is(&seen, s, c, b) + !mem_seen_is(&fresh_seen, s, c, b);
        }
      runs_same(r, w, &bad);
      CU_ASSERT(r->memory_declared && w->memory_declared);
    }
    free(said);
    free(fresh_said);
    plc_fx_free(&g);
  }
  CU_ASSERT_EQUAL(bad, 0);
  CU_ASSERT_EQUAL(errors, 1);
  long hits, misses, prev_free;
  plc_lcache_counts(f.sema.ev.lower_cache, &hits, &misses, &prev_free);
  CU_ASSERT(hits > misses);
  for (int s = 0; s < 2; s++)
    for (int c = 0; c < 2; c++)
      for (int k = 0; k < 5; k++) {
        mpq_clear(seen.q[s][c][k]);
        mpq_clear(fresh_seen.q[s][c][k]);
      }
  plc_lcache_free(f.sema.ev.lower_cache);
  f.sema.ev.lower_cache = NULL;
  plc_fx_free(&f);
}

/* The size check of op times (lower.c, plc_lower_check_sizes): their
 * common denominator must stay within PLC_Q_MAX_BITS, and the op that
 * passes it is named.  One-limb denominators found to divide the multiple
 * are remembered by value (plc_lcm.dens) and not divided again.  Times 1 s
 * / p for distinct primes p just above 2^61, each but the first followed
 * by the one before again (a denominator seen before, as most are): the
 * op named is the one where the multiple, computed here by mpz_lcm over
 * every op in order (the slow path), first has more than PLC_Q_MAX_BITS
 * bits. */
static void test_lcm_small_denominators(void)
{
  enum { NPRIMES = 1100 };
  size_t cap = (size_t)NPRIMES * 2 * 64 + 4096, len = 0;
  char *text = malloc(cap);
  CU_ASSERT_PTR_NOT_NULL_FATAL(text);
  len += (size_t)snprintf(text + len, cap - len, "%smodel m { layers { dense = 1 } }\n"
                          "framework fw {\n template dense {\n", PLC_FX_MACHINE);
  mpz_t p, prev, l;
  mpz_inits(p, prev, l, NULL);
  mpz_set_ui(l, 1);
  mpz_ui_pow_ui(p, 2, 61);
  char want[64] = "";
  for (int i = 0, op = 0; i < NPRIMES; i++) {
    mpz_set(prev, p);
    mpz_nextprime(p, p);
    for (int k = 0; k < (i ? 2 : 1); k++, op++) {
      mpz_srcptr d = k ? prev : p;
      len += (size_t)gmp_snprintf(text + len, cap - len,
                                  "  op c%d: compute { time = 1 s / %Zd }\n", op, d);
      mpz_lcm(l, l, d);
      if (!*want && mpz_sizeinbase(l, 2) > PLC_Q_MAX_BITS)
        snprintf(want, sizeof want, "error: the time of 'c%d' and the times before it", op);
    }
  }
  snprintf(text + len, cap - len, " }\n}\ntrain t { model = m; cluster = box; framework = fw\n"
           "  micro_batch = 1; global_batch = 8; seq = 1024 }\n");
  CU_ASSERT(*want != '\0');
  plc_fx f;
  CU_ASSERT_EQUAL_FATAL(plc_fx_load(&f, text), 0);
  CU_ASSERT_PTR_NULL(lower_direct(&f, "t"));
  CU_ASSERT(plc_fx_reported(&f, want));
  plc_fx_free(&f);
  mpz_clears(p, prev, l, NULL);
  free(text);
}

int main(void)
{
  static const plc_cu_test tests[] = {
    {"even stage split", test_even_split},
    {"explicit stage split", test_explicit_split},
    {"layer kinds in order", test_kinds},
    {"op durations", test_op_times},
    {"mirrored backward and full recompute", test_mirror_and_recompute},
    {"streams, once, pipeline and step templates", test_streams_pipeline_step},
    {"errors", test_errors},
    {"precision: bf16, fp16, fp8 peaks", test_precision},
    {"precision errors", test_precision_errors},
    {"memory copies by chunk and kind", test_memory_copies},
    {"cache replays' names, moved", test_cache_names},
    {"cache replays after any previous instance", test_cache_prev_free},
    {"memory sections cached entry by entry", test_cache_memory_items},
    {"op times' common denominator, one-limb ones remembered", test_lcm_small_denominators},
    {NULL, NULL},
  };
  return plc_cu_run("lower", tests);
}
