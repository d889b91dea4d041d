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
#ifdef HAVE_MALLOPT
#include <malloc.h>
#endif
#ifdef HAVE_MADVISE
#include <sys/mman.h>
#endif
#ifdef HAVE_SBRK
#include <unistd.h>
#endif
#include <stdint.h>
#include <pthread.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(HAVE_MADVISE) && defined(HAVE_SBRK) && defined(MADV_HUGEPAGE)
/* The rest of the heap that a static binary's malloc began before main,
 * from first (a block of it) to at (the break then), taken as one block
 * and kept: malloc writes its header and the next one's and never touches
 * the pages between.  Used up in small blocks, as it was, each of its
 * 4 KiB pages was a page fault (about 30), and a first touch of a page
 * costs a virtual machine like the bench's some 15 us (hello.plan: 0.6 ms
 * of 3).  A few KiB at its end are left for the small blocks after it. */
static void *volatile plc_x_heap_kept; /* volatile: never read, and a block
                                          only stored would not be allocated */

static void plc_x_heap_rest(const void *first, uintptr_t at)
{
  uintptr_t p = (uintptr_t)first, slack = 4096 + 1024;
  if (p < at && at - p > slack && at - p < ((uintptr_t)1 << 20))
    plc_x_heap_kept = malloc(at - p - slack);
}
#endif

/* Advise transparent huge pages for the heap's next growth (where the
 * kernel allows them through madvise): a process's first touch of each
 * 4 KiB page is a page fault, and they were most of plc's system time
 * (search-70b: 1,900 of them; llama3-405b-h100: 1,950; bench/large, whose
 * step takes 43 MiB: 6,600), where a 2 MiB page takes one.  The kernel
 * gives a huge page only to a whole aligned 2 MiB none of whose 4 KiB
 * pages has been touched, and malloc writes where it grows before the
 * advice can be given.  So the break first moves to 4 KiB short of a
 * 2 MiB boundary (the gap is address space, never touched); malloc's
 * growth starts there and writes its headers in that one page, and what
 * lies past the boundary is advised untouched.  Advice only: nothing
 * changes where the kernel gives none, or under ASan and valgrind, whose
 * heaps are not glibc's. */
static void plc_x_huge_heap(void)
{
#if defined(HAVE_MADVISE) && defined(HAVE_SBRK) && defined(MADV_HUGEPAGE)
  uintptr_t huge = (uintptr_t)2 << 20, page = 4096, at = (uintptr_t)sbrk(0);
  uintptr_t to = ((at + page + huge - 1) & ~(huge - 1)) - page;
  if (at == (uintptr_t)-1 || (to > at && sbrk((intptr_t)(to - at)) == (void *)-1))
    return;
  /* Small blocks until one lies past the moved break (the heap grew
   * there), so that the headers malloc writes on growing (the block's and
   * the rest's) stay in that one page.  A static binary's malloc began its
   * heap before main: the rest of it is used up first.  Where the heap is
   * not at the break (valgrind, ASan) the first block is past it, and no
   * range is. */
  void *held[256], *grow = NULL;
  size_t n = 0;
  while (!grow && n < sizeof held / sizeof *held) {
    if (!(held[n++] = malloc(1024)))
      break;
    if ((uintptr_t)held[n - 1] >= to)
      grow = held[n - 1];
    else if (n == 1)
      plc_x_heap_rest(held[0], at);
  }
  uintptr_t lo = ((uintptr_t)grow + huge - 1) & ~(huge - 1);
  uintptr_t hi = (uintptr_t)sbrk(0) & ~(page - 1);
  if (grow && hi > lo)
    madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
  while (n)
    free(held[--n]);
#endif
}

/* A search compiles each candidate in its own arena and frees it; glibc
 * gave the heap's top back to the kernel each time and took page faults to
 * use it again (search-70b: 5,500 faults, a third of its CPU time).  So
 * freed memory stays up to 64 MiB, the heap grows 64 MiB at a time, and
 * blocks up to 32 MiB come from the heap rather than from their own
 * mappings, which are faulted in page by page and unmapped when freed.
 * A search's other threads use that heap too (one arena): glibc would give
 * each an arena of its own, mapped apart from the huge pages and faulted
 * in 4 KiB at a time (llama3-8b-search, --jobs=2: 1,086 faults against 91,
 * and 58 ms of CPU against 37).  Small blocks come from each thread's
 * cache without the arena's lock, and GMP's from plc's own per-thread
 * lists (plc_x_gmp_alloc). */
void plc_xalloc_keep_heap(void)
{
#ifdef HAVE_MALLOPT
  mallopt(M_TRIM_THRESHOLD, 64 << 20);
  mallopt(M_TOP_PAD, 64 << 20);
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_ARENA_MAX, 1);
#endif
  plc_x_huge_heap();
}

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

/* ---- GMP's allocations -------------------------------------------------
 *
 * Every rational the evaluator makes allocates its numerator's and its
 * denominator's limbs, nearly always one or two, and a layout search makes
 * millions of them: through malloc and free that was a fifth of a search's
 * instructions.  GMP passes the size to its realloc and free, so blocks of
 * up to PLC_GMP_SMALL bytes come from per-thread free lists, one for each
 * multiple of 8 bytes, carved from slabs that are never returned (they stay
 * reachable from plc_gmp_slabs).  A block freed by another thread than the
 * one that allocated it joins that thread's list: slabs are never freed, so
 * that is safe.  Under AddressSanitizer, and with PLC_GMP_NO_POOL set (not
 * 0) in the environment, GMP uses malloc directly, so the sanitizers see
 * every block. */

#define PLC_GMP_SMALL 64
#define PLC_GMP_SLAB 65536

typedef struct plc_gmp_slab {
  struct plc_gmp_slab *next;
  alignas(max_align_t) unsigned char data[PLC_GMP_SLAB];
} plc_gmp_slab;

static plc_gmp_slab *plc_gmp_slabs; /* all slabs, so they stay reachable */
static pthread_mutex_t plc_gmp_lock = PTHREAD_MUTEX_INITIALIZER;
static _Thread_local void *plc_gmp_free_list[PLC_GMP_SMALL / 8 + 1];
static _Thread_local unsigned char *plc_gmp_carve, *plc_gmp_carve_end;

/* Large blocks: malloc, out of line for the same reason. */
static __attribute__((noinline)) void *plc_x_gmp_big(size_t n) { return plc_xmalloc(n); }

/* Size class of n bytes (1..PLC_GMP_SMALL): multiples of 8. */
static size_t plc_gmp_class(size_t n) { return (n + 7) / 8; }

/* A block of class cls carved from the thread's slab (out of line: the
 * free list above serves nearly every allocation, and stays small). */
static __attribute__((noinline)) void *plc_gmp_carve_new(size_t cls)
{
  void *p;
  size_t n = cls * 8;
  if ((size_t)(plc_gmp_carve_end - plc_gmp_carve) < n) {
    plc_gmp_slab *s = plc_xmalloc(sizeof *s);
    pthread_mutex_lock(&plc_gmp_lock);
    s->next = plc_gmp_slabs;
    plc_gmp_slabs = s;
    pthread_mutex_unlock(&plc_gmp_lock);
    plc_gmp_carve = s->data;
    plc_gmp_carve_end = s->data + PLC_GMP_SLAB;
  }
  p = plc_gmp_carve;
  plc_gmp_carve += n;
  return p;
}

static void *plc_gmp_small_alloc(size_t cls)
{
  void *p = plc_gmp_free_list[cls];
  if (p) {
    memcpy(&plc_gmp_free_list[cls], p, sizeof p);
    return p;
  }
  return plc_gmp_carve_new(cls);
}

static void plc_gmp_small_free(void *p, size_t cls)
{
  memcpy(p, &plc_gmp_free_list[cls], sizeof p);
  plc_gmp_free_list[cls] = p;
}

static void *plc_x_gmp_alloc(size_t n)
{
  if (n - 1 < PLC_GMP_SMALL) /* n == 0 wraps: malloc */
    return plc_gmp_small_alloc(plc_gmp_class(n));
  return plc_x_gmp_big(n);
}

static void *plc_x_gmp_realloc(void *p, size_t old, size_t n)
{
  int small_old = old - 1 < PLC_GMP_SMALL, small_new = n - 1 < PLC_GMP_SMALL;
  if (!small_old && !small_new)
    return plc_xrealloc(p, n);
  if (small_old && small_new && plc_gmp_class(old) == plc_gmp_class(n))
    return p;
  void *q = plc_x_gmp_alloc(n);
  memcpy(q, p, old < n ? old : n);
  if (small_old)
    plc_gmp_small_free(p, plc_gmp_class(old));
  else
    free(p);
  return q;
}

static void plc_x_gmp_free(void *p, size_t n)
{
  if (n - 1 < PLC_GMP_SMALL)
    plc_gmp_small_free(p, plc_gmp_class(n));
  else
    free(p);
}

/* The malloc'd versions: for the sanitizers, and PLC_GMP_NO_POOL. */
static void *plc_x_gmp_realloc_plain(void *p, size_t old, size_t n)
{
  (void)old;
  return plc_xrealloc(p, n);
}

static void plc_x_gmp_free_plain(void *p, size_t n)
{
  (void)n;
  free(p);
}

#if defined(__SANITIZE_ADDRESS__)
#define PLC_GMP_POOL 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PLC_GMP_POOL 0
#endif
#endif
#ifndef PLC_GMP_POOL
#define PLC_GMP_POOL 1
#endif

void plc_gmp_free_str(char *s)
{
  void (*f)(void *, size_t);
  mp_get_memory_functions(NULL, NULL, &f);
  f(s, strlen(s) + 1);
}

void *(*plc_gmp_alloc_fn)(size_t n) = plc_xmalloc;
void (*plc_gmp_free_fn)(void *p, size_t n) = plc_x_gmp_free_plain;

/* Installed before main() runs, so no caller can forget it. */
__attribute__((constructor)) static void plc_x_gmp_init(void)
{
  const char *off = getenv("PLC_GMP_NO_POOL"); /* set and not 0: malloc */
  if (PLC_GMP_POOL && !(off && *off && strcmp(off, "0")))
    mp_set_memory_functions(plc_x_gmp_alloc, plc_x_gmp_realloc, plc_x_gmp_free);
  else
    mp_set_memory_functions(plc_xmalloc, plc_x_gmp_realloc_plain, plc_x_gmp_free_plain);
  mp_get_memory_functions(&plc_gmp_alloc_fn, NULL, &plc_gmp_free_fn);
}
