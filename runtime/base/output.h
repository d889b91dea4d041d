/* output.h - results to standard output, or to a file written atomically.
 *
 * A regular file (or a name not yet taken) is written into a temporary
 * file with a short name (.plc-XXXXXX) in the same directory, renamed over
 * it only on success, so an error never leaves a truncated file and the
 * old one stays.  Symbolic links are followed: the file they lead to is
 * replaced, the link stays.  What is not a regular file -- a device such as
 * /dev/null, a FIFO, or a descriptor named through /proc (/dev/stdout,
 * /dev/fd/N) -- is opened and written in place, without a rename.
 *
 * A new file's mode is 0666 less the umask, as for any created file.  A
 * temporary file is removed on every path out: abort, exit, and the
 * signals that end the process (SIGINT, SIGTERM, SIGHUP, crashes...). */
#ifndef PLC_OUTPUT_H
#define PLC_OUTPUT_H

#include <stdio.h>

typedef struct plc_output {
  FILE *f;
  char *path;  /* as given, for messages; NULL: standard output */
  char *tmp;   /* the temporary file; NULL when written in place */
  char *dest;  /* what the temporary file is renamed to (links followed) */
  int slot;    /* its entry in the list the signal handler removes */
} plc_output;

/* Returns 0, or -1 with a message printed (an I/O error: exit status 2). */
int plc_output_open(plc_output *o, const char *path);
/* Flush and, for a file, rename it into place; 0 or -1 (message printed). */
int plc_output_commit(plc_output *o);
/* Drop a file being written (the old one, if any, is left alone). */
void plc_output_abort(plc_output *o);

#endif
