/* fuzz_pipeline.c - libFuzzer harness for the whole pipeline: check a plan
 * held in memory, then lower, simulate, analyse and report every train in
 * it and decide its assertions.  Imports are refused without touching the
 * file system. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "drive.h"
#include "load.h"
#include "sema.h"
#include "svg.h"
#include "timeline.h"
#include "trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void plc_fuzz_evaluate(plc_sema *s, plc_program *prog, plc_ast *file, FILE *sink)
{
  plc_drive d;
  plc_report_opts o = {4, 0, 1};
  plc_drive_init(&d, s, prog, &o);
  const plc_ast **trains;
  int n = plc_drive_select(&d, &file, 1, &trains);
  for (int i = 0; i < n; i++) {
    plc_drive_run *r = trains[i] ? plc_drive_train(&d, trains[i]) : NULL;
    if (!r)
      continue;
    plc_report_text(sink, &r->res, &o);
    plc_timeline_print(sink, &r->res, -1, 100, &o);
    plc_trace *t = plc_trace_new();
    plc_svg *g = plc_svg_new(&o);
    if (plc_trace_add(t, &r->res) == 0)
      plc_trace_print(sink, t);
    plc_svg_add(g, &r->res);
    plc_svg_print(sink, g);
    plc_trace_free(t);
    plc_svg_free(g);
  }
  free(trains);
  if (!prog->diag->errors)
    plc_drive_asserts(&d);
  plc_drive_free(&d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  FILE *sink = fopen("/dev/null", "w");
  plc_diag d;
  plc_diag_init(&d, sink);
  plc_arena *ar = plc_arena_new();
  plc_program prog;
  plc_program_init(&prog, ar, &d);
  prog.no_files = 1;
  plc_ast *file = plc_load_text(&prog, "fuzz.plan", (const char *)data, size);
  if (!d.errors && file) {
    plc_sema s;
    plc_sema_check(&s, &prog, NULL, 0);
    if (!d.errors)
      plc_fuzz_evaluate(&s, &prog, file, sink);
  }
  plc_program_free(&prog);
  plc_arena_free(ar);
  fclose(sink);
  return 0;
}
