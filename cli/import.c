/* import.c - `plc import hf|megatron ...`: dispatch to the importers, and
 * the helpers they share to read their input and to write plan text that
 * the lexer accepts whatever the input held (see import.h). */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "import.h"
#include "xalloc.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static void plc_import_usage(FILE *out)
{
  fputs("Usage: plc import hf [OPTION]... CONFIG.json\n"
        "       plc import megatron [OPTION]... FILE\n"
        "       plc import megatron [OPTION]... -- ARGUMENT...\n"
        "Write plan text for a Hugging Face model (its config.json) or for a\n"
        "Megatron-LM / MindSpeed run (its command line, from a file or after --).\n"
        "\n"
        "  -o FILE             write to FILE (atomically) instead of standard output\n"
        "  --name=NAME         name of the model (hf) or of the train (megatron)\n"
        "  --world-size=N      megatron: devices of the run, so that dp = N / (tp x pp x cp)\n"
        "  --framework=NAME    megatron: megatron or mindspeed (default: mindspeed when\n"
        "                      a MindSpeed-only flag is present, else megatron)\n"
        "  --help              show this help and exit\n"
        "\n"
        "Exit status: 0 success, 1 errors in the input, 2 usage or I/O errors.\n"
        "See plc(1), PLC IMPORT.\n", out);
}

int plc_import_help(void)
{
  plc_import_usage(stdout);
  return fflush(stdout) != 0 || ferror(stdout) ? 2 : 0;
}

int plc_import_main(int argc, char **argv)
{
  if (argc >= 2 && !strcmp(argv[1], "hf"))
    return plc_import_hf(argc - 1, argv + 1);
  if (argc >= 2 && !strcmp(argv[1], "megatron"))
    return plc_import_megatron(argc - 1, argv + 1);
  if (argc >= 2 && !strcmp(argv[1], "--help"))
    return plc_import_help();
  if (argc < 2)
    fprintf(stderr, "plc: error: import needs a kind: hf or megatron\n");
  else
    fprintf(stderr, "plc: error: unknown import kind '%s': hf or megatron\n", argv[1]);
  fputs("Try 'plc import --help' for more information.\n", stderr);
  return 2;
}

/* ---- input ------------------------------------------------------------- */

enum { PLC_IMPORT_MAX = 16 << 20 };

char *plc_import_read(const char *path, size_t *len)
{
  int std = !strcmp(path, "-");
  FILE *f = std ? stdin : fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "plc: error: cannot read '%s': %s\n", path, strerror(errno));
    return NULL;
  }
  size_t cap = 4096, n = 0, got;
  char *buf = plc_xmalloc(cap + 1);
  while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
    n += got;
    if (n == cap && cap < PLC_IMPORT_MAX) {
      cap *= 2;
      buf = plc_xrealloc(buf, cap + 1);
    } else if (n == cap) {
      break;
    }
  }
  int bad = ferror(f), big = n == cap && fgetc(f) != EOF;
  if (!std)
    fclose(f);
  if (bad || big) {
    fprintf(stderr, "plc: error: cannot read '%s': %s\n", path,
            bad ? "read error" : "larger than 16 MiB");
    free(buf);
    return NULL;
  }
  buf[n] = '\0';
  *len = n;
  return buf;
}

/* ---- safe plan text ---------------------------------------------------- */

/* Length of the valid UTF-8 sequence at s (1 for ASCII), 0 if invalid. */
static size_t plc_import_utf8(const unsigned char *s)
{
  if (s[0] < 0x80)
    return 1;
  size_t n = s[0] >= 0xF0 && s[0] <= 0xF4 ? 4 : s[0] >= 0xE0 ? 3 : s[0] >= 0xC2 ? 2 : 0;
  for (size_t i = 1; i < n; i++)
    if ((s[i] & 0xC0) != 0x80)
      return 0;
  if ((n == 3 && s[0] == 0xE0 && s[1] < 0xA0) || (n == 3 && s[0] == 0xED && s[1] >= 0xA0) ||
      (n == 4 && s[0] == 0xF0 && s[1] < 0x90) || (n == 4 && s[0] == 0xF4 && s[1] >= 0x90))
    return 0;
  return n;
}

void plc_import_put_comment(FILE *f, const char *s)
{
  const unsigned char *p = (const unsigned char *)s;
  while (*p) {
    size_t n = plc_import_utf8(p);
    if (n == 0 || *p < 0x20 || *p == 0x7F) {
      fputc('?', f);
      p++;
    } else {
      fwrite(p, 1, n, f);
      p += n;
    }
  }
}

void plc_import_put_string(FILE *f, const char *s)
{
  const unsigned char *p = (const unsigned char *)s;
  fputc('"', f);
  while (*p) {
    size_t n = plc_import_utf8(p);
    if (*p == '"' || *p == '\\')
      fprintf(f, "\\%c", *p);
    else if (*p == '\n' || *p == '\t')
      fputs(*p == '\n' ? "\\n" : "\\t", f);
    else if (n == 0 || *p < 0x20 || *p == 0x7F)
      n = 0, fputc('?', f);
    else
      fwrite(p, 1, n, f);
    p += n ? n : 1;
  }
  fputc('"', f);
}

static const char *const plc_import_keywords[] = {
  "import", "let", "option", "op", "if", "else", "for", "in", "assert", "report", "true",
  "false", "device", "link", "cluster", "tier", "model", "train", "framework", "template", NULL,
};

int plc_import_is_ident(const char *s)
{
  if (!*s || (*s >= '0' && *s <= '9'))
    return 0;
  for (const char *p = s; *p; p++)
    if (!(*p == '_' || (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') ||
          (*p >= 'A' && *p <= 'Z')))
      return 0;
  for (int i = 0; plc_import_keywords[i]; i++)
    if (!strcmp(s, plc_import_keywords[i]))
      return 0;
  return 1;
}

void plc_import_ident(const char *s, char *buf, size_t n)
{
  size_t k = 0;
  if (*s >= '0' && *s <= '9')
    buf[k++] = 'm', buf[k++] = '_';
  for (; *s && k + 2 < n; s++) {
    int ok = *s == '_' || (*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'z') ||
             (*s >= 'A' && *s <= 'Z');
    if (ok || (k > 0 && buf[k - 1] != '_'))
      buf[k++] = ok ? *s : '_';
  }
  while (k > 0 && buf[k - 1] == '_')
    k--;
  buf[k] = '\0';
  if (k == 0)
    snprintf(buf, n, "imported");
  else if (!plc_import_is_ident(buf))
    buf[k] = '_', buf[k + 1] = '\0';
}

/* ---- comments and fields ----------------------------------------------- */

void plc_import_text_add(plc_import_text *t, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0)
    return;
  if (t->len + (size_t)n + 1 > t->cap) {
    t->cap = (t->len + (size_t)n + 1) * 2;
    t->s = plc_xrealloc(t->s, t->cap);
  }
  va_start(ap, fmt);
  vsnprintf(t->s + t->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  t->len += (size_t)n;
}

void plc_import_text_comment(FILE *f, const plc_import_text *t)
{
  const char *p = t->s ? t->s : "";
  while (*p == ' ')
    p++;
  while (*p) {
    size_t n = strlen(p), cut = n;
    if (n > 76) { /* "# " + 76 columns; break at the last space that fits */
      cut = 76;
      while (cut > 0 && p[cut] != ' ')
        cut--;
      if (cut == 0)
        cut = strcspn(p, " ");
    }
    char *line = plc_xmalloc(cut + 1);
    memcpy(line, p, cut);
    line[cut] = '\0';
    fputs("# ", f);
    plc_import_put_comment(f, line);
    fputc('\n', f);
    free(line);
    p += cut;
    while (*p == ' ')
      p++;
  }
}

void plc_import_field(FILE *f, const char *name, const char *value, const char *comment)
{
  int n = fprintf(f, "  %s = %s", name, value);
  if (comment && *comment) {
    fprintf(f, "%*s# ", n < 31 ? 31 - n : 1, "");
    plc_import_put_comment(f, comment);
  }
  fputc('\n', f);
}
