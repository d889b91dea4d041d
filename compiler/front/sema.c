/* sema.c - checking a program before lowering (see sema.h). */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "sema.h"
#include "parse.h"
#include "schema.h"
#include "sspec.h"
#include "xalloc.h"

#include <stdlib.h>
#include <string.h>

/* Where an item appears decides what it may be. */
typedef enum plc_ctx {
  PLC_CTX_TOP, PLC_CTX_DECL, PLC_CTX_MODEL, PLC_CTX_FRAMEWORK, PLC_CTX_TEMPLATE,
  PLC_CTX_SECTION, PLC_CTX_OP
} plc_ctx;

static void plc_sema_items(plc_sema *s, const plc_ast_list *items, plc_env *env, int kind,
                           plc_ctx ctx);

#define DIAG (s->prog->diag)

static const char *plc_sema_item_desc(const plc_ast *it)
{
  switch (it->kind) {
  case PLC_AST_IMPORT: return "'import'";
  case PLC_AST_LET: return "'let'";
  case PLC_AST_OPTION: return "'option'";
  case PLC_AST_SET: return "a field assignment";
  case PLC_AST_SECTION: return "a section";
  case PLC_AST_DECL: {
    static const char *const quoted[PLC_DECL_KIND_COUNT] = {
      "'device'", "'link'", "'cluster'", "'tier'", "'model'", "'train'", "'framework'",
      "'template'", "'search'"};
    return quoted[it->op];
  }
  case PLC_AST_OP: return "'op'";
  case PLC_AST_IF: return "'if'";
  case PLC_AST_FOR: return "'for'";
  case PLC_AST_ASSERT: return "'assert'";
  case PLC_AST_REPORT: return "'report'";
  default: return "this item";
  }
}

/* Report a second definition of a name in one block. */
static int plc_sema_unique(plc_sema *s, plc_env *env, const plc_ast *it)
{
  plc_binding *old = plc_env_find_local(env, it->name);
  if (!old)
    return 1;
  plc_error(DIAG, &it->loc, "redefinition of '%s'", it->name);
  if (old->def)
    plc_note(DIAG, &old->def->loc, "previous definition of '%s' was here", it->name);
  return 0;
}

/* ---- field types ------------------------------------------------------- */

static int plc_sema_word_ok(const plc_ast *e, const char *const *allowed, const char **word)
{
  if (e->kind != PLC_AST_NAME && e->kind != PLC_AST_STR)
    return 0;
  *word = e->name;
  if (!allowed)
    return 1;
  for (size_t i = 0; allowed[i]; i++)
    if (!strcmp(allowed[i], e->name))
      return 1;
  return 0;
}

static void plc_sema_enum_error(plc_sema *s, const plc_ast *e, const plc_field *f)
{
  char list[256] = "";
  for (size_t i = 0; f->enums[i]; i++) {
    strncat(list, i ? ", " : "", sizeof list - strlen(list) - 1);
    strncat(list, f->enums[i], sizeof list - strlen(list) - 1);
  }
  plc_error(DIAG, &e->loc, "'%s' must be one of: %s", f->name, list);
}

static void plc_sema_check_dims(plc_sema *s, const plc_ast *e, const plc_field *f)
{
  if (e->kind != PLC_AST_LIST) {
    plc_error(DIAG, &e->loc, "'%s' must be a list of parallel dimensions", f->name);
    return;
  }
  for (const plc_ast *x = e->list.head; x; x = x->next)
    if (x->kind != PLC_AST_NAME || !plc_schema_is_dim(x->name))
      plc_error(DIAG, &x->loc, "not a parallel dimension (expected one of %s)",
                plc_schema_dims_list());
}

/* Does value v fit field f?  Unknown values fit anything of their type. */
static int plc_sema_fits(const plc_value *v, const plc_field *f)
{
  if (v->tag == PLC_V_ANY || v->tag == PLC_V_ERR)
    return 1;
  switch (f->type) {
  case PLC_FT_NUM: {
    if (v->tag != PLC_V_NUM)
      return 0;
    plc_dim d;
    memcpy(d.e, f->e, sizeof d.e);
    return !v->dim_known || plc_dim_eq(v->dim, d);
  }
  case PLC_FT_BOOL: return v->tag == PLC_V_BOOL;
  case PLC_FT_STR: return v->tag == PLC_V_STR;
  case PLC_FT_REF: return v->tag == PLC_V_OBJ && v->obj->kind == f->ref;
  case PLC_FT_NUMS:
    if (v->tag != PLC_V_LIST)
      return 0;
    for (size_t i = 0; i < v->n; i++)
      if (v->items[i]->tag != PLC_V_NUM && v->items[i]->tag != PLC_V_ANY)
        return 0;
    return 1;
  case PLC_FT_STRS:
    if (v->tag != PLC_V_LIST)
      return 0;
    for (size_t i = 0; i < v->n; i++)
      if (v->items[i]->tag != PLC_V_STR && v->items[i]->tag != PLC_V_ANY)
        return 0;
    return 1;
  case PLC_FT_OPS:
    if (v->tag == PLC_V_OP)
      return 1;
    if (v->tag != PLC_V_LIST)
      return 0;
    for (size_t i = 0; i < v->n; i++)
      if (v->items[i]->tag != PLC_V_OP && v->items[i]->tag != PLC_V_ANY)
        return 0;
    return 1;
  default:
    return 1;
  }
}

static char *plc_sema_field_want(const plc_field *f)
{
  char *s = plc_xmalloc(96);
  if (f->type == PLC_FT_NUM) {
    plc_dim d;
    memcpy(d.e, f->e, sizeof d.e);
    char *ds = plc_dim_str(d);
    if (plc_dim_is_none(d))
      snprintf(s, 96, "a dimensionless number");
    else
      snprintf(s, 96, "a number in %s", ds);
    free(ds);
  } else if (f->type == PLC_FT_REF) {
    snprintf(s, 96, "a %s", plc_decl_kind_name(f->ref));
  } else {
    static const char *const names[] = {"a number", "a boolean", "a string", "a name", "",
                                        "a list of dimensions", "a list of numbers",
                                        "a list of strings", "an op or a list of ops",
                                        "a name"};
    snprintf(s, 96, "%s", names[f->type]);
  }
  return s;
}

/* A known number outside its field's range: zero bandwidths, fractional
 * group sizes, efficiencies above 100%. */
static void plc_sema_range(plc_sema *s, const plc_ast *set, const plc_field *f,
                           const plc_value *v)
{
  if (v->tag != PLC_V_NUM || !v->known || f->check == PLC_CHK_ANY)
    return;
  int sgn = mpq_sgn(v->q);
  int above_one = mpq_cmp_ui(v->q, 1, 1) > 0;
  int integer = mpz_cmp_ui(mpq_denref(v->q), 1) == 0;
  switch (f->check) {
  case PLC_CHK_POS:
    if (sgn <= 0)
      plc_error(DIAG, &set->a->loc, "'%s' must be greater than zero", f->name);
    break;
  case PLC_CHK_NONNEG:
    if (sgn < 0)
      plc_error(DIAG, &set->a->loc, "'%s' must not be negative", f->name);
    break;
  case PLC_CHK_COUNT:
    if (sgn <= 0 || !integer)
      plc_error(DIAG, &set->a->loc, "'%s' must be a whole number of at least 1", f->name);
    break;
  case PLC_CHK_FRAC:
    if (sgn <= 0)
      plc_error(DIAG, &set->a->loc, "'%s' must be greater than zero", f->name);
    else if (above_one)
      plc_warning(DIAG, &set->a->loc, "'%s' is above 100%%", f->name);
    break;
  case PLC_CHK_UNIT:
    if (sgn < 0 || above_one)
      plc_error(DIAG, &set->a->loc, "'%s' must be between 0 and 100%%", f->name);
    break;
  default:
    break;
  }
}

/* Check a field assignment against its schema entry. */
static void plc_sema_field_value(plc_sema *s, const plc_ast *set, const plc_field *f,
                                 plc_env *env)
{
  const char *word;
  if (f->type == PLC_FT_ENUM) {
    if (!plc_sema_word_ok(set->a, f->enums, &word))
      plc_sema_enum_error(s, set->a, f);
    return;
  }
  if (f->type == PLC_FT_WORD) { /* a bare name, or an expression giving a string */
    if (plc_sema_word_ok(set->a, NULL, &word)) {
      if (f->enums && !plc_sema_word_ok(set->a, f->enums, &word)) /* precision */
        plc_sema_enum_error(s, set->a, f);
      return;
    }
    plc_value *v = plc_eval_expr(&s->ev, set->a, env);
    if (v->tag != PLC_V_STR && v->tag != PLC_V_ANY && v->tag != PLC_V_ERR)
      plc_error(DIAG, &set->a->loc, "'%s' must be a name or a string", f->name);
    return;
  }
  if (f->type == PLC_FT_DIMS) {
    plc_sema_check_dims(s, set->a, f);
    return;
  }
  plc_binding *b = plc_env_find_local(env, set->name);
  plc_value *v = b && b->def == set ? plc_eval_binding(&s->ev, b, &set->loc)
                                    : plc_eval_expr(&s->ev, set->a, env);
  if (plc_sema_fits(v, f)) {
    plc_sema_range(s, set, f, v);
    return;
  }
  char *want = plc_sema_field_want(f), *got = plc_value_describe(v);
  plc_error(DIAG, &set->a->loc, "field '%s' must be %s, not %s", f->name, want, got);
  free(want);
  free(got);
}

/* ---- declarations ------------------------------------------------------- */

/* A framework option named like a train field: check the value's type
 * against the option's default. */
/* The value of a train's framework field (its own or its base's), or NULL. */
static plc_value *plc_sema_framework(plc_sema *s, const plc_ast *set, plc_env *env)
{
  plc_binding *fw = plc_env_find_local(env, "framework");
  for (plc_obj *o = env->self ? env->self->base : NULL; !fw && o; o = o->base)
    fw = plc_env_find_local(o->env, "framework"); /* a derived train's base sets it */
  return fw ? plc_eval_binding(&s->ev, fw, &set->loc) : NULL;
}

static int plc_sema_train_option(plc_sema *s, const plc_ast *set, plc_env *env)
{
  plc_value *f = plc_sema_framework(s, set, env);
  if (!f)
    return 0;
  if (f->tag != PLC_V_OBJ || f->obj->kind != PLC_DECL_FRAMEWORK)
    return f->tag == PLC_V_ERR || f->tag == PLC_V_ANY;
  plc_value *def = plc_eval_field(&s->ev, f->obj, set->name, &set->loc);
  if (!def)
    return 0;
  plc_value *v = plc_eval_binding(&s->ev, plc_env_find_local(env, set->name), &set->loc);
  int same = def->tag == v->tag || def->tag == PLC_V_ANY || v->tag == PLC_V_ANY ||
             v->tag == PLC_V_ERR || def->tag == PLC_V_ERR;
  if (same && def->tag == PLC_V_NUM && v->tag == PLC_V_NUM && def->dim_known && v->dim_known)
    same = plc_dim_eq(def->dim, v->dim);
  if (!same) {
    char *want = plc_value_describe(def), *got = plc_value_describe(v);
    plc_error(DIAG, &set->a->loc, "option '%s' of framework '%s' takes %s, not %s", set->name,
              f->obj->name, want, got);
    free(want);
    free(got);
  }
  return 1;
}

static void plc_sema_unknown_field(plc_sema *s, const plc_ast *set, int kind, plc_env *env)
{
  const char *cands[256];
  size_t n = 0;
  for (size_t i = 0; n < 64 && plc_schema_at(kind, i); i++)
    cands[n++] = plc_schema_at(kind, i)->name;
  /* a train may also set its framework's options: sequence_paralel is
   * most likely the option sequence_parallel */
  plc_value *f = kind == PLC_DECL_TRAIN ? plc_sema_framework(s, set, env) : NULL;
  if (f && f->tag == PLC_V_OBJ && f->obj->kind == PLC_DECL_FRAMEWORK)
    for (plc_obj *o = f->obj; o; o = o->base)
      for (size_t i = 0; i < o->env->n && n < 256; i++)
        if (o->env->b[i].def && o->env->b[i].def->kind == PLC_AST_OPTION)
          cands[n++] = o->env->b[i].name;
  const char *hint = plc_schema_suggest(set->name, cands, n);
  char what[160];
  if (kind == PLC_SCHEMA_OP)
    snprintf(what, sizeof what, "an op");
  else if (env->self && env->self->name)
    snprintf(what, sizeof what, "%s '%s'", plc_decl_kind_name(kind), env->self->name);
  else
    snprintf(what, sizeof what, "a %s", plc_decl_kind_name(kind));
  if (hint)
    plc_error(DIAG, &set->loc, "%s has no field '%s'; did you mean '%s'?", what, set->name, hint);
  else
    plc_error(DIAG, &set->loc, "%s has no field '%s'", what, set->name);
}

static void plc_sema_set(plc_sema *s, const plc_ast *set, plc_env *env, int kind)
{
  const plc_field *f = plc_schema_closed(kind) ? plc_schema_field(kind, set->name) : NULL;
  if (f) {
    plc_sema_field_value(s, set, f, env);
    return;
  }
  if (plc_schema_closed(kind)) {
    if (kind == PLC_DECL_TRAIN && plc_sema_train_option(s, set, env))
      return;
    plc_sema_unknown_field(s, set, kind, env);
    return;
  }
  plc_binding *b = plc_env_find_local(env, set->name);
  if (b)
    plc_eval_binding(&s->ev, b, &set->loc);
  else
    plc_eval_expr(&s->ev, set->a, env);
}

/* Required fields must be given here or by the declaration it derives from. */
static void plc_sema_required(plc_sema *s, const plc_ast *decl, plc_obj *o)
{
  if (o->abstract) /* an abstract object is not looked in */
    return;
  const plc_field *f;
  for (size_t i = 0; (f = plc_schema_at(decl->op, i)); i++) {
    if (!f->required) /* only a required field is looked for */
      continue;
    int found = 0;
    for (plc_obj *cur = o; cur && !found; cur = cur->base)
      found = plc_env_find_local(cur->env, f->name) != NULL;
    if (!found)
      plc_error(DIAG, &decl->loc, "%s '%s' needs a field '%s' (%s)",
                plc_decl_kind_name(decl->op), decl->name, f->name, f->doc);
  }
}

/* An instance to check a declaration with: parameters without defaults
 * are unknown, so the body is checked once for every possible argument. */
static plc_obj *plc_sema_instance(plc_sema *s, const plc_ast *decl, plc_env *env)
{
  plc_env *params = plc_env_new(&s->ev, env);
  for (const plc_ast *p = decl->params.head; p; p = p->next) {
    if (plc_env_find_local(params, p->name))
      plc_error(DIAG, &p->loc, "parameter '%s' given twice", p->name);
    if (p->a)
      plc_env_define(&s->ev, params, p->name, p, params);
    else
      plc_env_bind(&s->ev, params, p->name, plc_value_any(&s->ev));
  }
  plc_value *v = plc_eval_instance(&s->ev, decl, params, NULL, params, &decl->loc);
  if (v->tag != PLC_V_OBJ)
    return NULL;
  if (decl->params.count > 0 && !v->obj->abstract)
    v->obj->abstract = PLC_ABSTRACT_TYPED;
  return v->obj;
}

static plc_ctx plc_sema_body_ctx(int kind)
{
  switch (kind) {
  case PLC_DECL_MODEL: return PLC_CTX_MODEL;
  case PLC_DECL_FRAMEWORK: return PLC_CTX_FRAMEWORK;
  case PLC_DECL_TEMPLATE: return PLC_CTX_TEMPLATE;
  default: return PLC_CTX_DECL;
  }
}

static void plc_sema_template_context(plc_sema *s, plc_env *env);

/* Where a tier's size is written (the tier itself when it has no 'size'). */
static const plc_loc *plc_sema_size_loc(const plc_obj *tier)
{
  for (const plc_ast *it = tier->node->list.head; it; it = it->next)
    if (it->kind == PLC_AST_SET && !strcmp(it->name, "size"))
      return &it->a->loc;
  return &tier->node->loc;
}

/* plc(5): each tier's size divides the next.  Checked when the sizes are
 * known (a cluster without parameters, or an instance of one with them);
 * the tiers are the cluster's own, else its base's, as placement takes them. */
static void plc_sema_tier_sizes(plc_sema *s, plc_obj *o)
{
  const plc_obj *prev = NULL;
  mpz_srcptr prev_size = NULL;
  for (plc_obj *c = o; c && !prev; c = c->base)
    for (size_t i = 0; i < c->env->n; i++) {
      const plc_ast *d = c->env->b[i].def;
      if (!d || d->kind != PLC_AST_DECL || d->op != PLC_DECL_TIER)
        continue;
      plc_value *t = plc_eval_field(&s->ev, o, c->env->b[i].name, &d->loc);
      plc_value *size = t && t->tag == PLC_V_OBJ ? plc_eval_field(&s->ev, t->obj, "size", &d->loc)
                                                : NULL;
      if (!size || size->tag != PLC_V_NUM || !size->known || mpq_sgn(size->q) <= 0 ||
          mpz_cmp_ui(mpq_denref(size->q), 1) != 0)
        return; /* unknown here, or an error reported elsewhere */
      if (prev && !mpz_divisible_p(mpq_numref(size->q), prev_size)) {
        char *a = mpz_get_str(NULL, 10, mpq_numref(size->q)), *b = mpz_get_str(NULL, 10, prev_size);
        plc_error(DIAG, plc_sema_size_loc(t->obj), "the size of tier '%s' (%s) is not a multiple "
                  "of the size of tier '%s' (%s): each tier's size must divide the next",
                  t->obj->name, a, prev->name, b);
        plc_gmp_free_str(a);
        plc_gmp_free_str(b);
        return;
      }
      prev = t->obj;
      prev_size = mpq_numref(size->q);
    }
}

/* ---- searches (plc(5) SEARCH) ------------------------------------------- */

/* The check of a search's bare names: a result is an unknown number of its
 * dimension, a varied field an unknown like its candidates, any other
 * field the base train's value (the candidate's is not known yet). */
typedef struct plc_sema_sctx {
  plc_sema *s;
  const plc_sspec *sp;
  plc_obj *train;  /* the search's entries over its base, first candidates */
} plc_sema_sctx;

static plc_value *plc_sema_unknown_like(plc_sema *s, plc_value *v)
{
  if (v->tag == PLC_V_NUM && v->dim_known)
    return plc_value_unknown_num(&s->ev, v->dim.e);
  if (v->tag == PLC_V_BOOL) {
    plc_value *b = plc_value_new(&s->ev, PLC_V_BOOL);
    b->known = 0;
    return b;
  }
  return v;
}

static plc_value *plc_sema_search_name(void *ctx, const char *name, const plc_loc *at)
{
  plc_sema_sctx *c = ctx;
  const plc_field *r = plc_schema_field(PLC_SCHEMA_RESULT, name);
  if (r)
    return plc_value_unknown_num(&c->s->ev, r->e);
  plc_value *v = c->train ? plc_eval_field(&c->s->ev, c->train, name, at) : NULL;
  for (int i = 0; v && i < c->sp->nvary; i++)
    if (!strcmp(c->sp->vary[i]->name, name))
      return plc_sema_unknown_like(c->s, v);
  return v;
}

/* A search entry's expression evaluated with the search's bare names. */
static plc_value *plc_sema_search_eval(plc_sema *s, plc_sema_sctx *c, const plc_ast *e)
{
  plc_env *env = plc_sspec_env(&s->ev, s->ev.global, e, plc_sema_search_name, c);
  return plc_eval_expr(&s->ev, e, env);
}

/* require = COND or [COND, ...]: booleans. */
static void plc_sema_search_require(plc_sema *s, plc_sema_sctx *c, const plc_ast *set)
{
  const plc_ast *e = set->a;
  const plc_ast *one[1] = {e};
  int n = e->kind == PLC_AST_LIST ? e->list.count : 1;
  const plc_ast *x = e->kind == PLC_AST_LIST ? e->list.head : one[0];
  for (int i = 0; i < n && x; i++, x = x->next) {
    plc_value *v = plc_sema_search_eval(s, c, x);
    if (v->tag == PLC_V_BOOL || v->tag == PLC_V_ERR || v->tag == PLC_V_ANY)
      continue;
    char *d = plc_value_describe(v);
    plc_error(DIAG, &x->loc, "a requirement of a search must be a boolean, not %s", d);
    free(d);
  }
}

/* minimize = EXPR or maximize = EXPR: a number; a bare name that is
 * neither a result nor a field gets a hint from the results. */
static void plc_sema_search_objective(plc_sema *s, plc_sema_sctx *c, const plc_ast *set)
{
  const plc_ast *e = set->a;
  if (e->kind == PLC_AST_NAME && !plc_schema_field(PLC_DECL_TRAIN, e->name) &&
      !plc_sema_search_name(c, e->name, &e->loc) &&
      !plc_env_lookup(s->ev.global, e->name)) {
    const char *cands[64];
    size_t n = 0;
    for (size_t i = 0; n < 64 && plc_schema_at(PLC_SCHEMA_RESULT, i); i++)
      cands[n++] = plc_schema_at(PLC_SCHEMA_RESULT, i)->name;
    const char *hint = plc_schema_suggest(e->name, cands, n);
    plc_error(DIAG, &e->loc, "'%s' is not a result or a field of a train%s%s%s", e->name,
              hint ? "; did you mean '" : " (results: step_time, tokens_per_s, mfu, ...)",
              hint ? hint : "", hint ? "'?" : "");
    return;
  }
  plc_value *v = plc_sema_search_eval(s, c, e);
  if (v->tag != PLC_V_NUM && v->tag != PLC_V_ERR && v->tag != PLC_V_ANY) {
    char *d = plc_value_describe(v);
    plc_error(DIAG, &e->loc, "'%s' must be a number to rank by, not %s", set->name, d);
    free(d);
  }
}

/* A framework option varied: every candidate has the type of its default. */
static void plc_sema_search_option(plc_sema *s, plc_obj *train, const plc_ast *set,
                                   const plc_ast *x)
{
  plc_value *fw = train ? plc_eval_field(&s->ev, train, "framework", &set->loc) : NULL;
  plc_value *def = fw && fw->tag == PLC_V_OBJ ? plc_eval_field(&s->ev, fw->obj, set->name,
                                                                &set->loc) : NULL;
  plc_value *v = plc_eval_expr(&s->ev, x, s->ev.global);
  if (!def || v->tag == PLC_V_ERR || def->tag == PLC_V_ERR || def->tag == PLC_V_ANY)
    return;
  int same = def->tag == v->tag;
  if (same && def->tag == PLC_V_NUM && def->dim_known && v->dim_known)
    same = plc_dim_eq(def->dim, v->dim);
  if (!same) {
    char *want = plc_value_describe(def), *got = plc_value_describe(v);
    plc_error(DIAG, &x->loc, "option '%s' of framework '%s' takes %s, not %s", set->name,
              fw->obj->name, want, got);
    free(want);
    free(got);
  }
}

/* vary { NAME = [candidates] }: a written list (or a let holding one), not
 * empty, each candidate a value the train field or framework option takes
 * (checked here, but a first that is not a number: plc_sema_search_train
 * checks it). */
static int plc_sema_search_vary(plc_sema *s, const plc_ast *set)
{
  const plc_ast *list = plc_sspec_candidates(s->ev.global, set);
  if (!list) {
    plc_error(DIAG, &set->a->loc, "the candidates of '%s' must be a list written out, or the "
              "name of a let that is one, as in %s = [1, 2, 4]", set->name, set->name);
    return 0;
  }
  if (!list->list.head) {
    plc_error(DIAG, &set->a->loc, "'%s' has no candidates (an empty list)", set->name);
    return 0;
  }
  return 1;
}

static void plc_sema_search_rest(plc_sema *s, plc_obj *train, const plc_ast *set)
{
  const plc_field *f = plc_schema_field(PLC_DECL_TRAIN, set->name);
  const plc_ast *list = plc_sspec_candidates(s->ev.global, set);
  plc_value *first = plc_eval_expr(&s->ev, list->list.head, s->ev.global);
  const plc_ast *from = first->tag == PLC_V_NUM ? list->list.head : list->list.head->next;
  for (const plc_ast *x = from; x; x = x->next) {
    plc_ast one = *set;
    one.a = (plc_ast *)x;
    one.next = NULL;
    if (f)
      plc_sema_field_value(s, &one, f, plc_env_new(&s->ev, s->ev.global));
    else
      plc_sema_search_option(s, train, set, x);
  }
}

static void plc_sema_search_top(plc_sema *s, const plc_ast *set)
{
  plc_value *v = plc_eval_expr(&s->ev, set->a, s->ev.global);
  if (v->tag == PLC_V_ERR)
    return;
  if (v->tag != PLC_V_NUM || !v->known || mpz_cmp_ui(mpq_denref(v->q), 1) != 0 ||
      mpq_sgn(v->q) <= 0 || mpz_cmp_ui(mpq_numref(v->q), 100000) > 0)
    plc_error(DIAG, &set->a->loc, "'top' must be a whole number from 1 to 100000");
}

/* The items of a search: one vary section, field entries; nothing else. */
static int plc_sema_search_items(plc_sema *s, const plc_ast *decl)
{
  int vary = 0, ok = 1;
  plc_env *seen = plc_env_new(&s->ev, NULL);
  for (const plc_ast *it = decl->list.head; it; it = it->next) {
    int is_vary = it->kind == PLC_AST_SECTION && !strcmp(it->name, "vary");
    if (it->kind == PLC_AST_SECTION && !is_vary) {
      plc_error(DIAG, &it->loc, "unknown section '%s' in a search (the one section is 'vary')",
                it->name);
      ok = 0;
    } else if (is_vary && vary++) {
      plc_error(DIAG, &it->loc, "a search has one 'vary' section");
      ok = 0;
    } else if (it->kind != PLC_AST_SET && !is_vary) {
      plc_error(DIAG, &it->loc, "%s is not allowed in a search", plc_sema_item_desc(it));
      ok = 0;
    }
    for (const plc_ast *x = is_vary ? it->list.head : it->kind == PLC_AST_SET ? it : NULL; x;
         x = is_vary ? x->next : NULL) {
      if (x->kind != PLC_AST_SET) {
        plc_error(DIAG, &x->loc, "only 'NAME = [candidates]' entries belong in 'vary'");
        ok = 0;
      } else if (!plc_sema_unique(s, seen, x)) {
        ok = 0;
      } else {
        plc_env_define(&s->ev, seen, x->name, x, NULL);
        if (is_vary && (plc_sspec_is_own(x->name) || !plc_sema_search_vary(s, x)))
          ok = 0;
        if (is_vary && plc_sspec_is_own(x->name))
          plc_error(DIAG, &x->loc, "'%s' is not a train field to vary", x->name);
      }
    }
  }
  if (!vary) {
    plc_error(DIAG, &decl->loc, "search '%s' has no 'vary' section", decl->name);
    ok = 0;
  }
  return ok;
}

/* "search candidate tp": a name no plan can write. */
static const char *plc_sema_search_slot(plc_sema *s, const char *field)
{
  size_t n = strlen(field) + 18;
  char *name = plc_arena_alloc(s->prog->arena, n);
  snprintf(name, n, "search candidate %s", field);
  return name;
}

/* The train a search's candidates are: its base with the entries and each
 * varied field, checked as a derived train: a number is an unknown of its
 * candidates' dimension (their values are checked one by one), a string or
 * a boolean the first candidate. */
static plc_obj *plc_sema_search_train(plc_sema *s, const plc_ast *decl, const plc_sspec *sp,
                                      plc_env *env)
{
  plc_ast *t = plc_ast_new(s->prog->arena, PLC_AST_DECL, &decl->loc);
  t->op = PLC_DECL_TRAIN;
  t->name = decl->name;
  t->a = decl->a;
  plc_env *venv = plc_env_new(&s->ev, env);
  for (int i = 0; i < sp->nvary + sp->nsets; i++) {
    const plc_ast *src = i < sp->nvary ? sp->vary[i] : sp->sets[i - sp->nvary];
    plc_ast *set = plc_ast_new(s->prog->arena, PLC_AST_SET, &src->loc);
    set->name = src->name;
    set->a = i < sp->nvary ? plc_sspec_candidates(s->ev.global, src)->list.head : src->a;
    plc_value *v = i < sp->nvary ? plc_eval_expr(&s->ev, set->a, env) : NULL;
    if (v && v->tag == PLC_V_NUM) {
      /* an unknown number of the candidates' dimension (under a name no
       * plan can write): the entries computed from it are checked for
       * type and dimension, not for the value of one candidate, which is
       * skipped when invalid */
      plc_ast *n = plc_ast_new(s->prog->arena, PLC_AST_NAME, &set->a->loc);
      n->name = plc_sema_search_slot(s, src->name);
      plc_env_bind(&s->ev, venv, n->name, v->dim_known ? plc_value_unknown_num(&s->ev, v->dim.e)
                                                       : plc_value_any(&s->ev));
      set->a = n;
    }
    plc_ast_list_push(&t->list, set);
  }
  plc_sspec_add_defaults(sp, s->ev.global, s->prog->arena, t);
  plc_obj *o = plc_sema_instance(s, t, venv);
  if (!o)
    return NULL;
  plc_sema_items(s, &t->list, o->env, PLC_DECL_TRAIN, PLC_CTX_DECL);
  return o;
}

static void plc_sema_search(plc_sema *s, const plc_ast *decl, plc_env *env)
{
  if (!decl->a) {
    plc_error(DIAG, &decl->loc, "search '%s' needs the train it varies, as in "
              "search %s = TRAIN { vary { ... } }", decl->name, decl->name);
    return;
  }
  if (decl->params.count)
    plc_error(DIAG, &decl->loc, "a search takes no parameters");
  plc_value *base = plc_eval_expr(&s->ev, decl->a, env);
  if (base->tag == PLC_V_ERR)
    return;
  if (base->tag != PLC_V_OBJ || base->obj->kind != PLC_DECL_TRAIN) {
    char *d = plc_value_describe(base);
    plc_error(DIAG, &decl->a->loc, "search '%s' varies a train, not %s", decl->name, d);
    free(d);
    return;
  }
  if (!plc_sema_search_items(s, decl))
    return;
  plc_sspec sp;
  plc_sspec_get(&sp, decl);
  int errors = DIAG->errors;
  plc_obj *train = plc_sema_search_train(s, decl, &sp, env);
  for (int i = 0; i < sp.nvary && train; i++)
    plc_sema_search_rest(s, train, sp.vary[i]);
  plc_sema_sctx c = {s, &sp, DIAG->errors == errors ? train : NULL};
  if (sp.require)
    plc_sema_search_require(s, &c, sp.require);
  if (sp.objective)
    plc_sema_search_objective(s, &c, sp.objective);
  for (const plc_ast *it = decl->list.head; it; it = it->next)
    if (it->kind == PLC_AST_SET && !strcmp(it->name, "minimize") && sp.objective &&
        sp.objective != it)
      plc_error(DIAG, &it->loc, "a search has one objective: minimize or maximize");
  if (sp.top)
    plc_sema_search_top(s, sp.top);
  plc_sspec_free(&sp);
}

static void plc_sema_decl(plc_sema *s, const plc_ast *decl, plc_env *env)
{
  if (decl->op == PLC_DECL_SEARCH) {
    plc_sema_search(s, decl, env);
    return;
  }
  if (decl->op == PLC_DECL_TEMPLATE) {
    plc_env *tenv = plc_env_new(&s->ev, env);
    plc_sema_template_context(s, tenv);
    env = tenv;
  }
  plc_obj *o = plc_sema_instance(s, decl, env);
  if (!o)
    return;
  plc_sema_items(s, &decl->list, o->env, decl->op, plc_sema_body_ctx(decl->op));
  if (plc_schema_closed(decl->op))
    plc_sema_required(s, decl, o);
  if (decl->op == PLC_DECL_CLUSTER) {
    int tiers = 0;
    for (const plc_ast *it = decl->list.head; it; it = it->next)
      tiers += it->kind == PLC_AST_DECL && it->op == PLC_DECL_TIER;
    if (!tiers && !decl->a)
      plc_error(DIAG, &decl->loc, "cluster '%s' has no tiers", decl->name);
    if (!o->abstract)
      plc_sema_tier_sizes(s, o);
  }
}

/* ---- templates and ops --------------------------------------------------- */

static plc_value *plc_sema_abstract_obj(plc_sema *s, int kind)
{
  plc_value *v = plc_value_new(&s->ev, PLC_V_OBJ);
  v->obj = plc_arena_alloc(s->ev.arena, sizeof *v->obj);
  v->obj->kind = kind;
  v->obj->abstract = kind == PLC_DECL_MODEL ? PLC_ABSTRACT_ANY : PLC_ABSTRACT_TYPED;
  v->obj->env = plc_env_new(&s->ev, NULL);
  v->obj->name = kind == PLC_DECL_TRAIN ? "run" : kind == PLC_DECL_MODEL ? "model"
                 : kind == PLC_DECL_DEVICE ? "device" : "layer";
  return v;
}

/* Names a template body sees besides its own: model, run, layer, prev, device. */
static void plc_sema_template_context(plc_sema *s, plc_env *env)
{
  plc_env_bind(&s->ev, env, "model", plc_sema_abstract_obj(s, PLC_DECL_MODEL));
  plc_value *run = plc_sema_abstract_obj(s, PLC_DECL_TRAIN);
  for (size_t i = 0; i < s->noptions; i++)
    plc_env_bind(&s->ev, run->obj->env, s->options[i], plc_value_any(&s->ev));
  plc_env_bind(&s->ev, env, "run", run);
  plc_env_bind(&s->ev, env, "layer", plc_sema_abstract_obj(s, PLC_SCHEMA_LAYER));
  plc_env_bind(&s->ev, env, "device", plc_sema_abstract_obj(s, PLC_DECL_DEVICE));
  plc_value *prev = plc_value_new(&s->ev, PLC_V_OP);
  prev->prev = 1;
  prev->s = "prev";
  plc_env_bind(&s->ev, env, "prev", prev);
}

static void plc_sema_op(plc_sema *s, const plc_ast *op, plc_env *env)
{
  if (!plc_schema_is_opkind(op->opkind)) {
    plc_error(DIAG, &op->loc2, "unknown op kind '%s' (expected one of %s)", op->opkind,
              plc_schema_opkinds_list());
    return;
  }
  int compute = !strcmp(op->opkind, "compute");
  if (compute && op->b)
    plc_error(DIAG, &op->b->loc, "a compute op runs on no parallel group");
  else if (!compute && !op->b)
    plc_error(DIAG, &op->loc, "collective '%s' needs a parallel group, as in %s(tp)", op->name,
              op->opkind);
  else if (op->b && (op->b->kind != PLC_AST_NAME || !plc_schema_is_dim(op->b->name)))
    plc_error(DIAG, &op->b->loc, "not a parallel dimension (expected one of %s)",
              plc_schema_dims_list());
  if (op->a) {
    plc_value *i = plc_eval_expr(&s->ev, op->a, env);
    if (i->tag != PLC_V_NUM && i->tag != PLC_V_ANY && i->tag != PLC_V_ERR)
      plc_error(DIAG, &op->a->loc, "an op index must be a number");
  }
  plc_env *oenv = plc_env_new(&s->ev, env);
  plc_sema_items(s, &op->list, oenv, PLC_SCHEMA_OP, PLC_CTX_OP);
}

static void plc_sema_cond(plc_sema *s, const plc_ast *it, plc_env *env, int kind, plc_ctx ctx)
{
  plc_value *c = plc_eval_expr(&s->ev, it->a, env);
  if (c->tag != PLC_V_BOOL && c->tag != PLC_V_ANY && c->tag != PLC_V_ERR) {
    char *d = plc_value_describe(c);
    plc_error(DIAG, &it->a->loc, "the condition of 'if' must be a boolean, not %s", d);
    free(d);
  }
  plc_sema_items(s, &it->list, plc_env_new(&s->ev, env), kind, ctx);
  if (it->b && it->b->kind == PLC_AST_IF)
    plc_sema_cond(s, it->b, env, kind, ctx);
  else if (it->b)
    plc_sema_items(s, &it->b->list, plc_env_new(&s->ev, env), kind, ctx);
}

/* An assertion in a template states a configuration the template supports
 * (assert !run.fsdp, "..."): only its type is checked here, with the run
 * unknown and both sides of every `if` visited; lowering decides it. */
static void plc_sema_template_assert(plc_sema *s, const plc_ast *it, plc_env *env)
{
  plc_value *v = plc_eval_expr(&s->ev, it->a, env);
  if (v->tag != PLC_V_BOOL && v->tag != PLC_V_ANY && v->tag != PLC_V_ERR) {
    char *d = plc_value_describe(v);
    plc_error(DIAG, &it->a->loc, "an assertion must be a boolean, not %s", d);
    free(d);
  }
}

static void plc_sema_for(plc_sema *s, const plc_ast *it, plc_env *env, int kind, plc_ctx ctx)
{
  const plc_ast *bounds[2] = {it->a, it->b};
  for (int i = 0; i < 2; i++) {
    plc_value *v = plc_eval_expr(&s->ev, bounds[i], env);
    if (v->tag == PLC_V_ANY || v->tag == PLC_V_ERR)
      continue;
    if (v->tag != PLC_V_NUM || (v->dim_known && !plc_dim_is_none(v->dim)))
      plc_error(DIAG, &bounds[i]->loc, "the bounds of 'for' must be dimensionless numbers");
  }
  plc_env *body = plc_env_new(&s->ev, env);
  int none[PLC_NDIM] = {0};
  plc_env_bind(&s->ev, body, it->name, plc_value_unknown_num(&s->ev, none));
  plc_sema_items(s, &it->list, body, kind, ctx);
}

/* A template's `memory { weights = ...  activations = ... }`: entries of
 * PLC_SCHEMA_MEMORY, in bytes, at the template's top level (lowering reads
 * it once per instance, with the template's lets in scope). */
static void plc_sema_memory(plc_sema *s, const plc_ast *it, plc_env *env)
{
  if (s->in_phase) {
    plc_error(DIAG, &it->loc, "a 'memory' section belongs at the top of a template, not "
              "inside a phase");
    return;
  }
  plc_env *seen = plc_env_new(&s->ev, NULL);
  for (const plc_ast *x = it->list.head; x; x = x->next) {
    const plc_field *f = x->kind == PLC_AST_SET ? plc_schema_field(PLC_SCHEMA_MEMORY, x->name)
                                                : NULL;
    if (x->kind != PLC_AST_SET) {
      plc_error(DIAG, &x->loc, "only 'NAME = value' entries belong in section 'memory'");
      continue;
    }
    if (!f) {
      static const char *const names[] = {"weights", "grads", "optimizer", "activations",
                                          "buffers"};
      const char *hint = plc_schema_suggest(x->name, names, 5);
      if (hint)
        plc_error(DIAG, &x->loc, "unknown entry '%s' in section 'memory'; did you mean '%s'?",
                  x->name, hint);
      else
        plc_error(DIAG, &x->loc, "unknown entry '%s' in section 'memory' (expected weights, "
                  "grads, optimizer, activations or buffers)", x->name);
      continue;
    }
    if (!plc_sema_unique(s, seen, x))
      continue;
    plc_env_define(&s->ev, seen, x->name, x, NULL);
    plc_sema_field_value(s, x, f, env);
  }
}

static void plc_sema_section(plc_sema *s, const plc_ast *it, plc_env *env, int kind,
                             plc_ctx ctx)
{
  static const char *const phases[] = {"forward", "backward", "recompute", NULL};
  const char *word;
  if (ctx == PLC_CTX_TEMPLATE && !strcmp(it->name, "memory")) {
    plc_sema_memory(s, it, env);
    return;
  }
  if (ctx == PLC_CTX_TEMPLATE) {
    if (!plc_sema_word_ok(&(plc_ast){.kind = PLC_AST_NAME, .name = it->name}, phases, &word))
      plc_error(DIAG, &it->loc, "unknown section '%s' in a template (expected forward, "
                "backward, recompute or memory)", it->name);
    int outer = s->in_phase;
    s->in_phase = 1;
    plc_sema_items(s, &it->list, env, kind, PLC_CTX_TEMPLATE);
    s->in_phase = outer;
    return;
  }
  int model_layers = ctx == PLC_CTX_MODEL && !strcmp(it->name, "layers");
  int train_links = kind == PLC_DECL_TRAIN && !strcmp(it->name, "links");
  if (!model_layers && !train_links) {
    plc_error(DIAG, &it->loc, "unknown section '%s' here (sections are 'layers' in a model, "
              "'links' in a train, and phases in a template)", it->name);
    return;
  }
  plc_binding *b = plc_env_find_local(env, it->name);
  plc_value *sv = b ? plc_eval_binding(&s->ev, b, &it->loc) : NULL;
  plc_env *senv = sv && sv->tag == PLC_V_OBJ ? sv->obj->env : plc_env_new(&s->ev, env);
  plc_field f = {it->name, PLC_FT_NUM, {0, 0, 0}, 0, NULL, 0, "", NULL, PLC_CHK_NONNEG};
  if (train_links) {
    f.type = PLC_FT_REF;
    f.ref = PLC_DECL_LINK;
  }
  for (const plc_ast *x = it->list.head; x; x = x->next) {
    if (x->kind != PLC_AST_SET) {
      plc_error(DIAG, &x->loc, "only 'NAME = value' entries belong in section '%s'", it->name);
      continue;
    }
    if (train_links && !plc_schema_is_dim(x->name))
      plc_error(DIAG, &x->loc, "'%s' is not a parallel dimension (expected one of %s)",
                x->name, plc_schema_dims_list());
    f.name = x->name;
    plc_sema_field_value(s, x, &f, senv);
  }
}

/* May an item of this kind appear in this context? */
static int plc_sema_allowed(const plc_ast *it, plc_ctx ctx, int kind)
{
  switch (it->kind) {
  case PLC_AST_IMPORT: case PLC_AST_REPORT:
    return ctx == PLC_CTX_TOP;
  case PLC_AST_ASSERT: /* in a template: what it supports, decided when lowered */
    return ctx == PLC_CTX_TOP || ctx == PLC_CTX_TEMPLATE;
  case PLC_AST_LET: return ctx != PLC_CTX_OP && ctx != PLC_CTX_SECTION;
  case PLC_AST_SET: return ctx != PLC_CTX_TOP && ctx != PLC_CTX_TEMPLATE &&
                           ctx != PLC_CTX_FRAMEWORK;
  case PLC_AST_OPTION: return ctx == PLC_CTX_FRAMEWORK;
  case PLC_AST_SECTION: return ctx == PLC_CTX_MODEL || ctx == PLC_CTX_TEMPLATE ||
                               (ctx == PLC_CTX_DECL && kind == PLC_DECL_TRAIN);
  case PLC_AST_OP: case PLC_AST_IF: case PLC_AST_FOR: return ctx == PLC_CTX_TEMPLATE;
  case PLC_AST_DECL:
    if (it->op == PLC_DECL_TIER)
      return ctx == PLC_CTX_DECL && kind == PLC_DECL_CLUSTER;
    if (it->op == PLC_DECL_TEMPLATE)
      return ctx == PLC_CTX_TOP || ctx == PLC_CTX_FRAMEWORK;
    return ctx == PLC_CTX_TOP;
  default: return 0;
  }
}

static void plc_sema_item(plc_sema *s, const plc_ast *it, plc_env *env, int kind, plc_ctx ctx)
{
  switch (it->kind) {
  case PLC_AST_LET:
    if (!it->params.head) {
      plc_binding *b = plc_env_find_local(env, it->name);
      if (b && b->def == it)
        plc_eval_binding(&s->ev, b, &it->loc);
    } else { /* a function: check its body once with unknown arguments */
      plc_env *fenv = plc_env_new(&s->ev, env);
      for (const plc_ast *p = it->params.head; p; p = p->next) {
        if (plc_env_find_local(fenv, p->name))
          plc_error(DIAG, &p->loc, "parameter '%s' given twice", p->name);
        plc_env_bind(&s->ev, fenv, p->name, plc_value_any(&s->ev));
      }
      plc_eval_expr(&s->ev, it->a, fenv);
    }
    break;
  case PLC_AST_OPTION: case PLC_AST_SET:
    plc_sema_set(s, it, env, it->kind == PLC_AST_OPTION ? -1 : kind);
    break;
  case PLC_AST_SECTION: plc_sema_section(s, it, env, kind, ctx); break;
  case PLC_AST_DECL: plc_sema_decl(s, it, env); break;
  case PLC_AST_OP: plc_sema_op(s, it, env); break;
  case PLC_AST_IF: plc_sema_cond(s, it, env, kind, ctx); break;
  case PLC_AST_FOR: plc_sema_for(s, it, env, kind, ctx); break;
  case PLC_AST_ASSERT:
    if (ctx == PLC_CTX_TEMPLATE)
      plc_sema_template_assert(s, it, env);
    break;
  default: break;
  }
}

static void plc_sema_items(plc_sema *s, const plc_ast_list *items, plc_env *env, int kind,
                           plc_ctx ctx)
{
  if (ctx == PLC_CTX_TEMPLATE && kind == PLC_DECL_TEMPLATE)
    plc_eval_define_ops(&s->ev, env, items);
  plc_env *seen = plc_env_new(&s->ev, NULL); /* names defined in this block */
  for (const plc_ast *it = items->head; it; it = it->next) {
    if (!plc_sema_allowed(it, ctx, kind)) {
      plc_error(DIAG, &it->loc, "%s is not allowed %s", plc_sema_item_desc(it),
                ctx == PLC_CTX_TOP ? "at top level" : "here");
      continue;
    }
    int named = it->kind == PLC_AST_LET || it->kind == PLC_AST_SET || it->kind == PLC_AST_OP ||
                it->kind == PLC_AST_OPTION || it->kind == PLC_AST_DECL ||
                it->kind == PLC_AST_SECTION;
    if (named && ctx != PLC_CTX_TOP) {
      if (!plc_sema_unique(s, seen, it))
        continue;
      plc_env_define(&s->ev, seen, it->name, it, NULL);
    }
    if (ctx != PLC_CTX_TOP && (it->kind == PLC_AST_LET || it->kind == PLC_AST_DECL) &&
        !plc_env_find_local(env, it->name))
      plc_env_define(&s->ev, env, it->name, it, env);
    plc_sema_item(s, it, env, kind, ctx);
  }
}

/* ---- top level ------------------------------------------------------------ */

/* The top-level names of file into ev's global env; s reports a name
 * defined twice (NULL: the first definition stays, silently). */
static void plc_sema_file_names(plc_sema *s, plc_eval *ev, const plc_ast *file)
{
  plc_env *g = ev->global;
  for (const plc_ast *it = file->list.head; it; it = it->next) {
    if (it->kind != PLC_AST_LET && it->kind != PLC_AST_DECL)
      continue;
    if (s ? !plc_sema_unique(s, g, it) : plc_env_find_local(g, it->name) != NULL)
      continue;
    plc_env_define(ev, g, it->name, it, g);
  }
}

static void plc_sema_globals(plc_sema *s)
{
  for (size_t f = 0; f < s->prog->nfiles; f++)
    plc_sema_file_names(s, &s->ev, s->prog->files[f]);
}

plc_env *plc_sema_names(const plc_program *prog, plc_arena *ar)
{
  plc_eval ev;
  plc_eval_init(&ev, ar, NULL);
  for (size_t f = 0; f < prog->nfiles; f++)
    plc_sema_file_names(NULL, &ev, prog->files[f]);
  return ev.global;
}

/* Every framework option name, so templates may read run.NAME. */
static void plc_sema_options(plc_sema *s)
{
  size_t cap = s->noptions;
  for (size_t f = 0; f < s->prog->nfiles; f++)
    for (const plc_ast *it = s->prog->files[f]->list.head; it; it = it->next) {
      if (it->kind != PLC_AST_DECL || it->op != PLC_DECL_FRAMEWORK)
        continue;
      for (const plc_ast *o = it->list.head; o; o = o->next)
        if (o->kind == PLC_AST_OPTION) {
          if (s->noptions == cap) /* grown geometrically: a search does this per candidate */
            s->options = plc_xrealloc(s->options, (cap = cap ? cap * 2 : 64) * sizeof *s->options);
          s->options[s->noptions++] = o->name;
        }
    }
}

static void plc_sema_assert(plc_sema *s, const plc_ast *it)
{
  plc_value *v = plc_eval_expr(&s->ev, it->a, s->ev.global);
  if (v->tag == PLC_V_ERR || v->tag == PLC_V_ANY)
    return;
  if (v->tag != PLC_V_BOOL) {
    char *d = plc_value_describe(v);
    plc_error(DIAG, &it->a->loc, "an assertion must be a boolean, not %s", d);
    free(d);
  } else if (v->known && !v->b) { /* constant: decidable now */
    plc_error(DIAG, &it->loc, "assertion failed%s%s", it->b ? ": " : "",
              it->b ? it->b->name : "");
    const plc_ast **f = plc_arena_alloc(s->prog->arena, (s->nfailed_asserts + 1) * sizeof *f);
    if (s->nfailed_asserts)
      memcpy(f, s->failed_asserts, s->nfailed_asserts * sizeof *f);
    f[s->nfailed_asserts++] = it;
    s->failed_asserts = f;
  }
}

static void plc_sema_report(plc_sema *s, const plc_ast *it)
{
  for (const plc_ast *n = it->list.head; n; n = n->next) {
    plc_binding *b = plc_env_find_local(s->ev.global, n->name);
    if (b && b->def && b->def->kind == PLC_AST_DECL && b->def->op == PLC_DECL_SEARCH)
      continue; /* a search reports its ranking */
    plc_value *v = plc_eval_expr(&s->ev, n, s->ev.global);
    if (v->tag != PLC_V_ERR && (v->tag != PLC_V_OBJ || v->obj->kind != PLC_DECL_TRAIN))
      plc_error(DIAG, &n->loc, "'%s' is not a train or a search", n->name);
  }
}

static void plc_sema_top(plc_sema *s, const plc_ast *file)
{
  plc_sema_items(s, &file->list, s->ev.global, -1, PLC_CTX_TOP);
  for (const plc_ast *it = file->list.head; it; it = it->next) {
    if (it->kind == PLC_AST_ASSERT)
      plc_sema_assert(s, it);
    else if (it->kind == PLC_AST_REPORT)
      plc_sema_report(s, it);
  }
}

/* ---- -D overrides -------------------------------------------------------- */

/* The source of a -D argument: diagnostics about it are located in
 * "<command line>" and show the argument as the source line. */
static const plc_source *plc_sema_define_source(plc_sema *s, const char *arg)
{
  plc_source *src = plc_source_new("<command line>", NULL, arg, strlen(arg));
  s->prog->sources = plc_xrealloc(s->prog->sources,
                                  (s->prog->nsources + 1) * sizeof *s->prog->sources);
  s->prog->sources[s->prog->nsources++] = src;
  return src;
}

/* The location of bytes [from, to) of the first line of a -D argument. */
static plc_loc plc_sema_define_loc(const plc_source *src, size_t from, size_t to)
{
  plc_loc l = {src, 1, 1, 1, 1};
  int col = 1;
  for (size_t i = 0; i < to && i < src->len && src->text[i] != '\n'; i++) {
    if (i == from)
      l.first_column = col;
    col = plc_loc_advance(col, (unsigned char)src->text[i]);
  }
  l.last_column = col > l.first_column ? col : l.first_column + 1;
  return l;
}

/* -D NAME=EXPR on a top-level let: the new value must have the old type. */
static void plc_sema_override_let(plc_sema *s, plc_binding *b, const plc_ast *expr,
                                  const char *name)
{
  plc_ast *let = (plc_ast *)b->def;
  plc_value *old = plc_eval_expr(&s->ev, let->a, s->ev.global);
  plc_value *nv = plc_eval_expr(&s->ev, expr, s->ev.global);
  int same = old->tag == nv->tag || old->tag == PLC_V_ERR || nv->tag == PLC_V_ERR;
  if (same && old->tag == PLC_V_NUM && old->dim_known && nv->dim_known)
    same = plc_dim_eq(old->dim, nv->dim);
  if (!same) {
    char *a = plc_value_describe(old), *d = plc_value_describe(nv);
    plc_error(DIAG, &expr->loc, "-D %s: '%s' is %s, not %s", name, name, a, d);
    free(a);
    free(d);
    return;
  }
  let->a = (plc_ast *)expr;
}

/* -D DECL.FIELD=EXPR: replace or add the field; the declaration's normal
 * check then validates it against the schema. */
static void plc_sema_override_field(plc_sema *s, plc_binding *b, const char *field,
                                    const plc_ast *expr, const char *name, const plc_loc *at)
{
  plc_ast *decl = (plc_ast *)b->def;
  if (decl->kind != PLC_AST_DECL) {
    plc_error(DIAG, at, "-D %s: '%s' is not a declaration", name, b->name);
    return;
  }
  for (plc_ast *it = decl->list.head; it; it = it->next)
    if (it->kind == PLC_AST_SET && !strcmp(it->name, field)) {
      it->a = (plc_ast *)expr;
      return;
    }
  plc_ast *set = plc_ast_new(s->prog->arena, PLC_AST_SET, &expr->loc);
  set->name = plc_arena_strdup(s->prog->arena, field);
  set->a = (plc_ast *)expr;
  plc_ast_list_push(&decl->list, set);
}

/* -D NAME=EXPR or -D DECL.FIELD=EXPR; errors about NAME or DECL are
 * located at it in the argument. */
static void plc_sema_override(plc_sema *s, const char *def)
{
  const plc_source *src = plc_sema_define_source(s, def);
  const char *eq = strchr(def, '=');
  if (!eq || eq == def) {
    plc_loc all = plc_sema_define_loc(src, 0, strlen(def));
    plc_error(DIAG, &all, "-D %s: expected NAME=EXPR", def);
    return;
  }
  char *name = plc_arena_strndup(s->prog->arena, def, (size_t)(eq - def));
  char *dot = strchr(name, '.');
  size_t len = dot ? (size_t)(dot - name) : strlen(name);
  plc_loc at = plc_sema_define_loc(src, 0, len);
  if (dot)
    *dot = '\0';
  plc_binding *b = plc_env_find_local(s->ev.global, name);
  if (dot)
    *dot = '.';
  if (!b) {
    plc_error(DIAG, &at, "-D %s: no top-level definition named '%.*s'", name, (int)len, name);
    return;
  }
  const plc_ast *expr = plc_parse_expr(s->prog->arena, DIAG, src, (size_t)(eq + 1 - def));
  if (!expr)
    return;
  if (dot)
    plc_sema_override_field(s, b, dot + 1, expr, name, &at);
  else if (b->def->kind == PLC_AST_LET && !b->def->params.head)
    plc_sema_override_let(s, b, expr, name);
  else
    plc_error(DIAG, &at, "-D %s: '%s' is not a constant; name a field, as in %s.FIELD=...",
              name, name, name);
}

static const char *plc_sema_import_hint(void *prog, const char *name)
{
  return plc_load_which_import(prog, name);
}

/* Set up s for prog: the evaluator, the top-level names, the options. */
static void plc_sema_start(plc_sema *s, plc_program *prog)
{
  memset(s, 0, sizeof *s);
  s->prog = prog;
  plc_eval_init(&s->ev, prog->arena, prog->diag);
  s->ev.import_hint = plc_sema_import_hint;
  s->ev.import_ctx = prog;
  s->ev.abstract = 1;
}

static void plc_sema_begin(plc_sema *s, plc_program *prog)
{
  plc_sema_start(s, prog);
  plc_sema_globals(s);
  plc_sema_options(s);
}

void plc_sema_check_file(plc_sema *s, plc_program *prog, const plc_ast *file,
                         const plc_env *names)
{
  if (names) { /* the other files' names, copied: a search defined them once */
    plc_sema_start(s, prog);
    plc_env_copy(&s->ev, s->ev.global, names);
    plc_sema_file_names(s, &s->ev, file);
    plc_sema_options(s);
  } else {
    plc_sema_begin(s, prog);
  }
  plc_sema_top(s, file);
  free(s->options);
  s->options = NULL;
}

void plc_sema_check(plc_sema *s, plc_program *prog, const char *const *defines, size_t ndefines)
{
  plc_sema_begin(s, prog);
  for (size_t i = 0; i < ndefines; i++)
    plc_sema_override(s, defines[i]);
  for (size_t f = 0; f < prog->nfiles; f++)
    plc_sema_top(s, prog->files[f]);
  free(s->options);
  s->options = NULL;
}
