/* ast.h - the abstract syntax tree of a plan file.
 *
 * One node type for everything keeps the tree small to build in the grammar
 * and easy to walk; `kind` says which fields mean what (see the table below).
 * Every node carries the location of the source text it came from.  Nodes
 * live in the compilation's arena and are never freed one by one.
 *
 *   kind          name            a        b         c        list
 *   NUM           -               -        -         -        -     (value, dim)
 *   STR           string value    -        -         -        -
 *   BOOL          -               -        -         -        -     (op = 0/1)
 *   NAME          identifier      -        -         -        -
 *   FIELD         member          object   -         -        -
 *   INDEX         -               object   index     -        -
 *   CALL          -               callee   -         -        arguments
 *   ARG           name or NULL    value    -         -        -
 *   LIST          -               -        -         -        elements
 *   UNARY         -               operand  -         -        -     (op)
 *   BINARY        -               left     right     -        -     (op)
 *   COND          -               cond     then      else     -
 *   FILE          path            -        -         -        items
 *   IMPORT        path            -        -         -        -
 *   LET           name            value    -         -        params
 *   OPTION        name            default  -         -        -
 *   SET           field name      value    -         -        -
 *   SECTION       section name    -        -         -        items
 *   DECL          name            base     -         -        items (params in `params`)
 *   OP            name            index    group     -        items (`opkind` = kind name)
 *   IF            -               cond     else-item -        items (then branch)
 *   FOR           variable        from     to        -        items
 *   ASSERT        -               cond     message   -        -
 *   REPORT        -               -        -         -        names (NAME nodes)
 *   PARAM         name            default  -         -        -
 *   BLOCK         -               -        -         -        items (a bare else block)
 */
#ifndef PLC_AST_H
#define PLC_AST_H

#include "arena.h"
#include "diag.h"
#include "quantity.h"

#include <stdatomic.h>
#include <stdint.h>

typedef enum plc_ast_kind {
  PLC_AST_NUM, PLC_AST_STR, PLC_AST_BOOL, PLC_AST_NAME, PLC_AST_FIELD, PLC_AST_INDEX,
  PLC_AST_CALL, PLC_AST_ARG, PLC_AST_LIST, PLC_AST_UNARY, PLC_AST_BINARY, PLC_AST_COND,
  PLC_AST_FILE, PLC_AST_IMPORT, PLC_AST_LET, PLC_AST_OPTION, PLC_AST_SET, PLC_AST_SECTION,
  PLC_AST_DECL, PLC_AST_OP, PLC_AST_IF, PLC_AST_FOR, PLC_AST_ASSERT, PLC_AST_REPORT,
  PLC_AST_PARAM, PLC_AST_BLOCK,
  PLC_AST_KIND_COUNT
} plc_ast_kind;

/* Kinds of declaration (DECL nodes, field `decl`). */
typedef enum plc_decl_kind {
  PLC_DECL_DEVICE, PLC_DECL_LINK, PLC_DECL_CLUSTER, PLC_DECL_TIER, PLC_DECL_MODEL,
  PLC_DECL_TRAIN, PLC_DECL_FRAMEWORK, PLC_DECL_TEMPLATE, PLC_DECL_SEARCH,
  PLC_DECL_KIND_COUNT
} plc_decl_kind;

/* Operators of UNARY and BINARY nodes. */
typedef enum plc_ast_op {
  PLC_OP_ADD, PLC_OP_SUB, PLC_OP_MUL, PLC_OP_DIV, PLC_OP_POW,
  PLC_OP_EQ, PLC_OP_NE, PLC_OP_LT, PLC_OP_LE, PLC_OP_GT, PLC_OP_GE,
  PLC_OP_AND, PLC_OP_OR, PLC_OP_NEG, PLC_OP_NOT,
  PLC_OP_COUNT
} plc_ast_op;

/* Deepest expression tree accepted; deeper input is an error, not a stack
 * overflow in a later recursive pass. */
#define PLC_AST_MAX_DEPTH 2000

typedef struct plc_ast plc_ast;

typedef struct plc_ast_list {
  plc_ast *head, *tail;
  int count;
} plc_ast_list;

/* A node is allocated for every name, number and operator of a plan and
 * its imports (thousands), and they are half the memory --check touches:
 * fields only one kind uses share a union, and the int-sized fields come
 * first, so a node is 144 bytes with no padding the arena would round up. */
struct plc_ast {
  plc_ast_kind kind;
  int op;             /* plc_ast_op, plc_decl_kind, or the BOOL value */
  int depth;          /* height of the expression tree below this node */
  plc_dim dim;        /* NUM */
  plc_loc loc;
  const char *name;
  plc_ast *a, *b, *c;
  plc_ast_list list;
  plc_ast *next;      /* next sibling in a plc_ast_list */
  union {             /* by kind (nodes start zeroed, from the arena) */
    plc_ast_list params; /* LET, DECL: parameters */
    struct {             /* OP */
      plc_loc loc2;       /* where its kind is written */
      const char *opkind; /* compute, all_reduce, ... */
    };
    mpq_ptr value;       /* NUM */
    unsigned hash;       /* NAME, FIELD, PARAM, SET, OPTION, SECTION: plc_name_hash
                            of name, set by the parser (0: not computed) */
  };
};

/* Names, interned.  The lexer makes one copy of each distinct identifier
 * (plc_name_intern), so the names of a plan's nodes that are equal are
 * mostly the same pointer, and each copy carries its hash: the evaluator
 * binds and resolves names hundreds of thousands of times a search, and
 * hashing and comparing them by their characters was a tenth of it.  Names
 * from anywhere else (C literals, -D, copies) still work: their hash is
 * computed and they are compared by their characters.
 *
 * An interned name is 8-aligned in one of the pool's chunks and preceded by
 * two words, its hash h and ~h; no identifier's characters can look like
 * that header (they are ASCII, so ~ of them has every byte >= 0x80), so a
 * pointer into the middle of a name is not taken for one. */
#define PLC_NAME_CHUNKS 16
typedef struct plc_name_chunk {
  uintptr_t lo;
  size_t size;
} plc_name_chunk;
extern plc_name_chunk plc_name_chunks[PLC_NAME_CHUNKS];
extern atomic_int plc_name_nchunks;

/* The one copy of the n characters at s (a name: ASCII, no NUL); in ar
 * only when the pool is full (4 GB of names). */
const char *plc_name_intern(plc_arena *ar, const char *s, size_t n);

/* The same for a caller that holds the pool's lock (plc_name_lock) over
 * many names in a row, as the parser does over a whole file: a lock and an
 * unlock cost more than most lookups. */
void plc_name_lock(void);
void plc_name_unlock(void);
const char *plc_name_intern_held(plc_arena *ar, const char *s, size_t n);
/* The same, given h: FNV-1a of the n characters (plc_name_fnv's loop, before
 * it maps 0 to 1), which the scanner computes as it reads them. */
const char *plc_name_intern_hashed(plc_arena *ar, const char *s, size_t n, unsigned h);

/* FNV-1a, never 0 (0 marks a node's hash as not computed). */
static inline unsigned plc_name_fnv(const char *s)
{
  unsigned h = 2166136261u;
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 16777619u;
  return h ? h : 1;
}

/* An interned name's hash, or 0 when s is not interned. */
static inline unsigned plc_name_interned_hash(const char *s)
{
  uintptr_t p = (uintptr_t)s;
  if (p % 8)
    return 0;
  int n = atomic_load_explicit(&plc_name_nchunks, memory_order_acquire);
  for (int i = 0; i < n; i++)
    if (p - plc_name_chunks[i].lo - 8 < plc_name_chunks[i].size - 8) {
      /* the header, addressed from the chunk it is in */
      const unsigned *w = (const unsigned *)(uintptr_t)(p - 8);
      return w[1] == ~w[0] ? w[0] : 0;
    }
  return 0;
}

/* The hash of a name that environments index it by: an interned name's
 * own, else computed.  Inline: lowering and the evaluator hash the names
 * they bind and look up from C. */
static inline unsigned plc_name_hash(const char *s)
{
  unsigned h = plc_name_interned_hash(s);
  return h ? h : plc_name_fnv(s);
}

/* The hash of node n's name: cached by the parser for the kinds that have
 * room for it, else computed. */
static inline unsigned plc_ast_name_hash(const plc_ast *n)
{
  switch (n->kind) {
  case PLC_AST_NAME: case PLC_AST_FIELD: case PLC_AST_PARAM: case PLC_AST_SET:
  case PLC_AST_OPTION: case PLC_AST_SECTION:
    if (n->hash)
      return n->hash;
    break;
  default:
    break;
  }
  return plc_name_hash(n->name);
}

plc_ast *plc_ast_new(plc_arena *ar, plc_ast_kind kind, const plc_loc *loc);
plc_ast *plc_ast_unary(plc_arena *ar, const plc_loc *loc, int op, plc_ast *a);
plc_ast *plc_ast_binary(plc_arena *ar, const plc_loc *loc, int op, plc_ast *a, plc_ast *b);
void plc_ast_list_push(plc_ast_list *l, plc_ast *n);
/* Height of the deepest child plus one (for PLC_AST_MAX_DEPTH checks). */
void plc_ast_fix_depth(plc_ast *n);

const char *plc_ast_kind_name(plc_ast_kind k);
const char *plc_decl_kind_name(int k);
const char *plc_ast_op_name(int op);

/* Print the tree for --emit=ast: one node per line, indented, with its
 * location; numbers exactly (value in base units and the dimension). */
void plc_ast_dump(FILE *out, const plc_ast *n, int indent);

#endif
