/* fuzz_pipeline.c - libFuzzer/AFL++ harness for the whole pipeline: check a
 * plan held in memory, then lower, simulate, analyse and report every train
 * in it (text with --ops and the sensitivity re-evaluations, Markdown and
 * JSON) and decide its assertions.  Imports are refused without touching
 * the file system. */
#include <stdlib.h>

#include "drive.h"
#include "fuzz_common.h"
#include "report_json.h"
#include "report_md.h"
#include "step_report.h"
#include "svg.h"
#include "timeline.h"
#include "trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void plc_fuzz_evaluate(plc_fuzz *f)
{
  plc_drive d;
  plc_report_opts o = {.digits = 4, .ops = 1};
  plc_drive_init(&d, &f->sema, &f->prog, &o);
  const plc_ast **trains;
  int n = plc_drive_select(&d, &f->file, 1, &trains);
  plc_json_doc *doc = plc_json_new("fuzz", NULL, 0);
  for (int i = 0; i < n; i++) {
    plc_drive_run *r = trains[i] ? plc_drive_train(&d, trains[i]) : NULL;
    if (!r)
      continue;
    plc_report_text(f->sink, &r->res, &o);
    plc_md_report(f->sink, &r->res, &o);
    plc_json_add_run(doc, &r->res, &o);
    plc_timeline_print(f->sink, &r->res, -1, 100, &o);
    plc_trace *t = plc_trace_new(f->sink);
    plc_svg *g = plc_svg_new(&o);
    if (plc_trace_add(t, &r->res) == 0)
      plc_trace_finish(t);
    plc_svg_add(g, &r->res);
    plc_svg_print(f->sink, g);
    plc_trace_free(t);
    plc_svg_free(g);
    for (int share = 0; share <= 1; share++) { /* the whole-step engine too */
      plc_step st;
      char msg[256];
      plc_step_opts so = {.share = share};
      if (plc_step_run(&st, r->ir, &so, msg, sizeof msg))
        plc_step_report(f->sink, &st, r->ir, share, 4, 0);
      plc_step_free(&st);
    }
  }
  plc_json_finish(doc, f->sink);
  free(trains);
  if (!f->diag.errors)
    plc_drive_asserts(&d);
  plc_drive_free(&d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  plc_fuzz f;
  if (plc_fuzz_begin(&f, data, size))
    plc_fuzz_evaluate(&f);
  plc_fuzz_end(&f);
  return 0;
}
