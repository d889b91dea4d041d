/* arena.c - bump allocator in chunks (zeroed blocks from the bottom, raw ones
 * from the top), plus a list of rationals to clear. */
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
#define PLC_ARENA_NOINLINE __attribute__((noinline))

typedef struct plc_chunk {
  struct plc_chunk *next;
  size_t size;
  alignas(max_align_t) unsigned char data[];
} plc_chunk;

typedef struct plc_mpq_node {
  struct plc_mpq_node *next;
  mpq_t q;
} plc_mpq_node;


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
  for (plc_mpq_node *m = a->rationals; m; m = m->next) { /* mpq_clear, without the call */
    mpz_ptr num = mpq_numref(m->q), den = mpq_denref(m->q);
    if (num->_mp_alloc)
      plc_gmp_free_fn(num->_mp_d, (size_t)num->_mp_alloc * sizeof(mp_limb_t));
    if (den->_mp_alloc)
      plc_gmp_free_fn(den->_mp_d, (size_t)den->_mp_alloc * sizeof(mp_limb_t));
  }
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

/* A new current chunk, for an allocation of n bytes (the rest of the
 * current one is left unused, as before). */
static void plc_arena_grow(plc_arena *a, size_t n)
{
  size_t size = n > PLC_ARENA_CHUNK ? n : PLC_ARENA_CHUNK;
  plc_chunk *c = size == PLC_ARENA_CHUNK ? plc_arena_reuse() : NULL;
  if (!c)
    c = plc_xmalloc(sizeof(plc_chunk) + size);
  c->size = size;
  c->next = a->chunks;
  a->chunks = c;
  a->cur = a->zeroed = c->data;
  a->end = c->data + size;
}

/* Clear ahead of cur in steps of PLC_ARENA_ZERO bytes: the search makes
 * millions of small allocations, and one memset call for each cost more
 * than the clearing itself; a chunk is not cleared whole because many
 * arenas use a little of one. */
static PLC_ARENA_NOINLINE void plc_arena_zero_ahead(plc_arena *a, unsigned char *to)
{
  size_t z = (size_t)(to - a->zeroed) < PLC_ARENA_ZERO ? PLC_ARENA_ZERO
                                                        : (size_t)(to - a->zeroed);
  if (z > (size_t)(a->end - a->zeroed))
    z = (size_t)(a->end - a->zeroed);
  memset(a->zeroed, 0, z);
  a->zeroed += z;
}

void *plc_arena_alloc_slow(plc_arena *a, size_t n, int zero)
{
  if ((size_t)(a->end - a->cur) < n)
    plc_arena_grow(a, n);
  a->bytes += n;
  if (!zero) {
    a->end -= n;
    if (a->zeroed > a->end)
      a->zeroed = a->end;
    return a->end;
  }
  if ((size_t)(a->zeroed - a->cur) < n)
    plc_arena_zero_ahead(a, a->cur + n);
  unsigned char *p = a->cur;
  a->cur += n;
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
  /* mpq_init, but with the numerator's limb too: nearly every rational is
   * given a nonzero value, which then needs no reallocation (GMP frees or
   * reallocates these limbs with the same functions) */
  mpz_ptr num = mpq_numref(m->q), den = mpq_denref(m->q);
  num->_mp_d = plc_gmp_alloc_fn(sizeof(mp_limb_t));
  num->_mp_alloc = 1;
  num->_mp_size = 0;
  den->_mp_d = plc_gmp_alloc_fn(sizeof(mp_limb_t));
  den->_mp_d[0] = 1;
  den->_mp_alloc = 1;
  den->_mp_size = 1;
  m->next = a->rationals;
  a->rationals = m;
  return m->q;
}

size_t plc_arena_bytes(const plc_arena *a) { return a->bytes; }
