/* test_format.c - CUnit tests of runtime/base/format.c: fixed and significant
 * digit decimals with round-half-away-from-zero, exact rationals, and the
 * automatic choice of unit for quantities (including the seed figures of the
 * reference analysis). */
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

/* v := text ("n", "n/d" or a decimal literal such as "0.0025"). */
static void setv(mpq_t v, const char *text)
{
  if (strchr(text, '/')) {
    CU_ASSERT_EQUAL_FATAL(mpq_set_str(v, text, 10), 0);
    mpq_canonicalize(v);
    return;
  }
  plc_quantity q;
  plc_q_init(&q);
  CU_ASSERT_EQUAL_FATAL(plc_q_parse_number(&q, text, strlen(text)), PLC_Q_OK);
  mpq_set(v, q.v);
  plc_q_clear(&q);
}

/* Check a malloc'd result against want at the given line, and free it. */
static void fmt_check_at(unsigned line, char *got, const char *want)
{
  plc_cu_str_eq(got, want, line, __FILE__);
  free(got);
}

#define FMT_CHECK(call, want) fmt_check_at(__LINE__, (call), (want))

static void fixed_is_at(unsigned line, const char *v, int k, const char *want)
{
  mpq_t x;
  mpq_init(x);
  setv(x, v);
  fmt_check_at(line, plc_fmt_fixed(x, k), want);
  mpq_clear(x);
}

static void sig_is_at(unsigned line, const char *v, int n, const char *want)
{
  mpq_t x;
  mpq_init(x);
  setv(x, v);
  fmt_check_at(line, plc_fmt_sig(x, n), want);
  mpq_clear(x);
}

#define fixed_is(v, k, want) fixed_is_at(__LINE__, (v), (k), (want))
#define sig_is(v, n, want) sig_is_at(__LINE__, (v), (n), (want))

static void test_fixed(void)
{
  fixed_is("0.0025", 3, "0.003");   /* 2.5 thousandths: tie, away from 0 */
  fixed_is("-0.0025", 3, "-0.003");
  fixed_is("0.0015", 3, "0.002");   /* ties-to-even would give 0.002 too */
  fixed_is("0.0045", 3, "0.005");   /* ties-to-even would give 0.004 */
  fixed_is("2/3", 4, "0.6667");     /* 6666.66... -> 6667 */
  fixed_is("-2/3", 4, "-0.6667");
  fixed_is("-0.0001", 2, "0.00");   /* rounds to zero: no minus sign */
  fixed_is("-1/3", 0, "0");
  fixed_is("1/2", 0, "1");
  fixed_is("-1/2", 0, "-1");
  fixed_is("-2/3", 0, "-1");
  fixed_is("1/8", 2, "0.13");       /* 12.5 hundredths */
  fixed_is("-1/8", 2, "-0.13");
  fixed_is("123.456", 1, "123.5");
  fixed_is("999.995", 2, "1000.00"); /* carry through every digit */
  fixed_is("5", 2, "5.00");
  fixed_is("0", 3, "0.000");
  fixed_is("2.5", -1, "3");         /* negative places count as 0 */
  fixed_is("1/3000", 6, "0.000333");
  fixed_is("1/3000", 7, "0.0003333");
}

static void test_sig(void)
{
  sig_is("9.995", 3, "10");          /* 999.5 -> 1000: one digit fewer */
  sig_is("0.00083886", 4, "0.0008389");
  sig_is("123456", 4, "123500");     /* 1234.56 -> 1235, then 2 zeros */
  sig_is("999999", 4, "1000000");    /* 9999.99 -> 10000 */
  sig_is("360", 4, "360");           /* "360.0" trimmed */
  sig_is("0.8389", 4, "0.8389");
  sig_is("1.5", 3, "1.5");           /* "1.50" trimmed */
  sig_is("0", 4, "0");
  sig_is("-2/3", 3, "-0.667");
  sig_is("1/3", 1, "0.3");
  sig_is("0.05", 1, "0.05");
  sig_is("0.95", 1, "1");            /* 9.5 tenths -> 10 tenths */
  sig_is("1.5", 1, "2");
  sig_is("-1.5", 1, "-2");
  sig_is("2.5", 1, "3");             /* half away from zero, not to even */
  sig_is("1.25", 2, "1.3");
  sig_is("47", 0, "50");             /* sig < 1 counts as 1 */
  sig_is("47", -3, "50");
  sig_is("100", 1, "100");
  sig_is("10", 2, "10");
  sig_is("1000", 4, "1000");
  sig_is("0.001", 4, "0.001");
  sig_is("1/7", 5, "0.14286");       /* 0.142857... */
  sig_is("999/1000", 3, "0.999");
  sig_is("999/1000", 2, "1");        /* 99.9 hundredths -> 100 */
  sig_is("1/999", 4, "0.001001");    /* 0.001001001... */
  sig_is("1/3000", 3, "0.000333");
  sig_is("1e-20", 2, "0.00000000000000000001");
}

static void test_sig_exponent_edges(void)
{
  /* Powers of ten and their neighbours, where an estimate of the decimal
   * exponent from digit counts is most easily off by one. */
  sig_is("99999/100000", 3, "1");      /* 0.99999 */
  sig_is("100001/100000", 3, "1");     /* 1.00001 */
  sig_is("1/10", 2, "0.1");
  sig_is("999999999999/1000", 2, "1000000000"); /* 999999999.999 */
  sig_is("10000000000/9999999999", 3, "1");     /* 1.0000000001 */
  sig_is("9999999999/10000000000", 3, "1");     /* 0.9999999999 */
  sig_is("9999999999/10000000000", 10, "0.9999999999");
  /* mpz_sizeinbase(64, 10) is 3, one more than the real 2 digits, so the
   * estimate for 7/64 = 0.109375 is 1 - 3 = -2 while the exponent is -1:
   * without correcting upwards this would print 4 digits, "0.1094". */
  sig_is("7/64", 3, "0.109");
  sig_is("-7/64", 2, "-0.11");
  /* sizeinbase(9, 10) = 2: 9/8 = 1.125 estimates 2 - 2 = 0, correct. */
  sig_is("9/8", 2, "1.1");
}

static void test_big(void)
{
  mpq_t x;
  mpq_init(x);
  mpz_ui_pow_ui(mpq_numref(x), 2, 100); /* 2^100, 31 digits */
  FMT_CHECK(plc_fmt_exact(x), "1267650600228229401496703205376");
  FMT_CHECK(plc_fmt_sig(x, 4), "1268000000000000000000000000000");
  FMT_CHECK(plc_fmt_fixed(x, 2), "1267650600228229401496703205376.00");
  mpq_inv(x, x);
  FMT_CHECK(plc_fmt_exact(x), "1/1267650600228229401496703205376");
  /* 2^-100 = 7.888609052210118e-31 */
  FMT_CHECK(plc_fmt_sig(x, 3), "0.000000000000000000000000000000789");
  /* A huge digit count is clamped: 1/3 gets PLC_FMT_MAX_DIGITS threes. */
  mpq_set_ui(x, 1, 3);
  char *s = plc_fmt_sig(x, 1 << 30);
  CU_ASSERT_EQUAL(strlen(s), 2 + PLC_FMT_MAX_DIGITS);
  CU_ASSERT_EQUAL(strspn(s + 2, "3"), PLC_FMT_MAX_DIGITS);
  free(s);
  s = plc_fmt_fixed(x, 1 << 30);
  CU_ASSERT_EQUAL(strlen(s), 2 + PLC_FMT_MAX_DIGITS);
  free(s);
  mpq_clear(x);
}

static void test_exact(void)
{
  mpq_t x;
  mpq_init(x);
  setv(x, "1/3000");
  FMT_CHECK(plc_fmt_exact(x), "1/3000");
  mpq_neg(x, x);
  FMT_CHECK(plc_fmt_exact(x), "-1/3000");
  setv(x, "42");
  FMT_CHECK(plc_fmt_exact(x), "42");
  setv(x, "0.75");
  FMT_CHECK(plc_fmt_exact(x), "3/4");
  mpq_set_ui(x, 0, 1);
  FMT_CHECK(plc_fmt_exact(x), "0");
  mpq_clear(x);
}

/* ---- quantities ---------------------------------------------------- */

static void q_is_at(unsigned line, const char *v, plc_dim d, int sig,
                    int exact, const char *want)
{
  plc_quantity q;
  plc_q_init(&q);
  setv(q.v, v);
  q.dim = d;
  fmt_check_at(line, plc_q_format(&q, sig, exact), want);
  plc_q_clear(&q);
}

#define q_is(v, d, sig, exact, want) \
  q_is_at(__LINE__, (v), (d), (sig), (exact), (want))

#define BYTES dim3(1, 0, 0)
#define SECS dim3(0, 1, 0)
#define FLOPCOUNT dim3(0, 0, 1)
#define BPS dim3(1, -1, 0)
#define FPS dim3(0, -1, 1)
#define NONE dim3(0, 0, 0)

/* Figures of the reference analysis. */
static void test_seed_values(void)
{
  q_is("201326592", BYTES, 4, 0, "201.3 MB");   /* 192 MiB */
  q_is("352321536", BYTES, 4, 0, "352.3 MB");   /* 336 MiB */
  q_is("25769803776", FLOPCOUNT, 4, 0, "25.77 GFLOP");
  /* 301989888 B / 360e9 B/s = 8192/9765625 s = 0.0008388608 s */
  q_is("8192/9765625", SECS, 4, 0, "0.8389 ms");
  q_is("8192/9765625", SECS, 3, 0, "0.839 ms");
  q_is("360e9", BPS, 4, 0, "360 GB/s");
  q_is("3.35e12", BPS, 4, 0, "3.35 TB/s");
  q_is("989e12", FPS, 4, 0, "989 TFLOPS");
  q_is("1.979e15", FPS, 4, 0, "1.979 PFLOPS");
  q_is("1530900000", BYTES, 4, 0, "1.531 GB");
}

static void test_unit_choice(void)
{
  q_is("0.5", BYTES, 4, 0, "0.5 B");
  q_is("999", BYTES, 4, 0, "999 B");
  q_is("1000", BYTES, 4, 0, "1 KB");
  q_is("5e18", BYTES, 4, 0, "5000 PB");      /* PB is the largest */
  q_is("-352321536", BYTES, 4, 0, "-352.3 MB");
  q_is("352321536", BYTES, 0, 0, "400 MB");  /* sig < 1 counts as 1 */
  q_is("5e15", BPS, 4, 0, "5000 TB/s");      /* TB/s is the largest */
  q_is("12", BPS, 4, 0, "12 B/s");
  q_is("2e18", FLOPCOUNT, 4, 0, "2 EFLOP");
  q_is("999", FLOPCOUNT, 4, 0, "999 FLOP");
  q_is("5e21", FPS, 4, 0, "5000 EFLOPS");
  q_is("3/4", NONE, 4, 0, "0.75");
  q_is("12", dim3(2, -1, 0), 4, 0, "12 B^2/s");
  q_is("1/3", dim3(0, -1, 0), 3, 0, "0.333 1/s");
  q_is("6", dim3(1, 0, 1), 4, 0, "6 B*FLOP");
}

static void test_time_choice(void)
{
  q_is("1/2000000", SECS, 4, 0, "500 ns");     /* 0.5 us < 1 us */
  q_is("1e-9", SECS, 4, 0, "1 ns");
  q_is("1e-6", SECS, 4, 0, "0.001 ms");        /* 1 us is already ms */
  q_is("-1e-6", SECS, 4, 0, "-0.001 ms");
  q_is("34.7e-6", SECS, 4, 0, "0.0347 ms");
  /* from 1 s on, seconds: the integer part stays below 1000 (issue 9 #21) */
  q_is("3.91496", SECS, 4, 0, "3.915 s");      /* not 3915 ms */
  q_is("35", SECS, 4, 0, "35 s");              /* not 35000 ms */
  q_is("999", SECS, 4, 0, "999 s");
  q_is("0.9999", SECS, 4, 0, "999.9 ms");
  q_is("0.99999", SECS, 4, 0, "1 s");          /* 1000 ms carries to 1 s */
  /* 1000 s = 16.666... min; 4000.5 s = 66.675 min; 60000 s = 1000 min = 16.67 h */
  q_is("1000", SECS, 4, 0, "16.67 min");
  q_is("4000.5", SECS, 4, 0, "66.68 min");
  q_is("60000", SECS, 4, 0, "16.67 h");
  q_is("3600000", SECS, 4, 0, "1000 h");       /* the top rung has no bound */
}

static void test_zero_and_carry(void)
{
  q_is("0", SECS, 4, 0, "0 s");
  q_is("0", BYTES, 4, 0, "0 B");
  q_is("0", FPS, 4, 0, "0 FLOPS");
  q_is("0", NONE, 4, 0, "0");
  /* 999.96 MB rounds to 1000 MB at 4 digits: shown as the next unit */
  q_is("999960000", BYTES, 4, 0, "1 GB");
  q_is("999960000", BYTES, 5, 0, "999.96 MB");
  q_is("-999960000", BYTES, 4, 0, "-1 GB");
  /* 999.9999 ns rounds to 1000 ns = 1 us: the ms rung, 0.001 ms */
  q_is("9999999/10000000000000", SECS, 4, 0, "0.001 ms");
  /* 999.99996 s rounds to 1000 s at 4 digits: the next rung, 16.67 min */
  q_is("999.99996", SECS, 4, 0, "16.67 min");
  q_is("999.99996", SECS, 9, 0, "999.99996 s");
  /* whole dimensionless counts are exact (issue 9 #21): vocab 152064 is
   * not 152100; fractions and huge values are still rounded */
  q_is("152064", NONE, 4, 0, "152064");
  q_is("-8225296384", NONE, 4, 0, "-8225296384");
  q_is("152064.5", NONE, 4, 0, "152100");
  q_is("1e30", NONE, 4, 0, "1000000000000000000000000000000");
}

static void test_format_exact(void)
{
  q_is("1/1200", SECS, 4, 1, "1/1200 s");
  q_is("42", BYTES, 4, 1, "42 B");
  q_is("0", BYTES, 4, 1, "0 B");
  q_is("3/4", NONE, 4, 1, "3/4");
  q_is("989e12", FPS, 4, 1, "989000000000000 FLOP/s");
  q_is("3.35e12", BPS, 4, 1, "3350000000000 B/s");
  q_is("-5/2", dim3(2, -1, 0), 4, 1, "-5/2 B^2/s");
}

static void test_format_in(void)
{
  plc_quantity q;
  plc_q_init(&q);
  setv(q.v, "34.7e-6");
  q.dim = SECS;
  FMT_CHECK(plc_q_format_in(&q, plc_unit_lookup("ms", 2), 4), "0.0347 ms");
  FMT_CHECK(plc_q_format_in(&q, plc_unit_lookup("us", 2), 4), "34.7 us");
  CU_ASSERT_PTR_NULL(plc_q_format_in(&q, plc_unit_lookup("GB", 2), 4));
  CU_ASSERT_PTR_NULL(plc_q_format_in(&q, NULL, 4));
  setv(q.v, "3/4");
  q.dim = NONE;
  FMT_CHECK(plc_q_format_in(&q, plc_unit_lookup("%", 1), 4), "75%");
  setv(q.v, "400e9");
  q.dim = BPS;
  /* 400e9 B/s = 3200 Gbit/s */
  FMT_CHECK(plc_q_format_in(&q, plc_unit_lookup("Gbps", 4), 4), "3200 Gbps");
  plc_q_clear(&q);
}

/* The number and unit of plc_q_format in two parts, for the JSON report. */
static void split_is_at(unsigned line, const char *v, plc_dim d, const char *num,
                        const char *unit)
{
  plc_quantity q;
  plc_q_init(&q);
  setv(q.v, v);
  q.dim = d;
  char *u = NULL;
  fmt_check_at(line, plc_q_format_split(&q, 4, &u), num);
  fmt_check_at(line, u, unit);
  plc_q_clear(&q);
}

static void test_format_split(void)
{
  split_is_at(__LINE__, "8192/9765625", SECS, "0.8389", "ms");
  split_is_at(__LINE__, "999.99996", SECS, "16.67", "min");
  split_is_at(__LINE__, "152064", NONE, "152064", "");
  split_is_at(__LINE__, "0", BYTES, "0", "B");
  split_is_at(__LINE__, "360e9", BPS, "360", "GB/s");
  split_is_at(__LINE__, "3/4", NONE, "0.75", "");
  split_is_at(__LINE__, "-5/2", dim3(2, -1, 0), "-2.5", "B^2/s");
}

/* ---- the machine-integer fast path against the GMP path -------------- */

/* Every formatter has a fast path on unsigned __int128 that gives up where a
 * product would overflow; plc_q_gmp_only turns it off.  Both must print the
 * same text for any value: edge values (0, 2^63 and 2^64 and 2^128
 * boundaries, powers of ten and their neighbours, huge values), random
 * ratios of every size, exact rounding ties at each precision, and values
 * just below each unit's threshold where rounding carries to the next. */

static unsigned long long fp_state = 0x9e3779b97f4a7c15ULL;

static unsigned long long fp_rand(void) /* xorshift64*: the same every run */
{
  fp_state ^= fp_state >> 12;
  fp_state ^= fp_state << 25;
  fp_state ^= fp_state >> 27;
  return fp_state * 0x2545f4914f6cdd1dULL;
}

static long fp_range(long lo, long hi)
{
  return lo + (long)(fp_rand() % (unsigned long long)(hi - lo + 1));
}

/* z := a random integer below 2^bits, of any shape. */
static void fp_int(mpz_t z, int bits)
{
  mpz_set_ui(z, 0);
  for (int b = 0; b < bits; b += 64) {
    mpz_mul_2exp(z, z, 64);
    mpz_add_ui(z, z, (unsigned long)fp_rand());
  }
  if (bits > 0)
    mpz_fdiv_r_2exp(z, z, (mp_bitcnt_t)bits);
}

static long fp_mismatches;

/* Both paths' text of one call; a mismatch is reported with the value. */
#define FP_BOTH(expr, what)                                                   \
  do {                                                                       \
    plc_q_gmp_only = 0;                                                      \
    char *fast_ = (expr);                                                    \
    plc_q_gmp_only = 1;                                                      \
    char *slow_ = (expr);                                                    \
    plc_q_gmp_only = 0;                                                      \
    if ((fast_ == NULL) != (slow_ == NULL) ||                                \
        (fast_ && strcmp(fast_, slow_) != 0)) {                              \
      if (fp_mismatches++ < 5) {                                             \
        char *v_ = plc_fmt_exact(v);                                         \
        char msg_[400];                                                      \
        snprintf(msg_, sizeof msg_, "%s of %.200s: fast %s, GMP %s", what,   \
                 v_, fast_ ? fast_ : "NULL", slow_ ? slow_ : "NULL");        \
        PLC_CU_ASSERT_MSG(0, msg_);                                          \
        free(v_);                                                            \
      }                                                                      \
    }                                                                        \
    free(fast_);                                                             \
    free(slow_);                                                             \
  } while (0)

static const plc_dim fp_dims[] = {
  {{0, 0, 0}}, {{1, 0, 0}}, {{0, 1, 0}}, {{1, -1, 0}}, {{0, 0, 1}},
  {{0, -1, 1}}, {{2, -1, 0}},
};
#define FP_NDIMS (sizeof fp_dims / sizeof fp_dims[0])

/* Every formatter on v; full covers all precisions, else a random few. */
static void fp_check(const mpq_t v, int full)
{
  int sigs[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 15, 17, 18, 19, 20, 21, 25,
                30, 38, 39, 40, 60, 1000};
  int nsig = (int)(sizeof sigs / sizeof sigs[0]);
  for (int k = 0; k < nsig; k++) {
    int sig = full ? sigs[k] : sigs[fp_range(0, nsig - 1)];
    if (!full && k > 3)
      break;
    FP_BOTH(plc_fmt_sig(v, sig), "sig");
    FP_BOTH(plc_fmt_fixed(v, sig == 1000 ? 0 : sig), "fixed");
  }
  FP_BOTH(plc_fmt_exact(v), "exact");
  plc_quantity q;
  q.v[0] = *v; /* read only */
  for (size_t i = 0; i < FP_NDIMS; i++) {
    q.dim = fp_dims[i];
    int sig = full ? (int)fp_range(1, 8) : 4;
    char *u1 = NULL, *u2 = NULL;
    FP_BOTH(plc_q_format(&q, sig, 0), "quantity");
    FP_BOTH(plc_q_format(&q, sig, 1), "exact quantity");
    plc_q_gmp_only = 0;
    char *n1 = plc_q_format_split(&q, sig, &u1);
    plc_q_gmp_only = 1;
    char *n2 = plc_q_format_split(&q, sig, &u2);
    plc_q_gmp_only = 0;
    if ((strcmp(n1, n2) || strcmp(u1, u2)) && fp_mismatches++ < 5) {
      char msg[200];
      snprintf(msg, sizeof msg, "split: fast %s %s, GMP %s %s", n1, u1, n2, u2);
      PLC_CU_ASSERT_MSG(0, msg);
    }
    free(n1);
    free(n2);
    free(u1);
    free(u2);
    for (size_t j = 0; plc_unit_at(j); j++)
      if (full || fp_range(0, 15) == 0)
        FP_BOTH(plc_q_format_in(&q, plc_unit_at(j), sig), "in a unit");
  }
}

/* v and -v. */
static void fp_check_pm(mpq_t v, int full)
{
  mpq_canonicalize(v);
  fp_check(v, full);
  mpq_neg(v, v);
  fp_check(v, full);
}

static void test_fast_edges(void)
{
  static const char *const nums[] = {
    "0", "1", "2", "5", "9", "10", "99", "100", "999", "1000", "12345",
    "4294967295", "4294967297", "999999999999999999", "1000000000000000000",
    "9999999999999999999", "10000000000000000000", "9223372036854775807",
    "9223372036854775808", "18446744073709551615", "18446744073709551616",
    "18446744073709551617", "99999999999999999999999999999999999999",
    "100000000000000000000000000000000000000",
    "170141183460469231731687303715884105728",
    "340282366920938463463374607431768211455",
    "340282366920938463463374607431768211456",
    "340282366920938463463374607431768211457",
    "10000000000000000000000000000000000000000",
  };
  static const char *const dens[] = {
    "1", "2", "3", "7", "8", "1000", "1000000000", "1000000000000000000",
    "9223372036854775807", "18446744073709551615", "18446744073709551616",
    "170141183460469231731687303715884105728",
    "340282366920938463463374607431768211455",
    "340282366920938463463374607431768211456",
    "147808829414345923316083210206383297601", /* 3^80 */
  };
  mpq_t v;
  mpq_init(v);
  for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++)
    for (size_t j = 0; j < sizeof dens / sizeof dens[0]; j++) {
      mpz_set_str(mpq_numref(v), nums[i], 10);
      mpz_set_str(mpq_denref(v), dens[j], 10);
      fp_check_pm(v, 1);
    }
  mpq_clear(v);
  CU_ASSERT_EQUAL(fp_mismatches, 0);
}

static void test_fast_random(void)
{
  mpq_t v;
  mpz_t p;
  mpq_init(v);
  mpz_init(p);
  for (int n = 0; n < 4000; n++) {
    switch (n % 3) {
    case 0: /* any ratio up to 140 bits a side */
      fp_int(mpq_numref(v), (int)fp_range(0, 140));
      fp_int(mpq_denref(v), (int)fp_range(1, 140));
      if (mpz_sgn(mpq_denref(v)) == 0)
        mpz_set_ui(mpq_denref(v), 1);
      break;
    case 1: /* a short mantissa times a power of ten, as plans write */
      fp_int(mpq_numref(v), (int)fp_range(1, 40));
      mpz_ui_pow_ui(p, 10, (unsigned long)fp_range(0, 30));
      if (fp_rand() & 1)
        mpz_mul(mpq_numref(v), mpq_numref(v), p);
      else
        mpz_set(mpq_denref(v), p);
      break;
    default: /* a machine-integer ratio, as plans compute */
      fp_int(mpq_numref(v), (int)fp_range(0, 64));
      fp_int(mpq_denref(v), (int)fp_range(1, 64));
      if (mpz_sgn(mpq_denref(v)) == 0)
        mpz_set_ui(mpq_denref(v), 1);
    }
    fp_check_pm(v, n < 300);
    mpz_set_ui(mpq_denref(v), 1);
  }
  mpq_clear(v);
  mpz_clear(p);
  CU_ASSERT_EQUAL(fp_mismatches, 0);
}

/* Exact ties: p digits and a 5, times 10^j, at precisions p and p +- 1; and
 * p nines and a 5 (9.995), which carries into a new digit. */
static void test_fast_ties(void)
{
  mpq_t v;
  mpz_t p;
  mpq_init(v);
  mpz_init(p);
  for (int n = 0; n < 1500; n++) {
    long digits = fp_range(1, 24), j = fp_range(-30, 30);
    mpz_ui_pow_ui(p, 10, (unsigned long)digits);
    if (n % 4 == 0) {
      mpz_sub_ui(mpq_numref(v), p, 1); /* 99...9 */
    } else {
      fp_int(mpq_numref(v), 80);
      mpz_mod(mpq_numref(v), mpq_numref(v), p);
    }
    mpz_mul_ui(mpq_numref(v), mpq_numref(v), 10);
    mpz_add_ui(mpq_numref(v), mpq_numref(v), 5);
    mpz_ui_pow_ui(p, 10, (unsigned long)(j < 0 ? -j : j));
    mpz_set_ui(mpq_denref(v), 1);
    if (j < 0)
      mpz_set(mpq_denref(v), p);
    else
      mpz_mul(mpq_numref(v), mpq_numref(v), p);
    fp_check_pm(v, n < 200);
  }
  mpq_clear(v);
  mpz_clear(p);
  CU_ASSERT_EQUAL(fp_mismatches, 0);
}

/* Around every ladder threshold t (as rationals 10^k, 1/10^6, 60000): t,
 * t times 1 - 5/10^(s+1) (rounds up to t at s digits: the carry), and
 * those plus or minus 1/10^30. */
static void test_fast_thresholds(void)
{
  static const char *const ts[] = {
    "1", "1000", "1000000", "1000000000", "1000000000000",
    "1000000000000000", "1000000000000000000", "1/1000000", "1/1000",
    "1/1000000000", "60", "3600", "60000",
  };
  mpq_t v, t, x, e;
  mpq_inits(v, t, x, e, NULL);
  mpq_set_str(e, "1/1000000000000000000000000000000", 10);
  for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) {
    mpq_set_str(t, ts[i], 10);
    for (int s = 0; s <= 9; s++) {
      mpq_set(v, t);
      if (s > 0) { /* v = t * (1 - 5/10^(s+1)) */
        mpz_ui_pow_ui(mpq_denref(x), 10, (unsigned long)s + 1);
        mpz_sub_ui(mpq_numref(x), mpq_denref(x), 5);
        mpq_canonicalize(x);
        mpq_mul(v, t, x);
      }
      for (int k = -1; k <= 1; k++) {
        mpq_set(x, v);
        if (k < 0)
          mpq_sub(x, x, e);
        else if (k > 0)
          mpq_add(x, x, e);
        fp_check_pm(x, 1);
      }
    }
  }
  mpq_clears(v, t, x, e, NULL);
  CU_ASSERT_EQUAL(fp_mismatches, 0);
}

int main(void)
{
  static const plc_cu_test tests[] = {
    {"fixed places", test_fixed},
    {"significant digits", test_sig},
    {"decimal exponent edges", test_sig_exponent_edges},
    {"big and tiny numbers", test_big},
    {"exact rationals", test_exact},
    {"seed values", test_seed_values},
    {"unit choice", test_unit_choice},
    {"time unit choice", test_time_choice},
    {"zero and rounding carry", test_zero_and_carry},
    {"exact quantities", test_format_exact},
    {"format in a given unit", test_format_in},
    {"number and unit apart", test_format_split},
    {"fast path = GMP: edge values", test_fast_edges},
    {"fast path = GMP: random values", test_fast_random},
    {"fast path = GMP: rounding ties", test_fast_ties},
    {"fast path = GMP: unit thresholds", test_fast_thresholds},
    {NULL, NULL},
  };
  return plc_cu_run("format", tests);
}
