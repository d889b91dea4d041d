/* fuzz_frontend.c - libFuzzer harness for the front end: scan, parse,
 * resolve and check one plan held in memory.  Imports are refused without
 * touching the file system (plc_program.no_files). */
#include <stdint.h>
#include <stdio.h>

#include "load.h"
#include "sema.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  FILE *sink = fopen("/dev/null", "w");
  plc_diag d;
  plc_diag_init(&d, sink);
  plc_arena *ar = plc_arena_new();
  plc_program prog;
  plc_program_init(&prog, ar, &d);
  prog.no_files = 1;
  plc_load_text(&prog, "fuzz.plan", (const char *)data, size);
  if (!d.errors) {
    plc_sema s;
    plc_sema_check(&s, &prog, NULL, 0);
  }
  plc_program_free(&prog);
  plc_arena_free(ar);
  fclose(sink);
  return 0;
}
