/* test_arena.c - CUnit tests of runtime/base/arena.c: zeroed and raw
 * allocations from the two ends of a chunk, chunks reused between arenas.
 *
 * Each test makes random sequences of allocations in arenas that are freed
 * and made again, so that later arenas run on chunks an earlier one filled
 * with garbage.  Every block is checked for alignment, for being zero when
 * it was asked zeroed, and at the end for still holding the pattern written
 * into it (no two blocks overlap). */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "cu_main.h"

typedef struct blk {
  unsigned char *p;
  size_t n;
  unsigned char fill;
} blk;

/* A deterministic generator (the test must fail the same way each run). */
static uint64_t rng_next(uint64_t *s)
{
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

/* A size: mostly small (as the evaluator's values), sometimes a few KiB (op
 * lists), sometimes more than a chunk; 0 now and then. */
static size_t rnd_size(uint64_t *s)
{
  uint64_t r = rng_next(s) % 100;
  if (r < 3)
    return 0;
  if (r < 80)
    return 1 + rng_next(s) % 200;
  if (r < 98)
    return 1 + rng_next(s) % 6000;
  return 65536 + rng_next(s) % 70000;
}

static int all_zero(const unsigned char *p, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (p[i])
      return 0;
  return 1;
}

static int all_fill(const unsigned char *p, size_t n, unsigned char f)
{
  for (size_t i = 0; i < n; i++)
    if (p[i] != f)
      return 0;
  return 1;
}

/* One arena's life: nalloc allocations, zeroed with probability pz/100. */
static void one_arena(uint64_t *s, int nalloc, unsigned pz)
{
  plc_arena *a = plc_arena_new();
  blk *b = calloc((size_t)nalloc, sizeof *b);
  CU_ASSERT_FATAL(b != NULL);
  int bad_align = 0, not_zero = 0, clobbered = 0;
  for (int i = 0; i < nalloc; i++) {
    size_t n = rnd_size(s);
    int zero = rng_next(s) % 100 < pz;
    unsigned char *p = zero ? plc_arena_alloc(a, n) : plc_arena_alloc_raw(a, n);
    bad_align += (uintptr_t)p % alignof(max_align_t) != 0;
    if (zero)
      not_zero += !all_zero(p, n);
    b[i] = (blk){p, n, (unsigned char)(1 + i % 251)};
    memset(p, b[i].fill, n); /* raw blocks' garbage for the next arenas too */
  }
  for (int i = 0; i < nalloc; i++)
    clobbered += !all_fill(b[i].p, b[i].n, b[i].fill);
  CU_ASSERT_EQUAL(bad_align, 0);
  CU_ASSERT_EQUAL(not_zero, 0);
  CU_ASSERT_EQUAL(clobbered, 0);
  free(b);
  plc_arena_free(a);
}

/* Zeroed and raw allocations mixed in every proportion, over many arenas
 * that reuse each other's chunks. */
static void test_mixed(void)
{
  uint64_t s = 0x9e3779b97f4a7c15u;
  static const unsigned pz[] = {0, 10, 50, 90, 100};
  for (int round = 0; round < 40; round++)
    one_arena(&s, 200 + (int)(rng_next(&s) % 3000), pz[round % 5]);
}

/* Alternating one zeroed and one raw block of the same small size: the
 * pattern that made the zeroing ahead useless when both came from one end.
 * Every zeroed block must be zero although the raw ones next to it in the
 * chunk were written. */
static void test_alternating(void)
{
  for (int round = 0; round < 4; round++) {
    plc_arena *a = plc_arena_new();
    int not_zero = 0;
    for (int i = 0; i < 20000; i++) {
      unsigned char *z = plc_arena_alloc(a, 48);
      not_zero += !all_zero(z, 48);
      memset(z, 0x5a, 48);
      unsigned char *r = plc_arena_alloc_raw(a, 48);
      memset(r, 0xa5, 48);
    }
    CU_ASSERT_EQUAL(not_zero, 0);
    CU_ASSERT_EQUAL(plc_arena_bytes(a), (size_t)20000 * 2 * plc_arena_round(48));
    plc_arena_free(a);
  }
}

/* Strings are raw copies with their terminator. */
static void test_strings(void)
{
  plc_arena *a = plc_arena_new();
  char *x = plc_arena_strdup(a, "tp_comm");
  char *y = plc_arena_strndup(a, "overlap_grad_reduce", 7);
  PLC_CU_STR_EQ(x, "tp_comm");
  PLC_CU_STR_EQ(y, "overlap");
  plc_arena_free(a);
}

int main(void)
{
  static const plc_cu_test tests[] = {
    {"zeroed and raw blocks over reused chunks", test_mixed},
    {"zeroed next to raw blocks", test_alternating},
    {"strings", test_strings},
    {NULL, NULL},
  };
  return plc_cu_run("arena", tests);
}
