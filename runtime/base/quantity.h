/* quantity.h - exact physical quantities: a GMP rational and a dimension.
 *
 * A dimension is a vector of small integer exponents over the base units
 * bytes (B), seconds (s) and floating-point operations (FLOP).  Everything on
 * the path from a literal in a plan to a printed figure is a plc_quantity;
 * no floating point is ever involved.  Rounding happens once, in the
 * formatters, by exact integer arithmetic.
 *
 * Ownership: a plc_quantity owns its mpq_t; callers plc_q_init before use and
 * plc_q_clear after; functions write into a caller-owned result and never
 * consume or alias-free their inputs (results may alias inputs).
 */
#ifndef PLC_QUANTITY_H
#define PLC_QUANTITY_H

#include <stddef.h>
#include <gmp.h>
#include <limits.h>

enum { PLC_DIM_BYTE, PLC_DIM_SEC, PLC_DIM_FLOP, PLC_NDIM };

/* Largest absolute value of one dimension exponent (B^64 is already absurd). */
#define PLC_DIM_MAX_EXP 64

typedef struct plc_dim {
  int e[PLC_NDIM];
} plc_dim;
_Static_assert(PLC_NDIM == 3, "plc_dim_eq and plc_dim_is_none name each exponent");

typedef struct plc_quantity {
  mpq_t v;
  plc_dim dim;
} plc_quantity;

/* Status codes of the operations that can fail. */
typedef enum plc_q_status {
  PLC_Q_OK = 0,
  PLC_Q_DIM_MISMATCH, /* add/sub/compare of different dimensions */
  PLC_Q_DIV_ZERO,     /* division by an exact zero */
  PLC_Q_TOO_LARGE,    /* result would exceed PLC_Q_MAX_BITS or an exponent bound */
  PLC_Q_BAD_POWER,    /* exponent not a dimensionless integer (for callers
                         that check x^y before plc_q_pow) */
  PLC_Q_SYNTAX        /* literal text not a number */
} plc_q_status;

/* Bounds that keep GMP from allocating without limit on hostile input. */
#define PLC_Q_MAX_BITS 65536     /* numerator or denominator size */
#define PLC_Q_MAX_DIGITS 4096    /* digits in a literal */
#define PLC_Q_MAX_EXP10 1000     /* |e| in a literal like 1e1000 */
#define PLC_Q_MAX_POW 4096       /* |n| in x^n */

const char *plc_q_status_str(plc_q_status s);

/* Dimensions.  none, eq and is_none are inline: the evaluator, lowering
 * and analysis compare dimensions on their hot paths. */
static inline plc_dim plc_dim_none(void)
{
  plc_dim d = {{0}};
  return d;
}
plc_dim plc_dim_base(int which); /* PLC_DIM_BYTE etc. with exponent 1 */
static inline int plc_dim_eq(plc_dim a, plc_dim b)
{
  return a.e[0] == b.e[0] && a.e[1] == b.e[1] && a.e[2] == b.e[2];
}
static inline int plc_dim_is_none(plc_dim a)
{
  return !(a.e[0] | a.e[1] | a.e[2]);
}
/* a*b and a/b: return PLC_Q_TOO_LARGE when an exponent leaves the bound. */
plc_q_status plc_dim_mul(plc_dim *r, plc_dim a, plc_dim b);
plc_q_status plc_dim_div(plc_dim *r, plc_dim a, plc_dim b);
plc_q_status plc_dim_pow(plc_dim *r, plc_dim a, long n);
/* Human name of a dimension in base units: "B", "B/s", "FLOP/s", "B^2", "1".
 * Factors in the order B, s, FLOP joined by '*', exponents above 1 as "^k";
 * negative exponents form the denominator, parenthesised when it has more
 * than one factor: "B^2/s", "1/s", "1/(B*s)", "s^2/(B*FLOP^3)". */
char *plc_dim_str(plc_dim d); /* malloc'd */

/* Life cycle. */
void plc_q_init(plc_quantity *q);
void plc_q_clear(plc_quantity *q);
void plc_q_set(plc_quantity *r, const plc_quantity *a);
void plc_q_set_si(plc_quantity *r, long n, plc_dim d);
/* num/den, canonicalized; den == 0 is a programming error and aborts. */
void plc_q_set_frac(plc_quantity *r, long num, long den, plc_dim d);

/* Arithmetic.  Results are canonical (2/4 is stored as 1/2) and
 * size-checked against PLC_Q_MAX_BITS.  On any status other than PLC_Q_OK
 * the result *r is left unchanged.  add, sub and cmp need equal dimensions
 * (PLC_Q_DIM_MISMATCH otherwise); mul and div combine them. */
plc_q_status plc_q_add(plc_quantity *r, const plc_quantity *a, const plc_quantity *b);
plc_q_status plc_q_sub(plc_quantity *r, const plc_quantity *a, const plc_quantity *b);
plc_q_status plc_q_mul(plc_quantity *r, const plc_quantity *a, const plc_quantity *b);
plc_q_status plc_q_div(plc_quantity *r, const plc_quantity *a, const plc_quantity *b);
void plc_q_neg(plc_quantity *r, const plc_quantity *a);
/* a^n, n a C long: |n| <= PLC_Q_MAX_POW, 0^negative is PLC_Q_DIV_ZERO,
 * 0^0 = 1.  The result size is predicted before computing (bits(a) * |n|)
 * and PLC_Q_TOO_LARGE returned when it could exceed PLC_Q_MAX_BITS. */
plc_q_status plc_q_pow(plc_quantity *r, const plc_quantity *a, long n);
/* Compare a and b; *cmp gets <0, 0, >0.  Dimensions must agree. */
plc_q_status plc_q_cmp(int *cmp, const plc_quantity *a, const plc_quantity *b);
int plc_q_sgn(const plc_quantity *a);
int plc_q_is_integer(const plc_quantity *a);
/* Fits in [lo, hi] as an integer?  Returns 1 and stores it, else 0. */
int plc_q_get_long(const plc_quantity *a, long lo, long hi, long *out);
void plc_q_floor(plc_quantity *r, const plc_quantity *a);
void plc_q_ceil(plc_quantity *r, const plc_quantity *a);
void plc_q_abs(plc_quantity *r, const plc_quantity *a);
/* PLC_Q_TOO_LARGE when numerator or denominator exceeds PLC_Q_MAX_BITS:
 * for values built outside the checked operations (e.g. with a unit). */
plc_q_status plc_q_check_size(const plc_quantity *a);

/* Literal text -> dimensionless exact value.  Accepts decimal integers,
 * decimals and scientific notation ("3.35", "2.6e10", "1_000_000", ".5",
 * "5.", "1e-3", "1E+3"), with an optional leading sign.  A '_' separator must
 * stand between two digits.  Syntax is checked first (PLC_Q_SYNTAX, e.g. "1e",
 * "1__0", "."), then the limits: more than PLC_Q_MAX_DIGITS mantissa digits
 * or a written exponent beyond PLC_Q_MAX_EXP10 is PLC_Q_TOO_LARGE, decided
 * before GMP sees the text.  text need not be NUL-terminated. */
plc_q_status plc_q_parse_number(plc_quantity *r, const char *text, size_t len);

/* Units: a name ("TB/s", "Gbps", "%", "ms", "KiB", "TFLOPS") maps to an exact
 * scale and a dimension.  plc_unit_lookup returns NULL when the name is not
 * a unit; names are case-sensitive and matched exactly. */
typedef struct plc_unit {
  const char *name;
  const char *scale; /* exact rational text, e.g. "1000000000000", "1/8" */
  int e[PLC_NDIM];
} plc_unit;
const plc_unit *plc_unit_lookup(const char *name, size_t len);
/* A scale's text "n" or "n/d" as longs in lowest terms, n, d > 0 (every
 * unit's is one); 0 for anything else (e.g. more than 18 digits). */
int plc_unit_scale_long(const char *t, long *n, long *d);
/* Multiply r (dimensionless) by the unit: r = r * scale, dim = unit dim.
 * Not size-checked (scales are below 2^61); see plc_q_check_size. */
void plc_q_apply_unit(plc_quantity *r, const plc_unit *u);
/* Iterate over the unit table (for --help, docs and tests); NULL at the end. */
const plc_unit *plc_unit_at(size_t i);

/* Nonzero: the formatters and the literal reader skip their machine-integer
 * fast paths and compute everything with GMP, the reference the fast paths
 * must match digit for digit.  For tests only; 0 by default. */
extern int plc_q_gmp_only;

/* Formatting (all results malloc'd; free with free()).
 *
 * Rounding: round half away from zero (0.0025 -> "0.003", -0.0025 ->
 * "-0.003"), by exact integer arithmetic on the rational, never floating point.
 * A result that rounds to zero prints without a minus sign ("0.00").
 *
 * sig and decimals are clamped to at most PLC_FMT_MAX_DIGITS.
 *
 * plc_fmt_fixed: exactly `decimals` digits after the point (none and no point
 *   when decimals <= 0): 2/3 at 4 -> "0.6667".
 * plc_fmt_sig: `sig` significant digits (sig < 1 counts as 1), plain decimal
 *   notation, never an exponent.  Trailing zeros after the point are trimmed,
 *   and the point with them: 360 at 4 -> "360", 9.995 at 3 -> "10",
 *   0.00083886 at 4 -> "0.0008389".  Digits left of the point beyond `sig`
 *   are rounded to zeros: 123456 at 4 -> "123500".  Zero prints "0".
 * plc_fmt_exact: the canonical rational, "n/d" or "n" ("-1/3000", "42"). */
#define PLC_FMT_MAX_DIGITS 1000
char *plc_fmt_fixed(const mpq_t v, int decimals);
char *plc_fmt_sig(const mpq_t v, int sig);
char *plc_fmt_exact(const mpq_t v);

/* A quantity with an automatically chosen unit, as "<number> <unit>" with
 * the number from plc_fmt_sig(v, sig):
 *   B       largest of B KB MB GB TB PB with |value| >= 1    "352.3 MB"
 *   s       |t| < 1 us: ns; 1 us <= |t| < 1000 s: ms; else s  "0.8389 ms"
 *   B/s     largest of B/s KB/s MB/s GB/s TB/s                 "360 GB/s"
 *   FLOP    largest of FLOP KFLOP MFLOP ... EFLOP              "25.77 GFLOP"
 *   FLOP/s  largest of FLOPS KFLOPS MFLOPS ... EFLOPS          "989 TFLOPS"
 *   none    the plain number (a fraction 3/4 prints "0.75", never "75%")
 *   other   the value in base units and plc_dim_str           "12 B^2/s"
 * The unit is chosen on |value|; when rounding carries the number up to the
 * next unit's threshold the next unit is used ("1 GB", not "1000 MB").  Zero
 * prints in the base unit ("0 s", "0 B", "0 FLOPS").
 * exact != 0 prints plc_fmt_exact of the value in base units, a space and
 * plc_dim_str ("1/1200 s", "42 B", "989000000000000 FLOP/s"); a
 * dimensionless value prints just the rational ("3/4"). */
char *plc_q_format(const plc_quantity *q, int sig, int exact);
/* The rounded form of plc_q_format in two parts: returns the number and
 * sets *unit to its unit ("0.8389" and "ms"; "" for a dimensionless value;
 * plc_dim_str for a dimension without a ladder); both malloc'd. */
char *plc_q_format_split(const plc_quantity *q, int sig, char **unit);
/* r = v with the dimension B^b s^s FLOP^f. */
void plc_q_set_raw(plc_quantity *r, mpq_srcptr v, int b, int s, int f);
/* The same for a bare rational with the dimension B^b s^s FLOP^f. */
char *plc_q_format_raw(mpq_srcptr v, int b, int s, int f, int sig, int exact);
/* The value expressed in unit u with sig significant digits, a space and the
 * unit's name ("0.0347 ms" for u = ms; "%" takes no space: "75%").  NULL when
 * the dimensions differ. */
char *plc_q_format_in(const plc_quantity *q, const plc_unit *u, int sig);

/* Raw rationals: plc_q_rat_add, _sub, _mul and _div compute r = a op b
 * as mpq_add and the others do (the same canonical result, not
 * size-checked; r may alias a or b).  Nearly every number a plan computes
 * with is a ratio of machine integers, and GMP's rational arithmetic (a gcd
 * or two per operation, whatever the size) was a tenth of a layout search's
 * instructions: when both operands' numerators and denominators fit in a
 * long and no intermediate overflows (checked), the result is computed on
 * longs and reduced to lowest terms, exactly; when an intermediate
 * overflows, on 128-bit integers (plc_q_wide_arith); else GMP computes it.  Inline:
 * the evaluator, lowering and analysis call them on their hot paths. */

/* A limb is an unsigned long here (x86-64, aarch64 and the like): the
 * fast paths below read and write an integer's limb in place, as gmp.h's
 * own inline functions do, rather than through calls; elsewhere they go
 * through GMP's functions. */
#if GMP_NAIL_BITS == 0 && GMP_LIMB_BITS == 64 && ULONG_MAX == 0xffffffffffffffffUL
#define PLC_Q_LIMB_LONG 1
#else
#define PLC_Q_LIMB_LONG 0
#endif

/* z as a long, if it fits in one limb that fits in a long. */
static inline int plc_q_small_get(mpz_srcptr z, long *out)
{
#if PLC_Q_LIMB_LONG
  int size = z->_mp_size;
  if (size < -1 || size > 1)
    return 0;
  mp_limb_t limb = size ? z->_mp_d[0] : 0;
  if (limb > (mp_limb_t)LONG_MAX)
    return 0;
  *out = size < 0 ? -(long)limb : (long)limb;
  return 1;
#else
  size_t n = mpz_size(z);
  if (n > 1)
    return 0;
  mp_limb_t limb = n ? mpz_getlimbn(z, 0) : 0;
  if (limb > (mp_limb_t)LONG_MAX)
    return 0;
  *out = mpz_sgn(z) < 0 ? -(long)limb : (long)limb;
  return 1;
#endif
}

/* q = n/d, already in lowest terms, d > 0 (mpq_set_si, in place when the
 * denominator has a limb allocated, as mpq_init gives it). */
static inline void plc_q_small_set(mpq_ptr q, long n, unsigned long d)
{
#if PLC_Q_LIMB_LONG
  mpz_ptr num = mpq_numref(q), den = mpq_denref(q);
  if (den->_mp_alloc >= 1) {
    if (n) /* a new rational's numerator has no limb yet: GMP's own call makes one */
      (num->_mp_alloc >= 1 ? num->_mp_d : mpz_limbs_write(num, 1))[0] =
        n < 0 ? -(unsigned long)n : (unsigned long)n;
    num->_mp_size = n < 0 ? -1 : n > 0;
    den->_mp_d[0] = d;
    den->_mp_size = 1;
    return;
  }
#endif
  mpq_set_si(q, n, d);
}

static inline unsigned long plc_q_small_gcd(unsigned long a, unsigned long b)
{
  while (b) {
    unsigned long t = a % b;
    a = b;
    b = t;
  }
  return a;
}

/* q = a op b (op: '+', '-', '*', '/') on longs; 0 when an operand or an
 * intermediate does not fit, or b is 0 for '/' (q untouched then). */
static inline int plc_q_small_arith(mpq_ptr q, int op, mpq_srcptr a, mpq_srcptr b)
{
  long an, ad, bn, bd, n, m;
#if PLC_Q_LIMB_LONG
  /* integers (denominators 1: byte counts, sizes) added, subtracted or
   * multiplied give an integer: no gcd */
  mpz_srcptr a_den = mpq_denref(a), b_den = mpq_denref(b);
  if (op != '/' && a_den->_mp_size == 1 && a_den->_mp_d[0] == 1 && b_den->_mp_size == 1 &&
      b_den->_mp_d[0] == 1) {
    if (!plc_q_small_get(mpq_numref(a), &an) || !plc_q_small_get(mpq_numref(b), &bn))
      return 0;
    if (op == '+' ? __builtin_add_overflow(an, bn, &n)
        : op == '-' ? __builtin_sub_overflow(an, bn, &n) : __builtin_mul_overflow(an, bn, &n))
      return 0;
    if (n == LONG_MIN) /* as below */
      return 0;
    plc_q_small_set(q, n, 1);
    return 1;
  }
#endif
  if (!plc_q_small_get(mpq_numref(a), &an) || !plc_q_small_get(mpq_denref(a), &ad) ||
      !plc_q_small_get(mpq_numref(b), &bn) || !plc_q_small_get(mpq_denref(b), &bd))
    return 0;
  switch (op) {
  case '+': case '-': {
    long x, y;
    if (ad == bd) { /* integers, mostly: no products */
      x = an;
      y = bn;
      m = ad;
    } else if (__builtin_mul_overflow(an, bd, &x) || __builtin_mul_overflow(bn, ad, &y) ||
               __builtin_mul_overflow(ad, bd, &m)) {
      return 0;
    }
    if (op == '+' ? __builtin_add_overflow(x, y, &n) : __builtin_sub_overflow(x, y, &n))
      return 0;
    break;
  }
  case '*':
    if (__builtin_mul_overflow(an, bn, &n) || __builtin_mul_overflow(ad, bd, &m))
      return 0;
    break;
  case '/':
    if (bn == 0) /* GMP's division by zero, as before */
      return 0;
    if (__builtin_mul_overflow(an, bd, &n) || __builtin_mul_overflow(ad, bn, &m))
      return 0;
    if (m < 0) { /* the sign goes on the numerator */
      if (n == LONG_MIN || m == LONG_MIN)
        return 0;
      n = -n;
      m = -m;
    }
    break;
  default:
    return 0;
  }
  if (n == LONG_MIN) /* no |n| as a long */
    return 0;
  /* m > 0 here: denominators are positive, and a divisor is nonzero */
  unsigned long g = plc_q_small_gcd((unsigned long)(n < 0 ? -n : n), (unsigned long)m);
  plc_q_small_set(q, n / (long)g, (unsigned long)(m / (long)g));
  return 1;
}

/* r = a (mpq_set), in place when both of a's parts are one limb at most
 * and r has room for them: a value copied into a new rational (the
 * evaluator's numbers) needs no call into GMP. */
static inline void plc_q_rat_set(mpq_ptr r, mpq_srcptr a)
{
#if PLC_Q_LIMB_LONG
  mpz_srcptr an = mpq_numref(a), ad = mpq_denref(a);
  mpz_ptr rn = mpq_numref(r), rd = mpq_denref(r);
  if (an->_mp_size >= -1 && an->_mp_size <= 1 && ad->_mp_size == 1 && rn->_mp_alloc >= 1 &&
      rd->_mp_alloc >= 1) {
    if (an->_mp_size)
      rn->_mp_d[0] = an->_mp_d[0];
    rn->_mp_size = an->_mp_size;
    rd->_mp_d[0] = ad->_mp_d[0];
    rd->_mp_size = 1;
    return;
  }
#endif
  mpq_set(r, a);
}

/* a == b (mpq_equal), without the call when both are ratios of one-limb
 * integers: canonical rationals are equal exactly when their numerators
 * and denominators are. */
static inline int plc_q_rat_equal(mpq_srcptr a, mpq_srcptr b)
{
#if PLC_Q_LIMB_LONG
  mpz_srcptr an = mpq_numref(a), ad = mpq_denref(a), bn = mpq_numref(b), bd = mpq_denref(b);
  if (an->_mp_size >= -1 && an->_mp_size <= 1 && bn->_mp_size >= -1 && bn->_mp_size <= 1 &&
      ad->_mp_size == 1 && bd->_mp_size == 1)
    return an->_mp_size == bn->_mp_size && (!an->_mp_size || an->_mp_d[0] == bn->_mp_d[0]) &&
           ad->_mp_d[0] == bd->_mp_d[0];
#endif
  return mpq_equal(a, b);
}

/* q = a op b as plc_q_small_arith, for operands that fit in longs whose
 * products do not: on 128-bit integers, reduced by gcds of the operands'
 * parts (GMP's own way: a sum's gcd from the denominators', a product's
 * from the cross pairs'), the result written in one or two limbs.  0
 * when it cannot (an operand beyond a long, no 128-bit integers, b 0 for
 * '/'; q untouched then).  Out of line: rarer, and larger. */
int plc_q_wide_arith(mpq_ptr q, int op, mpq_srcptr a, mpq_srcptr b);

static inline void plc_q_rat_add(mpq_ptr r, mpq_srcptr a, mpq_srcptr b)
{
  if (!plc_q_small_arith(r, '+', a, b) && !plc_q_wide_arith(r, '+', a, b))
    mpq_add(r, a, b);
}

static inline void plc_q_rat_sub(mpq_ptr r, mpq_srcptr a, mpq_srcptr b)
{
  if (!plc_q_small_arith(r, '-', a, b) && !plc_q_wide_arith(r, '-', a, b))
    mpq_sub(r, a, b);
}

static inline void plc_q_rat_mul(mpq_ptr r, mpq_srcptr a, mpq_srcptr b)
{
  if (!plc_q_small_arith(r, '*', a, b) && !plc_q_wide_arith(r, '*', a, b))
    mpq_mul(r, a, b);
}

static inline void plc_q_rat_div(mpq_ptr r, mpq_srcptr a, mpq_srcptr b)
{
  if (!plc_q_small_arith(r, '/', a, b) && !plc_q_wide_arith(r, '/', a, b))
    mpq_div(r, a, b);
}


#endif
