/* test_eval.c - CUnit tests of the evaluator on plans held in memory: exact
 * arithmetic with units, functions, conditionals, lists, derived
 * declarations, and the located errors of bad expressions. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "cu_main.h"
#include "plan_fixture.h"
#include "schema.h"

#include <stdarg.h>

/* Is let `name` exactly num/den in the dimension bytes^b s^s FLOP^fl? */
static int let_is(plc_fx *f, const char *name, long num, unsigned long den, int b, int s, int fl)
{
  plc_value *v = plc_fx_let(f, name);
  return plc_fx_is(v, num, den) && v->dim_known && v->dim.e[0] == b && v->dim.e[1] == s &&
         v->dim.e[2] == fl;
}

/* Lets of f that must be dimensionless integers, with their values: each
 * failure names its let. */
typedef struct int_let {
  const char *name;
  long v;
} int_let;

static void check_int_lets(plc_fx *f, const int_let *lets, size_t n)
{
  for (size_t i = 0; i < n; i++)
    PLC_CU_ASSERT_MSG(let_is(f, lets[i].name, lets[i].v, 1, 0, 0, 0), lets[i].name);
}

#define CHECK_INT_LETS(f, ...)                                          \
  do {                                                                  \
    static const int_let lets_[] = {__VA_ARGS__};                       \
    check_int_lets((f), lets_, sizeof lets_ / sizeof lets_[0]);         \
  } while (0)

/* Rationals stay exact: 1/3 * 3 is 1, not 0.999...; -7/2 is -7/2. */
static void test_exact(void)
{
  plc_fx f;
  CU_ASSERT_EQUAL(plc_fx_load(&f, "let third = 1 / 3\nlet one = third * 3\n"
                                  "let neg = -7 / 2\nlet p = 2^10\n"), 0);
  CU_ASSERT(let_is(&f, "third", 1, 3, 0, 0, 0));
  CU_ASSERT(let_is(&f, "one", 1, 1, 0, 0, 0));
  CU_ASSERT(let_is(&f, "neg", -7, 2, 0, 0, 0));
  CU_ASSERT(let_is(&f, "p", 1024, 1, 0, 0, 0));
  plc_fx_free(&f);
}

/* The evaluator computes small rationals on machine integers and falls
 * back to GMP when a long would overflow: the results must be the same
 * canonical rationals either way.  By hand: 6 / -4 = -3/2 (the sign on the
 * numerator); 1/6 + 1/10 = 5/30 + 3/30 = 4/15; 3/4 - 3/4 = 0/1;
 * (1/3) / (-2/9) = 9/-6 = -3/2; LONG_MAX + 1 - 1 = LONG_MAX (the sum is
 * 2^63); -LONG_MAX - 1 is -2^63 (no |n| in a long), + 1 gives -LONG_MAX;
 * 2^62 * 2 = 2^63, minus LONG_MAX = 1; 3037000500^2 = 9223372037000250000
 * > LONG_MAX, so (3037000500/7) * (3037000500/11) * 77 - that is 0. */
/* Is let `name` the dimensionless rational num/den in lowest terms, with
 * its sign on the numerator (GMP's canonical form, not only equal)? */
static int let_canon(plc_fx *f, const char *name, long num, unsigned long den)
{
  plc_value *v = plc_fx_let(f, name);
  return plc_fx_is(v, num, den) && mpz_cmp_si(mpq_numref(v->q), num) == 0 &&
         mpz_cmp_ui(mpq_denref(v->q), den) == 0 && v->dim_known && plc_dim_is_none(v->dim);
}

static void test_small_rationals(void)
{
  plc_fx f;
  CU_ASSERT_EQUAL(plc_fx_load(&f, "let d = 6 / -4\nlet s = 1/6 + 1/10\nlet z = 3/4 - 3/4\n"
                                  "let r = (1/3) / (-2/9)\n"
                                  "let m = 9223372036854775807 + 1 - 1\n"
                                  "let q = -9223372036854775807 - 1 + 1\n"
                                  "let big = 4611686018427387904 * 2 - 9223372036854775807\n"
                                  "let p = (3037000500 / 7) * (3037000500 / 11) * 77"
                                  " - 9223372037000250000\n"), 0);
  CU_ASSERT(let_canon(&f, "d", -3, 2));
  CU_ASSERT(let_canon(&f, "s", 4, 15));
  CU_ASSERT(let_canon(&f, "z", 0, 1));
  CU_ASSERT(let_canon(&f, "r", -3, 2));
  CU_ASSERT(let_canon(&f, "m", 9223372036854775807L, 1));
  CU_ASSERT(let_canon(&f, "q", -9223372036854775807L, 1));
  CU_ASSERT(let_canon(&f, "big", 1, 1));
  CU_ASSERT(let_canon(&f, "p", 0, 1));
  plc_fx_free(&f);
}

/* Units convert to base units exactly: 3 ms + 2 ms = 1/200 s; 400 Gbps =
 * 400e9 / 8 B/s = 5e10 B/s; 1 GB / 100 GB/s = 1/100 s; 1 GiB = 2^30 B;
 * 50% = 1/2; 2e12 FLOP / 50 TFLOPS = 1/25 s. */
static void test_units(void)
{
  plc_fx f;
  CU_ASSERT_EQUAL(plc_fx_load(&f, "let t = 3 ms + 2 ms\nlet bw = 400 Gbps\n"
                                  "let r = 1 GB / (100 GB/s)\nlet gib = 1 GiB\n"
                                  "let pct = 50%\nlet mm = 2e12 FLOP / (50 TFLOPS)\n"), 0);
  CU_ASSERT(let_is(&f, "t", 1, 200, 0, 1, 0));
  CU_ASSERT(let_is(&f, "bw", 50000000000L, 1, 1, -1, 0));
  CU_ASSERT(let_is(&f, "r", 1, 100, 0, 1, 0));
  CU_ASSERT(let_is(&f, "gib", 1073741824L, 1, 1, 0, 0));
  CU_ASSERT(let_is(&f, "pct", 1, 2, 0, 0, 0));
  CU_ASSERT(let_is(&f, "mm", 1, 25, 0, 1, 0));
  plc_fx_free(&f);
}

/* User functions, builtins, ?: and lists: sq(3) = 3*3 + 1 = 10;
 * max(3, 7) = 7; 2 > 1 picks 10; l[1] = 2 (from 0); sum = 6; len = 3;
 * floor(7/2) = 3, ceil(7/2) = 4. */
static void test_functions(void)
{
  plc_fx f;
  CU_ASSERT_EQUAL(plc_fx_load(&f, "let sq(x) = x * x + 1\nlet y = sq(3)\n"
                                  "let m = max(3, 7)\nlet c = 2 > 1 ? 10 : 20\n"
                                  "let l = [1, 2, 3]\nlet second = l[1]\n"
                                  "let total = sum(l)\nlet n = len(l)\n"
                                  "let fl = floor(7 / 2)\nlet ce = ceil(7 / 2)\n"), 0);
  CHECK_INT_LETS(&f, {"y", 10}, {"m", 7}, {"c", 10}, {"second", 2}, {"total", 6},
                 {"n", 3}, {"fl", 3}, {"ce", 4});
  plc_fx_free(&f);
}

/* A call whose arguments are all positional, one per parameter, is bound
 * without the general way's tables (eval.c, plc_eval_bind_positional):
 * it gives what the same call with named arguments, a default, or both
 * gives the general way. */
static void test_positional(void)
{
  plc_fx f;
  CU_ASSERT_EQUAL(plc_fx_load(&f, "let f(a, b, c) = a * 100 + b * 10 + c\n"
                                  "let g(a, b = 7) = a * 10 + b\n"
                                  "let p = f(1, 2, 3)\nlet q = f(c = 3, a = 1, b = 2)\n"
                                  "let r = f(1, c = 3, b = 2)\nlet s = g(4)\n"
                                  "let t = g(4, 5)\nlet u = g(b = 5, a = 4)\n"
                                  "let w = f(g(1, 2), f(0, 0, 2), 3 s / 1 s)\n"), 0);
  CU_ASSERT_STRING_EQUAL_FATAL(plc_fx_diags(&f), "");
  CHECK_INT_LETS(&f, {"p", 123}, {"q", 123}, {"r", 123}, {"s", 47}, {"t", 45}, {"u", 45},
                 {"w", 1223});
  plc_fx_free(&f);
}

/* A derived declaration overrides a field and the base's field that reads
 * it sees the new value (late binding, one level): D.e = 10 * 2 = 20 while
 * C.e stays 1 * 2 = 2. */
static void test_derived(void)
{
  plc_fx f;
  CU_ASSERT_EQUAL(plc_fx_load(&f, "model C { v = 1; e = v * 2 }\nmodel D = C { v = 10 }\n"
                                  "let ce = C.e\nlet de = D.e\nlet dv = D.v\n"), 0);
  CHECK_INT_LETS(&f, {"ce", 2}, {"de", 20}, {"dv", 10});
  plc_fx_free(&f);
}

/* Each bad expression is one located error with its message. */
static void test_errors(void)
{
  static const struct { const char *text, *want; } cases[] = {
    {"let z = 1 / 0\n", "test.plan:1:11: error: division by zero"},
    {"let a = b\nlet b = a\n", "error: 'a' is defined in terms of itself"},
    {"let bad = 1 ms + 1 B\n", "test.plan:1:16: error: cannot add s and B: dimensions differ"},
    {"let f(x) = x\nlet w = f(1, 2)\n", "error: too many arguments to function 'f'"},
    {"let q = nosuch + 1\n", "test.plan:1:9: error: unknown name 'nosuch'"},
    {"model M { layers { dense = 2 } }\nlet k = M.nofield\n",
     "test.plan:2:11: error: model 'M' has no field 'nofield'"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    plc_fx f;
    int errors = plc_fx_load(&f, cases[i].text);
    PLC_CU_ASSERT_MSG(errors == 1, cases[i].text);
    PLC_CU_ASSERT_MSG(plc_fx_reported(&f, cases[i].want), plc_fx_diags(&f));
    plc_fx_free(&f);
  }
}

/* A let that reads a train's result is evaluated after the train: the
 * run of test_lower.c's plan, whose step is 1310.022 ms (test_analysis.c
 * derives it), gives step_time = 655011/500000 s and mu = 8 / (2 x 1) = 4. */
static void test_results(void)
{
  plc_fx f;
  CU_ASSERT_EQUAL_FATAL(plc_fx_load(&f, PLC_FX_MACHINE
    "model tiny { layers { dense = 4 } }\n"
    "framework fw { template dense {\n"
    "  op mm: compute { flops = 2e12 FLOP }\n"
    "  op ar: all_reduce(tp) { size = 1 GB; after = [mm] }\n"
    "  backward {\n"
    "    op bmm: compute { flops = 4e12 FLOP }\n"
    "    op g: all_reduce(dp) { size = 1 GB; stream = grad; once = true; after = [bmm] }\n"
    "  } } }\n"
    "train t { model = tiny; cluster = box; framework = fw; tp = 2; dp = 2; pp = 2\n"
    "  micro_batch = 1; global_batch = 8; seq = 1024 }\n"
    "let st = t.step_time\nlet mu = t.mu\n"), 0);
  CU_ASSERT(let_is(&f, "st", 655011, 500000, 0, 1, 0));
  CU_ASSERT(let_is(&f, "mu", 4, 1, 0, 0, 0));
  plc_fx_free(&f);
}

/* Interned names: one copy per text, carrying the hash a copy made
 * elsewhere gets too; a copy (a name from C) and a pointer into the middle
 * of an interned name are not taken for interned ones.  Environments find
 * a name whichever copy binds it and whichever looks it up, small (scanned)
 * or large (indexed, past 16 names), the latest binding of a name winning. */
static void test_names(void)
{
  plc_arena *ar = plc_arena_new();
  const char *a = plc_name_intern(ar, "hidden_size_xy", 6), *b = plc_name_intern(ar, "hidden", 6);
  const char *c = plc_name_intern(ar, "heads", 5), *long_name =
      plc_name_intern(ar, "a_name_of_twenty_four_ch", 24);
  char copy[] = "hidden";
  CU_ASSERT_PTR_EQUAL(a, b);
  CU_ASSERT_STRING_EQUAL(a, "hidden");
  CU_ASSERT_PTR_NOT_EQUAL(a, c);
  CU_ASSERT_EQUAL(plc_name_hash(a), plc_name_fnv(copy));
  CU_ASSERT_EQUAL(plc_name_interned_hash(a), plc_name_fnv(copy));
  CU_ASSERT_EQUAL(plc_name_interned_hash(copy), 0);
  CU_ASSERT_EQUAL(plc_name_interned_hash(long_name + 8), 0); /* 8-aligned, inside a name */
  CU_ASSERT_EQUAL(plc_name_hash(long_name + 8), plc_name_fnv("f_twenty_four_ch"));

  plc_diag d = {0};
  plc_eval ev;
  plc_eval_init(&ev, ar, &d);
  plc_env *small = plc_env_new(&ev, NULL), *big = plc_env_new(&ev, small);
  plc_binding *h1 = plc_env_bind(&ev, small, copy, plc_value_any(&ev));
  CU_ASSERT_PTR_EQUAL(plc_env_find_local(small, a), h1);  /* interned finds a copy's */
  plc_binding *h2 = plc_env_bind(&ev, small, a, plc_value_any(&ev));
  CU_ASSERT_PTR_EQUAL(plc_env_find_local(small, "hidden"), h2); /* the latest wins */
  CU_ASSERT_PTR_NULL(plc_env_find_local(small, c));
  char names[40][16];
  for (int i = 0; i < 40; i++) {
    snprintf(names[i], sizeof names[i], "n%d", i);
    plc_env_bind(&ev, big, i % 2 ? names[i] : plc_name_intern(ar, names[i], strlen(names[i])),
                 plc_value_any(&ev));
  }
  plc_binding *h3 = plc_env_bind(&ev, big, "n7", plc_value_any(&ev)); /* shadows n7 */
  CU_ASSERT_PTR_NOT_NULL(big->index);
  for (int i = 0; i < 40; i++) {
    char other[16];
    memcpy(other, names[i], sizeof other);
    plc_binding *x = plc_env_find_local(big, plc_name_intern(ar, other, strlen(other)));
    CU_ASSERT(x && !strcmp(x->name, names[i]) && x == plc_env_find_local(big, other));
  }
  CU_ASSERT_PTR_EQUAL(plc_env_find_local(big, "n7"), h3);
  CU_ASSERT_PTR_NULL(plc_env_find_local(big, "n40"));
  CU_ASSERT_PTR_EQUAL(plc_env_lookup(big, "hidden"), h2); /* through the parent */
  plc_arena_free(ar);
}

/* The latest binding of name in env, by every binding's characters. */
static plc_binding *scan_latest(plc_env *env, const char *name)
{
  for (size_t i = env->n; i-- > 0;)
    if (!strcmp(env->b[i].name, name))
      return &env->b[i];
  return NULL;
}

/* Every word of the list, looked up as a copy (a name from C: not
 * hashed), is found where a scan of env's bindings finds it. */
static int c_names_found(plc_env *env, const char *const *words, int n)
{
  int ok = 1;
  for (int i = 0; i < n; i++) {
    char copy[16];
    snprintf(copy, sizeof copy, "%s", words[i]);
    ok &= plc_env_find_local(env, copy) == scan_latest(env, copy);
  }
  return ok;
}

/* Names from C in small envs, which the first letters of the names bound
 * there rule out (plc_env.firsts, made as names are looked up): found
 * as a scan by their characters finds them, with names (interned or not)
 * bound between the lookups, shadowed, and bound after a copy. */
static void test_c_names(void)
{
  static const char *const words[] = {"time", "flops", "bytes", "after", "once", "useful",
                                      "wgrad", "chunk", "stream", "size", "a", "b", "tp",
                                      "ab", "ba", "_x", "t", "fl", "", "A"};
  const int nw = (int)(sizeof words / sizeof words[0]);
  plc_arena *ar = plc_arena_new();
  plc_diag d = {0};
  plc_eval ev;
  plc_eval_init(&ev, ar, &d);
  unsigned seed = 12345;
  int ok = 1, found = 0, absent = 0;
  for (int round = 0; round < 300; round++) {
    plc_env *env = plc_env_new(&ev, NULL);
    int n = 1 + (int)((seed = seed * 1103515245u + 12345u) >> 16) % 15;
    for (int k = 0; k < n; k++) {
      const char *w = words[((seed = seed * 1103515245u + 12345u) >> 16) % (unsigned)nw];
      if ((seed >> 20) & 1)
        w = plc_name_intern(ar, w, strlen(w));
      plc_env_bind(&ev, env, w, plc_value_any(&ev));
      if ((seed >> 21) & 1) /* looked up now and then, so the bits are made in steps */
        ok &= c_names_found(env, words, nw);
    }
    ok &= c_names_found(env, words, nw);
    for (int i = 0; i < nw; i++)
      scan_latest(env, words[i]) ? found++ : absent++;
    plc_env *copy = plc_env_new(&ev, NULL);
    plc_env_copy(&ev, copy, env);
    ok &= c_names_found(copy, words, nw);
    plc_env_bind(&ev, copy, words[round % nw], plc_value_any(&ev));
    ok &= c_names_found(copy, words, nw) && c_names_found(env, words, nw);
  }
  CU_ASSERT(ok);
  CU_ASSERT(found > 1000 && absent > 1000); /* both kinds of lookup were made */
  plc_arena_free(ar);
}

/* Interned names in indexed envs (the index tried at its first slot
 * inline, else probed): found where a scan finds them, with names
 * shadowed, slots taken by other names, the index grown, and copies. */
static void test_indexed_names(void)
{
  plc_arena *ar = plc_arena_new();
  plc_diag d = {0};
  plc_eval ev;
  plc_eval_init(&ev, ar, &d);
  enum { NW = 400 };
  const char *w[NW];
  for (int i = 0; i < NW; i++) {
    char n[16];
    snprintf(n, sizeof n, "v%d", i);
    w[i] = plc_name_intern(ar, n, strlen(n));
  }
  unsigned seed = 777;
  int ok = 1, found = 0;
  for (int round = 0; round < 40; round++) {
    plc_env *env = plc_env_new(&ev, NULL);
    int n = 16 + (int)((seed = seed * 1103515245u + 12345u) >> 16) % 600;
    for (int k = 0; k < n; k++) {
      /* names drawn from a few hundred: many are bound twice */
      plc_env_bind(&ev, env, w[((seed = seed * 1103515245u + 12345u) >> 16) % NW],
                   plc_value_any(&ev));
      if (k % 37 == 0)
        for (int i = 0; i < NW; i++)
          ok &= plc_env_find_local(env, w[i]) == scan_latest(env, w[i]);
    }
    plc_env *copy = plc_env_new(&ev, NULL);
    plc_env_copy(&ev, copy, env);
    plc_env_bind(&ev, copy, w[round], plc_value_any(&ev));
    for (int i = 0; i < NW; i++) {
      ok &= plc_env_find_local(env, w[i]) == scan_latest(env, w[i]);
      ok &= plc_env_find_local(copy, w[i]) == scan_latest(copy, w[i]);
      found += scan_latest(env, w[i]) != NULL;
    }
  }
  CU_ASSERT(ok);
  CU_ASSERT(found > 4000 && found < 40 * NW); /* present and absent names */
  plc_arena_free(ar);
}

/* The arena the evaluator allocates from: a first allocation of 0 bytes
 * is a pointer of its own; zeroed memory is zero even right after raw
 * memory that was written, and after an allocation larger than a chunk. */
static void test_arena(void)
{
  plc_arena *ar = plc_arena_new();
  unsigned char *z = plc_arena_alloc(ar, 0);
  CU_ASSERT_PTR_NOT_NULL(z);
  unsigned char *raw = plc_arena_alloc_raw(ar, 3000);
  memset(raw, 0xab, 3000);
  unsigned char *p = plc_arena_alloc(ar, 5000), *big = plc_arena_alloc(ar, 200000);
  unsigned char *after = plc_arena_alloc(ar, 100);
  int nonzero = 0;
  for (int i = 0; i < 5000; i++)
    nonzero += p[i] != 0;
  for (int i = 0; i < 200000; i++)
    nonzero += big[i] != 0;
  for (int i = 0; i < 100; i++)
    nonzero += after[i] != 0;
  CU_ASSERT_EQUAL(nonzero, 0);
  CU_ASSERT(p >= raw + 3000 || p + 5000 <= raw); /* no overlap */
  CU_ASSERT_EQUAL((uintptr_t)big % 16, 0);
  plc_arena_free(ar);
}

/* Schema fields by name hash, and their numeric defaults parsed once: a
 * device's efficiency defaults to 1 and its memory_reserve to 0 (schema.c);
 * a link's all_reduce to its bw, a field's name, so no number. */
static void test_schema(void)
{
  const plc_field *eff = plc_schema_field(PLC_DECL_DEVICE, "efficiency");
  const plc_field *res = plc_schema_field_h(PLC_DECL_DEVICE, "memory_reserve",
                                            plc_name_fnv("memory_reserve"));
  const plc_field *ar = plc_schema_field(PLC_DECL_LINK, "all_reduce");
  CU_ASSERT_FATAL(eff && res && ar);
  CU_ASSERT_STRING_EQUAL(eff->name, "efficiency");
  CU_ASSERT_PTR_NULL(plc_schema_field(PLC_DECL_DEVICE, "efficiencyx"));
  CU_ASSERT_PTR_NULL(plc_schema_field(PLC_DECL_MODEL, "hidden")); /* models: free-form */
  mpq_srcptr one = plc_schema_default_num(PLC_DECL_DEVICE, eff);
  mpq_srcptr zero = plc_schema_default_num(PLC_DECL_DEVICE, res);
  CU_ASSERT(one && mpq_cmp_ui(one, 1, 1) == 0);
  CU_ASSERT(zero && mpq_sgn(zero) == 0);
  CU_ASSERT_PTR_NULL(plc_schema_default_num(PLC_DECL_LINK, ar));
  CU_ASSERT_PTR_NULL(plc_schema_default_num(PLC_DECL_LINK, eff)); /* not the link's */
  for (size_t i = 0; plc_schema_at(PLC_DECL_TRAIN, i); i++) /* every field found by name */
    CU_ASSERT_PTR_EQUAL(plc_schema_field(PLC_DECL_TRAIN, plc_schema_at(PLC_DECL_TRAIN, i)->name),
                        plc_schema_at(PLC_DECL_TRAIN, i));
}

/* ---- the call memo against plain evaluation, on random plans ---------- */

static unsigned long memo_rng;

static unsigned memo_rand(unsigned n)
{
  memo_rng = memo_rng * 6364136223846793005UL + 1442695040888963407UL;
  return (unsigned)(memo_rng >> 33) % n;
}

typedef struct memo_buf {
  char s[1 << 16];
  size_t n;
} memo_buf;

static void memo_put(memo_buf *b, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(b->s + b->n, sizeof b->s - b->n, fmt, ap);
  va_end(ap);
  if (k > 0 && b->n + (size_t)k < sizeof b->s)
    b->n += (size_t)k;
}

/* A random dimensionless expression: in the body of function fn (< 0: at
 * top level) its parameters a, b (numbers) and c (a model), the fields of
 * c, calls of the functions before it (g0 .. g{fn-1}), builtins, ?:, and
 * sometimes a division by zero. */
static void memo_expr(memo_buf *b, int fn, int depth)
{
  unsigned k = memo_rand(depth > 3 ? 3 : 9);
  if (fn < 0 && k == 1) /* k: known only once the train is evaluated */
    memo_put(b, "%s", memo_rand(2) ? "k" : "(k - 3)");
  else if (k == 0)
    memo_put(b, "%u", memo_rand(7));
  else if (k == 1)
    memo_put(b, "%s", memo_rand(2) ? "a" : "b");
  else if (k == 2)
    memo_put(b, "%s.%s", fn < 0 ? (memo_rand(2) ? "mm" : "nn") : "c",
             memo_rand(2) ? "x" : memo_rand(2) ? "y" : "z");
  else if (k == 3 || k == 4) {
    static const char *const ops[] = {"+", "-", "*", "+", "-", "*", "/"};
    memo_put(b, "(");
    memo_expr(b, fn, depth + 1);
    memo_put(b, " %s ", ops[memo_rand(7)]);
    memo_expr(b, fn, depth + 1);
    memo_put(b, ")");
  } else if (k == 5) {
    memo_put(b, "(");
    memo_expr(b, fn, depth + 1);
    memo_put(b, " < ");
    memo_expr(b, fn, depth + 1);
    memo_put(b, " ? ");
    memo_expr(b, fn, depth + 1);
    memo_put(b, " : ");
    memo_expr(b, fn, depth + 1);
    memo_put(b, ")");
  } else if (k == 6) {
    memo_put(b, "%s(", memo_rand(2) ? "min" : "max");
    memo_expr(b, fn, depth + 1);
    memo_put(b, ", ");
    memo_expr(b, fn, depth + 1);
    memo_put(b, ")");
  } else if (fn != 0) { /* a call: of an earlier function (top level: any) */
    int g = fn < 0 ? (int)memo_rand(6) : (int)memo_rand((unsigned)fn);
    memo_put(b, "g%d(", g);
    memo_expr(b, fn, depth + 2);
    memo_put(b, ", ");
    memo_expr(b, fn, depth + 2);
    memo_put(b, ", %s)", fn < 0 ? (memo_rand(2) ? "mm" : "nn") : memo_rand(3) ? "c" : "nn");
  } else
    memo_put(b, "%u", memo_rand(5));
}

/* Every let's value, what was reported and the steps counted, as text. */
static char *memo_run(const char *plan, int memo, int nlets, int *used)
{
  plc_eval_call_memo = memo;
  plc_fx f;
  plc_fx_load(&f, plan);
  memo_buf *out = calloc(1, sizeof *out);
  for (int i = 0; i < nlets; i++) {
    char name[16];
    snprintf(name, sizeof name, "v%d", i);
    plc_value *v = plc_fx_let(&f, name);
    char q[256] = "-";
    if (v && v->tag == PLC_V_NUM && v->known)
      gmp_snprintf(q, sizeof q, "%Qd", v->q);
    memo_put(out, "%s: %d %d %d %s\n", name, v ? (int)v->tag : -1, v ? v->known : -1,
             v ? v->b : -1, q);
  }
  memo_put(out, "steps %ld\n%s", f.sema.ev.steps, plc_fx_diags(&f));
  *used = f.sema.ev.cmemo != NULL;
  plc_fx_free(&f);
  plc_eval_call_memo = 1;
  char *s = strdup(out->s);
  free(out);
  return s;
}

/* The call memo (eval.c) replays a call exactly as its body evaluates:
 * the same values, errors (division by zero, a definition read in terms
 * of itself, the limits of plc(5): the step limit lowered at random, and
 * calls reaching the depth limit from random depths) at the same places,
 * and the same steps counted.  300 random plans of six functions calling
 * the earlier ones with random arguments (so that calls repeat), two
 * models whose fields call them too, and lets calling them. */
static void test_call_memo(void)
{
  long saved = plc_eval_max_steps;
  int used = 0, limited = 0;
  memo_rng = 12345;
  for (int it = 0; it < 300; it++) {
    memo_buf *b = calloc(1, sizeof *b);
    for (int g = 0; g < 6; g++) {
      memo_put(b, "let g%d(a, b, c) = ", g);
      memo_expr(b, g, 0);
      memo_put(b, "\n");
    }
    memo_put(b, PLC_FX_MACHINE
      "let hl(l, c) = l.index * c.x + (l.last ? 2 : 1)\n"
      "model tiny { x = 3; layers { dense = 4 } }\n"
      "framework fw { template dense {\n"
      "  op mm: compute { flops = 2e12 FLOP * hl(layer, model) }\n"
      "  op ar: all_reduce(tp) { size = 1 GB * hl(layer, model); after = [mm] }\n"
      "  backward {\n"
      "    op bmm: compute { flops = 4e12 FLOP * hl(layer, model) }\n"
      "  } } }\n"
      "train t { model = tiny; cluster = box; framework = fw; tp = 2; dp = 2; pp = 2\n"
      "  micro_batch = 1; global_batch = 8; seq = 1024 }\n"
      "let k = t.mu\n");
    for (int m = 0; m < 2; m++) {
      memo_put(b, "model %s { x = %u; y = ", m ? "nn" : "mm", memo_rand(5));
      memo_expr(b, -1, 2);
      memo_put(b, "; z = ");
      memo_expr(b, -1, 2);
      memo_put(b, " }\n");
    }
    memo_put(b, "let deep(n, c) = n == 0 ? g5(1, 2, c) : deep(n - 1, c)\n");
    int nlets = 13;
    for (int i = 0; i < nlets - 2; i++) {
      memo_put(b, "let v%d = ", i);
      memo_expr(b, -1, 1);
      memo_put(b, "\n");
    }
    memo_put(b, "let v%d = deep(%u, mm) + deep(%u, nn)\n", nlets - 2, 960 + memo_rand(40),
             960 + memo_rand(40));
    memo_put(b, "let v%d = t.step_time / 1 s\n", nlets - 1);
    plc_eval_max_steps = memo_rand(3) ? saved : 200 + (long)memo_rand(20000);
    int u1, u0;
    char *with = memo_run(b->s, 1, nlets, &u1), *without = memo_run(b->s, 0, nlets, &u0);
    CU_ASSERT_STRING_EQUAL(with, without);
    used += u1;
    limited += strstr(without, "steps (the limit") != NULL;
    free(with);
    free(without);
    free(b);
  }
  plc_eval_max_steps = saved;
  CU_ASSERT(used > 100);  /* the memo was used (not where sema stopped at the limit) */
  CU_ASSERT(limited > 5); /* and the step limit reached */
}

/* plc_eval_define_ops from a search's kept list of a body's ops (a
 * plc_cshare: made on the first use, read on the next) names the same ops
 * in the same order as the walk of the body (no plc_cshare): ops in
 * phases, for loops and every branch of an if/else-if/else chain, a name
 * given twice (its first op wins), and a name bound before (not
 * redefined), in an env small and one large enough to be
 * indexed (with 40 names bound first). */
static void test_define_ops(void)
{
  plc_fx f;
  CU_ASSERT_EQUAL(plc_fx_load(&f,
    "framework fw { option z3 = true\n"
    " template dense {\n"
    "  op a: compute { flops = 1e12 FLOP }\n"
    "  forward { op b: compute { flops = 1e12 FLOP }\n"
    "    if z3 { op c: compute { flops = 1e12 FLOP } } else if !z3 {"
    " op d: compute { flops = 1e12 FLOP }; op a: compute { flops = 2e12 FLOP } } else {"
    " op e: compute { flops = 1e12 FLOP } }\n"
    "    for i in 0 .. 3 { op r[i]: compute { flops = 1e12 FLOP }\n"
    "      if i == 0 { op f: compute { flops = 1e12 FLOP } } } }\n"
    "  backward { op b: compute { flops = 3e12 FLOP }\n"
    "    op g: compute { flops = 1e12 FLOP }; op pre: compute { flops = 1e12 FLOP } } } }\n"), 0);
  CU_ASSERT_STRING_EQUAL_FATAL(plc_fx_diags(&f), "");
  const plc_ast *fw = f.prog.files[f.prog.nfiles - 1]->list.head, *t = NULL;
  for (const plc_ast *it = fw->list.head; it; it = it->next)
    if (it->kind == PLC_AST_DECL)
      t = it;
  CU_ASSERT_PTR_NOT_NULL_FATAL(t);
  struct plc_cshare *sh = plc_cshare_new();
  char want[2][512] = {"", ""};
  for (int big = 0; big < 2; big++)
    for (int way = 0; way < 3; way++) { /* walked, kept list made, kept list read */
      plc_eval ev;
      plc_eval_init(&ev, f.arena, &f.diag);
      ev.cshare = way ? sh : NULL;
      plc_env *env = plc_env_new(&ev, NULL);
      plc_env_bind(&ev, env, "z3", plc_value_any(&ev));
      plc_env_bind(&ev, env, "pre", plc_value_any(&ev));
      for (int i = 0; big && i < 40; i++) {
        char n[16];
        snprintf(n, sizeof n, "x%d", i);
        plc_env_bind(&ev, env, plc_name_intern(f.arena, n, strlen(n)), plc_value_any(&ev));
      }
      plc_eval_define_ops(&ev, env, &t->list);
      char got[512] = "";
      for (size_t i = 0; i < env->n; i++)
        if (env->b[i].def) {
          char one[64];
          snprintf(one, sizeof one, "%s:%d ", env->b[i].name, env->b[i].def->loc.first_line);
          strcat(got, one);
          CU_ASSERT_PTR_EQUAL(plc_env_find_local(env, env->b[i].name), &env->b[i]);
        }
      if (way == 0)
        strcpy(want[big], got);
      CU_ASSERT_STRING_EQUAL(got, want[big]);
    }
  CU_ASSERT_STRING_EQUAL(want[0], "a:3 b:4 c:5 d:5 e:5 r:6 f:7 g:9 ");
  CU_ASSERT_STRING_EQUAL(want[0], want[1]);
  plc_cshare_free(sh);
  plc_fx_free(&f);
}

int main(void)
{
  static const plc_cu_test tests[] = {
    {"exact rationals", test_exact},
    {"small rationals on machine integers", test_small_rationals},
    {"units to base units", test_units},
    {"functions, builtins, ?: and lists", test_functions},
    {"calls bound by position and by name", test_positional},
    {"derived declarations", test_derived},
    {"located errors", test_errors},
    {"train results in lets", test_results},
    {"interned names and environments", test_names},
    {"names from C in small environments", test_c_names},
    {"interned names in indexed environments", test_indexed_names},
    {"arena allocations", test_arena},
    {"schema fields and defaults", test_schema},
    {"call memo against plain evaluation", test_call_memo},
    {"a body's ops: kept list against the walk", test_define_ops},
    {NULL, NULL},
  };
  return plc_cu_run("eval", tests);
}
