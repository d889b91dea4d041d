/* svg.h - the timeline as an SVG picture.
 *
 * For each train, one microbatch of every pipeline stage, forward then
 * backward (plc_timeline_microbatch), on one time axis: a lane per stream
 * per stage, ops coloured by kind (compute and each collective primitive),
 * the exposed part of communication underlined in red, the compute
 * stream's waits shaded, a dashed line where the backward starts, a time
 * axis in ms and a legend; under it the whole step at block level
 * (blocks.h), a lane per stage, with each stage's memory as a line when
 * the framework declares memory.  Each op has a tooltip (<title>) with its exact
 * times.  Pixel positions are round(t x pixels / span) by integer
 * arithmetic on the exact times; no floating point. */
#ifndef PLC_SVG_H
#define PLC_SVG_H

#include <stdio.h>

#include "analysis.h"
#include "report.h"

typedef struct plc_svg plc_svg;

/* Values in tooltips and headings print with o's digits. */
plc_svg *plc_svg_new(const plc_report_opts *o);
/* Add a train (its timeline is built now; res is not kept). */
void plc_svg_add(plc_svg *s, const plc_result *res);
/* Write the picture to f; 0, or -1 when f has an error. */
int plc_svg_print(FILE *f, const plc_svg *s);
/* Write the picture atomically (plc_timeline_save); 0 or -1. */
int plc_svg_save(plc_svg *s, const char *path);
void plc_svg_free(plc_svg *s);

/* Text with & < > " ' escaped for XML content and attributes. */
void plc_svg_escape(FILE *f, const char *text);

#endif
