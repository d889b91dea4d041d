/* deps.h - make-style dependency output with gcc's meanings:
 *   -M        write the rule instead of evaluating (to stdout, or -MF)
 *   -MD       write it as well, to -MF FILE, else the -o file or the plan
 *             with its extension replaced by .d
 *   -MF FILE  where the rule goes
 *   -MT TGT   the rule's target (repeatable); default: the -o file, else
 *             the plan's name with .plan replaced by .report
 *   -MP       a phony rule for every imported file, so deleting one does
 *             not break make
 * The rule lists every file read, imports and the stdlib included; names
 * are escaped for make; the file is written atomically, only on success. */
#ifndef PLC_DEPS_H
#define PLC_DEPS_H

#include "load.h"

typedef struct plc_deps_opts {
  int M, MD, MP;
  const char *MF;
  const char **MT;
  int nMT;
} plc_deps_opts;

/* Write the rule for the plan `main` (the first file named); out is the -o
 * file or NULL.  Returns 0, or -1 on an I/O error (message printed). */
int plc_deps_write(const plc_deps_opts *o, const plc_program *prog, const char *main,
                   const char *out);

#endif
