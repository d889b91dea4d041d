/* arena.h - one bump allocator per compilation.
 *
 * Tokens, AST and IR nodes live until the compilation ends and are freed at
 * once.  GMP rationals inside arena objects need mpq_clear, so the arena also
 * keeps a list of rationals to clear when it is destroyed. */
#ifndef PLC_ARENA_H
#define PLC_ARENA_H

#include <stddef.h>
#include <gmp.h>

typedef struct plc_arena plc_arena;

plc_arena *plc_arena_new(void);
void plc_arena_free(plc_arena *a);
/* Zeroed, max-aligned memory that lives as long as the arena. */
void *plc_arena_alloc(plc_arena *a, size_t n);
/* The same, not zeroed: for memory the caller writes before reading it
 * (zeroing it was most of the cost of growing a search's op lists). */
void *plc_arena_alloc_raw(plc_arena *a, size_t n);
char *plc_arena_strndup(plc_arena *a, const char *s, size_t n);
char *plc_arena_strdup(plc_arena *a, const char *s);
/* An mpq_t that is initialised now and cleared with the arena. */
mpq_ptr plc_arena_mpq(plc_arena *a);
size_t plc_arena_bytes(const plc_arena *a);

#endif
