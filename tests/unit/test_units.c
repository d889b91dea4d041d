/* test_units.c - CUnit tests of runtime/base/units.c: the values of unit
 * literals, lookup by (name, len), and the consistency of every entry of the
 * unit table with what its name says (prefix, base unit, rate). */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <stdlib.h>
#include <string.h>

#include "cu_main.h"
#include "quantity.h"

static plc_dim dim3(int b, int s, int f)
{
  plc_dim d = { { b, s, f } };
  return d;
}

static char *qtext(const mpq_t v)
{
  size_t cap = mpz_sizeinbase(mpq_numref(v), 10)
             + mpz_sizeinbase(mpq_denref(v), 10) + 3;
  char *s = malloc(cap);
  if (s)
    mpq_get_str(s, 10, v);
  return s;
}

/* q = number * unit, the way the compiler evaluates "3.35 TB/s". */
static void lit(plc_quantity *q, const char *number, const char *unit)
{
  const plc_unit *u = plc_unit_lookup(unit, strlen(unit));
  CU_ASSERT_PTR_NOT_NULL_FATAL(u);
  CU_ASSERT_EQUAL_FATAL(plc_q_parse_number(q, number, strlen(number)),
                        PLC_Q_OK);
  plc_q_apply_unit(q, u);
}

/* number unit must be exactly `want` (canonical text) with dimension d. */
static void check_lit_at(unsigned line, const char *number, const char *unit,
                         const char *want, plc_dim d)
{
  plc_quantity q;
  plc_q_init(&q);
  lit(&q, number, unit);
  char *s = qtext(q.v);
  plc_cu_str_eq(s, want, line, __FILE__);
  CU_assertImplementation(plc_dim_eq(q.dim, d) ? CU_TRUE : CU_FALSE, line,
                          unit, __FILE__, "", CU_FALSE);
  free(s);
  plc_q_clear(&q);
}

#define check_lit(number, unit, want, d) \
  check_lit_at(__LINE__, (number), (unit), (want), (d))

static void test_bandwidth(void)
{
  /* 3.35 * 10^12 = 335 * 10^10 */
  check_lit("3.35", "TB/s", "3350000000000", dim3(1, -1, 0));
  /* 400 Gbit/s = 400e9 / 8 B/s = 50e9 B/s = 50 GB/s */
  check_lit("400", "Gbps", "50000000000", dim3(1, -1, 0));
  check_lit("400", "Gbit/s", "50000000000", dim3(1, -1, 0));
  check_lit("50", "GB/s", "50000000000", dim3(1, -1, 0));
  check_lit("1", "bps", "1/8", dim3(1, -1, 0));
  check_lit("1", "KiB/s", "1024", dim3(1, -1, 0));
  check_lit("900", "GB/s", "900000000000", dim3(1, -1, 0));
}

static void test_sizes(void)
{
  check_lit("1", "KiB", "1024", dim3(1, 0, 0));
  check_lit("1", "MiB", "1048576", dim3(1, 0, 0));           /* 2^20 */
  check_lit("80", "GiB", "85899345920", dim3(1, 0, 0));      /* 80 * 2^30 */
  check_lit("1", "PiB", "1125899906842624", dim3(1, 0, 0));  /* 2^50 */
  check_lit("1.5", "KB", "1500", dim3(1, 0, 0));
  check_lit("8", "bit", "1", dim3(1, 0, 0));
  check_lit("1", "Gbit", "125000000", dim3(1, 0, 0));
  check_lit("3", "bit", "3/8", dim3(1, 0, 0));
}

static void test_times(void)
{
  check_lit("5", "us", "1/200000", dim3(0, 1, 0));   /* 5 / 10^6 */
  check_lit("5", "\xC2\xB5s", "1/200000", dim3(0, 1, 0));
  check_lit("5", "\xCE\xBCs", "1/200000", dim3(0, 1, 0));
  check_lit("33", "ms", "33/1000", dim3(0, 1, 0));
  check_lit("2.5", "ns", "1/400000000", dim3(0, 1, 0)); /* 25 / 10^10 */
  check_lit("1.5", "min", "90", dim3(0, 1, 0));
  check_lit("2", "h", "7200", dim3(0, 1, 0));
}

static void test_flops_percent(void)
{
  check_lit("989", "TFLOPS", "989000000000000", dim3(0, -1, 1));
  check_lit("989", "TFLOP/s", "989000000000000", dim3(0, -1, 1));
  check_lit("1", "EFLOPS", "1000000000000000000", dim3(0, -1, 1));
  check_lit("25.77", "GFLOP", "25770000000", dim3(0, 0, 1));
  check_lit("75", "%", "3/4", dim3(0, 0, 0));
  check_lit("12.5", "%", "1/8", dim3(0, 0, 0));
}

static void test_lookup(void)
{
  const plc_unit *u = plc_unit_lookup("GB/s", 4);
  CU_ASSERT_PTR_NOT_NULL_FATAL(u);
  CU_ASSERT_STRING_EQUAL(u->name, "GB/s");
  /* (name, len) need not be NUL-terminated: "GB" out of "GB/s" */
  u = plc_unit_lookup("GB/s", 2);
  CU_ASSERT_PTR_NOT_NULL_FATAL(u);
  CU_ASSERT_STRING_EQUAL(u->name, "GB");
  u = plc_unit_lookup("msec", 2);
  CU_ASSERT_PTR_NOT_NULL_FATAL(u);
  CU_ASSERT_STRING_EQUAL(u->name, "ms");
  /* unknown names, wrong case, partial names */
  static const char *const unknown[] = {
    "XB", "gb", "Gb", "tflops", "TB/", "GB/s ", " GB", "G", "KiB/", "sec",
    "FLOP/ms", "mbps", "\xB5s", "",
  };
  for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++)
    PLC_CU_ASSERT_MSG(!plc_unit_lookup(unknown[i], strlen(unknown[i])),
                      unknown[i]);
  CU_ASSERT_PTR_NULL(plc_unit_lookup("G", 1));
  CU_ASSERT_PTR_NULL(plc_unit_lookup(NULL, 0));
  CU_ASSERT_PTR_NULL(plc_unit_lookup("B\0", 2));
  /* the hashed lookup finds each entry by its name, as a scan of the table
   * from the start does (the first entry of a name), also out of a longer
   * text; one byte more or less finds the entry a scan finds, or none */
  char buf[16];
  for (size_t i = 0; plc_unit_at(i); i++) {
    const char *n = plc_unit_at(i)->name;
    size_t len = strlen(n);
    const plc_unit *first = NULL;
    for (size_t j = 0; plc_unit_at(j) && !first; j++)
      if (strcmp(plc_unit_at(j)->name, n) == 0)
        first = plc_unit_at(j);
    snprintf(buf, sizeof buf, "%sx", n);
    PLC_CU_ASSERT_MSG(plc_unit_lookup(buf, len) == first, n);
    const plc_unit *shorter = NULL, *longer = NULL;
    for (size_t j = 0; plc_unit_at(j); j++) {
      const char *m = plc_unit_at(j)->name;
      if (!shorter && len > 1 && strlen(m) == len - 1 && !memcmp(m, n, len - 1))
        shorter = plc_unit_at(j);
      if (!longer && !strcmp(m, buf))
        longer = plc_unit_at(j);
    }
    PLC_CU_ASSERT_MSG(plc_unit_lookup(n, len - 1) == (len > 1 ? shorter : NULL), n);
    PLC_CU_ASSERT_MSG(plc_unit_lookup(buf, len + 1) == longer, n);
  }
}

static void test_required_names(void)
{
  static const char *const names[] = {
    "B", "KB", "MB", "GB", "TB", "PB", "KiB", "MiB", "GiB", "TiB", "PiB",
    "bit", "Kbit", "Mbit", "Gbit", "Tbit", "s", "ms", "us", "ns", "min", "h",
    "FLOP", "KFLOP", "MFLOP", "GFLOP", "TFLOP", "PFLOP", "EFLOP",
    "B/s", "KB/s", "MB/s", "GB/s", "TB/s", "KiB/s", "MiB/s", "GiB/s",
    "TiB/s", "bps", "Kbps", "Mbps", "Gbps", "Tbps", "Gbit/s",
    "FLOPS", "KFLOPS", "MFLOPS", "GFLOPS", "TFLOPS", "PFLOPS", "EFLOPS",
    "FLOP/s", "TFLOP/s", "%",
  };
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    const plc_unit *u = plc_unit_lookup(names[i], strlen(names[i]));
    PLC_CU_STR_EQ(u ? u->name : NULL, names[i]);
  }
}

/* ---- table consistency --------------------------------------------- */

/* What a unit's name says, worked out independently of the table. */
typedef struct expect {
  mpq_t scale;
  plc_dim dim;
} expect;

/* Strip a suffix from name[0..*len); 1 if it was there. */
static int strip(const char *name, size_t *len, const char *suffix)
{
  size_t n = strlen(suffix);
  if (*len < n || memcmp(name + *len - n, suffix, n) != 0)
    return 0;
  *len -= n;
  return 1;
}

/* Base unit at the end of name[0..*len): sets scale and dim, strips it. */
static int base_unit(const char *name, size_t *len, expect *x, int *binary)
{
  *binary = 0;
  if (strip(name, len, "iB"))
    *binary = 1, x->dim = dim3(1, 0, 0), mpq_set_ui(x->scale, 1, 1);
  else if (strip(name, len, "bit"))
    x->dim = dim3(1, 0, 0), mpq_set_ui(x->scale, 1, 8);
  else if (strip(name, len, "B"))
    x->dim = dim3(1, 0, 0), mpq_set_ui(x->scale, 1, 1);
  else if (strip(name, len, "FLOP"))
    x->dim = dim3(0, 0, 1), mpq_set_ui(x->scale, 1, 1);
  else if (strip(name, len, "min"))
    x->dim = dim3(0, 1, 0), mpq_set_ui(x->scale, 60, 1);
  else if (strip(name, len, "h"))
    x->dim = dim3(0, 1, 0), mpq_set_ui(x->scale, 3600, 1);
  else if (strip(name, len, "s"))
    x->dim = dim3(0, 1, 0), mpq_set_ui(x->scale, 1, 1);
  else
    return 0;
  return 1;
}

/* Multiply x by the prefix name[0..len): K M G T P E (1000^k, or 1024^k
 * for binary units) or m u µ μ n (time, 1000^-k). */
static int prefix(const char *name, size_t len, expect *x, int binary)
{
  static const char *const up[] = { "K", "M", "G", "T", "P", "E" };
  static const char *const down[] = { "m", "u", "\xC2\xB5", "\xCE\xBC", "n" };
  static const int down_k[] = { 1, 2, 2, 2, 3 };
  mpq_t f;
  mpq_init(f);
  int found = len == 0;
  mpq_set_ui(f, 1, 1);
  for (int i = 0; i < 6 && !found; i++)
    if (strlen(up[i]) == len && memcmp(name, up[i], len) == 0) {
      mpz_ui_pow_ui(mpq_numref(f), binary ? 1024 : 1000, (unsigned long)i + 1);
      found = 1;
    }
  for (int i = 0; i < 5 && !found; i++)
    if (strlen(down[i]) == len && memcmp(name, down[i], len) == 0) {
      mpz_ui_pow_ui(mpq_denref(f), 1000, (unsigned long)down_k[i]);
      found = 1;
    }
  mpq_mul(x->scale, x->scale, f);
  mpq_clear(f);
  return found;
}

/* Decompose a name: "%" | prefix base "/s"? | prefix "bps" | prefix "FLOPS". */
static int decompose(const char *name, expect *x)
{
  size_t len = strlen(name);
  int binary, rate = 0;
  if (strcmp(name, "%") == 0) {
    x->dim = dim3(0, 0, 0);
    mpq_set_ui(x->scale, 1, 100);
    return 1;
  }
  if (strip(name, &len, "/s"))
    rate = 1;
  else if (strip(name, &len, "bps"))
    rate = 2; /* "Gbps": bits per second */
  else if (len > 5 && strip(name, &len, "FLOPS"))
    rate = 3;
  else if (strcmp(name, "FLOPS") == 0)
    len = 0, rate = 3;
  if (rate == 2) {
    x->dim = dim3(1, 0, 0), mpq_set_ui(x->scale, 1, 8), binary = 0;
  } else if (rate == 3) {
    x->dim = dim3(0, 0, 1), mpq_set_ui(x->scale, 1, 1), binary = 0;
  } else if (!base_unit(name, &len, x, &binary)) {
    return 0;
  }
  if (rate)
    x->dim.e[PLC_DIM_SEC] -= 1;
  return prefix(name, len, x, binary);
}

static void test_table_consistent(void)
{
  size_t n = 0;
  expect x;
  mpq_init(x.scale);
  mpq_t s;
  mpq_init(s);
  for (const plc_unit *u; (u = plc_unit_at(n)) != NULL; n++) {
    if (!decompose(u->name, &x)) {
      PLC_CU_ASSERT_MSG(0, u->name);
      continue;
    }
    PLC_CU_ASSERT_MSG(mpq_set_str(s, u->scale, 10) == 0, u->name);
    /* the scale text must already be canonical and positive */
    PLC_CU_ASSERT_MSG(mpq_cmp_ui(s, 0, 1) > 0, u->name);
    mpq_t c;
    mpq_init(c);
    mpq_set(c, s);
    mpq_canonicalize(c);
    PLC_CU_ASSERT_MSG(mpz_cmp(mpq_numref(c), mpq_numref(s)) == 0
                      && mpz_cmp(mpq_denref(c), mpq_denref(s)) == 0, u->name);
    mpq_clear(c);
    PLC_CU_ASSERT_MSG(mpq_equal(s, x.scale), u->name);
    PLC_CU_ASSERT_MSG(plc_dim_eq(dim3(u->e[0], u->e[1], u->e[2]), x.dim),
                      u->name);
    /* names are unique: lookup finds this very entry */
    PLC_CU_ASSERT_MSG(plc_unit_lookup(u->name, strlen(u->name)) == u, u->name);
  }
  CU_ASSERT_EQUAL(n, 67); /* the table's size, so an edit shows up here */
  CU_ASSERT_PTR_NULL(plc_unit_at(n));
  CU_ASSERT_PTR_NULL(plc_unit_at((size_t)-1));
  mpq_clear(s);
  mpq_clear(x.scale);
}

/* The decomposition itself must be able to fail, or the test above proves
 * nothing. */
static void test_decompose_rejects(void)
{
  expect x;
  mpq_init(x.scale);
  CU_ASSERT_FALSE(decompose("XB", &x));
  CU_ASSERT_FALSE(decompose("KKB", &x));
  CU_ASSERT_FALSE(decompose("Qs", &x));
  CU_ASSERT_TRUE(decompose("Gbps", &x));
  CU_ASSERT(mpq_cmp_ui(x.scale, 125000000, 1) == 0);
  CU_ASSERT(plc_dim_eq(x.dim, dim3(1, -1, 0)));
  CU_ASSERT_TRUE(decompose("TiB/s", &x));
  CU_ASSERT(mpq_cmp_ui(x.scale, 1099511627776UL, 1) == 0);
  mpq_clear(x.scale);
}

static void test_apply_unit_scales(void)
{
  /* apply_unit multiplies, it does not replace: 3/4 KiB = 768 B */
  plc_quantity q;
  plc_q_init(&q);
  plc_q_set_frac(&q, 3, 4, plc_dim_none());
  plc_q_apply_unit(&q, plc_unit_lookup("KiB", 3));
  CU_ASSERT(mpq_cmp_ui(q.v, 768, 1) == 0);
  CU_ASSERT(plc_dim_eq(q.dim, dim3(1, 0, 0)));
  /* 400 Gbps and 50 GB/s compare equal as quantities */
  plc_quantity a, b;
  int c = 99;
  plc_q_init(&a), plc_q_init(&b);
  lit(&a, "400", "Gbps");
  lit(&b, "50", "GB/s");
  CU_ASSERT_EQUAL(plc_q_cmp(&c, &a, &b), PLC_Q_OK);
  CU_ASSERT_EQUAL(c, 0);
  plc_q_clear(&a), plc_q_clear(&b), plc_q_clear(&q);
}

/* plc_q_apply_unit's machine-integer path against GMP's (plc_q_gmp_only):
 * every unit times edge and random values, the same canonical product. */
static void test_apply_unit_fast(void)
{
  static const char *const vals[] = {
    "0", "1", "-1", "3/4", "-7/8", "125/3", "1/1000000000",
    "9223372036854775807", "-9223372036854775807", "9223372036854775807/8",
    "1/9223372036854775807", "73786976294838206464", "1/73786976294838206464",
    "1000000000000000000", "999999999999/1024",
  };
  unsigned long long st = 0x13198a2e03707344ULL;
  int bad = 0;
  for (size_t i = 0; i < sizeof vals / sizeof vals[0] + 300; i++) {
    mpq_t v;
    mpq_init(v);
    if (i < sizeof vals / sizeof vals[0]) {
      mpq_set_str(v, vals[i], 10);
    } else { /* random ratios of up to 64 bits */
      st ^= st >> 12, st ^= st << 25, st ^= st >> 27;
      unsigned long long a = st * 0x2545f4914f6cdd1dULL;
      st ^= st >> 12, st ^= st << 25, st ^= st >> 27;
      unsigned long long b = st * 0x2545f4914f6cdd1dULL;
      mpz_set_ui(mpq_numref(v), (unsigned long)(a >> (a % 64)));
      mpz_set_ui(mpq_denref(v), (unsigned long)((b >> (b % 64)) | 1));
      if (a & 1)
        mpq_neg(v, v);
    }
    mpq_canonicalize(v);
    for (size_t j = 0; plc_unit_at(j); j++) {
      plc_quantity a, b;
      plc_q_init(&a);
      plc_q_init(&b);
      mpq_set(a.v, v);
      mpq_set(b.v, v);
      plc_q_gmp_only = 0;
      plc_q_apply_unit(&a, plc_unit_at(j));
      plc_q_gmp_only = 1;
      plc_q_apply_unit(&b, plc_unit_at(j));
      plc_q_gmp_only = 0;
      mpq_t c;
      mpq_init(c);
      mpq_set(c, a.v);
      mpq_canonicalize(c);
      if ((!mpq_equal(a.v, b.v) || !plc_dim_eq(a.dim, b.dim) ||
           mpz_cmp(mpq_numref(c), mpq_numref(a.v)) || mpz_cmp(mpq_denref(c), mpq_denref(a.v))) &&
          bad++ < 5) {
        char msg[120];
        snprintf(msg, sizeof msg, "value %zu times %s: fast and GMP differ", i,
                 plc_unit_at(j)->name);
        PLC_CU_ASSERT_MSG(0, msg);
      }
      mpq_clear(c);
      plc_q_clear(&a);
      plc_q_clear(&b);
    }
    mpq_clear(v);
  }
  CU_ASSERT_EQUAL(bad, 0);
}

int main(void)
{
  static const plc_cu_test tests[] = {
    {"bandwidth literals", test_bandwidth},
    {"size literals", test_sizes},
    {"time literals", test_times},
    {"FLOP and percent literals", test_flops_percent},
    {"lookup by name and length", test_lookup},
    {"required unit names", test_required_names},
    {"every table entry matches its name", test_table_consistent},
    {"name decomposition can fail", test_decompose_rejects},
    {"apply_unit multiplies", test_apply_unit_scales},
    {"apply_unit fast path = GMP", test_apply_unit_fast},
    {NULL, NULL},
  };
  return plc_cu_run("units", tests);
}
