/* parse.h - turning one source file into a syntax tree.
 *
 * Each file gets its own scanner and parser (imports are parsed separately
 * by the loader), so this interface is all the rest of plc needs to know of
 * flex and bison. */
#ifndef PLC_PARSE_H
#define PLC_PARSE_H

#include <stdio.h>

#include "arena.h"
#include "ast.h"
#include "diag.h"

/* Deepest nesting of (), [] and {} accepted by the scanner. */
#define PLC_PARSE_MAX_NEST 256

/* State shared by the scanner and the parser of one file. */
typedef struct plc_parse_ctx {
  plc_arena *arena;
  plc_diag *diag;
  const plc_source *src;
  plc_ast *file;   /* result */
  int fatal;       /* stop: the scanner hit a limit; suppress follow-up errors */
  int line, col;   /* scanner position (1-based) */
  size_t in_pos;   /* bytes of src->text handed to the scanner so far */
  int last_tok;    /* previous token, for automatic ';' at line ends */
  int pdepth;      /* () and [] depth: no automatic ';' inside them */
  int nest;        /* (), [] and {} depth, against PLC_PARSE_MAX_NEST */
  plc_loc open[PLC_PARSE_MAX_NEST + 1]; /* where each open bracket is */
  char open_ch[PLC_PARSE_MAX_NEST + 1];
  plc_loc last;    /* the previous token, for the location of end of file */
  int prev_tok;    /* the token before it, and where it was: a syntax error */
  plc_loc prev;    /*   at a name right after a number gets a hint (prev is
                        kept only when prev_tok is a number) */
  const char *last_ident; /* the text of the last identifier read */
  int expr_mode;   /* parse one expression (-D, -e), not a file */
} plc_parse_ctx;

/* Parse src into a FILE node (NULL only when nothing could be parsed). */
plc_ast *plc_parse_source(plc_arena *ar, plc_diag *d, const plc_source *src);

/* Parse text[offset..] of src as one expression (the value of -D NAME=EXPR
 * or -e EXPR), with columns counted from the start of the text so that
 * diagnostics point into what the user typed.  NULL after an error. */
plc_ast *plc_parse_expr(plc_arena *ar, plc_diag *d, const plc_source *src, size_t offset);

/* Nonzero: the scanner takes every token through flex's tables, none by
 * its fast path (tests compare the two); -1 until the first scan reads
 * PLC_LEX_NO_FAST.  Set it before scanning, not during. */
extern int plc_lex_no_fast;

/* Print the token stream of src for --emit=tokens, one token per line:
 * "line:col KIND text". */
void plc_parse_dump_tokens(FILE *out, plc_arena *ar, plc_diag *d, const plc_source *src);

#endif
