/* report_whole.h - the "whole step (simulated)" section of the reports
 * and the sim_* results, from the whole-step simulation (whole.h).
 *
 * The text, Markdown and JSON writers each print the same rows: the
 * critical stage's compute stream of the simulated step, split into fill,
 * compute, exposed communication per dimension, waits for its other
 * streams and for other stages, and drain, adding up to the simulated
 * step, which is compared with the report's (per-microbatch) step. */
#ifndef PLC_REPORT_WHOLE_H
#define PLC_REPORT_WHOLE_H

#include "report.h"
#include "whole.h"

#define PLC_REPORT_WHOLE_MAX_ROWS (PLC_PD_COUNT + 6)

typedef struct plc_report_whole_row {
  const char *key;     /* JSON key: "fill", "compute", a dimension, ... */
  const char *label;   /* as the text report prints it */
  int dim;             /* an exposed row's dimension, else -1 */
  mpq_srcptr time;
  char *t, *share, *note; /* formatted; malloc'd */
} plc_report_whole_row;

/* One line under the heading: what was simulated, or why not. */
char *plc_report_whole_head(const plc_whole *w, const plc_result *r, const plc_report_opts *o);
/* The rows (none when the step was not simulated), the last the step. */
int plc_report_whole_rows(const plc_whole *w, const plc_result *r, const plc_report_opts *o,
                          plc_report_whole_row *rows);
void plc_report_whole_rows_free(plc_report_whole_row *rows, int n);

/* A sim_* result (names in plc(5)): sets q and returns NULL, or why not. */
const char *plc_report_whole_figure(const plc_result *r, const char *name, plc_quantity *q);

#endif
