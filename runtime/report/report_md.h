/* report_md.h - the report of an analysed training run as Markdown.
 *
 * The sections of the text report, for pasting into a pull request or a
 * review: a heading per run, a list for its layout, pipe tables (GitHub
 * flavour) for placement, communication, the collectives (with o->ops),
 * the step decomposition and efficiency.  Numbers are the text report's,
 * with the same --digits and --exact. */
#ifndef PLC_REPORT_MD_H
#define PLC_REPORT_MD_H

#include <stdio.h>

#include "analysis.h"
#include "report.h"

void plc_md_report(FILE *out, const plc_result *r, const plc_report_opts *o);

#endif
