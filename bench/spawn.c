/* spawn.c - `make bench`'s timer of whole processes.
 *
 *   spawn RUNS COMMAND [ARG]...
 *
 * runs COMMAND RUNS times, one after the other, each as a new process
 * (posix_spawnp, its stdout and stderr to /dev/null), and prints the best
 * and the median wall time from spawning it to reaping it, in
 * microseconds, and the fewest page faults a run took: "BEST MEDIAN
 * FAULTS" (a fault costs this kind of machine about 15 us: they are
 * worth watching beside the time).  A shell timing `date +%s%N` before and
 * after a command measured a `date` process too: about 10 ms on the
 * bench machine, more than a small plan takes.  Exit status 0, or 2 for a
 * usage or spawning error; the command's own status does not matter (an
 * example whose assertion fails is still timed). */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

static long spawn_us_since(const struct timespec *t0)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (long)(t.tv_sec - t0->tv_sec) * 1000000L + (t.tv_nsec - t0->tv_nsec) / 1000L;
}

static int spawn_cmp(const void *a, const void *b)
{
  long x = *(const long *)a, y = *(const long *)b;
  return (x > y) - (x < y);
}

/* One run's wall time in microseconds, or -1 when it cannot be spawned;
 * its minor page faults in *faults. */
static long spawn_once(posix_spawn_file_actions_t *fa, char **argv, long *faults)
{
  struct rusage ru;
  struct timespec t0;
  pid_t pid;
  int status;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  int err = posix_spawnp(&pid, argv[0], fa, NULL, argv, environ);
  if (err) {
    fprintf(stderr, "spawn: %s: %s\n", argv[0], strerror(err));
    return -1;
  }
  while (wait4(pid, &status, 0, &ru) < 0)
    if (errno != EINTR) {
      perror("spawn: wait4");
      return -1;
    }
  long us = spawn_us_since(&t0);
  *faults = ru.ru_minflt;
  return us;
}

int main(int argc, char **argv)
{
  long runs = argc >= 3 ? strtol(argv[1], NULL, 10) : 0;
  if (runs < 1 || runs > 100000) {
    fputs("usage: spawn RUNS COMMAND [ARG]...\n", stderr);
    return 2;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  long *t = malloc((size_t)runs * sizeof *t), faults = -1;
  int status = t ? 0 : 2;
  for (long i = 0; i < runs && !status; i++) {
    long f = 0;
    if ((t[i] = spawn_once(&fa, argv + 2, &f)) < 0)
      status = 2;
    else if (faults < 0 || f < faults)
      faults = f;
  }
  if (!status) {
    qsort(t, (size_t)runs, sizeof *t, spawn_cmp);
    printf("%ld %ld %ld\n", t[0], t[(runs - 1) / 2], faults);
  }
  free(t);
  posix_spawn_file_actions_destroy(&fa);
  return status;
}
