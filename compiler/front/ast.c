/* ast.c - constructing and printing syntax trees. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "ast.h"

#include <stdlib.h>

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
