/* eval.c - the exact expression evaluator (concrete and abstract modes). */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "eval.h"
#include "schema.h"
#include "xalloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { PLC_BI_MIN = 1, PLC_BI_MAX, PLC_BI_ABS, PLC_BI_FLOOR, PLC_BI_CEIL, PLC_BI_SUM,
       PLC_BI_LEN };
static const char *const plc_builtins[] = {"min", "max", "abs", "floor", "ceil", "sum", "len"};
#define PLC_NBUILTINS (sizeof plc_builtins / sizeof plc_builtins[0])

long plc_eval_max_steps = PLC_EVAL_MAX_STEPS;
int plc_eval_call_memo = 1;

/* Evaluation recurses (expressions, calls, definitions): helpers with large
 * locals (buffers, candidate lists, GMP temporaries) are kept out of line so
 * that the frames on the recursive path stay small, and the limits of
 * plc(5) fit in an 8 MB stack even with ASan's larger frames. */
#define PLC_NOINLINE __attribute__((noinline))

/* ---- values ------------------------------------------------------------ */

/* plc_value_new, inline: the evaluator makes one for nearly every
 * expression. */
static inline plc_value *plc_value_make(plc_eval *ev, plc_vtag tag)
{
  plc_value *v = plc_arena_alloc(ev->arena, sizeof *v);
  v->tag = tag;
  v->known = 1;
  v->dim_known = 1;
  return v;
}

plc_value *plc_value_new(plc_eval *ev, plc_vtag tag)
{
  return plc_value_make(ev, tag);
}

plc_value *plc_value_err(plc_eval *ev) { return plc_value_make(ev, PLC_V_ERR); }

plc_value *plc_value_any(plc_eval *ev)
{
  plc_value *v = plc_value_make(ev, PLC_V_ANY);
  v->known = v->dim_known = 0;
  return v;
}

plc_value *plc_value_num(plc_eval *ev, const plc_quantity *q)
{
  plc_value *v = plc_value_make(ev, PLC_V_NUM);
  v->q = plc_arena_mpq(ev->arena);
  plc_q_rat_set(v->q, q->v);
  v->dim = q->dim;
  return v;
}

plc_value *plc_value_unknown_num(plc_eval *ev, const int e[PLC_NDIM])
{
  plc_value *v = plc_value_make(ev, PLC_V_NUM);
  v->known = 0;
  for (int i = 0; i < PLC_NDIM; i++)
    v->dim.e[i] = e[i];
  return v;
}

static plc_value *plc_value_bool(plc_eval *ev, int known, int b)
{
  plc_value *v = plc_value_make(ev, PLC_V_BOOL);
  v->known = known;
  v->b = b;
  return v;
}

char *plc_value_describe(const plc_value *v)
{
  static const char *const names[] = {"an erroneous value", "a value", "a number", "a boolean",
                                      "a string", "a list", "a declaration", "a function",
                                      "an op", "a name"};
  if (v->tag == PLC_V_NUM && v->dim_known) {
    char *d = plc_dim_str(v->dim);
    size_t n = strlen(d) + 32;
    char *s = plc_xmalloc(n);
    if (plc_dim_is_none(v->dim))
      snprintf(s, n, "a dimensionless number");
    else
      snprintf(s, n, "a number in %s", d);
    free(d);
    return s;
  }
  if (v->tag == PLC_V_OBJ && v->obj && v->obj->kind >= 0 && v->obj->kind < PLC_DECL_KIND_COUNT) {
    char *s = plc_xmalloc(32);
    snprintf(s, 32, "a %s", plc_decl_kind_name(v->obj->kind));
    return s;
  }
  return plc_xstrdup(names[v->tag]);
}

/* ---- call memo: types ------------------------------------------------- */

/* Templates call the same plan functions with the same arguments over and
 * over (mg_tokens(run) in most lets of megatron's templates, and every
 * instance of a candidate asks mg_gemm_eff(device, run, f) again): a call of
 * a top-level function whose arguments are known numbers, booleans, strings
 * or declarations is evaluated once per compilation and its result kept
 * (plc_cmemo_call).  A replay is indistinguishable from evaluating the body:
 *  - what the evaluation tells lowering (eval.h: the watched layer fields,
 *    the cross-candidate cache's reads) is told again: a recording keeps
 *    the field reads of the body, and a replay repeats them as
 *    plc_eval_field_h does, less those made while a definition was
 *    evaluated for the first time (it is known since, and read without);
 *  - the steps the body would count now are counted, and it is not
 *    replayed where a limit of plc(5) could be reached (evaluated then);
 *  - only a call that reported nothing, read no error and no run result
 *    and gave a known number, boolean or string is kept.  Values never
 *    change once made: a kept one is shared. */
#define PLC_CMEMO_ARGS 8

typedef struct plc_cread { /* a field read within a recorded call */
  const plc_obj *o;
  const char *name;
  unsigned hash;       /* as plc_eval_field_h was given it */
  const plc_value *v;
  const plc_loc *use;
  const plc_env *wenv; /* the env its binding is in (eval.h, watch), or NULL */
  int widx;            /* the binding's number there */
  int dry;             /* ev->dry then */
} plc_cread;

/* A chained hash table in an arena, of entries that begin with a link
 * (the call memo's and the shared calls'). */
typedef struct plc_clink {
  struct plc_clink *next; /* of the same slot */
  unsigned hash;
} plc_clink;

typedef struct plc_ctab {
  plc_clink **tab;
  size_t cap, n; /* cap a power of two */
} plc_ctab;

static void plc_ctab_init(plc_arena *ar, plc_ctab *t, size_t cap)
{
  t->cap = cap;
  t->n = 0;
  t->tab = plc_arena_alloc(ar, cap * sizeof *t->tab);
}

/* The first entry of x's slot (follow ->next, compare ->hash). */
static plc_clink *plc_ctab_first(const plc_ctab *t, unsigned hash)
{
  return t->tab[hash & (t->cap - 1)];
}

/* Add x (its hash set), doubling the table past half full. */
static void plc_ctab_add(plc_arena *ar, plc_ctab *t, plc_clink *x)
{
  if (2 * (t->n + 1) > t->cap) {
    size_t cap = 2 * t->cap;
    plc_clink **tab = plc_arena_alloc(ar, cap * sizeof *tab);
    for (size_t i = 0; i < t->cap; i++)
      for (plc_clink *y = t->tab[i], *next; y; y = next) {
        next = y->next;
        y->next = tab[y->hash & (cap - 1)];
        tab[y->hash & (cap - 1)] = y;
      }
    t->tab = tab;
    t->cap = cap;
  }
  x->next = t->tab[x->hash & (t->cap - 1)];
  t->tab[x->hash & (t->cap - 1)] = x;
  t->n++;
}

typedef struct plc_centry {
  plc_clink link; /* first: the table's (plc_ctab) */
  const plc_ast *def;
  int n, nreads;
  plc_value *args[PLC_CMEMO_ARGS];
  plc_value *result;
  long steps;  /* steps the body counts (once its first evaluations are done) */
  int nest, depth; /* the deepest nest and depth it reached, from the call's */
  int named;   /* it read names other than parameters and top-level functions */
  plc_cread *reads;
} plc_centry;

typedef struct plc_cmemo {
  plc_ctab t;     /* of plc_centry */
  plc_cread *log; /* field reads of the calls being recorded */
  size_t nlog, caplog;
  int open;       /* calls being recorded */
  long fresh;     /* steps of definitions evaluated first while recording */
  long volatile_reads; /* reads of run results (known only once evaluated) */
  long named;     /* reads of names other than parameters and top-level functions */
} plc_cmemo;

/* A definition evaluated for the first time while a call is recorded. */
typedef struct plc_cmemo_fresh {
  size_t nlog;
  long steps, fresh, named;
} plc_cmemo_fresh;

static inline int plc_cmemo_fresh_begin(plc_eval *ev, plc_cmemo_fresh *fr)
{
  plc_cmemo *m = ev->cmemo;
  if (!m || !m->open)
    return 0;
  fr->nlog = m->nlog;
  fr->steps = ev->steps;
  fr->fresh = m->fresh;
  fr->named = m->named;
  return 1;
}

/* Its reads and steps are not the recorded calls': every call being
 * recorded began before it (the ones begun within have ended), and reads
 * it without evaluating it again. */
static inline void plc_cmemo_fresh_end(plc_eval *ev, const plc_cmemo_fresh *fr)
{
  ev->cmemo->nlog = fr->nlog;
  ev->cmemo->fresh = fr->fresh + (ev->steps - fr->steps);
  ev->cmemo->named = fr->named; /* the definition's names: its value is what is read */
}

static void plc_cmemo_log(plc_eval *ev, const plc_cread *r)
{
  plc_cmemo *m = ev->cmemo;
  if (m->nlog == m->caplog) {
    size_t cap = m->caplog ? 2 * m->caplog : 64;
    plc_cread *log = plc_arena_alloc_raw(ev->arena, cap * sizeof *log);
    if (m->nlog)
      memcpy(log, m->log, m->nlog * sizeof *log);
    m->log = log;
    m->caplog = cap;
  }
  m->log[m->nlog++] = *r;
}

static PLC_NOINLINE void plc_cmemo_note(plc_eval *ev, const plc_obj *o, const char *name,
                                        unsigned hash, const plc_value *v, const plc_loc *use,
                                        const plc_env *wenv, int widx)
{
  plc_cread r = {o, name, hash, v, use, wenv, widx, ev->dry};
  plc_cmemo_log(ev, &r);
}

/* Field i of env read while watched (eval.h, watch): as a bit. */
static inline void plc_eval_watch_read(plc_eval *ev, const plc_env *env, size_t i)
{
  const plc_value *v = env->b[i].val;
  /* in a branch not taken a number's or boolean's value is not used */
  if (i < 32 && !(ev->dry && v && (v->tag == PLC_V_NUM || v->tag == PLC_V_BOOL)))
    ev->watch_reads |= 1u << i;
}

/* Is v one of the objects whose fields the cross-candidate cache is told
 * (eval.h, xwatch)? */
static inline int plc_eval_xwatched(const plc_eval *ev, const plc_value *v)
{
  return v->tag == PLC_V_OBJ && (v->obj == ev->xwatch[0] || v->obj == ev->xwatch[1] ||
                                 v->obj == ev->xwatch[2] || v->obj == ev->xwatch[3]);
}

/* A field of o read: told to the cross-candidate cache (eval.h, xread). */
static inline void plc_eval_xread(plc_eval *ev, const plc_obj *o, const char *name,
                                  const plc_value *v, const plc_loc *use)
{
  if (ev->xread)
    for (int k = 0; k < 4; k++)
      if (o == ev->xwatch[k]) {
        ev->xread(ev->xread_ctx, k, name, v, use);
        break;
      }
}

/* ---- environments ------------------------------------------------------ */

void plc_eval_init(plc_eval *ev, plc_arena *ar, plc_diag *d)
{
  memset(ev, 0, sizeof *ev);
  ev->arena = ar;
  ev->diag = d;
  ev->global = plc_env_new(ev, NULL);
}

plc_env *plc_env_new(plc_eval *ev, plc_env *parent)
{
  plc_env *e = plc_arena_alloc(ev->arena, sizeof *e);
  e->parent = parent;
  return e;
}

/* Does binding b have this name (of hash h)?  The hashes first: they
 * differ for nearly every other name, and a string compare is left for a
 * match (names from the same node are the same pointer). */
static inline int plc_env_same(const plc_binding *b, const char *name, unsigned h)
{
  return b->hash == h && (b->name == name || !strcmp(b->name, name));
}

/* Point the index at binding i (the latest of its name wins: shadowing). */
static inline void plc_env_index_put(plc_env *env, size_t i)
{
  const plc_binding *b = &env->b[i];
  size_t mask = env->index_cap - 1, h = b->hash & mask;
  while (env->index[h] && !plc_env_same(&env->b[env->index[h] - 1], b->name, b->hash))
    h = (h + 1) & mask;
  env->index[h] = i + 1;
}

/* Environments with more than a few names get a hash index, so that a
 * file of tens of thousands of top-level names resolves in linear time:
 * the binding just added is put in it, or the index made (again, twice
 * as large) when it has none or is half full.  Out of line: most
 * environments are small. */
static PLC_NOINLINE void plc_env_index_added(plc_eval *ev, plc_env *env)
{
  if (env->index && env->n * 2 < env->index_cap) {
    plc_env_index_put(env, env->n - 1);
    return;
  }
  /* the first has room for a template context (its options and ops, about 50);
   * a small one grows fourfold, as an env that passes 64 names (a template
   * context with its lets, a file's names) most often passes 128 too, and
   * the index would be made twice */
  env->index_cap = !env->index_cap ? 128u : env->index_cap * (env->index_cap < 1024 ? 4u : 2u);
  env->index = plc_arena_alloc(ev->arena, env->index_cap * sizeof *env->index);
  for (size_t i = 0; i < env->n; i++)
    plc_env_index_put(env, i);
}

/* Room for more names: most environments (a call's parameters, a
 * section) hold a few; those that hold more (a template's context: its
 * options and ops) grow fourfold, copied less often.  Only [0, n) is ever
 * read. */
static PLC_NOINLINE void plc_env_grow(plc_eval *ev, plc_env *env)
{
  unsigned cap = env->cap ? env->cap * (env->cap < 8 ? 2u : 4u) : 4u;
  plc_binding *b = plc_arena_alloc_raw(ev->arena, cap * sizeof *b);
  if (env->n)
    memcpy(b, env->b, env->n * sizeof *b);
  env->b = b;
  env->cap = cap;
}

static inline plc_binding *plc_env_add(plc_eval *ev, plc_env *env, const char *name,
                                       unsigned hash)
{
  if (env->n == env->cap)
    plc_env_grow(ev, env);
  plc_binding *b = &env->b[env->n++];
  b->name = name;
  b->def = NULL;
  b->def_env = NULL;
  b->val = NULL;
  b->busy = 0;
  b->hash = hash;
  env->names |= PLC_ENV_BIT(hash);
  if (env->n >= 16) {
    /* the name's first slot free, and room: put there inline (as
     * plc_env_index_put would), else out of line */
    size_t h = hash & (env->index_cap - 1);
    if (env->index && env->n * 2 < env->index_cap && !env->index[h])
      env->index[h] = env->n;
    else
      plc_env_index_added(ev, env);
  }
  return b;
}

/* Room for cap names in a new (empty) env, at once: an instance's
 * parameters and items (so that it does not grow by copies). */
static inline void plc_env_reserve(plc_eval *ev, plc_env *env, size_t cap)
{
  if (cap) {
    env->b = plc_arena_alloc_raw(ev->arena, cap * sizeof *env->b);
    env->cap = (unsigned)cap;
  }
}

/* A definition's name hash: its node's, when it is the node's name. */
static unsigned plc_env_def_hash(const char *name, const plc_ast *def)
{
  return def && def->name == name ? plc_ast_name_hash(def) : plc_name_hash(name);
}

plc_binding *plc_env_define(plc_eval *ev, plc_env *env, const char *name, const plc_ast *def,
                            plc_env *def_env)
{
  plc_binding *b = plc_env_add(ev, env, name, plc_env_def_hash(name, def));
  b->def = def;
  b->def_env = def_env;
  return b;
}

plc_binding *plc_env_bind(plc_eval *ev, plc_env *env, const char *name, plc_value *val)
{
  plc_binding *b = plc_env_add(ev, env, name, plc_name_hash(name));
  b->val = val;
  return b;
}

void plc_env_copy(plc_eval *ev, plc_env *into, const plc_env *from)
{
  into->n = from->n;
  into->cap = (unsigned)from->n + 8; /* room for the names added after */
  into->b = plc_arena_alloc_raw(ev->arena, into->cap * sizeof *into->b); /* [0, n) only */
  if (from->n)
    memcpy(into->b, from->b, from->n * sizeof *into->b);
  for (size_t i = 0; i < into->n; i++) {
    into->b[i].val = NULL;
    into->b[i].busy = 0;
    if (into->b[i].def_env == from)
      into->b[i].def_env = into;
  }
  into->index_cap = from->index_cap;
  into->names = from->names;
  into->firsts = 0; /* made again when needed */
  into->nfirsts = 0;
  into->index = NULL;
  if (from->index) {
    into->index = plc_arena_alloc_raw(ev->arena, from->index_cap * sizeof *into->index);
    memcpy(into->index, from->index, from->index_cap * sizeof *into->index);
  }
}

void plc_env_forget_unknown(plc_env *env)
{
  for (size_t i = 0; i < env->n; i++) {
    plc_value *v = env->b[i].val;
    if (v && env->b[i].def && ((v->tag == PLC_V_NUM || v->tag == PLC_V_BOOL) && !v->known))
      env->b[i].val = NULL;
  }
}

/* A name in an env with a hash index (out of line: the common envs are
 * small, and their scan below is inlined where names are resolved). */
static PLC_NOINLINE plc_binding *plc_env_find_indexed(plc_env *env, const char *name,
                                                      unsigned hash)
{
  size_t mask = env->index_cap - 1, h = hash & mask;
  for (; env->index[h]; h = (h + 1) & mask)
    if (plc_env_same(&env->b[env->index[h] - 1], name, hash))
      return &env->b[env->index[h] - 1];
  return NULL;
}

/* plc_env.firsts for the names bound since it was last made (bindings
 * are only ever added, and their names never change). */
static PLC_NOINLINE void plc_env_firsts_update(plc_env *env)
{
  for (size_t i = env->nfirsts; i < env->n; i++)
    env->firsts |= PLC_ENV_FIRSTS(env->b[i].name);
  env->nfirsts = (unsigned)env->n;
}

/* name, of hash h, bound in env itself (the latest binding of it).  h 0:
 * not known (a name from C, not interned), computed only for an index: a
 * small env is scanned by the names' characters, as hashing the name would
 * cost more, unless the bit of its first characters says it is not there
 * (most such names looked up, an op's optional fields, are not). */
static inline __attribute__((always_inline)) plc_binding *plc_env_find(plc_env *env,
                                                                       const char *name,
                                                                       unsigned hash)
{
  if (hash && !(env->names & PLC_ENV_BIT(hash))) /* most envs on a name's way lack it */
    return NULL;
  if (env->index) {
    if (hash) { /* most names are found at once, by their pointer */
      size_t i = env->index[hash & (env->index_cap - 1)];
      if (!i) /* a name is put in its first free slot, and slots are never freed */
        return NULL;
      if (env->b[i - 1].name == name)
        return &env->b[i - 1];
    }
    return plc_env_find_indexed(env, name, hash ? hash : plc_name_fnv(name));
  }
  if (hash) {
    for (size_t i = env->n; i-- > 0;)
      if (plc_env_same(&env->b[i], name, hash))
        return &env->b[i];
    return NULL;
  }
  if (env->nfirsts != env->n)
    plc_env_firsts_update(env);
  if (!(env->firsts & PLC_ENV_FIRSTS(name)))
    return NULL;
  for (size_t i = env->n; i-- > 0;) /* the first byte first: most names differ there */
    if (env->b[i].name[0] == name[0] && !strcmp(env->b[i].name, name))
      return &env->b[i];
  return NULL;
}

plc_binding *plc_env_find_local(plc_env *env, const char *name)
{
  return plc_env_find(env, name, plc_name_interned_hash(name));
}

plc_binding *plc_env_lookup(plc_env *env, const char *name)
{
  unsigned h = plc_name_interned_hash(name);
  for (; env; env = env->parent) {
    plc_binding *b = plc_env_find(env, name, h);
    if (b)
      return b;
  }
  return NULL;
}

/* Every name visible from env, for "did you mean" hints. */
static PLC_NOINLINE const char *plc_env_suggest(plc_env *env, const char *name)
{
  size_t n = 0, cap = 0;
  const char **cands = NULL;
  for (; env; env = env->parent)
    for (size_t i = 0; i < env->n; i++) {
      if (n == cap)
        cands = plc_xrealloc(cands, (cap = cap ? cap * 2 : 64) * sizeof *cands);
      cands[n++] = env->b[i].name;
    }
  const char *best = plc_schema_suggest(name, cands, n);
  free(cands);
  return best;
}

/* ---- declarations and instances ---------------------------------------- */

static void plc_eval_define_items(plc_eval *ev, plc_env *env, const plc_ast_list *items);

static plc_obj *plc_obj_new(plc_eval *ev, int kind, const plc_ast *node, plc_env *parent)
{
  plc_obj *o = plc_arena_alloc(ev->arena, sizeof *o);
  o->kind = kind;
  o->node = node;
  o->name = node ? node->name : NULL;
  o->env = plc_env_new(ev, parent);
  o->env->self = o;
  return o;
}

static plc_value *plc_value_obj(plc_eval *ev, plc_obj *o)
{
  plc_value *v = plc_value_make(ev, PLC_V_OBJ);
  v->obj = o;
  return v;
}

/* Items of a block that define names: fields, lets, options, sections,
 * nested declarations and ops.  Control items (if, for) are the lowering's. */
static void plc_eval_define_items(plc_eval *ev, plc_env *env, const plc_ast_list *items)
{
  for (const plc_ast *it = items->head; it; it = it->next) {
    switch (it->kind) {
    case PLC_AST_LET: case PLC_AST_SET: case PLC_AST_OPTION: case PLC_AST_SECTION:
    case PLC_AST_DECL: case PLC_AST_OP:
      plc_env_define(ev, env, it->name, it, env);
      break;
    default:
      break;
    }
  }
}

/* The ops of a template body in the order plc_eval_define_ops names them
 * (as plc_eval_define_ops_walk visits them): every op of every phase,
 * branch and loop, depth first. */
static void plc_eval_ops_walk(const plc_ast_list *items, void (*put)(void *, const plc_ast *),
                              void *ctx)
{
  for (const plc_ast *it = items->head; it; it = it->next) {
    if (it->kind == PLC_AST_OP)
      put(ctx, it);
    else if (it->kind == PLC_AST_SECTION || it->kind == PLC_AST_FOR || it->kind == PLC_AST_IF)
      plc_eval_ops_walk(&it->list, put, ctx);
    if (it->kind == PLC_AST_IF)
      for (const plc_ast *e = it->b; e; e = e->kind == PLC_AST_IF ? e->b : NULL)
        plc_eval_ops_walk(&e->list, put, ctx);
  }
}

/* plc_eval_define_ops by walking the body: an op is named unless its name
 * is bound in env already (the first of a name wins). */
static void plc_eval_define_ops_walk(plc_eval *ev, plc_env *env, const plc_ast_list *items)
{
  for (const plc_ast *it = items->head; it; it = it->next) {
    if (it->kind == PLC_AST_OP) {
      unsigned h = plc_name_hash(it->name);
      if (!plc_env_find(env, it->name, h)) {
        plc_binding *b = plc_env_add(ev, env, it->name, h);
        b->def = it;
        b->def_env = env;
      }
    }
    else if (it->kind == PLC_AST_SECTION || it->kind == PLC_AST_FOR || it->kind == PLC_AST_IF)
      plc_eval_define_ops_walk(ev, env, &it->list);
    if (it->kind == PLC_AST_IF)
      for (const plc_ast *e = it->b; e; e = e->kind == PLC_AST_IF ? e->b : NULL)
        plc_eval_define_ops_walk(ev, env, &e->list);
  }
}

static const struct plc_oplist *plc_cshare_ops(struct plc_cshare *sh,
                                               const plc_ast_list *items);

/* A body's ops, each name once (its first op), kept across compilations
 * with the shared calls (plc_cshare): a search names a template's ops in
 * every candidate's contexts, and walking the body for them was most of
 * it. */
typedef struct plc_oplist {
  plc_clink link; /* first: the table's (plc_ctab) */
  const plc_ast_list *items;
  size_t n;
  const plc_ast **ops;
  unsigned *hash; /* of their names */
} plc_oplist;

void plc_eval_define_ops(plc_eval *ev, plc_env *env, const plc_ast_list *items)
{
  if (!ev->cshare) { /* one compilation: most bodies are walked once or twice */
    plc_eval_define_ops_walk(ev, env, items);
    return;
  }
  const plc_oplist *l = plc_cshare_ops(ev->cshare, items);
  /* the list's names are distinct: only those env had before can be there */
  unsigned long long names0 = env->names;
  for (size_t i = 0; i < l->n; i++) {
    unsigned h = l->hash[i];
    if ((names0 & PLC_ENV_BIT(h)) && plc_env_find(env, l->ops[i]->name, h))
      continue;
    plc_binding *b = plc_env_add(ev, env, l->ops[i]->name, h);
    b->def = l->ops[i];
    b->def_env = env;
  }
}

/* plc_eval_bind_args for the common call: as many arguments as
 * parameters, none named.  The general way then gives parameter k argument
 * k, finds no error and uses no default before it evaluates them in that
 * order: so does this, without its tables.  0: not such a call (nothing
 * done). */
static inline int plc_eval_bind_positional(plc_eval *ev, const plc_ast_list *params,
                                           const plc_ast_list *args, plc_env *args_env,
                                           plc_env *into)
{
  if (!args || args->count != params->count)
    return 0;
  for (const plc_ast *a = args->head; a; a = a->next)
    if (a->name)
      return 0;
  const plc_ast *p = params->head;
  for (const plc_ast *a = args->head; a; a = a->next, p = p->next) {
    plc_value *v = plc_eval_expr(ev, a->a, args_env);
    plc_env_add(ev, into, p->name, plc_ast_name_hash(p))->val = v;
  }
  return 1;
}

/* Bind parameters to arguments: positional first, then by name, then the
 * parameters' defaults. */
static int plc_eval_bind_args(plc_eval *ev, const plc_ast_list *params, const plc_ast_list *args,
                              plc_env *args_env, plc_env *into, const char *kind,
                              const char *name, const plc_loc *use)
{
  if (plc_eval_bind_positional(ev, params, args, args_env, into))
    return 1;
  int ok = 1, pos = 0, i = 0;
  const plc_ast *p, *a;
  size_t np = (size_t)params->count;
  /* most functions take a few parameters: no allocation for them */
  const plc_ast *given_small[8] = {0}, *plist_small[8];
  const plc_ast **given = np <= 8 ? given_small : plc_xcalloc(np, sizeof *given);
  const plc_ast **plist = np <= 8 ? plist_small : plc_xcalloc(np, sizeof *plist);
  for (p = params->head; p; p = p->next)
    plist[i++] = p;
  pos = 0;
  for (a = args ? args->head : NULL; a; a = a->next) {
    int slot = -1;
    if (a->name) {
      for (int k = 0; k < i; k++)
        if (!strcmp(plist[k]->name, a->name))
          slot = k;
      if (slot < 0) {
        plc_error(ev->diag, &a->loc, "%s '%s' has no parameter '%s'", kind, name, a->name);
        ok = 0;
        continue;
      }
    } else {
      slot = pos++;
      if (slot >= i) {
        plc_error(ev->diag, &a->loc, "too many arguments to %s '%s' (it takes %d)", kind, name, i);
        ok = 0;
        break;
      }
    }
    if (given[slot]) {
      plc_error(ev->diag, &a->loc, "parameter '%s' of %s '%s' given twice", plist[slot]->name,
                kind, name);
      ok = 0;
    }
    given[slot] = a;
  }
  for (int k = 0; k < i && ok; k++) {
    if (given[k]) {
      plc_value *v = plc_eval_expr(ev, given[k]->a, args_env);
      plc_env_add(ev, into, plist[k]->name, plc_ast_name_hash(plist[k]))->val = v;
    }
    else if (plist[k]->a)
      plc_env_define(ev, into, plist[k]->name, plist[k], into);
    else {
      plc_error(ev->diag, use, "missing argument '%s' to %s '%s'", plist[k]->name, kind, name);
      ok = 0;
    }
  }
  if (given != given_small) {
    free(given);
    free(plist);
  }
  return ok;
}

plc_value *plc_eval_instance(plc_eval *ev, const plc_ast *decl, plc_env *def_env,
                             const plc_ast_list *args, plc_env *args_env, const plc_loc *use)
{
  plc_obj *o = plc_obj_new(ev, decl->op, decl, def_env);
  plc_env_reserve(ev, o->env, (size_t)decl->params.count + (size_t)decl->list.count);
  const char *kind = plc_decl_kind_name(decl->op);
  if (args && !plc_eval_bind_args(ev, &decl->params, args, args_env, o->env, kind, decl->name,
                                  use))
    return plc_value_err(ev);
  if (decl->a) {
    plc_value *base = plc_eval_expr(ev, decl->a, o->env);
    if (base->tag == PLC_V_ERR)
      return base;
    /* a search derives from a train (plc(5) SEARCH) */
    int want = decl->op == PLC_DECL_SEARCH ? PLC_DECL_TRAIN : decl->op;
    if (base->tag != PLC_V_OBJ || !base->obj || base->obj->kind != want) {
      char *d = plc_value_describe(base);
      plc_error(ev->diag, &decl->a->loc, "%s '%s' is derived from %s, not a %s", kind,
                decl->name, d, plc_decl_kind_name(want));
      free(d);
      return plc_value_err(ev);
    }
    o->base = base->obj;
    o->abstract = base->obj->abstract;
  }
  plc_eval_define_items(ev, o->env, &decl->list);
  return plc_value_obj(ev, o);
}

/* The value of an absent field that has a default: a number, or the value
 * of another field (a link's all_reduce defaults to its bw). */
static PLC_NOINLINE plc_value *plc_eval_default(plc_eval *ev, plc_obj *o, const plc_field *f,
                                   const plc_loc *use)
{
  mpq_srcptr num = plc_schema_default_num(o->kind, f);
  if (!num)
    return plc_eval_field(ev, o, f->dflt, use);
  plc_value *v = plc_value_make(ev, PLC_V_NUM);
  v->q = plc_arena_mpq(ev->arena);
  plc_q_rat_set(v->q, num);
  memcpy(v->dim.e, f->e, sizeof v->dim.e);
  return v;
}

/* Is c the object o or one of the declarations o is derived from? */
static int plc_obj_derives(const plc_obj *o, const plc_obj *c)
{
  for (; o; o = o->base)
    if (o == c)
      return 1;
  return 0;
}

/* Items that a derived declaration takes from its base and evaluates late,
 * in its own scope: fields, lets, sections and nested declarations (not
 * parameters, ops or options). */
static int plc_eval_is_late_item(const plc_binding *b)
{
  if (!b->def)
    return 0;
  switch (b->def->kind) {
  case PLC_AST_SET: case PLC_AST_LET: case PLC_AST_SECTION: case PLC_AST_DECL: return 1;
  default: return 0;
  }
}

/* An environment in which a base declaration's item is evaluated for a
 * derived object o: the item's own scope, marked so that a name there that
 * is an item of one of o's bases resolves through o (plc_eval_name).  So
 * `model B = A { hidden = 20 }` gives B.params from B's hidden, and every
 * item params depends on, at any depth and through any number of derived
 * declarations, sees B's hidden too. */
static plc_env *plc_eval_overlay(plc_eval *ev, plc_obj *o, plc_env *scope)
{
  plc_env *x = plc_env_new(ev, scope);
  x->late = o;
  return x;
}

/* The slot of name in o's table of late items (empty when absent). */
static plc_binding **plc_obj_late_slot(plc_obj *o, const char *name, unsigned hash)
{
  size_t mask = o->late_cap - 1, h = hash & mask;
  while (o->late[h] && !plc_env_same(o->late[h], name, hash))
    h = (h + 1) & mask;
  return &o->late[h];
}

/* The late binding of a base's item b for o, made on first use. */
static plc_binding *plc_obj_late(plc_eval *ev, plc_obj *o, const plc_binding *b)
{
  if (o->late_cap && *plc_obj_late_slot(o, b->name, b->hash))
    return *plc_obj_late_slot(o, b->name, b->hash);
  if ((o->nlate + 1) * 2 > o->late_cap) {
    plc_binding **old = o->late;
    size_t old_cap = o->late_cap;
    o->late_cap = old_cap ? old_cap * 2 : 16;
    o->late = plc_arena_alloc(ev->arena, o->late_cap * sizeof *o->late);
    for (size_t i = 0; i < old_cap; i++)
      if (old[i])
        *plc_obj_late_slot(o, old[i]->name, old[i]->hash) = old[i];
  }
  plc_binding *late = plc_arena_alloc(ev->arena, sizeof *late);
  late->name = b->name;
  late->hash = b->hash;
  late->def = b->def;
  late->def_env = plc_eval_overlay(ev, o, b->def_env);
  o->nlate++;
  return *plc_obj_late_slot(o, b->name, b->hash) = late;
}

/* plc_eval_binding, its memoised value read inline (nearly every read of
 * a field or name finds one). */
static inline plc_value *plc_binding_value(plc_eval *ev, plc_binding *b, const plc_loc *use)
{
  if (b->val && b->val->tag != PLC_V_ERR)
    return b->val;
  return plc_eval_binding(ev, b, use);
}

static plc_value *plc_eval_field_of(plc_eval *ev, plc_obj *o, const char *name, unsigned hash,
                                     const plc_loc *use, const plc_env **wenv, int *widx);

/* plc_eval_field for a name of hash h (0: not known, see plc_env_find). */
static plc_value *plc_eval_field_h(plc_eval *ev, plc_obj *o, const char *name, unsigned hash,
                                   const plc_loc *use)
{
  const plc_env *wenv = NULL;
  int widx = 0;
  plc_value *v = plc_eval_field_of(ev, o, name, hash, use, &wenv, &widx);
  plc_eval_xread(ev, o, name, v, use);
  if (ev->cmemo && ev->cmemo->open)
    plc_cmemo_note(ev, o, name, hash, v, use, wenv, widx);
  return v;
}

plc_value *plc_eval_field(plc_eval *ev, plc_obj *o, const char *name, const plc_loc *use)
{
  return plc_eval_field_h(ev, o, name, plc_name_interned_hash(name), use);
}

static plc_value *plc_eval_field_of(plc_eval *ev, plc_obj *o, const char *name, unsigned hash,
                                     const plc_loc *use, const plc_env **wenv, int *widx)
{
  for (plc_obj *cur = o; cur; cur = cur->base) {
    plc_binding *b = plc_env_find(cur->env, name, hash);
    if (!b)
      continue;
    if (o == ev->watch)
      plc_eval_watch_read(ev, cur->env, (size_t)(b - cur->env->b));
    *wenv = cur->env; /* for a recorded call (plc_cread) */
    *widx = (int)(b - cur->env->b);
    if (cur == o || !plc_eval_is_late_item(b))
      return plc_binding_value(ev, b, use);
    /* an item of the base, evaluated late: memoised in the derived object */
    return plc_binding_value(ev, plc_obj_late(ev, o, b), use);
  }
  if (!hash && plc_schema_closed(o->kind)) /* a name from C: hashed once for the schemas */
    hash = plc_name_hash(name);
  const plc_field *f = plc_schema_field_h(o->kind, name, hash);
  if (f && f->dflt)
    return plc_eval_default(ev, o, f, use);
  const plc_field *r = o->kind == PLC_DECL_TRAIN ? plc_schema_field_h(PLC_SCHEMA_RESULT, name, hash)
                                                 : NULL;
  if (r && ev->cmemo) /* a result: known only once its run is evaluated */
    ev->cmemo->volatile_reads++;
  if (r && !ev->abstract && ev->result) { /* a result of the evaluated run */
    plc_value *v = ev->result(ev, o, name, use);
    if (v)
      return v;
  }
  if (r) /* known only once the run is evaluated */
    return plc_value_unknown_num(ev, r->e);
  if (o->abstract) {
    if (!f && o->kind == PLC_DECL_TRAIN)
      f = plc_schema_field_h(PLC_SCHEMA_RESULT, name, hash);
    if (f && f->type == PLC_FT_NUM)
      return plc_value_unknown_num(ev, f->e);
    if (f && f->type == PLC_FT_BOOL)
      return plc_value_bool(ev, 0, 0);
    if (f && f->type == PLC_FT_REF) {
      plc_obj *sub = plc_obj_new(ev, f->ref, NULL, NULL);
      sub->abstract = plc_schema_closed(f->ref) ? PLC_ABSTRACT_TYPED : PLC_ABSTRACT_ANY;
      sub->name = f->name;
      return plc_value_obj(ev, sub);
    }
    if (f || o->abstract == PLC_ABSTRACT_ANY)
      return plc_value_any(ev);
  }
  return NULL;
}

/* ---- bindings ---------------------------------------------------------- */

static plc_value *plc_eval_definition(plc_eval *ev, plc_binding *b)
{
  const plc_ast *d = b->def;
  switch (d->kind) {
  case PLC_AST_LET:
    if (d->params.count > 0 || d->params.head) {
      plc_value *f = plc_value_make(ev, PLC_V_FUNC);
      f->def = d;
      f->env = b->def_env;
      return f;
    }
    return plc_eval_expr(ev, d->a, b->def_env);
  case PLC_AST_SET: case PLC_AST_OPTION: case PLC_AST_PARAM:
    return plc_eval_expr(ev, d->a, b->def_env);
  case PLC_AST_SECTION: {
    plc_obj *o = plc_obj_new(ev, -1, d, b->def_env);
    plc_eval_define_items(ev, o->env, &d->list);
    return plc_value_obj(ev, o);
  }
  case PLC_AST_DECL:
    for (const plc_ast *p = d->params.head; p; p = p->next)
      if (!p->a) { /* needs arguments: a constructor */
        plc_value *f = plc_value_make(ev, PLC_V_FUNC);
        f->def = d;
        f->env = b->def_env;
        return f;
      }
    {
      static const plc_ast_list no_args = {0};
      return plc_eval_instance(ev, d, b->def_env, &no_args, b->def_env, &d->loc);
    }
  case PLC_AST_OP: {
    plc_value *v = plc_value_make(ev, PLC_V_OP);
    v->def = d;
    v->s = d->name;
    return v;
  }
  default:
    return plc_value_err(ev);
  }
}

/* plc_eval_binding of a binding with no value yet (out of line: most
 * reads find one). */
static PLC_NOINLINE plc_value *plc_eval_binding_new(plc_eval *ev, plc_binding *b,
                                                    const plc_loc *use)
{
  if (b->busy) {
    plc_error(ev->diag, use, "'%s' is defined in terms of itself", b->name);
    return b->val = plc_value_err(ev);
  }
  if (ev->stopped)
    return plc_value_err(ev);
  if (ev->depth >= PLC_EVAL_MAX_DEPTH) { /* a chain of definitions counts, as calls do */
    plc_error(ev->diag, use, "definitions nested too deeply (more than %d calls and "
              "definitions)", PLC_EVAL_MAX_DEPTH);
    ev->stopped = 1;
    return plc_value_err(ev);
  }
  b->busy = 1;
  if (++ev->depth > ev->depth_hw)
    ev->depth_hw = ev->depth;
  int dry = ev->dry; /* a definition has its real value wherever it is used */
  ev->dry = 0;
  plc_cmemo_fresh fr;
  int fresh = plc_cmemo_fresh_begin(ev, &fr);
  plc_value *v = plc_eval_definition(ev, b);
  if (fresh)
    plc_cmemo_fresh_end(ev, &fr);
  ev->dry = dry;
  ev->depth--;
  b->busy = 0;
  if (!b->val)
    b->val = v;
  return b->val;
}

plc_value *plc_eval_binding(plc_eval *ev, plc_binding *b, const plc_loc *use)
{
  if (b->val) {
    ev->err_reads += b->val->tag == PLC_V_ERR; /* see plc_eval.err_reads */
    return b->val;
  }
  return plc_eval_binding_new(ev, b, use);
}

/* ---- arithmetic -------------------------------------------------------- */

static PLC_NOINLINE plc_value *plc_eval_q_error(plc_eval *ev, plc_q_status st, const plc_ast *e,
                                   const plc_value *l, const plc_value *r)
{
  if (st == PLC_Q_DIM_MISMATCH) {
    char *a = plc_dim_str(l->dim), *b = plc_dim_str(r->dim);
    static const char *const verbs[] = {"add", "subtract"};
    if (e->op == PLC_OP_ADD || e->op == PLC_OP_SUB)
      plc_error(ev->diag, &e->loc, "cannot %s %s and %s: dimensions differ", verbs[e->op], a, b);
    else
      plc_error(ev->diag, &e->loc, "cannot compare %s with %s: dimensions differ", a, b);
    free(a);
    free(b);
  } else if (st == PLC_Q_DIV_ZERO) {
    plc_error(ev->diag, &e->loc, "division by zero");
  } else if (st == PLC_Q_TOO_LARGE) {
    plc_error(ev->diag, &e->loc, "value too large (more than %d bits, or a dimension exponent "
              "beyond %d)", PLC_Q_MAX_BITS, PLC_DIM_MAX_EXP);
  } else {
    plc_error(ev->diag, &e->loc, "%s", plc_q_status_str(st));
  }
  return plc_value_err(ev);
}

static void plc_eval_to_q(plc_quantity *q, const plc_value *v)
{
  plc_q_rat_set(q->v, v->q);
  q->dim = v->dim;
}

/* The dimension-only result of an arithmetic op on partly unknown values. */
static plc_value *plc_eval_arith_unknown(plc_eval *ev, const plc_ast *e, const plc_value *l,
                                         const plc_value *r)
{
  plc_value *v = plc_value_make(ev, PLC_V_NUM);
  v->known = 0;
  v->dim_known = l->dim_known && r->dim_known;
  if (!v->dim_known)
    return v;
  plc_q_status st = PLC_Q_OK;
  switch (e->op) {
  case PLC_OP_ADD: case PLC_OP_SUB:
    st = plc_dim_eq(l->dim, r->dim) ? PLC_Q_OK : PLC_Q_DIM_MISMATCH;
    v->dim = l->dim;
    break;
  case PLC_OP_MUL: st = plc_dim_mul(&v->dim, l->dim, r->dim); break;
  case PLC_OP_DIV: st = plc_dim_div(&v->dim, l->dim, r->dim); break;
  default: break;
  }
  return st == PLC_Q_OK ? v : plc_eval_q_error(ev, st, e, l, r);
}

static PLC_NOINLINE plc_value *plc_eval_pow(plc_eval *ev, const plc_ast *e, const plc_value *l,
                               const plc_value *r)
{
  if (r->dim_known && !plc_dim_is_none(r->dim)) {
    plc_error(ev->diag, &e->b->loc, "exponent must be dimensionless");
    return plc_value_err(ev);
  }
  long n = 0;
  plc_quantity rq;
  plc_q_init(&rq);
  int have_n = 0;
  if (r->known) {
    plc_eval_to_q(&rq, r);
    have_n = plc_q_get_long(&rq, -PLC_Q_MAX_POW, PLC_Q_MAX_POW, &n);
    if (!have_n) {
      plc_error(ev->diag, &e->b->loc, plc_q_is_integer(&rq)
                ? "exponent out of range (|n| <= %d)" : "exponent must be an integer (|n| <= %d)",
                PLC_Q_MAX_POW);
      plc_q_clear(&rq);
      return plc_value_err(ev);
    }
  }
  plc_q_clear(&rq);
  if (!have_n) {
    if (l->dim_known && !plc_dim_is_none(l->dim) && !ev->abstract) {
      plc_error(ev->diag, &e->loc, "the exponent of a quantity with a dimension must be known");
      return plc_value_err(ev);
    }
    plc_value *v = plc_value_make(ev, PLC_V_NUM);
    v->known = 0;
    v->dim_known = l->dim_known && plc_dim_is_none(l->dim);
    return v;
  }
  if (!l->known) {
    plc_value *v = plc_value_make(ev, PLC_V_NUM);
    v->known = 0;
    v->dim_known = l->dim_known;
    plc_q_status st = l->dim_known ? plc_dim_pow(&v->dim, l->dim, n) : PLC_Q_OK;
    return st == PLC_Q_OK ? v : plc_eval_q_error(ev, st, e, l, r);
  }
  plc_quantity a, res;
  plc_q_init(&a);
  plc_q_init(&res);
  plc_eval_to_q(&a, l);
  plc_q_status st = plc_q_pow(&res, &a, n);
  plc_value *v = st == PLC_Q_OK ? plc_value_num(ev, &res) : plc_eval_q_error(ev, st, e, l, r);
  plc_q_clear(&a);
  plc_q_clear(&res);
  return v;
}

static PLC_NOINLINE plc_value *plc_eval_arith(plc_eval *ev, const plc_ast *e, const plc_value *l,
                                 const plc_value *r)
{
  if (e->op == PLC_OP_POW)
    return plc_eval_pow(ev, e, l, r);
  if (!l->known || !r->known)
    return plc_eval_arith_unknown(ev, e, l, r);
  /* as plc_q_add and the others do (quantity.h), but straight into the
   * result's own rational: no temporaries to allocate and free */
  plc_dim d = l->dim;
  plc_q_status st = PLC_Q_OK;
  switch (e->op) {
  case PLC_OP_ADD: case PLC_OP_SUB:
    st = plc_dim_eq(l->dim, r->dim) ? PLC_Q_OK : PLC_Q_DIM_MISMATCH;
    break;
  case PLC_OP_MUL: st = plc_dim_mul(&d, l->dim, r->dim) ? PLC_Q_TOO_LARGE : PLC_Q_OK; break;
  default:
    st = mpq_sgn(r->q) == 0 ? PLC_Q_DIV_ZERO
       : plc_dim_div(&d, l->dim, r->dim) ? PLC_Q_TOO_LARGE : PLC_Q_OK;
    break;
  }
  if (st != PLC_Q_OK)
    return plc_eval_q_error(ev, st, e, l, r);
  plc_value *v = plc_value_make(ev, PLC_V_NUM);
  v->q = plc_arena_mpq(ev->arena);
  v->dim = d;
  switch (e->op) {
  case PLC_OP_ADD: plc_q_rat_add(v->q, l->q, r->q); break;
  case PLC_OP_SUB: plc_q_rat_sub(v->q, l->q, r->q); break;
  case PLC_OP_MUL: plc_q_rat_mul(v->q, l->q, r->q); break;
  default: plc_q_rat_div(v->q, l->q, r->q); break;
  }
  if (mpz_size(mpq_numref(v->q)) <= 1 && mpz_size(mpq_denref(v->q)) <= 1)
    return v; /* far below PLC_Q_MAX_BITS */
  if (mpz_sizeinbase(mpq_numref(v->q), 2) > PLC_Q_MAX_BITS ||
      mpz_sizeinbase(mpq_denref(v->q), 2) > PLC_Q_MAX_BITS)
    return plc_eval_q_error(ev, PLC_Q_TOO_LARGE, e, l, r);
  return v;
}

static PLC_NOINLINE plc_value *plc_eval_compare(plc_eval *ev, const plc_ast *e, const plc_value *l,
                                   const plc_value *r)
{
  if (l->tag != r->tag && l->tag != PLC_V_ANY && r->tag != PLC_V_ANY) {
    char *a = plc_value_describe(l), *b = plc_value_describe(r);
    plc_error(ev->diag, &e->loc, "cannot compare %s with %s", a, b);
    free(a);
    free(b);
    return plc_value_err(ev);
  }
  if (l->tag == PLC_V_NUM && r->tag == PLC_V_NUM && l->dim_known && r->dim_known &&
      !plc_dim_eq(l->dim, r->dim))
    return plc_eval_q_error(ev, PLC_Q_DIM_MISMATCH, e, l, r);
  if (!l->known || !r->known || l->tag == PLC_V_ANY || r->tag == PLC_V_ANY)
    return plc_value_bool(ev, 0, 0);
  int c;
  if (l->tag == PLC_V_NUM)
    c = mpq_cmp(l->q, r->q);
  else if (l->tag == PLC_V_BOOL)
    c = l->b - r->b;
  else if (l->tag == PLC_V_STR || l->tag == PLC_V_WORD)
    c = strcmp(l->s ? l->s : "", r->s ? r->s : "");
  else if (e->op == PLC_OP_EQ || e->op == PLC_OP_NE)
    c = l == r ? 0 : (l->obj == r->obj && l->obj ? 0 : 1);
  else {
    plc_error(ev->diag, &e->loc, "these values have no order");
    return plc_value_err(ev);
  }
  int res;
  switch (e->op) {
  case PLC_OP_EQ: res = c == 0; break;
  case PLC_OP_NE: res = c != 0; break;
  case PLC_OP_LT: res = c < 0; break;
  case PLC_OP_LE: res = c <= 0; break;
  case PLC_OP_GT: res = c > 0; break;
  default: res = c >= 0; break;
  }
  return plc_value_bool(ev, 1, res);
}

static int plc_eval_want(plc_eval *ev, const plc_value *v, plc_vtag tag, const plc_ast *at,
                         const char *what)
{
  if (v->tag == tag || v->tag == PLC_V_ANY || v->tag == PLC_V_ERR)
    return v->tag != PLC_V_ERR;
  char *d = plc_value_describe(v);
  plc_error(ev->diag, &at->loc, "%s, not %s", what, d);
  free(d);
  return 0;
}

/* An operand of arithmetic must be a number (out of line: the message). */
static PLC_NOINLINE int plc_eval_want_num(plc_eval *ev, const plc_value *v, const plc_ast *e,
                                          const plc_ast *at)
{
  if (v->tag == PLC_V_NUM || v->tag == PLC_V_ANY || v->tag == PLC_V_ERR)
    return v->tag != PLC_V_ERR;
  char msg[64];
  snprintf(msg, sizeof msg, "operands of '%s' must be numbers", plc_ast_op_name(e->op));
  return plc_eval_want(ev, v, PLC_V_NUM, at, msg);
}

static plc_value *plc_eval_logic(plc_eval *ev, const plc_ast *e, plc_env *env)
{
  plc_value *l = plc_eval_expr(ev, e->a, env);
  if (!plc_eval_want(ev, l, PLC_V_BOOL, e->a, "operands of '&&' and '||' must be booleans"))
    return plc_value_err(ev);
  int is_and = e->op == PLC_OP_AND;
  int decided = l->tag == PLC_V_BOOL && l->known && l->b != is_and;
  ev->dry += decided; /* short circuit: the right side is only checked */
  plc_value *r = plc_eval_expr(ev, e->b, env);
  ev->dry -= decided;
  if (!plc_eval_want(ev, r, PLC_V_BOOL, e->b, "operands of '&&' and '||' must be booleans"))
    return plc_value_err(ev);
  if (decided)
    return plc_value_bool(ev, 1, !is_and);
  int known = l->tag == PLC_V_BOOL && l->known && r->tag == PLC_V_BOOL && r->known;
  return plc_value_bool(ev, known, known ? r->b : 0);
}

static plc_value *plc_eval_binary(plc_eval *ev, const plc_ast *e, plc_env *env)
{
  if (e->op == PLC_OP_AND || e->op == PLC_OP_OR)
    return plc_eval_logic(ev, e, env);
  plc_value *l = plc_eval_expr(ev, e->a, env);
  plc_value *r = plc_eval_expr(ev, e->b, env);
  if (l->tag == PLC_V_ERR || r->tag == PLC_V_ERR)
    return plc_value_err(ev);
  if (e->op >= PLC_OP_EQ && e->op <= PLC_OP_GE)
    return plc_eval_compare(ev, e, l, r);
  if (l->tag == PLC_V_ANY || r->tag == PLC_V_ANY) {
    plc_value *other = l->tag == PLC_V_ANY ? r : l;
    if (other->tag != PLC_V_ANY && !plc_eval_want(ev, other, PLC_V_NUM, e,
                                                  "arithmetic needs numbers"))
      return plc_value_err(ev);
    return plc_value_any(ev);
  }
  if (!plc_eval_want_num(ev, l, e, e->a) || !plc_eval_want_num(ev, r, e, e->b))
    return plc_value_err(ev);
  return plc_eval_arith(ev, e, l, r);
}

static plc_value *plc_eval_unary(plc_eval *ev, const plc_ast *e, plc_env *env)
{
  plc_value *a = plc_eval_expr(ev, e->a, env);
  if (a->tag == PLC_V_ERR || a->tag == PLC_V_ANY)
    return a;
  if (e->op == PLC_OP_NOT) {
    if (!plc_eval_want(ev, a, PLC_V_BOOL, e->a, "operand of '!' must be a boolean"))
      return plc_value_err(ev);
    return plc_value_bool(ev, a->known, !a->b);
  }
  if (!plc_eval_want(ev, a, PLC_V_NUM, e->a, "operand of unary '-' must be a number"))
    return plc_value_err(ev);
  if (!a->known)
    return a;
  plc_value *v = plc_value_make(ev, PLC_V_NUM);
  v->q = plc_arena_mpq(ev->arena);
  mpq_neg(v->q, a->q);
  v->dim = a->dim;
  return v;
}

static plc_value *plc_eval_cond(plc_eval *ev, const plc_ast *e, plc_env *env)
{
  plc_value *c = plc_eval_expr(ev, e->a, env);
  if (!plc_eval_want(ev, c, PLC_V_BOOL, e->a, "the condition of '?:' must be a boolean"))
    return plc_value_err(ev);
  int pick = c->tag == PLC_V_BOOL && c->known ? (c->b ? 1 : 2) : 0;
  if (pick == 2)
    ev->dry++;
  plc_value *t = plc_eval_expr(ev, e->b, env);
  if (pick == 2)
    ev->dry--;
  if (pick == 1)
    ev->dry++;
  plc_value *f = plc_eval_expr(ev, e->c, env);
  if (pick == 1)
    ev->dry--;
  if (t->tag == PLC_V_NUM && f->tag == PLC_V_NUM && t->dim_known && f->dim_known &&
      !plc_dim_eq(t->dim, f->dim)) {
    char *a = plc_dim_str(t->dim), *b = plc_dim_str(f->dim);
    plc_error(ev->diag, &e->loc, "the branches of '?:' differ in dimension (%s and %s)", a, b);
    free(a);
    free(b);
    return plc_value_err(ev);
  }
  if (pick)
    return pick == 1 ? t : f;
  if (t->tag == PLC_V_NUM && f->tag == PLC_V_NUM) {
    plc_value *v = plc_value_make(ev, PLC_V_NUM);
    v->known = 0;
    v->dim_known = t->dim_known && f->dim_known;
    v->dim = t->dim;
    return v;
  }
  return plc_value_any(ev);
}

/* ---- names, fields, calls ---------------------------------------------- */

/* A name in scope.  Inside a base's item evaluated for a derived object
 * (an overlay on the way out), an item of one of that object's bases is
 * the derived object's field: the override if it has one, else the base's
 * item evaluated late again, so late binding reaches any depth. */
/* Is name a field of o that its own items do not set: one its base sets
 * (a derived declaration), or one of its schema with a default? */
static int plc_eval_inherited(const plc_obj *o, const char *name, unsigned hash)
{
  for (const plc_obj *b = o->base; b; b = b->base)
    if (plc_env_find(b->env, name, hash))
      return 1;
  const plc_field *f = o->kind >= 0 ? plc_schema_field_h(o->kind, name, hash) : NULL;
  return f && f->dflt;
}

/* A name read while a call is recorded, bound in x (not the parameters):
 * only a top-level function keeps the call shareable (plc_cshare). */
static PLC_NOINLINE void plc_cmemo_name_read(plc_eval *ev, const plc_env *x, const plc_value *v)
{
  if (!(x == ev->global && v->tag == PLC_V_FUNC && !v->builtin && v->def &&
        v->def->kind == PLC_AST_LET && v->env == ev->global))
    ev->cmemo->named++;
}

static plc_value *plc_eval_name(plc_eval *ev, const plc_ast *e, plc_env *env)
{
  plc_obj *late = NULL;
  unsigned h = plc_ast_name_hash(e);
  for (plc_env *x = env; x; x = x->parent) {
    if (x->late && !late)
      late = x->late;
    plc_binding *b = plc_env_find(x, e->name, h);
    /* in a declaration's body its fields are names: those it inherits or
     * leaves at their defaults too (dp = 512 / (tp * pp * cp)) */
    if (!b && x->self && plc_eval_inherited(x->self, e->name, h)) {
      if (ev->cmemo && ev->cmemo->open)
        ev->cmemo->named++;
      return plc_eval_field_h(ev, late && plc_obj_derives(late, x->self) ? late : x->self,
                              e->name, h, &e->loc);
    }
    if (!b)
      continue;
    if (late && x->self && x->self != late && plc_eval_is_late_item(b) &&
        plc_obj_derives(late, x->self)) {
      if (ev->cmemo && ev->cmemo->open)
        ev->cmemo->named++;
      plc_value *v = plc_eval_field_h(ev, late, e->name, h, &e->loc);
      if (v)
        return v;
    }
    if (x == ev->xenv && ev->xread && !b->def) { /* bound by lowering: an option */
      plc_value *v = plc_binding_value(ev, b, &e->loc);
      if (!plc_eval_xwatched(ev, v)) /* `run`, `model`: their fields are told */
        ev->xread(ev->xread_ctx, 4, e->name, v, &e->loc);
      if (ev->cmemo && ev->cmemo->open)
        ev->cmemo->named++;
      return v;
    }
    plc_value *v = plc_binding_value(ev, b, &e->loc);
    if (ev->cmemo && ev->cmemo->open && !x->call)
      plc_cmemo_name_read(ev, x, v);
    return v;
  }
  for (size_t i = 0; i < PLC_NBUILTINS; i++)
    if (!strcmp(plc_builtins[i], e->name)) {
      plc_value *f = plc_value_make(ev, PLC_V_FUNC);
      f->builtin = (int)i + 1;
      f->s = plc_builtins[i];
      return f;
    }
  const char *hint = plc_env_suggest(env, e->name);
  const char *imp = ev->import_hint ? ev->import_hint(ev->import_ctx, e->name) : NULL;
  if (imp) /* declared in the standard library, not imported */
    plc_error(ev->diag, &e->loc, "unknown name '%s'; it is declared in the standard library: "
              "add import \"%s\"", e->name, imp);
  else if (hint)
    plc_error(ev->diag, &e->loc, "unknown name '%s'; did you mean '%s'?", e->name, hint);
  else
    plc_error(ev->diag, &e->loc, "unknown name '%s'", e->name);
  return plc_value_err(ev);
}

/* A model field a framework template reads but the user's model lacks:
 * said at the model, with notes at the train and where the template reads
 * it, since the user fixes the model, not the stdlib. */
static PLC_NOINLINE void plc_eval_no_model_field(plc_eval *ev, const plc_ast *e,
                                                 const plc_obj *o, const char *hint)
{
  const char *fw = ev->ctx_framework && ev->ctx_framework->name ? ev->ctx_framework->name : "?";
  plc_error(ev->diag, &o->node->loc, "model '%s' has no field '%s', which template '%s' of "
            "framework '%s' reads%s%s%s", o->name ? o->name : "?", e->name, ev->ctx_template,
            fw, hint ? "; did you mean '" : "", hint ? hint : "", hint ? "'?" : "");
  plc_note(ev->diag, &ev->ctx_train->node->loc, "train '%s' uses model '%s' with framework "
           "'%s'", ev->ctx_train->name ? ev->ctx_train->name : "?", o->name ? o->name : "?", fw);
  plc_note(ev->diag, &e->loc, "the template reads it here (plc-stdlib(7) lists the fields "
           "each stdlib framework reads)");
}

static PLC_NOINLINE void plc_eval_no_field(plc_eval *ev, const plc_ast *e, const plc_obj *o)
{
  const char *what = o->kind >= 0 && o->kind < PLC_DECL_KIND_COUNT
                     ? plc_decl_kind_name(o->kind) : "section";
  const char *cands[128];
  size_t n = 0;
  for (const plc_obj *cur = o; cur; cur = cur->base)
    for (size_t i = 0; i < cur->env->n && n < 128; i++)
      cands[n++] = cur->env->b[i].name;
  for (size_t i = 0; n < 128 && plc_schema_at(o->kind, i); i++)
    cands[n++] = plc_schema_at(o->kind, i)->name;
  if (plc_schema_field(o->kind, e->name)) { /* a field of the kind, not set here */
    plc_error(ev->diag, &e->loc, "%s '%s' does not set '%s'", what, o->name ? o->name : "?",
              e->name);
    return;
  }
  const char *hint = plc_schema_suggest(e->name, cands, n);
  if (o->kind == PLC_DECL_MODEL && ev->ctx_train && ev->ctx_template && o->node) {
    plc_eval_no_model_field(ev, e, o, hint);
    return;
  }
  if (hint)
    plc_error(ev->diag, &e->loc, "%s '%s' has no field '%s'; did you mean '%s'?", what,
              o->name ? o->name : "?", e->name, hint);
  else
    plc_error(ev->diag, &e->loc, "%s '%s' has no field '%s'", what, o->name ? o->name : "?",
              e->name);
}

/* A model's `layers` section: a layer kind it does not list has no layers
 * of that kind, so reading it gives 0 (plc(5), model and layers) and a
 * template can count kinds a model may lack (megatron's step, `mtp`). */
static int plc_eval_is_layers(const plc_obj *o)
{
  return o->kind == -1 && o->node && o->node->kind == PLC_AST_SECTION && o->node->name &&
         !strcmp(o->node->name, "layers");
}

/* The dimensionless number 0. */
static plc_value *plc_value_zero(plc_eval *ev)
{
  plc_value *v = plc_value_make(ev, PLC_V_NUM);
  v->q = plc_arena_mpq(ev->arena);
  mpq_set_ui(v->q, 0, 1);
  for (int i = 0; i < PLC_NDIM; i++)
    v->dim.e[i] = 0;
  return v;
}

static plc_value *plc_eval_member(plc_eval *ev, const plc_ast *e, plc_env *env)
{
  plc_value *o = plc_eval_expr(ev, e->a, env);
  if (o->tag == PLC_V_ERR || o->tag == PLC_V_ANY)
    return o;
  if (o->tag == PLC_V_OP && o->prev) { /* prev.name: an op of the previous layer */
    plc_value *v = plc_value_make(ev, PLC_V_OP);
    v->s = e->name;
    v->prev = 1;
    return v;
  }
  if (o->tag != PLC_V_OBJ) {
    char *d = plc_value_describe(o);
    plc_error(ev->diag, &e->loc, "'.%s' needs a declaration, not %s", e->name, d);
    free(d);
    return plc_value_err(ev);
  }
  plc_value *v = plc_eval_field_h(ev, o->obj, e->name, plc_ast_name_hash(e), &e->loc);
  if (!v && plc_eval_is_layers(o->obj))
    return plc_value_zero(ev);
  if (!v) {
    plc_eval_no_field(ev, e, o->obj);
    return plc_value_err(ev);
  }
  return v;
}

static plc_value *plc_eval_builtin(plc_eval *ev, const plc_value *f, const plc_ast *e,
                                   plc_env *env);
static plc_value *plc_eval_body(plc_eval *ev, const plc_value *f, plc_env *call,
                                const plc_ast *e);
static plc_value *plc_cmemo_call(plc_eval *ev, const plc_value *f, plc_env *call,
                                 const plc_ast *e);

static plc_value *plc_eval_call(plc_eval *ev, const plc_ast *e, plc_env *env)
{
  plc_value *f = plc_eval_expr(ev, e->a, env);
  if (f->tag == PLC_V_ERR || f->tag == PLC_V_ANY)
    return f;
  if (f->tag != PLC_V_FUNC) {
    char *d = plc_value_describe(f);
    plc_error(ev->diag, &e->loc, "%s cannot be called", d);
    free(d);
    return plc_value_err(ev);
  }
  if (f->builtin)
    return plc_eval_builtin(ev, f, e, env);
  if (f->def->kind == PLC_AST_DECL)
    return plc_eval_instance(ev, f->def, f->env, &e->list, env, &e->loc);
  if (ev->dry) /* an untaken branch: the function's body is checked on its own */
    return plc_value_any(ev);
  plc_env *call = plc_env_new(ev, f->env);
  call->call = 1;
  plc_env_reserve(ev, call, (size_t)f->def->params.count);
  if (!plc_eval_bind_args(ev, &f->def->params, &e->list, env, call, "function", f->def->name,
                          &e->loc))
    return plc_value_err(ev);
  for (size_t i = 0; i < call->n; i++) {
    plc_value *a = call->b[i].val; /* an argument's, given; a default's, evaluated now */
    if (!a || a->tag == PLC_V_ERR)
      a = plc_eval_binding(ev, &call->b[i], &e->loc);
    if (a->tag == PLC_V_ERR)
      return a;
    if (ev->abstract && (a->tag == PLC_V_ANY || !a->known))
      return plc_value_any(ev); /* the body is checked once on its own */
  }
  if (plc_eval_call_memo && !ev->abstract && f->env == ev->global && ev->diag)
    return plc_cmemo_call(ev, f, call, e);
  return plc_eval_body(ev, f, call, e);
}

/* The body of a call, its arguments bound in call. */
static plc_value *plc_eval_body(plc_eval *ev, const plc_value *f, plc_env *call,
                                const plc_ast *e)
{
  if (++ev->depth > ev->depth_hw)
    ev->depth_hw = ev->depth;
  if (ev->depth > PLC_EVAL_MAX_DEPTH) {
    ev->depth--;
    plc_error(ev->diag, &e->loc, "calls nested too deeply (more than %d calls and definitions)",
              PLC_EVAL_MAX_DEPTH);
    ev->stopped = 1;
    return plc_value_err(ev);
  }
  plc_value *v = plc_eval_expr(ev, f->def->a, call);
  ev->depth--;
  return v;
}

/* ---- call memo --------------------------------------------------------- */

static int plc_cmemo_arg_ok(const plc_value *v)
{
  switch (v->tag) {
  case PLC_V_NUM: return v->known && v->dim_known;
  case PLC_V_BOOL: return v->known;
  case PLC_V_STR: return v->s != NULL;
  case PLC_V_OBJ: return v->obj != NULL;
  default: return 0;
  }
}

static inline unsigned plc_cmemo_arg_hash(const plc_value *v)
{
  switch (v->tag) {
  case PLC_V_NUM: {
    unsigned long h = mpz_getlimbn(mpq_numref(v->q), 0) * 0x9e3779b97f4a7c15UL +
                      mpz_getlimbn(mpq_denref(v->q), 0) + (unsigned long)mpq_sgn(v->q);
    for (int i = 0; i < PLC_NDIM; i++)
      h = h * 31 + (unsigned long)v->dim.e[i];
    return (unsigned)(h ^ h >> 32);
  }
  case PLC_V_BOOL: return 7u + (unsigned)v->b;
  case PLC_V_STR: return plc_name_fnv(v->s);
  default: return (unsigned)((uintptr_t)v->obj >> 4);
  }
}

static inline int plc_cmemo_arg_same(const plc_value *a, const plc_value *b)
{
  if (a == b)
    return 1;
  if (a->tag != b->tag)
    return 0;
  switch (a->tag) {
  case PLC_V_NUM: return plc_dim_eq(a->dim, b->dim) && plc_q_rat_equal(a->q, b->q);
  case PLC_V_BOOL: return a->b == b->b;
  case PLC_V_STR: return !strcmp(a->s, b->s);
  default: return a->obj == b->obj;
  }
}

static int plc_cmemo_result_ok(const plc_value *v)
{
  return (v->tag == PLC_V_NUM && v->known && v->dim_known) ||
         (v->tag == PLC_V_BOOL && v->known) || (v->tag == PLC_V_STR && v->s);
}

static plc_cmemo *plc_cmemo_new(plc_eval *ev)
{
  plc_cmemo *m = plc_arena_alloc(ev->arena, sizeof *m);
  plc_ctab_init(ev->arena, &m->t, 256);
  return ev->cmemo = m;
}

static void plc_cmemo_add(plc_eval *ev, plc_centry *x)
{
  plc_ctab_add(ev->arena, &ev->cmemo->t, &x->link);
}

/* A new entry of the memo for the call of f bound in call (its hash) that
 * gave result, with the field reads logged since log0; the caller sets
 * its steps, nest, depth and named. */
static plc_centry *plc_cmemo_enter(plc_eval *ev, const plc_value *f, const plc_env *call,
                                   unsigned hash, plc_value *result, size_t log0)
{
  plc_cmemo *m = ev->cmemo;
  plc_centry *x = plc_arena_alloc_raw(ev->arena, sizeof *x);
  x->def = f->def;
  x->link.hash = hash;
  x->n = (int)call->n;
  for (size_t i = 0; i < call->n; i++)
    x->args[i] = call->b[i].val;
  x->result = result;
  x->nreads = (int)(m->nlog - log0);
  x->reads = plc_arena_alloc_raw(ev->arena, (x->nreads ? x->nreads : 1) * sizeof *x->reads);
  if (x->nreads)
    memcpy(x->reads, m->log + log0, (size_t)x->nreads * sizeof *x->reads);
  plc_cmemo_add(ev, x);
  return x;
}

/* Can a body of these steps, nest and depth be replayed here, with no
 * limit of plc(5) reached? */
static int plc_cmemo_fits(const plc_eval *ev, long steps, int nest, int depth)
{
  return !ev->stopped && ev->steps + steps <= plc_eval_max_steps &&
         ev->nest + nest < PLC_EVAL_MAX_NEST && ev->depth + depth < PLC_EVAL_MAX_DEPTH;
}

static void plc_cshare_store(plc_eval *ev, plc_env *call, const plc_centry *x);
static plc_value *plc_cshare_try(plc_eval *ev, const plc_value *f, plc_env *call,
                                 unsigned hash);

static plc_value *plc_cmemo_replay(plc_eval *ev, const plc_centry *x)
{
  ev->steps += x->steps;
  if (ev->nest + x->nest > ev->nest_hw)
    ev->nest_hw = ev->nest + x->nest;
  if (ev->depth + x->depth > ev->depth_hw)
    ev->depth_hw = ev->depth + x->depth;
  if (x->named && ev->cmemo->open)
    ev->cmemo->named++;
  int dry = ev->dry;
  for (int i = 0; i < x->nreads; i++) {
    const plc_cread *r = &x->reads[i];
    ev->dry = r->dry;
    if (r->o == ev->watch && r->wenv)
      plc_eval_watch_read(ev, r->wenv, (size_t)r->widx);
    plc_eval_xread(ev, r->o, r->name, r->v, r->use);
    if (ev->cmemo->open) /* a call being recorded reads it too */
      plc_cmemo_log(ev, r);
  }
  ev->dry = dry;
  return x->result;
}

/* Evaluate the body, recording it; kept when it can be replayed. */
static PLC_NOINLINE plc_value *plc_cmemo_record(plc_eval *ev, const plc_value *f, plc_env *call,
                                                const plc_ast *e, unsigned hash)
{
  plc_cmemo *m = ev->cmemo;
  size_t log0 = m->nlog;
  long steps0 = ev->steps, fresh0 = m->fresh, vol0 = m->volatile_reads;
  long err0 = ev->err_reads, named0 = m->named;
  int errors0 = ev->diag->errors;
  int nest0 = ev->nest, depth0 = ev->depth, nest_hw = ev->nest_hw, depth_hw = ev->depth_hw;
  ev->nest_hw = nest0;
  ev->depth_hw = depth0;
  m->open++;
  plc_value *v = plc_eval_body(ev, f, call, e);
  m->open--;
  int nest = ev->nest_hw - nest0, depth = ev->depth_hw - depth0;
  if (nest_hw > ev->nest_hw)
    ev->nest_hw = nest_hw;
  if (depth_hw > ev->depth_hw)
    ev->depth_hw = depth_hw;
  if (!ev->stopped && ev->diag->errors == errors0 && ev->err_reads == err0 &&
      m->volatile_reads == vol0 && plc_cmemo_result_ok(v)) {
    plc_centry *x = plc_cmemo_enter(ev, f, call, hash, v, log0);
    x->steps = (ev->steps - steps0) - (m->fresh - fresh0);
    x->nest = nest;
    x->depth = depth;
    x->named = m->named != named0;
    if (ev->cshare && !x->named)
      plc_cshare_store(ev, call, x);
  }
  if (!m->open)
    m->nlog = 0;
  return v;
}

/* A call of a top-level function, its arguments bound (and evaluated) in
 * call: replayed, or evaluated and recorded. */
static PLC_NOINLINE plc_value *plc_cmemo_call(plc_eval *ev, const plc_value *f, plc_env *call,
                                              const plc_ast *e)
{
  size_t n = call->n;
  if (n > PLC_CMEMO_ARGS)
    return plc_eval_body(ev, f, call, e);
  unsigned h = (unsigned)((uintptr_t)f->def >> 4);
  for (size_t i = 0; i < n; i++) {
    const plc_value *a = call->b[i].val;
    if (!plc_cmemo_arg_ok(a))
      return plc_eval_body(ev, f, call, e);
    h = h * 0x01000193u ^ plc_cmemo_arg_hash(a);
  }
  plc_cmemo *m = ev->cmemo ? ev->cmemo : plc_cmemo_new(ev);
  for (const plc_clink *k = plc_ctab_first(&m->t, h); k; k = k->next) {
    const plc_centry *x = (const plc_centry *)k;
    if (k->hash != h || x->def != f->def || x->n != (int)n)
      continue;
    size_t i = 0;
    while (i < n && plc_cmemo_arg_same(x->args[i], call->b[i].val))
      i++;
    if (i < n)
      continue;
    if (!plc_cmemo_fits(ev, x->steps, x->nest, x->depth)) /* as a limit would be reached */
      return plc_eval_body(ev, f, call, e);
    return plc_cmemo_replay(ev, x);
  }
  if (ev->cshare) {
    plc_value *v = plc_cshare_try(ev, f, call, h);
    if (v)
      return v;
  }
  return plc_cmemo_record(ev, f, call, e, h);
}

/* ---- calls shared by compilations ---------------------------------------- */

/* A search compiles each candidate on its own, from the same syntax trees:
 * a call made in one (mg_qkv_flops(model, run), say) is made again in the
 * next with other objects, most often with fields of the same values.  A
 * recorded call is kept across compilations when its body read nothing
 * but its parameters, top-level functions and fields of its declaration
 * arguments, each a known number, boolean or string (the body's values are
 * then functions of those).  It is replayed when its scalar arguments are
 * the same and every field it read (in order) already has the same value
 * in this compilation (checked without evaluating anything): the fields
 * are then read again for real (what they tell lowering is told, nothing
 * is evaluated), the body's steps counted, and its result copied. */
typedef struct plc_sread {
  int arg;               /* of the declaration argument */
  const char *name;      /* interned, or a copy */
  unsigned hash;
  const plc_loc *use;
  int dry;
  plc_value *v;          /* its value, copied */
} plc_sread;

typedef struct plc_sentry {
  plc_clink link; /* first: the table's (plc_ctab) */
  const plc_ast *def;
  int n, nreads;
  plc_value *args[PLC_CMEMO_ARGS];   /* scalars, copied; NULL: a declaration */
  signed char alias[PLC_CMEMO_ARGS]; /* a declaration's first argument */
  plc_value *result;
  long steps;
  int nest, depth;
  plc_sread *reads;
} plc_sentry;

struct plc_cshare {
  plc_arena *ar;
  plc_ctab t;   /* of plc_sentry */
  plc_ctab ops; /* of plc_oplist (plc_eval_define_ops) */
};

_Thread_local long plc_cshare_replays;

/* At most this many calls are kept (a search of many candidates), each
 * of at most this many field reads. */
#define PLC_CSHARE_MAX 65536
#define PLC_CSHARE_READS 256

struct plc_cshare *plc_cshare_new(void)
{
  struct plc_cshare *sh = plc_xcalloc(1, sizeof *sh);
  sh->ar = plc_arena_new();
  plc_ctab_init(sh->ar, &sh->t, 1024);
  plc_ctab_init(sh->ar, &sh->ops, 16);
  return sh;
}

/* Collecting a body's ops for its list (plc_cshare_ops). */
typedef struct plc_opcollect {
  const plc_ast **ops;
  unsigned *hash;
  size_t n, cap;
} plc_opcollect;

static void plc_opcollect_put(void *ctx, const plc_ast *it)
{
  plc_opcollect *c = ctx;
  unsigned h = plc_name_hash(it->name);
  for (size_t i = 0; i < c->n; i++)
    if (c->hash[i] == h && (c->ops[i]->name == it->name || !strcmp(c->ops[i]->name, it->name)))
      return;
  if (c->n == c->cap) {
    c->cap = c->cap ? 2 * c->cap : 64;
    c->ops = plc_xrealloc(c->ops, c->cap * sizeof *c->ops);
    c->hash = plc_xrealloc(c->hash, c->cap * sizeof *c->hash);
  }
  c->ops[c->n] = it;
  c->hash[c->n++] = h;
}

/* The list of items's ops (plc_oplist), made on first use. */
static const plc_oplist *plc_cshare_ops(struct plc_cshare *sh, const plc_ast_list *items)
{
  unsigned key = (unsigned)((uintptr_t)items >> 4);
  for (const plc_clink *k = plc_ctab_first(&sh->ops, key); k; k = k->next)
    if (((const plc_oplist *)k)->items == items)
      return (const plc_oplist *)k;
  plc_opcollect c = {0};
  plc_eval_ops_walk(items, plc_opcollect_put, &c);
  plc_oplist *l = plc_arena_alloc(sh->ar, sizeof *l);
  l->link.hash = key;
  l->items = items;
  l->n = c.n;
  l->ops = plc_arena_alloc_raw(sh->ar, (c.n ? c.n : 1) * sizeof *l->ops);
  l->hash = plc_arena_alloc_raw(sh->ar, (c.n ? c.n : 1) * sizeof *l->hash);
  if (c.n) {
    memcpy(l->ops, c.ops, c.n * sizeof *l->ops);
    memcpy(l->hash, c.hash, c.n * sizeof *l->hash);
  }
  free(c.ops);
  free(c.hash);
  plc_ctab_add(sh->ar, &sh->ops, &l->link);
  return l;
}

void plc_cshare_free(struct plc_cshare *sh)
{
  if (!sh)
    return;
  plc_arena_free(sh->ar);
  free(sh);
}

static plc_value *plc_cshare_copy(plc_arena *ar, const plc_value *v)
{
  plc_value *c = plc_arena_alloc(ar, sizeof *c);
  c->tag = v->tag;
  c->known = v->known;
  c->dim_known = v->dim_known;
  c->dim = v->dim;
  c->b = v->b;
  if (v->tag == PLC_V_NUM) {
    c->q = plc_arena_mpq(ar);
    plc_q_rat_set(c->q, v->q);
  } else if (v->tag == PLC_V_STR) {
    size_t n = strlen(v->s) + 1;
    char *s = plc_arena_alloc_raw(ar, n);
    memcpy(s, v->s, n);
    c->s = s;
  }
  return c;
}

/* The key of a call: its function, its scalar arguments, and which of its
 * declaration arguments are the same one (alias). */
static unsigned plc_cshare_key(const plc_ast *def, const plc_env *call, signed char *alias)
{
  unsigned h = (unsigned)((uintptr_t)def >> 4);
  for (size_t i = 0; i < call->n; i++) {
    const plc_value *a = call->b[i].val;
    alias[i] = -1;
    if (a->tag == PLC_V_OBJ) {
      for (size_t j = 0; j <= i && alias[i] < 0; j++)
        if (call->b[j].val->tag == PLC_V_OBJ && call->b[j].val->obj == a->obj)
          alias[i] = (signed char)j;
      h = h * 0x01000193u ^ (0x5bd1e995u + (unsigned)alias[i]);
    } else
      h = h * 0x01000193u ^ plc_cmemo_arg_hash(a);
  }
  return h;
}

/* Keep x, the call just recorded with these arguments, unless it read a
 * field of something other than its declaration arguments, or a value
 * other than a known number, boolean or string. */
static void plc_cshare_store(plc_eval *ev, plc_env *call, const plc_centry *x)
{
  struct plc_cshare *sh = ev->cshare;
  if (sh->t.n >= PLC_CSHARE_MAX)
    return;
  int arg[PLC_CSHARE_READS];
  if (x->nreads > PLC_CSHARE_READS)
    return;
  for (int i = 0; i < x->nreads; i++) {
    const plc_cread *r = &x->reads[i];
    arg[i] = -1;
    for (size_t j = 0; j < call->n && arg[i] < 0; j++)
      if (call->b[j].val->tag == PLC_V_OBJ && call->b[j].val->obj == r->o)
        arg[i] = (int)j;
    if (arg[i] < 0 || !r->v || !plc_cmemo_result_ok(r->v))
      return;
  }
  plc_sentry *y = plc_arena_alloc(sh->ar, sizeof *y);
  y->def = x->def;
  y->n = x->n;
  y->link.hash = plc_cshare_key(x->def, call, y->alias);
  for (int i = 0; i < x->n; i++)
    y->args[i] = x->args[i]->tag == PLC_V_OBJ ? NULL : plc_cshare_copy(sh->ar, x->args[i]);
  y->result = plc_cshare_copy(sh->ar, x->result);
  y->steps = x->steps;
  y->nest = x->nest;
  y->depth = x->depth;
  y->nreads = x->nreads;
  y->reads = plc_arena_alloc(sh->ar, ((size_t)x->nreads + 1) * sizeof *y->reads);
  for (int i = 0; i < x->nreads; i++) {
    const plc_cread *r = &x->reads[i];
    plc_sread *w = &y->reads[i];
    w->arg = arg[i];
    w->name = r->name;
    if (!plc_name_interned_hash(r->name)) { /* not in the names' pool: kept here */
      size_t n = strlen(r->name) + 1;
      char *s = plc_arena_alloc_raw(sh->ar, n);
      memcpy(s, r->name, n);
      w->name = s;
    }
    w->hash = r->hash;
    w->use = r->use;
    w->dry = r->dry;
    w->v = plc_cshare_copy(sh->ar, r->v);
  }
  plc_ctab_add(sh->ar, &sh->t, &y->link);
}

/* Where a kept call's field read found its value (plc_cshare_holds): the
 * env and binding number of the item, and the value; env NULL for a
 * schema default (a new value each read: read again for real). */
typedef struct plc_shold {
  const plc_env *env;
  int idx;
  const plc_value *v;
} plc_shold;

/* Has field r of o the value r->v already, so that reading it evaluates
 * nothing?  (As plc_eval_field_of finds it, without evaluating.)  Where it
 * is goes in *at. */
static int plc_cshare_holds(const plc_obj *o, const plc_sread *r, plc_shold *at)
{
  const plc_value *v = NULL;
  for (const plc_obj *cur = o; cur; cur = cur->base) {
    plc_binding *b = plc_env_find(cur->env, r->name, r->hash);
    if (!b)
      continue;
    if (cur == o || !plc_eval_is_late_item(b))
      v = b->val;
    else if (o->late_cap) {
      plc_binding *late = *plc_obj_late_slot((plc_obj *)o, b->name, b->hash);
      v = late ? late->val : NULL;
    }
    at->env = cur->env;
    at->idx = (int)(b - cur->env->b);
    at->v = v;
    return v && plc_cmemo_result_ok(v) && plc_cmemo_arg_same(v, r->v);
  }
  unsigned hash = r->hash;
  if (!hash && plc_schema_closed(o->kind))
    hash = plc_name_hash(r->name);
  const plc_field *f = plc_schema_field_h(o->kind, r->name, hash);
  mpq_srcptr num = f && f->dflt ? plc_schema_default_num(o->kind, f) : NULL;
  if (!num || r->v->tag != PLC_V_NUM || !plc_q_rat_equal(num, r->v->q))
    return 0;
  for (int i = 0; i < PLC_NDIM; i++)
    if (r->v->dim.e[i] != f->e[i])
      return 0;
  at->env = NULL;
  return 1;
}

/* Does kept call y hold for this call (its hash): the same function and
 * scalar arguments, and every field it read of the same value here (where,
 * in at: room for y->nreads)? */
static int plc_cshare_same(const plc_sentry *y, const plc_ast *def, const plc_env *call,
                           const signed char *alias, unsigned hash, plc_shold *at)
{
  if (y->link.hash != hash || y->def != def || y->n != (int)call->n)
    return 0;
  for (size_t i = 0; i < call->n; i++)
    if (y->alias[i] != alias[i] ||
        (y->args[i] && !plc_cmemo_arg_same(y->args[i], call->b[i].val)))
      return 0;
  for (int i = 0; i < y->nreads; i++)
    if (!plc_cshare_holds(call->b[y->reads[i].arg].val->obj, &y->reads[i], &at[i]))
      return 0;
  return 1;
}

/* A field read whose value is known (found at env's binding idx): what
 * plc_eval_field_h tells of it (the watched fields, the cross-candidate
 * cache, a call being recorded) is told, with nothing looked up again. */
static void plc_eval_field_told(plc_eval *ev, const plc_obj *o, const char *name, unsigned hash,
                                const plc_shold *at, const plc_loc *use)
{
  if (o == ev->watch)
    plc_eval_watch_read(ev, at->env, (size_t)at->idx);
  plc_eval_xread(ev, o, name, at->v, use);
  if (ev->cmemo && ev->cmemo->open)
    plc_cmemo_note(ev, o, name, hash, at->v, use, at->env, at->idx);
}

/* A kept call that holds here, replayed (and recorded in this
 * compilation's memo), or NULL. */
static PLC_NOINLINE plc_value *plc_cshare_try(plc_eval *ev, const plc_value *f, plc_env *call,
                                              unsigned hash)
{
  struct plc_cshare *sh = ev->cshare;
  signed char alias[PLC_CMEMO_ARGS];
  plc_shold at[PLC_CSHARE_READS];
  unsigned key = plc_cshare_key(f->def, call, alias);
  const plc_clink *k = plc_ctab_first(&sh->t, key);
  while (k && !plc_cshare_same((const plc_sentry *)k, f->def, call, alias, key, at))
    k = k->next;
  const plc_sentry *y = (const plc_sentry *)k;
  if (!y || !plc_cmemo_fits(ev, y->steps, y->nest, y->depth))
    return NULL;
  plc_cshare_replays++;
  plc_cmemo *m = ev->cmemo;
  size_t log0 = m->nlog;
  m->open++;
  int dry = ev->dry;
  for (int i = 0; i < y->nreads; i++) { /* read as the body did: known, so told only */
    const plc_sread *r = &y->reads[i];
    plc_obj *o = call->b[r->arg].val->obj;
    ev->dry = r->dry;
    if (at[i].env)
      plc_eval_field_told(ev, o, r->name, r->hash, &at[i], r->use);
    else
      plc_eval_field_h(ev, o, r->name, r->hash, r->use);
  }
  ev->dry = dry;
  m->open--;
  ev->steps += y->steps;
  if (ev->nest + y->nest > ev->nest_hw)
    ev->nest_hw = ev->nest + y->nest;
  if (ev->depth + y->depth > ev->depth_hw)
    ev->depth_hw = ev->depth + y->depth;
  plc_centry *x = plc_cmemo_enter(ev, f, call, hash, plc_cshare_copy(ev->arena, y->result),
                                  log0);
  x->steps = y->steps;
  x->nest = y->nest;
  x->depth = y->depth;
  x->named = 0;
  if (!m->open)
    m->nlog = 0;
  return x->result;
}

/* The arguments of a builtin call, a list argument counting as its
 * elements; NULL after an error (returned in *err). */
static plc_value **plc_eval_builtin_args(plc_eval *ev, const plc_ast *e, plc_env *env,
                                         size_t *n, plc_value **err)
{
  size_t cap = 8;
  plc_value **args = plc_arena_alloc(ev->arena, cap * sizeof *args);
  *n = 0;
  for (const plc_ast *a = e->list.head; a; a = a->next) {
    plc_value *v = plc_eval_expr(ev, a->a, env);
    if (v->tag == PLC_V_ERR)
      return *err = v, NULL;
    size_t k = v->tag == PLC_V_LIST && v->known ? v->n : 1;
    if (*n + k > cap) {
      plc_value **bigger = plc_arena_alloc(ev->arena, (cap = (*n + k) * 2) * sizeof *args);
      memcpy(bigger, args, *n * sizeof *args);
      args = bigger;
    }
    for (size_t i = 0; i < k; i++)
      args[(*n)++] = v->tag == PLC_V_LIST && v->known ? v->items[i] : v;
  }
  return args;
}

/* Check a builtin's numeric arguments: numbers of one dimension.  Returns
 * NULL when they are fine, else the value to return (an error, or unknown). */
static PLC_NOINLINE plc_value *plc_eval_builtin_check(plc_eval *ev, const plc_value *f, const plc_ast *e,
                                         plc_value **args, size_t n, int *known)
{
  if (n == 0) {
    plc_error(ev->diag, &e->loc, "%s() needs at least one argument", f->s);
    return plc_value_err(ev);
  }
  if ((f->builtin == PLC_BI_ABS || f->builtin == PLC_BI_FLOOR || f->builtin == PLC_BI_CEIL) &&
      n != 1) {
    plc_error(ev->diag, &e->loc, "%s() takes one number", f->s);
    return plc_value_err(ev);
  }
  *known = 1;
  for (size_t i = 0; i < n; i++) {
    if (!plc_eval_want(ev, args[i], PLC_V_NUM, e, "builtin functions take numbers"))
      return plc_value_err(ev);
    if (args[i]->tag == PLC_V_ANY)
      return plc_value_any(ev);
    if (args[i]->dim_known && args[0]->dim_known && !plc_dim_eq(args[i]->dim, args[0]->dim)) {
      char *a = plc_dim_str(args[0]->dim), *b = plc_dim_str(args[i]->dim);
      plc_error(ev->diag, &e->loc, "arguments of %s() differ in dimension (%s and %s)", f->s, a, b);
      free(a);
      free(b);
      return plc_value_err(ev);
    }
    *known = *known && args[i]->known;
  }
  return NULL;
}

/* min, max, sum, abs, floor, ceil over known numbers. */
static PLC_NOINLINE plc_value *plc_eval_builtin_fold(plc_eval *ev, const plc_value *f, const plc_ast *e,
                                        plc_value **args, size_t n)
{
  if (f->builtin == PLC_BI_MIN || f->builtin == PLC_BI_MAX) {
    /* the first of the least (greatest) argument: a value is never
     * changed once made, so it is shared, not copied */
    size_t best = 0;
    for (size_t i = 1; i < n; i++) {
      int c = mpq_cmp(args[i]->q, args[best]->q);
      if ((f->builtin == PLC_BI_MIN && c < 0) || (f->builtin == PLC_BI_MAX && c > 0))
        best = i;
    }
    plc_value *v = plc_value_make(ev, PLC_V_NUM);
    v->q = args[best]->q;
    v->dim = args[0]->dim;
    return v;
  }
  plc_quantity acc, x;
  plc_q_init(&acc);
  plc_q_init(&x);
  plc_eval_to_q(&acc, args[0]);
  plc_q_status st = PLC_Q_OK;
  for (size_t i = 1; i < n && st == PLC_Q_OK; i++) {
    plc_eval_to_q(&x, args[i]);
    int c = mpq_cmp(x.v, acc.v);
    if (f->builtin == PLC_BI_SUM)
      st = plc_q_add(&acc, &acc, &x);
    else if ((f->builtin == PLC_BI_MIN && c < 0) || (f->builtin == PLC_BI_MAX && c > 0))
      plc_q_set(&acc, &x);
  }
  if (f->builtin == PLC_BI_ABS && mpq_sgn(acc.v) < 0)
    plc_q_neg(&acc, &acc);
  else if (f->builtin == PLC_BI_FLOOR)
    plc_q_floor(&acc, &acc);
  else if (f->builtin == PLC_BI_CEIL)
    plc_q_ceil(&acc, &acc);
  plc_value *v = st == PLC_Q_OK ? plc_value_num(ev, &acc)
                                : plc_eval_q_error(ev, st, e, args[0], args[0]);
  plc_q_clear(&acc);
  plc_q_clear(&x);
  return v;
}

static PLC_NOINLINE plc_value *plc_eval_builtin(plc_eval *ev, const plc_value *f,
                                                const plc_ast *e, plc_env *env)
{
  size_t n;
  plc_value *err = NULL;
  plc_value **args = plc_eval_builtin_args(ev, e, env, &n, &err);
  if (!args)
    return err;
  if (f->builtin == PLC_BI_LEN) {
    plc_quantity q;
    plc_q_init(&q);
    plc_q_set_si(&q, (long)n, plc_dim_none());
    plc_value *v = plc_value_num(ev, &q);
    plc_q_clear(&q);
    return v;
  }
  int known;
  plc_value *bad = plc_eval_builtin_check(ev, f, e, args, n, &known);
  if (bad)
    return bad;
  if (known)
    return plc_eval_builtin_fold(ev, f, e, args, n);
  plc_value *v = plc_value_make(ev, PLC_V_NUM); /* unknown, of the arguments' dimension */
  v->known = 0;
  v->dim_known = args[0]->dim_known;
  v->dim = args[0]->dim;
  return v;
}

static plc_value *plc_eval_list(plc_eval *ev, const plc_ast *e, plc_env *env)
{
  plc_value *v = plc_value_make(ev, PLC_V_LIST);
  v->n = (size_t)e->list.count;
  v->items = plc_arena_alloc(ev->arena, (v->n ? v->n : 1) * sizeof *v->items);
  size_t i = 0;
  for (const plc_ast *x = e->list.head; x; x = x->next) {
    v->items[i] = plc_eval_expr(ev, x, env);
    if (v->items[i++]->tag == PLC_V_ERR)
      return plc_value_err(ev);
  }
  return v;
}

static plc_value *plc_eval_index(plc_eval *ev, const plc_ast *e, plc_env *env)
{
  plc_value *o = plc_eval_expr(ev, e->a, env), *i = plc_eval_expr(ev, e->b, env);
  if (o->tag == PLC_V_ERR || i->tag == PLC_V_ERR)
    return plc_value_err(ev);
  if (o->tag == PLC_V_OP) { /* rs[i]: one op of a family made by a for loop */
    long k;
    plc_quantity q;
    plc_q_init(&q);
    int ok = i->tag == PLC_V_NUM && i->known && plc_dim_is_none(i->dim);
    if (ok) {
      mpq_set(q.v, i->q);
      ok = plc_q_get_long(&q, 0, 1L << 30, &k);
    }
    plc_q_clear(&q);
    if (!ok)
      return o;
    plc_value *v = plc_value_make(ev, PLC_V_OP);
    *v = *o;
    size_t n = strlen(o->s) + 24;
    char *s = plc_arena_alloc(ev->arena, n);
    snprintf(s, n, "%s[%ld]", o->s, k);
    v->s = s;
    return v;
  }
  if (!plc_eval_want(ev, o, PLC_V_LIST, e->a, "only lists can be indexed") ||
      !plc_eval_want(ev, i, PLC_V_NUM, e->b, "an index must be a number"))
    return plc_value_err(ev);
  if (o->tag == PLC_V_ANY || !o->known || i->tag == PLC_V_ANY || !i->known)
    return plc_value_any(ev);
  plc_quantity q;
  plc_q_init(&q);
  plc_eval_to_q(&q, i);
  long k;
  int ok = plc_dim_is_none(q.dim) && plc_q_get_long(&q, 0, (long)o->n - 1, &k);
  plc_q_clear(&q);
  if (!ok) {
    plc_error(ev->diag, &e->b->loc, "index out of range (the list has %zu elements)", o->n);
    return plc_value_err(ev);
  }
  return o->items[k];
}

static plc_value *plc_eval_node(plc_eval *ev, const plc_ast *e, plc_env *env);

/* The evaluation limits of plc(5): every expression evaluated is a step, and
 * expressions nest (across calls and definitions) only so deep.  The first
 * limit reached is reported once, where it is reached; from then on every
 * evaluation is an error at once, so the remaining work unwinds quickly. */
static PLC_NOINLINE int plc_eval_limit_hit(plc_eval *ev, const plc_ast *e)
{
  if (ev->stopped) {
    ev->steps--; /* counted by plc_eval_limits, which does not count then */
    return 0;
  }
  if (ev->steps > plc_eval_max_steps)
    plc_error(ev->diag, &e->loc, "evaluation takes more than %ld steps (the limit of plc(5); "
              "is a recursion or a loop unbounded?)", plc_eval_max_steps);
  else if (ev->nest >= PLC_EVAL_MAX_NEST)
    plc_error(ev->diag, &e->loc, "evaluation nested too deeply (more than %d expressions "
              "across calls and definitions)", PLC_EVAL_MAX_NEST);
  else
    return 1;
  ev->stopped = 1;
  return 0;
}

/* One test for the three: every expression evaluated passes here. */
static inline int plc_eval_limits(plc_eval *ev, const plc_ast *e)
{
  if (__builtin_expect(ev->stopped | (++ev->steps > plc_eval_max_steps) |
                       (ev->nest >= PLC_EVAL_MAX_NEST), 0))
    return plc_eval_limit_hit(ev, e);
  return 1;
}

int plc_eval_step(plc_eval *ev, const plc_ast *at, long weight)
{
  ev->steps += weight - 1; /* plc_eval_limits counts the last one */
  return plc_eval_limits(ev, at);
}

plc_value *plc_eval_expr(plc_eval *ev, const plc_ast *e, plc_env *env)
{
  if (!plc_eval_limits(ev, e))
    return plc_value_err(ev);
  if (++ev->nest > ev->nest_hw)
    ev->nest_hw = ev->nest;
  plc_value *v = plc_eval_node(ev, e, env);
  ev->nest--;
  if (!ev->dry || !v->known || (v->tag != PLC_V_NUM && v->tag != PLC_V_BOOL))
    return v;
  plc_value *u = plc_value_make(ev, v->tag); /* keep the type, forget the value */
  u->known = 0;
  u->dim = v->dim;
  u->dim_known = v->dim_known;
  return u;
}

static plc_value *plc_eval_node(plc_eval *ev, const plc_ast *e, plc_env *env)
{
  switch (e->kind) {
  case PLC_AST_NUM: {
    plc_value *v = plc_value_make(ev, PLC_V_NUM);
    v->q = e->value;
    v->dim = e->dim;
    return v;
  }
  case PLC_AST_STR: {
    plc_value *v = plc_value_make(ev, PLC_V_STR);
    v->s = e->name;
    return v;
  }
  case PLC_AST_BOOL: return plc_value_bool(ev, 1, e->op);
  case PLC_AST_NAME: return plc_eval_name(ev, e, env);
  case PLC_AST_FIELD: return plc_eval_member(ev, e, env);
  case PLC_AST_INDEX: return plc_eval_index(ev, e, env);
  case PLC_AST_CALL: return plc_eval_call(ev, e, env);
  case PLC_AST_LIST: return plc_eval_list(ev, e, env);
  case PLC_AST_UNARY: return plc_eval_unary(ev, e, env);
  case PLC_AST_BINARY: return plc_eval_binary(ev, e, env);
  case PLC_AST_COND: return plc_eval_cond(ev, e, env);
  default:
    plc_error(ev->diag, &e->loc, "not an expression");
    return plc_value_err(ev);
  }
}
