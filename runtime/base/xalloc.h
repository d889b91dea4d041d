/* xalloc.h - allocation that never returns NULL.
 *
 * plc has no useful way to continue without memory, so every allocation
 * (GMP's too) goes through these wrappers, which print
 * "plc: error: out of memory" and exit with PLC_XALLOC_STATUS on failure:
 * never an abort or a crash. */
#ifndef PLC_XALLOC_H
#define PLC_XALLOC_H

#include <stddef.h>

#define PLC_XALLOC_STATUS 2

void *plc_xmalloc(size_t n);
void *plc_xcalloc(size_t count, size_t size);
void *plc_xrealloc(void *p, size_t n);
char *plc_xstrdup(const char *s);
/* Report that memory ran out and exit (for allocators outside these). */
void plc_xalloc_fail(void) __attribute__((noreturn));
/* Keep memory freed at the top of the heap for the next allocations, and
 * ask for the heap's first growth in transparent huge pages (where the C
 * library and the kernel can; call once, before any thread). */
void plc_xalloc_keep_heap(void);
/* Free a string GMP allocated (mpz_get_str(NULL, ...)): GMP's blocks come
 * from its own allocator (xalloc.c), which free() must not be given. */
void plc_gmp_free_str(char *s);
/* GMP's allocation functions as installed before main() (xalloc.c), for
 * code that gives GMP limbs it will reallocate or free itself (the arena's
 * rationals). */
extern void *(*plc_gmp_alloc_fn)(size_t n);
extern void (*plc_gmp_free_fn)(void *p, size_t n);

#endif
