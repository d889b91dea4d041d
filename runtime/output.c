/* output.c - atomic output files (see output.h). */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "output.h"
#include "xalloc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int plc_output_open(plc_output *o, const char *path)
{
  memset(o, 0, sizeof *o);
  if (!path || !strcmp(path, "-")) {
    o->f = stdout;
    return 0;
  }
  size_t n = strlen(path) + 16;
  o->path = plc_xstrdup(path);
  o->tmp = plc_xmalloc(n);
  snprintf(o->tmp, n, "%s.XXXXXX", path);
  int fd = mkstemp(o->tmp);
  if (fd < 0 || !(o->f = fdopen(fd, "w"))) {
    fprintf(stderr, "plc: error: cannot write '%s': %s\n", path, strerror(errno));
    if (fd >= 0)
      close(fd);
    free(o->path);
    free(o->tmp);
    memset(o, 0, sizeof *o);
    return -1;
  }
  return 0;
}

int plc_output_commit(plc_output *o)
{
  if (!o->path) {
    if (fflush(stdout) == 0 && !ferror(stdout))
      return 0;
    fprintf(stderr, "plc: error: writing standard output: %s\n", strerror(errno));
    return -1;
  }
  int bad = ferror(o->f) | (fclose(o->f) != 0);
  o->f = NULL;
  if (bad || rename(o->tmp, o->path) != 0) {
    fprintf(stderr, "plc: error: cannot write '%s': %s\n", o->path, strerror(errno));
    plc_output_abort(o);
    return -1;
  }
  free(o->path);
  free(o->tmp);
  memset(o, 0, sizeof *o);
  return 0;
}

void plc_output_abort(plc_output *o)
{
  if (!o->path)
    return;
  if (o->f)
    fclose(o->f);
  unlink(o->tmp);
  free(o->path);
  free(o->tmp);
  memset(o, 0, sizeof *o);
}
