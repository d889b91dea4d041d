/* load.c - source files, the import search path and import cycles. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "load.h"
#include "parse.h"
#include "plc_paths.h" /* PLC_STDLIB_DIR and friends, written by make */
#include "xalloc.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

void plc_program_init(plc_program *p, plc_arena *ar, plc_diag *d)
{
  memset(p, 0, sizeof *p);
  p->arena = ar;
  p->diag = d;
  p->stack = plc_xcalloc(PLC_LOAD_MAX_DEPTH + 1, sizeof *p->stack);
}

void plc_program_free(plc_program *p)
{
  /* the compilation is over: the warnings past the cap are counted now */
  if (p->diag)
    plc_diag_summary(p->diag);
  for (size_t i = 0; i < p->nsources; i++)
    plc_source_free(p->sources[i]);
  free(p->sources);
  free(p->files);
  free(p->dirs);
  free(p->stack);
}

void plc_program_add_dir(plc_program *p, const char *dir)
{
  p->dirs = plc_xrealloc(p->dirs, (p->ndirs + 1) * sizeof *p->dirs);
  p->dirs[p->ndirs++] = plc_arena_strdup(p->arena, dir);
}

/* Is dir (canonical) inside the canonical directory top, or top itself? */
static int plc_load_under(const char *dir, const char *top)
{
  size_t n = strlen(top);
  return !strncmp(dir, top, n) && (dir[n] == '\0' || dir[n] == '/' || !strcmp(top, "/"));
}

/* Which stdlib belongs to the running program: 1 when it runs from the build
 * tree (plc, a test program) and is not installed, so the source tree's
 * stdlib is its library; -1 when it runs from anywhere else (installed), so
 * only the installed stdlib is, and a file missing there is not silently
 * taken from the source tree it was built from; 0 when this cannot be told
 * (no /proc/self/exe): the installed stdlib, then the source tree's. */
static int plc_load_where(void)
{
  char exe[PATH_MAX], build[PATH_MAX], bin[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0)
    return 0;
  exe[n] = '\0';
  char *slash = strrchr(exe, '/');
  if (!slash)
    return 0;
  *slash = '\0'; /* the executable's directory */
  if (realpath(PLC_BINDIR, bin) && !strcmp(exe, bin))
    return -1; /* installed, even when the prefix lies in the build tree */
  if (realpath(PLC_BUILD_DIR, build) && plc_load_under(exe, build))
    return 1;
  return -1;
}

void plc_program_add_default_dirs(plc_program *p)
{
  const char *env = getenv("PLC_PATH");
  while (env && *env) {
    const char *colon = strchr(env, ':');
    size_t n = colon ? (size_t)(colon - env) : strlen(env);
    if (n > 0)
      plc_program_add_dir(p, plc_arena_strndup(p->arena, env, n));
    env += n + (colon ? 1 : 0);
  }
  int where = plc_load_where();
  if (where <= 0)
    plc_program_add_dir(p, PLC_STDLIB_DIR);
  if (where >= 0)
    plc_program_add_dir(p, PLC_SOURCE_STDLIB_DIR);
}

/* Read a whole regular file, with a NUL after its len bytes (which may hold
 * NULs of their own).  Returns NULL and sets errno on failure. */
static char *plc_load_read(const char *path, size_t *len)
{
  struct stat st;
  if (stat(path, &st) != 0)
    return NULL;
  if (S_ISDIR(st.st_mode)) {
    errno = EISDIR;
    return NULL;
  }
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  /* sized to the file (plus its terminating NUL), so that a stdlib file
   * is read in one go rather than through a doubling buffer */
  size_t cap = S_ISREG(st.st_mode) && st.st_size >= 0 && st.st_size < PLC_LOAD_MAX_FILE
                 ? (size_t)st.st_size + 1 : 4096, n = 0;
  char *buf = plc_xmalloc(cap);
  size_t got;
  while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
    n += got;
    if (n > PLC_LOAD_MAX_FILE) {
      free(buf);
      fclose(f);
      errno = EFBIG;
      return NULL;
    }
    if (n == cap)
      buf = plc_xrealloc(buf, cap *= 2);
  }
  int bad = ferror(f);
  fclose(f);
  if (bad) {
    free(buf);
    errno = EIO;
    return NULL;
  }
  buf[n] = '\0'; /* n < cap: the buffer grows when it is full */
  *len = n;
  return buf;
}

static void plc_load_add_source(plc_program *p, plc_source *s)
{
  p->sources = plc_xrealloc(p->sources, (p->nsources + 1) * sizeof *p->sources);
  p->sources[p->nsources++] = s;
}

static void plc_load_add_file(plc_program *p, plc_ast *f)
{
  p->files = plc_xrealloc(p->files, (p->nfiles + 1) * sizeof *p->files);
  p->files[p->nfiles++] = f;
}

static const plc_source *plc_load_find_loaded(const plc_program *p, const char *real)
{
  for (size_t i = 0; i < p->nsources; i++)
    if (p->sources[i]->realpath && !strcmp(p->sources[i]->realpath, real))
      return p->sources[i];
  return NULL;
}

static void plc_load_imports(plc_program *p, plc_ast *file);

/* Parse a source that has been read, then its imports.  The file is on the
 * loading stack while its imports load, which is how cycles are seen. */
static plc_ast *plc_load_parse(plc_program *p, plc_source *s)
{
  plc_load_add_source(p, s);
  plc_ast *file = plc_parse_source(p->arena, p->diag, s);
  p->stack[p->depth++] = s->realpath ? s->realpath : s->path;
  plc_load_imports(p, file);
  p->depth--;
  plc_load_add_file(p, file);
  return file;
}

int plc_load_main(plc_program *p, const char *path)
{
  size_t len = 0;
  char *text;
  char real[PATH_MAX];
  if (!strcmp(path, "-") && p->stdin_name) {
    return plc_load_text(p, p->stdin_name, NULL, 0) ? 0 : 2;
  }
  text = plc_load_read(path, &len);
  if (!text) {
    plc_error(p->diag, NULL, "cannot read '%s': %s", path, strerror(errno));
    return 2;
  }
  plc_source *s = plc_source_adopt(path, realpath(path, real) ? real : NULL, text, len);
  if (s->realpath && plc_load_find_loaded(p, s->realpath)) {
    plc_source_free(s); /* named twice on the command line: once is enough */
    return 0;
  }
  plc_load_parse(p, s);
  return 0;
}

/* Read all of stdin (text == NULL) or take the given text. */
plc_ast *plc_load_text(plc_program *p, const char *name, const char *text, size_t len)
{
  char *buf = NULL;
  if (!text) {
    size_t cap = 4096, n = 0, got;
    buf = plc_xmalloc(cap);
    while ((got = fread(buf + n, 1, cap - n, stdin)) > 0) {
      n += got;
      if (n == cap)
        buf = plc_xrealloc(buf, cap *= 2);
      if (n > PLC_LOAD_MAX_FILE) {
        plc_error(p->diag, NULL, "standard input is larger than %d bytes", PLC_LOAD_MAX_FILE);
        free(buf);
        return NULL;
      }
    }
    text = buf;
    len = n;
  }
  plc_source *s = plc_source_new(name, NULL, text, len);
  free(buf);
  return plc_load_parse(p, s);
}

/* Does the last component of name end in an extension: a dot and one to
 * eight letters ("x.plan", "common.inc"; not "qwen2.5-72b")? */
static int plc_load_has_ext(const char *name)
{
  const char *base = strrchr(name, '/');
  base = base ? base + 1 : name;
  const char *dot = strrchr(base, '.');
  if (!dot || dot == base || !dot[1] || strlen(dot + 1) > 8)
    return 0;
  for (const char *c = dot + 1; *c; c++)
    if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z')))
      return 0;
  return 1;
}

/* "hw/nvidia" -> "hw/nvidia.plan", "qwen2.5-72b" -> "qwen2.5-72b.plan"; a
 * name that ends in an extension ("x.plan", "common.inc") is used as
 * written. */
static char *plc_load_with_ext(plc_arena *ar, const char *name)
{
  if (plc_load_has_ext(name))
    return plc_arena_strdup(ar, name);
  size_t n = strlen(name);
  char *s = plc_arena_alloc(ar, n + 6);
  memcpy(s, name, n);
  memcpy(s + n, ".plan", 6);
  return s;
}

static char *plc_load_join(plc_arena *ar, const char *dir, const char *name)
{
  size_t a = strlen(dir), b = strlen(name);
  char *s = plc_arena_alloc(ar, a + b + 2);
  memcpy(s, dir, a);
  s[a] = '/';
  memcpy(s + a + 1, name, b + 1);
  return s;
}

/* Directory of a source file's path ("." when it has none). */
static char *plc_load_dirname(plc_arena *ar, const char *path)
{
  const char *slash = strrchr(path, '/');
  if (!slash)
    return plc_arena_strdup(ar, ".");
  if (slash == path)
    return plc_arena_strdup(ar, "/");
  return plc_arena_strndup(ar, path, (size_t)(slash - path));
}

/* Candidate paths for an import, in search order; returns the first that
 * exists as a regular file, or NULL. */
static char *plc_load_search(plc_program *p, const plc_ast *imp)
{
  char *name = plc_load_with_ext(p->arena, imp->name);
  struct stat st;
  if (name[0] == '/')
    return stat(name, &st) == 0 && S_ISREG(st.st_mode) ? name : NULL;
  const plc_source *from = imp->loc.src;
  if (from->realpath) {
    char *dir = plc_load_dirname(p->arena, from->path);
    char *cand = strcmp(dir, ".") ? plc_load_join(p->arena, dir, name) : name;
    if (stat(cand, &st) == 0 && S_ISREG(st.st_mode))
      return cand;
  }
  for (size_t i = 0; i < p->ndirs; i++) {
    char *cand = plc_load_join(p->arena, p->dirs[i], name);
    if (stat(cand, &st) == 0 && S_ISREG(st.st_mode))
      return cand;
  }
  return NULL;
}

static void plc_load_cycle_error(plc_program *p, const plc_ast *imp, const char *real)
{
  size_t from = 0;
  while (from < p->depth && strcmp(p->stack[from], real))
    from++;
  char msg[2048];
  size_t n = 0;
  for (size_t i = from; i < p->depth && n < sizeof msg; i++) {
    const char *base = strrchr(p->stack[i], '/');
    n += (size_t)snprintf(msg + n, sizeof msg - n, "%.200s -> ", base ? base + 1 : p->stack[i]);
  }
  const char *base = strrchr(real, '/');
  if (n < sizeof msg)
    snprintf(msg + n, sizeof msg - n, "%.200s", base ? base + 1 : real);
  plc_error(p->diag, &imp->loc, "import cycle: %s", msg);
}

static void plc_load_import(plc_program *p, const plc_ast *imp)
{
  if (p->no_files) {
    plc_error(p->diag, &imp->loc, "imports are disabled here");
    return;
  }
  char *path = plc_load_search(p, imp);
  if (!path) {
    plc_error(p->diag, &imp->loc, "cannot find import '%s' (searched the importing file's "
              "directory, -I directories, $PLC_PATH and the stdlib)", imp->name);
    return;
  }
  char real[PATH_MAX];
  if (!realpath(path, real)) {
    plc_error(p->diag, &imp->loc, "cannot resolve '%s': %s", path, strerror(errno));
    return;
  }
  for (size_t i = 0; i < p->depth; i++)
    if (!strcmp(p->stack[i], real)) {
      plc_load_cycle_error(p, imp, real);
      return;
    }
  if (plc_load_find_loaded(p, real))
    return;
  if (p->depth >= PLC_LOAD_MAX_DEPTH) {
    plc_error(p->diag, &imp->loc, "imports nested too deeply (more than %d levels)",
              PLC_LOAD_MAX_DEPTH);
    return;
  }
  size_t len = 0;
  char *text = plc_load_read(path, &len);
  if (!text) {
    plc_error(p->diag, &imp->loc, "cannot read '%s': %s", path, strerror(errno));
    return;
  }
  plc_source *s = plc_source_adopt(path, real, text, len);
  plc_load_parse(p, s);
}

static void plc_load_imports(plc_program *p, plc_ast *file)
{
  for (plc_ast *it = file->list.head; it; it = it->next)
    if (it->kind == PLC_AST_IMPORT)
      plc_load_import(p, it);
}

/* ---- which stdlib import defines a name (for "unknown name" hints) ---- */

/* Does text declare name at top level: a line "KIND NAME" or "let NAME"
 * followed by a character that cannot continue a name? */
static int plc_load_declares(const char *text, const char *name)
{
  static const char *const kws[] = {"let ", "device ", "link ", "cluster ", "model ",
                                    "train ", "framework ", "template ", "search "};
  size_t n = strlen(name);
  for (const char *line = text; line; line = strchr(line, '\n'), line = line ? line + 1 : NULL)
    for (size_t k = 0; k < sizeof kws / sizeof kws[0]; k++) {
      size_t kl = strlen(kws[k]);
      if (strncmp(line, kws[k], kl) || strncmp(line + kl, name, n))
        continue;
      char c = line[kl + n];
      if (!(c == '_' || (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')))
        return 1;
    }
  return 0;
}

const char *plc_load_which_import(plc_program *p, const char *name)
{
  static const char *const stdlib_dirs[] = {PLC_STDLIB_DIR, PLC_SOURCE_STDLIB_DIR};
  if (p->no_files)
    return NULL;
  for (size_t d = 0; d < 2; d++) {
    DIR *top = opendir(stdlib_dirs[d]);
    if (!top)
      continue;
    const char *found = NULL;
    for (struct dirent *sub; !found && (sub = readdir(top));) {
      if (sub->d_name[0] == '.')
        continue;
      char dir[PATH_MAX];
      if ((size_t)snprintf(dir, sizeof dir, "%s/%s", stdlib_dirs[d], sub->d_name) >= sizeof dir)
        continue;
      DIR *in = opendir(dir);
      for (struct dirent *f; in && !found && (f = readdir(in));) {
        size_t fl = strlen(f->d_name);
        if (fl < 6 || strcmp(f->d_name + fl - 5, ".plan"))
          continue;
        char path[PATH_MAX];
        size_t len;
        if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, f->d_name) >= sizeof path)
          continue;
        char *text = plc_load_read(path, &len); /* NUL-terminated */
        if (text && plc_load_declares(text, name)) {
          char imp[PATH_MAX];
          if ((size_t)snprintf(imp, sizeof imp, "%s/%.*s", sub->d_name, (int)(fl - 5),
                               f->d_name) < sizeof imp)
            found = plc_arena_strdup(p->arena, imp);
        }
        free(text);
      }
      if (in)
        closedir(in);
    }
    closedir(top);
    if (found)
      return found;
  }
  return NULL;
}
