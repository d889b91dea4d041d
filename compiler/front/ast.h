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
  };
};

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
