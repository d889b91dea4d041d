/* parser.y - the plan language grammar.
 *
 * A pure, reentrant bison parser with locations.  The grammar is deliberately
 * uniform: a file and every block are lists of items separated by ';' (which
 * the scanner inserts at line ends), and each declaration kind shares one
 * rule.  Which items a block may hold, and which fields a declaration has,
 * is checked by the semantic pass (compiler/front/sema.c), which gives better
 * messages than a grammar could.  The syntax is documented in plc(5). */

%require "3.7"
%define api.pure full
%define api.prefix {plc_yy}
%define api.token.prefix {TOK_}
%define api.location.type {plc_loc}
%define parse.error custom
%define parse.lac full
%locations
%expect 0

%code requires {
#include "ast.h"
#include "parse.h"
typedef void *yyscan_t;
/* Bison's default copies only line and column fields; carry the file too. */
#define YYLLOC_DEFAULT(Cur, Rhs, N)                                     \
  do {                                                                  \
    if (N) { /* the first symbol's location, extended to the last's */ \
      (Cur) = YYRHSLOC(Rhs, 1);                                         \
      (Cur).last_line = YYRHSLOC(Rhs, N).last_line;                     \
      (Cur).last_column = YYRHSLOC(Rhs, N).last_column;                 \
    } else {                                                            \
      (Cur).src = YYRHSLOC(Rhs, 0).src;                                 \
      (Cur).first_line = (Cur).last_line = YYRHSLOC(Rhs, 0).last_line;  \
      (Cur).first_column = (Cur).last_column = YYRHSLOC(Rhs, 0).last_column; \
    }                                                                   \
  } while (0)
}

%code provides {
int plc_yylex(PLC_YYSTYPE *val, PLC_YYLTYPE *loc, yyscan_t scanner, plc_parse_ctx *ctx);
void plc_lex_begin(plc_parse_ctx *ctx, yyscan_t *scanner, size_t offset);
void plc_lex_end(yyscan_t scanner);
const char *plc_parse_token_name(int tok);
}

%code {
#include <stdlib.h>
#include <string.h>

#include "schema.h"

/* A line break after '}' ends the 'if', so 'else' on the next line starts
 * a statement of its own: say so, and parse its block as if all were well. */
static void plc_parse_stray_else(plc_parse_ctx *ctx, const plc_loc *loc)
{
  plc_error(ctx->diag, loc, "'else' must be on the same line as the '}' that closes the 'if'");
}

static void plc_yyerror(const PLC_YYLTYPE *loc, yyscan_t scanner, plc_parse_ctx *ctx,
                        const char *msg);
static plc_ast *plc_parse_node(plc_parse_ctx *ctx, plc_ast_kind kind, const plc_loc *loc);
static plc_ast *plc_parse_check_depth(plc_parse_ctx *ctx, plc_ast *n);
static void plc_parse_check_chain(plc_parse_ctx *ctx, plc_ast *n);
static void plc_parse_stray_else(plc_parse_ctx *ctx, const plc_loc *loc);
/* The parser's stack: an expression within PLC_AST_MAX_DEPTH needs at most
 * about 4 entries a level ("c ? x :" before the next level; "if c {} else"
 * for an 'else if' chain of that length), and brackets
 * are limited to PLC_PARSE_MAX_NEST, so this never stops a legal plan; a
 * deeper chain (a long "- - - 1", nothing reduced yet) exhausts it, and
 * that is reported as the depth error it is (plc_yyerror). */
#define YYMAXDEPTH (8 * PLC_AST_MAX_DEPTH + 16 * PLC_PARSE_MAX_NEST)
#define NODE(kind, loc) plc_parse_node(ctx, (kind), &(loc))
#define BIN(op, x, y, loc) plc_parse_check_depth(ctx, plc_ast_binary(ctx->arena, &(loc), (op), (x), (y)))
/* A node whose name the evaluator looks up or binds: its hash, once. */
#define HASH(n) ((n)->hash = plc_name_hash((n)->name))
/* Names are spelt IDENT or DECLKW: the rules that take either have two
 * alternatives rather than a nonterminal `name`, a reduction less. */
#define NAME_NODE(name, loc) plc_parse_named(ctx, PLC_AST_NAME, (name), NULL, &(loc))
#define SET_NODE(name, value, loc) plc_parse_named(ctx, PLC_AST_SET, (name), (value), &(loc))
#define FIELD_NODE(obj, name, loc) \
  plc_parse_check_depth(ctx, plc_parse_named(ctx, PLC_AST_FIELD, (name), (obj), &(loc)))
static plc_ast *plc_parse_named(plc_parse_ctx *ctx, plc_ast_kind kind, const char *name,
                                plc_ast *a, const plc_loc *loc);
static const char *plc_parse_decl_name(plc_parse_ctx *ctx, int kind);
}

%param {yyscan_t scanner} {plc_parse_ctx *ctx}

%initial-action {
  @$.src = ctx->src;
  @$.first_line = @$.last_line = 1;
  @$.first_column = @$.last_column = 1;
}

%union {
  plc_ast *node;
  plc_ast_list list;
  const char *str;
  int kind;
}

%token <str> IDENT "identifier"
%token <node> NUMBER "number"
%token <str> STRING "string"
%token <kind> DECLKW "declaration keyword"
%token IMPORT "'import'" LET "'let'" OPTION "'option'" OP "'op'" IF "'if'" ELSE "'else'"
%token FOR "'for'" IN "'in'" ASSERT "'assert'" REPORT "'report'" TRUE "'true'" FALSE "'false'"
%token START_EXPR "start of expression"
%token EQ "'=='" NE "'!='" LE "'<='" GE "'>='" ANDAND "'&&'" OROR "'||'" DOTDOT "'..'"

%type <str> name
%type <node> item decl op_item if_item else_part expr arg param opt_msg
%type <list> items block opt_params params args opt_args exprs opt_exprs names

%right '?' ':'
%left OROR
%left ANDAND
%nonassoc EQ NE '<' LE '>' GE
%left '+' '-'
%left '*' '/'
%precedence UMINUS '!'
%right '^'
/* The postfix operators bind tightest: `-a.b(c)[i]` is -(((a.b)(c))[i]).
 * The %token line keeps these tokens' numbers what their first use in the
 * rules gave them, the order of the "expected ..." lists of syntax errors. */
%token ';' '{' '}' '=' '(' ')' ',' '[' ']' '.'
%precedence '.' '(' '['

%%

file:
  items                     { ctx->file = NODE(PLC_AST_FILE, @$);
                              ctx->file->name = ctx->src->path;
                              ctx->file->list = $1; }
| START_EXPR expr           { ctx->file = $2; }
;

items:
  item                      { $$ = (plc_ast_list){0}; plc_ast_list_push(&$$, $1); }
| items ';' item            { $$ = $1; plc_ast_list_push(&$$, $3); }
;

block:
  '{' items '}'             { $$ = $2; }
;

item:
  %empty                    { $$ = NULL; }
| IMPORT STRING             { $$ = NODE(PLC_AST_IMPORT, @$); $$->name = $2; }
| LET IDENT '=' expr        { $$ = NODE(PLC_AST_LET, @2); $$->name = $2; $$->a = $4; }
| LET IDENT '(' params ')' '=' expr
                            { $$ = NODE(PLC_AST_LET, @2); $$->name = $2; $$->params = $4; $$->a = $7; }
| OPTION IDENT '=' expr     { $$ = NODE(PLC_AST_OPTION, @2); $$->name = $2; $$->a = $4; HASH($$); }
| IDENT '=' expr            { $$ = SET_NODE($1, $3, @1); }
| DECLKW '=' expr           { $$ = SET_NODE(plc_parse_decl_name(ctx, $1), $3, @1); }
| IDENT block               { $$ = NODE(PLC_AST_SECTION, @1); $$->name = $1; $$->list = $2;
                              HASH($$); }
| decl
| op_item
| if_item
| FOR IDENT IN expr DOTDOT expr block
                            { $$ = NODE(PLC_AST_FOR, @1); $$->name = $2; $$->a = $4; $$->b = $6;
                              $$->list = $7; }
| ELSE block               { $$ = NULL; plc_parse_stray_else(ctx, &@1); }
| ELSE if_item              { $$ = NULL; plc_parse_stray_else(ctx, &@1); }
| ASSERT expr opt_msg       { $$ = NODE(PLC_AST_ASSERT, @1); $$->a = $2; $$->b = $3; }
| REPORT names              { $$ = NODE(PLC_AST_REPORT, @1); $$->list = $2; }
| error                     { $$ = NULL; }
;

decl:
  DECLKW IDENT opt_params block
                            { $$ = NODE(PLC_AST_DECL, @2); $$->op = $1; $$->name = $2;
                              $$->params = $3; $$->list = $4; }
| DECLKW IDENT opt_params '=' expr
                            { $$ = NODE(PLC_AST_DECL, @2); $$->op = $1; $$->name = $2;
                              $$->params = $3; $$->a = $5; }
| DECLKW IDENT opt_params '=' expr block
                            { $$ = NODE(PLC_AST_DECL, @2); $$->op = $1; $$->name = $2;
                              $$->params = $3; $$->a = $5; $$->list = $6; }
;

/* Declaration keywords double as names where a name is expected, so
   `model = m`, `cluster.device` and `run.model` read naturally. */
name:
  IDENT
| DECLKW                    { $$ = plc_parse_decl_name(ctx, $1); }
;

opt_params:
  %empty                    { $$ = (plc_ast_list){0}; }
| '(' params ')'            { $$ = $2; }
| '(' ')'                   { $$ = (plc_ast_list){0}; }
;

params:
  param                     { $$ = (plc_ast_list){0}; plc_ast_list_push(&$$, $1); }
| params ',' param          { $$ = $1; plc_ast_list_push(&$$, $3); }
;

param:
  IDENT                     { $$ = NODE(PLC_AST_PARAM, @1); $$->name = $1; HASH($$); }
| IDENT '=' expr            { $$ = NODE(PLC_AST_PARAM, @1); $$->name = $1; $$->a = $3; HASH($$); }
;

op_item:
  OP IDENT ':' IDENT block
                            { $$ = NODE(PLC_AST_OP, @2); $$->name = $2; $$->opkind = $4;
                              $$->loc2 = @4; $$->list = $5; }
| OP IDENT ':' IDENT '(' expr ')' block
                            { $$ = NODE(PLC_AST_OP, @2); $$->name = $2; $$->opkind = $4;
                              $$->loc2 = @4; $$->b = $6; $$->list = $8; }
| OP IDENT '[' expr ']' ':' IDENT block
                            { $$ = NODE(PLC_AST_OP, @2); $$->name = $2; $$->a = $4;
                              $$->opkind = $7; $$->loc2 = @7; $$->list = $8; }
| OP IDENT '[' expr ']' ':' IDENT '(' expr ')' block
                            { $$ = NODE(PLC_AST_OP, @2); $$->name = $2; $$->a = $4;
                              $$->opkind = $7; $$->loc2 = @7; $$->b = $9; $$->list = $11; }
;

if_item:
  IF expr block else_part   { $$ = NODE(PLC_AST_IF, @1); $$->a = $2; $$->list = $3; $$->b = $4;
                              plc_parse_check_chain(ctx, $$); }
;

else_part:
  %empty                    { $$ = NULL; }
| ELSE block                { $$ = NODE(PLC_AST_BLOCK, @1); $$->list = $2; }
| ELSE if_item              { $$ = $2; }
;

opt_msg:
  %empty                    { $$ = NULL; }
| ',' STRING                { $$ = NODE(PLC_AST_STR, @2); $$->name = $2; }
;

names:
  IDENT                     { $$ = (plc_ast_list){0};
                              plc_ast *n = NODE(PLC_AST_NAME, @1); n->name = $1; HASH(n);
                              plc_ast_list_push(&$$, n); }
| names ',' IDENT           { $$ = $1; plc_ast *n = NODE(PLC_AST_NAME, @3); n->name = $3;
                              HASH(n); plc_ast_list_push(&$$, n); }
;

/* One nonterminal for every expression, the names and literals and the
 * postfix forms too (precedence orders them): a name in an expression is
 * one reduction, where a chain of unit rules (expr: postfix: primary: name)
 * took four, most of the parser's work on a plan. */
expr:
  NUMBER
| STRING                    { $$ = NODE(PLC_AST_STR, @1); $$->name = $1; }
| TRUE                      { $$ = NODE(PLC_AST_BOOL, @1); $$->op = 1; }
| FALSE                     { $$ = NODE(PLC_AST_BOOL, @1); $$->op = 0; }
| IDENT                     { $$ = NAME_NODE($1, @1); }
| DECLKW                    { $$ = NAME_NODE(plc_parse_decl_name(ctx, $1), @1); }
| '(' expr ')'              { $$ = $2; }
| '[' opt_exprs ']'         { $$ = NODE(PLC_AST_LIST, @1); $$->list = $2;
                              $$ = plc_parse_check_depth(ctx, $$); }
| expr '.' IDENT            { $$ = FIELD_NODE($1, $3, @3); }
| expr '.' DECLKW           { $$ = FIELD_NODE($1, plc_parse_decl_name(ctx, $3), @3); }
| expr '(' opt_args ')'     { $$ = NODE(PLC_AST_CALL, @2); $$->a = $1; $$->list = $3;
                              $$ = plc_parse_check_depth(ctx, $$); }
| expr '[' expr ']'         { $$ = NODE(PLC_AST_INDEX, @2); $$->a = $1; $$->b = $3;
                              $$ = plc_parse_check_depth(ctx, $$); }
| '-' expr %prec UMINUS     { $$ = plc_parse_check_depth(ctx, plc_ast_unary(ctx->arena, &@$, PLC_OP_NEG, $2)); }
| '!' expr                  { $$ = plc_parse_check_depth(ctx, plc_ast_unary(ctx->arena, &@$, PLC_OP_NOT, $2)); }
| expr '+' expr             { $$ = BIN(PLC_OP_ADD, $1, $3, @2); }
| expr '-' expr             { $$ = BIN(PLC_OP_SUB, $1, $3, @2); }
| expr '*' expr             { $$ = BIN(PLC_OP_MUL, $1, $3, @2); }
| expr '/' expr             { $$ = BIN(PLC_OP_DIV, $1, $3, @2); }
| expr '^' expr             { $$ = BIN(PLC_OP_POW, $1, $3, @2); }
| expr EQ expr              { $$ = BIN(PLC_OP_EQ, $1, $3, @2); }
| expr NE expr              { $$ = BIN(PLC_OP_NE, $1, $3, @2); }
| expr '<' expr             { $$ = BIN(PLC_OP_LT, $1, $3, @2); }
| expr LE expr              { $$ = BIN(PLC_OP_LE, $1, $3, @2); }
| expr '>' expr             { $$ = BIN(PLC_OP_GT, $1, $3, @2); }
| expr GE expr              { $$ = BIN(PLC_OP_GE, $1, $3, @2); }
| expr ANDAND expr          { $$ = BIN(PLC_OP_AND, $1, $3, @2); }
| expr OROR expr            { $$ = BIN(PLC_OP_OR, $1, $3, @2); }
| expr '?' expr ':' expr    { $$ = NODE(PLC_AST_COND, @2); $$->a = $1; $$->b = $3; $$->c = $5;
                              $$ = plc_parse_check_depth(ctx, $$); }
;

opt_args:
  %empty                    { $$ = (plc_ast_list){0}; }
| args
| args ','
;

args:
  arg                       { $$ = (plc_ast_list){0}; plc_ast_list_push(&$$, $1); }
| args ',' arg              { $$ = $1; plc_ast_list_push(&$$, $3); }
;

arg:
  expr                      { $$ = NODE(PLC_AST_ARG, @1); $$->a = $1; $$->depth = $1->depth + 1; }
| name '=' expr             { $$ = NODE(PLC_AST_ARG, @1); $$->name = $1; $$->a = $3;
                              $$->depth = $3->depth + 1; }
;

opt_exprs:
  %empty                    { $$ = (plc_ast_list){0}; }
| exprs
| exprs ','
;

exprs:
  expr                      { $$ = (plc_ast_list){0}; plc_ast_list_push(&$$, $1); }
| exprs ',' expr            { $$ = $1; plc_ast_list_push(&$$, $3); }
;

%%

static plc_ast *plc_parse_node(plc_parse_ctx *ctx, plc_ast_kind kind, const plc_loc *loc)
{
  return plc_ast_new(ctx->arena, kind, loc);
}

/* A node of a kind whose name is hashed (NAME, SET, FIELD), with child a. */
static plc_ast *plc_parse_named(plc_parse_ctx *ctx, plc_ast_kind kind, const char *name,
                                plc_ast *a, const plc_loc *loc)
{
  plc_ast *n = plc_parse_node(ctx, kind, loc);
  n->name = name;
  n->a = a;
  HASH(n);
  return n;
}

/* A declaration keyword where a name is expected: the name it spells. */
static const char *plc_parse_decl_name(plc_parse_ctx *ctx, int kind)
{
  const char *k = plc_decl_kind_name(kind);
  return plc_name_intern_held(ctx->arena, k, strlen(k)); /* plc_lex_begin locked */
}

/* Refuse expression trees deep enough to overflow a recursive pass later. */
static plc_ast *plc_parse_check_depth(plc_parse_ctx *ctx, plc_ast *n)
{
  plc_ast_fix_depth(n);
  if (n->depth > PLC_AST_MAX_DEPTH && !ctx->fatal) {
    plc_error(ctx->diag, &n->loc, "expression too deeply nested (more than %d levels)",
              PLC_AST_MAX_DEPTH);
    ctx->fatal = 1;
  }
  return n;
}

/* An 'else if' chain is a right-nested tree that later passes walk
 * recursively: its length counts against the same limit (IF's depth is
 * the chain's length below it). */
static void plc_parse_check_chain(plc_parse_ctx *ctx, plc_ast *n)
{
  n->depth = n->b && n->b->kind == PLC_AST_IF ? n->b->depth + 1 : 1;
  if (n->depth > PLC_AST_MAX_DEPTH && !ctx->fatal) {
    plc_error(ctx->diag, &n->loc, "'else if' chain too long (more than %d)", PLC_AST_MAX_DEPTH);
    ctx->fatal = 1;
  }
}

static void plc_yyerror(const PLC_YYLTYPE *loc, yyscan_t scanner, plc_parse_ctx *ctx,
                        const char *msg)
{
  (void)scanner;
  if (ctx->fatal)
    return;
  /* bison's stack is full: only an expression or an 'else if' chain deeper
   * than the limit gets there (see YYMAXDEPTH) */
  if (!strcmp(msg, "memory exhausted")) {
    plc_error(ctx->diag, loc, "too deeply nested (more than %d levels of expression or "
              "'else if')", PLC_AST_MAX_DEPTH);
    ctx->fatal = 1;
    return;
  }
  plc_error(ctx->diag, loc, "%s", msg);
}

const char *plc_parse_token_name(int tok)
{
  return yysymbol_name(YYTRANSLATE(tok));
}

/* Byte of the source at a display column of a line (NULL past the line). */
static const char *plc_parse_at(const plc_source *src, int line, int col)
{
  const char *p = src->text, *end = src->text + src->len;
  for (int l = 1; l < line && p < end; p++)
    if (*p == '\n')
      l++;
  for (int c = 1; p < end && *p != '\n' && c < col; p++)
    c = plc_loc_advance(c, (unsigned char)*p);
  return p < end ? p : NULL;
}

/* A name right after a number: a unit plc does not know ("400 Gb/s": the
 * unit meant is Gbit/s), or a word that starts with digits and should be a
 * string (schedule = 1f1b).  Writes "; did you mean ...?" into hint. */
static void plc_parse_number_hint(plc_parse_ctx *ctx, char *hint, size_t size)
{
  const char *id = ctx->last_ident;
  hint[0] = '\0';
  if (ctx->prev_tok != TOK_NUMBER || !id || ctx->prev.first_line != ctx->last.first_line)
    return;
  const char *after = plc_parse_at(ctx->src, ctx->last.first_line, ctx->last.last_column);
  int per_s = after && !strncmp(after, "/s", 2);
  size_t n = strlen(id);
  char unit[64];
  const char *best = NULL;
  if (n <= 2 && id[n - 1] == 'b' && (n == 1 || strchr("KMGT", id[0]))) {
    snprintf(unit, sizeof unit, "%.*sbit%s", (int)n - 1, id, per_s ? "/s" : "");
    best = unit; /* a lowercase b is a bit: 400 Gb/s is 400 Gbit/s, not GB/s */
  } else if (!strpbrk(id, "0123456789")) {
    const char *cands[128];
    size_t k = 0;
    for (const plc_unit *u; k < 128 && (u = plc_unit_at(k)); k++)
      cands[k] = u->name;
    snprintf(unit, sizeof unit, "%s%s", id, per_s ? "/s" : "");
    best = plc_schema_suggest(unit, cands, k);
  }
  if (best) {
    snprintf(hint, size, "; '%s%s' is not a unit: did you mean '%s'?", id, per_s ? "/s" : "",
             best);
    return;
  }
  const char *from = plc_parse_at(ctx->src, ctx->prev.first_line, ctx->prev.first_column);
  const char *to = after ? after : ctx->src->text + ctx->src->len;
  if (from && ctx->prev.last_column == ctx->last.first_column) /* "1f1b", one word */
    snprintf(hint, size, "; did you mean \"%.*s\"?", (int)(to - from), from);
}

/* "unexpected X, expected Y or Z", with hints for the common slips. */
static int yyreport_syntax_error(const yypcontext_t *yyctx, yyscan_t scanner, plc_parse_ctx *ctx)
{
  (void)scanner;
  /* Recovery skips to the next ';'; an unclosed '(' before the error would
   * otherwise stop line ends from producing one for the rest of the file. */
  ctx->pdepth = 0;
  if (ctx->fatal)
    return 0;
  enum { MAX = 6 };
  yysymbol_kind_t expected[MAX];
  int n = yypcontext_expected_tokens(yyctx, expected, MAX);
  yysymbol_kind_t got = yypcontext_token(yyctx);
  char buf[512];
  size_t len = 0;
  const char *what = got == YYSYMBOL_YYEOF ? "end of file" : yysymbol_name(got);
  if (got == YYSYMBOL_YYEOF && ctx->nest > 0) {
    char open = ctx->open_ch[ctx->nest - 1];
    char close = open == '{' ? '}' : open == '(' ? ')' : ']';
    plc_error(ctx->diag, yypcontext_location(yyctx), "unexpected end of file: missing '%c'",
              close);
    plc_note(ctx->diag, &ctx->open[ctx->nest - 1], "to match this '%c'", open);
    return 0;
  }
  if (got == YYSYMBOL_YYEOF)
    len += (size_t)snprintf(buf, sizeof buf, "unexpected end of file");
  else
    len += (size_t)snprintf(buf, sizeof buf, "unexpected %s", what);
  if (n > 0 && n < MAX)
    for (int i = 0; i < n && len < sizeof buf; i++)
      len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s",
                              i == 0 ? ", expected " : i == n - 1 ? " or " : ", ",
                              yysymbol_name(expected[i]));
  char hint[160] = "";
  if (got == YYSYMBOL_IDENT)
    plc_parse_number_hint(ctx, hint, sizeof hint);
  plc_error(ctx->diag, yypcontext_location(yyctx), "%s%s", buf, hint);
  return 0;
}

plc_ast *plc_parse_expr(plc_arena *ar, plc_diag *d, const plc_source *src, size_t offset)
{
  plc_parse_ctx ctx = {.arena = ar, .diag = d, .src = src, .expr_mode = 1};
  yyscan_t scanner;
  int before = d->errors;
  plc_lex_begin(&ctx, &scanner, offset);
  plc_yyparse(scanner, &ctx);
  plc_lex_end(scanner);
  return d->errors > before || !ctx.file || ctx.file->kind == PLC_AST_FILE ? NULL : ctx.file;
}

plc_ast *plc_parse_source(plc_arena *ar, plc_diag *d, const plc_source *src)
{
  plc_parse_ctx ctx = {.arena = ar, .diag = d, .src = src};
  yyscan_t scanner;
  plc_lex_begin(&ctx, &scanner, 0);
  int rc = plc_yyparse(scanner, &ctx);
  plc_lex_end(scanner);
  if (rc == 2 && !ctx.fatal)
    plc_error(d, NULL, "%s: parser ran out of memory", src->path);
  if (!ctx.file) {
    plc_loc loc = {src, 1, 1, 1, 1};
    ctx.file = plc_ast_new(ar, PLC_AST_FILE, &loc);
    ctx.file->name = src->path;
  }
  return ctx.file;
}

void plc_parse_dump_tokens(FILE *out, plc_arena *ar, plc_diag *d, const plc_source *src)
{
  plc_parse_ctx ctx = {.arena = ar, .diag = d, .src = src};
  yyscan_t scanner;
  PLC_YYSTYPE val;
  PLC_YYLTYPE loc;
  int tok;
  plc_lex_begin(&ctx, &scanner, 0);
  while ((tok = plc_yylex(&val, &loc, scanner, &ctx)) != 0) {
    fprintf(out, "%d:%d %s", loc.first_line, loc.first_column, plc_parse_token_name(tok));
    if (tok == TOK_IDENT)
      fprintf(out, " %s", val.str);
    else if (tok == TOK_STRING)
      fprintf(out, " \"%s\"", val.str);
    else if (tok == TOK_DECLKW)
      fprintf(out, " %s", plc_decl_kind_name(val.kind));
    else if (tok == TOK_NUMBER) {
      char *v = plc_fmt_exact(val.node->value), *dim = plc_dim_str(val.node->dim);
      fprintf(out, " %s %s", v, dim);
      free(v);
      free(dim);
    }
    fputc('\n', out);
  }
  plc_lex_end(scanner);
}
