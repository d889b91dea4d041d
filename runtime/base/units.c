/* units.c - the table of unit names plc understands, and their lookup.
 *
 * Each unit is an exact scale (rational text, in base units B, s, FLOP) and
 * a dimension.  The table is a plain static array: it is small, read only,
 * and doubles as documentation of every accepted spelling.  Decimal prefixes
 * are powers of 1000, binary ones (KiB ...) powers of 1024; a bit is 1/8 B,
 * so 400 Gbps is exactly 50 GB/s. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "quantity.h"

#include <pthread.h>
#include <string.h>

/* Exponent vectors, in the order B, s, FLOP. */
#define U_B {1, 0, 0}
#define U_S {0, 1, 0}
#define U_F {0, 0, 1}
#define U_BPS {1, -1, 0}
#define U_FPS {0, -1, 1}
#define U_NONE {0, 0, 0}

static const plc_unit plc_units[] = {
  /* bytes, decimal and binary */
  {"B", "1", U_B},
  {"KB", "1000", U_B},
  {"MB", "1000000", U_B},
  {"GB", "1000000000", U_B},
  {"TB", "1000000000000", U_B},
  {"PB", "1000000000000000", U_B},
  {"KiB", "1024", U_B},
  {"MiB", "1048576", U_B},
  {"GiB", "1073741824", U_B},
  {"TiB", "1099511627776", U_B},
  {"PiB", "1125899906842624", U_B},
  /* bits: 1 bit = 1/8 B, 1 Kbit = 1000/8 B = 125 B */
  {"bit", "1/8", U_B},
  {"Kbit", "125", U_B},
  {"Mbit", "125000", U_B},
  {"Gbit", "125000000", U_B},
  {"Tbit", "125000000000", U_B},
  /* time; "\xC2\xB5s" is MICRO SIGN + s, "\xCE\xBCs" GREEK SMALL MU + s */
  {"s", "1", U_S},
  {"ms", "1/1000", U_S},
  {"us", "1/1000000", U_S},
  {"\xC2\xB5s", "1/1000000", U_S},
  {"\xCE\xBCs", "1/1000000", U_S},
  {"ns", "1/1000000000", U_S},
  {"min", "60", U_S},
  {"h", "3600", U_S},
  /* floating-point operations */
  {"FLOP", "1", U_F},
  {"KFLOP", "1000", U_F},
  {"MFLOP", "1000000", U_F},
  {"GFLOP", "1000000000", U_F},
  {"TFLOP", "1000000000000", U_F},
  {"PFLOP", "1000000000000000", U_F},
  {"EFLOP", "1000000000000000000", U_F},
  /* byte rates */
  {"B/s", "1", U_BPS},
  {"KB/s", "1000", U_BPS},
  {"MB/s", "1000000", U_BPS},
  {"GB/s", "1000000000", U_BPS},
  {"TB/s", "1000000000000", U_BPS},
  {"PB/s", "1000000000000000", U_BPS},
  {"KiB/s", "1024", U_BPS},
  {"MiB/s", "1048576", U_BPS},
  {"GiB/s", "1073741824", U_BPS},
  {"TiB/s", "1099511627776", U_BPS},
  {"PiB/s", "1125899906842624", U_BPS},
  /* bit rates, both spellings */
  {"bps", "1/8", U_BPS},
  {"Kbps", "125", U_BPS},
  {"Mbps", "125000", U_BPS},
  {"Gbps", "125000000", U_BPS},
  {"Tbps", "125000000000", U_BPS},
  {"bit/s", "1/8", U_BPS},
  {"Kbit/s", "125", U_BPS},
  {"Mbit/s", "125000", U_BPS},
  {"Gbit/s", "125000000", U_BPS},
  {"Tbit/s", "125000000000", U_BPS},
  /* FLOP rates, both spellings */
  {"FLOPS", "1", U_FPS},
  {"KFLOPS", "1000", U_FPS},
  {"MFLOPS", "1000000", U_FPS},
  {"GFLOPS", "1000000000", U_FPS},
  {"TFLOPS", "1000000000000", U_FPS},
  {"PFLOPS", "1000000000000000", U_FPS},
  {"EFLOPS", "1000000000000000000", U_FPS},
  {"FLOP/s", "1", U_FPS},
  {"KFLOP/s", "1000", U_FPS},
  {"MFLOP/s", "1000000", U_FPS},
  {"GFLOP/s", "1000000000", U_FPS},
  {"TFLOP/s", "1000000000000", U_FPS},
  {"PFLOP/s", "1000000000000000", U_FPS},
  {"EFLOP/s", "1000000000000000000", U_FPS},
  /* dimensionless */
  {"%", "1/100", U_NONE},
};

#define PLC_NUNITS (sizeof plc_units / sizeof plc_units[0])

/* Every number with a unit in a plan is looked up here, and a scan of the
 * whole table took some 400 instructions a name: the entries are chained
 * by a hash of their first byte and length, in table order (so the first
 * entry of a name is found, as a scan finds it), built once. */
#define PLC_UNIT_BUCKETS 64
static short plc_unit_head[PLC_UNIT_BUCKETS], plc_unit_next[PLC_NUNITS];
static pthread_once_t plc_unit_once = PTHREAD_ONCE_INIT;

static unsigned plc_unit_bucket(unsigned char first, size_t len)
{
  return (first * 7u + (unsigned)len) % PLC_UNIT_BUCKETS;
}

static void plc_unit_index(void)
{
  short tail[PLC_UNIT_BUCKETS];
  for (int b = 0; b < PLC_UNIT_BUCKETS; b++)
    plc_unit_head[b] = tail[b] = -1;
  for (size_t i = 0; i < PLC_NUNITS; i++) {
    const char *n = plc_units[i].name;
    unsigned b = plc_unit_bucket((unsigned char)n[0], strlen(n));
    plc_unit_next[i] = -1;
    if (tail[b] < 0)
      plc_unit_head[b] = (short)i;
    else
      plc_unit_next[tail[b]] = (short)i;
    tail[b] = (short)i;
  }
}

const plc_unit *plc_unit_lookup(const char *name, size_t len)
{
  if (!name || len == 0)
    return NULL; /* no unit has an empty name */
  pthread_once(&plc_unit_once, plc_unit_index);
  /* name is not NUL-terminated: compare lengths, then bytes */
  for (short i = plc_unit_head[plc_unit_bucket((unsigned char)name[0], len)]; i >= 0;
       i = plc_unit_next[i]) {
    const char *n = plc_units[i].name;
    if (strlen(n) == len && memcmp(n, name, len) == 0)
      return &plc_units[i];
  }
  return NULL;
}

const plc_unit *plc_unit_at(size_t i)
{
  return i < PLC_NUNITS ? &plc_units[i] : NULL;
}

int plc_unit_scale_long(const char *t, long *n, long *d)
{
  long *part = n;
  int digits = 0;
  *n = 0;
  *d = 1;
  for (;; t++) {
    if (*t >= '0' && *t <= '9') {
      if (++digits > 18)
        return 0;
      *part = *part * 10 + (*t - '0');
    } else if (*t == '/' && part == n && digits) {
      part = d;
      *d = 0;
      digits = 0;
    } else {
      break;
    }
  }
  if (*t || !digits || !*n || !*d)
    return 0;
  unsigned long g = plc_q_small_gcd((unsigned long)*n, (unsigned long)*d);
  *n /= (long)g; /* "2/4" as 1/2, as mpq_canonicalize would */
  *d /= (long)g;
  return 1;
}

/* r->v *= n/d (n, d > 0) on longs, in lowest terms as mpq_mul leaves
 * it; 0 when r->v or a product does not fit (r untouched then). */
static int plc_unit_mul_small(plc_quantity *r, long n, long d)
{
  long a, b;
  if (plc_q_gmp_only || !plc_q_small_get(mpq_numref(r->v), &a) ||
      !plc_q_small_get(mpq_denref(r->v), &b))
    return 0;
  /* a/b and n/d are each in lowest terms, so cancelling across (a with d,
   * n with b) leaves the product in lowest terms; g1, g2 > 0 as b, d > 0 */
  unsigned long g1 = plc_q_small_gcd((unsigned long)(a < 0 ? -a : a), (unsigned long)d);
  unsigned long g2 = plc_q_small_gcd((unsigned long)n, (unsigned long)b);
  long x, y;
  if (__builtin_mul_overflow(a / (long)g1, n / (long)g2, &x) ||
      __builtin_mul_overflow(b / (long)g2, d / (long)g1, &y) || x == LONG_MIN)
    return 0;
  plc_q_small_set(r->v, x, (unsigned long)y);
  return 1;
}

void plc_q_apply_unit(plc_quantity *r, const plc_unit *u)
{
  long n, d;
  if (plc_unit_scale_long(u->scale, &n, &d) && plc_unit_mul_small(r, n, d)) {
    for (int i = 0; i < PLC_NDIM; i++)
      r->dim.e[i] = u->e[i];
    return;
  }
  mpq_t s;
  mpq_init(s);
  /* The table's own text: always valid, but canonicalize as for any
   * mpq_set_str, so a scale written "2/4" would still be exact. */
  mpq_set_str(s, u->scale, 10);
  mpq_canonicalize(s);
  mpq_mul(r->v, r->v, s);
  mpq_clear(s);
  for (int i = 0; i < PLC_NDIM; i++)
    r->dim.e[i] = u->e[i];
}
