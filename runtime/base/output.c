/* output.c - atomic output files (see output.h). */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "output.h"
#include "xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PLC_OUTPUT_SLOTS 16  /* -o, --trace, --svg and -MD: at most four at once */
#define PLC_OUTPUT_HOPS 40   /* symbolic links followed before ELOOP, as the kernel */

/* ---- removal of temporary files on every way out ----------------------------- */

/* The temporary files being written; the signal handler unlinks them, which
 * is async-signal-safe, and never frees anything. */
static char *volatile plc_output_live[PLC_OUTPUT_SLOTS];

static const int plc_output_signals[] = {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGPIPE, SIGXFSZ,
                                         SIGXCPU, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
#define PLC_OUTPUT_NSIG (sizeof plc_output_signals / sizeof plc_output_signals[0])
static struct sigaction plc_output_old[PLC_OUTPUT_NSIG];

static void plc_output_unlink_all(void)
{
  for (int i = 0; i < PLC_OUTPUT_SLOTS; i++) {
    char *p = plc_output_live[i];
    if (p)
      unlink(p);
  }
}

/* Remove the files, then let the signal do what it did before we came (end
 * the process, dump core, or a sanitizer's report): the signal is blocked
 * in here, so the raise takes effect when the handler returns. */
static void plc_output_on_signal(int sig)
{
  int saved = errno;
  plc_output_unlink_all();
  for (size_t i = 0; i < PLC_OUTPUT_NSIG; i++)
    if (plc_output_signals[i] == sig)
      sigaction(sig, &plc_output_old[i], NULL);
  raise(sig);
  errno = saved;
}

/* Install the handlers once, when the first temporary file is made.  A
 * signal ignored on entry (a background job's SIGINT) stays ignored. */
static void plc_output_arm(void)
{
  static int armed;
  if (armed)
    return;
  armed = 1;
  atexit(plc_output_unlink_all);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = plc_output_on_signal;
  sigemptyset(&sa.sa_mask);
  for (size_t i = 0; i < PLC_OUTPUT_NSIG; i++) {
    int sig = plc_output_signals[i];
    if (sigaction(sig, NULL, &plc_output_old[i]) == 0 && plc_output_old[i].sa_handler != SIG_IGN)
      sigaction(sig, &sa, NULL);
  }
}

static int plc_output_track(char *tmp)
{
  plc_output_arm();
  for (int i = 0; i < PLC_OUTPUT_SLOTS; i++)
    if (!plc_output_live[i]) {
      plc_output_live[i] = tmp;
      return i;
    }
  return -1; /* not reachable with four outputs; the file is still removed on errors */
}

static void plc_output_untrack(plc_output *o)
{
  if (o->slot >= 0)
    plc_output_live[o->slot] = NULL;
  o->slot = -1;
}

/* ---- where to write ------------------------------------------------------------ */

/* The directory part of a name: "a/b" -> "a", "b" -> ".", "/b" -> "/". */
static char *plc_output_dir(const char *path)
{
  const char *slash = strrchr(path, '/');
  if (!slash)
    return plc_xstrdup(".");
  size_t n = slash == path ? 1 : (size_t)(slash - path);
  char *d = plc_xmalloc(n + 1);
  memcpy(d, path, n);
  d[n] = '\0';
  return d;
}

/* Whether a name lies in /proc once its directories are resolved: a
 * descriptor of some process (/dev/fd/1, /proc/self/fd/1), not a file. */
static int plc_output_in_proc(const char *path)
{
  if (!strncmp(path, "/proc/", 6))
    return 1;
  char *dir = plc_output_dir(path);
  char *real = realpath(dir, NULL);
  int in = real && !strncmp(real, "/proc/", 6);
  free(real);
  free(dir);
  return in;
}

/* Follow the symbolic links of the last component: the name of the file
 * (or of the file to create, for a dangling link).  NULL with errno on a
 * loop or an unreadable link; *proc set when a hop leads into /proc. */
static char *plc_output_follow(const char *path, int *proc)
{
  char *p = plc_xstrdup(path);
  for (int hops = 0;; hops++) {
    struct stat st;
    *proc |= plc_output_in_proc(p);
    if (*proc || lstat(p, &st) != 0 || !S_ISLNK(st.st_mode))
      return p;
    char *link = plc_xmalloc((size_t)st.st_size + PATH_MAX + 2);
    ssize_t n = hops < PLC_OUTPUT_HOPS ? readlink(p, link, (size_t)st.st_size + PATH_MAX) : -1;
    if (n < 0) {
      if (hops >= PLC_OUTPUT_HOPS)
        errno = ELOOP;
      free(link);
      free(p);
      return NULL;
    }
    link[n] = '\0';
    char *next = link;
    if (link[0] != '/') { /* relative to the link's directory */
      char *dir = plc_output_dir(p);
      next = plc_xmalloc(strlen(dir) + (size_t)n + 2);
      sprintf(next, "%s/%s", dir, link);
      free(dir);
      free(link);
    }
    free(p);
    p = next;
  }
}

/* ---- opening --------------------------------------------------------------------- */

static int plc_output_fail(plc_output *o, const char *path, int err)
{
  fprintf(stderr, "plc: error: cannot write '%s': %s\n", path, strerror(err));
  free(o->path);
  free(o->tmp);
  free(o->dest);
  memset(o, 0, sizeof *o);
  o->slot = -1;
  return -1;
}

/* A device, FIFO or descriptor: written where it is, appending to a
 * descriptor's file (the shell's > or >> already decided about its start). */
static int plc_output_direct(plc_output *o, const char *path, int proc)
{
  int fd = open(path, O_WRONLY | O_CREAT | (proc ? O_APPEND : 0), 0666);
  if (fd < 0 || !(o->f = fdopen(fd, "w"))) {
    int err = errno;
    if (fd >= 0)
      close(fd);
    return plc_output_fail(o, path, err);
  }
  return 0;
}

/* A regular file: a temporary file beside the destination, with the mode a
 * newly created file gets (mkstemp makes it 0600). */
static int plc_output_atomic(plc_output *o, const char *path)
{
  char *dir = plc_output_dir(o->dest);
  o->tmp = plc_xmalloc(strlen(dir) + 16);
  sprintf(o->tmp, "%s/.plc-XXXXXX", dir);
  free(dir);
  mode_t mask = umask(0);
  umask(mask);
  int fd = mkstemp(o->tmp);
  if (fd >= 0)
    o->slot = plc_output_track(o->tmp);
  if (fd < 0 || fchmod(fd, 0666 & ~mask) != 0 || !(o->f = fdopen(fd, "w"))) {
    int err = errno;
    if (fd >= 0) {
      close(fd);
      unlink(o->tmp);
      plc_output_untrack(o);
    }
    return plc_output_fail(o, path, err);
  }
  return 0;
}

int plc_output_open(plc_output *o, const char *path)
{
  memset(o, 0, sizeof *o);
  o->slot = -1;
  if (!path || !strcmp(path, "-")) {
    o->f = stdout;
    return 0;
  }
  o->path = plc_xstrdup(path);
  int proc = 0;
  o->dest = plc_output_follow(path, &proc);
  if (!o->dest)
    return plc_output_fail(o, path, errno);
  struct stat st;
  if (proc || (stat(o->dest, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)))
    return plc_output_direct(o, path, proc);
  return plc_output_atomic(o, path);
}

/* ---- finishing ------------------------------------------------------------------- */

static void plc_output_release(plc_output *o)
{
  plc_output_untrack(o);
  free(o->path);
  free(o->tmp);
  free(o->dest);
  memset(o, 0, sizeof *o);
  o->slot = -1;
}

int plc_output_commit(plc_output *o)
{
  if (!o->path) {
    if (fflush(stdout) == 0 && !ferror(stdout))
      return 0;
    fprintf(stderr, "plc: error: writing standard output: %s\n", strerror(errno));
    return -1;
  }
  int bad = ferror(o->f);
  errno = 0; /* fclose's flush says why, mostly (ENOSPC); else a generic text */
  bad |= fclose(o->f) != 0;
  o->f = NULL;
  if (bad || (o->tmp && rename(o->tmp, o->dest) != 0)) {
    fprintf(stderr, "plc: error: cannot write '%s': %s\n", o->path,
            errno ? strerror(errno) : "write error");
    plc_output_abort(o);
    return -1;
  }
  plc_output_release(o);
  return 0;
}

void plc_output_abort(plc_output *o)
{
  if (!o->path)
    return;
  if (o->f)
    fclose(o->f);
  if (o->tmp)
    unlink(o->tmp);
  plc_output_release(o);
}
