/* test_timeline.c - CUnit tests of the pictures' helpers: rounding a time
 * to a position (half up, exact), escaping SVG text, and the atomic file
 * writer (a failed write leaves the old file and no temporary, and a signal
 * that ends the process removes the temporary too). */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "output.h"

#include "cu_main.h"
#include "svg.h"
#include "timeline.h"

/* round(t x k) for t = tn/td, k = kn/kd */
static long rounded(long tn, unsigned long td, long kn, unsigned long kd)
{
  mpq_t t, k;
  mpz_t z;
  mpq_inits(t, k, NULL);
  mpz_init(z);
  mpq_set_si(t, tn, td);
  mpq_set_si(k, kn, kd);
  mpq_canonicalize(t);
  mpq_canonicalize(k);
  plc_timeline_round(z, t, k);
  long r = mpz_get_si(z);
  mpz_clear(z);
  mpq_clears(t, k, NULL);
  return r;
}

static void test_round(void)
{
  CU_ASSERT_EQUAL(rounded(5, 2, 1, 1), 3);   /* half goes up */
  CU_ASSERT_EQUAL(rounded(7, 3, 1, 1), 2);
  CU_ASSERT_EQUAL(rounded(8, 3, 1, 1), 3);
  CU_ASSERT_EQUAL(rounded(0, 1, 7, 3), 0);
  /* 45.001 ms on 1010 px per 505.106 ms: 89.98 -> 90 (tests/svg.sh) */
  CU_ASSERT_EQUAL(rounded(45001, 1000000, 1010000000, 505106), 90);
  /* 5001/1000000 s in microseconds, and one just below half a microsecond */
  CU_ASSERT_EQUAL(rounded(5001, 1000000, 1000000, 1), 5001);
  CU_ASSERT_EQUAL(rounded(4999999, 10000000000000, 1000000, 1), 0);
  CU_ASSERT_EQUAL(rounded(5, 10000000, 1000000, 1), 1);
}

static void test_escape(void)
{
  char *buf = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&buf, &n);
  plc_svg_escape(f, "a&b<c>\"d'e L3 mm[2]");
  fclose(f);
  PLC_CU_STR_EQ(buf, "a&amp;b&lt;c&gt;&quot;d&apos;e L3 mm[2]");
  free(buf);
}

static int write_ok(FILE *f, void *ctx)
{
  return fputs(ctx, f) < 0 ? -1 : 0;
}

static int write_fails(FILE *f, void *ctx)
{
  fputs(ctx, f);
  return -1;
}

static char *slurp(const char *path)
{
  static char buf[64];
  FILE *f = fopen(path, "r");
  if (!f)
    return NULL;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = '\0';
  fclose(f);
  return buf;
}

static void test_save(void)
{
  char path[] = "test-output/timeline-save.txt", tmp[] = "test-output/timeline-save.txt.tmp";
  int err = system("mkdir -p test-output");
  CU_ASSERT_EQUAL(err, 0);
  CU_ASSERT_EQUAL(plc_timeline_save(path, write_ok, "new\n"), 0);
  PLC_CU_STR_EQ(slurp(path), "new\n");
  CU_ASSERT_EQUAL(access(tmp, F_OK), -1);
  fputs("(an error message is expected here:)\n", stderr);
  CU_ASSERT_EQUAL(plc_timeline_save(path, write_fails, "half\n"), -1);
  PLC_CU_STR_EQ(slurp(path), "new\n");
  CU_ASSERT_EQUAL(access(tmp, F_OK), -1);
  CU_ASSERT_EQUAL(plc_timeline_save("test-output/no/such/dir/x", write_ok, "x"), -1);
  remove(path);
}

/* Files in a directory other than . and .. */
static int entries(const char *dir)
{
  DIR *d = opendir(dir);
  int n = 0;
  for (struct dirent *e; d && (e = readdir(d));)
    n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
  if (d)
    closedir(d);
  return n;
}

/* A child opens an output, writes to it and is ended by `sig` before the
 * commit: it must die of that signal and leave its directory empty. */
static void signalled(int sig)
{
  int err = system("rm -rf test-output/sig && mkdir -p test-output/sig");
  CU_ASSERT_EQUAL(err, 0);
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    plc_output o;
    if (plc_output_open(&o, "test-output/sig/out.txt") != 0 || fputs("half", o.f) < 0 ||
        fflush(o.f) != 0 || entries("test-output/sig") != 1)
      _exit(3);
    raise(sig);
    _exit(4);
  }
  int status = 0;
  CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
  CU_ASSERT(WIFSIGNALED(status) && WTERMSIG(status) == sig);
  PLC_CU_ASSERT_MSG(entries("test-output/sig") == 0, strsignal(sig));
}

static void test_signals(void)
{
  signalled(SIGINT);
  signalled(SIGTERM);
  signalled(SIGHUP);
  signalled(SIGABRT); /* abort(): an assertion or a failed allocation in a library */
}

int main(void)
{
  /* As for a foreground command: plc leaves a signal ignored on entry
   * ignored (a background job's SIGINT), and the test may run as one. */
  signal(SIGINT, SIG_DFL);
  static const plc_cu_test tests[] = {
    {"round half up, exactly", test_round},
    {"SVG text escaping", test_escape},
    {"atomic file writes", test_save},
    {"no temporary file survives a signal", test_signals},
    {NULL, NULL},
  };
  return plc_cu_run("timeline", tests);
}
