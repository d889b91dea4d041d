/* plan_fixture.h - compile a plan held in memory for the CUnit tests of
 * the evaluator, the semantic pass, placement, lowering and the analysis.
 *
 * The pipeline is driven the way plc does it (and the fuzz harnesses,
 * tests/fuzz/fuzz_common.h): load the text with imports refused, check it,
 * then lower and analyse a train through the driver.  Diagnostics are kept
 * in memory so a test can assert the message of a bad plan.  Values are
 * compared exactly, as rationals given by p/q. */
#ifndef PLC_PLAN_FIXTURE_H
#define PLC_PLAN_FIXTURE_H

#include <gmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drive.h"
#include "load.h"
#include "sema.h"

typedef struct plc_fx {
  char *diags;    /* everything reported, NUL-terminated after plc_fx_diags */
  size_t ndiags;
  FILE *out;
  plc_diag diag;
  plc_arena *arena;
  plc_program prog;
  plc_sema sema;
  plc_drive drive;
  int driving;
} plc_fx;

/* Load and check text; returns the number of errors. */
static inline int plc_fx_load(plc_fx *f, const char *text)
{
  memset(f, 0, sizeof *f);
  f->out = open_memstream(&f->diags, &f->ndiags);
  plc_diag_init(&f->diag, f->out);
  f->arena = plc_arena_new();
  plc_program_init(&f->prog, f->arena, &f->diag);
  f->prog.no_files = 1;
  if (!plc_load_text(&f->prog, "test.plan", text, strlen(text)) || f->diag.errors)
    return f->diag.errors ? f->diag.errors : 1;
  plc_sema_check(&f->sema, &f->prog, NULL, 0);
  return f->diag.errors;
}

/* What was reported so far ("" when nothing). */
static inline const char *plc_fx_diags(plc_fx *f)
{
  fflush(f->out);
  return f->diags ? f->diags : "";
}

static inline int plc_fx_reported(plc_fx *f, const char *text)
{
  return strstr(plc_fx_diags(f), text) != NULL;
}

static inline void plc_fx_drive(plc_fx *f)
{
  if (!f->driving) {
    plc_report_opts o = {.digits = 4};
    plc_drive_init(&f->drive, &f->sema, &f->prog, &o);
    f->driving = 1;
  }
}

/* Lower and analyse the train called name; NULL when it has errors. */
static inline plc_drive_run *plc_fx_train(plc_fx *f, const char *name)
{
  plc_fx_drive(f);
  plc_binding *b = plc_env_find_local(f->sema.ev.global, name);
  if (!b || !b->def)
    return NULL;
  return plc_drive_train(&f->drive, b->def);
}

/* The value of a top-level let (train results included). */
static inline plc_value *plc_fx_let(plc_fx *f, const char *name)
{
  plc_fx_drive(f);
  plc_binding *b = plc_env_find_local(f->sema.ev.global, name);
  return b && b->def ? plc_eval_binding(&f->sema.ev, b, &b->def->loc) : NULL;
}

/* Is v a known number equal to num/den?  (Dimension not checked.) */
static inline int plc_fx_is(const plc_value *v, long num, unsigned long den)
{
  if (!v || v->tag != PLC_V_NUM || !v->known)
    return 0;
  return mpq_cmp_si(v->q, num, den) == 0;
}

/* Is q exactly num/den? */
static inline int plc_fx_q(mpq_srcptr q, long num, unsigned long den)
{
  return mpq_cmp_si(q, num, den) == 0;
}

/* Is q exactly the rational written "p/q" or "p" (any size)? */
static inline int plc_fx_qs(mpq_srcptr q, const char *text)
{
  mpq_t want;
  mpq_init(want);
  int ok = mpq_set_str(want, text, 10) == 0;
  if (ok) {
    mpq_canonicalize(want);
    ok = mpq_equal(q, want);
  }
  mpq_clear(want);
  return ok;
}

static inline void plc_fx_free(plc_fx *f)
{
  if (f->driving)
    plc_drive_free(&f->drive);
  plc_program_free(&f->prog);
  plc_arena_free(f->arena);
  fclose(f->out);
  free(f->diags);
}

/* The small machine the tests build on (hand numbers):
 * gpu: 100 TFLOPS x 50% = 50 TFLOP/s, so 2e12 FLOP take 40 ms; 2 TB/s of
 * memory bandwidth, so 1 GB of traffic takes 0.5 ms;
 * fast: 100 GB/s, 1 us per step; slow: 10 GB/s, 10 us per step;
 * box: tiers node (4 devices, fast) and all (8 devices, slow). */
#define PLC_FX_MACHINE                                                        \
  "device gpu { peak = 100 TFLOPS; efficiency = 50%; mem_bw = 2 TB/s }\n"      \
  "link fast { bw = 100 GB/s; latency = 1 us }\n"                             \
  "link slow { bw = 10 GB/s; latency = 10 us }\n"                             \
  "cluster box { device = gpu; tier node { size = 4; link = fast }; "         \
  "tier all { size = 8; link = slow } }\n"

#endif
