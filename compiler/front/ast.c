/* ast.c - constructing and printing syntax trees. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "ast.h"
#include "xalloc.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

plc_ast *plc_ast_new(plc_arena *ar, plc_ast_kind kind, const plc_loc *loc)
{
  plc_ast *n = plc_arena_alloc(ar, sizeof *n);
  n->kind = kind;
  if (loc)
    n->loc = *loc;
  n->depth = 1;
  return n;
}

void plc_ast_fix_depth(plc_ast *n)
{
  int d = 0;
  const plc_ast *kids[3] = {n->a, n->b, n->c};
  for (int i = 0; i < 3; i++)
    if (kids[i] && kids[i]->depth > d)
      d = kids[i]->depth;
  for (const plc_ast *k = n->list.head; k; k = k->next)
    if (k->depth > d)
      d = k->depth;
  n->depth = d + 1;
}

plc_ast *plc_ast_unary(plc_arena *ar, const plc_loc *loc, int op, plc_ast *a)
{
  plc_ast *n = plc_ast_new(ar, PLC_AST_UNARY, loc);
  n->op = op;
  n->a = a;
  plc_ast_fix_depth(n);
  return n;
}

plc_ast *plc_ast_binary(plc_arena *ar, const plc_loc *loc, int op, plc_ast *a, plc_ast *b)
{
  plc_ast *n = plc_ast_new(ar, PLC_AST_BINARY, loc);
  n->op = op;
  n->a = a;
  n->b = b;
  plc_ast_fix_depth(n);
  return n;
}

void plc_ast_list_push(plc_ast_list *l, plc_ast *n)
{
  if (!n)
    return;
  n->next = NULL;
  if (l->tail)
    l->tail->next = n;
  else
    l->head = n;
  l->tail = n;
  l->count++;
}

/* ---- interned names (ast.h) -------------------------------------------- */

plc_name_chunk plc_name_chunks[PLC_NAME_CHUNKS];
atomic_int plc_name_nchunks;

/* The pool: names are added to its last chunk; a set of them (open
 * addressing on their hashes) finds the copy of a name.  Process-wide and
 * never freed, as names outlive every compilation's arena; plans are
 * parsed before a search starts its threads, and the lock keeps a second
 * parse from racing one anyway (a parse holds it throughout, rather than
 * taking it for each of its thousands of names: see parser.y). */
static pthread_mutex_t plc_name_mutex = PTHREAD_MUTEX_INITIALIZER;
static size_t plc_name_used;      /* bytes used in the last chunk */
static const char **plc_name_set; /* interned names, by hash */
static size_t plc_name_count, plc_name_cap;

static void plc_name_set_put(const char *name)
{
  size_t mask = plc_name_cap - 1, i = plc_name_hash(name) & mask;
  while (plc_name_set[i])
    i = (i + 1) & mask;
  plc_name_set[i] = name;
}

/* Room for a record of `need` bytes in the last chunk, or 0 when the pool
 * is full (the name is then copied into no pool, and is not interned). */
static int plc_name_room(size_t need)
{
  int n = atomic_load_explicit(&plc_name_nchunks, memory_order_relaxed);
  if (n && plc_name_used + need <= plc_name_chunks[n - 1].size)
    return 1;
  if (n == PLC_NAME_CHUNKS)
    return 0;
  size_t size = (size_t)65536 << n;
  if (size < need)
    size = need;
  plc_name_chunks[n].lo = (uintptr_t)plc_xmalloc(size);
  plc_name_chunks[n].size = size;
  plc_name_used = 0;
  atomic_store_explicit(&plc_name_nchunks, n + 1, memory_order_release);
  return 1;
}

void plc_name_lock(void) { pthread_mutex_lock(&plc_name_mutex); }

void plc_name_unlock(void) { pthread_mutex_unlock(&plc_name_mutex); }

const char *plc_name_intern(plc_arena *ar, const char *s, size_t n)
{
  plc_name_lock();
  const char *x = plc_name_intern_held(ar, s, n);
  plc_name_unlock();
  return x;
}

const char *plc_name_intern_held(plc_arena *ar, const char *s, size_t n)
{
  unsigned h = 2166136261u;
  for (size_t i = 0; i < n; i++)
    h = (h ^ (unsigned char)s[i]) * 16777619u;
  return plc_name_intern_hashed(ar, s, n, h);
}

/* Double the set of names (not inlined: the lookup in plc_name_intern_hashed
 * then makes no call, and needs no stack frame, for a name it finds). */
__attribute__((noinline)) static void plc_name_set_grow(void)
{
  const char **old = plc_name_set;
  size_t old_cap = plc_name_cap;
  plc_name_cap = old_cap ? old_cap * 2 : 1024;
  plc_name_set = plc_xcalloc(plc_name_cap, sizeof *plc_name_set);
  for (size_t i = 0; i < old_cap; i++)
    if (old[i])
      plc_name_set_put(old[i]);
  free(old);
}

/* Is interned name x the n characters at s?  s holds no NUL, so the loop
 * stops at x's NUL, if not before: it reads no byte past x, as strncmp. */
static inline int plc_name_same(const char *x, const char *s, size_t n)
{
  size_t i = 0;
  while (i < n && x[i] == s[i])
    i++;
  return i == n && !x[n];
}

/* Copy a name not in the set into the pool, at slot i of the set (empty). */
__attribute__((noinline)) static const char *plc_name_add(plc_arena *ar, const char *s, size_t n,
                                                         unsigned h, size_t i)
{
  size_t need = (8 + n + 1 + 7) / 8 * 8; /* hash, ~hash, the name and its NUL */
  char *rec = NULL;
  if (plc_name_room(need)) {
    int last = atomic_load_explicit(&plc_name_nchunks, memory_order_relaxed) - 1;
    rec = (char *)plc_name_chunks[last].lo + plc_name_used;
    plc_name_used += need;
  }
  if (!rec) /* the pool is full: a copy in the arena, hashed when used */
    return plc_arena_strndup(ar, s, n);
  unsigned w[2] = {h, ~h};
  memcpy(rec, w, sizeof w);
  memcpy(rec + 8, s, n);
  rec[8 + n] = '\0';
  plc_name_set[i] = rec + 8;
  plc_name_count++;
  return rec + 8;
}

const char *plc_name_intern_hashed(plc_arena *ar, const char *s, size_t n, unsigned h)
{
  if ((plc_name_count + 1) * 2 > plc_name_cap)
    plc_name_set_grow();
  h = h ? h : 1;
  size_t mask = plc_name_cap - 1, i = h & mask;
  for (const char *x; (x = plc_name_set[i]); i = (i + 1) & mask)
    if (((const unsigned *)(const void *)x)[-2] == h && plc_name_same(x, s, n))
      return x;
  return plc_name_add(ar, s, n, h, i);
}

static const char *const plc_ast_kind_names[PLC_AST_KIND_COUNT] = {
  "num", "str", "bool", "name", "field", "index", "call", "arg", "list", "unary", "binary",
  "cond", "file", "import", "let", "option", "set", "section", "decl", "op", "if", "for",
  "assert", "report", "param", "block",
};

const char *plc_ast_kind_name(plc_ast_kind k) { return plc_ast_kind_names[k]; }

static const char *const plc_decl_names[PLC_DECL_KIND_COUNT] = {
  "device", "link", "cluster", "tier", "model", "train", "framework", "template", "search",
};

const char *plc_decl_kind_name(int k) { return plc_decl_names[k]; }

static const char *const plc_op_names[PLC_OP_COUNT] = {
  "+", "-", "*", "/", "^", "==", "!=", "<", "<=", ">", ">=", "&&", "||", "-", "!",
};

const char *plc_ast_op_name(int op) { return plc_op_names[op]; }

/* The part of a node's line after its kind: names, values, operators. */
static void plc_ast_dump_head(FILE *out, const plc_ast *n)
{
  switch (n->kind) {
  case PLC_AST_NUM: {
    char *v = plc_fmt_exact(n->value), *d = plc_dim_str(n->dim);
    fprintf(out, " %s %s", v, d);
    free(v);
    free(d);
    break;
  }
  case PLC_AST_STR: case PLC_AST_FILE: case PLC_AST_IMPORT:
    fprintf(out, " \"%s\"", n->name);
    break;
  case PLC_AST_BOOL:
    fputs(n->op ? " true" : " false", out);
    break;
  case PLC_AST_UNARY: case PLC_AST_BINARY:
    fprintf(out, " %s", plc_ast_op_name(n->op));
    break;
  case PLC_AST_DECL:
    fprintf(out, " %s %s", plc_decl_kind_name(n->op), n->name);
    break;
  case PLC_AST_OP:
    fprintf(out, " %s : %s", n->name, n->opkind);
    break;
  default:
    if (n->name)
      fprintf(out, " %s", n->name);
  }
}

static void plc_ast_dump_list(FILE *out, const plc_ast_list *l, int indent, const char *label)
{
  if (!l->head)
    return;
  if (label)
    fprintf(out, "%*s%s:\n", indent, "", label);
  for (const plc_ast *k = l->head; k; k = k->next)
    plc_ast_dump(out, k, indent + (label ? 2 : 0));
}

void plc_ast_dump(FILE *out, const plc_ast *n, int indent)
{
  fprintf(out, "%*s%s", indent, "", plc_ast_kind_name(n->kind));
  plc_ast_dump_head(out, n);
  fprintf(out, " @%d:%d\n", n->loc.first_line, n->loc.first_column);
  if (n->kind == PLC_AST_LET || n->kind == PLC_AST_DECL) /* only they have params */
    plc_ast_dump_list(out, &n->params, indent + 2, "params");
  if (n->kind == PLC_AST_IF) { /* condition, then the branches, labelled */
    plc_ast_dump(out, n->a, indent + 2);
    plc_ast_dump_list(out, &n->list, indent + 2, "then");
    if (n->b) {
      fprintf(out, "%*selse:\n", indent + 2, "");
      plc_ast_dump(out, n->b, indent + 4);
    }
    return;
  }
  const plc_ast *kids[3] = {n->a, n->b, n->c};
  for (int i = 0; i < 3; i++)
    if (kids[i])
      plc_ast_dump(out, kids[i], indent + 2);
  plc_ast_dump_list(out, &n->list, indent + 2, NULL);
}
