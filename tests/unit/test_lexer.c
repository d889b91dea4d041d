/* test_lexer.c - CUnit tests of the scanner: tokens, locations, units
 * folded into literals, automatic statement ends and lexical errors.
 *
 * Each case scans a string with plc_parse_dump_tokens and compares the dump
 * ("line:col KIND text" per token) with the expected text worked out by
 * hand; diagnostics are captured the same way. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu_main.h"
#include "diag.h"
#include "parse.h"
#include "parser.h"

/* Scan text; return the token dump, and the diagnostics in *errs. */
static char *scan(const char *text, size_t len, char **errs, int *nerr)
{
  char *out = NULL, *err = NULL;
  size_t outn = 0, errn = 0;
  FILE *o = open_memstream(&out, &outn), *e = open_memstream(&err, &errn);
  plc_diag d;
  plc_diag_init(&d, e);
  plc_arena *ar = plc_arena_new();
  plc_source *src = plc_source_new("t.plan", NULL, text, len);
  plc_parse_dump_tokens(o, ar, &d, src);
  fclose(o);
  fclose(e);
  plc_source_free(src);
  plc_arena_free(ar);
  if (nerr)
    *nerr = d.errors;
  if (errs)
    *errs = err;
  else
    free(err);
  return out;
}

static void check_scan(const char *text, const char *want, unsigned line)
{
  char *errs;
  int nerr;
  char *got = scan(text, strlen(text), &errs, &nerr);
  plc_cu_str_eq(got, want, line, __FILE__);
  plc_cu_str_eq(errs, "", line, __FILE__);
  free(got);
  free(errs);
}
#define CHECK_SCAN(text, want) check_scan((text), (want), __LINE__)

static void test_keywords_and_names(void)
{
  CHECK_SCAN("let x = y",
             "1:1 'let'\n1:5 identifier x\n1:7 '='\n1:9 identifier y\n");
  CHECK_SCAN("device H100 {}",
             "1:1 declaration keyword device\n1:8 identifier H100\n1:13 '{'\n1:14 '}'\n");
  CHECK_SCAN("a.b[c](d)",
             "1:1 identifier a\n1:2 '.'\n1:3 identifier b\n1:4 '['\n1:5 identifier c\n"
             "1:6 ']'\n1:7 '('\n1:8 identifier d\n1:9 ')'\n");
  CHECK_SCAN("a==b!=c<=d>=e&&f||g..h",
             "1:1 identifier a\n1:2 '=='\n1:4 identifier b\n1:5 '!='\n1:7 identifier c\n"
             "1:8 '<='\n1:10 identifier d\n1:11 '>='\n1:13 identifier e\n1:14 '&&'\n"
             "1:16 identifier f\n1:17 '||'\n1:19 identifier g\n1:20 '..'\n1:22 identifier h\n");
}

static void test_numbers_exact(void)
{
  /* 3.35 TB/s = 3.35e12 B/s exactly */
  CHECK_SCAN("3.35 TB/s", "1:1 number 3350000000000 B/s\n");
  /* 400 Gbps = 400e9 bit/s = 50e9 B/s */
  CHECK_SCAN("400 Gbps", "1:1 number 50000000000 B/s\n");
  CHECK_SCAN("75%", "1:1 number 3/4 1\n");
  CHECK_SCAN("2.6e10", "1:1 number 26000000000 1\n");
  CHECK_SCAN("1_000_000", "1:1 number 1000000 1\n");
  /* 5 us = 5e-6 s = 1/200000 s */
  CHECK_SCAN("5us", "1:1 number 1/200000 s\n");
  CHECK_SCAN("989 TFLOPS", "1:1 number 989000000000000 FLOP/s\n");
  CHECK_SCAN("1 KiB", "1:1 number 1024 B\n");
  CHECK_SCAN(".5", "1:1 number 1/2 1\n");
}

static void test_unit_boundaries(void)
{
  /* "B/tp" is no unit: the literal keeps B and gives back "/tp". */
  CHECK_SCAN("2 B/tp", "1:1 number 2 B\n1:4 '/'\n1:5 identifier tp\n");
  /* A word that is not a unit is given back whole. */
  CHECK_SCAN("8 nodes", "1:1 number 8 1\n1:3 identifier nodes\n");
  CHECK_SCAN("8 link", "1:1 number 8 1\n1:3 declaration keyword link\n");
  /* A range is not a decimal point. */
  CHECK_SCAN("0..3", "1:1 number 0 1\n1:2 '..'\n1:4 number 3 1\n");
  /* 2e is the number 2 followed by the name e */
  CHECK_SCAN("2e", "1:1 number 2 1\n1:2 identifier e\n");
  /* "5 ms" with a unit on the next line: units stay on the literal's line */
  CHECK_SCAN("x = 5\nms", "1:1 identifier x\n1:3 '='\n1:5 number 5 1\n1:6 ';'\n"
             "2:1 identifier ms\n");
}

static void test_auto_semicolon(void)
{
  CHECK_SCAN("a\nb", "1:1 identifier a\n1:2 ';'\n2:1 identifier b\n");
  /* after an operator the statement goes on */
  CHECK_SCAN("a +\nb", "1:1 identifier a\n1:3 '+'\n2:1 identifier b\n");
  /* inside parentheses and brackets line ends are blanks */
  CHECK_SCAN("(a\nb)\n", "1:1 '('\n1:2 identifier a\n2:1 identifier b\n2:2 ')'\n2:3 ';'\n");
  CHECK_SCAN("[1,\n2]", "1:1 '['\n1:2 number 1 1\n1:3 ','\n2:1 number 2 1\n2:2 ']'\n");
  /* inside braces they end statements; after '{' they do not */
  CHECK_SCAN("{\nx = 1\n}", "1:1 '{'\n2:1 identifier x\n2:3 '='\n2:5 number 1 1\n"
             "2:6 ';'\n3:1 '}'\n");
  CHECK_SCAN("# comment\n\n", "");
}

static void test_columns(void)
{
  /* a tab moves to the next multiple of 8, plus 1 */
  CHECK_SCAN("\tx", "1:9 identifier x\n");
  CHECK_SCAN("ab\tx", "1:1 identifier ab\n1:9 identifier x\n");
  /* a UTF-8 letter in a string counts one column */
  CHECK_SCAN("\"\xc3\xa9\" x", "1:1 string \"\xc3\xa9\"\n1:5 identifier x\n");
  CHECK_SCAN("# \xe2\x86\x92 arrow\nx", "2:1 identifier x\n");
  CHECK_SCAN("\"a\\\"b\\n\"", "1:1 string \"a\"b\n\"\n");
  /* the newline rule takes the indentation after it: a tab at 1 goes to 9,
   * two blanks to 11; two blanks to 3 and a tab to 9; blank, CR, blank:
   * one column each */
  CHECK_SCAN("a\n\t  b\n  \tc\n \r d",
             "1:1 identifier a\n1:2 ';'\n2:11 identifier b\n2:12 ';'\n3:9 identifier c\n"
             "3:10 ';'\n4:4 identifier d\n");
}

static void check_error(const char *text, size_t len, const char *want, unsigned line)
{
  char *errs;
  int nerr;
  char *got = scan(text, len, &errs, &nerr);
  plc_cu_str_eq(errs, want, line, __FILE__);
  PLC_CU_ASSERT_MSG(nerr >= 1, "an error was counted");
  free(got);
  free(errs);
}
#define CHECK_ERROR(text, len, want) check_error((text), (len), (want), __LINE__)

static void test_errors(void)
{
  CHECK_ERROR("x @ y", 5, "t.plan:1:3: error: stray '@' in program\n x @ y\n   ^\n");
  CHECK_ERROR("x\xff", 2, "t.plan:1:2: error: invalid UTF-8 byte 0xff in source file\n"
                          " x\xef\xbf\xbd\n  ^\n"); /* shown as U+FFFD */
  /* a lead byte without its continuation was echoed raw (issue 9 #19) */
  CHECK_ERROR("x\xc3(", 3, "t.plan:1:2: error: invalid UTF-8 byte 0xc3 in source file\n"
                           " x\xef\xbf\xbd(\n  ^\n");
  CHECK_ERROR("a\0b", 3, "t.plan:1:2: error: NUL byte in source file\n a?b\n  ^\n");
  CHECK_ERROR("\"abc", 4, "t.plan:1:1: error: missing terminating '\"' character\n"
                          " \"abc\n ^~~~\n");
  CHECK_ERROR("1e999999999", 11,
              "t.plan:1:1: error: number '1e999999999' is out of range (at most 4096 digits and "
              "exponents within \xc2\xb1" "1000)\n 1e999999999\n ^~~~~~~~~~~\n");
  CHECK_ERROR("\xce\xbb", 2, "t.plan:1:1: error: unexpected character '\xce\xbb' (U+03BB)\n \xce\xbb\n ^\n");
}

static void test_nesting_limit(void)
{
  /* 300 '(' exceed the 256 nesting levels: one error, then the scanner stops */
  char text[301];
  memset(text, '(', 300);
  text[300] = '\0';
  char *errs;
  int nerr;
  char *got = scan(text, 300, &errs, &nerr);
  CU_ASSERT_EQUAL(nerr, 1);
  CU_ASSERT_PTR_NOT_NULL(strstr(errs, "t.plan:1:257: error: nesting too deep"));
  free(got);
  free(errs);
}

/* The scanner's shortcuts (lexer.l, diag.c): columns taken eight bytes at
 * a time, comments and strings whose UTF-8 the patterns check, keywords by
 * their first letter, plain integers read directly, and the scanner's
 * buffer refilled in the middle of a token. */
static void test_fast_paths(void)
{
  /* '#' at 3, "abcdefghij" 4..13, the tab at 14 goes to 17, 'k' 17,
   * U+00E9 one column at 18, "lmnopqrstu" 19..28: the line ends at 29 */
  CHECK_SCAN("x #abcdefghij\tk\xc3\xa9lmnopqrstu\ny",
             "1:1 identifier x\n1:29 ';'\n2:1 identifier y\n");
  /* a string of more than eight bytes with a tab and U+00E9: '"' at 1,
   * "abcdefgh" 2..9, the tab at 10 goes to 17, U+00E9 17, '"' 18, x at 20 */
  CHECK_SCAN("\"abcdefgh\t\xc3\xa9\" x", "1:1 string \"abcdefgh\t\xc3\xa9\"\n1:20 identifier x\n");
  /* a keyword is the whole word */
  CHECK_SCAN("in int if iff op opt option options",
             "1:1 'in'\n1:4 identifier int\n1:8 'if'\n1:11 identifier iff\n1:15 'op'\n"
             "1:18 identifier opt\n1:22 'option'\n1:29 identifier options\n");
  /* nine digits at most are read directly, ten go the general way */
  CHECK_SCAN("007 123456789 1234567890 0",
             "1:1 number 7 1\n1:5 number 123456789 1\n1:15 number 1234567890 1\n"
             "1:26 number 0 1\n");
}

static void test_fast_path_errors(void)
{
  /* '#' at 3, "abcdefgh" 4..11: the bad byte is at 12 */
  CHECK_ERROR("x #abcdefgh\xffz", 13,
              "t.plan:1:12: error: invalid UTF-8 byte 0xff in source file\n"
              " x #abcdefgh\xef\xbf\xbdz\n            ^\n");
  /* in a string: '"' at 1, "abcdefgh" 2..9, the NUL at 10 */
  CHECK_ERROR("\"abcdefgh\0\"", 11,
              "t.plan:1:10: error: NUL byte in source file\n \"abcdefgh?\"\n          ^\n");
}

/* 519 comment lines of 63 bytes (32697 bytes), then a 100-letter name
 * across byte 32768, where a scanner buffer of 16 or 32 KiB ends. */
static void test_buffer_boundary(void)
{
  size_t n = 519 * 63 + 100 + 2;
  char *text = malloc(n + 1), *p = text;
  for (int i = 0; i < 519; i++) {
    memcpy(p, "# ", 2);
    memset(p + 2, 'a', 60);
    p[62] = '\n';
    p += 63;
  }
  memset(p, 'b', 100);
  memcpy(p + 100, "\nz", 3);
  char want[200];
  snprintf(want, sizeof want, "520:1 identifier %.100s\n520:101 ';'\n521:1 identifier z\n", p);
  CHECK_SCAN(text, want);
  free(text);
}

/* A number is matched as a run of the bytes a literal can hold and the
 * longest literal kept (lexer.l, plc_lex_num_match); the rest is given back
 * and scanned again, with the columns a literal of just those bytes has. */
static void test_number_give_back(void)
{
  /* 1e+2 = 100, then the name e at column 5 */
  CHECK_SCAN("1e+2e", "1:1 number 100 1\n1:5 identifier e\n");
  /* an exponent without digits is no exponent: 1E, then the name E at 2 */
  CHECK_SCAN("1E-", "1:1 number 1 1\n1:2 identifier E\n1:3 '-'\n");
  CHECK_SCAN("1E-3E", "1:1 number 1/1000 1\n1:5 identifier E\n");
  /* 3 KB = 3000 B; '/' and x follow as tokens of their own */
  CHECK_SCAN("3 KB/x", "1:1 number 3000 B\n1:5 '/'\n1:6 identifier x\n");
  /* 2 Kbit/s = 2 * 125 B/s; the second '/' is given back */
  CHECK_SCAN("2 Kbit/s/", "1:1 number 250 B/s\n1:9 '/'\n");
  /* 1 min = 60 s; min/h is no unit, min is */
  CHECK_SCAN("1 min/h", "1:1 number 60 s\n1:6 '/'\n1:7 identifier h\n");
  /* a point needs a digit after it: 4, '.', the name e5 */
  CHECK_SCAN("4.e5", "1:1 number 4 1\n1:2 '.'\n1:3 identifier e5\n");
  /* '_' only between digits: 56, then the name _ at 4 */
  CHECK_SCAN("5_6_", "1:1 number 56 1\n1:4 identifier _\n");
  CHECK_SCAN("7..9", "1:1 number 7 1\n1:2 '..'\n1:4 number 9 1\n");
  /* blanks and a tab before '%': 6% = 3/50; blanks before no unit are not
   * part of the literal: the tab at 3 goes to 9, x at 10 */
  CHECK_SCAN("6 \t%", "1:1 number 3/50 1\n");
  CHECK_SCAN("8 \t x", "1:1 number 8 1\n1:10 identifier x\n");
  /* MICRO SIGN + s = 1 us; the sign alone is no unit */
  CHECK_SCAN("1 \xc2\xb5s", "1:1 number 1/1000000 s\n");
  CHECK_SCAN("2 - 1", "1:1 number 2 1\n1:3 '-'\n1:5 number 1 1\n");
}

/* The start of a multi-byte sequence without the rest is one bad byte at a
 * time, each where it is, and the scanner goes on after it. */
static void test_partial_utf8(void)
{
  /* E2 80 is two bytes of a three-byte sequence: E2 at column 1, 80 (a
   * continuation byte, no column of its own) at 2; the line shows one
   * U+FFFD for both (diag.c) */
  CHECK_ERROR("\xe2\x80y", 3,
              "t.plan:1:1: error: invalid UTF-8 byte 0xe2 in source file\n"
              " \xef\xbf\xbdy\n ^\n"
              "t.plan:1:2: error: invalid UTF-8 byte 0x80 in source file\n"
              " \xef\xbf\xbdy\n  ^\n");
  /* F0 9F 98 lacks its fourth byte: F0 at 2, 9F and 98 both at 3 */
  CHECK_ERROR("x\xf0\x9f\x98", 4,
              "t.plan:1:2: error: invalid UTF-8 byte 0xf0 in source file\n"
              " x\xef\xbf\xbd\n  ^\n"
              "t.plan:1:3: error: invalid UTF-8 byte 0x9f in source file\n"
              " x\xef\xbf\xbd\n   ^\n"
              "t.plan:1:3: error: invalid UTF-8 byte 0x98 in source file\n"
              " x\xef\xbf\xbd\n   ^\n");
}

/* A comment is skipped to its line's end in C while that end is in the
 * scanner's buffer, else the CMT rules match the rest (lexer.l).  The
 * scanner's first read ends at byte 8192; 129 filler lines of 63 bytes
 * (8127) and a line of s blanks (s = 0..63) come first, so the comment line
 * 131 starts at byte 8128 + s: inside the first read up to s = 18, across
 * its end from s = 19 ('#' before, the rest after; the newline, a valid
 * three-byte character and a bad byte on both sides in turn).  Line 131 is
 * '#' (column 1), ten c (2..11), U+2192 (12), nine c (13..21), 0xFF (22),
 * twenty d; y starts line 132. */
static void test_comment_across_buffer(void)
{
  for (int s = 0; s < 64; s++) {
    size_t n = 129 * 63 + (size_t)s + 1 + 46;
    char *text = malloc(n + 1), *p = text;
    for (int i = 0; i < 129; i++) {
      memcpy(p, "# ", 2);
      memset(p + 2, 'a', 60);
      p[62] = '\n';
      p += 63;
    }
    memset(p, ' ', (size_t)s);
    p += s;
    *p++ = '\n';
    memcpy(p, "#cccccccccc\xe2\x86\x92" "ccccccccc\xff" "dddddddddddddddddddd\ny", 46);
    p += 46;
    *p = '\0';
    char *errs;
    int nerr;
    char *got = scan(text, (size_t)(p - text), &errs, &nerr);
    plc_cu_str_eq(got, "132:1 identifier y\n", __LINE__, __FILE__);
    plc_cu_str_eq(errs,
                  "t.plan:131:22: error: invalid UTF-8 byte 0xff in source file\n"
                  " #cccccccccc\xe2\x86\x92" "ccccccccc\xef\xbf\xbd" "dddddddddddddddddddd\n"
                  "                      ^\n",
                  __LINE__, __FILE__);
    free(got);
    free(errs);
    free(text);
  }
  /* "x #" and a newline on line 131: for s = 61 the '#' is the first read's
   * last byte and the newline (the ';' at column 4) the next read's first */
  for (int s = 0; s < 64; s++) {
    char *text = malloc(129 * 63 + (size_t)s + 1 + 5 + 1), *p = text;
    for (int i = 0; i < 129; i++) {
      memcpy(p, "# ", 2);
      memset(p + 2, 'a', 60);
      p[62] = '\n';
      p += 63;
    }
    memset(p, ' ', (size_t)s);
    p += s;
    *p++ = '\n';
    memcpy(p, "x #\ny", 6);
    p += 5;
    char *got = scan(text, (size_t)(p - text), NULL, NULL);
    plc_cu_str_eq(got, "131:1 identifier x\n131:4 ';'\n132:1 identifier y\n", __LINE__, __FILE__);
    free(got);
    free(text);
  }
}

/* Every token of text, with its whole location and value, and the
 * diagnostics, by plc_yylex (the parser's view) with the fast path on or
 * off (lexer.l, plc_lex_fast). */
static char *scan_full(const char *text, size_t len, int no_fast)
{
  char *out = NULL;
  size_t outn = 0;
  FILE *o = open_memstream(&out, &outn);
  plc_diag d;
  plc_diag_init(&d, o);
  plc_arena *ar = plc_arena_new();
  plc_source *src = plc_source_new("t.plan", NULL, text, len);
  plc_parse_ctx ctx = {.arena = ar, .diag = &d, .src = src};
  yyscan_t scanner;
  PLC_YYSTYPE val;
  PLC_YYLTYPE loc;
  int saved = plc_lex_no_fast, tok;
  plc_lex_no_fast = no_fast;
  plc_lex_begin(&ctx, &scanner, 0);
  while ((tok = plc_yylex(&val, &loc, scanner, &ctx)) != 0) {
    fprintf(o, "%d %d:%d-%d:%d", tok, loc.first_line, loc.first_column, loc.last_line,
            loc.last_column);
    if (tok == TOK_IDENT) /* interned, under the hash of its characters */
      fprintf(o, " %s%s", val.str,
              plc_name_interned_hash(val.str) == plc_name_fnv(val.str) ? "" : " (bad hash)");
    else if (tok == TOK_STRING)
      fprintf(o, " %s", val.str);
    else if (tok == TOK_DECLKW)
      fprintf(o, " %d", val.kind);
    else if (tok == TOK_NUMBER)
      gmp_fprintf(o, " %Qd", val.node->value);
    fputc('\n', o);
  }
  fprintf(o, "end %d:%d-%d:%d\n", loc.first_line, loc.first_column, loc.last_line,
          loc.last_column);
  plc_lex_end(scanner);
  plc_lex_no_fast = saved;
  fclose(o);
  plc_source_free(src);
  plc_arena_free(ar);
  return out;
}

/* Random text of the pieces the fast path decides on (names, operators
 * and their two-byte forms, '.' before digits, blanks, tabs, CR, line
 * breaks) among those it leaves to flex (numbers, strings, comments,
 * UTF-8, bad bytes), some 40 KB of it so that tokens cross the scanner's
 * reads at many places: the tokens and errors are the same either way. */
static void test_fast_path_same(void)
{
  static const char *const pieces[] = {
    "x", "abc_9", "let", "in", "int", "model", "_", " ", "  ", "\t", "\r", "\n", "\n  ", "\n\t",
    "=", "==", "<", "<=", ">", ">=", "!", "!=", "&&", "||", "&", "|", ".", "..", "...", ".5",
    "1", "2.5", "3 GB", "4 ms", "5%", "-", "+", "*", "/", "^", "(", ")", "{", "}", "[", "]",
    ",", ";", ":", "?", "\"s\"", "\"a\\tb\"", "\"open", "# note\n", "#\n", "\xc3\xa9", "\xff",
    "\xe2\x80", "\x01", "1e5", "7..9", "4.e5", "1f1b",
  };
  const size_t npieces = sizeof pieces / sizeof *pieces;
  unsigned seed = 12345;
  for (int round = 0; round < 12; round++) {
    size_t cap = 48000, n = 0;
    char *text = malloc(cap);
    while (n + 16 < cap - 8000 || (n < cap - 16 && round % 3)) {
      seed = seed * 1103515245u + 12345u;
      const char *piece = pieces[(seed >> 16) % npieces];
      size_t k = strlen(piece);
      memcpy(text + n, piece, k);
      n += k;
      if (n > 40000 + (size_t)round * 97)
        break;
    }
    char *fast = scan_full(text, n, 0), *slow = scan_full(text, n, 1);
    PLC_CU_ASSERT_MSG(strlen(fast) > 1000, "tokens were scanned");
    PLC_CU_ASSERT_MSG(strcmp(fast, slow) == 0, "the fast path gives flex's tokens");
    PLC_CU_ASSERT_MSG(!strstr(fast, "(bad hash)"), "names are interned under their hashes");
    free(fast);
    free(slow);
    free(text);
  }
}

int main(void)
{
  static const plc_cu_test tests[] = {
    {"the fast path gives flex's tokens", test_fast_path_same}, /* first: a fresh scanner */
    {"keywords and names", test_keywords_and_names},
    {"exact numbers with units", test_numbers_exact},
    {"unit boundaries", test_unit_boundaries},
    {"automatic statement ends", test_auto_semicolon},
    {"columns: tabs and UTF-8", test_columns},
    {"lexical errors", test_errors},
    {"nesting limit", test_nesting_limit},
    {"shortcuts give the same tokens", test_fast_paths},
    {"shortcuts give the same errors", test_fast_path_errors},
    {"a token across the scanner's buffer", test_buffer_boundary},
    {"a number's run given back", test_number_give_back},
    {"partial UTF-8 sequences", test_partial_utf8},
    {"a comment across the scanner's buffer", test_comment_across_buffer},
    {NULL, NULL},
  };
  return plc_cu_run("lexer", tests);
}
