/* step_report.h - the whole-step simulation as text (--emit=step). */
#ifndef PLC_STEP_REPORT_H
#define PLC_STEP_REPORT_H

#include <stdio.h>

#include "step.h"

/* A heading for the run, then one row per stage: the parts its compute
 * stream adds up to (fill, compute, exposed communication by dimension,
 * waits for its other streams and for other stages, drain) and when its
 * last op ends.  The critical stage (most compute) is starred. */
void plc_step_report(FILE *out, const plc_step *st, const plc_ir_run *run, int share,
                     int digits, int exact);

#endif
