/* test_sema.c - CUnit tests of the semantic pass: a small train with one
 * field added is accepted or rejected with a located message.  Covers the
 * enum fields (schedule, recompute: every valid value, and bad ones), the
 * `order` field, unknown and misspelt names, dimensions and counts. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "cu_main.h"
#include "plan_fixture.h"

/* The train is on line 8; `extra` goes at column 7 of it. */
static const char plan_head[] = PLC_FX_MACHINE
  "model tiny { layers { dense = 4 } }\n"
  "framework fw { template dense {\n"
  "  op mm: compute { flops = 2e12 FLOP } } }\n"
  "train t {\n"
  "  model = tiny; cluster = box; framework = fw; tp = 2; dp = 2; pp = 2\n"
  "  micro_batch = 1; global_batch = 8; seq = 1024\n";

/* Load the plan with `extra` as the train's last line; returns the errors. */
static int load_with(plc_fx *f, const char *extra)
{
  char text[2048];
  snprintf(text, sizeof text, "%s  %s\n}\n", plan_head, extra);
  return plc_fx_load(f, text);
}

static void accepts(const char *extra)
{
  plc_fx f;
  int errors = load_with(&f, extra);
  char msg[512];
  snprintf(msg, sizeof msg, "%s: %s", extra, plc_fx_diags(&f));
  PLC_CU_ASSERT_MSG(errors == 0, msg);
  plc_fx_free(&f);
}

static void rejects(const char *extra, const char *want)
{
  plc_fx f;
  int errors = load_with(&f, extra);
  char msg[512];
  snprintf(msg, sizeof msg, "%s: got \"%s\", want \"%s\"", extra, plc_fx_diags(&f), want);
  PLC_CU_ASSERT_MSG(errors == 1 && plc_fx_reported(&f, want), msg);
  plc_fx_free(&f);
}

/* Every documented value, as a word or a string. */
static void test_enums_valid(void)
{
  accepts("");
  accepts("schedule = gpipe");
  accepts("schedule = \"1f1b\"");
  accepts("schedule = \"interleaved\"; vpp = 2");
  accepts("schedule = \"zb_h1\"");
  accepts("schedule = \"dualpipe\"");
  accepts("recompute = none");
  accepts("recompute = \"selective\"");
  accepts("recompute = full");
}

/* Values outside the enum: a near miss, another field's value, a number. */
static void test_enums_bad(void)
{
  rejects("schedule = \"1f2b\"",
          "test.plan:11:14: error: 'schedule' must be one of: gpipe, 1f1b, interleaved, "
          "zb_h1, dualpipe");
  rejects("schedule = full", "error: 'schedule' must be one of:");
  rejects("schedule = 3", "test.plan:11:14: error: 'schedule' must be one of:");
  rejects("recompute = partial",
          "test.plan:11:15: error: 'recompute' must be one of: none, selective, full");
  rejects("recompute = \"1f1b\"", "error: 'recompute' must be one of: none, selective, full");
}

/* `order` is a list of parallel dimensions; which ones the placement takes
 * is test_place.c's business. */
static void test_order(void)
{
  accepts("order = [pp, tp]");
  accepts("order = [cp, dp, tp, pp]");
  rejects("order = tp", "test.plan:11:11: error: 'order' must be a list of parallel dimensions");
  rejects("order = [tp, foo]", "test.plan:11:16: error: not a parallel dimension (expected one "
          "of tp, cp, dp, ep, pp, edp, shard, replicate)");
}

static void test_fields(void)
{
  rejects("globl_batch = 3",
          "test.plan:11:3: error: train 't' has no field 'globl_batch'; did you mean "
          "'global_batch'?");
  rejects("cp = 2 ms", "test.plan:11:8: error: field 'cp' must be a dimensionless number, not "
          "a number in s");
  rejects("cp = 1.5", "test.plan:11:8: error: 'cp' must be a whole number of at least 1");
  rejects("vpp = 0", "error: 'vpp' must be a whole number of at least 1");
  rejects("tp = 4", "test.plan:11:3: error: redefinition of 'tp'");
}

/* A required field missing is reported at the train's name. */
static void test_required(void)
{
  plc_fx f;
  CU_ASSERT_EQUAL(plc_fx_load(&f, PLC_FX_MACHINE "model tiny { layers { dense = 1 } }\n"
                                  "framework fw { template dense { op mm: compute { time = 1 ms } } }\n"
                                  "train t { model = tiny; cluster = box; framework = fw\n"
                                  "  micro_batch = 1; global_batch = 1 }\n"), 1);
  CU_ASSERT(plc_fx_reported(&f, "test.plan:7:7: error: train 't' needs a field 'seq' (tokens per sequence)"));
  plc_fx_free(&f);
}

int main(void)
{
  static const plc_cu_test tests[] = {
    {"enum fields: every valid value", test_enums_valid},
    {"enum fields: bad values", test_enums_bad},
    {"rank order field", test_order},
    {"train fields", test_fields},
    {"required fields", test_required},
    {NULL, NULL},
  };
  return plc_cu_run("sema", tests);
}
