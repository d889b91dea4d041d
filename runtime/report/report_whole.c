/* report_whole.c - the whole step in the reports and results (see
 * report_whole.h). */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "report_whole.h"
#include "report_parts.h"

#include <stdlib.h>
#include <string.h>

char *plc_report_whole_head(const plc_whole *w, const plc_result *r, const plc_report_opts *o)
{
  (void)o;
  const plc_ir_run *run = r->run;
  if (!w->known)
    return plc_report_sprintf("not simulated: %s", w->why);
  return plc_report_sprintf("%s, %ld microbatch%s, %d ops, links %s; critical stage %d of %d "
                            "(the most compute)",
                            run->schedule, run->mu, run->mu == 1 ? "" : "es", w->nops,
                            w->share ? "shared" : "dedicated", w->critical, w->nstages);
}

/* "the report's step (block level): 1.761 s (the same)", or "(+12 ms)". */
static char *plc_report_whole_vs(const plc_whole *w, const plc_result *r,
                                 const plc_report_opts *o)
{
  char *rep = plc_report_time(o, r->step), *d = plc_report_time(o, w->diff), *s;
  if (mpq_sgn(w->diff) == 0)
    s = plc_report_sprintf("the makespan; the report's step (block level): %s (the same)", rep);
  else
    s = plc_report_sprintf("the makespan; the report's step (block level): %s (%s%s)", rep,
                           mpq_sgn(w->diff) > 0 ? "+" : "", d);
  free(rep);
  free(d);
  return s;
}

static void plc_report_whole_set(plc_report_whole_row *row, const plc_whole *w,
                                 const plc_report_opts *o, const char *key, const char *label,
                                 int dim, mpq_srcptr t, char *note)
{
  mpq_t share;
  mpq_init(share);
  if (mpq_sgn(w->step) > 0)
    mpq_div(share, t, w->step);
  row->key = key;
  row->label = label;
  row->dim = dim;
  row->time = t;
  row->t = plc_report_time(o, t);
  row->share = plc_report_pct(o, share);
  row->note = note;
  mpq_clear(share);
}

int plc_report_whole_rows(const plc_whole *w, const plc_result *r, const plc_report_opts *o,
                          plc_report_whole_row *rows)
{
  if (!w->known)
    return 0;
  int n = 0;
  plc_report_whole_set(&rows[n++], w, o, "fill", "fill", -1, w->fill,
                       plc_report_sprintf("idle before its first op"));
  plc_report_whole_set(&rows[n++], w, o, "compute", "compute", -1, w->compute,
                       plc_report_sprintf("compute on the compute stream"));
  for (int d = 0; d < PLC_PD_COUNT; d++)
    if (mpq_sgn(w->exposed[d]) != 0)
      plc_report_whole_set(&rows[n++], w, o, plc_pdim_name((plc_pdim)d),
                           plc_pdim_name((plc_pdim)d), d, w->exposed[d],
                           plc_report_sprintf("exposed %s communication",
                                              plc_pdim_name((plc_pdim)d)));
  plc_report_whole_set(&rows[n++], w, o, "other_stream", "other stream", -1, w->stall_other,
                       plc_report_sprintf("waiting for compute on its other streams"));
  plc_report_whole_set(&rows[n++], w, o, "wait_stage", "wait stage", -1, w->wait_stage,
                       plc_report_sprintf("waiting for another stage"));
  plc_report_whole_set(&rows[n++], w, o, "drain", "drain", -1, w->drain,
                       plc_report_sprintf("idle after its last op"));
  plc_report_whole_set(&rows[n++], w, o, "time", "step", -1, w->step,
                       plc_report_whole_vs(w, r, o));
  return n;
}

void plc_report_whole_rows_free(plc_report_whole_row *rows, int n)
{
  for (int i = 0; i < n; i++) {
    free(rows[i].t);
    free(rows[i].share);
    free(rows[i].note);
  }
}

const char *plc_report_whole_figure(const plc_result *r, const char *name, plc_quantity *q)
{
  static const char *const names[] = {"sim_step_time", "sim_compute", "sim_exposed",
                                      "sim_other_stream", "sim_wait_stage", "sim_fill",
                                      "sim_drain"};
  size_t i = 0;
  while (i < sizeof names / sizeof names[0] && strcmp(names[i], name)) i++;
  if (i == sizeof names / sizeof names[0])
    return "no such result";
  const plc_whole *w = plc_whole_get(r);
  if (!w->known)
    return w->no;
  mpq_srcptr vals[] = {w->step, w->compute, w->exposed_all, w->stall_other, w->wait_stage,
                       w->fill, w->drain};
  q->dim.e[PLC_DIM_SEC] = 1;
  mpq_set(q->v, vals[i]);
  return NULL;
}
