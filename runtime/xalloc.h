/* xalloc.h - allocation that never returns NULL.
 *
 * plc has no useful way to continue without memory, so every allocation goes
 * through these wrappers, which print one line and abort on failure. */
#ifndef PLC_XALLOC_H
#define PLC_XALLOC_H

#include <stddef.h>

void *plc_xmalloc(size_t n);
void *plc_xcalloc(size_t count, size_t size);
void *plc_xrealloc(void *p, size_t n);
char *plc_xstrdup(const char *s);

#endif
