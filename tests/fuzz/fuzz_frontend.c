/* fuzz_frontend.c - libFuzzer/AFL++ harness for the front end: scan, parse,
 * resolve and check one plan held in memory.  Imports are refused without
 * touching the file system (plc_program.no_files). */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  plc_fuzz f;
  plc_fuzz_begin(&f, data, size);
  plc_fuzz_end(&f);
  return 0;
}
