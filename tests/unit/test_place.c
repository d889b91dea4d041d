/* test_place.c - CUnit tests of placement (compiler/lower/place.c): strides,
 * spans, tiers and links of each parallel dimension for layouts whose
 * numbers are derived by hand, the `order` field, EP/EDP and FSDP groups,
 * link overrides, microbatches, and the located errors of bad orders.
 *
 * The machine (plan_fixture.h): tier node of 4 devices on link fast, tier
 * all of 8 on link slow.  A group of size n and stride s spans (n-1)s + 1
 * ranks and goes to the smallest tier holding the span. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "cu_main.h"
#include "plan_fixture.h"

/* A train with the given layout fields (a compute-only template). */
static plc_drive_run *lower_layout(plc_fx *f, const char *layout)
{
  char text[2048];
  snprintf(text, sizeof text, "%s"
           "model tiny { layers { dense = 4 } }\n"
           "framework fw { template dense { op mm: compute { flops = 2e12 FLOP } } }\n"
           "train t { model = tiny; cluster = box; framework = fw\n"
           "  micro_batch = 1; global_batch = 8; seq = 1024\n  %s\n}\n", PLC_FX_MACHINE, layout);
  if (plc_fx_load(f, text))
    return NULL;
  return plc_fx_train(f, "t");
}

/* Assert one dimension's placement. */
static void placed(const plc_drive_run *r, plc_pdim d, int size, int stride, long span,
                   const char *tier, const char *link, unsigned line)
{
  const plc_ir_place *p = &r->ir->place[d];
  char msg[200];
  snprintf(msg, sizeof msg, "%s: size %ld stride %ld span %ld tier %s link %s", plc_pdim_name(d),
           (long)p->size, (long)p->stride, (long)p->span, p->tier ? p->tier : "-",
           p->link ? p->link : "-");
  int ok = p->size == size && p->stride == stride && p->span == span && p->tier &&
           !strcmp(p->tier, tier) && p->link && !strcmp(p->link, link);
  CU_assertImplementation(ok ? CU_TRUE : CU_FALSE, line, msg, __FILE__, "", CU_FALSE);
}
#define PLACED(r, d, n, s, span, tier, link) placed(r, d, n, s, span, tier, link, __LINE__)

/* Default order tp, cp, dp, pp (innermost first), tp = dp = pp = 2:
 * strides tp 1, cp 2, dp 2 (cp = 1 adds nothing), pp 4; spans tp 2 and
 * dp 3 fit a node (fast), pp 5 needs all (slow).  EDP = dp x cp / ep = 2
 * with the dp stride.  world 8 of 8; mu = 8 / (dp 2 x 1) = 4. */
static void test_default_order(void)
{
  plc_fx f;
  plc_drive_run *r = lower_layout(&f, "tp = 2; dp = 2; pp = 2");
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  PLACED(r, PLC_PD_TP, 2, 1, 2, "node", "fast");
  PLACED(r, PLC_PD_DP, 2, 2, 3, "node", "fast");
  PLACED(r, PLC_PD_EDP, 2, 2, 3, "node", "fast");
  PLACED(r, PLC_PD_PP, 2, 4, 5, "all", "slow");
  CU_ASSERT_EQUAL(r->ir->world, 8);
  CU_ASSERT_EQUAL(r->ir->devices, 8);
  CU_ASSERT_EQUAL(r->ir->mu, 4);
  CU_ASSERT_STRING_EQUAL(r->ir->schedule, "1f1b"); /* the default without vpp */
  CU_ASSERT_EQUAL(r->ir->recompute, 0);
  CU_ASSERT_EQUAL(f.diag.warnings, 0);
  plc_fx_free(&f);
}

/* order = [pp, tp]: pp 1, tp 2, then the rest in default order: cp 4,
 * dp 4.  pp spans 2 (node), tp 3 (node), dp (2-1) x 4 + 1 = 5 (all). */
static void test_order_pp_tp(void)
{
  plc_fx f;
  plc_drive_run *r = lower_layout(&f, "tp = 2; dp = 2; pp = 2; order = [pp, tp]");
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  PLACED(r, PLC_PD_PP, 2, 1, 2, "node", "fast");
  PLACED(r, PLC_PD_TP, 2, 2, 3, "node", "fast");
  PLACED(r, PLC_PD_DP, 2, 4, 5, "all", "slow");
  PLACED(r, PLC_PD_EDP, 2, 4, 5, "all", "slow");
  plc_fx_free(&f);
}

/* order = [dp, pp]: dp 1, pp 2, tp 4, cp 8.  tp spans 5 ranks, more than
 * a node: it runs on slow and the article's rule warns. */
static void test_order_tp_outside(void)
{
  plc_fx f;
  plc_drive_run *r = lower_layout(&f, "tp = 2; dp = 2; pp = 2; order = [dp, pp]");
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  PLACED(r, PLC_PD_DP, 2, 1, 2, "node", "fast");
  PLACED(r, PLC_PD_PP, 2, 2, 3, "node", "fast");
  PLACED(r, PLC_PD_TP, 2, 4, 5, "all", "slow");
  CU_ASSERT_EQUAL(f.diag.warnings, 1);
  CU_ASSERT(plc_fx_reported(&f, "warning: tp groups span 5 ranks, more than one 'node' "
                                "(4 devices): tp traffic leaves the node"));
  plc_fx_free(&f);
}

/* Bad orders are errors at the offending name (line 9 of the plan). */
static void test_order_errors(void)
{
  plc_fx f;
  CU_ASSERT_PTR_NULL(lower_layout(&f, "tp = 2; dp = 2; order = [tp, ep]"));
  CU_ASSERT(plc_fx_reported(&f, "test.plan:9:32: error: the rank order lists tp, cp, dp and pp "
                                "only (ep, edp, shard and replicate are placed inside dp)"));
  plc_fx_free(&f);
  CU_ASSERT_PTR_NULL(lower_layout(&f, "tp = 2; dp = 2; order = [dp, dp]"));
  CU_ASSERT(plc_fx_reported(&f, "test.plan:9:32: error: 'dp' appears twice in the rank order"));
  plc_fx_free(&f);
}

/* dp = 8, ep = 4: EP is carved innermost from the dp block (stride 1,
 * span 4: node); EDP = 8 / 4 = 2 with stride 4, span 5 (all).  mu = 8 /
 * (8 x 1) = 1. */
static void test_expert_groups(void)
{
  plc_fx f;
  plc_drive_run *r = lower_layout(&f, "dp = 8; ep = 4");
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  PLACED(r, PLC_PD_EP, 4, 1, 4, "node", "fast");
  PLACED(r, PLC_PD_DP, 8, 1, 8, "all", "slow");
  PLACED(r, PLC_PD_EDP, 2, 4, 5, "all", "slow");
  CU_ASSERT_EQUAL(r->ir->mu, 1);
  plc_fx_free(&f);
}

/* FSDP/HSDP: shard 2 x replicate 2 makes dp = 4 (stride 2 after tp 2);
 * shard groups are innermost in dp (stride 2, span 3: node), replicate
 * groups outside them (stride 2 x 2 = 4, span 5: all).  mu = 8 / 4 = 2. */
static void test_fsdp_groups(void)
{
  plc_fx f;
  plc_drive_run *r = lower_layout(&f, "tp = 2; shard = 2; replicate = 2");
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  PLACED(r, PLC_PD_DP, 4, 2, 7, "all", "slow");
  PLACED(r, PLC_PD_SHARD, 2, 2, 3, "node", "fast");
  PLACED(r, PLC_PD_REPLICATE, 2, 4, 5, "all", "slow");
  CU_ASSERT_EQUAL(r->ir->mu, 2);
  plc_fx_free(&f);
}

/* links { pp = fast } keeps pp's tier (all) but runs it on fast. */
static void test_link_override(void)
{
  plc_fx f;
  plc_drive_run *r = lower_layout(&f, "tp = 2; dp = 2; pp = 2; links { pp = fast }");
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  PLACED(r, PLC_PD_PP, 2, 4, 5, "all", "fast");
  CU_ASSERT_EQUAL(r->ir->place[PLC_PD_PP].overridden, 1);
  CU_ASSERT_EQUAL(r->ir->place[PLC_PD_TP].overridden, 0);
  plc_fx_free(&f);
}

/* More devices than the cluster has is an error; fewer is a warning. */
static void test_world(void)
{
  plc_fx f;
  CU_ASSERT_PTR_NULL(lower_layout(&f, "tp = 4; dp = 4"));
  CU_ASSERT(plc_fx_reported(&f, "error: the layout needs tp x cp x dp x pp = 16 devices, but "
                                "cluster 'box' has 8"));
  plc_fx_free(&f);
  plc_drive_run *r = lower_layout(&f, "tp = 2; dp = 2");
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  CU_ASSERT_EQUAL(r->ir->world, 4);
  CU_ASSERT_EQUAL(r->ir->devices, 8);
  CU_ASSERT_EQUAL(f.diag.warnings, 1);
  plc_fx_free(&f);
}

/* Enum fields reach the run: vpp 2 makes interleaved the default. */
static void test_enum_fields(void)
{
  plc_fx f;
  plc_drive_run *r = lower_layout(&f, "pp = 2; vpp = 2; recompute = selective");
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  CU_ASSERT_STRING_EQUAL(r->ir->schedule, "interleaved");
  CU_ASSERT_EQUAL(r->ir->recompute, 1);
  plc_fx_free(&f);
  r = lower_layout(&f, "pp = 2; schedule = gpipe; recompute = \"full\"");
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  CU_ASSERT_STRING_EQUAL(r->ir->schedule, "gpipe");
  CU_ASSERT_EQUAL(r->ir->recompute, 2);
  plc_fx_free(&f);
}

int main(void)
{
  static const plc_cu_test tests[] = {
    {"default rank order", test_default_order},
    {"order = [pp, tp]", test_order_pp_tp},
    {"order puts tp outside a node", test_order_tp_outside},
    {"bad rank orders", test_order_errors},
    {"expert groups", test_expert_groups},
    {"FSDP shard and replicate groups", test_fsdp_groups},
    {"link override", test_link_override},
    {"devices used", test_world},
    {"schedule and recompute", test_enum_fields},
    {NULL, NULL},
  };
  return plc_cu_run("place", tests);
}
