/* report_json.h - the report of analysed training runs as one JSON document.
 *
 * The document (schema 1, documented in plc-json(5)) holds every figure of
 * the text report, each quantity both exact (a rational in base units) and
 * rounded (a decimal string with the unit the text report would choose).
 * Runs are added one by one and the document is written at the end:
 *
 *   plc_json_doc *doc = plc_json_new(PACKAGE_VERSION, defines, ndefines);
 *   plc_json_add_run(doc, &result, &opts);   (for each run)
 *   plc_json_finish(doc, stdout);             (writes and frees)
 *
 * The document copies what it needs: results may be freed once added. */
#ifndef PLC_REPORT_JSON_H
#define PLC_REPORT_JSON_H

#include <stddef.h>
#include <stdio.h>

#include "analysis.h"
#include "report.h"

#define PLC_JSON_SCHEMA 1

typedef struct plc_json_doc plc_json_doc;

/* A document for plc `version`, recording the -D NAME=EXPR overrides. */
plc_json_doc *plc_json_new(const char *version, const char *const *overrides, size_t n);
/* Append a run.  Rounded values use o->digits; o->exact is not used (the
 * exact form is always there); o->ops adds the list of collectives. */
void plc_json_add_run(plc_json_doc *doc, const plc_result *r, const plc_report_opts *o);
/* Append a search (a json_t * object, taken over) to the "searches" array,
 * which documents without searches do not have. */
void plc_json_add_search(plc_json_doc *doc, void *search);
/* Set up jansson's allocator; plc_json_new does, and a program that uses
 * jansson before (or in threads) calls it first. */
void plc_json_init(void);
/* Write the document, indented, with a final newline, and free it; returns
 * 0, or -1 when writing failed. */
int plc_json_finish(plc_json_doc *doc, FILE *out);

#endif
