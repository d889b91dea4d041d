/* step_report.c - the whole-step simulation as text (see step_report.h). */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "step_report.h"
#include "quantity.h"

#include <stdlib.h>

static void plc_step_cell(FILE *out, mpq_srcptr t, int digits, int exact)
{
  char *s = plc_q_format_raw(t, 0, 1, 0, digits, exact);
  fprintf(out, "  %12s", s);
  free(s);
}

void plc_step_report(FILE *out, const plc_step *st, const plc_ir_run *run, int share,
                     int digits, int exact)
{
  fprintf(out, "whole step of %s: schedule %s, %d stage%s, %ld microbatch%s, %d ops, links %s\n",
          run->name, run->schedule, st->nstages, st->nstages == 1 ? "" : "s", run->mu,
          run->mu == 1 ? "" : "es", st->nops, share ? "shared" : "dedicated");
  fprintf(out, "  step");
  plc_step_cell(out, st->makespan, digits, exact);
  fprintf(out, "\n\n  stage          fill       compute       exposed  other stream"
               "    wait stage         drain           end\n");
  mpq_t e;
  mpq_init(e);
  for (int s = 0; s < st->nstages; s++) {
    const plc_step_stage *ss = &st->stages[s];
    mpq_set_ui(e, 0, 1);
    for (int d = 0; d < PLC_PD_COUNT; d++) mpq_add(e, e, ss->exposed[d]);
    fprintf(out, "  %4d%s", s, s == st->critical ? " *" : "  ");
    plc_step_cell(out, ss->fill, digits, exact);
    plc_step_cell(out, ss->compute, digits, exact);
    plc_step_cell(out, e, digits, exact);
    plc_step_cell(out, ss->stall_other, digits, exact);
    plc_step_cell(out, ss->wait_stage, digits, exact);
    plc_step_cell(out, ss->drain, digits, exact);
    plc_step_cell(out, ss->end, digits, exact);
    fputc('\n', out);
  }
  mpq_clear(e);
  fprintf(out, "  (* the critical stage: the most compute; each row adds up to the step)\n");
  /* what the critical stage's exposed time is made of, by dimension */
  const plc_step_stage *cs = &st->stages[st->critical];
  int any = 0;
  for (int d = 0; d < PLC_PD_COUNT; d++)
    if (mpq_sgn(cs->exposed[d])) {
      char *v = plc_q_format_raw(cs->exposed[d], 0, 1, 0, digits, exact);
      fprintf(out, "%s %s %s", any ? "," : "  exposed on the critical stage:", plc_pdim_name(d), v);
      free(v);
      any = 1;
    }
  if (any)
    fputc('\n', out);
}
