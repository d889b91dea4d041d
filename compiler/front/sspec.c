/* sspec.c - the parts of a search declaration (see sspec.h). */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "sspec.h"
#include "xalloc.h"

#include <stdlib.h>
#include <string.h>

static void plc_sspec_push(const plc_ast ***list, int *n, const plc_ast *x)
{
  *list = plc_xrealloc(*list, (size_t)(*n + 1) * sizeof **list);
  (*list)[(*n)++] = x;
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
