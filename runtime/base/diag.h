/* diag.h - source files, locations and diagnostics.
 *
 * Every diagnostic has the GNU form "file:line:col: error: message", followed
 * by the source line and a "^~~~" underline.  Columns are 1-based display
 * columns: UTF-8 code points count one, a tab advances to the next multiple
 * of 8 plus 1.  A location spans [first_column, last_column) on first_line;
 * the field names follow bison's so the parser can use the type directly. */
#ifndef PLC_DIAG_H
#define PLC_DIAG_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

typedef struct plc_source {
  char *path;      /* as shown in diagnostics */
  char *realpath;  /* canonical, for import cycle detection; may be NULL */
  char *text;      /* whole file, NUL-terminated (may contain NULs) */
  size_t len;
} plc_source;

typedef struct plc_loc {
  const plc_source *src;
  int first_line, first_column;
  int last_line, last_column;
} plc_loc;

typedef enum plc_diag_level { PLC_DIAG_ERROR, PLC_DIAG_WARNING, PLC_DIAG_NOTE } plc_diag_level;

typedef struct plc_diag {
  FILE *out;
  int errors, warnings;
  int werror;      /* treat warnings as errors */
  int promoted;    /* errors that are warnings counted as errors by werror */
  int no_warnings; /* -w */
  int max_errors;  /* stop reporting after this many (0: no limit) */
  int truncated;   /* the limit was reached */
  int max_warnings; /* show at most this many warnings (0: no limit) */
  int hidden_warnings; /* warnings past max_warnings, counted, not shown */
  int muted;       /* the last error or warning was not shown: nor are its notes */
  int capture;     /* print nothing; keep the first error's message (a search's
                      candidates: the reason one is skipped) */
  char *first_error; /* malloc'd, with capture: the first error but false assertions */
  char *first_warning; /* malloc'd, with capture: the first warning */
} plc_diag;

void plc_diag_init(plc_diag *d, FILE *out);
void plc_diag_report(plc_diag *d, plc_diag_level level, const plc_loc *loc,
                     const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void plc_diag_vreport(plc_diag *d, plc_diag_level level, const plc_loc *loc,
                      const char *fmt, va_list ap) __attribute__((format(printf, 4, 0)));
#define plc_error(d, loc, ...) plc_diag_report((d), PLC_DIAG_ERROR, (loc), __VA_ARGS__)
#define plc_warning(d, loc, ...) plc_diag_report((d), PLC_DIAG_WARNING, (loc), __VA_ARGS__)
#define plc_note(d, loc, ...) plc_diag_report((d), PLC_DIAG_NOTE, (loc), __VA_ARGS__)

/* After the last diagnostic: say how many warnings were not shown. */
void plc_diag_summary(plc_diag *d);

/* Source files. */
plc_source *plc_source_new(const char *path, const char *realpath, const char *text, size_t len);
/* The same taking text itself: allocated with malloc, text[len] == '\0'. */
plc_source *plc_source_adopt(const char *path, const char *realpath, char *text, size_t len);
void plc_source_free(plc_source *s);

/* Display column after advancing over the UTF-8 byte c at column col. */
int plc_loc_advance(int col, unsigned char c);
/* The same over len bytes of text on one line (no newline in it): the
 * scanner's per-token step, one call rather than one a byte. */
int plc_loc_advance_text(int col, const char *text, size_t len);

#endif
