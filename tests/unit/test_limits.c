/* test_limits.c - CUnit tests of the front end's limits (plc(5) LIMITS) on
 * generated plans: every one is a located error, never a stack overflow, a
 * bison "memory exhausted", or minutes of work.
 *
 * Each case builds a plan in memory (deep unary and ?: chains, long chains
 * of definitions and derived declarations, deep recursion, exponential
 * recursion, tens of thousands of names), loads and checks it as
 * `plc --check` does, and compares the first diagnostic line.  Run under
 * ASan too: its larger frames must still fit in the default 8 MB stack. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cu_main.h"
#include "eval.h"
#include "load.h"
#include "sema.h"
#include "xalloc.h"

/* A growing string. */
typedef struct buf {
  char *s;
  size_t n, cap;
} buf;

static void put(buf *b, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  char tmp[256];
  int k = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (b->n + (size_t)k + 1 > b->cap) {
    b->cap = (b->n + (size_t)k + 1) * 2;
    b->s = realloc(b->s, b->cap);
  }
  memcpy(b->s + b->n, tmp, (size_t)k + 1);
  b->n += (size_t)k;
}

static void repeat(buf *b, const char *piece, int times)
{
  for (int i = 0; i < times; i++)
    put(b, "%s", piece);
}

/* Check a plan as `plc --check` does; returns the first line of the
 * diagnostics ("" when none, malloc'd) and the error count. */
static char *check(buf *b, int *nerr)
{
  char *err = NULL;
  size_t errn = 0;
  FILE *e = open_memstream(&err, &errn);
  plc_diag d;
  plc_diag_init(&d, e);
  plc_arena *ar = plc_arena_new();
  plc_program prog;
  plc_program_init(&prog, ar, &d);
  prog.no_files = 1;
  plc_load_text(&prog, "t.plan", b->s ? b->s : "", b->n);
  if (!d.errors) {
    plc_sema s;
    plc_sema_check(&s, &prog, NULL, 0);
  }
  fclose(e);
  plc_program_free(&prog);
  plc_arena_free(ar);
  *nerr = d.errors;
  char *nl = strchr(err, '\n');
  if (nl)
    *nl = '\0';
  free(b->s);
  memset(b, 0, sizeof *b);
  return err;
}

static void expect(buf *b, const char *want, unsigned line)
{
  int nerr;
  char *got = check(b, &nerr);
  plc_cu_str_eq(got, want, line, __FILE__);
  free(got);
}
#define EXPECT(b, want) expect((b), (want), __LINE__)

/* 100,000 unary minus signs, or ?: levels: bison's stack fills before
 * anything is reduced; that is the depth error, where the stack filled.
 * Before: "memory exhausted" and "parser ran out of memory". */
static void test_parser_stack(void)
{
  buf b = {0};
  put(&b, "let x = ");
  repeat(&b, "-", 100000);
  put(&b, "1\n");
  int nerr;
  char *got = check(&b, &nerr);
  CU_ASSERT_EQUAL(nerr, 1);
  CU_ASSERT_PTR_NOT_NULL(strstr(got, "error: too deeply nested (more than 2000 levels of "
                                     "expression or 'else if')"));
  CU_ASSERT(strncmp(got, "t.plan:1:", 9) == 0);
  free(got);

  put(&b, "let x = ");
  repeat(&b, "true ? 1 : ", 100000);
  put(&b, "1\n");
  got = check(&b, &nerr);
  CU_ASSERT_EQUAL(nerr, 1);
  CU_ASSERT_PTR_NOT_NULL(strstr(got, "error: too deeply nested"));
  free(got);
}

/* Exactly at the limit: 1999 signs and the literal are 2000 levels, fine
 * (-1 x (-1)^1998 = -1... the assert pins the value); one more is the
 * error at the outermost sign, column 9. */
static void test_expression_depth(void)
{
  buf b = {0};
  put(&b, "let x = ");
  repeat(&b, "-", 1999);
  put(&b, "1\nassert x == -1\n");
  EXPECT(&b, "");
  put(&b, "let x = ");
  repeat(&b, "true ? 1 : ", 1999);
  put(&b, "2\nassert x == 1\n");
  EXPECT(&b, "");
  put(&b, "let x = ");
  repeat(&b, "-", 2000);
  put(&b, "1\n");
  EXPECT(&b, "t.plan:1:9: error: expression too deeply nested (more than 2000 levels)");
  /* an else-if chain is nested too */
  put(&b, "framework f { template dense { forward {\nif run.tp == 0 { }");
  for (int i = 1; i <= 2000; i++)
    put(&b, " else if run.tp == %d { }", i);
  put(&b, "\n} } }\n");
  EXPECT(&b, "t.plan:2:1: error: 'else if' chain too long (more than 2000)");
}

/* Definitions count toward the depth of evaluation: a0 = a1 + 1, ...,
 * the 1001st definition in the chain (a1000, used in a999's definition
 * on line 1000, column 12) is one too many.  999 nested ones are fine:
 * a0 = 999.  Before: no error, and a stack overflow at 100,000. */
static void test_definition_chain(void)
{
  buf b = {0};
  for (int i = 0; i < 999; i++)
    put(&b, "let a%d = a%d + 1\n", i, i + 1);
  put(&b, "let a999 = 0\nassert a0 == 999\n");
  EXPECT(&b, "");
  for (int i = 0; i < 100000; i++)
    put(&b, "let a%d = a%d + 1\n", i, i + 1);
  put(&b, "let a100000 = 0\n");
  EXPECT(&b, "t.plan:1000:12: error: definitions nested too deeply (more than 1000 calls and "
             "definitions)");
}

/* 30,000 declarations each derived from the next. */
static void test_derivation_chain(void)
{
  buf b = {0};
  for (int i = 0; i < 30000; i++)
    put(&b, "model m%d = m%d { }\n", i, i + 1);
  put(&b, "model m30000 { v = 1; layers { dense = 1 } }\nassert m0.v == 1\n");
  EXPECT(&b, "t.plan:1001:15: error: definitions nested too deeply (more than 1000 calls and "
             "definitions)");
}

/* A function nested 998 calls deep whose recursive call sits under 1800
 * unary signs: 998 x 1800 expressions nested, far past 10,000.  Before: a
 * stack overflow.  Within the limits it evaluates (f(n) = -(...(f(n-1)))
 * with an even number of signs in all: f(998) = g = 0). */
static void test_nested_calls(void)
{
  buf b = {0};
  put(&b, "let f(n) = n == 0 ? 0 : ");
  repeat(&b, "- ", 1800);
  put(&b, "f(n - 1)\nassert f(998) == 0\n");
  int nerr;
  char *got = check(&b, &nerr);
  CU_ASSERT_PTR_NOT_NULL(strstr(got, "error: evaluation nested too deeply (more than 10000 "
                                     "expressions across calls and definitions)"));
  CU_ASSERT(strncmp(got, "t.plan:1:", 9) == 0);
  free(got);
  /* near both limits at once: 999 calls of 9 nested expressions each (?:,
   * 7 signs, the call) and g's 1001 at the bottom, about 9,990 in all */
  put(&b, "let g = ");
  repeat(&b, "- ", 1000);
  put(&b, "0\nlet f(n) = n == 0 ? g : - - - - - - - f(n - 1)\nassert f(998) == 0\n");
  EXPECT(&b, "");
  /* recursion past 1000 calls */
  put(&b, "let f(n) = n == 0 ? 0 : f(n - 1)\nlet y = f(5000)\n");
  EXPECT(&b, "t.plan:1:26: error: calls nested too deeply (more than 1000 calls and "
             "definitions)");
}

/* f(n) = f(n-1) + f(n-1) does 2^n calls: with the step limit lowered to
 * 100,000, f(40) stops at the limit (where the 100,001st step is, inside
 * f's first recursive call), while f(10),
 * 2^11 - 1 calls of about 10 steps each, stays below it.  Before: memory
 * exhausted even under --check. */
static void test_step_limit(void)
{
  long saved = plc_eval_max_steps;
  plc_eval_max_steps = 100000;
  buf b = {0};
  put(&b, "let f(n) = n < 1 ? 1 : f(n - 1) + f(n - 1)\nlet x = f(40)\n");
  EXPECT(&b, "t.plan:1:28: error: evaluation takes more than 100000 steps (the limit of plc(5); "
             "is a recursion or a loop unbounded?)");
  put(&b, "let f(n) = n < 1 ? 1 : f(n - 1) + f(n - 1)\nassert f(10) == 1024\n");
  EXPECT(&b, "");
  plc_eval_max_steps = saved;
}

/* 40,000 top-level names, each used by the next, all resolved.  How fast
 * (linear with hashed lookup; before, > 10 s) is measured by make bench,
 * not here: tests are never timed. */
static void test_many_names(void)
{
  buf b = {0};
  put(&b, "let n0 = 0\n");
  for (int i = 1; i < 40000; i++)
    put(&b, "let n%d = n0 + %d\n", i, i);
  put(&b, "assert n39999 == 39999\n");
  EXPECT(&b, "");
}

/* Out of memory is one line and exit status 2, not an abort (before: "plc:
 * out of memory" and SIGABRT).  A child asks for more than any machine has.
 * Skipped under ASan, whose allocator reports such a request itself. */
static void test_out_of_memory(void)
{
#ifndef __SANITIZE_ADDRESS__
  int fd[2];
  CU_ASSERT_FATAL(pipe(fd) == 0);
  pid_t pid = fork();
  CU_ASSERT_FATAL(pid >= 0);
  if (pid == 0) {
    dup2(fd[1], 2);
    volatile size_t huge = (size_t)-1 / 2;
    plc_xmalloc(huge);
    _exit(0);
  }
  close(fd[1]);
  char out[128] = "";
  ssize_t n = read(fd[0], out, sizeof out - 1);
  out[n > 0 ? n : 0] = '\0';
  close(fd[0]);
  int status;
  waitpid(pid, &status, 0);
  PLC_CU_STR_EQ(out, "plc: error: out of memory\n");
  CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 2);
#endif
}

int main(void)
{
  static const plc_cu_test tests[] = {
    {"parser stack exhausted", test_parser_stack},
    {"expression depth", test_expression_depth},
    {"chain of definitions", test_definition_chain},
    {"chain of derived declarations", test_derivation_chain},
    {"nested calls", test_nested_calls},
    {"step limit", test_step_limit},
    {"many names", test_many_names},
    {"out of memory", test_out_of_memory},
    {NULL, NULL},
  };
  return plc_cu_run("limits", tests);
}
