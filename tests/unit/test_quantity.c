/* test_quantity.c - CUnit tests of runtime/base/quantity.c: dimension algebra,
 * checked exact arithmetic, size limits and literal parsing.
 *
 * Values are compared through mpq_get_str of the raw numerator and
 * denominator, so every check of a value also checks canonical form
 * ("1/2", never "2/4"). */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cu_main.h"
#include "quantity.h"

/* The raw text of v, without canonicalizing; malloc'd. */
static char *qtext(const mpq_t v)
{
  size_t cap = mpz_sizeinbase(mpq_numref(v), 10)
             + mpz_sizeinbase(mpq_denref(v), 10) + 3;
  char *s = malloc(cap);
  if (s)
    mpq_get_str(s, 10, v);
  return s;
}

static void check_q_at(unsigned line, const plc_quantity *q, const char *want)
{
  char *s = qtext(q->v);
  plc_cu_str_eq(s, want, line, __FILE__);
  free(s);
}

#define CHECK_Q(q, want) check_q_at(__LINE__, (q), (want))

static plc_dim dim3(int b, int s, int f)
{
  plc_dim d = { { b, s, f } };
  return d;
}

/* Parse a literal that must be valid (used to build test inputs). */
static void num(plc_quantity *q, const char *text, plc_dim d)
{
  CU_ASSERT_EQUAL_FATAL(plc_q_parse_number(q, text, strlen(text)), PLC_Q_OK);
  q->dim = d;
}

/* ---- dimensions ---------------------------------------------------- */

static void test_dim_algebra(void)
{
  plc_dim r;
  CU_ASSERT(plc_dim_is_none(plc_dim_none()));
  CU_ASSERT(plc_dim_eq(plc_dim_base(PLC_DIM_SEC), dim3(0, 1, 0)));
  CU_ASSERT(!plc_dim_eq(plc_dim_base(PLC_DIM_SEC), dim3(1, 0, 0)));
  /* B/s * s = B */
  CU_ASSERT_EQUAL(plc_dim_mul(&r, dim3(1, -1, 0), dim3(0, 1, 0)), PLC_Q_OK);
  CU_ASSERT(plc_dim_eq(r, dim3(1, 0, 0)));
  /* B / (B/s) = s */
  CU_ASSERT_EQUAL(plc_dim_div(&r, dim3(1, 0, 0), dim3(1, -1, 0)), PLC_Q_OK);
  CU_ASSERT(plc_dim_eq(r, dim3(0, 1, 0)));
  /* FLOP / (FLOP/s) = s */
  CU_ASSERT_EQUAL(plc_dim_div(&r, dim3(0, 0, 1), dim3(0, -1, 1)), PLC_Q_OK);
  CU_ASSERT(plc_dim_eq(r, dim3(0, 1, 0)));
  /* (B/s)^-2 = s^2/B^2 */
  CU_ASSERT_EQUAL(plc_dim_pow(&r, dim3(1, -1, 0), -2), PLC_Q_OK);
  CU_ASSERT(plc_dim_eq(r, dim3(-2, 2, 0)));
  /* a dimensionless base takes any exponent */
  CU_ASSERT_EQUAL(plc_dim_pow(&r, plc_dim_none(), LONG_MAX), PLC_Q_OK);
  CU_ASSERT(plc_dim_is_none(r));
}

static void test_dim_limits(void)
{
  plc_dim r = dim3(7, 7, 7);
  /* B^64 * B leaves the bound; r must stay as it was */
  CU_ASSERT_EQUAL(plc_dim_mul(&r, dim3(64, 0, 0), dim3(1, 0, 0)),
                  PLC_Q_TOO_LARGE);
  CU_ASSERT(plc_dim_eq(r, dim3(7, 7, 7)));
  CU_ASSERT_EQUAL(plc_dim_div(&r, dim3(0, -64, 0), dim3(0, 1, 0)),
                  PLC_Q_TOO_LARGE);
  CU_ASSERT_EQUAL(plc_dim_mul(&r, dim3(64, 0, 0), dim3(0, 0, 0)), PLC_Q_OK);
  CU_ASSERT_EQUAL(plc_dim_pow(&r, dim3(0, 1, 0), 64), PLC_Q_OK);
  CU_ASSERT_EQUAL(plc_dim_pow(&r, dim3(0, 1, 0), 65), PLC_Q_TOO_LARGE);
  CU_ASSERT_EQUAL(plc_dim_pow(&r, dim3(2, 0, 0), 33), PLC_Q_TOO_LARGE);
  CU_ASSERT_EQUAL(plc_dim_pow(&r, dim3(0, 1, 0), LONG_MIN), PLC_Q_TOO_LARGE);
}

static void check_dim_str_at(unsigned line, plc_dim d, const char *want)
{
  char *s = plc_dim_str(d);
  plc_cu_str_eq(s, want, line, __FILE__);
  free(s);
}

#define check_dim_str(d, want) check_dim_str_at(__LINE__, (d), (want))

static void test_dim_str(void)
{
  check_dim_str(dim3(1, 0, 0), "B");
  check_dim_str(dim3(0, 1, 0), "s");
  check_dim_str(dim3(0, 0, 1), "FLOP");
  check_dim_str(dim3(1, -1, 0), "B/s");
  check_dim_str(dim3(0, -1, 1), "FLOP/s");
  check_dim_str(dim3(1, 0, 1), "B*FLOP");
  check_dim_str(dim3(2, 0, 0), "B^2");
  check_dim_str(dim3(0, -1, 0), "1/s");
  check_dim_str(dim3(0, 0, 0), "1");
  check_dim_str(dim3(2, -1, 0), "B^2/s");
  check_dim_str(dim3(-1, -1, 0), "1/(B*s)");
  check_dim_str(dim3(-1, 2, -3), "s^2/(B*FLOP^3)");
  check_dim_str(dim3(INT_MIN, 0, 0), "1/B^2147483648");
}

/* ---- construction and canonical form ------------------------------- */

static void test_set_canonical(void)
{
  plc_quantity q;
  plc_q_init(&q);
  CHECK_Q(&q, "0");
  CU_ASSERT(plc_dim_is_none(q.dim));
  plc_q_set_frac(&q, 2, 4, plc_dim_base(PLC_DIM_BYTE));
  CHECK_Q(&q, "1/2");
  CU_ASSERT(plc_dim_eq(q.dim, dim3(1, 0, 0)));
  plc_q_set_frac(&q, 3, -6, plc_dim_none());
  CHECK_Q(&q, "-1/2");
  plc_q_set_frac(&q, -10, -4, plc_dim_none());
  CHECK_Q(&q, "5/2");
  plc_q_set_frac(&q, 0, -7, plc_dim_none());
  CHECK_Q(&q, "0");
#if LONG_MAX == 9223372036854775807L
  /* LONG_MIN / -1 = 2^63: must not overflow in C */
  plc_q_set_frac(&q, LONG_MIN, -1, plc_dim_none());
  CHECK_Q(&q, "9223372036854775808");
#endif
  plc_q_set_si(&q, -42, plc_dim_base(PLC_DIM_SEC));
  CHECK_Q(&q, "-42");
  CU_ASSERT(plc_dim_eq(q.dim, dim3(0, 1, 0)));
  plc_q_clear(&q);
}

/* ---- arithmetic ---------------------------------------------------- */

static void test_add_sub(void)
{
  plc_quantity a, b, r;
  plc_q_init(&a), plc_q_init(&b), plc_q_init(&r);
  plc_q_set_frac(&a, 1, 3, plc_dim_base(PLC_DIM_BYTE));
  plc_q_set_frac(&b, 1, 6, plc_dim_base(PLC_DIM_BYTE));
  CU_ASSERT_EQUAL(plc_q_add(&r, &a, &b), PLC_Q_OK);
  CHECK_Q(&r, "1/2"); /* 2/6 + 1/6 = 3/6 */
  CU_ASSERT(plc_dim_eq(r.dim, dim3(1, 0, 0)));
  CU_ASSERT_EQUAL(plc_q_sub(&r, &b, &a), PLC_Q_OK);
  CHECK_Q(&r, "-1/6");
  /* r may alias an input: a = a + a */
  CU_ASSERT_EQUAL(plc_q_add(&a, &a, &a), PLC_Q_OK);
  CHECK_Q(&a, "2/3");
  /* 1/3 B - 1/3 B = exactly 0 */
  plc_q_set_frac(&a, 1, 3, plc_dim_base(PLC_DIM_BYTE));
  CU_ASSERT_EQUAL(plc_q_sub(&r, &a, &a), PLC_Q_OK);
  CHECK_Q(&r, "0");
  /* bytes + seconds: error, r unchanged */
  plc_q_set_si(&r, 7, plc_dim_none());
  plc_q_set_si(&b, 1, plc_dim_base(PLC_DIM_SEC));
  CU_ASSERT_EQUAL(plc_q_add(&r, &a, &b), PLC_Q_DIM_MISMATCH);
  CU_ASSERT_EQUAL(plc_q_sub(&r, &a, &b), PLC_Q_DIM_MISMATCH);
  CHECK_Q(&r, "7");
  CU_ASSERT(plc_dim_is_none(r.dim));
  plc_q_clear(&a), plc_q_clear(&b), plc_q_clear(&r);
}

static void test_mul_div(void)
{
  plc_quantity a, b, r;
  plc_q_init(&a), plc_q_init(&b), plc_q_init(&r);
  /* 360 GB/s * 1 ms = 360e9 / 1000 B = 360000000 B */
  num(&a, "360e9", dim3(1, -1, 0));
  plc_q_set_frac(&b, 1, 1000, dim3(0, 1, 0));
  CU_ASSERT_EQUAL(plc_q_mul(&r, &a, &b), PLC_Q_OK);
  CHECK_Q(&r, "360000000");
  CU_ASSERT(plc_dim_eq(r.dim, dim3(1, 0, 0)));
  /* 301989888 B / 360e9 B/s: 301989888 = 2^25 * 9, 360e9 = 2^12 * 9 * 5^10,
   * gcd 2^12 * 9 = 36864, so 8192/9765625 s (= 0.00083886080 s) */
  num(&b, "301989888", dim3(1, 0, 0));
  CU_ASSERT_EQUAL(plc_q_div(&r, &b, &a), PLC_Q_OK);
  CHECK_Q(&r, "8192/9765625");
  CU_ASSERT(plc_dim_eq(r.dim, dim3(0, 1, 0)));
  /* B / B is dimensionless */
  CU_ASSERT_EQUAL(plc_q_div(&r, &b, &b), PLC_Q_OK);
  CHECK_Q(&r, "1");
  CU_ASSERT(plc_dim_is_none(r.dim));
  /* -3/4 * 2/3 = -1/2 */
  plc_q_set_frac(&a, -3, 4, plc_dim_none());
  plc_q_set_frac(&b, 2, 3, plc_dim_none());
  CU_ASSERT_EQUAL(plc_q_mul(&a, &a, &b), PLC_Q_OK);
  CHECK_Q(&a, "-1/2");
  /* division by an exact zero: error, r unchanged */
  plc_q_set_si(&b, 0, dim3(0, 1, 0));
  CU_ASSERT_EQUAL(plc_q_div(&r, &a, &b), PLC_Q_DIV_ZERO);
  CHECK_Q(&r, "1");
  /* dimension exponents out of bound */
  plc_q_set_si(&a, 2, dim3(64, 0, 0));
  plc_q_set_si(&b, 2, dim3(1, 0, 0));
  CU_ASSERT_EQUAL(plc_q_mul(&r, &a, &b), PLC_Q_TOO_LARGE);
  plc_q_set_si(&b, 2, dim3(-1, 0, 0));
  CU_ASSERT_EQUAL(plc_q_div(&r, &a, &b), PLC_Q_TOO_LARGE);
  CHECK_Q(&r, "1");
  plc_q_clear(&a), plc_q_clear(&b), plc_q_clear(&r);
}

/* plc_q_rat_* against GMP's own mpq_add, mpq_sub, mpq_mul and mpq_div,
 * which are the reference: every pair of a set of edge values (0, +-1,
 * fractions, +-LONG_MAX, -2^63, 2^62, 2^63 and a 2-limb number, so that both
 * the machine-integer path and each overflow fallback are taken) must give
 * the same canonical rational, written the same way, also in place (r
 * aliasing a) and into a newly initialised rational; plc_q_rat_set copies
 * each result exactly. */
static void test_raw_rationals(void)
{
  static const char *const vals[] = {
      "0", "1", "-1", "3/7", "-5/4", "6/4", "9223372036854775807", "-9223372036854775807",
      "-9223372036854775808", "4611686018427387904", "9223372036854775808",
      "1/9223372036854775807", "3037000500/7", "340282366920938463463374607431768211457"};
  const size_t n = sizeof vals / sizeof vals[0];
  mpq_t a, b, want, got;
  mpq_inits(a, b, want, got, NULL);
  int bad = 0;
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < n; j++)
      for (int op = 0; op < 4; op++) {
        mpq_set_str(a, vals[i], 10);
        mpq_canonicalize(a);
        mpq_set_str(b, vals[j], 10);
        mpq_canonicalize(b);
        if (op == 3 && mpq_sgn(b) == 0)
          continue;
        switch (op) {
        case 0: mpq_add(want, a, b); plc_q_rat_add(got, a, b); break;
        case 1: mpq_sub(want, a, b); plc_q_rat_sub(got, a, b); break;
        case 2: mpq_mul(want, a, b); plc_q_rat_mul(got, a, b); break;
        default: mpq_div(want, a, b); plc_q_rat_div(got, a, b); break;
        }
        char *w = qtext(want), *g = qtext(got);
        bad += strcmp(w, g) != 0;
        free(g);
        switch (op) { /* in place */
        case 0: plc_q_rat_add(a, a, b); break;
        case 1: plc_q_rat_sub(a, a, b); break;
        case 2: plc_q_rat_mul(a, a, b); break;
        default: plc_q_rat_div(a, a, b); break;
        }
        g = qtext(a);
        bad += strcmp(w, g) != 0;
        free(g);
        mpq_set_str(a, vals[i], 10); /* into a new rational: a numerator with no limb yet */
        mpq_canonicalize(a);
        mpq_t fresh;
        mpq_init(fresh);
        switch (op) {
        case 0: plc_q_rat_add(fresh, a, b); break;
        case 1: plc_q_rat_sub(fresh, a, b); break;
        case 2: plc_q_rat_mul(fresh, a, b); break;
        default: plc_q_rat_div(fresh, a, b); break;
        }
        g = qtext(fresh);
        bad += strcmp(w, g) != 0;
        free(g);
        plc_q_rat_set(fresh, want); /* copied over a value, and into a new rational */
        g = qtext(fresh);
        bad += strcmp(w, g) != 0;
        free(g);
        mpq_clear(fresh);
        mpq_init(fresh);
        plc_q_rat_set(fresh, want);
        g = qtext(fresh);
        bad += strcmp(w, g) != 0;
        free(g);
        mpq_clear(fresh);
        free(w);
      }
  CU_ASSERT_EQUAL(bad, 0);
  mpq_clears(a, b, want, got, NULL);
}

/* plc_q_rat_equal against mpq_equal, the reference, on every pair of a
 * set of edge values (zero, a sign apart, the same numerator over another
 * denominator, one-limb values beyond a long, a two-limb value whose low
 * limb is a small one's) and on a zero fresh from mpq_init; and the inline
 * dimension tests on each exponent. */
static void test_rat_equal(void)
{
  static const char *const vals[] = {
      "0", "1", "-1", "3/7", "-3/7", "3/5", "5/7", "9223372036854775807",
      "-9223372036854775808", "18446744073709551615", "-18446744073709551615",
      "1/18446744073709551615", "18446744073709551617", "1/18446744073709551617",
      "5", "18446744073709551621", "5/18446744073709551617"};
  const size_t n = sizeof vals / sizeof vals[0];
  mpq_t a, b, z;
  mpq_inits(a, b, NULL);
  int bad = 0, equal = 0;
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < n; j++) {
      mpq_set_str(a, vals[i], 10);
      mpq_canonicalize(a);
      mpq_set_str(b, vals[j], 10);
      mpq_canonicalize(b);
      bad += plc_q_rat_equal(a, b) != mpq_equal(a, b);
      equal += plc_q_rat_equal(a, b);
      mpq_init(z);
      bad += plc_q_rat_equal(z, b) != mpq_equal(z, b) || plc_q_rat_equal(b, z) != mpq_equal(b, z);
      mpq_clear(z);
    }
  CU_ASSERT_EQUAL(bad, 0);
  CU_ASSERT_EQUAL(equal, (int)n); /* each value equals itself only */
  mpq_clears(a, b, NULL);
  for (int k = 0; k < PLC_NDIM; k++) {
    plc_dim d = plc_dim_none();
    CU_ASSERT(plc_dim_is_none(d) && plc_dim_eq(d, plc_dim_none()));
    d.e[k] = -1;
    CU_ASSERT(!plc_dim_is_none(d) && !plc_dim_eq(d, plc_dim_none()) && plc_dim_eq(d, d));
  }
}

/* plc_q_floor and plc_q_ceil (on longs when they fit) against GMP's
 * mpz_fdiv_q and mpz_cdiv_q, on the edge values of test_raw_rationals and
 * their negations, also in place. */
static void test_floor_ceil(void)
{
  static const char *const vals[] = {
      "0", "1", "-1", "3/7", "-5/4", "7/2", "-7/2", "9223372036854775807",
      "-9223372036854775807", "-9223372036854775808", "9223372036854775808",
      "1/9223372036854775807", "-9223372036854775807/2", "340282366920938463463374607431768211457/3"};
  plc_quantity a, r;
  plc_q_init(&a), plc_q_init(&r);
  mpq_t want;
  mpq_init(want);
  int bad = 0;
  for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++)
    for (int up = 0; up < 2; up++) {
      mpq_set_str(a.v, vals[i], 10);
      mpq_canonicalize(a.v);
      a.dim = dim3(0, 1, 0);
      (up ? mpz_cdiv_q : mpz_fdiv_q)(mpq_numref(want), mpq_numref(a.v), mpq_denref(a.v));
      mpz_set_ui(mpq_denref(want), 1);
      (up ? plc_q_ceil : plc_q_floor)(&r, &a);
      bad += !mpq_equal(r.v, want) || !plc_dim_eq(r.dim, dim3(0, 1, 0));
      (up ? plc_q_ceil : plc_q_floor)(&a, &a);
      bad += !mpq_equal(a.v, want);
    }
  CU_ASSERT_EQUAL(bad, 0);
  mpq_clear(want);
  plc_q_clear(&a), plc_q_clear(&r);
}

static void test_neg_abs(void)
{
  plc_quantity a, r;
  plc_q_init(&a), plc_q_init(&r);
  plc_q_set_frac(&a, 5, 3, dim3(0, 1, 0));
  plc_q_neg(&r, &a);
  CHECK_Q(&r, "-5/3");
  CU_ASSERT(plc_dim_eq(r.dim, dim3(0, 1, 0)));
  plc_q_abs(&r, &r);
  CHECK_Q(&r, "5/3");
  CU_ASSERT(plc_dim_eq(r.dim, dim3(0, 1, 0)));
  plc_q_clear(&a), plc_q_clear(&r);
}

static void test_pow(void)
{
  plc_quantity a, r;
  plc_q_init(&a), plc_q_init(&r);
  plc_q_set_frac(&a, 2, 3, plc_dim_none());
  CU_ASSERT_EQUAL(plc_q_pow(&r, &a, 3), PLC_Q_OK);
  CHECK_Q(&r, "8/27");
  CU_ASSERT_EQUAL(plc_q_pow(&r, &a, -2), PLC_Q_OK);
  CHECK_Q(&r, "9/4");
  CU_ASSERT_EQUAL(plc_q_pow(&r, &a, 0), PLC_Q_OK);
  CHECK_Q(&r, "1");
  /* (-1/2)^-3 = 1 / (-1/8) = -8: the sign must move to the numerator */
  plc_q_set_frac(&a, -1, 2, plc_dim_none());
  CU_ASSERT_EQUAL(plc_q_pow(&a, &a, -3), PLC_Q_OK);
  CHECK_Q(&a, "-8");
  /* (3 B/s)^2 = 9 B^2/s^2; (2 s)^-1 = 1/2 1/s */
  plc_q_set_si(&a, 3, dim3(1, -1, 0));
  CU_ASSERT_EQUAL(plc_q_pow(&r, &a, 2), PLC_Q_OK);
  CHECK_Q(&r, "9");
  CU_ASSERT(plc_dim_eq(r.dim, dim3(2, -2, 0)));
  plc_q_set_si(&a, 2, dim3(0, 1, 0));
  CU_ASSERT_EQUAL(plc_q_pow(&r, &a, -1), PLC_Q_OK);
  CHECK_Q(&r, "1/2");
  CU_ASSERT(plc_dim_eq(r.dim, dim3(0, -1, 0)));
  /* zero: 0^0 = 1, 0^5 = 0, 0^-1 an error with r unchanged */
  plc_q_set_si(&a, 0, plc_dim_none());
  CU_ASSERT_EQUAL(plc_q_pow(&r, &a, 0), PLC_Q_OK);
  CHECK_Q(&r, "1");
  CU_ASSERT_EQUAL(plc_q_pow(&r, &a, 5), PLC_Q_OK);
  CHECK_Q(&r, "0");
  CU_ASSERT_EQUAL(plc_q_pow(&r, &a, -1), PLC_Q_DIV_ZERO);
  CHECK_Q(&r, "0");
  plc_q_clear(&a), plc_q_clear(&r);
}

static void test_pow_limits(void)
{
  plc_quantity a, r;
  plc_q_init(&a), plc_q_init(&r);
  plc_q_set_si(&r, 7, plc_dim_none());
  plc_q_set_si(&a, 2, plc_dim_none());
  /* bits(2) = 2, 2 * 4096 = 8192 <= 65536: allowed; 2^4096 has 4097 bits */
  CU_ASSERT_EQUAL(plc_q_pow(&r, &a, PLC_Q_MAX_POW), PLC_Q_OK);
  CU_ASSERT_EQUAL(mpz_sizeinbase(mpq_numref(r.v), 2), 4097);
  CU_ASSERT_EQUAL(plc_q_pow(&r, &a, -PLC_Q_MAX_POW), PLC_Q_OK);
  CU_ASSERT_EQUAL(mpz_sizeinbase(mpq_denref(r.v), 2), 4097);
  plc_q_set_si(&r, 7, plc_dim_none());
  CU_ASSERT_EQUAL(plc_q_pow(&r, &a, PLC_Q_MAX_POW + 1), PLC_Q_TOO_LARGE);
  CU_ASSERT_EQUAL(plc_q_pow(&r, &a, LONG_MAX), PLC_Q_TOO_LARGE);
  CU_ASSERT_EQUAL(plc_q_pow(&r, &a, LONG_MIN), PLC_Q_TOO_LARGE);
  CHECK_Q(&r, "7");
  /* predicted size: 65535 has 16 bits, 16 * 4096 = 65536 is within the
   * limit; 65537 has 17 bits, 17 * 4096 = 69632 is not */
  plc_q_set_si(&a, 65535, plc_dim_none());
  CU_ASSERT_EQUAL(plc_q_pow(&r, &a, 4096), PLC_Q_OK);
  plc_q_set_frac(&a, 1, 65537, plc_dim_none());
  CU_ASSERT_EQUAL(plc_q_pow(&r, &a, 4096), PLC_Q_TOO_LARGE);
  CU_ASSERT_EQUAL(plc_q_pow(&r, &a, -4096), PLC_Q_TOO_LARGE);
  /* The check is a prediction made before computing: 65537^3856 would
   * really have only 61697 bits (log2 65537 = 16.00002), but 17 * 3856 =
   * 65552 > 65536 rejects it without GMP ever allocating it. */
  CU_ASSERT_EQUAL(plc_q_pow(&r, &a, -3856), PLC_Q_TOO_LARGE);
  CU_ASSERT_EQUAL(plc_q_pow(&r, &a, 3855), PLC_Q_OK); /* 17 * 3855 = 65535 */
  CU_ASSERT_EQUAL(mpz_sizeinbase(mpq_denref(r.v), 2), 61681);
  /* a dimension exponent would leave the bound: s^65 */
  plc_q_set_si(&a, 1, dim3(0, 1, 0));
  CU_ASSERT_EQUAL(plc_q_pow(&r, &a, 65), PLC_Q_TOO_LARGE);
  plc_q_clear(&a), plc_q_clear(&r);
}

/* Size limits at their exact boundary: 2^k has k + 1 bits, so 2^65535 is
 * the largest power of two allowed (65536 bits) and 2^65536 is too large. */
static void test_size_limits(void)
{
  plc_quantity a, b, r;
  plc_q_init(&a), plc_q_init(&b), plc_q_init(&r);
  plc_q_set_si(&a, 2, plc_dim_none());
  CU_ASSERT_EQUAL_FATAL(plc_q_pow(&b, &a, 4096), PLC_Q_OK);     /* 2^4096 */
  CU_ASSERT_EQUAL_FATAL(plc_q_pow(&a, &b, 8), PLC_Q_OK);        /* 2^32768 */
  /* 2^32768 * 2^32768 = 2^65536: too large, r unchanged */
  plc_q_set_si(&r, 7, plc_dim_none());
  CU_ASSERT_EQUAL(plc_q_mul(&r, &a, &a), PLC_Q_TOO_LARGE);
  CHECK_Q(&r, "7");
  /* 2^32768 * 2^32767 = 2^65535: allowed */
  plc_q_set_frac(&b, 1, 2, plc_dim_none());
  CU_ASSERT_EQUAL_FATAL(plc_q_mul(&b, &a, &b), PLC_Q_OK);       /* 2^32767 */
  CU_ASSERT_EQUAL_FATAL(plc_q_mul(&r, &a, &b), PLC_Q_OK);       /* 2^65535 */
  CU_ASSERT_EQUAL(mpz_sizeinbase(mpq_numref(r.v), 2), 65536);
  CU_ASSERT_EQUAL(plc_q_check_size(&r), PLC_Q_OK);
  /* 2^65535 + 2^65535 = 2^65536 */
  CU_ASSERT_EQUAL(plc_q_add(&a, &r, &r), PLC_Q_TOO_LARGE);
  /* 1 / 2^65535 / 2: the denominator is limited too */
  plc_q_set_si(&b, 1, plc_dim_none());
  CU_ASSERT_EQUAL_FATAL(plc_q_div(&a, &b, &r), PLC_Q_OK);
  plc_q_set_si(&b, 2, plc_dim_none());
  CU_ASSERT_EQUAL(plc_q_div(&a, &a, &b), PLC_Q_TOO_LARGE);
  /* a value grown outside the checked operations is caught by check_size */
  mpq_mul(r.v, r.v, r.v);
  CU_ASSERT_EQUAL(plc_q_check_size(&r), PLC_Q_TOO_LARGE);
  plc_q_clear(&a), plc_q_clear(&b), plc_q_clear(&r);
}

static void test_cmp_sgn(void)
{
  plc_quantity a, b;
  int c = 99;
  plc_q_init(&a), plc_q_init(&b);
  plc_q_set_frac(&a, 1, 3, dim3(0, 1, 0));
  num(&b, "0.34", dim3(0, 1, 0));
  CU_ASSERT_EQUAL(plc_q_cmp(&c, &a, &b), PLC_Q_OK);
  CU_ASSERT_EQUAL(c, -1); /* 1/3 = 0.333... < 0.34 */
  CU_ASSERT_EQUAL(plc_q_cmp(&c, &b, &a), PLC_Q_OK);
  CU_ASSERT_EQUAL(c, 1);
  CU_ASSERT_EQUAL(plc_q_cmp(&c, &a, &a), PLC_Q_OK);
  CU_ASSERT_EQUAL(c, 0);
  /* seconds against bytes: error, c untouched */
  c = 99;
  b.dim = dim3(1, 0, 0);
  CU_ASSERT_EQUAL(plc_q_cmp(&c, &a, &b), PLC_Q_DIM_MISMATCH);
  CU_ASSERT_EQUAL(c, 99);
  CU_ASSERT_EQUAL(plc_q_sgn(&a), 1);
  plc_q_neg(&a, &a);
  CU_ASSERT_EQUAL(plc_q_sgn(&a), -1);
  plc_q_set_si(&a, 0, plc_dim_none());
  CU_ASSERT_EQUAL(plc_q_sgn(&a), 0);
  plc_q_clear(&a), plc_q_clear(&b);
}

static void test_integer_parts(void)
{
  plc_quantity a, r;
  long n = 12345;
  plc_q_init(&a), plc_q_init(&r);
  plc_q_set_frac(&a, -7, 2, dim3(1, 0, 0));
  CU_ASSERT(!plc_q_is_integer(&a));
  CU_ASSERT(!plc_q_get_long(&a, LONG_MIN, LONG_MAX, &n));
  CU_ASSERT_EQUAL(n, 12345);
  plc_q_floor(&r, &a);
  CHECK_Q(&r, "-4"); /* floor(-3.5) */
  CU_ASSERT(plc_dim_eq(r.dim, dim3(1, 0, 0)));
  plc_q_ceil(&r, &a);
  CHECK_Q(&r, "-3");
  plc_q_neg(&a, &a);
  plc_q_floor(&r, &a);
  CHECK_Q(&r, "3");
  plc_q_ceil(&a, &a); /* aliasing */
  CHECK_Q(&a, "4");
  CU_ASSERT(plc_q_is_integer(&a));
  CU_ASSERT(plc_q_get_long(&a, 1, 8, &n));
  CU_ASSERT_EQUAL(n, 4);
  n = 12345;
  CU_ASSERT(!plc_q_get_long(&a, 5, 8, &n));  /* below range */
  CU_ASSERT(!plc_q_get_long(&a, 1, 3, &n));  /* above range */
  CU_ASSERT_EQUAL(n, 12345);
  num(&a, "1e30", plc_dim_none());         /* does not fit a long */
  CU_ASSERT(!plc_q_get_long(&a, LONG_MIN, LONG_MAX, &n));
  num(&a, "-1e30", plc_dim_none());
  CU_ASSERT(!plc_q_get_long(&a, LONG_MIN, LONG_MAX, &n));
  CU_ASSERT_EQUAL(n, 12345);
  plc_q_clear(&a), plc_q_clear(&r);
}

/* ---- literals ------------------------------------------------------ */

/* Parse text; on success the value must be `want` (NULL: success is a
 * failure) and dimensionless; on error q must be untouched. */
static plc_q_status parse_is_at(unsigned line, const char *text,
                                const char *want)
{
  plc_quantity q;
  plc_q_init(&q);
  plc_q_set_si(&q, 7, dim3(1, 0, 0));
  plc_q_status st = plc_q_parse_number(&q, text, strlen(text));
  if (st == PLC_Q_OK && !want) {
    plc_cu_str_eq(text, "(a literal that is rejected)", line, __FILE__);
  } else if (st == PLC_Q_OK) {
    check_q_at(line, &q, want);
    CU_ASSERT(plc_dim_is_none(q.dim));
  } else {
    check_q_at(line, &q, "7"); /* untouched on error */
  }
  plc_q_clear(&q);
  return st;
}

#define parse_is(text, want) parse_is_at(__LINE__, (text), (want))

static void test_parse_valid(void)
{
  CU_ASSERT_EQUAL(parse_is("3.35", "67/20"), PLC_Q_OK);   /* 335/100 */
  CU_ASSERT_EQUAL(parse_is("2.6e10", "26000000000"), PLC_Q_OK);
  CU_ASSERT_EQUAL(parse_is(".5", "1/2"), PLC_Q_OK);
  CU_ASSERT_EQUAL(parse_is("5.", "5"), PLC_Q_OK);
  CU_ASSERT_EQUAL(parse_is("1_000", "1000"), PLC_Q_OK);
  CU_ASSERT_EQUAL(parse_is("1_000.000_1", "10000001/10000"), PLC_Q_OK);
  CU_ASSERT_EQUAL(parse_is("1e-3", "1/1000"), PLC_Q_OK);
  CU_ASSERT_EQUAL(parse_is("1E+3", "1000"), PLC_Q_OK);
  CU_ASSERT_EQUAL(parse_is("2.5e-1", "1/4"), PLC_Q_OK);   /* 25/100 */
  CU_ASSERT_EQUAL(parse_is("1.5e1_0", "15000000000"), PLC_Q_OK);
  CU_ASSERT_EQUAL(parse_is("0.000", "0"), PLC_Q_OK);
  CU_ASSERT_EQUAL(parse_is("007", "7"), PLC_Q_OK);
  CU_ASSERT_EQUAL(parse_is("-0.75", "-3/4"), PLC_Q_OK);
  CU_ASSERT_EQUAL(parse_is("+8", "8"), PLC_Q_OK);
  CU_ASSERT_EQUAL(parse_is("400e-3", "2/5"), PLC_Q_OK);
  /* 0.1 is exactly 1/10, not a binary fraction near it */
  CU_ASSERT_EQUAL(parse_is("0.1", "1/10"), PLC_Q_OK);
}

static void test_parse_length(void)
{
  plc_quantity q;
  plc_q_init(&q);
  /* only len bytes are read: "3.35" out of "3.35 TB/s" */
  CU_ASSERT_EQUAL(plc_q_parse_number(&q, "3.35 TB/s", 4), PLC_Q_OK);
  CHECK_Q(&q, "67/20");
  CU_ASSERT_EQUAL(plc_q_parse_number(&q, "12345", 2), PLC_Q_OK);
  CHECK_Q(&q, "12");
  CU_ASSERT_EQUAL(plc_q_parse_number(&q, "1e", 1), PLC_Q_OK);
  CHECK_Q(&q, "1");
  CU_ASSERT_EQUAL(plc_q_parse_number(&q, "5", 0), PLC_Q_SYNTAX);
  /* an embedded NUL is not a digit */
  CU_ASSERT_EQUAL(plc_q_parse_number(&q, "1\0002", 3), PLC_Q_SYNTAX);
  plc_q_clear(&q);
}

static void test_parse_syntax(void)
{
  static const char *const bad[] = {
    "", "1e", "1e+", "1E-", "e5", ".", "-", "+", "--1", "1__0", "_1", "1_",
    "1._5", "1_.5", "1.2.3", "1e5x", "0x10", "1 ", " 1", "1e1.5", "1e_5",
    "1e5_", "1,5", "1.5.", "\xC2\xB5",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    PLC_CU_ASSERT_MSG(parse_is(bad[i], NULL) == PLC_Q_SYNTAX, bad[i]);
}

/* "1" followed by n zeros; malloc'd. */
static char *ones_zeros(size_t n)
{
  char *s = malloc(n + 2);
  s[0] = '1';
  memset(s + 1, '0', n);
  s[n + 1] = '\0';
  return s;
}

static void test_parse_limits(void)
{
  CU_ASSERT_EQUAL(parse_is("1e999999999", NULL), PLC_Q_TOO_LARGE);
  CU_ASSERT_EQUAL(parse_is("1e99999999999999999999999", NULL), PLC_Q_TOO_LARGE);
  CU_ASSERT_EQUAL(parse_is("1e-99999999999999999999999", NULL),
                  PLC_Q_TOO_LARGE);
  CU_ASSERT_EQUAL(parse_is("1e1001", NULL), PLC_Q_TOO_LARGE);
  CU_ASSERT_EQUAL(parse_is("1e-1001", NULL), PLC_Q_TOO_LARGE);
  /* syntax is judged before size */
  CU_ASSERT_EQUAL(parse_is("1e999999999x", NULL), PLC_Q_SYNTAX);
  /* 10^1000 (3322 bits) and 10^-1000 are within the limits */
  char *s = ones_zeros(1000);
  CU_ASSERT_EQUAL(parse_is("1e1000", s), PLC_Q_OK);
  char *inv = malloc(strlen(s) + 3);
  strcpy(inv, "1/");
  strcat(inv, s);
  CU_ASSERT_EQUAL(parse_is("1e-1000", inv), PLC_Q_OK);
  free(inv);
  free(s);
  /* 4096 digits is the most a literal may have */
  s = ones_zeros(PLC_Q_MAX_DIGITS - 1);
  CU_ASSERT_EQUAL(parse_is(s, s), PLC_Q_OK);
  free(s);
  s = ones_zeros(PLC_Q_MAX_DIGITS);
  CU_ASSERT_EQUAL(parse_is(s, NULL), PLC_Q_TOO_LARGE);
  free(s);
  s = ones_zeros(4999); /* 5000 digits */
  CU_ASSERT_EQUAL(parse_is(s, NULL), PLC_Q_TOO_LARGE);
  s[2500] = '.'; /* digits on both sides of the point all count */
  CU_ASSERT_EQUAL(parse_is(s, NULL), PLC_Q_TOO_LARGE);
  free(s);
}

static void test_status_str(void)
{
  CU_ASSERT_STRING_EQUAL(plc_q_status_str(PLC_Q_OK), "ok");
  CU_ASSERT_STRING_EQUAL(plc_q_status_str(PLC_Q_DIM_MISMATCH),
                         "dimension mismatch");
  CU_ASSERT_STRING_EQUAL(plc_q_status_str(PLC_Q_DIV_ZERO), "division by zero");
  CU_ASSERT_STRING_EQUAL(plc_q_status_str(PLC_Q_TOO_LARGE), "number too large");
  CU_ASSERT_STRING_EQUAL(plc_q_status_str(PLC_Q_BAD_POWER), "invalid exponent");
  CU_ASSERT_STRING_EQUAL(plc_q_status_str(PLC_Q_SYNTAX), "malformed number");
}

/* The literal reader's machine-integer path (mantissas up to 18 digits,
 * scaled by up to 10^+-18) against the GMP one (plc_q_gmp_only): the same
 * status, and the same value whenever it is read, over edge and random
 * literals of every form. */
static unsigned long long lit_state = 0x243f6a8885a308d3ULL;

static unsigned long long lit_rand(void) /* xorshift64*: the same every run */
{
  lit_state ^= lit_state >> 12;
  lit_state ^= lit_state << 25;
  lit_state ^= lit_state >> 27;
  return lit_state * 0x2545f4914f6cdd1dULL;
}

static int lit_mismatches;

static void lit_both(const char *text)
{
  plc_quantity a, b;
  plc_q_init(&a);
  plc_q_init(&b);
  plc_q_gmp_only = 0;
  plc_q_status sa = plc_q_parse_number(&a, text, strlen(text));
  plc_q_gmp_only = 1;
  plc_q_status sb = plc_q_parse_number(&b, text, strlen(text));
  plc_q_gmp_only = 0;
  int same = sa == sb && (sa != PLC_Q_OK || (mpq_equal(a.v, b.v) &&
                                             plc_dim_eq(a.dim, b.dim) &&
                                             mpz_cmp_ui(mpq_denref(a.v), 0) > 0));
  if (same && sa == PLC_Q_OK) { /* canonical, as GMP leaves it */
    mpq_t c;
    mpq_init(c);
    mpq_set(c, a.v);
    mpq_canonicalize(c);
    same = mpz_cmp(mpq_numref(c), mpq_numref(a.v)) == 0 &&
           mpz_cmp(mpq_denref(c), mpq_denref(a.v)) == 0;
    mpq_clear(c);
  }
  if (!same && lit_mismatches++ < 5) {
    char msg[200];
    snprintf(msg, sizeof msg, "literal \"%.100s\": fast and GMP differ", text);
    PLC_CU_ASSERT_MSG(0, msg);
  }
  plc_q_clear(&a);
  plc_q_clear(&b);
}

static void test_parse_fast(void)
{
  static const char *const edges[] = {
    "0", "0.0", "-0", "1", "-1", ".5", "5.", "0.000000000000000001",
    "999999999999999999", "9999999999999999999", "999999999999999999e0",
    "9223372036854775807", "9223372036854775808", "922337203685477580.7e1",
    "9.223372036854775807e18", "9.223372036854775808e18", "1e18", "1e19",
    "1e-18", "1e-19", "123456789012345678e-18", "1234567890123456789e-18",
    "99999999999999999e2", "9.99e18", "9.2e18", "10e17", "1_000_000",
    "3.35", "2.6e10", "1E+3", "-1e-3", "0.1e-17", "0e18", "00000000000000000001",
    "000000000000000000001", "1.5e-18", "25e-2", "125e-3", "1e", "1__0", ".",
    /* huge and tiny: GMP's alone */
    "100000000000000000000000000000000000000000000000000", "1e999", "-1e-999", "1e1001",
    "123456789012345678901234567890e-300", "0.000000000000000000000000000001",
  };
  for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++)
    lit_both(edges[i]);
  char buf[80];
  for (int n = 0; n < 20000; n++) {
    char *o = buf;
    if (lit_rand() % 4 == 0)
      *o++ = '-';
    int nd = 1 + (int)(lit_rand() % 22), point = (int)(lit_rand() % (nd + 2)) - 1;
    for (int k = 0; k < nd; k++) {
      if (k == point)
        *o++ = '.';
      *o++ = (char)('0' + (k == 0 && lit_rand() % 2 ? 9 : lit_rand() % 10));
    }
    if (lit_rand() % 2)
      o += sprintf(o, "e%d", (int)(lit_rand() % 51) - 25);
    *o = '\0';
    lit_both(buf);
  }
  CU_ASSERT_EQUAL(lit_mismatches, 0);
}

/* plc_q_wide_arith (sums, differences, products and quotients on 128-bit
 * integers when longs overflow) against GMP's mpq_add, mpq_sub, mpq_mul
 * and mpq_div: 20000 random pairs of rationals whose numerators and
 * denominators are random up to 63 bits long (so that both reduce, and
 * most products overflow a long), with zeros, ones and shared
 * denominators among them; each result the same canonical rational, in
 * place too.  Most pairs take the 128-bit path (counted). */
static long wide_bits(int bits)
{
  unsigned long long x = lit_rand() >> (64 - bits);
  return (long)(x ? x : 1);
}

static void wide_rand(mpq_t q, long shared_den)
{
  unsigned k = (unsigned)(lit_rand() % 16);
  long n = k == 0 ? 0 : k == 1 ? 1 : wide_bits(1 + (int)(lit_rand() % 63));
  long d = k < 3 ? 1 : k < 6 ? shared_den : wide_bits(1 + (int)(lit_rand() % 63));
  if (lit_rand() % 2)
    n = -n;
  mpq_set_si(q, n, (unsigned long)d);
  mpq_canonicalize(q);
}

static void test_wide_rationals(void)
{
  mpq_t a, b, want, got;
  mpq_inits(a, b, want, got, NULL);
  int bad = 0, wide = 0;
  for (int it = 0; it < 20000; it++) {
    long shared = wide_bits(1 + (int)(lit_rand() % 63));
    wide_rand(a, shared);
    wide_rand(b, shared);
    int op = it % 4;
    if (op == 3 && mpq_sgn(b) == 0)
      continue;
    static const char ops[] = "+-*/";
    mpq_set_ui(got, 7, 3);
    wide += !plc_q_small_arith(got, ops[op], a, b) && plc_q_wide_arith(got, ops[op], a, b);
    switch (op) {
    case 0: mpq_add(want, a, b); plc_q_rat_add(got, a, b); break;
    case 1: mpq_sub(want, a, b); plc_q_rat_sub(got, a, b); break;
    case 2: mpq_mul(want, a, b); plc_q_rat_mul(got, a, b); break;
    default: mpq_div(want, a, b); plc_q_rat_div(got, a, b); break;
    }
    bad += !mpq_equal(want, got) || mpz_cmp_ui(mpq_denref(got), 0) <= 0;
    switch (op) { /* in place: r is b */
    case 0: plc_q_rat_add(b, a, b); break;
    case 1: plc_q_rat_sub(b, a, b); break;
    case 2: plc_q_rat_mul(b, a, b); break;
    default: plc_q_rat_div(b, a, b); break;
    }
    char *w = qtext(want), *g = qtext(b);
    bad += strcmp(w, g) != 0;
    free(w);
    free(g);
  }
  CU_ASSERT_EQUAL(bad, 0);
  CU_ASSERT(wide > 5000);
  mpq_clears(a, b, want, got, NULL);
}

int main(void)
{
  static const plc_cu_test tests[] = {
    {"dimension algebra", test_dim_algebra},
    {"dimension limits", test_dim_limits},
    {"dimension names", test_dim_str},
    {"construction is canonical", test_set_canonical},
    {"add and sub", test_add_sub},
    {"mul and div", test_mul_div},
    {"raw rationals on machine integers", test_raw_rationals},
    {"raw rationals: equal = mpq_equal", test_rat_equal},
    {"raw rationals on 128-bit integers against GMP", test_wide_rationals},
    {"neg and abs", test_neg_abs},
    {"pow", test_pow},
    {"pow limits", test_pow_limits},
    {"size limits", test_size_limits},
    {"cmp and sgn", test_cmp_sgn},
    {"integer parts", test_integer_parts},
    {"literals: valid", test_parse_valid},
    {"literals: length", test_parse_length},
    {"literals: syntax errors", test_parse_syntax},
    {"literals: limits", test_parse_limits},
    {"literals: fast path = GMP", test_parse_fast},
    {"status strings", test_status_str},
    {"floor and ceil against GMP", test_floor_ceil},
    {NULL, NULL},
  };
  return plc_cu_run("quantity", tests);
}
