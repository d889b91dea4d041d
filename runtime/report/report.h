/* report.h - the text report of an analysed training run.
 *
 * Sections follow the article's checklist (CH 12.1): placement, the
 * communication inventory, the bubble, the step decomposition, efficiency,
 * the bottleneck.  Values print with an automatic unit and `digits`
 * significant digits, or exactly (`exact`). */
#ifndef PLC_REPORT_H
#define PLC_REPORT_H

#include <stdio.h>

#include "analysis.h"

typedef struct plc_report_opts {
  int digits;
  int exact;
  int ops;    /* also list every collective of the critical stage */
  int whole_step; /* also the whole step simulated op by op (report_whole.h) */
  const char *const *overrides; /* the -D NAME=EXPR in force, for the header */
  int noverrides;
} plc_report_opts;

void plc_report_text(FILE *out, const plc_result *r, const plc_report_opts *o);

/* A figure of a result by the name asserts use (step_time, eta,
 * peak_memory, ...): sets q (value and dimension) and returns NULL, or
 * says why the run has no such figure ("no mfu (...)"). */
const char *plc_report_figure(const plc_result *r, const char *name, plc_quantity *q);

#endif
