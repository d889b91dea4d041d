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
    {NULL, NULL},
  };
  return plc_cu_run("format", tests);
}
