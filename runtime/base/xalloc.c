/* xalloc.c - allocation wrappers that end the process on out-of-memory.
 *
 * Running out of memory is not a crash: plc prints one line,
 * "plc: error: out of memory", and exits with status 2 (as for other
 * resource and I/O failures, plc(1) EXIT STATUS).  GMP's allocations go
 * through the same wrappers, so a huge rational does not abort inside GMP. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "xalloc.h"

#include <gmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void plc_xalloc_fail(void)
{
  fputs("plc: error: out of memory\n", stderr);
  exit(PLC_XALLOC_STATUS);
}

static void *plc_x_check(void *p)
{
  if (!p)
    plc_xalloc_fail();
  return p;
}

void *plc_xmalloc(size_t n) { return plc_x_check(malloc(n ? n : 1)); }

void *plc_xcalloc(size_t count, size_t size)
{
  return plc_x_check(calloc(count ? count : 1, size ? size : 1));
}

void *plc_xrealloc(void *p, size_t n) { return plc_x_check(realloc(p, n ? n : 1)); }

char *plc_xstrdup(const char *s)
{
  size_t n = strlen(s) + 1; /* not strdup: plain C11 does not declare it */
  return memcpy(plc_xmalloc(n), s, n);
}

/* GMP's allocator interface (its free passes the old size too). */
static void *plc_x_gmp_realloc(void *p, size_t old, size_t n)
{
  (void)old;
  return plc_xrealloc(p, n);
}

static void plc_x_gmp_free(void *p, size_t n)
{
  (void)n;
  free(p);
}

/* Installed before main() runs, so no caller can forget it. */
__attribute__((constructor)) static void plc_x_gmp_init(void)
{
  mp_set_memory_functions(plc_xmalloc, plc_x_gmp_realloc, plc_x_gmp_free);
}
