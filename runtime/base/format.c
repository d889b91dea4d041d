/* format.c - exact decimal printing of rationals and of quantities with an
 * automatically chosen unit.
 *
 * No floating point: a value is scaled by a power of ten, divided as
 * integers, and the remainder decides the rounding (half away from zero).
 * The decimal exponent for significant digits comes from mpz_sizeinbase and
 * is corrected by exact comparisons, so 9.995 at 3 digits is "10" and never
 * "9.99" or "10.00".
 *
 * Nearly every printed value is a ratio of integers below 2^128, and GMP's
 * calls (a power of ten, products, a division, a string) cost a report most
 * of its instructions: the same steps are done first on unsigned __int128
 * (the "w" functions), every product checked.  Where one would overflow the
 * fast path gives up and the GMP path computes the value, so the text is the
 * same digit for digit either way (tests/unit/test_format.c compares the two
 * over random and edge values, with plc_q_gmp_only set). */
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

/* Text of q * 10^-dec from the nd decimal digits of q >= 0 (dig, "0" for
 * zero), with a leading '-' when neg and q != 0.  dec <= 0 appends -dec
 * zeros; dec > 0 inserts a point dec digits from the right, padding with
 * leading zeros ("0.003"). */
static size_t plc_fmt_render_pad(size_t nd, long dec)
{
  return dec > 0 && (size_t)dec + 1 > nd ? (size_t)dec + 1 - nd : 0;
}

/* Bytes the text takes at most, without the NUL: the padded digits, the
 * zeros appended, a sign and a point. */
static size_t plc_fmt_render_len(size_t nd, long dec)
{
  return plc_fmt_render_pad(nd, dec) + nd + (dec < 0 ? (size_t)-dec : 0) + 2;
}

/* The text written at out (plc_fmt_render_len bytes of room); returns its
 * end, where no NUL is written. */
static char *plc_fmt_render_at(char *out, const char *dig, size_t nd, long dec, int neg)
{
  int zero = nd == 1 && dig[0] == '0';
  size_t pad = plc_fmt_render_pad(nd, dec);
  size_t total = pad + nd; /* digits, padded */
  size_t zeros = dec < 0 && !zero ? (size_t)-dec : 0;
  char *o = out;
  if (neg && !zero)
    *o++ = '-';
  memset(o, '0', pad);
  memcpy(o + pad, dig, nd);
  if (dec > 0) { /* open a gap for the point dec digits from the right */
    size_t ip = total - (size_t)dec; /* digits before the point */
    memmove(o + ip + 1, o + ip, (size_t)dec);
    o[ip] = '.';
    o++;
  }
  o += total;
  memset(o, '0', zeros);
  return o + zeros;
}

static char *plc_fmt_render_dig(const char *dig, size_t nd, long dec, int neg)
{
  char *out = plc_xmalloc(plc_fmt_render_len(nd, dec) + 1);
  *plc_fmt_render_at(out, dig, nd, dec, neg) = '\0';
  return out;
}

/* plc_fmt_render_dig of the GMP integer q >= 0. */
static char *plc_fmt_render(const mpz_t q, long dec, int neg)
{
  char *tmp = plc_xmalloc(mpz_sizeinbase(q, 10) + 2);
  mpz_get_str(tmp, 10, q);
  char *s = plc_fmt_render_dig(tmp, strlen(tmp), dec, neg); /* strlen: exact;
                                                     sizeinbase may be one more */
  free(tmp);
  return s;
}

/* ---- the same on machine integers ---------------------------------- */

__extension__ typedef unsigned __int128 plc_fmt_w;

#define PLC_FMT_W_MAXP10 38 /* 10^38 < 2^128 < 10^39 */

static const unsigned long long plc_fmt_p10_64[20] = {
  1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL, 1000000ULL, 10000000ULL,
  100000000ULL, 1000000000ULL, 10000000000ULL, 100000000000ULL,
  1000000000000ULL, 10000000000000ULL, 100000000000000ULL,
  1000000000000000ULL, 10000000000000000ULL, 100000000000000000ULL,
  1000000000000000000ULL, 10000000000000000000ULL};

/* 10^k, 0 <= k <= PLC_FMT_W_MAXP10. */
static plc_fmt_w plc_fmt_wp10(long k)
{
  if (k <= 19)
    return plc_fmt_p10_64[k];
  return (plc_fmt_w)plc_fmt_p10_64[19] * plc_fmt_p10_64[k - 19];
}

/* |z| as a plc_fmt_w; 0 when it does not fit (or plc_q_gmp_only is set). */
static int plc_fmt_wget(mpz_srcptr z, plc_fmt_w *out)
{
#if GMP_NAIL_BITS == 0 && GMP_LIMB_BITS == 64
  size_t n = mpz_size(z);
  if (n > 2 || plc_q_gmp_only)
    return 0;
  plc_fmt_w hi = n > 1 ? (plc_fmt_w)mpz_getlimbn(z, 1) << 64 : 0;
  *out = hi | (n ? mpz_getlimbn(z, 0) : 0);
  return 1;
#else
  (void)z;
  (void)out;
  return 0;
#endif
}

/* r = a * b; 0 when it overflows. */
static int plc_fmt_wmul(plc_fmt_w *r, plc_fmt_w a, plc_fmt_w b)
{
  return !__builtin_mul_overflow(a, b, r);
}

/* r = a * 10^k, k >= 0; 0 when it overflows. */
static int plc_fmt_wscale(plc_fmt_w *r, plc_fmt_w a, long k)
{
  if (a == 0) {
    *r = 0;
    return 1;
  }
  return k <= PLC_FMT_W_MAXP10 && plc_fmt_wmul(r, a, plc_fmt_wp10(k));
}

/* Number of decimal digits of a > 0: an estimate from the bit length
 * (log10 2 ~ 1233/4096), corrected by comparisons. */
static long plc_fmt_wdigits(plc_fmt_w a)
{
  unsigned long long hi = (unsigned long long)(a >> 64);
  int bits = hi ? 128 - __builtin_clzll(hi)
                : 64 - __builtin_clzll((unsigned long long)a);
  long n = ((long)bits * 1233 >> 12) + 1;
  while (n > 1 && a < plc_fmt_wp10(n - 1))
    n--;
  while (n <= PLC_FMT_W_MAXP10 && a >= plc_fmt_wp10(n))
    n++;
  return n;
}

/* plc_fmt_exp10 of a/d, a, d > 0.  With na and nd digits, a/d lies strictly
 * between 10^(na-nd-1) and 10^(na-nd+1): E is na - nd when a/d >= 10^(na-nd),
 * else one less.  A product that overflows is larger than the other side. */
static long plc_fmt_wexp10(plc_fmt_w a, plc_fmt_w d)
{
  long e = plc_fmt_wdigits(a) - plc_fmt_wdigits(d);
  plc_fmt_w t;
  int ge; /* a/d >= 10^e */
  if (e >= 0)
    ge = plc_fmt_wscale(&t, d, e) && a >= t;
  else
    ge = !plc_fmt_wscale(&t, a, -e) || t >= d;
  return ge ? e : e - 1;
}

/* plc_fmt_round of a/d (a >= 0, d > 0); 0 when a product overflows. */
static int plc_fmt_wround(plc_fmt_w *q, plc_fmt_w a, plc_fmt_w d, long dec)
{
  plc_fmt_w n = a, m = d, r;
  if (dec >= 0 ? !plc_fmt_wscale(&n, a, dec) : !plc_fmt_wscale(&m, d, -dec))
    return 0;
  if (!(n >> 64) && !(m >> 64)) { /* one machine division, not a call */
    unsigned long long n64 = (unsigned long long)n, m64 = (unsigned long long)m;
    *q = n64 / m64;
    r = n64 % m64;
  } else {
    *q = n / m;
    r = n - *q * m;
  }
  if (r >= m - r) /* remainder >= half: away from zero (q + 1 fits: r > 0) */
    (*q)++;
  return 1;
}

/* Decimal digits of q into buf (40 bytes at least), NUL-terminated; returns
 * their number. */
static size_t plc_fmt_wstr(char *buf, plc_fmt_w q)
{
  char tmp[40];
  char *p = tmp + sizeof tmp;
  while (q >> 64) { /* 19 digits at a time from the right */
    unsigned long long c = (unsigned long long)(q % plc_fmt_p10_64[19]);
    q /= plc_fmt_p10_64[19];
    for (int i = 0; i < 19; i++, c /= 10)
      *--p = (char)('0' + c % 10);
  }
  unsigned long long x = (unsigned long long)q;
  do
    *--p = (char)('0' + x % 10);
  while (x /= 10);
  size_t n = (size_t)(tmp + sizeof tmp - p);
  memcpy(buf, p, n);
  buf[n] = '\0';
  return n;
}

/* plc_fmt_render of q. */
static char *plc_fmt_wrender(plc_fmt_w q, long dec, int neg)
{
  char dig[40];
  size_t nd = plc_fmt_wstr(dig, q);
  return plc_fmt_render_dig(dig, nd, dec, neg);
}

static void plc_fmt_trim(char *s);
static char *plc_fmt_trim_end(char *s, char *end);

/* plc_fmt_sig of (neg ? -a : a)/d, a, d > 0, sig clamped; NULL when a
 * product overflows. */
static char *plc_fmt_wsig(plc_fmt_w a, plc_fmt_w d, int neg, int sig)
{
  plc_fmt_w q;
  long dec = sig - 1 - plc_fmt_wexp10(a, d);
  if (!plc_fmt_wround(&q, a, d, dec))
    return NULL;
  char *s = plc_fmt_wrender(q, dec, neg);
  plc_fmt_trim(s);
  return s;
}

/* A unit's scale text ("1000", "1/8") as n/d (plc_unit_scale_long); 0
 * for anything else. */
static int plc_fmt_wtext(const char *t, plc_fmt_w *n, plc_fmt_w *d)
{
  long ln, ld;
  if (!plc_unit_scale_long(t, &ln, &ld))
    return 0;
  *n = (plc_fmt_w)ln;
  *d = (plc_fmt_w)ld;
  return 1;
}

/* "10.500" -> "10.5", "10.0" -> "10"; strings without a point unchanged. */
/* The same on s[0..end), returning the new end (no NUL written). */
static char *plc_fmt_trim_end(char *s, char *end)
{
  char *pt = memchr(s, '.', (size_t)(end - s));
  if (!pt)
    return end;
  while (end > pt + 1 && end[-1] == '0')
    end--;
  return end == pt + 1 ? pt : end;
}

static void plc_fmt_trim(char *s)
{
  *plc_fmt_trim_end(s, s + strlen(s)) = '\0';
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
  plc_fmt_w a, d, wq;
  if (plc_fmt_wget(mpq_numref(v), &a) && plc_fmt_wget(mpq_denref(v), &d) &&
      plc_fmt_wround(&wq, a, d, dec))
    return plc_fmt_wrender(wq, dec, mpq_sgn(v) < 0);
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
  plc_fmt_w a, d;
  if (plc_fmt_wget(mpq_numref(v), &a) && plc_fmt_wget(mpq_denref(v), &d)) {
    char *s = plc_fmt_wsig(a, d, mpq_sgn(v) < 0, sig);
    if (s)
      return s;
  }
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
  plc_fmt_w n, d;
  if (plc_fmt_wget(mpq_numref(v), &n) && plc_fmt_wget(mpq_denref(v), &d)) {
    char buf[84], *o = buf; /* "-", 39 digits, "/", 39 digits, NUL */
    if (mpq_sgn(v) < 0)
      *o++ = '-';
    o += plc_fmt_wstr(o, n);
    if (d != 1) {
      *o++ = '/';
      plc_fmt_wstr(o, d);
    }
    return plc_xstrdup(buf);
  }
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

/* plc_fmt_sig(v / (sn/sd), sig) on machine integers; NULL when v or a
 * product does not fit. */
static char *plc_fmt_wsig_in(const mpq_t v, plc_fmt_w sn, plc_fmt_w sd, int sig)
{
  plc_fmt_w a, d, xa, xd;
  if (!plc_fmt_wget(mpq_numref(v), &a) || !plc_fmt_wget(mpq_denref(v), &d))
    return NULL;
  if (a == 0)
    return plc_xstrdup("0");
  if (!plc_fmt_wmul(&xa, a, sd) || !plc_fmt_wmul(&xd, d, sn))
    return NULL;
  return plc_fmt_wsig(xa, xd, mpq_sgn(v) < 0, plc_fmt_clamp_sig(sig));
}

char *plc_q_format_in(const plc_quantity *q, const plc_unit *u, int sig)
{
  if (!u || !plc_fmt_dim_is(q->dim, u->e))
    return NULL;
  plc_fmt_w sn, sd;
  char *s = plc_fmt_wtext(u->scale, &sn, &sd) ? plc_fmt_wsig_in(q->v, sn, sd, sig)
                                              : NULL;
  if (!s) {
    mpq_t x;
    mpq_init(x);
    plc_fmt_in_unit(x, q->v, u);
    s = plc_fmt_sig(x, sig);
    mpq_clear(x);
  }
  /* "75%" reads better than "75 %"; every other unit takes a space. */
  return plc_fmt_join(s, strcmp(u->name, "%") ? " " : "", u->name);
}

/* A ladder of units for one dimension: rung i is used from |v| >= min[i]
 * (base units, rational text) up to the next rung's min.  The fast path
 * has the same numbers as integers: rung i's threshold mn/md and its
 * unit's scale sn/sd (units.c's table; tests/unit/test_format.c checks
 * that both paths agree on every rung). */
typedef struct plc_ladder {
  int e[PLC_NDIM];
  const char *zero;     /* unit for an exact zero */
  const char *unit[8];  /* NULL-terminated */
  const char *min[8];
  unsigned long long mn[8], md[8], sn[8], sd[8];
} plc_ladder;

#define PLC_K 1000ULL
#define PLC_M 1000000ULL
#define PLC_G 1000000000ULL
#define PLC_T 1000000000000ULL
#define PLC_P 1000000000000000ULL
#define PLC_E 1000000000000000000ULL

static const plc_ladder plc_ladders[] = {
  {{1, 0, 0}, "B", {"B", "KB", "MB", "GB", "TB", "PB", NULL},
   {"0", "1000", "1000000", "1000000000", "1000000000000",
    "1000000000000000"},
   {0, PLC_K, PLC_M, PLC_G, PLC_T, PLC_P}, {1, 1, 1, 1, 1, 1},
   {1, PLC_K, PLC_M, PLC_G, PLC_T, PLC_P}, {1, 1, 1, 1, 1, 1}},
  /* seconds from 1 s (a 35 s step is "35 s", not "35000 ms"); minutes and
   * hours keep the integer part below 1000 for long times too */
  {{0, 1, 0}, "s", {"ns", "ms", "s", "min", "h", NULL},
   {"0", "1/1000000", "1", "1000", "60000"},
   {0, 1, 1, PLC_K, 60 * PLC_K}, {1, PLC_M, 1, 1, 1},
   {1, 1, 1, 60, 3600}, {PLC_G, PLC_K, 1, 1, 1}},
  {{1, -1, 0}, "B/s", {"B/s", "KB/s", "MB/s", "GB/s", "TB/s", NULL},
   {"0", "1000", "1000000", "1000000000", "1000000000000"},
   {0, PLC_K, PLC_M, PLC_G, PLC_T}, {1, 1, 1, 1, 1},
   {1, PLC_K, PLC_M, PLC_G, PLC_T}, {1, 1, 1, 1, 1}},
  {{0, 0, 1}, "FLOP",
   {"FLOP", "KFLOP", "MFLOP", "GFLOP", "TFLOP", "PFLOP", "EFLOP", NULL},
   {"0", "1000", "1000000", "1000000000", "1000000000000",
    "1000000000000000", "1000000000000000000"},
   {0, PLC_K, PLC_M, PLC_G, PLC_T, PLC_P, PLC_E}, {1, 1, 1, 1, 1, 1, 1},
   {1, PLC_K, PLC_M, PLC_G, PLC_T, PLC_P, PLC_E}, {1, 1, 1, 1, 1, 1, 1}},
  {{0, -1, 1}, "FLOPS",
   {"FLOPS", "KFLOPS", "MFLOPS", "GFLOPS", "TFLOPS", "PFLOPS", "EFLOPS", NULL},
   {"0", "1000", "1000000", "1000000000", "1000000000000",
    "1000000000000000", "1000000000000000000"},
   {0, PLC_K, PLC_M, PLC_G, PLC_T, PLC_P, PLC_E}, {1, 1, 1, 1, 1, 1, 1},
   {1, PLC_K, PLC_M, PLC_G, PLC_T, PLC_P, PLC_E}, {1, 1, 1, 1, 1, 1, 1}},
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

/* plc_fmt_pick on machine integers, for |v| = a/d > 0: the rung's index,
 * or -1 when a product overflows. */
static int plc_fmt_wpick(const plc_ladder *l, plc_fmt_w a, plc_fmt_w d, int sig)
{
  int i = 0;
  plc_fmt_w x, y;
  for (; l->unit[i + 1]; i++) { /* |v| >= min[i+1]: a * md >= mn * d */
    if (!plc_fmt_wmul(&x, a, l->md[i + 1]) || !plc_fmt_wmul(&y, l->mn[i + 1], d))
      return -1;
    if (x < y)
      break;
  }
  if (!l->unit[i + 1])
    return i;
  /* plc_fmt_carries: |v| in rung i's unit rounded, q * 10^-dec, times the
   * scale sn/sd against min[i+1] = mn/md, that is
   * q * sn * md * 10^-dec >= mn * sd, with the power on the side it fits. */
  plc_fmt_w q;
  if (!plc_fmt_wmul(&x, a, l->sd[i]) || !plc_fmt_wmul(&y, d, l->sn[i]))
    return -1;
  long dec = sig - 1 - plc_fmt_wexp10(x, y);
  if (!plc_fmt_wround(&q, x, y, dec) || !plc_fmt_wmul(&x, q, l->sn[i]) ||
      !plc_fmt_wmul(&x, x, l->md[i + 1]) || !plc_fmt_wmul(&y, l->mn[i + 1], l->sd[i]))
    return -1;
  if (dec < 0 ? !plc_fmt_wscale(&x, x, -dec) : !plc_fmt_wscale(&y, y, dec))
    return -1;
  return x >= y ? i + 1 : i;
}

/* plc_q_format_split's number for a value with ladder l, unit name in
 * *unit; NULL when the fast path cannot tell. */
static char *plc_fmt_wsplit(const mpq_t v, const plc_ladder *l, int sig,
                            const char **unit)
{
  plc_fmt_w a, d;
  if (!plc_fmt_wget(mpq_numref(v), &a) || !plc_fmt_wget(mpq_denref(v), &d))
    return NULL;
  if (a == 0) {
    *unit = l->zero;
    return plc_xstrdup("0");
  }
  int i = plc_fmt_wpick(l, a, d, sig);
  if (i < 0)
    return NULL;
  char *s = plc_fmt_wsig_in(v, l->sn[i], l->sd[i], sig);
  *unit = l->unit[i];
  return s;
}

/* plc_q_format's text ("<number> <unit>") for a value with ladder l, in one
 * allocation; NULL when the fast path cannot tell. */
static char *plc_fmt_wformat(const mpq_t v, const plc_ladder *l, int sig)
{
  plc_fmt_w a, d, q;
  if (!plc_fmt_wget(mpq_numref(v), &a) || !plc_fmt_wget(mpq_denref(v), &d))
    return NULL;
  char dig[40];
  size_t nd = 1;
  long dec = 0;
  const char *unit = l->zero;
  dig[0] = '0'; /* zero: "0" in the zero unit */
  if (a != 0) {
    int i = plc_fmt_wpick(l, a, d, sig);
    if (i < 0 || !plc_fmt_wmul(&a, a, l->sd[i]) || !plc_fmt_wmul(&d, d, l->sn[i]))
      return NULL;
    dec = sig - 1 - plc_fmt_wexp10(a, d);
    if (!plc_fmt_wround(&q, a, d, dec))
      return NULL;
    nd = plc_fmt_wstr(dig, q);
    unit = l->unit[i];
  }
  size_t ul = strlen(unit);
  char *out = plc_xmalloc(plc_fmt_render_len(nd, dec) + 1 + ul + 1);
  char *e = plc_fmt_trim_end(out, plc_fmt_render_at(out, dig, nd, dec, mpq_sgn(v) < 0));
  *e++ = ' ';
  memcpy(e, unit, ul + 1);
  return out;
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
  const char *name;
  char *fast = plc_fmt_wsplit(q->v, l, sig, &name);
  if (fast) {
    *unit = plc_xstrdup(name);
    return fast;
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
  const plc_ladder *l = plc_fmt_ladder(q->dim);
  char *fast = l ? plc_fmt_wformat(q->v, l, plc_fmt_clamp_sig(sig)) : NULL;
  if (fast)
    return fast;
  char *unit;
  char *s = plc_q_format_split(q, sig, &unit);
  if (*unit)
    s = plc_fmt_join(s, " ", unit);
  free(unit);
  return s;
}

char *plc_q_format_raw(mpq_srcptr v, int b, int s, int f, int sig, int exact)
{
  /* a quantity that shares v's limbs (a struct copy, read only and never
   * cleared): formatting does not need a copy of the value */
  plc_quantity q;
  q.v[0] = *v;
  q.dim = plc_dim_none();
  q.dim.e[PLC_DIM_BYTE] = b;
  q.dim.e[PLC_DIM_SEC] = s;
  q.dim.e[PLC_DIM_FLOP] = f;
  return plc_q_format(&q, sig, exact);
}
