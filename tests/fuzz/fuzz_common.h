/* fuzz_common.h - what both fuzz harnesses do around their work: a
 * compilation whose diagnostics go nowhere, loading one plan from memory
 * with imports refused, and checking it. */
#ifndef PLC_FUZZ_COMMON_H
#define PLC_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>

#include "load.h"
#include "sema.h"

typedef struct plc_fuzz {
  FILE *sink;
  plc_diag diag;
  plc_arena *arena;
  plc_program prog;
  plc_sema sema;
  plc_ast *file;
} plc_fuzz;

/* Load and check the input; returns 1 when it has no errors. */
static inline int plc_fuzz_begin(plc_fuzz *f, const uint8_t *data, size_t size)
{
  f->sink = fopen("/dev/null", "w");
  plc_diag_init(&f->diag, f->sink);
  f->arena = plc_arena_new();
  plc_program_init(&f->prog, f->arena, &f->diag);
  f->prog.no_files = 1;
  f->file = plc_load_text(&f->prog, "fuzz.plan", (const char *)data, size);
  if (f->diag.errors || !f->file)
    return 0;
  plc_sema_check(&f->sema, &f->prog, NULL, 0);
  return !f->diag.errors;
}

static inline void plc_fuzz_end(plc_fuzz *f)
{
  plc_program_free(&f->prog);
  plc_arena_free(f->arena);
  fclose(f->sink);
}

#endif
