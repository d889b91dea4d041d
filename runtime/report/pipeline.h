/* pipeline.h - the ASCII picture of a whole step's pipeline schedule: a row
 * per stage, every block where the block-level simulation runs it
 * (blocks.h), the middle of a long step elided (pipeline_text.c). */
#ifndef PLC_PIPELINE_H
#define PLC_PIPELINE_H

#include <stdio.h>

#include "analysis.h"
#include "report.h"

/* Print the picture of res's step, `width` columns wide, values as the
 * report prints them; a step that cannot be drawn gets one line saying
 * why. */
void plc_pipeline_print(FILE *out, const plc_result *res, int width, const plc_report_opts *o);

#endif
