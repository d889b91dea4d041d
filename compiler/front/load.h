/* load.h - reading plan files and following their imports.
 *
 * The loader owns every source file of a compilation.  `import "hw/nvidia"`
 * is looked up (".plan" appended when missing) in: the importing file's
 * directory, the -I directories in order, each directory of $PLC_PATH, then
 * the stdlib of the running program: the installed one for an installed plc,
 * the source tree's for a plc run from its build tree (plc_paths.h).  A file is loaded once however often it is imported; an
 * import of a file that is still being loaded is a cycle and an error. */
#ifndef PLC_LOAD_H
#define PLC_LOAD_H

#include "arena.h"
#include "ast.h"
#include "diag.h"

#define PLC_LOAD_MAX_DEPTH 32          /* import nesting */
#define PLC_LOAD_MAX_FILE (16 << 20)   /* bytes in one plan file */

typedef struct plc_program {
  plc_arena *arena;
  plc_diag *diag;
  plc_source **sources; /* every file read, in the order reading began */
  size_t nsources;
  plc_ast **files;      /* parsed FILE nodes, imports before importers */
  size_t nfiles;
  const char **dirs;    /* -I directories, then $PLC_PATH, then the stdlib */
  size_t ndirs;
  const char **stack;   /* realpaths of the files being loaded (cycle check) */
  size_t depth;
  const char *stdin_name; /* non-NULL: a "-" argument reads standard input */
  int no_files;           /* fuzzing: imports never touch the file system */
} plc_program;

void plc_program_init(plc_program *p, plc_arena *ar, plc_diag *d);
/* Free the program; first say how many warnings were not shown (the
 * diagnostics show at most max_warnings). */
void plc_program_free(plc_program *p);
/* Add an import directory (-I), searched in the order added. */
void plc_program_add_dir(plc_program *p, const char *dir);
/* Add $PLC_PATH and the stdlib directories; call after the -I options. */
void plc_program_add_default_dirs(plc_program *p);

/* Load a file named on the command line and everything it imports.
 * Returns 0 on success (the plan may still have errors: see p->diag),
 * 2 when the file itself cannot be read. */
int plc_load_main(plc_program *p, const char *path);
/* The standard-library import ("hw/nvidia") whose file declares name at
 * top level, or NULL: the hint for an unknown name. */
const char *plc_load_which_import(plc_program *p, const char *name);
/* Load a plan held in memory (fuzzing, -D expressions, tests). */
plc_ast *plc_load_text(plc_program *p, const char *name, const char *text, size_t len);

#endif
