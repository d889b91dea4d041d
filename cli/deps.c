/* deps.c - make-style dependency rules (see deps.h). */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "deps.h"
#include "output.h"
#include "xalloc.h"

#include <stdlib.h>
#include <string.h>

/* Write a file name for make: spaces, ':' and '#' escaped, '$' doubled
 * (an unescaped ':' would end the prerequisites: "a:b.plan" is "a" and a
 * rule for it). */
static void plc_deps_name(FILE *f, const char *s)
{
  for (; *s; s++) {
    if (*s == ' ' || *s == '\t' || *s == '#' || *s == ':')
      fputc('\\', f);
    if (*s == '$')
      fputc('$', f);
    fputc(*s, f);
  }
}

/* A file name with its extension replaced: m3.plan -> m3.d, out.txt ->
 * out.d (gcc's rule for -MD). */
static char *plc_deps_swap(const char *name, const char *suffix)
{
  size_t n = strlen(name);
  const char *slash = strrchr(name, '/'), *dot = strrchr(name, '.');
  if (dot && (!slash || dot > slash) && dot != name)
    n = (size_t)(dot - name);
  char *s = plc_xmalloc(n + strlen(suffix) + 1);
  memcpy(s, name, n);
  strcpy(s + n, suffix);
  return s;
}

/* The files of the program, real files only, in the order read. */
static void plc_deps_rule(FILE *f, const plc_deps_opts *o, const plc_program *prog,
                          const char *target)
{
  if (o->nMT)
    for (int i = 0; i < o->nMT; i++) {
      fputs(i ? " " : "", f);
      plc_deps_name(f, o->MT[i]);
    }
  else
    plc_deps_name(f, target);
  fputc(':', f);
  for (size_t i = 0; i < prog->nsources; i++)
    if (prog->sources[i]->realpath) {
      fputs(" \\\n ", f);
      plc_deps_name(f, prog->sources[i]->path);
    }
  fputc('\n', f);
  for (size_t i = 1; o->MP && i < prog->nsources; i++)
    if (prog->sources[i]->realpath) {
      fputc('\n', f);
      plc_deps_name(f, prog->sources[i]->path);
      fputs(":\n", f);
    }
}

int plc_deps_write(const plc_deps_opts *o, const plc_program *prog, const char *main,
                   const char *out)
{
  char *target = out ? plc_xstrdup(out) : plc_deps_swap(main, ".report");
  char *file = NULL;
  if (o->MF)
    file = plc_xstrdup(o->MF);
  else if (o->MD && out)
    file = plc_deps_swap(out, ".d");
  else if (o->MD)
    file = plc_deps_swap(main, ".d");
  plc_output w;
  int rc = plc_output_open(&w, file);
  if (rc == 0) {
    plc_deps_rule(w.f, o, prog, target);
    rc = plc_output_commit(&w);
  }
  free(target);
  free(file);
  return rc;
}
