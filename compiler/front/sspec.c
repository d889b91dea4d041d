/* sspec.c - the parts of a search declaration (see sspec.h). */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "sspec.h"
#include "schema.h"
#include "xalloc.h"

#include <stdlib.h>
#include <string.h>

static void plc_sspec_push(const plc_ast ***list, int *n, const plc_ast *x)
{
  *list = plc_xrealloc(*list, (size_t)(*n + 1) * sizeof **list);
  (*list)[(*n)++] = x;
}

const plc_ast *plc_sspec_candidates(plc_env *global, const plc_ast *set)
{
  const plc_ast *e = set->a;
  for (int hops = 0; e && e->kind == PLC_AST_NAME && hops < 16; hops++) {
    plc_binding *b = plc_env_find_local(global, e->name);
    e = b && b->def && b->def->kind == PLC_AST_LET && !b->def->params.count ? b->def->a : NULL;
  }
  return e && e->kind == PLC_AST_LIST ? e : NULL;
}

int plc_sspec_is_own(const char *name)
{
  return !strcmp(name, "require") || !strcmp(name, "minimize") || !strcmp(name, "maximize") ||
         !strcmp(name, "top");
}

void plc_sspec_get(plc_sspec *sp, const plc_ast *decl)
{
  memset(sp, 0, sizeof *sp);
  sp->decl = decl;
  for (const plc_ast *it = decl->list.head; it; it = it->next) {
    if (it->kind == PLC_AST_SECTION && !strcmp(it->name, "vary")) {
      for (const plc_ast *x = it->list.head; x; x = x->next)
        if (x->kind == PLC_AST_SET)
          plc_sspec_push(&sp->vary, &sp->nvary, x);
    } else if (it->kind != PLC_AST_SET) {
      continue;
    } else if (!strcmp(it->name, "require")) {
      sp->require = it;
    } else if (!strcmp(it->name, "minimize") || !strcmp(it->name, "maximize")) {
      sp->objective = it;
      sp->maximize = it->name[1] == 'a';
    } else if (!strcmp(it->name, "top")) {
      sp->top = it;
    } else {
      plc_sspec_push(&sp->sets, &sp->nsets, it);
    }
  }
}

void plc_sspec_free(plc_sspec *sp)
{
  free(sp->vary);
  free(sp->sets);
}

/* Bind every bare name read in e (not a field name after '.', not an
 * argument's name) that lookup knows. */
static void plc_sspec_names(plc_eval *ev, plc_env *env, const plc_ast *e,
                            plc_sspec_lookup *lookup, void *ctx)
{
  if (!e)
    return;
  if (e->kind == PLC_AST_NAME) {
    if (!plc_env_find_local(env, e->name)) {
      plc_value *v = lookup(ctx, e->name, &e->loc);
      if (v)
        plc_env_bind(ev, env, e->name, v);
    }
    return;
  }
  plc_sspec_names(ev, env, e->a, lookup, ctx);
  plc_sspec_names(ev, env, e->b, lookup, ctx);
  plc_sspec_names(ev, env, e->c, lookup, ctx);
  for (const plc_ast *x = e->list.head; x; x = x->next)
    plc_sspec_names(ev, env, x, lookup, ctx);
}

plc_env *plc_sspec_env(plc_eval *ev, plc_env *parent, const plc_ast *expr,
                       plc_sspec_lookup *lookup, void *ctx)
{
  plc_env *env = plc_env_new(ev, parent);
  plc_sspec_names(ev, env, expr, lookup, ctx);
  return env;
}

/* Does the search or the chain of trains it derives from set field name?
 * A base that is not a plain name (an instantiation) counts as setting it. */
static int plc_sspec_sets(const plc_sspec *sp, plc_env *global, const char *name)
{
  for (int i = 0; i < sp->nvary; i++)
    if (!strcmp(sp->vary[i]->name, name))
      return 1;
  for (int i = 0; i < sp->nsets; i++)
    if (!strcmp(sp->sets[i]->name, name))
      return 1;
  const plc_ast *base = sp->decl->a;
  for (int depth = 0; base && depth < 64; depth++) {
    plc_binding *b = base->kind == PLC_AST_NAME ? plc_env_find_local(global, base->name) : NULL;
    const plc_ast *d = b ? b->def : NULL;
    if (!d || d->kind != PLC_AST_DECL || d->op != PLC_DECL_TRAIN)
      return 1;
    for (const plc_ast *it = d->list.head; it; it = it->next)
      if (it->kind == PLC_AST_SET && !strcmp(it->name, name))
        return 1;
    base = d->a;
  }
  return base != NULL;
}

static void plc_sspec_read(const plc_sspec *sp, plc_env *global, const plc_ast *e,
                           const char ***names, int *n)
{
  if (!e)
    return;
  if (e->kind == PLC_AST_NAME) {
    const plc_field *f = plc_schema_field(PLC_DECL_TRAIN, e->name);
    for (int i = 0; i < *n; i++)
      if (!strcmp((*names)[i], e->name))
        return;
    if (f && f->dflt && !plc_sspec_sets(sp, global, e->name)) {
      *names = plc_xrealloc(*names, (size_t)(*n + 1) * sizeof **names);
      (*names)[(*n)++] = e->name;
    }
    return;
  }
  plc_sspec_read(sp, global, e->a, names, n);
  plc_sspec_read(sp, global, e->b, names, n);
  plc_sspec_read(sp, global, e->c, names, n);
  for (const plc_ast *x = e->list.head; x; x = x->next)
    plc_sspec_read(sp, global, x, names, n);
}

int plc_sspec_defaults(const plc_sspec *sp, plc_env *global, const char ***names)
{
  int n = 0;
  *names = NULL;
  for (int i = 0; i < sp->nsets; i++)
    plc_sspec_read(sp, global, sp->sets[i]->a, names, &n);
  return n;
}

void plc_sspec_add_defaults(const plc_sspec *sp, plc_env *global, plc_arena *ar, plc_ast *t)
{
  const char **names;
  int n = plc_sspec_defaults(sp, global, &names);
  for (int i = 0; i < n; i++) {
    plc_ast *set = plc_ast_new(ar, PLC_AST_SET, &sp->decl->loc);
    set->name = names[i];
    set->a = plc_ast_new(ar, PLC_AST_FIELD, &sp->decl->a->loc);
    set->a->a = sp->decl->a;
    set->a->name = names[i];
    plc_ast_list_push(&t->list, set);
  }
  free(names);
}
