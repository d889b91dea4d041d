/* output.h - results to standard output, or to a file written atomically:
 * into a temporary file beside it, renamed over it only on success, so an
 * error never leaves a truncated file and the old one stays. */
#ifndef PLC_OUTPUT_H
#define PLC_OUTPUT_H

#include <stdio.h>

typedef struct plc_output {
  FILE *f;
  char *path;  /* NULL: standard output */
  char *tmp;
} plc_output;

/* Returns 0, or -1 with a message printed (an I/O error: exit status 2). */
int plc_output_open(plc_output *o, const char *path);
/* Flush and, for a file, rename it into place; 0 or -1 (message printed). */
int plc_output_commit(plc_output *o);
/* Drop a file being written (the old one, if any, is left alone). */
void plc_output_abort(plc_output *o);

#endif
