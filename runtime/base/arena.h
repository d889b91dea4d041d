/* arena.h - one bump allocator per compilation.
 *
 * Tokens, AST and IR nodes live until the compilation ends and are freed at
 * once.  GMP rationals inside arena objects need mpq_clear, so the arena also
 * keeps a list of rationals to clear when it is destroyed. */
#ifndef PLC_ARENA_H
#define PLC_ARENA_H

#include <stdalign.h>
#include <stddef.h>
#include <gmp.h>

typedef struct plc_arena plc_arena;

plc_arena *plc_arena_new(void);
void plc_arena_free(plc_arena *a);

/* The arena's current chunk: its free part is [cur, end), of which
 * [cur, zeroed) is already zero.  Zeroed allocations are taken from the
 * bottom (cur up), memory the caller writes first from the top (end
 * down): mixed in one direction, each raw allocation skipped memory that
 * had been cleared ahead for the zeroed ones (a third of what the 8b
 * search cleared).  Here for the inline allocation below (a search makes
 * hundreds of thousands a second); the rest is arena.c's. */
struct plc_arena {
  unsigned char *cur, *end, *zeroed; /* cur <= zeroed <= end */
  struct plc_chunk *chunks;
  struct plc_mpq_node *rationals;
  size_t bytes;
};

/* n bytes rounded up to the alignment; 0 as 1, so that even the first
 * allocation of an arena (cur == end == NULL) takes a chunk. */
static inline size_t plc_arena_round(size_t n)
{
  const size_t align = alignof(max_align_t);
  return n ? (n + align - 1) / align * align : align;
}

/* An allocation of n rounded bytes that does not fit, or (zero) is not
 * zeroed yet: a new chunk, the zeroing ahead (arena.c). */
void *plc_arena_alloc_slow(plc_arena *a, size_t n, int zero);

/* Zeroed, max-aligned memory that lives as long as the arena. */
static inline void *plc_arena_alloc(plc_arena *a, size_t n)
{
  n = plc_arena_round(n);
  unsigned char *p = a->cur;
  if ((size_t)(a->zeroed - p) < n) /* zeroed <= end: it fits too */
    return plc_arena_alloc_slow(a, n, 1);
  a->cur = p + n;
  a->bytes += n;
  return p;
}

/* The same, not zeroed: for memory the caller writes before reading it
 * (zeroing it was most of the cost of growing a search's op lists).  From
 * the top of the free part, which stays aligned (chunk sizes are rounded). */
static inline void *plc_arena_alloc_raw(plc_arena *a, size_t n)
{
  n = plc_arena_round(n);
  if ((size_t)(a->end - a->cur) < n)
    return plc_arena_alloc_slow(a, n, 0);
  a->end -= n;
  a->bytes += n;
  if (a->zeroed > a->end)
    a->zeroed = a->end;
  return a->end;
}
char *plc_arena_strndup(plc_arena *a, const char *s, size_t n);
char *plc_arena_strdup(plc_arena *a, const char *s);
/* An mpq_t that is initialised now and cleared with the arena. */
mpq_ptr plc_arena_mpq(plc_arena *a);
size_t plc_arena_bytes(const plc_arena *a);

#endif
