/* xalloc.c - allocation wrappers that abort on out-of-memory. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *plc_x_check(void *p)
{
  if (!p) {
    fputs("plc: out of memory\n", stderr);
    abort();
  }
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
