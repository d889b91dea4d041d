/* diag.c - printing diagnostics with the offending source line and a caret. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "diag.h"
#include "xalloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Lines longer than this are shown as a window around the caret. */
#define PLC_DIAG_WIDTH 120

void plc_diag_init(plc_diag *d, FILE *out)
{
  memset(d, 0, sizeof *d);
  d->out = out;
  d->max_errors = 50;
  d->max_warnings = 50;
}

void plc_diag_summary(plc_diag *d)
{
  if (d->hidden_warnings > 0)
    fprintf(d->out, "plc: warning: %d more warning%s not shown (at most %d are)\n",
            d->hidden_warnings, d->hidden_warnings == 1 ? "" : "s", d->max_warnings);
  d->hidden_warnings = 0;
}

int plc_loc_advance(int col, unsigned char c)
{
  if (c == '\t')
    return ((col - 1) / 8 + 1) * 8 + 1;
  if ((c & 0xC0) == 0x80) /* UTF-8 continuation byte: same code point */
    return col;
  return col + 1;
}

int plc_loc_advance_text(int col, const char *text, size_t len)
{
  const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
  size_t i = 0;
  /* Eight bytes at a time while none is a tab or a non-ASCII byte, so
   * that each is one column (the stdlib's long comments are such runs).
   * t has a zero byte where w has a tab: (t - ones) & ~t & highs finds it. */
  for (; i + 8 <= len; i += 8) {
    uint64_t w, t;
    memcpy(&w, text + i, sizeof w);
    t = w ^ (ones * '\t');
    if ((w | ((t - ones) & ~t)) & highs)
      break;
    col += 8;
  }
  for (; i < len; i++)
    col = plc_loc_advance(col, (unsigned char)text[i]);
  return col;
}

/* Find the start of 1-based line `line` in s, or NULL. */
static const char *plc_diag_line_start(const plc_source *s, int line)
{
  const char *p = s->text, *end = s->text + s->len;
  for (int l = 1; l < line; l++) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    if (!nl)
      return NULL;
    p = nl + 1;
  }
  return p;
}

/* Length of the valid UTF-8 sequence at t (at most n bytes), 0 if invalid
 * (overlong forms, surrogates and code points past U+10FFFF included). */
static size_t plc_diag_utf8_len(const unsigned char *t, size_t n)
{
  size_t len = t[0] >= 0xF0 ? 4 : t[0] >= 0xE0 ? 3 : t[0] >= 0xC2 ? 2 : 0;
  if (len == 0 || t[0] > 0xF4 || len > n)
    return 0;
  unsigned cp = t[0] & (0x7F >> len);
  for (size_t i = 1; i < len; i++) {
    if ((t[i] & 0xC0) != 0x80)
      return 0;
    cp = cp << 6 | (t[i] & 0x3F);
  }
  static const unsigned min[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < min[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
    return 0;
  return len;
}

/* Expand one source line to display cells: tabs become spaces, control
 * bytes '?', and each invalid UTF-8 byte U+FFFD (the replacement
 * character: one cell, so the caret still lines up), never the raw byte. */
static char *plc_diag_expand(const char *p, const char *end, int *ncols)
{
  size_t cap = 64, n = 0;
  char *buf = plc_xmalloc(cap);
  int col = 1, bad = 0; /* bad: the previous byte was invalid */
  while (p < end && *p != '\n') {
    unsigned char c = (unsigned char)*p;
    size_t len = c >= 0x80 ? plc_diag_utf8_len((const unsigned char *)p, (size_t)(end - p)) : 1;
    if (n + 16 >= cap)
      buf = plc_xrealloc(buf, cap *= 2);
    if (c == '\t') {
      for (int next = plc_loc_advance(col, c); col < next; col++)
        buf[n++] = ' ';
      p++;
      continue;
    }
    if (c >= 0x80 && len == 0) {
      /* a continuation byte takes no column: after another bad byte it
       * adds no cell either, so the columns after it still line up */
      int next = plc_loc_advance(col, c);
      if (next != col || !bad) {
        memcpy(buf + n, "\xEF\xBF\xBD", 3); /* U+FFFD */
        n += 3;
      }
      col = next;
      bad = 1;
      p++;
      continue;
    }
    bad = 0;
    if (c < 0x20 || c == 0x7f)
      buf[n++] = '?';
    else
      memcpy(buf + n, p, len), n += len;
    col++;
    p += len;
  }
  buf[n] = '\0';
  *ncols = col - 1;
  return buf;
}

/* Byte offset in an expanded line of display column col (1-based). */
static size_t plc_diag_offset(const char *line, int col)
{
  size_t i = 0;
  for (int c = 1; line[i] && c < col; i++)
    if (((unsigned char)line[i] & 0xC0) != 0x80)
      c++;
  while (line[i] && ((unsigned char)line[i] & 0xC0) == 0x80)
    i++;
  return i;
}

static void plc_diag_echo(plc_diag *d, const plc_loc *loc)
{
  const plc_source *s = loc->src;
  const char *p = plc_diag_line_start(s, loc->first_line);
  if (!p)
    return;
  if (p == s->text && s->len >= 3 && !memcmp(p, "\xEF\xBB\xBF", 3))
    p += 3; /* the file's byte order mark: skipped by the scanner, no column */
  int ncols;
  char *line = plc_diag_expand(p, s->text + s->len, &ncols);
  int first = loc->first_column, last = loc->last_column;
  if (loc->last_line != loc->first_line || last > ncols + 1)
    last = ncols + 1;
  if (last <= first)
    last = first + 1;
  int from = 1; /* first display column shown */
  if (ncols > PLC_DIAG_WIDTH && first > PLC_DIAG_WIDTH / 2)
    from = first - PLC_DIAG_WIDTH / 2;
  int to = from + PLC_DIAG_WIDTH; /* exclusive */
  size_t a = plc_diag_offset(line, from), b = plc_diag_offset(line, to);
  fprintf(d->out, " %s%.*s%s\n", from > 1 ? "..." : "", (int)(b - a), line + a,
          line[b] ? "..." : "");
  if (last > to)
    last = to;
  fprintf(d->out, " %*s^", (first - from) + (from > 1 ? 3 : 0), "");
  for (int c = first + 1; c < last; c++)
    fputc('~', d->out);
  fputc('\n', d->out);
  free(line);
}

static const char *const plc_diag_names[] = {"error", "warning", "note"};

void plc_diag_vreport(plc_diag *d, plc_diag_level level, const plc_loc *loc,
                      const char *fmt, va_list ap)
{
  if (level == PLC_DIAG_WARNING && d->no_warnings)
    return;
  if (level == PLC_DIAG_WARNING && d->werror) {
    level = PLC_DIAG_ERROR;
    d->promoted++;
  }
  if (level == PLC_DIAG_ERROR && d->max_errors && d->errors >= d->max_errors) {
    if (!d->truncated)
      fprintf(d->out, "plc: error: too many errors, stopping after %d\n", d->max_errors);
    d->truncated = 1;
    d->errors++;
    d->muted = 1;
    return;
  }
  if (level == PLC_DIAG_NOTE && d->muted)
    return;
  d->muted = 0;
  if (level == PLC_DIAG_WARNING && d->max_warnings && d->warnings >= d->max_warnings) {
    d->warnings++; /* counted, not shown: plc_diag_summary says how many */
    d->hidden_warnings++;
    d->muted = 1;
    return;
  }
  if (level == PLC_DIAG_ERROR)
    d->errors++;
  else if (level == PLC_DIAG_WARNING)
    d->warnings++;
  if (d->capture) {
    char **keep = level == PLC_DIAG_ERROR ? &d->first_error
                  : level == PLC_DIAG_WARNING ? &d->first_warning : NULL;
    if (keep && !*keep) {
      char buf[512];
      vsnprintf(buf, sizeof buf, fmt, ap);
      if (strncmp(buf, "assertion failed", 16) != 0)
        *keep = plc_xstrdup(buf);
    }
    return;
  }
  if (loc && loc->src)
    fprintf(d->out, "%s:%d:%d: %s: ", loc->src->path, loc->first_line, loc->first_column,
            plc_diag_names[level]);
  else
    fprintf(d->out, "plc: %s: ", plc_diag_names[level]);
  vfprintf(d->out, fmt, ap);
  fputc('\n', d->out);
  if (loc && loc->src && loc->first_line > 0)
    plc_diag_echo(d, loc);
}

void plc_diag_report(plc_diag *d, plc_diag_level level, const plc_loc *loc, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  plc_diag_vreport(d, level, loc, fmt, ap);
  va_end(ap);
}

plc_source *plc_source_new(const char *path, const char *realpath, const char *text, size_t len)
{
  plc_source *s = plc_xcalloc(1, sizeof *s);
  s->path = plc_xstrdup(path);
  s->realpath = realpath ? plc_xstrdup(realpath) : NULL;
  s->text = plc_xmalloc(len + 1);
  memcpy(s->text, text, len);
  s->text[len] = '\0';
  s->len = len;
  return s;
}

plc_source *plc_source_adopt(const char *path, const char *realpath, char *text, size_t len)
{
  plc_source *s = plc_xcalloc(1, sizeof *s);
  s->path = plc_xstrdup(path);
  s->realpath = realpath ? plc_xstrdup(realpath) : NULL;
  s->text = text;
  s->len = len;
  return s;
}

void plc_source_free(plc_source *s)
{
  if (!s)
    return;
  free(s->path);
  free(s->realpath);
  free(s->text);
  free(s);
}
