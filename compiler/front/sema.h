/* sema.h - name resolution and dimension checking of a loaded program.
 *
 * Everything that can be checked before lowering is checked here: unknown
 * names, duplicate definitions, items in the wrong place, unknown fields,
 * fields of the wrong type or dimension, arithmetic that mixes dimensions,
 * and constant expressions that fail (division by zero, huge values).
 * Template bodies are checked abstractly: `run`, `model`, `layer` are
 * unknown values whose fields have the types the schema gives them. */
#ifndef PLC_SEMA_H
#define PLC_SEMA_H

#include "eval.h"
#include "load.h"

typedef struct plc_sema {
  plc_program *prog;
  plc_eval ev;
  const char **options; /* every framework option name, for run.NAME */
  size_t noptions;
  /* Constant assertions found false (and reported): a report is still
   * written, and the driver does not decide these again. */
  const plc_ast **failed_asserts; /* in the program's arena */
  size_t nfailed_asserts;
  int in_phase;         /* checking inside a template's forward/backward/recompute */
} plc_sema;

/* Check the whole program after applying the -D NAME=EXPR overrides (NAME
 * is a top-level let or DECL.FIELD); diagnostics go to prog->diag. */
void plc_sema_check(plc_sema *s, plc_program *prog, const char *const *defines, size_t ndefines);
/* Check only `file` of a program whose other files have been checked (and
 * had the -D overrides applied) in another compilation of the same trees:
 * a search's candidate (cli/search.c).  names, when not NULL, holds the
 * top-level names of every file of prog but `file` (plc_sema_names): they
 * are copied, not defined again. */
void plc_sema_check_file(plc_sema *s, plc_program *prog, const plc_ast *file,
                         const plc_env *names);
/* The top-level names of prog's files (their definitions, no value), in
 * ar, for plc_sema_check_file: a search defines them once, not once per
 * candidate.  A name defined twice keeps its first definition. */
plc_env *plc_sema_names(const plc_program *prog, plc_arena *ar);

#endif
