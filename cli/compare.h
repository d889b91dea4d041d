/* compare.h - several evaluated runs side by side, each figure with its
 * absolute and relative difference from the first run (the article's
 * H100-against-910C tables). */
#ifndef PLC_COMPARE_H
#define PLC_COMPARE_H

#include <stdio.h>

#include "analysis.h"
#include "report.h"

void plc_compare_text(FILE *out, const plc_result *const *runs, const char *const *labels, int n,
                      const plc_report_opts *o);

#endif
