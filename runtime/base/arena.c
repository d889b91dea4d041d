/* arena.c - bump allocator in chunks, plus a list of rationals to clear. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "arena.h"
#include "xalloc.h"

#include <pthread.h>
#include <stdalign.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#define PLC_ARENA_CHUNK 65536
#define PLC_ARENA_ZERO 2048

typedef struct plc_chunk {
  struct plc_chunk *next;
  size_t used, size;
  size_t zeroed; /* data[0, zeroed) is zero or handed out */
  alignas(max_align_t) unsigned char data[];
} plc_chunk;

typedef struct plc_mpq_node {
  struct plc_mpq_node *next;
  mpq_t q;
} plc_mpq_node;

struct plc_arena {
  plc_chunk *chunks;
  plc_mpq_node *rationals;
  size_t bytes;
};

/* Chunks of the usual size, freed, for the next arena: a search makes and
 * frees an arena per candidate, and handing its chunks back to malloc
 * made the heap's top shrink and grow again with every candidate (a brk
 * system call each time).  At most PLC_ARENA_SPARE are kept, reachable
 * from here until the process ends.  Not under AddressSanitizer, which
 * should see every chunk freed. */
#define PLC_ARENA_SPARE 64
#if defined(__SANITIZE_ADDRESS__)
#define PLC_ARENA_REUSE 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PLC_ARENA_REUSE 0
#endif
#endif
#ifndef PLC_ARENA_REUSE
#define PLC_ARENA_REUSE 1
#endif
static plc_chunk *plc_arena_spare;
static int plc_arena_nspare;
static pthread_mutex_t plc_arena_lock = PTHREAD_MUTEX_INITIALIZER;

plc_arena *plc_arena_new(void) { return plc_xcalloc(1, sizeof(plc_arena)); }

void plc_arena_free(plc_arena *a)
{
  if (!a)
    return;
  for (plc_mpq_node *m = a->rationals; m; m = m->next)
    mpq_clear(m->q);
  for (plc_chunk *c = a->chunks, *next; c; c = next) {
    next = c->next;
    int keep = 0;
    if (PLC_ARENA_REUSE && c->size == PLC_ARENA_CHUNK) {
      pthread_mutex_lock(&plc_arena_lock);
      if ((keep = plc_arena_nspare < PLC_ARENA_SPARE)) {
        c->next = plc_arena_spare;
        plc_arena_spare = c;
        plc_arena_nspare++;
      }
      pthread_mutex_unlock(&plc_arena_lock);
    }
    if (!keep)
      free(c);
  }
  free(a);
}

/* A spare chunk of the usual size, or NULL. */
static plc_chunk *plc_arena_reuse(void)
{
  if (!PLC_ARENA_REUSE)
    return NULL;
  pthread_mutex_lock(&plc_arena_lock);
  plc_chunk *c = plc_arena_spare;
  if (c) {
    plc_arena_spare = c->next;
    plc_arena_nspare--;
  }
  pthread_mutex_unlock(&plc_arena_lock);
  return c;
}

static plc_chunk *plc_arena_grow(plc_arena *a, size_t n)
{
  size_t size = n > PLC_ARENA_CHUNK ? n : PLC_ARENA_CHUNK;
  plc_chunk *c = size == PLC_ARENA_CHUNK ? plc_arena_reuse() : NULL;
  if (!c)
    c = plc_xmalloc(sizeof(plc_chunk) + size);
  c->used = 0;
  c->zeroed = 0;
  c->size = size;
  c->next = a->chunks;
  a->chunks = c;
  return c;
}

/* n bytes, rounded up to the alignment, from the current chunk (or a new
 * one); *out is the chunk they were taken from. */
static void *plc_arena_take(plc_arena *a, size_t n, plc_chunk **out)
{
  const size_t align = alignof(max_align_t);
  n = (n + align - 1) / align * align;
  plc_chunk *c = a->chunks;
  if (!c || c->size - c->used < n)
    c = plc_arena_grow(a, n);
  void *p = c->data + c->used;
  c->used += n;
  a->bytes += n;
  *out = c;
  return p;
}

void *plc_arena_alloc_raw(plc_arena *a, size_t n)
{
  plc_chunk *c;
  void *p = plc_arena_take(a, n, &c);
  if (c->used > c->zeroed) /* handed out: the zeroing ahead starts after it */
    c->zeroed = c->used;
  return p;
}

void *plc_arena_alloc(plc_arena *a, size_t n)
{
  plc_chunk *c;
  void *p = plc_arena_take(a, n, &c);
  if (c->used > c->zeroed) {
    /* Clear ahead in steps of PLC_ARENA_ZERO bytes: the search makes
     * millions of small allocations, and one memset call for each cost
     * more than the clearing itself; a chunk is not cleared whole because
     * many arenas use a little of one. */
    size_t z = c->used - c->zeroed < PLC_ARENA_ZERO ? PLC_ARENA_ZERO : c->used - c->zeroed;
    if (z > c->size - c->zeroed)
      z = c->size - c->zeroed;
    memset(c->data + c->zeroed, 0, z);
    c->zeroed += z;
  }
  return p;
}

char *plc_arena_strndup(plc_arena *a, const char *s, size_t n)
{
  char *d = plc_arena_alloc_raw(a, n + 1);
  memcpy(d, s, n);
  d[n] = '\0';
  return d;
}

char *plc_arena_strdup(plc_arena *a, const char *s)
{
  return plc_arena_strndup(a, s, strlen(s));
}

mpq_ptr plc_arena_mpq(plc_arena *a)
{
  plc_mpq_node *m = plc_arena_alloc_raw(a, sizeof *m);
  mpq_init(m->q);
  m->next = a->rationals;
  a->rationals = m;
  return m->q;
}

size_t plc_arena_bytes(const plc_arena *a) { return a->bytes; }
