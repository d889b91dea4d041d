/* quantity.c - exact quantities: dimension algebra, checked rational
 * arithmetic, limits and literal parsing.
 *
 * Every operation that can make numbers grow computes into a temporary,
 * checks its size against PLC_Q_MAX_BITS and only then moves it into the
 * result, so a failed operation leaves the result untouched.  With inputs
 * inside the limit a temporary is at most about twice the limit; pow and
 * literals, which could ask for far more, are checked before computing. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "quantity.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

const char *plc_q_status_str(plc_q_status s)
{
  switch (s) {
  case PLC_Q_OK: return "ok";
  case PLC_Q_DIM_MISMATCH: return "dimension mismatch";
  case PLC_Q_DIV_ZERO: return "division by zero";
  case PLC_Q_TOO_LARGE: return "number too large";
  case PLC_Q_BAD_POWER: return "invalid exponent";
  case PLC_Q_SYNTAX: return "malformed number";
  }
  return "unknown error";
}

/* ---- dimensions ---------------------------------------------------- */

plc_dim plc_dim_base(int which)
{
  plc_dim d = plc_dim_none();
  if (which >= 0 && which < PLC_NDIM)
    d.e[which] = 1;
  return d;
}

/* ---- rationals on 128-bit integers (quantity.h, plc_q_wide_arith) ---- */

#if PLC_Q_LIMB_LONG && defined(__SIZEOF_INT128__)
typedef unsigned __int128 plc_u128;

/* z = -x when neg, else x (x < 2^127): in one or two limbs, as GMP writes
 * it (no high zero limb). */
static void plc_q_wide_put(mpz_ptr z, int neg, plc_u128 x)
{
  mp_limb_t lo = (mp_limb_t)x, hi = (mp_limb_t)(x >> 64);
  int size = hi ? 2 : lo ? 1 : 0;
  mp_limb_t *d = mpz_limbs_write(z, size ? size : 1);
  d[0] = lo;
  if (size == 2)
    d[1] = hi;
  mpz_limbs_finish(z, neg ? -size : size);
}

int plc_q_wide_arith(mpq_ptr q, int op, mpq_srcptr a, mpq_srcptr b)
{
  long an, ad, bn, bd;
  if (!plc_q_small_get(mpq_numref(a), &an) || !plc_q_small_get(mpq_denref(a), &ad) ||
      !plc_q_small_get(mpq_numref(b), &bn) || !plc_q_small_get(mpq_denref(b), &bd))
    return 0;
  /* |an|, |bn| <= LONG_MAX and 0 < ad, bd <= LONG_MAX: every product of
   * two is below 2^126, a sum of two below 2^127 */
  __int128 n;
  plc_u128 m;
  if (op == '+' || op == '-') {
    if (op == '-')
      bn = -bn;
    unsigned long g = plc_q_small_gcd((unsigned long)ad, (unsigned long)bd);
    if (g == 1) { /* the sum over the product is in lowest terms */
      n = (__int128)an * bd + (__int128)bn * ad;
      m = (plc_u128)ad * (unsigned long)bd;
    } else { /* only a factor of g can divide the sum and the denominator */
      __int128 t = (__int128)an * (long)((unsigned long)bd / g) +
                   (__int128)bn * (long)((unsigned long)ad / g);
      plc_u128 tm = t < 0 ? -(plc_u128)t : (plc_u128)t;
      unsigned long g2 = plc_q_small_gcd((unsigned long)(tm % g), g);
      n = t < 0 ? -(__int128)(tm / g2) : (__int128)(tm / g2);
      m = (plc_u128)((unsigned long)ad / g) * ((unsigned long)bd / g2);
    }
  } else if (op == '*' || op == '/') {
    if (op == '/') { /* a * (bd / bn), the sign on the numerator */
      if (bn == 0)
        return 0;
      long t = bn < 0 ? -bd : bd;
      bd = bn < 0 ? -bn : bn;
      bn = t;
    }
    /* the cross pairs' gcds leave a product in lowest terms */
    unsigned long g1 = plc_q_small_gcd((unsigned long)(an < 0 ? -an : an), (unsigned long)bd);
    unsigned long g2 = plc_q_small_gcd((unsigned long)(bn < 0 ? -bn : bn), (unsigned long)ad);
    n = (__int128)(an / (long)g1) * (bn / (long)g2);
    m = (plc_u128)((unsigned long)ad / g2) * ((unsigned long)bd / g1);
  } else {
    return 0;
  }
  if (n == 0)
    m = 1;
  plc_q_wide_put(mpq_numref(q), n < 0, n < 0 ? -(plc_u128)n : (plc_u128)n);
  plc_q_wide_put(mpq_denref(q), 0, m);
  return 1;
}
#else
int plc_q_wide_arith(mpq_ptr q, int op, mpq_srcptr a, mpq_srcptr b)
{
  (void)q, (void)op, (void)a, (void)b;
  return 0;
}
#endif

/* sign is +1 for a*b and -1 for a/b.  Inputs are within the bound, so the
 * int sum cannot overflow. */
static plc_q_status plc_dim_combine(plc_dim *r, plc_dim a, plc_dim b, int sign)
{
  plc_dim t;
  for (int i = 0; i < PLC_NDIM; i++) {
    t.e[i] = a.e[i] + sign * b.e[i];
    if (t.e[i] > PLC_DIM_MAX_EXP || t.e[i] < -PLC_DIM_MAX_EXP)
      return PLC_Q_TOO_LARGE;
  }
  *r = t;
  return PLC_Q_OK;
}

plc_q_status plc_dim_mul(plc_dim *r, plc_dim a, plc_dim b)
{
  return plc_dim_combine(r, a, b, 1);
}

plc_q_status plc_dim_div(plc_dim *r, plc_dim a, plc_dim b)
{
  return plc_dim_combine(r, a, b, -1);
}

plc_q_status plc_dim_pow(plc_dim *r, plc_dim a, long n)
{
  plc_dim t;
  for (int i = 0; i < PLC_NDIM; i++) {
    if (a.e[i] == 0) {
      t.e[i] = 0;
      continue;
    }
    /* Reject large |n| before multiplying so the product cannot overflow. */
    if (n > PLC_DIM_MAX_EXP || n < -PLC_DIM_MAX_EXP)
      return PLC_Q_TOO_LARGE;
    long e = (long)a.e[i] * n;
    if (e > PLC_DIM_MAX_EXP || e < -PLC_DIM_MAX_EXP)
      return PLC_Q_TOO_LARGE;
    t.e[i] = (int)e;
  }
  *r = t;
  return PLC_Q_OK;
}

static const char *const plc_dim_names[PLC_NDIM] = { "B", "s", "FLOP" };

/* Append the factors whose exponent has the given sign ("B*s^2"); returns
 * the number of factors written. */
static int plc_dim_factors(char *buf, plc_dim d, int sign)
{
  int n = 0;
  for (int i = 0; i < PLC_NDIM; i++) {
    long e = (long)d.e[i] * sign; /* long: -INT_MIN must not overflow */
    if (e <= 0)
      continue;
    if (n++)
      strcat(buf, "*");
    strcat(buf, plc_dim_names[i]);
    if (e > 1)
      sprintf(buf + strlen(buf), "^%ld", e);
  }
  return n;
}

char *plc_dim_str(plc_dim d)
{
  /* Each factor is at most "FLOP^2147483648" (16 chars); 3 factors and 2 "*"
   * fit in 64; the output adds "/()" and NUL. */
  char num[64] = "", den[64] = "";
  int nn = plc_dim_factors(num, d, 1);
  int nd = plc_dim_factors(den, d, -1);
  char *out = plc_xmalloc(sizeof num + sizeof den + 8);
  if (nd == 0)
    strcpy(out, nn ? num : "1");
  else
    sprintf(out, nd > 1 ? "%s/(%s)" : "%s/%s", nn ? num : "1", den);
  return out;
}

/* ---- life cycle ---------------------------------------------------- */

void plc_q_init(plc_quantity *q)
{
  mpq_init(q->v);
  q->dim = plc_dim_none();
}

void plc_q_clear(plc_quantity *q)
{
  mpq_clear(q->v);
}

void plc_q_set(plc_quantity *r, const plc_quantity *a)
{
  mpq_set(r->v, a->v);
  r->dim = a->dim;
}

void plc_q_set_si(plc_quantity *r, long n, plc_dim d)
{
  mpq_set_si(r->v, n, 1);
  r->dim = d;
}

void plc_q_set_frac(plc_quantity *r, long num, long den, plc_dim d)
{
  if (den == 0) {
    fputs("plc: internal error: plc_q_set_frac with zero denominator\n",
          stderr);
    abort();
  }
  /* Through mpz, so that LONG_MIN / -1 needs no C negation;
   * mpq_canonicalize also moves a negative denominator's sign up. */
  mpz_set_si(mpq_numref(r->v), num);
  mpz_set_si(mpq_denref(r->v), den);
  mpq_canonicalize(r->v);
  r->dim = d;
}

/* ---- checked arithmetic -------------------------------------------- */

static int plc_q_too_big(const mpq_t v)
{
  return mpz_sizeinbase(mpq_numref(v), 2) > PLC_Q_MAX_BITS
      || mpz_sizeinbase(mpq_denref(v), 2) > PLC_Q_MAX_BITS;
}

plc_q_status plc_q_check_size(const plc_quantity *a)
{
  return plc_q_too_big(a->v) ? PLC_Q_TOO_LARGE : PLC_Q_OK;
}

/* Move a computed temporary into r if it is small enough.  Clears t. */
static plc_q_status plc_q_commit(plc_quantity *r, mpq_t t, plc_dim d)
{
  plc_q_status st = PLC_Q_OK;
  if (plc_q_too_big(t)) {
    st = PLC_Q_TOO_LARGE;
  } else {
    mpq_swap(r->v, t);
    r->dim = d;
  }
  mpq_clear(t);
  return st;
}

static plc_q_status plc_q_addsub(plc_quantity *r, const plc_quantity *a,
                                 const plc_quantity *b, int sub)
{
  if (!plc_dim_eq(a->dim, b->dim))
    return PLC_Q_DIM_MISMATCH;
  mpq_t t;
  mpq_init(t);
  if (sub)
    plc_q_rat_sub(t, a->v, b->v);
  else
    plc_q_rat_add(t, a->v, b->v);
  return plc_q_commit(r, t, a->dim);
}

plc_q_status plc_q_add(plc_quantity *r, const plc_quantity *a,
                       const plc_quantity *b)
{
  return plc_q_addsub(r, a, b, 0);
}

plc_q_status plc_q_sub(plc_quantity *r, const plc_quantity *a,
                       const plc_quantity *b)
{
  return plc_q_addsub(r, a, b, 1);
}

plc_q_status plc_q_mul(plc_quantity *r, const plc_quantity *a,
                       const plc_quantity *b)
{
  plc_dim d;
  if (plc_dim_mul(&d, a->dim, b->dim) != PLC_Q_OK)
    return PLC_Q_TOO_LARGE;
  mpq_t t;
  mpq_init(t);
  plc_q_rat_mul(t, a->v, b->v);
  return plc_q_commit(r, t, d);
}

plc_q_status plc_q_div(plc_quantity *r, const plc_quantity *a,
                       const plc_quantity *b)
{
  if (mpq_sgn(b->v) == 0)
    return PLC_Q_DIV_ZERO;
  plc_dim d;
  if (plc_dim_div(&d, a->dim, b->dim) != PLC_Q_OK)
    return PLC_Q_TOO_LARGE;
  mpq_t t;
  mpq_init(t);
  plc_q_rat_div(t, a->v, b->v);
  return plc_q_commit(r, t, d);
}

void plc_q_neg(plc_quantity *r, const plc_quantity *a)
{
  mpq_neg(r->v, a->v);
  r->dim = a->dim;
}

void plc_q_abs(plc_quantity *r, const plc_quantity *a)
{
  mpq_abs(r->v, a->v);
  r->dim = a->dim;
}

/* Would a^|n| exceed the limit?  bits(x^k) <= k * bits(x), so this bound is
 * safe; it is checked in unsigned long to avoid overflow (both factors are
 * bounded by the checks before it). */
static int plc_q_pow_too_big(const mpq_t a, unsigned long k)
{
  size_t nb = mpz_sizeinbase(mpq_numref(a), 2);
  size_t db = mpz_sizeinbase(mpq_denref(a), 2);
  size_t b = nb > db ? nb : db;
  if (b > PLC_Q_MAX_BITS)
    return 1;
  return (unsigned long)b * k > PLC_Q_MAX_BITS;
}

plc_q_status plc_q_pow(plc_quantity *r, const plc_quantity *a, long n)
{
  if (n > PLC_Q_MAX_POW || n < -PLC_Q_MAX_POW)
    return PLC_Q_TOO_LARGE;
  if (n < 0 && mpq_sgn(a->v) == 0)
    return PLC_Q_DIV_ZERO;
  plc_dim d;
  if (plc_dim_pow(&d, a->dim, n) != PLC_Q_OK)
    return PLC_Q_TOO_LARGE;
  unsigned long k = (unsigned long)(n < 0 ? -n : n);
  if (plc_q_pow_too_big(a->v, k))
    return PLC_Q_TOO_LARGE;
  mpq_t t;
  mpq_init(t);
  /* Powers of coprime numerator and denominator stay coprime: canonical. */
  mpz_pow_ui(mpq_numref(t), mpq_numref(a->v), k);
  mpz_pow_ui(mpq_denref(t), mpq_denref(a->v), k);
  if (n < 0)
    mpq_inv(t, t);
  return plc_q_commit(r, t, d);
}

plc_q_status plc_q_cmp(int *cmp, const plc_quantity *a, const plc_quantity *b)
{
  if (!plc_dim_eq(a->dim, b->dim))
    return PLC_Q_DIM_MISMATCH;
  int c = mpq_cmp(a->v, b->v);
  *cmp = (c > 0) - (c < 0);
  return PLC_Q_OK;
}

int plc_q_sgn(const plc_quantity *a)
{
  return mpq_sgn(a->v);
}

int plc_q_is_integer(const plc_quantity *a)
{
  return mpz_cmp_ui(mpq_denref(a->v), 1) == 0;
}

int plc_q_get_long(const plc_quantity *a, long lo, long hi, long *out)
{
  if (!plc_q_is_integer(a) || !mpz_fits_slong_p(mpq_numref(a->v)))
    return 0;
  long n = mpz_get_si(mpq_numref(a->v));
  if (n < lo || n > hi)
    return 0;
  *out = n;
  return 1;
}

/* floor (up = 0) or ceil (up = 1) of a on longs when its parts fit in
 * them (templates round counts with ceil thousands of times a search);
 * 0 when they do not. */
static int plc_q_small_round(plc_quantity *r, const plc_quantity *a, int up)
{
  long n, d;
  if (!plc_q_small_get(mpq_numref(a->v), &n) || !plc_q_small_get(mpq_denref(a->v), &d))
    return 0;
  long q = n / d; /* d > 0; truncated toward zero, |n| <= LONG_MAX */
  if (n % d != 0 && (up ? n > 0 : n < 0))
    q += up ? 1 : -1;
  plc_q_small_set(r->v, q, 1);
  r->dim = a->dim;
  return 1;
}

void plc_q_floor(plc_quantity *r, const plc_quantity *a)
{
  if (plc_q_small_round(r, a, 0))
    return;
  mpz_fdiv_q(mpq_numref(r->v), mpq_numref(a->v), mpq_denref(a->v));
  mpz_set_ui(mpq_denref(r->v), 1);
  r->dim = a->dim;
}

void plc_q_ceil(plc_quantity *r, const plc_quantity *a)
{
  if (plc_q_small_round(r, a, 1))
    return;
  mpz_cdiv_q(mpq_numref(r->v), mpq_numref(a->v), mpq_denref(a->v));
  mpz_set_ui(mpq_denref(r->v), 1);
  r->dim = a->dim;
}

/* ---- literal parsing ----------------------------------------------- */

/* What a syntactic scan of a literal found; no GMP involved yet. */
typedef struct plc_lit {
  char *digits;    /* mantissa digits, '_' and '.' removed, NUL-terminated */
  size_t ndigits;  /* how many (also counted past the limit) */
  long frac;       /* digits after the point */
  long exp;        /* written exponent, saturated past PLC_Q_MAX_EXP10 */
  int neg;
} plc_lit;

static int plc_is_digit(char c)
{
  return c >= '0' && c <= '9';
}

/* Scan a run of digits with single '_' separators between digits, starting
 * at *i.  Each digit is passed to the sink (may be NULL).  Returns the
 * number of digits, or -1 on a misplaced '_'. */
static long plc_scan_digits(const char *s, size_t len, size_t *i,
                            void (*sink)(void *, char), void *ctx)
{
  long n = 0;
  while (*i < len && (plc_is_digit(s[*i]) || s[*i] == '_')) {
    if (s[*i] == '_') {
      if (n == 0 || *i + 1 >= len || !plc_is_digit(s[*i + 1]))
        return -1;
    } else {
      n++;
      if (sink)
        sink(ctx, s[*i]);
    }
    (*i)++;
  }
  return n;
}

/* Sink for mantissa digits: store while below the limit, count always. */
static void plc_lit_mant_digit(void *ctx, char c)
{
  plc_lit *l = ctx;
  if (l->ndigits < PLC_Q_MAX_DIGITS)
    l->digits[l->ndigits] = c;
  l->ndigits++;
}

/* Sink for exponent digits: overflow-safe, saturating just past the bound. */
static void plc_lit_exp_digit(void *ctx, char c)
{
  plc_lit *l = ctx;
  if (l->exp <= PLC_Q_MAX_EXP10)
    l->exp = l->exp * 10 + (c - '0');
}

/* The optional exponent part "e[+-]digits" starting at *i. */
static plc_q_status plc_scan_exp(const char *s, size_t len, size_t *i,
                                 plc_lit *l)
{
  if (*i >= len || (s[*i] != 'e' && s[*i] != 'E'))
    return PLC_Q_OK;
  (*i)++;
  int eneg = 0;
  if (*i < len && (s[*i] == '+' || s[*i] == '-'))
    eneg = s[(*i)++] == '-';
  if (plc_scan_digits(s, len, i, plc_lit_exp_digit, l) <= 0)
    return PLC_Q_SYNTAX;
  if (eneg)
    l->exp = -l->exp;
  return PLC_Q_OK;
}

/* Check the whole text's syntax and collect its parts into l. */
static plc_q_status plc_scan_literal(const char *s, size_t len, plc_lit *l)
{
  size_t i = 0;
  if (i < len && (s[i] == '+' || s[i] == '-'))
    l->neg = s[i++] == '-';
  long ni = plc_scan_digits(s, len, &i, plc_lit_mant_digit, l);
  if (ni < 0)
    return PLC_Q_SYNTAX;
  long nf = 0;
  if (i < len && s[i] == '.') {
    i++;
    /* A fraction may not start with '_' ("1._5"); plc_scan_digits sees it
     * as a leading separator and rejects it. */
    nf = plc_scan_digits(s, len, &i, plc_lit_mant_digit, l);
    if (nf < 0)
      return PLC_Q_SYNTAX;
  }
  if (ni + nf == 0)
    return PLC_Q_SYNTAX;
  l->frac = nf;
  if (plc_scan_exp(s, len, &i, l) != PLC_Q_OK || i != len)
    return PLC_Q_SYNTAX;
  return PLC_Q_OK;
}

/* plc_lit_value on longs, for a mantissa of at most 18 digits scaled by at
 * most 10^+-18 (nearly every literal: "3.35", "2.6e10", "1e-3"): GMP's
 * string reading, power and gcd cost a hundred times more.  0 when the
 * value does not fit (r untouched then). */
static int plc_lit_small(plc_quantity *r, const plc_lit *l)
{
  long e = l->exp - l->frac; /* both bounded: no overflow */
  if (plc_q_gmp_only || l->ndigits > 18 || e < -18 || e > 18)
    return 0;
  long m = 0, p = 1, n, d = 1;
  for (size_t i = 0; i < l->ndigits; i++)
    m = m * 10 + (l->digits[i] - '0');
  for (long i = 0; i < (e < 0 ? -e : e); i++)
    p *= 10;
  if (e >= 0) {
    if (__builtin_mul_overflow(m, p, &n))
      return 0;
  } else { /* m / 10^-e in lowest terms (0 as 0/1: gcd(0, p) = p) */
    long g = (long)plc_q_small_gcd((unsigned long)m, (unsigned long)p);
    n = m / g;
    d = p / g;
  }
  plc_q_small_set(r->v, l->neg ? -n : n, (unsigned long)d);
  r->dim = plc_dim_none();
  return 1;
}

/* r = mantissa * 10^(exp - frac), once the limits have been checked. */
static plc_q_status plc_lit_value(plc_quantity *r, plc_lit *l)
{
  if (plc_lit_small(r, l))
    return PLC_Q_OK;
  mpq_t t;
  mpz_t p;
  mpq_init(t);
  mpz_init(p);
  l->digits[l->ndigits] = '\0';
  mpz_set_str(mpq_numref(t), l->digits, 10);
  long e = l->exp - l->frac; /* both bounded: no overflow */
  mpz_ui_pow_ui(p, 10, (unsigned long)(e < 0 ? -e : e));
  if (e < 0)
    mpz_set(mpq_denref(t), p);
  else
    mpz_mul(mpq_numref(t), mpq_numref(t), p);
  mpq_canonicalize(t);
  if (l->neg)
    mpq_neg(t, t);
  mpz_clear(p);
  return plc_q_commit(r, t, plc_dim_none());
}

int plc_q_gmp_only;

plc_q_status plc_q_parse_number(plc_quantity *r, const char *text, size_t len)
{
  char digits[PLC_Q_MAX_DIGITS + 1];
  plc_lit l = { digits, 0, 0, 0, 0 };
  plc_q_status st = plc_scan_literal(text, len, &l);
  if (st == PLC_Q_OK
      && (l.ndigits > PLC_Q_MAX_DIGITS || l.exp > PLC_Q_MAX_EXP10
          || l.exp < -PLC_Q_MAX_EXP10))
    st = PLC_Q_TOO_LARGE;
  if (st == PLC_Q_OK)
    st = plc_lit_value(r, &l);
  return st;
}

void plc_q_set_raw(plc_quantity *r, mpq_srcptr v, int b, int s, int f)
{
  mpq_set(r->v, v);
  r->dim = plc_dim_none();
  r->dim.e[PLC_DIM_BYTE] = b;
  r->dim.e[PLC_DIM_SEC] = s;
  r->dim.e[PLC_DIM_FLOP] = f;
}
