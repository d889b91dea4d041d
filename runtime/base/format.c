/* format.c - exact decimal printing of rationals and of quantities with an
 * automatically chosen unit.
 *
 * No floating point: a value is scaled by a power of ten, divided as
 * integers, and the remainder decides the rounding (half away from zero).
 * The decimal exponent for significant digits comes from mpz_sizeinbase and
 * is corrected by exact comparisons, so 9.995 at 3 digits is "10" and never
 * "9.99" or "10.00". */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "quantity.h"

#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

/* ---- integer helpers ----------------------------------------------- */

/* q = round(|v| * 10^dec), half away from zero; dec may be negative.  Works
 * on |v| so that rounding the magnitude is symmetric around zero. */
static void plc_fmt_round(mpz_t q, const mpq_t v, long dec)
{
  mpz_t n, d, r;
  mpz_inits(n, d, r, NULL);
  mpz_abs(n, mpq_numref(v));
  mpz_set(d, mpq_denref(v));
  mpz_ui_pow_ui(r, 10, (unsigned long)(dec < 0 ? -dec : dec));
  if (dec >= 0)
    mpz_mul(n, n, r);
  else
    mpz_mul(d, d, r);
  mpz_fdiv_qr(q, r, n, d);
  mpz_mul_2exp(r, r, 1);
  if (mpz_cmp(r, d) >= 0) /* remainder >= half: away from zero */
    mpz_add_ui(q, q, 1);
  mpz_clears(n, d, r, NULL);
}

/* Sign of |v| - 10^e. */
static int plc_fmt_cmp_pow10(const mpq_t v, long e)
{
  mpz_t a, b, p;
  mpz_inits(a, b, p, NULL);
  mpz_abs(a, mpq_numref(v));
  mpz_set(b, mpq_denref(v));
  mpz_ui_pow_ui(p, 10, (unsigned long)(e < 0 ? -e : e));
  if (e >= 0)
    mpz_mul(b, b, p);
  else
    mpz_mul(a, a, p);
  int c = mpz_cmp(a, b);
  mpz_clears(a, b, p, NULL);
  return c;
}

/* The E with 10^E <= |v| < 10^(E+1), v != 0.  sizeinbase may overstate a
 * digit count by one, so the estimate is corrected by comparisons. */
static long plc_fmt_exp10(const mpq_t v)
{
  long e = (long)mpz_sizeinbase(mpq_numref(v), 10)
         - (long)mpz_sizeinbase(mpq_denref(v), 10);
  while (plc_fmt_cmp_pow10(v, e) < 0)
    e--;
  while (plc_fmt_cmp_pow10(v, e + 1) >= 0)
    e++;
  return e;
}

/* Round |v| to sig significant digits: |v| ~ q * 10^-dec.  When rounding
 * carries (9.995 -> 1000 hundredths at 3 digits) q has one digit more than
 * sig; the value is still right, and the extra digit is always a trailing
 * zero that plc_fmt_sig trims ("10.00" -> "10"). */
static void plc_fmt_sig_round(mpz_t q, long *dec, const mpq_t v, int sig)
{
  *dec = sig - 1 - plc_fmt_exp10(v);
  plc_fmt_round(q, v, *dec);
}

/* Decimal digits of q >= 0, left-padded with zeros to at least width. */
static char *plc_fmt_digits(const mpz_t q, size_t width)
{
  size_t cap = mpz_sizeinbase(q, 10) + 2;
  char *tmp = plc_xmalloc(cap);
  mpz_get_str(tmp, 10, q);
  size_t nd = strlen(tmp); /* exact; sizeinbase may be one more */
  if (nd >= width)
    return tmp;
  char *out = plc_xmalloc(width + 1);
  memset(out, '0', width - nd);
  memcpy(out + width - nd, tmp, nd + 1);
  free(tmp);
  return out;
}

/* Text of q * 10^-dec (q >= 0) with a leading '-' when neg and q != 0.
 * dec <= 0 appends -dec zeros; dec > 0 inserts a point dec digits from the
 * right, padding with leading zeros ("0.003"). */
static char *plc_fmt_render(const mpz_t q, long dec, int neg)
{
  char *d = plc_fmt_digits(q, dec > 0 ? (size_t)dec + 1 : 1);
  size_t nd = strlen(d);
  size_t zeros = dec < 0 && mpz_sgn(q) ? (size_t)-dec : 0;
  char *out = plc_xmalloc(nd + zeros + 3);
  char *o = out;
  if (neg && mpz_sgn(q))
    *o++ = '-';
  size_t ip = dec > 0 ? nd - (size_t)dec : nd; /* digits before the point */
  memcpy(o, d, ip);
  o += ip;
  if (dec > 0) {
    *o++ = '.';
    memcpy(o, d + ip, (size_t)dec);
    o += dec;
  }
  memset(o, '0', zeros);
  o[zeros] = '\0';
  free(d);
  return out;
}

/* "10.500" -> "10.5", "10.0" -> "10"; strings without a point unchanged. */
static void plc_fmt_trim(char *s)
{
  char *pt = strchr(s, '.');
  if (!pt)
    return;
  char *end = s + strlen(s);
  while (end > pt + 1 && end[-1] == '0')
    end--;
  if (end == pt + 1)
    end = pt;
  *end = '\0';
}

/* ---- public number formatters --------------------------------------- */

/* A caller-supplied digit count must not make 10^sig enormous. */
static int plc_fmt_clamp_sig(int sig)
{
  if (sig < 1)
    return 1;
  return sig > PLC_FMT_MAX_DIGITS ? PLC_FMT_MAX_DIGITS : sig;
}

char *plc_fmt_fixed(const mpq_t v, int decimals)
{
  long dec = decimals > 0 ? decimals : 0;
  if (dec > PLC_FMT_MAX_DIGITS)
    dec = PLC_FMT_MAX_DIGITS;
  mpz_t q;
  mpz_init(q);
  plc_fmt_round(q, v, dec);
  char *s = plc_fmt_render(q, dec, mpq_sgn(v) < 0);
  mpz_clear(q);
  return s;
}

char *plc_fmt_sig(const mpq_t v, int sig)
{
  if (mpq_sgn(v) == 0)
    return plc_xstrdup("0");
  sig = plc_fmt_clamp_sig(sig);
  mpz_t q;
  long dec;
  mpz_init(q);
  plc_fmt_sig_round(q, &dec, v, sig);
  char *s = plc_fmt_render(q, dec, mpq_sgn(v) < 0);
  mpz_clear(q);
  plc_fmt_trim(s);
  return s;
}

char *plc_fmt_exact(const mpq_t v)
{
  /* digits of both parts, a sign, a '/' and the NUL */
  size_t cap = mpz_sizeinbase(mpq_numref(v), 10)
             + mpz_sizeinbase(mpq_denref(v), 10) + 3;
  char *s = plc_xmalloc(cap);
  mpq_get_str(s, 10, v);
  return s;
}

/* ---- quantities with units ------------------------------------------ */

/* "a sep b" in a new string; frees a. */
static char *plc_fmt_join(char *a, const char *sep, const char *b)
{
  size_t la = strlen(a), ls = strlen(sep), lb = strlen(b);
  char *out = plc_xmalloc(la + ls + lb + 1);
  memcpy(out, a, la);
  memcpy(out + la, sep, ls);
  memcpy(out + la + ls, b, lb + 1);
  free(a);
  return out;
}

/* r = v / scale of u.  Scales are positive table constants. */
static void plc_fmt_in_unit(mpq_t r, const mpq_t v, const plc_unit *u)
{
  mpq_t s;
  mpq_init(s);
  mpq_set_str(s, u->scale, 10);
  mpq_canonicalize(s);
  mpq_div(r, v, s);
  mpq_clear(s);
}

static int plc_fmt_dim_is(plc_dim d, const int e[PLC_NDIM])
{
  for (int i = 0; i < PLC_NDIM; i++)
    if (d.e[i] != e[i])
      return 0;
  return 1;
}

char *plc_q_format_in(const plc_quantity *q, const plc_unit *u, int sig)
{
  if (!u || !plc_fmt_dim_is(q->dim, u->e))
    return NULL;
  mpq_t x;
  mpq_init(x);
  plc_fmt_in_unit(x, q->v, u);
  char *s = plc_fmt_sig(x, sig);
  mpq_clear(x);
  /* "75%" reads better than "75 %"; every other unit takes a space. */
  return plc_fmt_join(s, strcmp(u->name, "%") ? " " : "", u->name);
}

/* A ladder of units for one dimension: rung i is used from |v| >= min[i]
 * (base units, rational text) up to the next rung's min. */
typedef struct plc_ladder {
  int e[PLC_NDIM];
  const char *zero;     /* unit for an exact zero */
  const char *unit[8];  /* NULL-terminated */
  const char *min[8];
} plc_ladder;

static const plc_ladder plc_ladders[] = {
  {{1, 0, 0}, "B", {"B", "KB", "MB", "GB", "TB", "PB", NULL},
   {"0", "1000", "1000000", "1000000000", "1000000000000",
    "1000000000000000"}},
  /* seconds from 1 s (a 35 s step is "35 s", not "35000 ms"); minutes and
   * hours keep the integer part below 1000 for long times too */
  {{0, 1, 0}, "s", {"ns", "ms", "s", "min", "h", NULL},
   {"0", "1/1000000", "1", "1000", "60000"}},
  {{1, -1, 0}, "B/s", {"B/s", "KB/s", "MB/s", "GB/s", "TB/s", NULL},
   {"0", "1000", "1000000", "1000000000", "1000000000000"}},
  {{0, 0, 1}, "FLOP",
   {"FLOP", "KFLOP", "MFLOP", "GFLOP", "TFLOP", "PFLOP", "EFLOP", NULL},
   {"0", "1000", "1000000", "1000000000", "1000000000000",
    "1000000000000000", "1000000000000000000"}},
  {{0, -1, 1}, "FLOPS",
   {"FLOPS", "KFLOPS", "MFLOPS", "GFLOPS", "TFLOPS", "PFLOPS", "EFLOPS", NULL},
   {"0", "1000", "1000000", "1000000000", "1000000000000",
    "1000000000000000", "1000000000000000000"}},
};

static const plc_unit *plc_fmt_unit(const char *name)
{
  return plc_unit_lookup(name, strlen(name));
}

/* Sign of a - (rational text t), a >= 0. */
static int plc_fmt_cmp_text(const mpq_t a, const char *t)
{
  mpq_t b;
  mpq_init(b);
  mpq_set_str(b, t, 10);
  mpq_canonicalize(b);
  int c = mpq_cmp(a, b);
  mpq_clear(b);
  return c;
}

/* Would |v|, shown in rung i rounded to sig digits, reach rung i+1's
 * threshold?  Then rung i+1 shows it better: "1 GB", not "1000 MB". */
static int plc_fmt_carries(const plc_ladder *l, size_t i, const mpq_t a,
                           int sig)
{
  if (!l->unit[i + 1])
    return 0;
  const plc_unit *u = plc_fmt_unit(l->unit[i]);
  mpq_t x, s;
  mpz_t q, p;
  long dec;
  mpq_inits(x, s, NULL);
  mpz_inits(q, p, NULL);
  plc_fmt_in_unit(x, a, u);
  plc_fmt_sig_round(q, &dec, x, sig);
  /* x := q * 10^-dec * scale(u), the rounded value in base units */
  mpz_ui_pow_ui(p, 10, (unsigned long)(dec < 0 ? -dec : dec));
  mpq_set_z(x, q);
  mpq_set_z(s, p);
  if (dec >= 0)
    mpq_div(x, x, s);
  else
    mpq_mul(x, x, s);
  mpq_set_str(s, u->scale, 10);
  mpq_canonicalize(s);
  mpq_mul(x, x, s);
  int c = plc_fmt_cmp_text(x, l->min[i + 1]);
  mpq_clears(x, s, NULL);
  mpz_clears(q, p, NULL);
  return c >= 0;
}

/* The rung for a nonzero value: largest threshold <= |v|, then carry. */
static const plc_unit *plc_fmt_pick(const plc_ladder *l, const mpq_t v, int sig)
{
  mpq_t a;
  mpq_init(a);
  mpq_abs(a, v);
  size_t i = 0;
  while (l->unit[i + 1] && plc_fmt_cmp_text(a, l->min[i + 1]) >= 0)
    i++;
  if (plc_fmt_carries(l, i, a, sig))
    i++;
  mpq_clear(a);
  return plc_fmt_unit(l->unit[i]);
}

static const plc_ladder *plc_fmt_ladder(plc_dim d)
{
  for (size_t i = 0; i < sizeof plc_ladders / sizeof plc_ladders[0]; i++)
    if (plc_fmt_dim_is(d, plc_ladders[i].e))
      return &plc_ladders[i];
  return NULL;
}

static char *plc_q_format_exact(const plc_quantity *q)
{
  char *s = plc_fmt_exact(q->v);
  if (plc_dim_is_none(q->dim))
    return s;
  char *d = plc_dim_str(q->dim);
  s = plc_fmt_join(s, " ", d);
  free(d);
  return s;
}

/* Dimensionless whole numbers up to this many digits are counts (a vocab of
 * 152064, a layer count) and print exactly: rounding them misleads. */
#define PLC_FMT_COUNT_DIGITS 24

static int plc_fmt_is_count(const plc_quantity *q)
{
  return plc_dim_is_none(q->dim) && mpz_cmp_ui(mpq_denref(q->v), 1) == 0 &&
         mpz_sizeinbase(mpq_numref(q->v), 10) <= PLC_FMT_COUNT_DIGITS;
}

char *plc_q_format_split(const plc_quantity *q, int sig, char **unit)
{
  sig = plc_fmt_clamp_sig(sig);
  if (plc_dim_is_none(q->dim)) {
    *unit = plc_xstrdup("");
    return plc_fmt_is_count(q) ? plc_fmt_exact(q->v) : plc_fmt_sig(q->v, sig);
  }
  const plc_ladder *l = plc_fmt_ladder(q->dim);
  if (!l) {
    *unit = plc_dim_str(q->dim);
    return plc_fmt_sig(q->v, sig);
  }
  const plc_unit *u = mpq_sgn(q->v) == 0 ? plc_fmt_unit(l->zero)
                                         : plc_fmt_pick(l, q->v, sig);
  mpq_t x;
  mpq_init(x);
  plc_fmt_in_unit(x, q->v, u);
  char *s = plc_fmt_sig(x, sig);
  mpq_clear(x);
  *unit = plc_xstrdup(u->name);
  return s;
}

char *plc_q_format(const plc_quantity *q, int sig, int exact)
{
  if (exact)
    return plc_q_format_exact(q);
  char *unit;
  char *s = plc_q_format_split(q, sig, &unit);
  if (*unit)
    s = plc_fmt_join(s, " ", unit);
  free(unit);
  return s;
}

char *plc_q_format_raw(mpq_srcptr v, int b, int s, int f, int sig, int exact)
{
  plc_quantity q;
  plc_q_init(&q);
  plc_q_set_raw(&q, v, b, s, f);
  char *t = plc_q_format(&q, sig, exact);
  plc_q_clear(&q);
  return t;
}
