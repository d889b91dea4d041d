/* lower.c - instantiating layer templates into per-stage op lists.
 *
 * For each pipeline stage and one microbatch: the forward list holds every
 * layer's forward ops, then the `pipeline` template's forward ops; the
 * backward list holds, layer by layer in reverse, the recompute ops and the
 * backward ops, then the `pipeline` template's backward ops.  A template's
 * backward defaults to the mirror of its forward (reverse order, compute x2,
 * all_gather <-> reduce_scatter timed at the swapped primitive's bandwidth,
 * dependencies reversed); its recompute defaults to a copy of its forward
 * under `recompute = full`.  The `step` template's ops run once per step,
 * after the last backward.  Before any list is built the plan's op count is
 * estimated against PLC_LOWER_MAX_OPS; after, the op times' common
 * denominator is bounded, so interpreting the lists costs bounded sizes.
 * Names are found through a hash index per instance, so dependencies cost
 * time linear in ops and edges. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "lower.h"
#include "quantity.h"
#include "schema.h"
#include "xalloc.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PLC_LOWER_NOINLINE __attribute__((noinline))

/* The ops of one template instance in one list, by name: `after` and
 * `prev.` look names up here.  idx < 0 marks an op that vanished (a group
 * of size 1); its dependents wait for its dependencies instead. */
typedef struct plc_inst_op {
  const char *name;
  int idx;
  int *deps, ndeps;
  const plc_ast *at;  /* where a missing name was used */
  int fam_next;       /* the next op of its family name[...], or -1 */
} plc_inst_op;

/* A name's entry in an instance's index: the latest op of exactly that
 * name, and the family of ops named name[...], in order. */
typedef struct plc_inst_key {
  const char *key;
  size_t len;
  int latest, fam_first, fam_last;  /* op indices, or -1 */
  unsigned hash;                    /* plc_inst_hash of the key */
} plc_inst_key;

/* Names are looked up through a hash index, so `after` costs time in the
 * ops it names, not in the size of the instance. */
typedef struct plc_inst {
  plc_inst_op *ops;
  int n, cap;
  plc_inst_key *keys;  /* open addressing, nkeys a power of two */
  int nkeys, used;
  int shape;           /* its memo entry + 1, 0 when it has none */
  int xid;             /* its cross-candidate cache entry + 1, 0 when none */
  /* a memo copy's names are not made: looked up in what they would be made
   * from (plc_deps_lookup_in, by the next instance's `prev.`): its memo
   * entry + 1 and where it and its previous instance were copied to */
  int lazy, lazy_lo, lazy_plo;
  /* a replay of the cross-candidate cache's names likewise: its entry + 1,
   * where it was replayed and where its previous instance ended */
  int xlazy, xlazy_lo, xlazy_phi;
  int lo, hi;          /* its ops in the list */
} plc_inst;

typedef struct plc_lctx {
  plc_lower *L;
  plc_ir_list *list;
  plc_phase phase;
  int layer;
  int chunk;                  /* the layer's virtual chunk (a memo copy's ops are set to it) */
  plc_inst *cur, *prev, *fwd; /* this instance, the previous one, this layer's forward */
  plc_inst *missing;          /* `after` names not found (yet) in this instance */
  int sent;                   /* the layers' last compute-stream op, for pipeline ops; 0 unknown */
  plc_ir_mem *mem;            /* where a `memory` section adds up; NULL: not read here */
  mpq_ptr *mem_rec;           /* and the instance's own figures, for the memo; or NULL */
} plc_lctx;

/* The cross-candidate cache's log of what an instance reads. */
static int plc_xlog_add(plc_lower *L, int slot, const char *name, int d, long n,
                        mpq_srcptr q, const plc_ast *node);
static void plc_xlog_stream(plc_lower *L, const char *stream);
static void plc_xlog_memory(plc_lower *L);
enum { PLC_XR_RUN, PLC_XR_MODEL, PLC_XR_LAYER, PLC_XR_DEVICE, PLC_XR_OPT, PLC_XR_SIZE,
       PLC_XR_PEAK, PLC_XR_BW, PLC_XR_PREV };

static const int PLC_SECS[PLC_NDIM] = {0, 1, 0}, PLC_BYTES[PLC_NDIM] = {1, 0, 0},
                 PLC_FLOPS[PLC_NDIM] = {0, 0, 1}, PLC_NONE[PLC_NDIM] = {0, 0, 0};

/* Hash (djb2) and length of name k, and of its family's name (up to its
 * first '[', *blen; (size_t)-1 when it has none), in one pass. */
static unsigned plc_inst_hash(const char *k, size_t *len, size_t *blen, unsigned *bh)
{
  unsigned h = 5381;
  size_t i = 0;
  *blen = (size_t)-1;
  for (; k[i]; i++) {
    if (k[i] == '[' && *blen == (size_t)-1) {
      *blen = i;
      *bh = h;
    }
    h = h * 33 + (unsigned char)k[i];
  }
  *len = i;
  return h;
}

/* The slot of a key (of hash h), or the empty slot where it would go. */
static plc_inst_key *plc_inst_slot(plc_inst_key *keys, int nkeys, const char *k, size_t len,
                                   unsigned h)
{
  unsigned m = (unsigned)nkeys - 1, i = h & m;
  while (keys[i].key && (keys[i].hash != h || keys[i].len != len ||
                         (keys[i].key != k && memcmp(keys[i].key, k, len))))
    i = (i + 1) & m;
  return &keys[i];
}

static const plc_inst_key *plc_inst_find(const plc_inst *in, const char *k)
{
  if (!in || !in->nkeys)
    return NULL;
  size_t len, blen;
  unsigned bh, h = plc_inst_hash(k, &len, &blen, &bh);
  const plc_inst_key *e = plc_inst_slot(in->keys, in->nkeys, k, len, h);
  return e->key ? e : NULL;
}

static plc_inst_key *plc_inst_key_get(plc_lower *L, plc_inst *in, const char *k, size_t len,
                                      unsigned h)
{
  if (2 * (in->used + 1) > in->nkeys) { /* keep it at most half full */
    int n = in->nkeys ? in->nkeys * 2 : 16;
    plc_inst_key *keys = plc_arena_alloc(L->ar, (size_t)n * sizeof *keys);
    for (int i = 0; i < in->nkeys; i++)
      if (in->keys[i].key)
        *plc_inst_slot(keys, n, in->keys[i].key, in->keys[i].len, in->keys[i].hash) =
            in->keys[i];
    in->keys = keys;
    in->nkeys = n;
  }
  plc_inst_key *e = plc_inst_slot(in->keys, in->nkeys, k, len, h);
  if (!e->key) {
    *e = (plc_inst_key){k, len, -1, -1, -1, h};
    in->used++;
  }
  return e;
}

static void plc_inst_add(plc_lower *L, plc_inst *in, const char *name, int idx, int *deps,
                         int ndeps)
{
  if (in->n == in->cap) {
    int cap = in->cap ? in->cap * 2 : 8;
    plc_inst_op *ops = plc_arena_alloc_raw(L->ar, (size_t)cap * sizeof *ops); /* [0, n) only */
    if (in->n)
      memcpy(ops, in->ops, (size_t)in->n * sizeof *ops);
    in->ops = ops;
    in->cap = cap;
  }
  int at = in->n++;
  in->ops[at] = (plc_inst_op){name, idx, deps, ndeps, NULL, -1};
  size_t len, blen;
  unsigned bh, h = plc_inst_hash(name, &len, &blen, &bh);
  plc_inst_key_get(L, in, name, len, h)->latest = at;
  if (blen != (size_t)-1) { /* a member of the family name[...] */
    plc_inst_key *f = plc_inst_key_get(L, in, name, blen, bh);
    if (f->fam_last >= 0)
      in->ops[f->fam_last].fam_next = at;
    else
      f->fam_first = at;
    f->fam_last = at;
  }
}

/* The names lowering binds (in `layer`, `run` and every instance's context)
 * and the fields of an op it looks up (plc_lower_opfields), interned once
 * per run (ast.h): environments then find them by their kept hash, and a
 * template's reads of them compare as pointers. */
static const char *const plc_lower_bound[] = {
  "index", "kind", "stage", "first", "last", "model_first", "model_last", "model", "run",
  "layer", "device", "prev", "vpp", "tokens", "mu", "world", "recompute", "schedule",
  /* an op's fields, the ones most ops set first (plc_lower_opfields) */
  "after", "stream", "size", "flops", "efficiency", "useful", "bytes", "precision", "once",
  "wgrad", "time", "chunk",
};

enum { PLC_LN_INDEX, PLC_LN_KIND, PLC_LN_STAGE, PLC_LN_FIRST, PLC_LN_LAST, PLC_LN_MODEL_FIRST,
       PLC_LN_MODEL_LAST, PLC_LN_MODEL, PLC_LN_RUN, PLC_LN_LAYER, PLC_LN_DEVICE, PLC_LN_PREV,
       PLC_LN_VPP, PLC_LN_TOKENS, PLC_LN_MU, PLC_LN_WORLD, PLC_LN_RECOMPUTE, PLC_LN_SCHEDULE,
       PLC_LN_AFTER, PLC_LN_STREAM, PLC_LN_SIZE, PLC_LN_FLOPS, PLC_LN_EFFICIENCY, PLC_LN_USEFUL,
       PLC_LN_BYTES, PLC_LN_PRECISION, PLC_LN_ONCE, PLC_LN_WGRAD, PLC_LN_TIME, PLC_LN_CHUNK,
       PLC_NOPFIELDS = PLC_LN_CHUNK - PLC_LN_AFTER + 1 };

_Static_assert(sizeof plc_lower_bound / sizeof *plc_lower_bound ==
                   sizeof ((plc_lower *)0)->names / sizeof (const char *),
               "plc_lower.names holds every bound name");
_Static_assert(PLC_NOPFIELDS == sizeof ((plc_lower *)0)->op_field / sizeof (plc_binding *),
               "plc_lower.op_field holds every op field");

static const char **plc_lcache_names(plc_lcache *X, plc_arena **ar);

/* Name k, interned once per cache of lowered instances (a search
 * thread's), else once per run. */
static const char *plc_lower_name(plc_lower *L, int k)
{
  plc_arena *ar = L->ar;
  const char **names = L->ev->lower_cache ? plc_lcache_names(L->ev->lower_cache, &ar) : L->names;
  if (!names[k])
    names[k] = plc_name_intern(ar, plc_lower_bound[k], strlen(plc_lower_bound[k]));
  return names[k];
}

/* The op fields' bindings in an op's environment env (which holds its
 * `set` items alone), found in one pass over them: by name, the latest
 * binding of each, what plc_env_find_local finds (its names are compared
 * by their hashes first, as there).  A dozen lookups of each op, most of
 * fields it does not set, each hashing the name, cost more than the pass.
 * The names and their hashes are found once per run. */
static void plc_lower_opfields(plc_lower *L, plc_env *env)
{
  if (!L->fhash[0])
    for (int f = 0; f < PLC_NOPFIELDS; f++) {
      L->fname[f] = plc_lower_name(L, PLC_LN_AFTER + f);
      L->fhash[f] = plc_name_hash(L->fname[f]);
    }
  L->op_env = env;
  memset(L->op_field, 0, sizeof L->op_field);
  for (size_t i = 0; i < env->n; i++) {
    plc_binding *b = &env->b[i];
    for (int f = 0; f < PLC_NOPFIELDS; f++)
      if (b->hash == L->fhash[f] && (b->name == L->fname[f] || !strcmp(b->name, L->fname[f]))) {
        L->op_field[f] = b;
        break; /* the fields' names differ */
      }
  }
}

/* The binding of op field k (PLC_LN_AFTER on) in env, an op's environment
 * (plc_lower_opfields), or NULL. */
static plc_binding *plc_lower_opbinding(plc_lower *L, plc_env *env, int k)
{
  if (env != L->op_env)
    plc_lower_opfields(L, env);
  return L->op_field[k - PLC_LN_AFTER];
}

/* ---- dependencies --------------------------------------------------------- */

/* A dependency list being built; duplicates are dropped in constant time
 * by stamping each op index with the list's stamp (L->mark). */
typedef struct plc_deps {
  plc_lower *L;
  int *v;
  int n, cap;
  long stamp;
} plc_deps;

static plc_deps plc_deps_new(plc_lower *L)
{
  return (plc_deps){.L = L, .stamp = ++L->stamp};
}

static void plc_deps_add(plc_deps *d, int idx)
{
  plc_lower *L = d->L;
  if (idx >= L->nmark) {
    long n = L->nmark ? L->nmark : 64;
    while (n <= idx)
      n *= 2;
    L->mark = plc_xrealloc(L->mark, (size_t)n * sizeof *L->mark);
    memset(L->mark + L->nmark, 0, (size_t)(n - L->nmark) * sizeof *L->mark);
    L->nmark = n;
  }
  if (L->mark[idx] == d->stamp)
    return;
  L->mark[idx] = d->stamp;
  if (d->n == d->cap)
    d->v = plc_xrealloc(d->v, (size_t)(d->cap = d->cap ? d->cap * 2 : 8) * sizeof *d->v);
  d->v[d->n++] = idx;
}

/* Mark d's ops with its stamp again, after another list was built (with
 * a stamp of its own) while d was: d drops the duplicates it holds. */
static void plc_deps_restamp(plc_deps *d)
{
  for (int i = 0; i < d->n; i++)
    d->L->mark[d->v[i]] = d->stamp;
}

static void plc_deps_entry(plc_deps *d, const plc_inst_op *e)
{
  if (e->idx >= 0)
    plc_deps_add(d, e->idx);
  else
    for (int i = 0; i < e->ndeps; i++)
      plc_deps_add(d, e->deps[i]);
}

/* Add the ops named `name` (or the family name[...]) of an instance.
 * Returns how many matched. */
static int plc_deps_lookup(plc_deps *d, const plc_inst *in, const char *name)
{
  const plc_inst_key *e = plc_inst_find(in, name);
  if (!e)
    return 0;
  if (e->latest >= 0) { /* the latest op of that name */
    plc_deps_entry(d, &in->ops[e->latest]);
    return 1;
  }
  int found = 0;
  for (int i = e->fam_first; i >= 0; i = in->ops[i].fam_next, found++)
    plc_deps_entry(d, &in->ops[i]);
  return found;
}

static void plc_deps_lookup_in(plc_lower *L, plc_deps *d, const plc_inst *in,
                               const char *name);
static int plc_xlog_prev(plc_lower *L, const plc_inst *prev, const char *name);
static void plc_xscript_begin(plc_lower *L);
static void plc_xscript_prev(plc_lower *L, int r);
static void plc_xscript_cur(plc_lower *L, const plc_inst *in, const char *name);
static int plc_xscript_end(plc_lower *L);
static void plc_xscript_place(plc_lower *L, int rec, int idx, int vanished);

static int plc_lower_dep(plc_lctx *c, plc_deps *d, const plc_value *v, const plc_ast *at)
{
  if (v->tag == PLC_V_ANY)
    return 1;
  if (v->tag != PLC_V_OP) {
    plc_error(c->L->diag, &at->loc, "'after' lists ops");
    return 0;
  }
  if (v->prev) { /* the previous instance may not exist: then nothing to wait for */
    /* the instance depends on its previous one (what prev gave is logged
     * through a list of its own: d's stamp made good again) */
    plc_xscript_prev(c->L, plc_xlog_prev(c->L, c->prev, v->s));
    plc_deps_restamp(d);
    plc_deps_lookup_in(c->L, d, c->prev, v->s);
    return 1;
  }
  if (plc_deps_lookup(d, c->cur, v->s)) {
    plc_xscript_cur(c->L, c->cur, v->s);
    return 1;
  }
  /* Not (yet) in this instance: an op of a branch not taken, or a forward op
   * when lowering backward (finished before this list began).  Remember it:
   * if it turns up later in the instance, it was used before it ran. */
  plc_inst_add(c->L, c->missing, v->s, -1, NULL, 0);
  c->missing->ops[c->missing->n - 1].at = at;
  return 1;
}

/* After an instance: an `after` name that appeared later in program order. */
static void plc_lower_check_missing(plc_lctx *c)
{
  for (int i = 0; i < c->missing->n; i++) {
    const plc_inst_key *e = plc_inst_find(c->cur, c->missing->ops[i].name);
    if (e && e->latest >= 0)
      plc_error(c->L->diag, &c->missing->ops[i].at->loc, "op '%s' is waited for before it "
                "runs (list it earlier in the template)", c->missing->ops[i].name);
  }
  c->missing->n = 0;
}

/* An op's dependencies, from its `after`; *rec: the number of the script
 * the cache's log keeps of them (plc_xscript_end), or -1. */
static int plc_lower_deps(plc_lctx *c, plc_env *env, plc_ir_op *op, int *rec)
{
  plc_binding *b = plc_lower_opbinding(c->L, env, PLC_LN_AFTER);
  plc_deps d = plc_deps_new(c->L);
  int ok = 1;
  plc_xscript_begin(c->L);
  if (b) {
    plc_value *v = plc_eval_binding(c->L->ev, b, &b->def->loc);
    if (v->tag == PLC_V_LIST)
      for (size_t i = 0; i < v->n && ok; i++)
        ok = plc_lower_dep(c, &d, v->items[i], b->def->a);
    else
      ok = plc_lower_dep(c, &d, v, b->def->a);
  }
  *rec = plc_xscript_end(c->L);
  op->ndeps = d.n;
  op->deps = plc_arena_alloc(c->L->ar, (size_t)(d.n ? d.n : 1) * sizeof *op->deps);
  if (d.n)
    memcpy(op->deps, d.v, (size_t)d.n * sizeof *op->deps);
  free(d.v);
  return ok;
}

/* ---- costs ------------------------------------------------------------------ */

/* Field k (plc_lower_name) of an op, evaluated; NULL when not set. */
static plc_value *plc_lower_opfield(plc_lctx *c, plc_env *env, int k)
{
  plc_binding *b = plc_lower_opbinding(c->L, env, k);
  return b ? plc_eval_binding(c->L->ev, b, &b->def->loc) : NULL;
}

/* Where field k of an op is set, or the op. */
static const plc_ast *plc_lower_opnode(plc_lower *L, plc_env *env, int k, const plc_ast *op)
{
  plc_binding *b = plc_lower_opbinding(L, env, k);
  return b ? b->def->a : op;
}

static int plc_lower_word_field(plc_lower *L, plc_env *env, int k, const char **out);

/* The peak an op's FLOPs run at: the device's peak (bf16, fp16: the
 * default), or its peak_fp8 for `precision = fp8`. */
static mpq_ptr plc_lower_op_peak(plc_lctx *c, plc_env *env, const plc_ast *node, plc_ir_op *op)
{
  plc_lower *L = c->L;
  const char *prec = "bf16";
  plc_lower_word_field(L, env, PLC_LN_PRECISION, &prec);
  const plc_ast *at = plc_lower_opnode(L, env, PLC_LN_PRECISION, node);
  if (!strcmp(prec, "bf16") || !strcmp(prec, "fp16")) {
    if (L->xlog)
      plc_xlog_add(L, PLC_XR_PEAK, NULL, -1, 0, L->run->peak, NULL);
    return L->run->peak;
  }
  if (strcmp(prec, "fp8")) {
    plc_error(L->diag, &at->loc, "op '%s': precision must be one of: bf16, fp16, fp8, not "
              "'%s'", op->name, prec);
    return NULL;
  }
  plc_value *p8 = plc_lower_field(L, L->device, "peak_fp8");
  if (!p8) {
    plc_error(L->diag, &at->loc, "op '%s' runs in fp8, but device '%s' has no peak_fp8",
              op->name, L->device->name);
    return NULL;
  }
  static const int flops_per_s[PLC_NDIM] = {0, -1, 1};
  return plc_lower_num(L, p8, flops_per_s, plc_lower_field_node(L->device, "peak_fp8"),
                       "a device's peak_fp8");
}

/* FLOPs / (peak x efficiency), or the roofline max with bytes / mem_bw;
 * the peak is the op's precision's. */
static int plc_lower_compute_cost(plc_lctx *c, plc_env *env, const plc_ast *node, plc_ir_op *op)
{
  plc_lower *L = c->L;
  plc_value *f = plc_lower_opfield(c, env, PLC_LN_FLOPS);
  plc_value *by = plc_lower_opfield(c, env, PLC_LN_BYTES);
  plc_value *ef = plc_lower_opfield(c, env, PLC_LN_EFFICIENCY);
  if (!ef)
    ef = plc_lower_field(L, L->device, "efficiency");
  mpq_srcptr eff = plc_lower_num_read(L, ef, PLC_NONE,
                                      plc_lower_opnode(L, env, PLC_LN_EFFICIENCY, node),
                                      "efficiency");
  if (!eff)
    return 0;
  if (!f && !by) {
    plc_error(L->diag, &node->loc, "compute op '%s' needs flops, bytes or time", op->name);
    return 0;
  }
  if (f) {
    mpq_srcptr fl = plc_lower_num_read(L, f, PLC_FLOPS,
                                       plc_lower_opnode(L, env, PLC_LN_FLOPS, node), "flops");
    if (!fl)
      return 0;
    mpq_set(op->flops, fl);
    mpq_ptr peak = plc_lower_op_peak(c, env, node, op);
    if (!peak)
      return 0;
    plc_q_rat_mul(op->time, peak, eff);
    if (mpq_sgn(op->time) <= 0 || mpq_sgn(fl) < 0) {
      plc_error(L->diag, &node->loc, "op '%s': peak x efficiency must be positive and flops "
                "not negative", op->name);
      return 0;
    }
    plc_q_rat_div(op->time, fl, op->time);
  }
  if (by) {
    mpq_srcptr b = plc_lower_num_read(L, by, PLC_BYTES,
                                      plc_lower_opnode(L, env, PLC_LN_BYTES, node), "bytes");
    plc_value *mbw = plc_lower_field(L, L->device, "mem_bw");
    static const int bps[PLC_NDIM] = {1, -1, 0};
    mpq_srcptr bw = mbw ? plc_lower_num_read(L, mbw, bps, node, "the device's mem_bw") : NULL;
    if (!b || !mbw) {
      if (!mbw)
        plc_error(L->diag, &node->loc, "op '%s' gives bytes, but device '%s' has no mem_bw",
                  op->name, L->device->name);
      return 0;
    }
    if (mpq_sgn(bw) <= 0 || mpq_sgn(b) < 0) {
      plc_error(L->diag, &node->loc, "op '%s': mem_bw must be positive and bytes not negative",
                op->name);
      return 0;
    }
    mpq_t t;
    mpq_init(t);
    plc_q_rat_div(t, b, bw);
    if (mpq_cmp(t, op->time) > 0)
      mpq_set(op->time, t);
    mpq_clear(t);
  }
  return 1;
}

/* Bandwidth of a primitive on a dimension's link (cached in the placement). */
static mpq_ptr plc_lower_bw_of(plc_lower *L, plc_pdim dim, plc_opk kind, const plc_ast *node)
{
  plc_ir_place *p = &L->run->place[dim];
  if (p->bw[kind])
    return p->bw[kind];
  plc_obj *link = L->links[dim];
  plc_value *v = plc_lower_field(L, link, plc_opk_name(kind));
  static const int bps[PLC_NDIM] = {1, -1, 0};
  if (!v) {
    plc_error(L->diag, &node->loc, "link '%s' (used by %s) has no %s bandwidth and no bw",
              link->name, plc_pdim_name(dim), plc_opk_name(kind));
    return NULL;
  }
  p->bw[kind] = plc_lower_num(L, v, bps, plc_lower_field_node(link, plc_opk_name(kind)),
                                  "a bandwidth");
  if (p->bw[kind] && mpq_sgn(p->bw[kind]) <= 0) { /* a computed zero: never divide */
    plc_error(L->diag, &plc_lower_field_node(link, plc_opk_name(kind))->loc,
              "link '%s' has a %s bandwidth that is not positive", link->name,
              plc_opk_name(kind));
    p->bw[kind] = NULL;
    return NULL;
  }
  if (!p->latency)
    p->latency = plc_lower_num(L, plc_lower_field(L, link, "latency"), PLC_SECS,
                               plc_lower_field_node(link, "latency"), "a latency");
  return p->latency ? p->bw[kind] : NULL;
}


/* The bandwidth (and the cross-candidate cache's record of reading it). */
static mpq_ptr plc_lower_bw(plc_lctx *c, const plc_ir_op *op, const plc_ast *node)
{
  mpq_ptr bw = plc_lower_bw_of(c->L, op->dim, op->kind, node);
  if (bw && c->L->xlog)
    plc_xlog_add(c->L, PLC_XR_BW, NULL, op->dim, op->kind, bw, node);
  return bw;
}

/* The alpha-beta time of a collective of op->size bytes (DESIGN.md
 * section 4, nccl-tests bus bandwidth), on the bandwidth of its own
 * primitive: a mirrored backward op is timed here again after its kind
 * changed.  node locates a missing bandwidth. */
static int plc_lower_coll_time(plc_lctx *c, const plc_ast *node, plc_ir_op *op)
{
  mpq_ptr bw = plc_lower_bw(c, op, node);
  if (!bw)
    return 0;
  plc_lower *L = c->L;
  for (int i = 0; i < L->nctime; i++) { /* timed before: the same link, group and size */
    const struct plc_ctime *k = &L->ctime[i];
    if (k->kind == (int)op->kind && k->dim == (int)op->dim && k->group == op->group &&
        mpq_equal(k->size, op->size)) {
      mpq_set(op->time, k->time);
      return 1;
    }
  }
  long n = op->group, steps = n - 1;
  mpq_t f, a;
  mpq_init(f);
  mpq_init(a);
  switch (op->kind) {
  case PLC_OPK_ALL_REDUCE: mpq_set_si(f, 2 * (n - 1), (unsigned long)n); steps = 2 * (n - 1); break;
  case PLC_OPK_P2P: mpq_set_si(f, 1, 1); steps = 1; break;
  case PLC_OPK_BROADCAST: mpq_set_si(f, 1, 1); break;
  default: mpq_set_si(f, n - 1, (unsigned long)n); break;
  }
  mpq_canonicalize(f);
  plc_q_rat_mul(op->time, f, op->size);
  plc_q_rat_div(op->time, op->time, bw);
  mpq_set_si(a, steps, 1);
  plc_q_rat_mul(a, a, c->L->run->place[op->dim].latency);
  plc_q_rat_add(op->time, op->time, a);
  mpq_clear(f);
  mpq_clear(a);
  if (L->nctime < (int)(sizeof L->ctime / sizeof L->ctime[0])) {
    struct plc_ctime *k = &L->ctime[L->nctime++];
    *k = (struct plc_ctime){op->kind, op->dim, op->group, plc_arena_mpq(L->ar),
                            plc_arena_mpq(L->ar)};
    mpq_set(k->size, op->size);
    mpq_set(k->time, op->time);
  }
  return 1;
}

static int plc_lower_coll_cost(plc_lctx *c, plc_env *env, const plc_ast *node, plc_ir_op *op)
{
  plc_value *sv = plc_lower_opfield(c, env, PLC_LN_SIZE);
  if (!sv) {
    plc_error(c->L->diag, &node->loc, "collective '%s' needs a size (or a time)", op->name);
    return 0;
  }
  const plc_ast *at = plc_lower_opnode(c->L, env, PLC_LN_SIZE, node);
  mpq_srcptr size = plc_lower_num_read(c->L, sv, PLC_BYTES, at, "size");
  if (size && mpq_sgn(size) < 0) {
    plc_error(c->L->diag, &at->loc, "a size must not be negative");
    return 0;
  }
  if (!size)
    return 0;
  mpq_set(op->size, size);
  return plc_lower_coll_time(c, node, op);
}

/* ---- ops ----------------------------------------------------------------------- */

static const char *plc_lower_op_name(plc_lctx *c, const plc_ast *node, plc_env *env)
{
  if (!node->a)
    return node->name;
  long i;
  if (!plc_lower_int(c->L, plc_eval_expr(c->L->ev, node->a, env), 0, PLC_LOWER_MAX_LOOP,
                     node->a, "an op index", &i))
    return NULL;
  /* "name[i]" (0 <= i <= PLC_LOWER_MAX_LOOP), without snprintf: fresh
   * instances make thousands a search */
  size_t n = strlen(node->name);
  char *s = plc_arena_alloc(c->L->ar, n + 24), d[24];
  int nd = 0;
  unsigned long u = (unsigned long)i;
  do
    d[nd++] = (char)('0' + u % 10);
  while ((u /= 10) != 0);
  memcpy(s, node->name, n);
  s[n++] = '[';
  while (nd > 0)
    s[n++] = d[--nd];
  s[n++] = ']';
  s[n] = '\0';
  return s;
}

/* A word field (the stream): a bare name as written, or an expression that
 * gives a string (`stream = run.overlap ? "comm" : "compute"`). */
static int plc_lower_word_field(plc_lower *L, plc_env *env, int k, const char **out)
{
  plc_binding *b = plc_lower_opbinding(L, env, k);
  if (!b)
    return 0;
  const plc_ast *e = b->def->a;
  if (e->kind == PLC_AST_NAME || e->kind == PLC_AST_STR) {
    *out = e->name;
    return 1;
  }
  plc_value *v = plc_eval_binding(L->ev, b, &e->loc);
  if (v->tag != PLC_V_STR || !v->s) {
    if (v->tag != PLC_V_ERR)
      plc_error(L->diag, &e->loc, "'%s' must give a string", plc_lower_bound[k]);
    return 0;
  }
  *out = v->s;
  return 1;
}

static int plc_lower_bool_field(plc_lctx *c, plc_env *env, int k, int dflt)
{
  plc_value *v = plc_lower_opfield(c, env, k);
  return v && v->tag == PLC_V_BOOL && v->known ? v->b : dflt;
}

static void plc_lower_op_init(plc_lower *L, plc_ir_op *op)
{
  op->time = plc_arena_mpq(L->ar);
  op->flops = plc_arena_mpq(L->ar);
  op->size = plc_arena_mpq(L->ar);
}

/* Kind, group and stream of an op node. Returns 0 when the op vanishes
 * (a collective over a group of one) or on error (*bad set). */
static int plc_lower_op_shape(plc_lctx *c, const plc_ast *node, plc_env *env, plc_ir_op *op)
{
  op->kind = (plc_opk)plc_opk_lookup(node->opkind);
  const char *stream = "compute";
  plc_lower_word_field(c->L, env, PLC_LN_STREAM, &stream);
  op->stream = plc_ir_stream(c->L->ar, c->L->run, stream);
  if (c->L->xlog)
    plc_xlog_stream(c->L, stream);
  if (op->kind == PLC_OPK_COMPUTE)
    return 1;
  op->dim = (plc_pdim)plc_pdim_lookup(node->b->name);
  op->group = c->L->run->size[op->dim];
  if (c->L->xlog)
    plc_xlog_add(c->L, PLC_XR_SIZE, NULL, op->dim, op->group, NULL, NULL);
  return op->group > 1;
}

/* An op of the `pipeline` template that names no dependency sends what the
 * stage's layers produced: it waits for the last op of the compute stream
 * lowered before it in the list. */
static void plc_lower_pipeline_dep(plc_lctx *c, plc_ir_op *op)
{
  if (c->layer != -1 || op->phase == PLC_PH_STEP || op->ndeps > 0)
    return;
  if (!c->sent) { /* found once: the pipeline ops follow every layer op */
    c->sent = -1;
    for (int i = c->list->n - 1; i >= 0 && c->sent < 0; i--)
      if (c->list->ops[i].stream == 0 && c->list->ops[i].layer >= 0)
        c->sent = i + 1;
  }
  if (c->sent > 0) {
    op->deps = plc_arena_alloc(c->L->ar, sizeof *op->deps);
    op->deps[0] = c->sent - 1;
    op->ndeps = 1;
    op->after_layers = 1;
  }
}

/* A pipeline op's `chunk`: the virtual chunk of the stage it belongs to
 * (0 when not given); a layer's ops belong to their layer's chunk, set by
 * the caller, and step ops run once after every chunk.  Returns 0 on an
 * error. */
static int plc_lower_op_chunk(plc_lctx *c, plc_env *env, const plc_ast *node, plc_ir_op *op)
{
  plc_value *v = plc_lower_opfield(c, env, PLC_LN_CHUNK);
  if (!v)
    return 1;
  const plc_ast *at = plc_lower_opnode(c->L, env, PLC_LN_CHUNK, node);
  if (c->layer != -1 || c->phase == PLC_PH_STEP) {
    plc_error(c->L->diag, &at->loc, "'chunk' is for the ops of the pipeline template's forward "
              "and backward: a layer's ops belong to their layer's chunk, step ops to none");
    return 0;
  }
  long k;
  if (!plc_lower_int(c->L, v, 0, c->L->run->vpp - 1, at, "a virtual chunk (0 .. vpp - 1)", &k))
    return 0;
  op->chunk = (int)k;
  return 1;
}

static void plc_lower_op(plc_lctx *c, const plc_ast *node, plc_env *outer)
{
  plc_lower *L = c->L;
  if (++L->nops > L->cap) { /* the estimate's side lowering just stops */
    if (L->cap == PLC_LOWER_MAX_OPS)
      plc_error(L->diag, &node->loc, "the plan lowers to more than %d ops; refusing to go on",
                PLC_LOWER_MAX_OPS);
    L->stop = 1;
    return;
  }
  if (L->counting) /* what it counts is the ops the template reaches, not their fields */
    return;
  plc_env *env = plc_env_new(L->ev, outer);
  for (const plc_ast *it = node->list.head; it; it = it->next)
    if (it->kind == PLC_AST_SET)
      plc_env_define(L->ev, env, it->name, it, outer);
  plc_lower_opfields(L, env);
  plc_ir_op op = {0};
  plc_lower_op_init(L, &op);
  op.name = plc_lower_op_name(c, node, env);
  op.layer = c->layer;
  op.phase = c->phase;
  op.node = node;
  if (!op.name)
    return;
  int live = plc_lower_op_shape(c, node, env, &op), rec;
  if (!plc_lower_deps(c, env, &op, &rec))
    return;
  if (!live) { /* group of one: no op; dependents wait for its dependencies */
    plc_inst_add(L, c->cur, op.name, -1, op.deps, op.ndeps);
    plc_xscript_place(L, rec, c->cur->n - 1, 1);
    return;
  }
  plc_value *t = plc_lower_opfield(c, env, PLC_LN_TIME);
  if (t) {
    mpq_srcptr q = plc_lower_num_read(L, t, PLC_SECS, plc_lower_opnode(L, env, PLC_LN_TIME, node),
                                      "time");
    if (!q)
      return;
    if (mpq_sgn(q) < 0) {
      plc_error(L->diag, &plc_lower_opnode(L, env, PLC_LN_TIME, node)->loc, "a time must not be "
                "negative");
      return;
    }
    mpq_set(op.time, q);
    op.pinned = 1;
    plc_value *f = plc_lower_opfield(c, env, PLC_LN_FLOPS);
    if (f && f->tag == PLC_V_NUM && f->known)
      mpq_set(op.flops, f->q);
  } else if (!(op.kind == PLC_OPK_COMPUTE ? plc_lower_compute_cost(c, env, node, &op)
                                          : plc_lower_coll_cost(c, env, node, &op))) {
    return;
  }
  if (plc_lower_bool_field(c, env, PLC_LN_ONCE, 0) && c->phase != PLC_PH_BWD) {
    plc_warning(L->diag, &node->loc, "op '%s' is marked once but is not a backward op; once "
                "ops (gradient buckets) run in the last microbatch's backward, so it is left "
                "out", op.name);
    plc_inst_add(L, c->cur, op.name, -1, op.deps, op.ndeps);
    return;
  }
  op.useful = op.kind == PLC_OPK_COMPUTE &&
              plc_lower_bool_field(c, env, PLC_LN_USEFUL,
                                   c->phase == PLC_PH_FWD || c->phase == PLC_PH_BWD);
  op.once = plc_lower_bool_field(c, env, PLC_LN_ONCE, 0);
  op.wgrad = op.kind == PLC_OPK_COMPUTE && plc_lower_bool_field(c, env, PLC_LN_WGRAD, 0);
  if (!plc_lower_op_chunk(c, env, node, &op))
    return;
  plc_lower_pipeline_dep(c, &op);
  int idx = plc_ir_push(L->ar, c->list, &op);
  plc_inst_add(L, c->cur, op.name, idx, NULL, 0);
  plc_xscript_place(L, rec, idx, 0);
}

/* ---- walking template bodies ------------------------------------------------ */

static void plc_lower_items(plc_lctx *c, const plc_ast_list *items, plc_env *env, int top);

/* e as a boolean every value of which lowering knows: 1 or 0, or -1 after
 * an error (said here unless evaluating e said one). */
static int plc_lower_bool(plc_lctx *c, const plc_ast *e, plc_env *env, const char *what)
{
  plc_value *v = plc_eval_expr(c->L->ev, e, env);
  if (v->tag == PLC_V_BOOL && v->known)
    return v->b != 0;
  if (v->tag != PLC_V_ERR)
    plc_error(c->L->diag, &e->loc, "%s must be a known boolean when the template is lowered",
              what);
  return -1;
}

static void plc_lower_if(plc_lctx *c, const plc_ast *it, plc_env *env)
{
  int b = plc_lower_bool(c, it->a, env, "the condition");
  if (b < 0)
    return;
  if (b)
    plc_lower_items(c, &it->list, plc_env_new(c->L->ev, env), 0);
  else if (it->b && it->b->kind == PLC_AST_IF)
    plc_lower_if(c, it->b, env);
  else if (it->b)
    plc_lower_items(c, &it->b->list, plc_env_new(c->L->ev, env), 0);
}

/* A template's assertion: a configuration the template does not implement
 * is refused at the template, with a note at the train that asked for it
 * (a search counts it as the candidate's skip reason). */
static void plc_lower_assert(plc_lctx *c, const plc_ast *it, plc_env *env)
{
  plc_eval *ev = c->L->ev;
  if (plc_lower_bool(c, it->a, env, "the assertion") != 0)
    return;
  const char *fw = ev->ctx_framework && ev->ctx_framework->name ? ev->ctx_framework->name : "?";
  plc_error(c->L->diag, &it->loc, "template '%s' of framework '%s' does not support this run%s%s",
            ev->ctx_template ? ev->ctx_template : "?", fw, it->b ? ": " : "",
            it->b ? it->b->name : "");
  if (ev->ctx_train && ev->ctx_train->node)
    plc_note(c->L->diag, &ev->ctx_train->node->loc, "train '%s' uses framework '%s'",
             ev->ctx_train->name ? ev->ctx_train->name : "?", fw);
}

static plc_value *plc_lower_int_value(plc_lower *L, long n);

static void plc_lower_for(plc_lctx *c, const plc_ast *it, plc_env *env)
{
  long from, to;
  plc_lower *L = c->L;
  if (!plc_lower_int(L, plc_eval_expr(L->ev, it->a, env), -PLC_LOWER_MAX_LOOP,
                     PLC_LOWER_MAX_LOOP, it->a, "a loop bound", &from) ||
      !plc_lower_int(L, plc_eval_expr(L->ev, it->b, env), -PLC_LOWER_MAX_LOOP,
                     PLC_LOWER_MAX_LOOP, it->b, "a loop bound", &to))
    return;
  if (to - from > PLC_LOWER_MAX_LOOP) {
    plc_error(L->diag, &it->loc, "the loop runs %ld times, more than %d", to - from,
              PLC_LOWER_MAX_LOOP);
    return;
  }
  for (long i = from; i < to && !PLC_LOWER_FAILED(L); i++) {
    if (!plc_eval_step(L->ev, it, PLC_EVAL_LOOP_STEPS)) /* empty or not, it costs */
      return;
    plc_env *body = plc_env_new(L->ev, env);
    plc_env_bind(L->ev, body, it->name, plc_lower_int_value(L, i));
    plc_lower_items(c, &it->list, body, 0);
  }
}

static const char *const plc_phase_section[] = {"forward", "recompute", "backward", "step"};

/* Add q to part k (weights, grads, optimizer, activations, buffers) of m;
 * buffers keep the largest. */
static mpq_ptr plc_lower_mem_field(const plc_ir_mem *m, int k)
{
  mpq_ptr f[] = {m->weights, m->grads, m->optimizer, m->activations, m->buffers};
  return f[k];
}

static void plc_lower_mem_add(plc_ir_mem *m, int k, mpq_srcptr q)
{
  mpq_ptr to = plc_lower_mem_field(m, k);
  if (k < 4)
    plc_q_rat_add(to, to, q);
  else if (mpq_cmp(q, to) > 0)
    mpq_set(to, q);
}

/* Which part of a memory entry named name: weights, grads, optimizer,
 * activations, else buffers (plc_lower_mem_field's order). */
static int plc_lower_mem_kind(const char *name)
{
  /* one comparison, by the first letter (the five differ in it) */
  static const char *const part[] = {"weights", "grads", "optimizer", "activations"};
  int k = name[0] == 'w' ? 0 : name[0] == 'g' ? 1 : name[0] == 'o' ? 2 : name[0] == 'a' ? 3 : 4;
  return k < 4 && !strcmp(name, part[k]) ? k : 4;
}

/* Entry x of a `memory` section, evaluated in env and added to its chunk's
 * totals (and to c->mem_rec, the instance's own figures); 0 after an error
 * or an erroneous value (the section's later entries are then left). */
static int plc_lower_mem_item(plc_lctx *c, const plc_ast *x, plc_env *env)
{
  plc_lower *L = c->L;
  char what[64]; /* "memory entry 'NAME'", cut at 63 characters as snprintf would */
  static const char pre[] = "memory entry '";
  size_t w = sizeof pre - 1;
  memcpy(what, pre, w);
  for (const char *p = x->name; *p && w < sizeof what - 1; p++)
    what[w++] = *p;
  if (w < sizeof what - 1)
    what[w++] = '\'';
  what[w] = '\0';
  mpq_srcptr q = plc_lower_num_read(L, plc_eval_expr(L->ev, x->a, env), PLC_BYTES, x->a, what);
  if (!q)
    return 0;
  if (mpq_sgn(q) < 0) {
    plc_error(L->diag, &x->a->loc, "%s is negative", what);
    return 0;
  }
  int k = plc_lower_mem_kind(x->name);
  plc_lower_mem_add(c->mem, k, q);
  if (c->mem_rec) { /* the instance's own figures, added up alike */
    plc_ir_mem r = {c->mem_rec[0], c->mem_rec[1], c->mem_rec[2], c->mem_rec[3],
                    c->mem_rec[4]};
    plc_lower_mem_add(&r, k, q);
  }
  return 1;
}

/* A template instance's `memory` section, added to its chunk's totals
 * (buffers: the largest).  Read once per instance, in its forward (or the
 * step template's) lowering. */
static void plc_lower_memory(plc_lctx *c, const plc_ast *sec, plc_env *env)
{
  plc_lower *L = c->L;
  L->run->memory_declared = 1;
  if (L->xlog)
    plc_xlog_memory(L);
  for (const plc_ast *x = sec->list.head; x && !PLC_LOWER_FAILED(L); x = x->next)
    if (x->kind == PLC_AST_SET && !plc_lower_mem_item(c, x, env))
      return;
}

/* Walk a template body for the current phase: at the top level, ops outside
 * sections are forward ops and a section is walked only in its own phase. */
static void plc_lower_items(plc_lctx *c, const plc_ast_list *items, plc_env *env, int top)
{
  for (const plc_ast *it = items->head; it && !PLC_LOWER_FAILED(c->L); it = it->next) {
    int here = !top || c->phase == PLC_PH_FWD || c->phase == PLC_PH_STEP;
    switch (it->kind) {
    case PLC_AST_LET:
      plc_env_define(c->L->ev, env, it->name, it, env);
      break;
    case PLC_AST_OP:
      if (here)
        plc_lower_op(c, it, env);
      break;
    case PLC_AST_IF:
      if (here)
        plc_lower_if(c, it, env);
      break;
    case PLC_AST_FOR:
      if (here)
        plc_lower_for(c, it, env);
      break;
    case PLC_AST_ASSERT:
      if (here)
        plc_lower_assert(c, it, env);
      break;
    case PLC_AST_SECTION:
      if (!strcmp(it->name, "memory")) {
        if (top && c->mem)
          plc_lower_memory(c, it, env);
      } else if (!strcmp(it->name, plc_phase_section[c->phase]))
        plc_lower_items(c, &it->list, plc_env_new(c->L->ev, env), 0);
      break;
    default:
      break;
    }
  }
}

/* Does a template body have a section for this phase? */
static int plc_lower_has_section(const plc_ast_list *items, const char *name)
{
  for (const plc_ast *it = items->head; it; it = it->next)
    if (it->kind == PLC_AST_SECTION && !strcmp(it->name, name))
      return 1;
  return 0;
}

/* ---- templates and their context ---------------------------------------------- */

typedef struct plc_tmpl {
  const plc_ast *decl;  /* the template's items are decl->list */
  plc_env *env;         /* where it was defined */
  int recomp, bwd;      /* has it a recompute section, a backward one (asked per layer) */
} plc_tmpl;

/* The framework's template for a layer kind (following `template a = b`),
 * looked up once per kind and run. */
static int plc_lower_lookup_template(plc_lower *L, const char *kind, plc_tmpl *t);

static int plc_lower_find_template(plc_lower *L, const char *kind, plc_tmpl *t)
{
  for (int i = 0; i < L->nfound; i++)
    if (L->found[i].kind == kind || !strcmp(L->found[i].kind, kind)) {
      t->decl = L->found[i].decl;
      t->env = L->found[i].env;
      t->recomp = L->found[i].recomp;
      t->bwd = L->found[i].bwd;
      return 1;
    }
  if (!plc_lower_lookup_template(L, kind, t))
    return 0;
  t->recomp = plc_lower_has_section(&t->decl->list, "recompute");
  t->bwd = plc_lower_has_section(&t->decl->list, "backward");
  if (L->nfound < (int)(sizeof L->found / sizeof L->found[0]))
    L->found[L->nfound++] = (struct plc_found){kind, t->decl, t->env, t->recomp, t->bwd};
  return 1;
}

static int plc_lower_lookup_template(plc_lower *L, const char *kind, plc_tmpl *t)
{
  for (plc_obj *fw = L->framework; fw; fw = fw->base) {
    plc_binding *b = plc_env_find_local(fw->env, kind);
    if (!b || !b->def || b->def->kind != PLC_AST_DECL || b->def->op != PLC_DECL_TEMPLATE)
      continue;
    t->decl = b->def;
    t->env = b->def_env;
    while (t->decl->a) { /* derived: use the base template's body */
      plc_value *base = plc_eval_expr(L->ev, t->decl->a, t->env);
      if (base->tag != PLC_V_OBJ || base->obj->kind != PLC_DECL_TEMPLATE)
        return 0;
      t->decl = base->obj->node;
      t->env = base->obj->env->parent;
    }
    return 1;
  }
  return 0;
}

static plc_value *plc_lower_bool_value(plc_lower *L, int b)
{
  plc_value *v = plc_value_new(L->ev, PLC_V_BOOL);
  v->b = b;
  return v;
}

/* plc_value_num of n, made in place */
static plc_value *plc_lower_int_value(plc_lower *L, long n)
{
  plc_value *v = plc_value_new(L->ev, PLC_V_NUM);
  v->q = plc_arena_mpq(L->ev->arena);
  mpq_set_si(v->q, n, 1);
  v->dim = plc_dim_none();
  return v;
}

/* The fields of what a template instance sees as `layer`, in the order
 * plc_lower_layer_value binds them (index, kind, stage, first, last,
 * model_first, model_last; f[1] unused, kind apart): the instance memo and
 * memory first compare these, and the value is made only for an instance
 * that is lowered or looked up. */
typedef struct plc_lfields {
  int f[7];
  const char *kind;
} plc_lfields;

static plc_lfields plc_lower_lfields(const plc_lower *L, int index, const char *kind, int stage,
                                     int first, int last)
{
  return (plc_lfields){{index, 0, stage, first, last, index == 0,
                        index >= 0 && index == L->nlayers - 1}, kind};
}

/* Bind name k (plc_lower_name). */
static void plc_lower_bind(plc_lower *L, plc_env *env, int k, plc_value *v)
{
  plc_env_bind(L->ev, env, plc_lower_name(L, k), v);
}

/* Do the fields of `reads` (bit k: binding k) have the same values in a
 * and b? */
static int plc_lfields_same(unsigned reads, const plc_lfields *a, const plc_lfields *b)
{
  for (int k = 0; k < 7; k++)
    if ((reads & (1u << k)) &&
        (k == 1 ? a->kind != b->kind && strcmp(a->kind, b->kind) : a->f[k] != b->f[k]))
      return 0;
  return 1;
}

static plc_value *plc_lower_layer_value(plc_lower *L, int index, const char *kind, int stage,
                                        int first, int last)
{
  plc_value *v = plc_value_new(L->ev, PLC_V_OBJ);
  v->obj = plc_arena_alloc(L->ar, sizeof *v->obj);
  v->obj->kind = PLC_SCHEMA_LAYER;
  v->obj->name = "layer";
  v->obj->env = plc_env_new(L->ev, NULL);
  plc_value *k = plc_value_new(L->ev, PLC_V_STR);
  k->s = kind;
  /* bound in this order: binding k is bit k of the memo's reads (and of
   * plc_mfirst_same's); the names once per run, each layer's a copy */
  if (!L->layer_env) {
    L->layer_env = plc_env_new(L->ev, NULL);
    for (int i = PLC_LN_INDEX; i <= PLC_LN_MODEL_LAST; i++)
      plc_lower_bind(L, L->layer_env, i, NULL);
  }
  plc_env *e = v->obj->env;
  plc_env_copy(L->ev, e, L->layer_env);
  e->b[PLC_LN_INDEX].val = plc_lower_int_value(L, index);
  e->b[PLC_LN_KIND].val = k;
  e->b[PLC_LN_STAGE].val = plc_lower_int_value(L, stage);
  e->b[PLC_LN_FIRST].val = plc_lower_bool_value(L, first);
  e->b[PLC_LN_LAST].val = plc_lower_bool_value(L, last);
  /* the model's ends, wherever the schedule places them: a template that
   * asks these instead of `first && stage == 0` reads a stage's other
   * first and last layers alike (one cache entry for all of them) */
  e->b[PLC_LN_MODEL_FIRST].val = plc_lower_bool_value(L, index == 0);
  e->b[PLC_LN_MODEL_LAST].val = plc_lower_bool_value(L, index >= 0 && index == L->nlayers - 1);
  return v;
}

/* Is option b's name in the run's list of options yet? */
static int plc_lower_opt_listed(const plc_lower *L, const plc_binding *b)
{
  for (int k = 0; k < L->nopts; k++)
    if (L->opts[k].b->hash == b->hash &&
        (L->opts[k].b->name == b->name || !strcmp(L->opts[k].b->name, b->name)))
      return 1;
  return 0;
}

/* Bind option k of the run's list: the train's setting, else the option's
 * default; a value once found is kept for the run (an error is looked up
 * again, as the evaluator counts each read of one). */
static void plc_lower_bind_opt(plc_lower *L, plc_env *into, int k)
{
  plc_binding *b = L->opts[k].b;
  plc_value *v = L->opts[k].v;
  for (plc_obj *t = L->train; t && !v; t = t->base) {
    plc_binding *set = plc_env_find_local(t->env, b->name);
    if (set)
      v = plc_eval_binding(L->ev, set, &set->def->loc);
  }
  if (!v)
    v = plc_eval_binding(L->ev, b, &b->def->loc);
  if (v->tag != PLC_V_ERR)
    L->opts[k].v = v;
  plc_env_bind(L->ev, into, b->name, v);
}

/* Framework options, each name once (a derived framework's first) and not
 * where into has it already.  The first call (run's) lists them for the
 * later ones (every instance's context). */
static void plc_lower_bind_options(plc_lower *L, plc_env *into)
{
  if (L->opts) {
    for (int k = 0; k < L->nopts; k++)
      if (!plc_env_find_local(into, L->opts[k].b->name))
        plc_lower_bind_opt(L, into, k);
    return;
  }
  int n = 0;
  for (plc_obj *fw = L->framework; fw; fw = fw->base)
    n += (int)fw->env->n;
  L->opts = plc_arena_alloc(L->ar, (size_t)(n + 1) * sizeof *L->opts);
  for (plc_obj *fw = L->framework; fw; fw = fw->base)
    for (size_t i = 0; i < fw->env->n; i++) {
      plc_binding *b = &fw->env->b[i];
      if (!b->def || b->def->kind != PLC_AST_OPTION)
        continue;
      if (plc_env_find_local(into, b->name)) { /* into's own, or listed before */
        if (!plc_lower_opt_listed(L, b))
          L->opts[L->nopts++] = (struct plc_opt){b, NULL};
        continue;
      }
      L->opts[L->nopts] = (struct plc_opt){b, NULL};
      plc_lower_bind_opt(L, into, L->nopts++);
    }
}

/* What templates see as `run`: the train, with its sizes resolved, the
 * framework's options and the derived figures. */
static void plc_lower_run_value(plc_lower *L)
{
  plc_ir_run *r = L->run;
  plc_obj *o = plc_arena_alloc(L->ar, sizeof *o);
  o->kind = PLC_DECL_TRAIN;
  o->name = r->name;
  o->node = L->train->node;
  o->base = L->train;
  o->env = plc_env_new(L->ev, NULL);
  for (int d = 0; d < PLC_PD_COUNT; d++)
    plc_env_bind(L->ev, o->env, plc_pdim_name(d), plc_lower_int_value(L, r->size[d]));
  plc_lower_bind(L, o->env, PLC_LN_VPP, plc_lower_int_value(L, r->vpp));
  plc_lower_bind(L, o->env, PLC_LN_TOKENS, plc_lower_int_value(L, (long)r->micro_batch * r->seq));
  plc_lower_bind(L, o->env, PLC_LN_MU, plc_lower_int_value(L, r->mu));
  plc_lower_bind(L, o->env, PLC_LN_WORLD, plc_lower_int_value(L, r->world));
  plc_value *rc = plc_value_new(L->ev, PLC_V_STR), *sc = plc_value_new(L->ev, PLC_V_STR);
  static const char *const rcs[] = {"none", "selective", "full"};
  rc->s = rcs[r->recompute];
  sc->s = r->schedule;
  plc_lower_bind(L, o->env, PLC_LN_RECOMPUTE, rc);
  plc_lower_bind(L, o->env, PLC_LN_SCHEDULE, sc);
  plc_lower_bind_options(L, o->env);
  L->run_val = plc_value_new(L->ev, PLC_V_OBJ);
  L->run_val->obj = o;
}

/* What a template instance's names see.  ops: its op names too, which
 * only its ops' `after` lists name: a context for its memory sections or
 * for checking an option (the lowering cache) goes without them, as sema
 * has made sure no number reads an op (a search makes thousands). */
/* The run's first context, kept for the others to copy (its names and the
 * options' values: the same in every one), unless an option is an error
 * (looked up again each time, as the evaluator counts each read of one). */
static void plc_lower_context_keep(plc_lower *L, const plc_env *env)
{
  if (L->ctx_tried)
    return;
  L->ctx_tried = 1;
  for (size_t i = 5; i < env->n; i++)
    if (env->b[i].val->tag == PLC_V_ERR)
      return;
  L->ctx_env = plc_env_new(L->ev, NULL);
  plc_env_copy(L->ev, L->ctx_env, env);
  for (size_t i = 0; i < env->n; i++)
    L->ctx_env->b[i].val = env->b[i].val;
}

static plc_env *plc_lower_context(plc_lower *L, const plc_tmpl *t, plc_value *layer, int ops)
{
  plc_env *env = plc_env_new(L->ev, t->env);
  plc_value *m = plc_value_new(L->ev, PLC_V_OBJ), *dev = plc_value_new(L->ev, PLC_V_OBJ);
  m->obj = L->model;
  dev->obj = L->device;
  plc_value *prev = plc_value_new(L->ev, PLC_V_OP);
  prev->prev = 1;
  prev->s = "prev";
  if (L->ctx_env) { /* the first context's names, and its options' values */
    plc_env_copy(L->ev, env, L->ctx_env);
    for (size_t i = 0; i < env->n; i++)
      env->b[i].val = L->ctx_env->b[i].val;
    plc_value *own[] = {m, L->run_val, layer, dev, prev};
    for (int i = 0; i < 5; i++)
      env->b[i].val = own[i];
  } else {
    plc_lower_bind(L, env, PLC_LN_MODEL, m);
    plc_lower_bind(L, env, PLC_LN_RUN, L->run_val);
    plc_lower_bind(L, env, PLC_LN_LAYER, layer);
    plc_lower_bind(L, env, PLC_LN_DEVICE, dev);
    plc_lower_bind(L, env, PLC_LN_PREV, prev);
    plc_lower_bind_options(L, env); /* options by bare name see the run's values too */
    plc_lower_context_keep(L, env);
  }
  if (ops)
    plc_eval_define_ops(L->ev, env, &t->decl->list);
  return env;
}

/* ---- mirrored backward and copied recompute ------------------------------------- */

/* Ops of the forward list that wait for op x (users), built once per stage
 * in time linear in ops and edges: the users of x are v[at[x] .. at[x+1]). */
typedef struct plc_users {
  int *at, *v;
} plc_users;

static plc_users plc_lower_users(const plc_ir_list *l)
{
  plc_users u = {plc_xcalloc((size_t)l->n + 2, sizeof *u.at), NULL};
  long edges = 0;
  for (int i = 0; i < l->n; i++)
    for (int d = 0; d < l->ops[i].ndeps; d++, edges++)
      u.at[l->ops[i].deps[d] + 2]++;
  for (int x = 0; x < l->n; x++)
    u.at[x + 2] += u.at[x + 1];
  u.v = plc_xmalloc(((size_t)edges + 1) * sizeof *u.v);
  for (int i = 0; i < l->n; i++) /* at[x+1] is the fill point of x */
    for (int d = 0; d < l->ops[i].ndeps; d++)
      u.v[u.at[l->ops[i].deps[d] + 1]++] = i;
  return u;
}

static void plc_lower_users_free(plc_users *u, int n)
{
  (void)n;
  free(u->at);
  free(u->v);
}

/* The users of a stage's forward ops, made when a mirror first needs
 * them (most templates have a backward section: no mirror). */
static const plc_users *plc_lower_users_of(plc_users *u, const plc_ir_list *fwd)
{
  if (!u->at)
    *u = plc_lower_users(fwd);
  return u;
}

/* A copy of op f with rationals of its own (the sensitivity analysis
 * changes op times in place). */
static plc_ir_op plc_lower_dup(plc_lower *L, const plc_ir_op *f)
{
  plc_ir_op op = *f;
  op.replica = 0;
  plc_lower_op_init(L, &op);
  mpq_set(op.time, f->time);
  mpq_set(op.flops, f->flops);
  mpq_set(op.size, f->size);
  return op;
}

/* A copy of op f as a memo replays it: its work and size shared, since
 * nothing changes them once the op is made (a mirror or a recompute copy
 * of it takes rationals of its own); its time too when no sensitivity
 * analysis will change times in place (a search's candidates). */
static plc_ir_op plc_lower_replica(plc_lower *L, const plc_ir_op *f)
{
  plc_ir_op op = *f;
  if (!L->ev->lower_share_times) {
    op.time = plc_arena_mpq(L->ar);
    plc_q_rat_set(op.time, f->time); /* mpq_set, in place when small */
  }
  return op;
}

static plc_ir_op plc_lower_copy(plc_lower *L, const plc_ir_op *f, plc_phase phase)
{
  plc_ir_op op = plc_lower_dup(L, f);
  op.phase = phase;
  op.once = 0;
  return op;
}

static void plc_lower_set_deps(plc_lower *L, plc_ir_op *op, plc_deps *d)
{
  op->ndeps = d->n;
  op->deps = plc_arena_alloc(L->ar, (size_t)(d->n ? d->n : 1) * sizeof *op->deps);
  if (d->n)
    memcpy(op->deps, d->v, (size_t)d->n * sizeof *op->deps);
  free(d->v);
  *d = plc_deps_new(L);
}

/* Forward ops [lo, hi) of a layer, re-run before its backward (full
 * recompute): same order, dependencies inside the layer kept. */
static void plc_lower_recompute_copy(plc_lctx *c, const plc_ir_list *fwd, int lo, int hi,
                                     int *map)
{
  for (int i = lo; i < hi; i++) {
    if (fwd->ops[i].once) /* a once-per-step op is not recomputed */
      continue;
    plc_ir_op op = plc_lower_copy(c->L, &fwd->ops[i], PLC_PH_RECOMP);
    op.useful = 0;
    plc_deps d = plc_deps_new(c->L);
    for (int k = 0; k < fwd->ops[i].ndeps; k++)
      if (fwd->ops[i].deps[k] >= lo && map[fwd->ops[i].deps[k]] >= 0)
        plc_deps_add(&d, map[fwd->ops[i].deps[k]]);
    plc_lower_set_deps(c->L, &op, &d);
    map[i] = plc_ir_push(c->L->ar, c->list, &op);
    plc_inst_add(c->L, c->cur, op.name, map[i], NULL, 0);
  }
}

static const plc_opk plc_mirror_kind[PLC_OPK_COUNT] = {
  PLC_OPK_COMPUTE, PLC_OPK_ALL_REDUCE, PLC_OPK_REDUCE_SCATTER, PLC_OPK_ALL_GATHER,
  PLC_OPK_ALL_TO_ALL, PLC_OPK_P2P, PLC_OPK_BROADCAST,
};

/* The default backward of a layer: its forward ops [lo, hi) in reverse, each
 * waiting for the mirrors of the ops that waited for it in forward. */
static void plc_lower_mirror(plc_lctx *c, const plc_ir_list *fwd, int lo, int hi,
                             const plc_users *users, int *map)
{
  for (int i = hi - 1; i >= lo; i--) {
    if (fwd->ops[i].once) /* nor mirrored */
      continue;
    plc_ir_op op = plc_lower_copy(c->L, &fwd->ops[i], PLC_PH_BWD);
    op.kind = plc_mirror_kind[op.kind];
    /* a gather mirrored into a reduce-scatter (and back) runs at that
     * primitive's bandwidth, unless its time was pinned */
    if (op.kind != fwd->ops[i].kind && !op.pinned && !plc_lower_coll_time(c, op.node, &op))
      return;
    if (op.kind == PLC_OPK_COMPUTE) { /* input and weight gradients: twice the work */
      mpq_t two;
      mpq_init(two);
      mpq_set_ui(two, 2, 1);
      plc_q_rat_mul(op.time, op.time, two);
      plc_q_rat_mul(op.flops, op.flops, two);
      mpq_clear(two);
    }
    plc_deps d = plc_deps_new(c->L);
    for (int k = users->at[i]; k < users->at[i + 1]; k++)
      if (map[users->v[k]] >= 0)
        plc_deps_add(&d, map[users->v[k]]);
    plc_lower_set_deps(c->L, &op, &d);
    map[i] = plc_ir_push(c->L->ar, c->list, &op);
    plc_inst_add(c->L, c->cur, op.name, map[i], NULL, 0);
  }
}

/* ---- instance memo ------------------------------------------------------------------ */

/* Most layers of a large model lower to the same ops: a template instance
 * depends on the run, the model, the layer fields it reads (index, stage,
 * first, last, kind) and, through `prev.`, on the shape of the instance
 * before it.  So the first instance of each such key is recorded (its ops,
 * names and memory figures, with the layer fields the evaluator saw it
 * read) and later ones are copies of it: the same ops with the layer index
 * and the dependencies moved.  An instance whose dependencies reach beyond
 * itself and the instance before it is not recorded.  Unit 0 is a layer's
 * forward instance; unit 1 its recompute (instance or copy) and backward
 * instance, keyed also by the forward's shape.  PLC_LOWER_NO_MEMO=1 lowers
 * every instance (tests/lower-memo.sh compares the two). */
typedef struct plc_memo {
  const plc_ast *tmpl;
  int unit, prev_shape, fwd_shape;
  int cls;                 /* its shape: entries of one template, unit, forward
                              shape and layer fields read are the same ops
                              whatever came before them (that only moves
                              dependencies), so copies of either share it */
  unsigned reads;          /* the layer fields read, by binding number */
  plc_lfields layer;       /* the recorded instance's layer */
  const plc_ir_list *list; /* its ops are list->ops[lo, hi) */
  int lo, hi, plo, phi;    /* and its previous instance's [plo, phi) */
  long nd;                 /* its ops' dependencies, in all */
  plc_inst inst;           /* its names */
  int copies;              /* recompute copies at its start (unit 1), or 0 */
  mpq_ptr mem[5];          /* its memory section's figures (unit 0) */
  int xid;                 /* its cross-candidate cache entry + 1, or 0 */
  /* copies whose figures are not added yet (a stage's forward adds them
   * at its end, n copies as n times the figures): how many, and where */
  long pend;
  plc_ir_mem *pend_to;
} plc_memo;

/* Add entry m's pending copies' memory figures (buffers: the largest). */
static void plc_memo_flush(plc_memo *m)
{
  if (!m->pend)
    return;
  mpq_t x;
  mpq_init(x);
  for (int k = 0; k < 5; k++) {
    if (!m->mem[k])
      continue;
    if (k < 4 && m->pend > 1) {
      mpq_set_si(x, m->pend, 1);
      plc_q_rat_mul(x, x, m->mem[k]);
      plc_lower_mem_add(m->pend_to, k, x);
    } else {
      plc_lower_mem_add(m->pend_to, k, m->mem[k]);
    }
  }
  mpq_clear(x);
  m->pend = 0;
}

/* The entry an instance can copy (prev_shape >= 0), or the first of its
 * shape (prev_shape < -1: any previous instance); -1 when there is none. */
static int plc_memo_find(const plc_lower *L, const plc_ast *tmpl, int unit, int prev_shape,
                         int fwd_shape, const plc_lfields *layer)
{
  if (L->no_memo)
    return -1;
  for (int i = 0; i < L->nmemo; i++) {
    const plc_memo *m = &L->memo[i];
    if (m->tmpl == tmpl && m->unit == unit && m->fwd_shape == fwd_shape &&
        (prev_shape < -1 || m->prev_shape == prev_shape) &&
        plc_lfields_same(m->reads, &m->layer, layer))
      return i;
  }
  return -1;
}

/* Where op index d of the recorded instance lands for a copy at nlo whose
 * previous instance starts at nplo; -1 when outside both. */
static int plc_memo_move(const plc_memo *m, int d, int nlo, int nplo)
{
  if (d >= m->lo && d < m->hi)
    return d - m->lo + nlo;
  if (d >= m->plo && d < m->phi && nplo >= 0)
    return d - m->plo + nplo;
  return -1;
}

/* Record the instance cur just lowered into c->list[lo, hi), unless a
 * dependency leaves it and its previous instance; sets cur->shape. */
static void plc_memo_record(plc_lctx *c, plc_inst *cur, const plc_ast *tmpl, int unit,
                            int fwd_shape, const plc_lfields *layer, unsigned reads,
                            mpq_ptr *mem, int copies)
{
  plc_lower *L = c->L;
  const plc_inst *prev = c->prev;
  int plo = prev && prev->shape ? prev->lo : -1, phi = prev && prev->shape ? prev->hi : -1;
  long nd = 0;
  for (int i = cur->lo; i < cur->hi; i++)
    for (int k = 0; k < c->list->ops[i].ndeps; k++, nd++) {
      int d = c->list->ops[i].deps[k];
      if (!(d >= cur->lo && d < cur->hi) && !(d >= plo && d < phi))
        return;
    }
  if (L->nmemo == L->capmemo) {
    L->capmemo = L->capmemo ? 2 * L->capmemo : 8;
    L->memo = plc_xrealloc(L->memo, (size_t)L->capmemo * sizeof *L->memo);
  }
  int same = plc_memo_find(L, tmpl, unit, -2, fwd_shape, layer);
  plc_memo *m = &L->memo[L->nmemo++];
  *m = (plc_memo){.tmpl = tmpl, .unit = unit, .prev_shape = prev ? prev->shape : -1,
                  .cls = same >= 0 ? L->memo[same].cls : L->nmemo - 1,
                  .fwd_shape = fwd_shape, .reads = reads, .layer = *layer, .list = c->list,
                  .lo = cur->lo, .hi = cur->hi, .plo = plo, .phi = phi, .nd = nd, .inst = *cur,
                  .copies = copies};
  for (int k = 0; k < 5; k++)
    m->mem[k] = mem ? mem[k] : NULL;
  cur->shape = m->cls + 1;
}

/* Copy entry e as the instance cur for layer, at the end of c->list. */
static int plc_memo_replay(plc_lctx *c, plc_inst *cur, int e, int layer)
{
  plc_lower *L = c->L;
  const plc_memo *m = &L->memo[e];
  int n = m->hi - m->lo, nlo = c->list->n, nplo = c->prev ? c->prev->lo : -1;
  if ((L->nops += n) > L->cap) {
    plc_error(L->diag, &m->tmpl->loc, "the plan lowers to more than %d ops; refusing to go on",
              PLC_LOWER_MAX_OPS);
    L->stop = 1;
    return 0;
  }
  /* copied in place in one block, their dependencies in another: a search
   * replays thousands of instances per candidate */
  plc_ir_reserve(L->ar, c->list, n);
  const plc_ir_op *from = m->list->ops + m->lo;
  plc_ir_op *to = c->list->ops + nlo;
  int *deps = plc_arena_alloc_raw(L->ar, (size_t)(m->nd ? m->nd : 1) * sizeof *deps);
  memcpy(to, from, (size_t)n * sizeof *to);
  c->list->n += n;
  int share = L->ev->lower_share_times;
  for (int i = 0; i < n; i++) {
    plc_ir_op *op = &to[i];
    op->replica = share ? n - i : 0; /* from[i], before it, has its time (so on to the end) */
    op->layer = layer;
    op->chunk = c->chunk; /* as plc_lower_set_chunk would set it */
    op->deps = deps;
    for (int k = 0; k < op->ndeps; k++)
      *deps++ = plc_memo_move(m, from[i].deps[k], nlo, nplo);
  }
  for (int i = 0; i < n && !share; i++) { /* plc_lower_replica: times of their own */
    to[i].time = plc_arena_mpq(L->ar);
    plc_q_rat_set(to[i].time, from[i].time); /* mpq_set, in place when small */
  }
  cur->lazy = e + 1; /* its names: not made (plc_deps_lookup_in) */
  cur->lazy_lo = nlo;
  cur->lazy_plo = nplo;
  if (c->mem && m->mem[0]) { /* counted: added at the stage's forward's end */
    plc_memo *w = &L->memo[e];
    if (w->pend_to != c->mem)
      plc_memo_flush(w);
    w->pend_to = c->mem;
    w->pend++;
  }
  cur->shape = m->cls + 1;
  cur->xid = m->xid;
  cur->lo = nlo;
  cur->hi = c->list->n;
  return 1;
}

/* Watch the layer fields an instance reads; returns the outer watch. */
static const plc_obj *plc_memo_watch(plc_lower *L, const plc_value *layer, unsigned *outer)
{
  const plc_obj *was = L->ev->watch;
  *outer = L->ev->watch_reads;
  L->ev->watch = layer->obj;
  L->ev->watch_reads = 0;
  return was;
}

static unsigned plc_memo_unwatch(plc_lower *L, const plc_obj *was, unsigned outer)
{
  unsigned reads = L->ev->watch_reads;
  L->ev->watch = was;
  L->ev->watch_reads = outer;
  return reads;
}

/* ---- cross-candidate cache ------------------------------------------------------------ */

/* A search lowers each candidate in a compilation of its own, but from the
 * same syntax trees: a template instance lowers to the same ops whenever
 * everything it read has the same value.  So while an instance is lowered
 * its reads are logged, in the order first made: the fields of run, model,
 * layer and device, the names of its context (the options), and what
 * lowering takes from the run in C (whether a collective's group has more
 * than one rank, the peak, whether a primitive has a bandwidth), and what
 * each `prev.name` it waits for gave (the ops of the previous instance, as
 * distances back from its end); the stream names it registers too.  A
 * later compilation of the same thread finds an entry by template, unit,
 * recompute mode and the entry of its forward instance (so forward names
 * resolve alike), then compares the reads in order and stops
 * at the first that differs: up to there the reads are the ones lowering
 * itself would make, in its order, so a lookup reports no error that
 * lowering would not.  A hit replays the ops (collective times computed
 * again on this run's links; its names, as a memo copy's, not made: found
 * where they come from when looked up, plc_deps_lookup_in) and is
 * recorded in the instance memo as if lowered.  Values are
 * copied into the cache's own storage, and names too unless interned (the
 * pool lives as long as the process, ast.h).  Not
 * cached: an instance that warned or read an error, read a value that is
 * not a known number, boolean or string, or whose dependencies leave it and
 * its previous instance.  An entry whose ops took from its previous
 * instance only what `after` lists named (most) is prev-free: its reads
 * of prev are dropped and its replays find those dependencies again in
 * the previous instance at hand ("dependency scripts" below), so a
 * stage's first instance (none before it) and the later ones share one.
 * PLC_LOWER_NO_XCACHE=1 turns the cache off (tests/search-xcache.sh
 * compares). */

typedef struct plc_xval {
  plc_vtag tag;   /* NUM, BOOL or STR */
  mpq_t q;
  plc_dim dim;
  int b;
  const char *s;
} plc_xval;

typedef struct plc_xread {
  int slot;                /* PLC_XR_... */
  int d;                   /* SIZE, BW: the dimension */
  long n;                  /* SIZE: the group size; BW: the primitive */
  const char *name;        /* a field or option name (in the cache: plc_xcache_str) */
  unsigned nh;             /* its hash (plc_xread_name_hash: the same for a copy) */
  int interned;            /* the name is interned (ast.h): the cache keeps it as it is */
  const plc_value *v;      /* while logging: its value */
  mpq_srcptr q;            /* while logging: PEAK, BW */
  const plc_ast *node;     /* BW: where a missing bandwidth is reported */
  plc_loc at;              /* where it was read; at_train: the train's location */
  int at_train;
  int rid;                 /* in the cache, a read of run, model or device: its number
                              among the distinct such reads (plc_xrid); else -1 */
  int dry;                 /* only ever read in a branch not taken (a number, boolean or
                              string): its type (and dimension) count, not its value */
  plc_xval x;              /* in the cache: the value */
} plc_xread;

typedef struct plc_xname {
  const char *name;
  int idx;                 /* relative to the instance, or -1 */
  int *deps, ndeps;        /* encoded as plc_xcache_enc */
} plc_xname;

typedef struct plc_xentry {
  const plc_ast *tmpl;
  int unit, fwd;
  int recompute;           /* unit 1 (its C code reads it): the run's mode; else -1 */
  const plc_ast *model;    /* the model's declaration when it is a top-level one */
  plc_xread *reads;
  int nreads;
  plc_ir_op *ops;          /* own rationals, names and deps (encoded) */
  int *op_sidx;            /* each op's stream: its number in streams, or -1 and */
  const char **op_stream;  /* its name here (one of another instance, a recompute copy's) */
  int nops;
  const char **streams;    /* registered in this order */
  int nstreams;
  plc_xname *names;
  int nnames;
  int has_mem, memory_declared, copies;
  long counted;            /* unit 8 (the estimate's count): the ops it counted */
  mpq_t mem[5];
  unsigned layer_reads;    /* the instance memo's bits */
  int next;                /* the next entry of the same key, or -1 */
  /* prev-free (plc_xcache_keep_scripts): replayed after whatever previous
   * instance, its reads of prev dropped; the dependencies of op i that
   * named prev are its script scr[i] (nscr[i] tokens: t >= 0 op t of the
   * instance, t < 0 the lookup of prev.pnames[-t - 1]), NULL for the rest */
  int prev_free;
  int **scr, *nscr;
  const char **pnames;
} plc_xentry;

struct plc_lcache {
  plc_xentry *e;
  int n, cap;
  plc_arena *ar;       /* the entries' arrays, strings and op rationals (freed at once) */
  int *index, nindex;  /* open addressing: an entry of each key + 1, by key */
  /* the distinct reads of run, model and device (their first copies): a
   * run checks each once (plc_lower.xheld) whatever entries hold it */
  const plc_xread **rids;
  int nrids, caprids;
  int *rindex, nrindex; /* open addressing: rid + 1 */
  long hits, misses;  /* PLC_LOWER_XCACHE_STATS=1 prints them (tests) */
  long prev_free;     /* hits of prev-free entries (plc_lcache_counts) */
  long unfit;         /* ... and the runs stopped before their ops (memory first) */
  const char *whose;  /* ... on a line saying whose cache it is */
  const char *names[30]; /* lowering's bound names, interned (plc_lower_name) */
  int no_memo, no_xcache; /* PLC_LOWER_NO_MEMO, PLC_LOWER_NO_XCACHE, read once */
  mpq_ptr zero;          /* the work or size 0 of the entries' ops */
};

/* Is environment variable name set to something other than "" or "0"? */
static int plc_lower_env_flag(const char *name)
{
  const char *v = getenv(name);
  return v && *v && strcmp(v, "0");
}

static const char **plc_lcache_names(plc_lcache *X, plc_arena **ar)
{
  *ar = X->ar;
  return X->names;
}

struct plc_xlog {
  plc_xread *r;
  int n, cap;
  int *index, nindex;  /* open addressing: read number + 1 by plc_xread_hash */
  const char **streams;
  int nstreams, capstreams;
  int memory_declared, bad;
  int used_prev;       /* an `after` list named an op of the previous instance */
  /* the dependency scripts of the ops whose `after` named such an op
   * (plc_xscript_begin): their tokens, in one pool, and which op each is */
  int *tok;
  int ntok, captok;
  struct plc_xscr {
    int idx;           /* its op's index in the list, or INT_MIN: not (yet) an op of it */
    int vanished;      /* its op vanished (plc_lower_op): a name without an op */
    int off, n;        /* its tokens, tok[off, off + n) */
  } *scr;
  int nscr, capscr;
  int s0, s_prev;      /* the script being built: its first token, whether it named prev */
  int seen[64];        /* the evaluator's reads by name pointer (most repeat): read
                          number + 1 of a read of that name, if it is still there */
  int errors, warnings;
  long err_reads;
};

/* At most this many entries: a search of few distinct instances stays
 * small, and one of many does not grow without bound. */
#define PLC_XCACHE_MAX 16384

plc_lcache *plc_lcache_new(const char *whose)
{
  plc_lcache *X = plc_xcalloc(1, sizeof(plc_lcache));
  X->ar = plc_arena_new();
  X->whose = whose;
  X->no_memo = plc_lower_env_flag("PLC_LOWER_NO_MEMO");
  X->no_xcache = plc_lower_env_flag("PLC_LOWER_NO_XCACHE");
  return X;
}

/* The rationals of e that its reads and figures hold (the rest is in the
 * cache's arena). */
static void plc_xentry_free(plc_xentry *e)
{
  for (int i = 0; i < e->nreads; i++)
    if (e->reads[i].slot == PLC_XR_PEAK || e->reads[i].slot == PLC_XR_BW ||
        (e->reads[i].slot != PLC_XR_SIZE && e->reads[i].x.tag == PLC_V_NUM))
      mpq_clear(e->reads[i].x.q);
  for (int k = 0; k < 5 && e->has_mem; k++)
    mpq_clear(e->mem[k]);
}

void plc_lcache_counts(const plc_lcache *x, long *hits, long *misses, long *prev_free)
{
  *hits = x->hits;
  *misses = x->misses;
  *prev_free = x->prev_free;
}

void plc_lcache_free(plc_lcache *x)
{
  if (!x)
    return;
  const char *st = getenv("PLC_LOWER_XCACHE_STATS");
  if (st && *st && strcmp(st, "0"))
    fprintf(stderr, "plc: %slowering cache: %d entries, %ld hits, %ld misses; %ld runs did "
            "not fit before their ops\n", x->whose, x->n, x->hits, x->misses, x->unfit);
  for (int i = 0; i < x->n; i++)
    plc_xentry_free(&x->e[i]);
  free(x->e);
  plc_arena_free(x->ar);
  free(x->index);
  free(x->rids);
  free(x->rindex);
  free(x);
}

/* What a lookup finds entries by (a plc_xentry's first fields, made
 * alone: a lookup zeroing a whole entry for its key cost 1% of a search). */
typedef struct plc_xkey {
  const plc_ast *tmpl, *model;
  int unit, fwd, recompute;
} plc_xkey;

static plc_xkey plc_xkey_of(const plc_xentry *e)
{
  return (plc_xkey){.tmpl = e->tmpl, .model = e->model, .unit = e->unit, .fwd = e->fwd,
                    .recompute = e->recompute};
}

static int plc_xkey_same(const plc_xentry *a, const plc_xkey *b)
{
  return a->tmpl == b->tmpl && a->unit == b->unit && a->fwd == b->fwd &&
         a->recompute == b->recompute && a->model == b->model;
}

static size_t plc_xkey_hash(const plc_xkey *k)
{
  size_t h = (size_t)(uintptr_t)k->tmpl ^ ((size_t)(uintptr_t)k->model << 7);
  h = h * 31 + (size_t)k->unit;
  h = h * 31 + (size_t)k->fwd;
  return h * 31 + (size_t)k->recompute;
}

/* The index slot of key k: its first entry + 1, or 0 where it would go. */
static int *plc_xcache_slot(plc_lcache *X, const plc_xkey *k)
{
  size_t m = (size_t)X->nindex - 1, i = plc_xkey_hash(k) & m;
  while (X->index[i] && !plc_xkey_same(&X->e[X->index[i] - 1], k))
    i = (i + 1) & m;
  return &X->index[i];
}

/* Keep the index of entries at most half full: keys are no more than
 * entries. */
static void plc_xindex_grow(plc_lcache *X)
{
  if (2 * (X->n + 1) <= X->nindex)
    return;
  int old = X->nindex, *was = X->index;
  X->nindex = old ? 2 * old : 64;
  X->index = plc_xcalloc((size_t)X->nindex, sizeof *X->index);
  for (int i = 0; i < old; i++)
    if (was[i]) {
      plc_xkey k = plc_xkey_of(&X->e[was[i] - 1]);
      *plc_xcache_slot(X, &k) = was[i];
    }
  free(was);
}

/* Entry n (just added) goes first in its key's chain. */
static void plc_xcache_link(plc_lcache *X, int n)
{
  plc_xindex_grow(X);
  plc_xkey k = plc_xkey_of(&X->e[n]);
  int *slot = plc_xcache_slot(X, &k);
  X->e[n].next = *slot - 1;
  *slot = n + 1;
}

/* ---- logging ---- */

static int plc_xval_ok(const plc_value *v)
{
  return v && ((v->tag == PLC_V_NUM && v->known && v->dim_known) ||
               (v->tag == PLC_V_BOOL && v->known) || (v->tag == PLC_V_STR && v->s));
}

static int plc_xval_same(const plc_xval *x, const plc_value *v, int dry)
{
  if (!plc_xval_ok(v) || v->tag != x->tag)
    return 0;
  if (dry) /* the type and dimension only */
    return x->tag != PLC_V_NUM || plc_dim_eq(x->dim, v->dim);
  switch (x->tag) {
  case PLC_V_NUM: return plc_dim_eq(x->dim, v->dim) && mpq_equal(x->q, v->q);
  case PLC_V_BOOL: return x->b == v->b;
  default: return !strcmp(x->s, v->s);
  }
}

/* A read's name's hash: most are interned, their hash kept with them
 * (ast.h); found once per read logged, kept in it (plc_xread.nh), and
 * whether the name is interned (*interned). */
static unsigned plc_xread_name_hash(const char *name, int *interned)
{
  unsigned h = name ? plc_name_interned_hash(name) : 0;
  *interned = h != 0;
  return h ? h : name ? plc_name_fnv(name) : 2166136261u;
}

/* Hash of a read's identity as plc_xlog_add compares it (a size read's
 * group is not part of it), from its name's hash nh. */
static unsigned plc_xread_hash(int slot, unsigned nh, int d, long n)
{
  unsigned h = (nh ^ (unsigned)slot) * 16777619u;
  h = (h ^ (unsigned)d) * 16777619u;
  if (slot != PLC_XR_SIZE)
    h = (h ^ (unsigned)n) * 16777619u;
  return h;
}

/* The slot of g->index for the read (slot, name, d, n): its entry, or
 * the empty slot where it goes. */
static int *plc_xlog_slot(struct plc_xlog *g, int slot, const char *name, unsigned nh, int d,
                          long n)
{
  unsigned m = (unsigned)g->nindex - 1, i = plc_xread_hash(slot, nh, d, n) & m;
  for (; g->index[i]; i = (i + 1) & m) {
    const plc_xread *r = &g->r[g->index[i] - 1];
    if (r->slot == slot && r->d == d && (slot == PLC_XR_SIZE || r->n == n) &&
        (r->name == name || (r->name && name && !strcmp(r->name, name))))
      break;
  }
  return &g->index[i];
}

/* Log a read unless one of the same identity was logged; returns its
 * read number, or -1 when the log is given up. */
static int plc_xlog_add(plc_lower *L, int slot, const char *name, int d, long n,
                        mpq_srcptr q, const plc_ast *node)
{
  struct plc_xlog *g = L->xlog;
  if (g->bad)
    return -1;
  /* the first read of each counts: found by an index, as instances read
   * hundreds of fields (a linear search of the log was 4% of a search) */
  if (2 * (g->n + 1) > g->nindex) {
    free(g->index);
    g->nindex = g->nindex ? 2 * g->nindex : 128;
    g->index = plc_xcalloc((size_t)g->nindex, sizeof *g->index);
    for (int i = 0; i < g->n; i++)
      *plc_xlog_slot(g, g->r[i].slot, g->r[i].name, g->r[i].nh, g->r[i].d, g->r[i].n) = i + 1;
  }
  int interned;
  unsigned nh = plc_xread_name_hash(name, &interned);
  int *at = plc_xlog_slot(g, slot, name, nh, d, n);
  if (*at)
    return *at - 1;
  if (g->n == g->cap)
    g->r = plc_xrealloc(g->r, (size_t)(g->cap = g->cap ? 2 * g->cap : 32) * sizeof *g->r);
  g->r[g->n++] = (plc_xread){.slot = slot, .d = d, .n = n, .name = name, .nh = nh,
                             .interned = interned, .q = q, .node = node, .at_train = 1};
  *at = g->n;
  return g->n - 1;
}

/* A read of the evaluator's not found among the recent ones
 * (plc_xlog_eval): logged unless it is not one or read before.  Apart,
 * so that the recent reads (most) cost a call that saves few registers. */
static PLC_LOWER_NOINLINE void plc_xlog_eval_new(plc_lower *L, int slot, const char *name,
                                                 const plc_value *v, const plc_loc *use,
                                                 int dry, int *seen)
{
  struct plc_xlog *g = L->xlog;
  if (slot == PLC_XR_OPT && v && v->tag == PLC_V_OP)
    return; /* an op of the template */
  if (slot == PLC_XR_OPT && v && v->tag == PLC_V_OBJ)
    for (int k = 0; k < 4; k++)
      if (v->obj == L->ev->xwatch[k])
        return; /* run, model, layer, device: their fields are logged */
  /* a section of a top-level model (model.layers) is the same in every
   * candidate that has that model (the entry's key) */
  int section = slot == PLC_XR_MODEL && v && v->tag == PLC_V_OBJ && L->model_node;
  if (!section && !plc_xval_ok(v)) {
    g->bad = 1;
    return;
  }
  int n0 = g->n;
  int i = plc_xlog_add(L, slot, name, -1, 0, NULL, NULL);
  if (i < 0)
    return;
  *seen = i + 1;
  if (i < n0) { /* read before: its value counts once read outside such a branch */
    g->r[i].dry &= dry;
    return;
  }
  g->r[i].v = v;
  g->r[i].dry = dry;
  g->r[i].at_train = !use || use == &L->train->node->loc;
  if (use)
    g->r[i].at = *use;
}

/* The evaluator's report of a read (eval.h, xread). */
static void plc_xlog_eval(void *ctx, int slot, const char *name, const plc_value *v,
                          const plc_loc *use)
{
  plc_lower *L = ctx;
  struct plc_xlog *g = L->xlog;
  if (g->bad)
    return;
  /* in a branch not taken (eval.h, dry) a number or boolean is only
   * checked: its value makes no difference (so the middle layers of every
   * stage read `layer.last && layer.stage == ...` alike); nor does a
   * string's, which only comparisons read (their result is only checked) */
  int dry = L->ev->dry > 0 && v &&
            (v->tag == PLC_V_NUM || v->tag == PLC_V_BOOL || v->tag == PLC_V_STR);
  /* the same name (pointer) read before, found without hashing its
   * characters: the same field, so the same value */
  int *seen = &g->seen[((uintptr_t)name / 8 ^ (unsigned)slot * 13) & 63], i = *seen - 1;
  if (i >= 0 && g->r[i].name == name && g->r[i].slot == slot) {
    g->r[i].dry &= dry; /* its value counts once read outside such a branch */
    return;
  }
  plc_xlog_eval_new(L, slot, name, v, use, dry, seen);
}

static void plc_xlog_stream(plc_lower *L, const char *stream)
{
  struct plc_xlog *g = L->xlog;
  for (int i = 0; i < g->nstreams; i++)
    if (!strcmp(g->streams[i], stream))
      return;
  if (g->nstreams == g->capstreams)
    g->streams = plc_xrealloc(g->streams, (size_t)(g->capstreams = g->capstreams ? 2 *
                              g->capstreams : 8) * sizeof *g->streams);
  g->streams[g->nstreams++] = stream;
}

static void plc_xlog_memory(plc_lower *L) { L->xlog->memory_declared = 1; }

/* Start logging an instance's reads (when the run has a cache). */
static void plc_xlog_begin(plc_lower *L, struct plc_xlog *g, const plc_value *layer)
{
  if (!L->xcache)
    return;
  memset(g, 0, sizeof *g);
  g->errors = L->diag->errors;
  g->warnings = L->diag->warnings;
  g->err_reads = L->ev->err_reads;
  L->xlog = g;
  plc_eval *ev = L->ev;
  ev->xwatch[0] = L->run_val->obj;
  ev->xwatch[1] = L->model;
  ev->xwatch[2] = layer->obj;
  ev->xwatch[3] = L->device;
  ev->xread = plc_xlog_eval;
  ev->xread_ctx = L;
}

/* What `prev.name` gives an instance after prev: the ops its dependency
 * lists get, as distances back from prev's end ("" when none: no previous
 * instance, or no such name; "x" when one is not in prev), a string of the
 * run's arena.  From the end: a stage's first instance may have ops of its
 * own first (the output layer's backward), and the instance after it then
 * finds the names it waits for where the later ones do. */
static const char *plc_xprev_text(plc_lower *L, const plc_inst *prev, const char *name)
{
  if (!prev)
    return "";
  plc_deps d = plc_deps_new(L);
  plc_deps_lookup_in(L, &d, prev, name);
  char *t = plc_arena_alloc_raw(L->ar, (size_t)d.n * 12 + 2), *p = t;
  *p = '\0';
  for (int i = 0; i < d.n; i++)
    p += d.v[i] >= prev->lo && d.v[i] < prev->hi
             ? sprintf(p, "%s%d", i ? "," : "", prev->hi - d.v[i]) : sprintf(p, "x");
  free(d.v);
  return t;
}

/* The instance being logged named `prev.name`: what that gave is one of
 * its reads (PLC_XR_PREV), so it is kept for every previous instance that
 * gives the same (plc_xcache_store), whatever that one's other ops (for
 * any previous instance when it is prev-free: plc_xcache_keep_scripts).
 * Returns the read's number, or -1. */
static int plc_xlog_prev(plc_lower *L, const plc_inst *prev, const char *name)
{
  if (!L->xlog)
    return -1;
  L->xlog->used_prev = 1;
  int n0 = L->xlog->n, i = plc_xlog_add(L, PLC_XR_PREV, name, -1, 0, NULL, NULL);
  if (i < n0) /* named before in this instance (or the log given up, -1) */
    return i;
  plc_value *v = plc_value_new(L->ev, PLC_V_STR);
  v->s = plc_xprev_text(L, prev, name);
  L->xlog->r[i].v = v;
  return i;
}

/* ---- dependency scripts ---- */

/* Why an instance's ops are the same after any previous instance but for
 * the dependencies its `after` lists take from it:
 *  - the evaluator has no way to the previous instance: `prev` is bound
 *    to the same op value in every context (plc_lower_context), and
 *    `prev.x` (eval.c, plc_eval_member) and `prev.x[i]` (plc_eval_index)
 *    make a reference that holds the name x alone.  Whatever an
 *    expression does with such a reference (compare it, describe it in an
 *    error) it does alike after any instance; so every value, branch,
 *    loop, error and read of the instance is the same;
 *  - lowering reads the previous instance in plc_lower_dep alone (the
 *    memo's and the cache's bookkeeping aside), where an `after` item
 *    that is such a reference adds to the op's list what plc_deps_lookup
 *    finds for x in the previous instance (nothing without one), and
 *    reports nothing either way;
 *  - then the list of an op that vanished (a group of one) stands for it
 *    in later lists of the instance; and a pipeline op that waits for
 *    nothing waits for the layers' last op (plc_lower_pipeline_dep).
 * So while an instance is logged, each `after` list that named prev is
 * kept as a script of tokens, in the order lowering added to the list:
 * t >= 0 the op t of the instance (a vanished op of the instance: the
 * ops of its list, if it named no op of prev; if it did, its name keeps
 * them and the instance is not prev-free), t < 0 the lookup of prev.x, x
 * the name of read -t - 1 (PLC_XR_PREV).  Run after another previous
 * instance, a script makes the same calls of plc_deps_add that lowering
 * would make there, in its order, so (duplicates dropped as plc_deps
 * does) the same list: plc_xcache_rederive; the replay then adds a
 * pipeline op's own dependency on the list so made, as lowering does.
 * These are no-ops without a log. */
static void plc_xscript_begin(plc_lower *L)
{
  struct plc_xlog *g = L->xlog;
  if (!g)
    return;
  g->s0 = g->ntok;
  g->s_prev = 0;
}

static void plc_xscript_tok(struct plc_xlog *g, int t)
{
  if (g->ntok == g->captok)
    g->tok = plc_xrealloc(g->tok, (size_t)(g->captok = g->captok ? 2 * g->captok : 64) *
                          sizeof *g->tok);
  g->tok[g->ntok++] = t;
}

/* `prev.x`, x the name of read r (or -1: the log is given up). */
static void plc_xscript_prev(plc_lower *L, int r)
{
  struct plc_xlog *g = L->xlog;
  if (!g)
    return;
  g->s_prev = 1;
  plc_xscript_tok(g, r >= 0 ? -r - 1 : INT_MIN);
}

/* An `after` name found in the instance in: the tokens of the ops
 * plc_deps_lookup adds, in its order. */
static void plc_xscript_cur(plc_lower *L, const plc_inst *in, const char *name)
{
  struct plc_xlog *g = L->xlog;
  if (!g)
    return;
  const plc_inst_key *e = plc_inst_find(in, name);
  int i = e->latest >= 0 ? e->latest : e->fam_first;
  for (; i >= 0; i = e->latest >= 0 ? -1 : in->ops[i].fam_next) {
    const plc_inst_op *o = &in->ops[i];
    if (o->idx >= 0)
      plc_xscript_tok(g, o->idx);
    else /* as plc_deps_entry (if o took any from prev, its own script keeps the instance
            from being prev-free: plc_xcache_keep_scripts) */
      for (int k = 0; k < o->ndeps; k++)
        plc_xscript_tok(g, o->deps[k]);
  }
}

/* The end of an `after` list: the number of its script, kept if it
 * named prev (its op to be placed, plc_xscript_place), or -1. */
static int plc_xscript_end(plc_lower *L)
{
  struct plc_xlog *g = L->xlog;
  if (!g)
    return -1;
  if (!g->s_prev) {
    g->ntok = g->s0;
    return -1;
  }
  if (g->nscr == g->capscr)
    g->scr = plc_xrealloc(g->scr, (size_t)(g->capscr = g->capscr ? 2 * g->capscr : 8) *
                          sizeof *g->scr);
  g->scr[g->nscr] = (struct plc_xscr){INT_MIN, 0, g->s0, g->ntok - g->s0};
  return g->nscr++;
}

/* Script rec (if any) is the dependency list of the op at list index idx,
 * or of the vanished one at idx among the instance's names. */
static void plc_xscript_place(plc_lower *L, int rec, int idx, int vanished)
{
  if (rec < 0 || !L->xlog || rec >= L->xlog->nscr)
    return;
  L->xlog->scr[rec].idx = idx;
  L->xlog->scr[rec].vanished = vanished;
}

static void plc_xlog_stop(plc_lower *L)
{
  if (!L->xlog)
    return;
  L->ev->xread = NULL;
  L->ev->xenv = NULL;
  memset(L->ev->xwatch, 0, sizeof L->ev->xwatch);
  L->xlog = NULL;
}

static void plc_xlog_free(struct plc_xlog *g)
{
  free(g->r);
  free(g->index);
  free(g->streams);
  free(g->tok);
  free(g->scr);
}

/* ---- entries ---- */

/* A dependency of the instance at [lo, hi) whose previous one is at
 * [plo, phi): >= 0 in the instance, < 0 in the previous one; INT_MIN
 * elsewhere. */
/* An op index d of the instance [lo, hi) or its previous one [plo, phi):
 * from the instance's first op, or back from the previous one's end (as
 * its reads of prev are, plc_xprev_text); INT_MIN when in neither. */
static int plc_xcache_enc(int d, int lo, int hi, int plo, int phi)
{
  if (d >= lo && d < hi)
    return d - lo;
  if (d >= plo && d < phi)
    return d - phi;
  return INT_MIN;
}

static int plc_xcache_dec(int d, int nlo, int nphi) { return d >= 0 ? nlo + d : nphi + d; }

/* ---- names not made ---- */

/* A memo copy's and a cache replay's names are not made (plc_memo_replay,
 * plc_xcache_replay): the next instance's `prev.` (and the cache's reads
 * of it) look a few names up in it, so plc_deps_lookup_in finds them in
 * what they would be made from: the names of the cache's entry, decoded
 * as at the replay (at lo after an instance that ended at phi), or those
 * of the instance the memo recorded; moved, for a memo copy, by its memo
 * entry m (its copy at nlo after nplo).  Making them added those names in
 * their order, with those indices and lists (plc_inst_add), so the latest
 * op of the exact name, else the ops of the family name[...] in order,
 * are what plc_deps_lookup would find there, and are added the same
 * (plc_deps_entry). */

/* Name o of a replay of the cache, as plc_deps_entry adds it. */
static void plc_deps_xname(plc_deps *d, const plc_xname *o, int lo, int phi,
                           const plc_memo *m, int nlo, int nplo)
{
  int idx = o->idx >= 0 ? lo + o->idx : -1;
  if (m && idx >= 0)
    idx = plc_memo_move(m, idx, nlo, nplo);
  if (idx >= 0) {
    plc_deps_add(d, idx);
    return;
  }
  for (int k = 0; k < o->ndeps; k++) {
    int x = plc_xcache_dec(o->deps[k], lo, phi);
    plc_deps_add(d, m ? plc_memo_move(m, x, nlo, nplo) : x);
  }
}

/* plc_deps_lookup in the names of a replay of entry e. */
static void plc_deps_xlookup(plc_deps *d, const plc_xentry *e, const char *name, int lo,
                             int phi, const plc_memo *m, int nlo, int nplo)
{
  int last = -1;
  for (int i = 0; i < e->nnames; i++)
    if (e->names[i].name == name || !strcmp(e->names[i].name, name))
      last = i;
  if (last >= 0) {
    plc_deps_xname(d, &e->names[last], lo, phi, m, nlo, nplo);
    return;
  }
  if (strchr(name, '[')) /* not a family's name (that ends at its first '[') */
    return;
  size_t n = strlen(name);
  for (int i = 0; i < e->nnames; i++)
    if (!strncmp(e->names[i].name, name, n) && e->names[i].name[n] == '[')
      plc_deps_xname(d, &e->names[i], lo, phi, m, nlo, nplo);
}

/* Name o of the instance memo entry m recorded, as plc_deps_entry adds it
 * for m's copy at nlo after nplo. */
static void plc_deps_mname(plc_deps *d, const plc_inst_op *o, const plc_memo *m, int nlo,
                           int nplo)
{
  int idx = o->idx >= 0 ? plc_memo_move(m, o->idx, nlo, nplo) : -1;
  if (idx >= 0) {
    plc_deps_add(d, idx);
    return;
  }
  for (int k = 0; k < o->ndeps; k++)
    plc_deps_add(d, plc_memo_move(m, o->deps[k], nlo, nplo));
}

/* plc_deps_lookup in instance in (NULL: none), whose names may not be
 * made. */
static void plc_deps_lookup_in(plc_lower *L, plc_deps *d, const plc_inst *in, const char *name)
{
  if (!in || !(in->lazy || in->xlazy)) {
    plc_deps_lookup(d, in, name);
    return;
  }
  if (in->xlazy) {
    plc_deps_xlookup(d, &L->xcache->e[in->xlazy - 1], name, in->xlazy_lo, in->xlazy_phi, NULL,
                     0, 0);
    return;
  }
  const plc_memo *m = &L->memo[in->lazy - 1];
  if (m->inst.xlazy) { /* the recorded instance was a replay of the cache's */
    plc_deps_xlookup(d, &L->xcache->e[m->inst.xlazy - 1], name, m->inst.xlazy_lo,
                     m->inst.xlazy_phi, m, in->lazy_lo, in->lazy_plo);
    return;
  }
  const plc_inst_key *e = plc_inst_find(&m->inst, name);
  if (!e)
    return;
  if (e->latest >= 0) {
    plc_deps_mname(d, &m->inst.ops[e->latest], m, in->lazy_lo, in->lazy_plo);
    return;
  }
  for (int i = e->fam_first; i >= 0; i = m->inst.ops[i].fam_next)
    plc_deps_mname(d, &m->inst.ops[i], m, in->lazy_lo, in->lazy_plo);
}

static int *plc_xcache_enc_deps(plc_arena *ar, const int *deps, int n, int lo, int hi,
                                int plo, int phi, int *ok)
{
  int *v = plc_arena_alloc_raw(ar, (size_t)(n ? n : 1) * sizeof *v);
  for (int i = 0; i < n; i++)
    if ((v[i] = plc_xcache_enc(deps[i], lo, hi, plo, phi)) == INT_MIN)
      *ok = 0;
  return v;
}

/* The cache's 0. */
static mpq_ptr plc_xcache_zero(plc_lcache *X)
{
  if (!X->zero)
    X->zero = plc_arena_mpq(X->ar);
  return X->zero;
}

/* A string the cache keeps: an interned name as it is (the pool lives as
 * long as the process, ast.h), else a copy in the cache's arena. */
static const char *plc_xcache_str(plc_arena *ar, const char *s)
{
  return plc_name_interned_hash(s) ? s : plc_arena_strdup(ar, s);
}

static mpq_ptr plc_xcache_mpq(plc_arena *ar, mpq_srcptr q)
{
  mpq_ptr p = plc_arena_mpq(ar);
  mpq_set(p, q);
  return p;
}

/* ---- reads of run, model and device, by number ---- */

/* Within one run, run, model and device do not change: whether such a
 * read holds is the same for every entry that made it, so a run works it
 * out once.  Reads are the same when of the same field, with the same
 * value (or type, dry) kept. */
static int plc_xrid_slot_kind(int slot)
{
  return slot == PLC_XR_RUN || slot == PLC_XR_MODEL || slot == PLC_XR_DEVICE;
}

static unsigned plc_xrid_hash(const plc_xread *r)
{
  unsigned h = plc_xread_hash(r->slot, r->nh, r->dry, r->x.tag);
  if (r->x.tag == PLC_V_NUM && !r->dry)
    h = (h ^ (unsigned)mpz_get_ui(mpq_numref(r->x.q)) ^
         ((unsigned)mpz_get_ui(mpq_denref(r->x.q)) << 7)) * 16777619u;
  else if (r->x.tag == PLC_V_BOOL && !r->dry)
    h = (h ^ (unsigned)r->x.b) * 16777619u;
  return h;
}

static int plc_xrid_same(const plc_xread *a, const plc_xread *b)
{
  if (a->slot != b->slot || a->dry != b->dry || a->x.tag != b->x.tag ||
      (a->name != b->name && strcmp(a->name, b->name)))
    return 0;
  switch (a->x.tag) {
  case PLC_V_NUM: return plc_dim_eq(a->x.dim, b->x.dim) && (a->dry || mpq_equal(a->x.q, b->x.q));
  case PLC_V_BOOL: return a->dry || a->x.b == b->x.b;
  case PLC_V_STR: return a->dry || a->x.s == b->x.s || !strcmp(a->x.s, b->x.s);
  default: return 1; /* a section of the model */
  }
}

static int *plc_xrid_slot(plc_lcache *X, const plc_xread *r)
{
  size_t m = (size_t)X->nrindex - 1, i = plc_xrid_hash(r) & m;
  while (X->rindex[i] && !plc_xrid_same(X->rids[X->rindex[i] - 1], r))
    i = (i + 1) & m;
  return &X->rindex[i];
}

/* The number of read r (kept in an entry, where it stays), or -1. */
static int plc_xrid(plc_lcache *X, const plc_xread *r)
{
  if (!plc_xrid_slot_kind(r->slot))
    return -1;
  if (2 * (X->nrids + 1) > X->nrindex) {
    free(X->rindex);
    X->nrindex = X->nrindex ? 2 * X->nrindex : 256;
    X->rindex = plc_xcalloc((size_t)X->nrindex, sizeof *X->rindex);
    for (int i = 0; i < X->nrids; i++)
      *plc_xrid_slot(X, X->rids[i]) = i + 1;
  }
  int *slot = plc_xrid_slot(X, r);
  if (*slot)
    return *slot - 1;
  if (X->nrids == X->caprids)
    X->rids = plc_xrealloc(X->rids, (size_t)(X->caprids = X->caprids ? 2 * X->caprids : 256) *
                           sizeof *X->rids);
  X->rids[X->nrids] = r;
  *slot = ++X->nrids;
  return X->nrids - 1;
}

/* Copy the logged reads into e; 0 when one cannot be kept. */
static int plc_xcache_keep_reads(plc_arena *ar, plc_xentry *e, const struct plc_xlog *g)
{
  e->reads = plc_arena_alloc(ar, (size_t)(g->n ? g->n : 1) * sizeof *e->reads);
  for (int i = 0; i < g->n; i++, e->nreads++) {
    const plc_xread *r = &g->r[i];
    plc_xread *x = &e->reads[i];
    *x = *r;
    x->v = NULL;
    x->q = NULL;
    /* plc_xcache_str, its test made when the read was logged */
    x->name = !r->name || r->interned ? r->name : plc_arena_strdup(ar, r->name);
    if (r->slot == PLC_XR_PEAK || r->slot == PLC_XR_BW) {
      mpq_init(x->x.q);
      mpq_set(x->x.q, r->q);
      continue;
    }
    x->x.tag = r->slot == PLC_XR_SIZE ? PLC_V_BOOL : r->v->tag; /* SIZE: nothing to clear */
    if (r->slot == PLC_XR_SIZE)
      continue;
    if (x->x.tag == PLC_V_NUM) {
      mpq_init(x->x.q);
      mpq_set(x->x.q, r->v->q);
      x->x.dim = r->v->dim;
    } else if (x->x.tag == PLC_V_BOOL) {
      x->x.b = r->v->b;
    } else if (x->x.tag == PLC_V_STR) {
      x->x.s = plc_xcache_str(ar, r->v->s);
    } /* OBJ: a section of the model, nothing more to keep */
  }
  return 1;
}

/* Number the reads of entry e (once it is kept: its reads do not move). */
static void plc_xcache_number_reads(plc_lcache *X, plc_xentry *e)
{
  for (int i = 0; i < e->nreads; i++)
    e->reads[i].rid = plc_xrid(X, &e->reads[i]);
}

/* The dependency list of script tok (n tokens, as kept in an entry) for
 * the instance at base after the instance prev (NULL: none), in the
 * arena: the calls of plc_deps_add that lowering the op made, in its
 * order (plc_xscript_begin), so the same list. */
static int *plc_xcache_rederive(plc_lower *L, const int *tok, int n, int base,
                                const char *const *pnames, const plc_inst *prev, int *nd)
{
  plc_deps d = plc_deps_new(L);
  for (int i = 0; i < n; i++)
    if (tok[i] >= 0)
      plc_deps_add(&d, base + tok[i]);
    else
      plc_deps_lookup_in(L, &d, prev, pnames[-tok[i] - 1]);
  int *v = plc_arena_alloc_raw(L->ar, (size_t)(d.n ? d.n : 1) * sizeof *v);
  if (d.n)
    memcpy(v, d.v, (size_t)d.n * sizeof *v);
  free(d.v);
  *nd = d.n;
  return v;
}

/* Do the ops [lo, hi) of list l and the names of in wait for no op
 * outside [lo, hi), but the ops marked in has (and a pipeline op's own
 * dependency, found again on replay)? */
static int plc_xcache_inside(const plc_ir_list *l, const plc_inst *in, int lo, int hi,
                             const unsigned char *has)
{
  for (int i = lo; i < hi; i++)
    for (int k = 0; !has[i - lo] && !l->ops[i].after_layers && k < l->ops[i].ndeps; k++)
      if (l->ops[i].deps[k] < lo || l->ops[i].deps[k] >= hi)
        return 0;
  for (int i = 0; i < in->n; i++)
    for (int k = 0; k < in->ops[i].ndeps; k++)
      if (in->ops[i].deps[k] < lo || in->ops[i].deps[k] >= hi)
        return 0;
  return 1;
}

/* Entry e's scripts, from the log g of the instance cur just lowered
 * after c->prev; returns whether e is prev-free.  It is when every op
 * that took dependencies from prev is in the instance, not vanished (a
 * name keeps its dependencies as they were), and has a script of ops of
 * the instance and lookups of prev, which gives its list again after
 * c->prev; every other op and name waits for ops of the instance alone.
 * Then the lists of its replay after any previous instance are those
 * lowering would make (plc_xscript_begin); the check against the list
 * just made is the proof that the script is complete (no dependency
 * came into the list another way). */
static int plc_xcache_keep_scripts(plc_lctx *c, const plc_inst *cur, const struct plc_xlog *g,
                                   plc_xentry *e)
{
  plc_lower *L = c->L;
  plc_arena *ar = L->xcache->ar;
  int lo = cur->lo, hi = cur->hi, ok = 1, np = 0;
  /* scratch, in the run's arena: which ops have a script; by read number,
   * pnames index + 1 */
  unsigned char *has = plc_arena_alloc(L->ar, (size_t)(hi - lo + 1));
  int *pmap = plc_arena_alloc(L->ar, ((size_t)g->n + 1) * sizeof *pmap);
  e->scr = plc_arena_alloc(ar, (size_t)(e->nops + 1) * sizeof *e->scr);
  e->nscr = plc_arena_alloc(ar, (size_t)(e->nops + 1) * sizeof *e->nscr);
  e->pnames = plc_arena_alloc_raw(ar, (size_t)(g->n + 1) * sizeof *e->pnames);
  for (int j = 0; j < g->nscr && ok; j++) {
    const struct plc_xscr *r = &g->scr[j];
    ok = !r->vanished && r->idx >= lo && r->idx < hi && !has[r->idx - lo];
    if (!ok)
      break;
    int *t = plc_arena_alloc_raw(ar, (size_t)(r->n + 1) * sizeof *t);
    for (int k = 0; k < r->n && ok; k++) {
      int x = g->tok[r->off + k];
      if (x >= 0) {
        ok = x >= lo && x < hi;
        t[k] = x - lo;
      } else if ((ok = x != INT_MIN)) {
        int rd = -x - 1;
        if (!pmap[rd]) {
          e->pnames[np] = plc_xcache_str(ar, g->r[rd].name);
          pmap[rd] = ++np;
        }
        t[k] = -pmap[rd];
      }
    }
    has[r->idx - lo] = 1;
    e->scr[r->idx - lo] = t;
    e->nscr[r->idx - lo] = r->n;
  }
  ok = ok && plc_xcache_inside(c->list, cur, lo, hi, has);
  for (int i = lo; i < hi && ok; i++) { /* the scripts give the lists just made */
    const plc_ir_op *op = &c->list->ops[i];
    if (!has[i - lo])
      continue;
    int nd, *d = plc_xcache_rederive(L, e->scr[i - lo], e->nscr[i - lo], lo, e->pnames,
                                     c->prev, &nd);
    if (op->after_layers) /* its own dependency comes after the list's: none */
      ok = nd == 0;
    else
      ok = nd == op->ndeps && !memcmp(d, op->deps, (size_t)nd * sizeof *d);
  }
  e->prev_free = ok;
  return ok;
}

/* A prev-free entry's reads of prev say nothing: dropped. */
static void plc_xcache_drop_prev_reads(plc_xentry *e)
{
  int n = 0;
  for (int i = 0; i < e->nreads; i++)
    if (e->reads[i].slot != PLC_XR_PREV)
      e->reads[n++] = e->reads[i];
  e->nreads = n;
}

/* Store the instance cur just lowered (and recorded in the memo) with the
 * reads of g; returns its entry number + 1, or 0 when it is not kept. */
static int plc_xcache_store(plc_lctx *c, const plc_inst *cur, const plc_ast *tmpl, int unit,
                            int fwd, const struct plc_xlog *g, unsigned layer_reads,
                            mpq_ptr *mem, int copies)
{
  plc_lower *L = c->L;
  plc_lcache *X = L->xcache;
  /* kept for every previous instance that gives what this one's did (the
   * reads of prev): one that named none has no dependency there */
  const plc_inst *prev = g->used_prev ? c->prev : NULL;
  if (g->bad || X->n >= PLC_XCACHE_MAX || L->diag->errors != g->errors ||
      L->diag->warnings != g->warnings || L->ev->err_reads != g->err_reads)
    return 0;
  int lo = cur->lo, hi = cur->hi, plo = prev ? prev->lo : -1, phi = prev ? prev->hi : -1;
  if (X->n == X->cap)
    X->e = plc_xrealloc(X->e, (size_t)(X->cap = X->cap ? 2 * X->cap : 16) * sizeof *X->e);
  plc_xentry *e = &X->e[X->n];
  memset(e, 0, sizeof *e);
  *e = (plc_xentry){.tmpl = tmpl, .unit = unit, .fwd = fwd,
                    .recompute = unit == 1 ? L->run->recompute : -1, .model = L->model_node,
                    .memory_declared = g->memory_declared,
                    .copies = copies, .layer_reads = layer_reads};
  plc_arena *ar = X->ar;
  int ok = plc_xcache_keep_reads(ar, e, g);
  e->ops = plc_arena_alloc_raw(ar, (size_t)(hi - lo + 1) * sizeof *e->ops);
  e->op_stream = plc_arena_alloc_raw(ar, (size_t)(hi - lo + 1) * sizeof *e->op_stream);
  e->op_sidx = plc_arena_alloc_raw(ar, (size_t)(hi - lo + 1) * sizeof *e->op_sidx);
  for (int i = lo; i < hi; i++, e->nops++) {
    const plc_ir_op *f = &c->list->ops[i];
    plc_ir_op *o = &e->ops[i - lo];
    *o = *f;
    o->replica = 0;
    o->time = plc_xcache_mpq(ar, f->time);
    /* a compute op's size and a collective's work are 0: one rational for
     * all (replays share them, as nothing changes them in place) */
    o->flops = mpq_sgn(f->flops) ? plc_xcache_mpq(ar, f->flops) : plc_xcache_zero(X);
    o->size = mpq_sgn(f->size) ? plc_xcache_mpq(ar, f->size) : plc_xcache_zero(X);
    o->name = plc_xcache_str(ar, f->name);
    if (f->after_layers) /* found again on replay (plc_lower_pipeline_dep) */
      o->ndeps = 0;
    o->deps = plc_xcache_enc_deps(ar, f->deps, o->ndeps, lo, hi, plo, phi, &ok);
    const char *sn = L->run->streams[f->stream];
    int j = g->nstreams - 1;
    while (j >= 0 && g->streams[j] != sn && strcmp(g->streams[j], sn))
      j--;
    e->op_sidx[i - lo] = j;
    e->op_stream[i - lo] = j < 0 ? plc_xcache_str(ar, sn) : NULL;
  }
  e->streams = plc_arena_alloc_raw(ar, (size_t)(g->nstreams + 1) * sizeof *e->streams);
  for (; e->nstreams < g->nstreams; e->nstreams++)
    e->streams[e->nstreams] = plc_xcache_str(ar, g->streams[e->nstreams]);
  e->names = plc_arena_alloc_raw(ar, (size_t)(cur->n + 1) * sizeof *e->names);
  for (; e->nnames < cur->n; e->nnames++) {
    const plc_inst_op *o = &cur->ops[e->nnames];
    plc_xname *x = &e->names[e->nnames];
    x->name = plc_xcache_str(ar, o->name);
    x->idx = o->idx >= 0 ? plc_xcache_enc(o->idx, lo, hi, -1, -1) : -1;
    ok &= x->idx != INT_MIN;
    x->deps = plc_xcache_enc_deps(ar, o->deps, o->ndeps, lo, hi, plo, phi, &ok);
    x->ndeps = o->ndeps;
  }
  if (mem) {
    e->has_mem = 1;
    for (int k = 0; k < 5; k++) {
      mpq_init(e->mem[k]);
      mpq_set(e->mem[k], mem[k]);
    }
  }
  if (!ok) {
    plc_xentry_free(e);
    return 0;
  }
  if (g->used_prev && plc_xcache_keep_scripts(c, cur, g, e))
    plc_xcache_drop_prev_reads(e);
  plc_xcache_link(X, X->n);
  plc_xcache_number_reads(X, e);
  return ++X->n;
}

/* Read r of a field of layer: the entries of a key read the same few
 * fields of it, so within one lookup (plc_xcache_find, which numbers it
 * L->xgen) a field's value is evaluated once, found again by its name
 * (interned: one pointer).  Evaluating it again would give the same value
 * (the layer's fields are bound to values, plc_lower_layer_value) and
 * change nothing (the watch's bit of that field is set already). */
static int plc_xread_layer_holds(plc_lower *L, const plc_xread *r, const plc_value *layer,
                                 const plc_loc *at)
{
  struct plc_xlayer *x = &L->xlayer[((uintptr_t)r->name / 8) % 16];
  if (x->gen != L->xgen || x->name != r->name) {
    x->gen = L->xgen;
    x->name = r->name;
    x->v = plc_eval_field(L->ev, layer->obj, r->name, at);
  }
  return x->v && plc_xval_same(&r->x, x->v, r->dry);
}

/* Does read r have the same value in this run?  Evaluates it as lowering
 * would (ctx: the template's context, made on first need). */
static int plc_xread_holds(plc_lower *L, const plc_xread *r, const plc_value *layer,
                           const plc_tmpl *t, plc_env **ctx)
{
  const plc_loc *at = r->at_train ? &L->train->node->loc : &r->at;
  plc_obj *o = NULL;
  /* A collective's group size and bandwidth give its time alone, which a
   * replay computes again on this run's links (no expression can read an
   * op's time): what must hold is that the op exists (a group of one has
   * none) and that its bandwidth does (else lowering reports it).  The
   * peak is in compute ops' times, which are replayed as kept. */
  switch (r->slot) {
  case PLC_XR_PREV: return !strcmp(plc_xprev_text(L, L->xprev, r->name), r->x.s);
  case PLC_XR_SIZE: return (L->run->size[r->d] > 1) == (r->n > 1);
  case PLC_XR_PEAK: return L->run->peak && mpq_equal(L->run->peak, r->x.q);
  case PLC_XR_BW: return plc_lower_bw_of(L, (plc_pdim)r->d, (plc_opk)r->n, r->node) != NULL;
  case PLC_XR_OPT: {
    if (!*ctx)
      *ctx = plc_lower_context(L, t, (plc_value *)layer, 0);
    plc_binding *b = plc_env_find_local(*ctx, r->name);
    return b && plc_xval_same(&r->x, plc_eval_binding(L->ev, b, at), r->dry);
  }
  case PLC_XR_RUN: o = L->run_val->obj; break;
  case PLC_XR_MODEL: o = L->model; break;
  case PLC_XR_LAYER: return plc_xread_layer_holds(L, r, layer, at);
  default: o = L->device; break;
  }
  plc_value *v = plc_eval_field(L->ev, o, r->name, at);
  if (r->x.tag == PLC_V_OBJ) /* a section of the model (of the entry's key) */
    return v && v->tag == PLC_V_OBJ && L->model_node;
  return v && plc_xval_same(&r->x, v, r->dry);
}

/* Room in L->xheld for the read numbers of X so far. */
static void plc_xheld_room(plc_lower *L, const plc_lcache *X)
{
  if (X->nrids <= L->nxheld)
    return;
  int n = L->nxheld ? L->nxheld : 256;
  while (n < X->nrids)
    n *= 2;
  L->xheld = plc_xrealloc(L->xheld, (size_t)n);
  memset(L->xheld + L->nxheld, 0, (size_t)(n - L->nxheld));
  L->nxheld = n;
}

/* plc_xread_holds, once per run for a read of run, model or device (room
 * made for its number: plc_xheld_room). */
static int plc_xread_held(plc_lower *L, const plc_xread *r, const plc_value *layer,
                          const plc_tmpl *t, plc_env **ctx)
{
  if (r->rid < 0 && r->slot == PLC_XR_LAYER) /* most (plc_xread_holds's case, inline) */
    return plc_xread_layer_holds(L, r, layer, r->at_train ? &L->train->node->loc : &r->at);
  if (r->rid < 0)
    return plc_xread_holds(L, r, layer, t, ctx);
  if (!L->xheld[r->rid])
    L->xheld[r->rid] = plc_xread_holds(L, r, layer, t, ctx) ? 1 : 2;
  return L->xheld[r->rid] == 1;
}

/* The entry this instance can replay, or -1.  What it took from its
 * previous instance is among an entry's reads (PLC_XR_PREV), not in its
 * key; a prev-free entry has no such reads. */
static int plc_xcache_find(plc_lctx *c, const plc_tmpl *t, int unit, int fwd,
                           const plc_value *layer)
{
  plc_lower *L = c->L;
  plc_lcache *X = L->xcache;
  if (!X || (unit == 1 && !fwd))
    return -1;
  int errors = L->diag->errors;
  plc_env *ctx = NULL;
  L->xprev = c->prev;
  L->xgen += !L->xsame; /* this lookup's layer (one for a layer's memory entries) */
  plc_xkey key = {.tmpl = t->decl, .unit = unit, .fwd = fwd,
                  .recompute = unit == 1 ? L->run->recompute : -1, .model = L->model_node};
  plc_xheld_room(L, X);
  /* the entries of the key, latest first */
  for (int i = X->nindex ? *plc_xcache_slot(X, &key) - 1 : -1; i >= 0 && !PLC_LOWER_FAILED(L);
       i = X->e[i].next) {
    const plc_xentry *e = &X->e[i];
    int k = 0;
    while (k < e->nreads && plc_xread_held(L, &e->reads[k], layer, t, &ctx))
      k++;
    if (k == e->nreads && L->diag->errors == errors) {
      X->prev_free += e->prev_free;
      return X->hits++, i;
    }
  }
  X->misses++;
  return -1;
}

/* Replay entry x as the instance cur at the end of c->list; rec receives
 * its memory figures.  Returns 0 after an error. */
static int plc_xcache_replay(plc_lctx *c, plc_inst *cur, int x, mpq_ptr *rec)
{
  plc_lower *L = c->L;
  const plc_xentry *e = &L->xcache->e[x];
  int nlo = c->list->n, nphi = c->prev ? c->prev->hi : -1;
  if ((L->nops += e->nops) > L->cap) {
    plc_error(L->diag, &e->tmpl->loc, "the plan lowers to more than %d ops; refusing to go on",
              PLC_LOWER_MAX_OPS);
    L->stop = 1;
    return 0;
  }
  int sid[16];
  for (int i = 0; i < e->nstreams; i++) {
    int k = plc_ir_stream(L->ar, L->run, e->streams[i]);
    if (i < 16)
      sid[i] = k;
  }
  L->run->memory_declared |= e->memory_declared;
  /* written in place (each op made before the list counts it: a pipeline
   * op finds the layers' last one before it), their dependencies in one
   * block */
  plc_ir_reserve(L->ar, c->list, e->nops);
  long nd = 0;
  for (int i = 0; i < e->nops; i++)
    nd += e->ops[i].ndeps;
  int *deps = plc_arena_alloc_raw(L->ar, (size_t)(nd ? nd : 1) * sizeof *deps);
  for (int i = 0; i < e->nops; i++) {
    const plc_ir_op *f = &e->ops[i];
    plc_ir_op *op = &c->list->ops[c->list->n];
    *op = plc_lower_replica(L, f); /* the cache outlives the run */
    op->layer = c->layer;
    int j = e->op_sidx[i];
    op->stream = j >= 0 && j < 16 ? sid[j]
                 : plc_ir_stream(L->ar, L->run, j >= 0 ? e->streams[j] : e->op_stream[i]);
    if (e->prev_free && e->scr[i]) { /* its lookups of prev made again */
      op->deps = plc_xcache_rederive(L, e->scr[i], e->nscr[i], nlo, e->pnames, c->prev,
                                     &op->ndeps);
    } else {
      op->deps = deps;
      for (int k = 0; k < f->ndeps; k++)
        *deps++ = plc_xcache_dec(f->deps[k], nlo, nphi);
    }
    op->after_layers = 0;
    plc_lower_pipeline_dep(c, op); /* a pipeline op that names no dependency */
    if (op->kind != PLC_OPK_COMPUTE && !op->pinned) {
      op->time = plc_arena_mpq(L->ar); /* its own: timed on this run's links */
      op->group = L->run->size[op->dim];
      if (!plc_lower_coll_time(c, op->node, op))
        return 0;
    }
    c->list->n++;
  }
  cur->xlazy = x + 1; /* its names: not made (plc_deps_lookup_in) */
  cur->xlazy_lo = nlo;
  cur->xlazy_phi = nphi;
  for (int k = 0; k < 5 && e->has_mem; k++) {
    if (c->mem)
      plc_lower_mem_add(c->mem, k, e->mem[k]);
    if (rec)
      mpq_set(rec[k], e->mem[k]);
  }
  cur->lo = nlo;
  cur->hi = c->list->n;
  return 1;
}

/* A template's memory sections, with the cache (L->xcache), entry by
 * entry: each entry of its section (weights, grads, ...) is a cache entry
 * of its own, of unit 16 + unit and fwd its number in the template (1, 2,
 * ...), with no ops.  The entries are looked up in order until one misses;
 * from there on they are evaluated in one environment (the lets before the
 * section, evaluated lazily), with one log of reads, and each is kept
 * keyed by the reads logged so far: those of its own expression and of
 * the entries evaluated before it in that environment (the lets it uses
 * may have been evaluated by those).  So the optimizer state of a dense
 * layer, looked up before its activations, is shared by the candidates of
 * one (tp, dp) whatever their micro_batch, recompute or sequence_parallel,
 * which only the later entries read.
 *
 * Exactly what evaluating the section at once (plc_lower_memory_only)
 * gives:
 * - an entry's value: kept with every read made since the environment was
 *   made, so where those all hold (plc_xcache_find) evaluating the same
 *   entries in order in a new environment reads the same and gives the
 *   same value (the cache's premise, as for a whole section before);
 * - the figures: sums of exact rationals do not depend on their grouping,
 *   and buffers keep the largest either way (all >= 0), so the chunk's
 *   totals, the instance's own (c->mem_rec: the sections together, added
 *   up as plc_lower_memory_only adds them), and so the memory-first pass's
 *   and plc_drive_unfit_early's figures, which are these, are the same;
 * - memory_declared: set by every section met, as plc_lower_memory does;
 * - the layer fields read (the memo's watch): the kept entries' and those
 *   read in the environment (a lookup's own are dropped, as before);
 * - diagnostics: an entry replayed was kept with no warning, error or read
 *   of one, so evaluating it (and the lets it would have evaluated first)
 *   reports nothing; the rest are evaluated in order in one environment,
 *   as at once, and one failing leaves the section (plc_lower_mem_item),
 *   an error the rest (PLC_LOWER_FAILED).  An entry evaluated after a
 *   warning or error is not kept (plc_xcache_store: the log's counts).
 * A miss evaluates no more than the section at once would (its lets
 * once each), a hit nothing (as any of the cache's hits: the step limit,
 * plc(5), is kept exactly only with PLC_LOWER_NO_XCACHE=1).  The lookups
 * of one instance's entries are of one layer: its fields' values are read
 * once for them all (L->xsame, plc_xread_layer_holds).
 * tests/unit/test_lower.c ("memory sections cached entry by entry")
 * compares with fresh lowerings. */
typedef struct plc_xmem {
  plc_lctx m;              /* c, with no previous instance and an empty current one */
  plc_inst none;
  const plc_tmpl *t;
  plc_value *layer;
  int unit;
  plc_env *env;            /* made at the first entry missed; NULL till then */
  struct plc_xlog g;       /* the reads since */
  unsigned outer;          /* the layer fields read before */
  mpq_ptr *own;            /* c->mem_rec, or NULL */
  mpq_srcptr buffers;      /* the largest buffers entry so far, or NULL */
} plc_xmem;

/* Add part k of an entry, q, to the instance's own figures (if kept):
 * weights to buffers summed as they come, buffers the largest, added at
 * the end (plc_lower_memory_cached), as plc_lower_memory_only adds them
 * up in an instance's figures of its own (zeros), then to c->mem_rec. */
static void plc_xmem_own(plc_xmem *xm, int k, mpq_srcptr q)
{
  if (!xm->own)
    return;
  if (k < 4)
    plc_q_rat_add(xm->own[k], xm->own[k], q);
  else if (!xm->buffers || mpq_cmp(q, xm->buffers) > 0)
    xm->buffers = q;
}

/* Entry x (number n) of section sec: replayed from the cache, or evaluated
 * and kept.  Returns 0 after a failure. */
static int plc_xmem_item(plc_xmem *xm, const plc_ast *sec, const plc_ast *x, int n)
{
  plc_lower *L = xm->m.L;
  int k = plc_lower_mem_kind(x->name);
  if (!xm->env) {
    unsigned w = L->ev->watch_reads;
    int i = plc_xcache_find(&xm->m, xm->t, 16 + xm->unit, n, xm->layer);
    L->ev->watch_reads = w;
    if (PLC_LOWER_FAILED(L))
      return 0;
    if (i >= 0) {
      const plc_xentry *e = &L->xcache->e[i];
      plc_lower_mem_add(xm->m.mem, k, e->mem[k]);
      plc_xmem_own(xm, k, e->mem[k]);
      L->ev->watch_reads |= e->layer_reads;
      return 1;
    }
    L->xsame = 0;
    xm->outer = w;
    L->ev->watch_reads = 0;
    plc_xlog_begin(L, &xm->g, xm->layer);
    xm->env = plc_lower_context(L, xm->t, xm->layer, 0);
    for (const plc_ast *it = xm->t->decl->list.head; it != sec; it = it->next)
      if (it->kind == PLC_AST_LET)
        plc_env_define(L->ev, xm->env, it->name, it, xm->env);
  }
  mpq_ptr rec[5]; /* the entry's figures: its own part, zeros */
  for (int j = 0; j < 5; j++)
    rec[j] = j == k ? plc_arena_mpq(L->ar) : plc_xcache_zero(L->xcache);
  xm->m.mem_rec = rec;
  const char *outer = L->ev->ctx_template;
  L->ev->ctx_template = xm->t->decl->name;
  int ok = plc_lower_mem_item(&xm->m, x, xm->env);
  L->ev->ctx_template = outer;
  xm->m.mem_rec = NULL;
  plc_xmem_own(xm, k, rec[k]);
  if (ok && !PLC_LOWER_FAILED(L))
    plc_xcache_store(&xm->m, &xm->none, xm->t->decl, 16 + xm->unit, n, &xm->g,
                     L->ev->watch_reads, rec, 0);
  return ok;
}

static void plc_lower_memory_cached(plc_lctx *c, const plc_tmpl *t, plc_value *layer,
                                    int unit)
{
  plc_lower *L = c->L;
  if (!c->mem)
    return;
  plc_xmem xm = {.m = *c, .none = {.lo = c->list->n, .hi = c->list->n}, .t = t,
                 .layer = layer, .unit = unit};
  xm.m.prev = NULL;
  xm.m.cur = &xm.none;
  xm.m.mem_rec = NULL;
  xm.own = c->mem_rec;
  L->xgen++; /* the lookups of this layer's entries */
  L->xsame = 1;
  int n = 0; /* the entries' numbers, the same in every run */
  for (const plc_ast *it = t->decl->list.head; it && !PLC_LOWER_FAILED(L); it = it->next) {
    if (it->kind == PLC_AST_LET && xm.env)
      plc_env_define(L->ev, xm.env, it->name, it, xm.env);
    if (it->kind != PLC_AST_SECTION || strcmp(it->name, "memory"))
      continue;
    L->run->memory_declared = 1;
    int ok = 1;
    for (const plc_ast *x = it->list.head; x; x = x->next)
      if (x->kind == PLC_AST_SET && (++n, ok) && !PLC_LOWER_FAILED(L))
        ok = plc_xmem_item(&xm, it, x, n); /* a failure leaves the section */
  }
  L->xsame = 0;
  if (xm.env) {
    L->ev->watch_reads |= xm.outer;
    plc_xlog_stop(L);
    plc_xlog_free(&xm.g);
  }
  if (xm.own && xm.buffers)
    plc_q_rat_add(xm.own[4], xm.own[4], xm.buffers);
}

static void plc_lower_memory_again(plc_lctx *c, const plc_tmpl *t, plc_value *layer,
                                   const plc_lfields *lf, int unit);

/* ---- stages ------------------------------------------------------------------------- */

typedef struct plc_layer_info {
  const char *kind;
  plc_tmpl tmpl;
  int lo, hi;        /* its forward ops in the stage's forward list */
  plc_inst fwd;      /* its forward ops by name */
  plc_lfields lf;    /* its `layer` fields */
  plc_value *layer;  /* what its templates see as `layer` (forward and backward), made
                        when first needed (plc_lower_li_layer) */
} plc_layer_info;

static plc_value *plc_lower_li_layer(plc_lower *L, plc_layer_info *li)
{
  if (!li->layer)
    li->layer = plc_lower_layer_value(L, li->lf.f[0], li->lf.kind, li->lf.f[2], li->lf.f[3],
                                      li->lf.f[4]);
  return li->layer;
}

static void plc_lower_instance(plc_lctx *c, const plc_tmpl *t, plc_value *layer)
{
  plc_env *env = plc_lower_context(c->L, t, layer, 1);
  if (c->L->xlog) /* its options, read by bare name */
    c->L->ev->xenv = env;
  plc_inst missing = {0};
  c->missing = &missing;
  const char *outer = c->L->ev->ctx_template; /* a run read while lowering another */
  c->L->ev->ctx_template = t->decl->name;
  plc_lower_items(c, &t->decl->list, env, 1);
  c->L->ev->ctx_template = outer;
  plc_lower_check_missing(c);
  c->missing = NULL;
}

/* A template's memory sections alone: its lets defined in order up to
 * them, no op lowered (for the cross-candidate cache). */
static void plc_lower_memory_only(plc_lctx *c, const plc_tmpl *t, plc_value *layer)
{
  plc_lower *L = c->L;
  if (!c->mem)
    return;
  plc_env *env = plc_lower_context(L, t, layer, 0);
  const char *outer = L->ev->ctx_template;
  L->ev->ctx_template = t->decl->name;
  for (const plc_ast *it = t->decl->list.head; it && !PLC_LOWER_FAILED(L); it = it->next)
    if (it->kind == PLC_AST_LET)
      plc_env_define(L->ev, env, it->name, it, env);
    else if (it->kind == PLC_AST_SECTION && !strcmp(it->name, "memory"))
      plc_lower_memory(c, it, env);
  L->ev->ctx_template = outer;
}

/* The instance just recorded (if it was) and its memo entry are the cache's
 * entry xid - 1. */
static void plc_lower_set_xid(plc_lower *L, plc_inst *cur, int xid)
{
  cur->xid = xid;
  if (cur->shape && L->nmemo > 0)
    L->memo[L->nmemo - 1].xid = xid;
}

/* A layer's forward instance: a copy of a recorded one (of this run, or
 * of an earlier candidate's), or lowered and recorded. */
static void plc_lower_layer_fwd(plc_lctx *c, plc_layer_info *li)
{
  plc_lower *L = c->L;
  const plc_ast *tmpl = li->tmpl.decl;
  int e = plc_memo_find(L, tmpl, 0, c->prev ? c->prev->shape : -1, 0, &li->lf);
  if (e >= 0) {
    L->stage_reads |= L->memo[e].reads;
    plc_memo_replay(c, c->cur, e, c->layer);
    return;
  }
  plc_value *layer = plc_lower_li_layer(L, li);
  mpq_ptr rec[5];
  for (int k = 0; k < 5; k++)
    rec[k] = plc_arena_mpq(L->ar);
  c->cur->lo = c->list->n;
  /* with the cache, the memory section is evaluated apart, every time: it
   * reads dp and the like, which the ops of most templates do not */
  int split = L->xcache != NULL;
  int x = L->no_memo ? -1 : plc_xcache_find(c, &li->tmpl, 0, 0, layer);
  unsigned outer, reads, op_reads;
  const plc_obj *was;
  if (x >= 0) { /* lowered for an earlier candidate */
    if (!plc_xcache_replay(c, c->cur, x, NULL) || PLC_LOWER_FAILED(L))
      return;
    c->mem_rec = rec;
    was = plc_memo_watch(L, layer, &outer);
    plc_lower_memory_again(c, &li->tmpl, layer, &li->lf, 0);
    reads = plc_memo_unwatch(L, was, outer) | L->xcache->e[x].layer_reads;
    L->stage_reads |= reads;
    c->mem_rec = NULL;
    if (!PLC_LOWER_FAILED(L)) {
      plc_memo_record(c, c->cur, tmpl, 0, 0, &li->lf, reads, rec, 0);
      plc_lower_set_xid(L, c->cur, x + 1);
    }
    return;
  }
  struct plc_xlog g;
  plc_xlog_begin(L, &g, layer);
  was = plc_memo_watch(L, layer, &outer);
  plc_ir_mem *mem = c->mem;
  c->mem_rec = rec;
  if (split)
    c->mem = NULL;
  plc_lower_instance(c, &li->tmpl, layer);
  c->mem = mem;
  c->cur->hi = c->list->n;
  op_reads = L->ev->watch_reads;
  if (split && !PLC_LOWER_FAILED(L)) {
    struct plc_xlog *ops = L->xlog; /* not the ops' reads */
    plc_xlog_stop(L);
    plc_lower_memory_again(c, &li->tmpl, layer, &li->lf, 0);
    L->xlog = ops;
  }
  reads = plc_memo_unwatch(L, was, outer);
  L->stage_reads |= reads;
  c->mem_rec = NULL;
  if (!PLC_LOWER_FAILED(L)) {
    plc_memo_record(c, c->cur, tmpl, 0, 0, &li->lf, reads, rec, 0);
    if (L->xlog && c->cur->shape)
      plc_lower_set_xid(L, c->cur, plc_xcache_store(c, c->cur, tmpl, 0, 0, &g, op_reads,
                                                    NULL, 0));
  }
  if (L->xlog) {
    plc_xlog_stop(L);
    plc_xlog_free(&g);
  }
}

/* A layer's ops, from n0 to the end of the list, belong to its chunk
 * (whether lowered, copied from the memo, mirrored or recomputed). */
static void plc_lower_set_chunk(plc_ir_list *l, int n0, int chunk)
{
  for (int i = n0; i < l->n; i++)
    l->ops[i].chunk = chunk;
}

/* The virtual chunk of the stage's k-th layer. */
static int plc_lower_chunk_of(const plc_ir_stage *st, int k)
{
  int c = 0;
  while (k >= st->chunk_end[c])
    c++;
  return c;
}

static void plc_lower_stage_fwd(plc_lower *L, plc_ir_stage *st, int s, plc_layer_info *info)
{
  plc_lctx c = {.L = L, .list = &st->fwd, .phase = PLC_PH_FWD};
  plc_inst *prev = NULL;
  for (int k = 0, chunk = 0; k < st->nlayers && !PLC_LOWER_FAILED(L); k++) {
    plc_layer_info *li = &info[k];
    while (k >= st->chunk_end[chunk])
      chunk++;
    c.mem = &st->mem[chunk];
    c.layer = st->layers[k];
    c.chunk = chunk;
    c.cur = &li->fwd;
    c.prev = prev;
    int n0 = st->fwd.n;
    li->lf = plc_lower_lfields(L, c.layer, li->kind, s, k == 0, k == st->nlayers - 1);
    plc_lower_layer_fwd(&c, li);
    if (!li->fwd.lazy) /* a memo copy's ops are in their chunk */
      plc_lower_set_chunk(&st->fwd, n0, chunk);
    li->lo = li->fwd.lo;
    li->hi = li->fwd.hi;
    prev = &li->fwd;
  }
  for (int i = 0; i < L->nmemo; i++)
    plc_memo_flush(&L->memo[i]);
}

/* A layer's recompute and backward, lowered (mirror or not). */
static void plc_lower_bwd_unit(plc_lctx *c, plc_ir_stage *st, plc_layer_info *li,
                               plc_value *layer, plc_users *users, int *map)
{
  plc_lower *L = c->L;
  if (li->tmpl.recomp && L->run->recompute > 0) {
    c->phase = PLC_PH_RECOMP;
    plc_lower_instance(c, &li->tmpl, layer);
  } else if (L->run->recompute == 2) {
    c->phase = PLC_PH_RECOMP;
    plc_lower_recompute_copy(c, &st->fwd, li->lo, li->hi, map);
  }
  c->phase = PLC_PH_BWD;
  if (li->tmpl.bwd)
    plc_lower_instance(c, &li->tmpl, layer);
  else
    plc_lower_mirror(c, &st->fwd, li->lo, li->hi, plc_lower_users_of(users, &st->fwd), map);
}

/* Forward ops of [lo, hi) that a full recompute copies (once ops are not). */
static int plc_lower_copies(const plc_ir_list *fwd, int lo, int hi)
{
  int n = 0;
  for (int i = lo; i < hi; i++)
    n += !fwd->ops[i].once;
  return n;
}

/* A layer's recompute and backward: copied from a recorded unit, or
 * lowered and recorded.  Only units with a backward section are recorded
 * (a mirror reads the map of later layers); a copied full recompute sets
 * the map of the layer's forward ops as plc_lower_recompute_copy does. */
static void plc_lower_stage_bwd_layer(plc_lctx *c, plc_ir_stage *st, int k, plc_layer_info *li,
                                      plc_users *users, int *map)
{
  plc_lower *L = c->L;
  const plc_ast *tmpl = li->tmpl.decl;
  c->layer = st->layers[k];
  c->fwd = &li->fwd;
  int copy = !(li->tmpl.recomp && L->run->recompute > 0) && L->run->recompute == 2;
  int memo = li->fwd.shape && li->tmpl.bwd;
  int prev_shape = c->prev ? c->prev->shape : -1;
  int e = memo ? plc_memo_find(L, tmpl, 1, prev_shape, li->fwd.shape, &li->lf) : -1;
  if (e >= 0) {
    L->stage_reads |= L->memo[e].reads;
    if (!plc_memo_replay(c, c->cur, e, c->layer))
      return;
    for (int i = li->lo, j = c->cur->lo; copy && i < li->hi; i++)
      if (!st->fwd.ops[i].once)
        map[i] = j++;
    return;
  }
  c->cur->lo = c->list->n;
  plc_value *layer = plc_lower_li_layer(L, li);
  int copies = copy ? plc_lower_copies(&st->fwd, li->lo, li->hi) : 0;
  int x = memo && !L->no_memo ? plc_xcache_find(c, &li->tmpl, 1, li->fwd.xid, layer) : -1;
  if (x >= 0) { /* lowered for an earlier candidate */
    if (!plc_xcache_replay(c, c->cur, x, NULL) || PLC_LOWER_FAILED(L))
      return;
    L->stage_reads |= L->xcache->e[x].layer_reads;
    for (int i = li->lo, j = c->cur->lo; copy && i < li->hi; i++)
      if (!st->fwd.ops[i].once)
        map[i] = j++;
    plc_memo_record(c, c->cur, tmpl, 1, li->fwd.shape, &li->lf, L->xcache->e[x].layer_reads,
                    NULL, copies);
    plc_lower_set_xid(L, c->cur, x + 1);
    return;
  }
  unsigned outer;
  struct plc_xlog g;
  if (memo)
    plc_xlog_begin(L, &g, layer);
  const plc_obj *was = plc_memo_watch(L, layer, &outer);
  plc_lower_bwd_unit(c, st, li, layer, users, map);
  unsigned reads = plc_memo_unwatch(L, was, outer);
  L->stage_reads |= reads;
  c->cur->hi = c->list->n;
  if (memo && !PLC_LOWER_FAILED(L)) {
    plc_memo_record(c, c->cur, tmpl, 1, li->fwd.shape, &li->lf, reads, NULL, copies);
    if (L->xlog && li->fwd.xid && c->cur->shape)
      plc_lower_set_xid(L, c->cur, plc_xcache_store(c, c->cur, tmpl, 1, li->fwd.xid, &g,
                                                    reads, NULL, copies));
  }
  if (L->xlog) {
    plc_xlog_stop(L);
    plc_xlog_free(&g);
  }
}

static void plc_lower_stage_bwd(plc_lower *L, plc_ir_stage *st, plc_layer_info *info)
{
  plc_lctx c = {.L = L, .list = &st->bwd, .phase = PLC_PH_BWD};
  plc_users users = {NULL, NULL}; /* made when first needed */
  int *map = plc_xmalloc(((size_t)st->fwd.n + 1) * sizeof *map);
  for (int i = 0; i < st->fwd.n; i++)
    map[i] = -1;
  plc_inst *prev = NULL;
  plc_inst *insts = plc_xcalloc((size_t)st->nlayers + 1, sizeof *insts);
  for (int k = st->nlayers - 1; k >= 0 && !PLC_LOWER_FAILED(L); k--) {
    c.cur = &insts[k];
    c.prev = prev;
    c.chunk = plc_lower_chunk_of(st, k);
    int n0 = st->bwd.n;
    plc_lower_stage_bwd_layer(&c, st, k, &info[k], &users, map);
    if (!insts[k].lazy) /* a memo copy's ops are in their chunk */
      plc_lower_set_chunk(&st->bwd, n0, c.chunk);
    prev = &insts[k];
  }
  free(insts);
  free(map);
  plc_lower_users_free(&users, st->fwd.n);
}

/* A pipeline or step instance (unit 2, 3, 4: the pipeline template's
 * forward and backward, the step template): from the cross-candidate
 * cache, or lowered (and kept there).  Its memory section is evaluated
 * apart, as a layer's is. */
static void plc_lower_extra(plc_lctx *c, const plc_tmpl *t, plc_value *layer,
                            const plc_lfields *lf, int unit)
{
  plc_lower *L = c->L;
  if (!L->xcache || L->no_memo) {
    plc_lower_instance(c, t, layer);
    return;
  }
  c->cur->lo = c->list->n;
  int x = plc_xcache_find(c, t, unit, 0, layer);
  if (x >= 0) {
    if (plc_xcache_replay(c, c->cur, x, NULL) && !PLC_LOWER_FAILED(L))
      plc_lower_memory_again(c, t, layer, lf, unit);
    return;
  }
  struct plc_xlog g;
  plc_xlog_begin(L, &g, layer);
  plc_ir_mem *mem = c->mem;
  c->mem = NULL;
  plc_lower_instance(c, t, layer);
  c->mem = mem;
  c->cur->hi = c->list->n;
  plc_xlog_stop(L); /* the memory sections' reads are not the ops' */
  if (!PLC_LOWER_FAILED(L))
    plc_lower_memory_again(c, t, layer, lf, unit);
  L->xlog = &g;
  if (!PLC_LOWER_FAILED(L))
    plc_xcache_store(c, c->cur, t->decl, unit, 0, &g, 0, NULL, 0);
  L->xlog = NULL;
  plc_xlog_free(&g);
}

/* Does run place its chunks in a V (dualpipev: stage s holds model chunks
 * s and 2 pp - 1 - s, so stage 0 has the first and the last)? */
static int plc_lower_v(const plc_ir_run *r)
{
  return !strcmp(r->schedule, "dualpipev");
}

/* Is stage s the one holding the model's last chunk (the output layer)? */
static int plc_lower_last_stage(const plc_ir_run *r, int s)
{
  return plc_lower_v(r) ? s == 0 : s == r->nstages - 1;
}

/* The `pipeline` template's ops (end of each list) and the `step` ones. */
static void plc_lower_stage_extra(plc_lower *L, plc_ir_stage *st, int s)
{
  plc_tmpl t;
  int last = plc_lower_last_stage(L->run, s);
  plc_value *layer = plc_lower_layer_value(L, -1, "pipeline", s, s == 0, last);
  plc_lfields lf = plc_lower_lfields(L, -1, "pipeline", s, s == 0, last);
  if (plc_lower_find_template(L, "pipeline", &t)) {
    plc_inst fi = {0}, bi = {0};
    /* the embedding and loss count with the stage's first chunk, but on the
     * last stage with its last one (the output layer's; in a V stage 0
     * holds both ends, and its state counts with the output's chunk) */
    int chunk = last ? L->run->vpp - 1 : 0;
    plc_lctx c = {.L = L, .list = &st->fwd, .phase = PLC_PH_FWD, .layer = -1, .cur = &fi,
                  .mem = &st->mem[chunk]};
    plc_lower_extra(&c, &t, layer, &lf, 2);
    c = (plc_lctx){.L = L, .list = &st->bwd, .phase = PLC_PH_BWD, .layer = -1, .cur = &bi,
                   .fwd = &fi};
    if (t.bwd)
      plc_lower_extra(&c, &t, layer, &lf, 3);
  }
  if (plc_lower_find_template(L, "step", &t)) {
    plc_inst si = {0};
    layer = plc_lower_layer_value(L, -1, "step", s, s == 0, last);
    lf = plc_lower_lfields(L, -1, "step", s, s == 0, last);
    plc_lctx c = {.L = L, .list = &st->step, .phase = PLC_PH_STEP, .layer = -1, .cur = &si,
                  .mem = &st->mem[0]};
    plc_lower_extra(&c, &t, layer, &lf, 4);
  }
}

/* ---- layers and stages -------------------------------------------------------------- */

/* The model's layer kinds in order, from its `layers { kind = count }`. */
static const char **plc_lower_layers(plc_lower *L, int *nlayers)
{
  plc_value *lv = plc_lower_field(L, L->model, "layers");
  if (!lv || lv->tag != PLC_V_OBJ) {
    plc_error(L->diag, &L->model->node->loc, "model '%s' needs a section "
              "'layers { KIND = COUNT ... }'", L->model->name);
    return NULL;
  }
  long total = 0;
  const char **kinds = NULL;
  plc_env *e = lv->obj->env;
  for (size_t i = 0; i < e->n; i++) {
    long n;
    if (!plc_lower_int(L, plc_eval_binding(L->ev, &e->b[i], &e->b[i].def->loc), 0,
                       PLC_LOWER_MAX_LAYERS, e->b[i].def->a, "a layer count", &n))
      return NULL;
    if (total + n > PLC_LOWER_MAX_LAYERS) {
      plc_error(L->diag, &e->b[i].def->loc, "the model has more than %d layers",
                PLC_LOWER_MAX_LAYERS);
      return NULL;
    }
    const char **grown = plc_arena_alloc(L->ar, (size_t)(total + n + 1) * sizeof *grown);
    if (total)
      memcpy(grown, kinds, (size_t)total * sizeof *grown);
    for (long k = 0; k < n; k++)
      grown[total + k] = e->b[i].name;
    kinds = grown;
    total += n;
  }
  if (total == 0) {
    plc_error(L->diag, &L->model->node->loc, "model '%s' has no layers", L->model->name);
    return NULL;
  }
  *nlayers = (int)total;
  return kinds;
}

static plc_ir_mem *plc_lower_mem_new(plc_lower *L, int n)
{
  plc_ir_mem *m = plc_arena_alloc(L->ar, (size_t)n * sizeof *m);
  for (int i = 0; i < n; i++) {
    m[i].weights = plc_arena_mpq(L->ar);
    m[i].grads = plc_arena_mpq(L->ar);
    m[i].optimizer = plc_arena_mpq(L->ar);
    m[i].activations = plc_arena_mpq(L->ar);
    m[i].buffers = plc_arena_mpq(L->ar);
  }
  return m;
}

/* Layers of each physical stage: chunk j (of pp*vpp, in execution order)
 * belongs to stage j % pp (round robin), or for dualpipev's V to stage j
 * for j < pp and 2 pp - 1 - j after (its local chunk j / pp either way);
 * chunks are an even contiguous split, the first ones one layer longer
 * when it does not divide; or `stages = [...]`. */
static int plc_lower_chunk_stage(const plc_ir_run *r, int j)
{
  int p = (int)r->size[PLC_PD_PP];
  return !plc_lower_v(r) ? j % p : j < p ? j : 2 * p - 1 - j;
}

static int plc_lower_split(plc_lower *L, int nlayers)
{
  plc_ir_run *r = L->run;
  /* pp <= world and vpp <= 2^24: bound the product before it is an int */
  long p = r->size[PLC_PD_PP], v = r->vpp;
  if (p * v > PLC_LOWER_MAX_CHUNKS) {
    const plc_ast *at = plc_lower_field_node(L->train, v > 1 ? "vpp" : "pp");
    plc_error(L->diag, &at->loc, "pp x vpp = %ld x %ld pipeline chunks; the limit is %d", p, v,
              PLC_LOWER_MAX_CHUNKS);
    return 0;
  }
  int chunks = (int)(p * v);
  int *len = plc_xcalloc((size_t)chunks, sizeof *len);
  const plc_ast *sn = plc_lower_field_node(L->train, "stages");
  if (sn && sn->kind == PLC_AST_LIST && sn != L->train->node) {
    plc_value *sv = plc_lower_field(L, L->train, "stages");
    long sum = 0;
    if (sv->tag != PLC_V_LIST || (int)sv->n != chunks) {
      plc_error(L->diag, &sn->loc, "'stages' must list %d layer counts (pp x vpp)", chunks);
      free(len);
      return 0;
    }
    for (int j = 0; j < chunks; j++) {
      long n;
      if (!plc_lower_int(L, sv->items[j], 0, nlayers, sn, "a stage's layer count", &n)) {
        free(len);
        return 0;
      }
      len[j] = (int)n;
      sum += n;
    }
    if (sum != nlayers) {
      plc_error(L->diag, &sn->loc, "'stages' adds up to %ld layers; the model has %d", sum,
                nlayers);
      free(len);
      return 0;
    }
  } else {
    if (nlayers % chunks)
      plc_warning(L->diag, &plc_lower_field_node(L->train, "pp")->loc,
                  "%d layers do not divide into pp x vpp = %d chunks; the first %d chunks get "
                  "one layer more", nlayers, chunks, nlayers % chunks);
    for (int j = 0; j < chunks; j++)
      len[j] = nlayers / chunks + (j < nlayers % chunks);
  }
  r->nstages = (int)p;
  r->stages = plc_arena_alloc(L->ar, (size_t)p * sizeof *r->stages);
  for (int j = 0; j < chunks; j++) /* count first: pp x nlayers could be gigabytes */
    r->stages[plc_lower_chunk_stage(r, j)].nlayers += len[j];
  for (int s = 0; s < p; s++) {
    r->stages[s].layers = plc_arena_alloc(L->ar, ((size_t)r->stages[s].nlayers + 1) * sizeof(int));
    r->stages[s].chunk_end = plc_arena_alloc(L->ar, (size_t)v * sizeof(int));
    r->stages[s].mem = plc_lower_mem_new(L, (int)v);
    r->stages[s].nlayers = 0;
  }
  for (int j = 0, first = 0; j < chunks; first += len[j++]) {
    plc_ir_stage *st = &r->stages[plc_lower_chunk_stage(r, j)];
    for (int k = 0; k < len[j]; k++)
      st->layers[st->nlayers++] = first + k;
    st->chunk_end[j / p] = st->nlayers;
  }
  free(len);
  return 1;
}

/* Bits of plc_lower_layer_value's bindings, as the watch numbers them. */
enum { PLC_LF_INDEX = 1u << 0, PLC_LF_STAGE = 1u << 2, PLC_LF_MODEL_FIRST = 1u << 5,
       PLC_LF_MODEL_LAST = 1u << 6 };

/* Do stages p and st hold layers of the same kinds in the same chunks, and
 * the model's ends at the same places where the instances read them? */
static int plc_lower_stage_alike(const plc_lower *L, const plc_ir_stage *p,
                                 const plc_ir_stage *st, const char **kinds)
{
  if (p->nlayers != st->nlayers ||
      memcmp(p->chunk_end, st->chunk_end, (size_t)L->run->vpp * sizeof *p->chunk_end))
    return 0;
  for (int k = 0; k < st->nlayers; k++) {
    int a = p->layers[k], b = st->layers[k];
    if ((kinds[a] != kinds[b] && strcmp(kinds[a], kinds[b])) ||
        ((L->like_reads & PLC_LF_MODEL_FIRST) && (a == 0) != (b == 0)) ||
        ((L->like_reads & PLC_LF_MODEL_LAST) && (a == L->nlayers - 1) != (b == L->nlayers - 1)))
      return 0;
  }
  return 1;
}

/* Append from's first n ops to the empty list to, their layers renumbered
 * by map (their dependencies, list positions, are the same). */
static void plc_lower_list_copy(plc_lower *L, plc_ir_list *to, const plc_ir_list *from, int n,
                                const int *map)
{
  plc_ir_reserve(L->ar, to, n);
  plc_ir_op *op = to->ops + to->n;
  const plc_ir_op *f = from->ops;
  int share = L->ev->lower_share_times;
  for (int i = 0; i < n; i++) { /* plc_lower_replica, in place */
    op[i] = f[i];
    if (!share) {
      op[i].time = plc_arena_mpq(L->ar);
      plc_q_rat_set(op[i].time, f[i].time);
    }
    if (op[i].layer >= 0)
      op[i].layer = map[op[i].layer];
  }
  to->n += n;
}

/* Stage s as a copy of stage s - 1, when that one was lowered layer by layer
 * just before and its instances read neither their layer index nor their
 * stage: each instance of s, reading the same fields with the same values
 * as the one at its place in s - 1, would be a copy of it (the instance
 * memo's argument, for a whole stage).  Returns 0 when s is lowered. */
static int plc_lower_stage_copy(plc_lower *L, int s, const char **kinds)
{
  if (L->no_memo || s == 0 || L->like != s - 1)
    return 0;
  const plc_ir_stage *p = &L->run->stages[s - 1];
  plc_ir_stage *st = &L->run->stages[s];
  long n = (long)L->like_nfwd + L->like_nbwd;
  if (!plc_lower_stage_alike(L, p, st, kinds) || L->nops + n > L->cap)
    return 0; /* lowered, which reports passing the cap */
  L->nops += n;
  if (!L->layer_map)
    L->layer_map = plc_xmalloc(((size_t)L->nlayers + 1) * sizeof *L->layer_map);
  for (int k = 0; k < st->nlayers; k++)
    L->layer_map[p->layers[k]] = st->layers[k];
  plc_lower_list_copy(L, &st->fwd, &p->fwd, L->like_nfwd, L->layer_map);
  plc_lower_list_copy(L, &st->bwd, &p->bwd, L->like_nbwd, L->layer_map);
  if (!L->copied)
    L->copied = plc_arena_alloc(L->ar, 2 * (size_t)L->run->nstages * sizeof *L->copied);
  L->copied[2 * s] = L->like_nfwd;
  L->copied[2 * s + 1] = L->like_nbwd;
  for (int c = 0; c < L->run->vpp; c++)
    for (int k = 0; k < 5; k++)
      plc_lower_mem_add(&st->mem[c], k, plc_lower_mem_field(&L->like_mem[c], k));
  L->like = s;
  return 1;
}

/* Stage s's layers, forward then backward, each instance lowered (or a
 * copy); then whether the next stage may copy them. */
static int plc_lower_stage_layers(plc_lower *L, int s, const char **kinds)
{
  plc_ir_stage *st = &L->run->stages[s];
  plc_layer_info *info = plc_xcalloc((size_t)st->nlayers + 1, sizeof *info);
  int ok = 1;
  for (int k = 0; k < st->nlayers && ok; k++) {
    info[k].kind = kinds[st->layers[k]];
    if (!plc_lower_find_template(L, info[k].kind, &info[k].tmpl)) {
      plc_error(L->diag, &L->framework->node->loc, "framework '%s' has no template for layer "
                "kind '%s' (model '%s')", L->framework->name, info[k].kind, L->model->name);
      ok = 0;
    }
  }
  L->stage_reads = 0;
  /* the lists at their likely size at once (a layer's recompute and
   * backward as up to four times its forward): growing them copies
   * every op */
  plc_ir_reserve(L->ar, &st->fwd, (int)(st->nlayers * L->each) + 16);
  plc_ir_reserve(L->ar, &st->bwd, (int)(4 * st->nlayers * L->each) + 16);
  if (ok)
    plc_lower_stage_fwd(L, st, s, info);
  if (ok && !PLC_LOWER_FAILED(L))
    plc_lower_stage_bwd(L, st, info);
  free(info);
  ok = ok && !PLC_LOWER_FAILED(L);
  L->like = -1;
  if (ok && !(L->stage_reads & (PLC_LF_INDEX | PLC_LF_STAGE))) {
    L->like = s;
    L->like_nfwd = st->fwd.n;
    L->like_nbwd = st->bwd.n;
    L->like_reads = L->stage_reads;
    L->like_mem = plc_lower_mem_new(L, L->run->vpp);
    for (int c = 0; c < L->run->vpp; c++)
      for (int k = 0; k < 5; k++)
        plc_lower_mem_add(&L->like_mem[c], k, plc_lower_mem_field(&st->mem[c], k));
  }
  return ok;
}

static int plc_lower_stage(plc_lower *L, int s, const char **kinds)
{
  plc_ir_stage *st = &L->run->stages[s];
  if (!plc_lower_stage_copy(L, s, kinds) && !plc_lower_stage_layers(L, s, kinds))
    return 0;
  if (!PLC_LOWER_FAILED(L))
    plc_lower_stage_extra(L, st, s);
  return !PLC_LOWER_FAILED(L);
}

/* Lower one instance of a template on the side, stopping after cap ops
 * (then *ops = cap + 1).  Returns 0 on an error in the template. */
static int plc_lower_count(plc_lower *L, const plc_tmpl *t, int index, plc_value *layer,
                           long cap, long *ops)
{
  plc_ir_list scratch = {0};
  plc_inst cur = {0};
  plc_lctx c = {.L = L, .list = &scratch, .phase = PLC_PH_FWD, .layer = index, .cur = &cur};
  L->nops = 0;
  L->cap = cap;
  int quiet = L->diag->no_warnings; /* the real lowering warns once */
  L->diag->no_warnings = 1;
  /* an earlier candidate's count (unit 8 of the cross-candidate cache),
   * kept with the reads that decided it: the ops the template reaches
   * depend on its conditions and loops, not on the ops' fields, which the
   * count does not evaluate (the real lowering does, and reports their
   * errors) */
  int x = L->xcache && !L->no_memo ? plc_xcache_find(&c, t, 8, 0, layer) : -1;
  if (x >= 0) {
    long n = L->xcache->e[x].counted;
    L->nops = n > cap ? cap + 1 : n;
  } else {
    struct plc_xlog g;
    if (!L->no_memo)
      plc_xlog_begin(L, &g, layer);
    L->counting = 1;
    plc_lower_instance(&c, t, layer);
    L->counting = 0;
    cur.lo = 0;
    cur.hi = scratch.n;
    int e = L->xlog && !PLC_LOWER_FAILED(L) && !L->stop
                ? plc_xcache_store(&c, &cur, t->decl, 8, 0, &g, 0, NULL, 0) : 0;
    if (e)
      L->xcache->e[e - 1].counted = L->nops;
    if (L->xlog) {
      plc_xlog_stop(L);
      plc_xlog_free(&g);
    }
  }
  L->diag->no_warnings = quiet;
  *ops = L->nops;
  L->stop = 0;
  L->cap = PLC_LOWER_MAX_OPS;
  L->nops = 0; /* the estimate's own ops do not count */
  return !PLC_LOWER_FAILED(L);
}

static int plc_lower_too_many(plc_lower *L, const plc_tmpl *t, long total, long n,
                              const char *what, long each)
{
  plc_error(L->diag, &t->decl->loc, "the plan would lower to %ld ops or more (%ld %s with %ld "
            "ops or more each, x3 for recompute and backward); the limit is %d", total, n, what,
            each, PLC_LOWER_MAX_OPS);
  return 0;
}

/* Refuse a plan whose lists would hold more than PLC_LOWER_MAX_OPS ops
 * before building them: lower the first layer of each kind once, on the
 * side, and count forward, recompute and backward as three copies; the
 * pipeline and step templates likewise once per stage.  The side lowering
 * stops as soon as its count is enough to refuse, so refusing costs little. */
/* Is kind one of the n kinds of seen (the latest, most likely, first;
 * most layers' kinds are one pointer, a layers entry's name)? */
static int plc_lower_kind_seen(const char *const *seen, int n, const char *kind)
{
  for (int j = n - 1; j >= 0; j--)
    if (seen[j] == kind || !strcmp(seen[j], kind))
      return 1;
  return 0;
}

static int plc_lower_estimate(plc_lower *L, const char **kinds, int nlayers)
{
  long total = 0, ops, p = L->run->nstages;
  /* the kinds met so far, each once: a layer is its kind's first when its
   * kind is none of them (as none of the layers before it) */
  const char **seen = plc_xmalloc(((size_t)nlayers + 1) * sizeof *seen);
  int nseen = 0, ok = 1;
  for (int i = 0; i < nlayers && ok; i++) {
    if (plc_lower_kind_seen(seen, nseen, kinds[i]))
      continue;
    seen[nseen++] = kinds[i];
    plc_tmpl t;
    if (!plc_lower_find_template(L, kinds[i], &t))
      continue;
    long n = 0;
    for (int j = i; j < nlayers; j++)
      n += kinds[j] == kinds[i] || !strcmp(kinds[j], kinds[i]);
    long cap = (PLC_LOWER_MAX_OPS - total) / (3 * n) + 1;
    if (!plc_lower_count(L, &t, i, plc_lower_layer_value(L, i, kinds[i], 0, 1, 1), cap, &ops)) {
      ok = 0;
      break;
    }
    total += 3 * n * ops;
    if (ops > L->each)
      L->each = ops;
    if (total > PLC_LOWER_MAX_OPS) {
      char what[96];
      snprintf(what, sizeof what, "layers of kind '%.60s'", kinds[i]);
      ok = plc_lower_too_many(L, &t, total, n, what, ops);
    }
  }
  free(seen);
  if (!ok)
    return 0;
  static const char *const extra[] = {"pipeline", "step"};
  for (int k = 0; k < 2; k++) {
    plc_tmpl t;
    if (!plc_lower_find_template(L, extra[k], &t))
      continue;
    long cap = (PLC_LOWER_MAX_OPS - total) / (3 * p) + 1;
    if (!plc_lower_count(L, &t, -1, plc_lower_layer_value(L, -1, extra[k], 0, 1, p == 1), cap,
                         &ops))
      return 0;
    total += 3 * p * ops;
    if (total > PLC_LOWER_MAX_OPS)
      return plc_lower_too_many(L, &t, total, p, k ? "stages' step ops" : "stages' pipeline ops",
                                ops);
  }
  return 1;
}

static plc_obj *plc_lower_ref(plc_lower *L, const char *field, int kind)
{
  plc_value *v = plc_lower_field(L, L->train, field);
  if (v && v->tag == PLC_V_OBJ && v->obj->kind == kind)
    return v->obj;
  if (!v || v->tag != PLC_V_ERR)
    plc_error(L->diag, &L->train->node->loc, "train '%s' needs a %s", L->train->name,
              plc_decl_kind_name(kind));
  return NULL;
}

/* ---- the size of the interpreter's values ------------------------------------ */

/* Every time the interpreter and the analysis compute is a sum, difference,
 * maximum or small multiple of op times (and the pins), so its denominator
 * divides the least common multiple of theirs.  Bounding that multiple (and
 * each time) by the size limit of a value (PLC_Q_MAX_BITS) bounds the cost
 * of the whole run before it starts: times like 1 s / (3^36864 + i) would
 * otherwise grow sums of millions of bits.  Returns 0 after an error
 * located at the op that passes the bound. */
typedef struct plc_lcm {
  mpz_t l;
  int ok;
  /* times found to pass (they pass again: the multiple only grows), by
   * address: a memo's copies share their times (plc_lower_replica) */
  mpq_srcptr seen[64];
  /* one-limb denominators found to divide the multiple, by value (0:
   * none), most ops' times sharing a few: the multiple only changes to a
   * multiple of itself (mpz_lcm), so such a denominator divides it from
   * then on, and dividing again would find that and change nothing
   * (tests/unit/test_lower.c compares with mpz_lcm over every op) */
  unsigned long dens[64];
} plc_lcm;

static void plc_lcm_add(plc_lower *L, plc_lcm *m, mpq_srcptr q, const plc_ast *at, const char *name)
{
  if (!m->ok)
    return;
  mpq_srcptr *seen = &m->seen[((uintptr_t)q / sizeof(mpq_t)) & 63];
  if (*seen == q)
    return;
  /* a one-limb numerator and denominator are far below the limit */
  int small = mpz_size(mpq_numref(q)) <= 1 && mpz_size(mpq_denref(q)) <= 1;
  if (!small && (mpz_sizeinbase(mpq_numref(q), 2) > PLC_Q_MAX_BITS ||
                 mpz_sizeinbase(mpq_denref(q), 2) > PLC_Q_MAX_BITS)) {
    plc_error(L->diag, &at->loc, "the time of '%s' has a numerator or denominator of more than "
              "%d bits, the size limit of a value", name, PLC_Q_MAX_BITS);
    m->ok = 0;
    return;
  }
  unsigned long d = small ? mpz_get_ui(mpq_denref(q)) : 0; /* >= 1 when small */
  unsigned long *known = &m->dens[(d * 0x9E3779B97F4A7C15ull) >> 58];
  if (small && *known == d) { /* divides: so nothing changes */
    *seen = q;
    return;
  }
  int divides = small && mpz_size(m->l) <= 1 ? mpz_get_ui(m->l) % d == 0
                                             : mpz_divisible_p(m->l, mpq_denref(q));
  if (!divides) {
    mpz_lcm(m->l, m->l, mpq_denref(q));
    if (mpz_sizeinbase(m->l, 2) > PLC_Q_MAX_BITS) {
      plc_error(L->diag, &at->loc, "the time of '%s' and the times before it have a common "
                "denominator of more than %d bits: the interpreter's sums of them would pass "
                "the size limit of a value", name, PLC_Q_MAX_BITS);
      m->ok = 0;
      return;
    }
  }
  if (small)
    *known = d;
  *seen = q;
}

static int plc_lower_check_sizes(plc_lower *L)
{
  plc_lcm m = {.ok = 1};
  mpz_init_set_ui(m.l, 1);
  plc_ir_run *r = L->run;
  mpq_ptr pins[] = {r->dp_tail, r->optimizer_time};
  static const char *const pin_names[] = {"dp_tail", "optimizer_time"};
  for (int k = 0; k < 2; k++)
    if (pins[k])
      plc_lcm_add(L, &m, pins[k], plc_lower_field_node(L->train, pin_names[k]), pin_names[k]);
  for (int s = 0; s < r->nstages && m.ok; s++) {
    const plc_ir_list *lists[3] = {&r->stages[s].fwd, &r->stages[s].bwd, &r->stages[s].step};
    /* a copied stage's layer ops have the times of the stage before */
    int from[3] = {L->copied ? L->copied[2 * s] : 0, L->copied ? L->copied[2 * s + 1] : 0, 0};
    /* and a memo copy's ops have the times of the ops it copies, before it */
    for (int k = 0; k < 3; k++)
      for (int i = from[k]; i < lists[k]->n && m.ok;) {
        const plc_ir_op *op = &lists[k]->ops[i];
        if (op->replica) {
          i += op->replica;
          continue;
        }
        plc_lcm_add(L, &m, op->time, op->node, op->name);
        i++;
      }
  }
  mpz_clear(m.l);
  return m.ok;
}

/* ---- memory first (a search's candidates) ------------------------------------ */

/* A search skips a candidate that does not fit in memory: so its memory
 * sections are summed first (before the op count's estimate too), stage
 * by stage and chunk by chunk as the lowering of its ops would (each
 * layer's forward instance, the pipeline template's forward, the step
 * template), and the driver's check (eval.h, lower_unfit) decides before
 * any op is lowered.  Within the run only the layer fields differ between
 * instances, so an instance whose memory sections read the same layer
 * fields with the same values as an earlier one adds that one's figures
 * (as the instance memo does). */
typedef struct plc_mfirst {
  const plc_ast *tmpl;
  int unit;
  int f[7];               /* the layer's fields in the order plc_lower_layer_value */
  const char *kind;       /* binds them: index, kind (f[1] unused), stage, first, last,
                             model_first, model_last */
  unsigned reads;         /* those its memory sections read: bit k, binding k (the watch) */
  int declared;           /* it has a memory section */
  mpq_ptr rec[5];
  long *count;            /* per chunk: instances since added (copies of it) */
} plc_mfirst;

typedef struct plc_mfirsts {
  plc_mfirst *v;
  int n, cap, nchunks;
  int last;               /* the one the last instance was a copy of (the next
                             layer's most likely), or -1 */
} plc_mfirsts;

/* Do the fields f read have these values? */
static int plc_mfirst_same(const plc_mfirst *f, const int *v, const char *kind)
{
  for (int k = 0; k < 7; k++)
    if ((f->reads & (1u << k)) &&
        (k == 1 ? f->kind != kind && strcmp(f->kind, kind) : f->f[k] != v[k]))
      return 0;
  return 1;
}

/* Add the copies counted so far into the stage's chunks: n copies of an
 * instance add n times its figures (buffers: the largest, once). */
static void plc_mfirst_flush(plc_mfirsts *seen, plc_ir_mem *mem)
{
  mpq_t x;
  mpq_init(x);
  for (int i = 0; i < seen->n; i++)
    for (int ch = 0; ch < seen->nchunks; ch++) {
      plc_mfirst *f = &seen->v[i];
      if (!f->count[ch])
        continue;
      for (int k = 0; k < 4; k++) {
        mpq_set_si(x, f->count[ch], 1);
        plc_q_rat_mul(x, x, f->rec[k]);
        plc_lower_mem_add(&mem[ch], k, x);
      }
      plc_lower_mem_add(&mem[ch], 4, f->rec[4]);
      f->count[ch] = 0;
    }
  mpq_clear(x);
}

/* Add the memory sections of template t's instance for the layer of
 * fields v (plc_lower_layer_value's) into chunk ch of c->mem's stage: a
 * copy of an earlier one is counted, else it is evaluated. */
static void plc_lower_mem_instance(plc_lctx *c, plc_mfirsts *seen, const plc_tmpl *t,
                                   const int *v, const char *kind, int unit, int ch)
{
  plc_lower *L = c->L;
  for (int j = -1; j < seen->n; j++) { /* the last one first */
    int i = j < 0 ? seen->last : j;
    plc_mfirst *f = i >= 0 ? &seen->v[i] : NULL;
    if (f && f->tmpl == t->decl && f->unit == unit && plc_mfirst_same(f, v, kind)) {
      f->count[ch]++;
      seen->last = i;
      return;
    }
  }
  plc_value *layer = plc_lower_layer_value(L, v[0], kind, v[2], v[3], v[4]);
  mpq_ptr rec[5];
  for (int k = 0; k < 5; k++)
    rec[k] = plc_arena_mpq(L->ar);
  c->mem_rec = rec;
  unsigned outer;
  const plc_obj *was = plc_memo_watch(L, layer, &outer);
  int declared = L->run->memory_declared;
  L->run->memory_declared = 0;
  if (L->xcache)
    plc_lower_memory_cached(c, t, layer, unit);
  else
    plc_lower_memory_only(c, t, layer);
  unsigned reads = plc_memo_unwatch(L, was, outer);
  int own = L->run->memory_declared;
  L->run->memory_declared |= declared;
  c->mem_rec = NULL;
  if (seen->n == seen->cap)
    seen->v = plc_xrealloc(seen->v, (size_t)(seen->cap = seen->cap ? 2 * seen->cap : 8) *
                           sizeof *seen->v);
  plc_mfirst *f = &seen->v[seen->n++];
  *f = (plc_mfirst){.tmpl = t->decl, .unit = unit, .kind = kind, .reads = reads, .declared = own,
                    .count = plc_arena_alloc(L->ar, (size_t)seen->nchunks * sizeof(long))};
  memcpy(f->f, v, sizeof f->f);
  memcpy(f->rec, rec, sizeof rec);
  seen->last = seen->n - 1;
}

/* Stage s's memory sections into st->mem; 0 when a template is missing
 * (lowering reports it). */
static int plc_lower_stage_memory(plc_lower *L, int s, const char **kinds, plc_mfirsts *seen)
{
  plc_ir_stage *st = &L->run->stages[s];
  plc_ir_list scratch = {0};
  plc_lctx c = {.L = L, .list = &scratch, .phase = PLC_PH_FWD};
  plc_tmpl t;
  int ok = 1, last = L->run->nstages - 1;
  for (int k = 0, chunk = 0; k < st->nlayers && ok && !PLC_LOWER_FAILED(L); k++) {
    while (k >= st->chunk_end[chunk])
      chunk++;
    const char *kind = kinds[st->layers[k]];
    int v[7] = {st->layers[k], 0, s, k == 0, k == st->nlayers - 1, st->layers[k] == 0,
                st->layers[k] == L->nlayers - 1};
    /* most layers are copies of the one before: of its kind (so of its
     * template), reading the same fields with the same values */
    plc_mfirst *f = seen->last >= 0 ? &seen->v[seen->last] : NULL;
    if (f && f->unit == 0 && f->kind == kind && plc_mfirst_same(f, v, kind)) {
      f->count[chunk]++;
      /* one that read no field but kind and stage: so does the rest of the
       * chunk's run of layers of its kind */
      if (!(f->reads & ~(2u | 4u)))
        while (k + 1 < st->chunk_end[chunk] && kinds[st->layers[k + 1]] == kind) {
          f->count[chunk]++;
          k++;
        }
      continue;
    }
    if (!(ok = plc_lower_find_template(L, kind, &t)))
      break;
    c.mem = &st->mem[chunk];
    c.layer = st->layers[k];
    plc_lower_mem_instance(&c, seen, &t, v, kind, 0, chunk);
  }
  c.layer = -1;
  if (ok && !PLC_LOWER_FAILED(L) && plc_lower_find_template(L, "pipeline", &t)) {
    int v[7] = {-1, 0, s, s == 0, s == last, 0, 0}, ch = s == last ? L->run->vpp - 1 : 0;
    c.mem = &st->mem[ch];
    plc_lower_mem_instance(&c, seen, &t, v, "pipeline", 2, ch);
  }
  if (ok && !PLC_LOWER_FAILED(L) && plc_lower_find_template(L, "step", &t)) {
    int v[7] = {-1, 0, s, s == 0, s == last, 0, 0};
    c.mem = &st->mem[0];
    plc_lower_mem_instance(&c, seen, &t, v, "step", 4, 0);
  }
  plc_mfirst_flush(seen, st->mem);
  return ok;
}

/* With the driver's check: the memory figures alone, checked; 0 when the
 * run stops here (it does not fit, or a memory section failed).  The
 * figures are computed apart and dropped: lowering the ops sums them again
 * as it always does (warnings, silenced here, are given there). */
static int plc_lower_memory_first(plc_lower *L, const char **kinds)
{
  plc_ir_run *r = L->run;
  if (!L->ev->lower_unfit)
    return 1;
  /* summed in the stages' own figures (all zero yet), zero again after */
  int declared = r->memory_declared, quiet = L->diag->no_warnings, ok = 1;
  plc_mfirsts *seen = plc_xcalloc(1, sizeof *seen);
  *seen = (plc_mfirsts){.nchunks = r->vpp, .last = -1};
  L->diag->no_warnings = 1;
  for (int s = 0; s < r->nstages && ok && !PLC_LOWER_FAILED(L); s++)
    ok = plc_lower_stage_memory(L, s, kinds, seen);
  L->diag->no_warnings = quiet;
  int stop = ok && !PLC_LOWER_FAILED(L) ? L->ev->lower_unfit(L->ev->lower_unfit_ctx, r) : 0;
  for (int s = 0; s < r->nstages; s++)
    for (int c = 0; c < r->vpp; c++)
      for (int k = 0; k < 5; k++)
        mpq_set_ui(plc_lower_mem_field(&r->stages[s].mem[c], k), 0, 1);
  r->memory_declared = declared;
  L->mfirst = seen; /* for lowering (plc_lower_memory_again) */
  if (stop == 1 && L->ev->lower_cache)
    L->ev->lower_cache->unfit++;
  return !stop && !PLC_LOWER_FAILED(L);
}

/* A template instance's memory sections, as lowering sums them (in a run
 * with the cross-candidate cache, apart from its ops): the figures memory
 * first found for an instance of the same template and unit whose memory
 * sections read the same layer fields with the same values, or evaluated
 * (plc_lower_memory_cached).  Exactly what evaluating them gives:
 * - memory first evaluated them in this run (the same run, model, device,
 *   options), with plc_lower_memory_cached, for such a layer (the
 *   instance memo's and memory first's own argument: the fields read
 *   decide what is read and so the values), and stopped the run on any
 *   error (no section warns: only lowering's op checks do);
 * - its record is the instance's own figures: weights to activations
 *   summed, buffers the largest entry (0 when none, as all are >= 0), so
 *   adding them to the chunk's totals and the instance's figures
 *   (c->mem_rec) gives the sums and the largest that adding entry by
 *   entry gives (exact rationals: the grouping makes no difference);
 * - the layer fields it read (the memo's watch) and memory_declared (set
 *   by a memory section, when c->mem is) are those of that evaluation.
 * Not with PLC_LOWER_NO_MEMO (the slow path: tests compare). */
static void plc_lower_memory_again(plc_lctx *c, const plc_tmpl *t, plc_value *layer,
                                   const plc_lfields *lf, int unit)
{
  plc_lower *L = c->L;
  const plc_mfirsts *seen = L->no_memo ? NULL : L->mfirst;
  for (int i = 0; c->mem && seen && i < seen->n; i++) {
    const plc_mfirst *f = &seen->v[i];
    if (f->tmpl != t->decl || f->unit != unit || !plc_mfirst_same(f, lf->f, lf->kind))
      continue;
    for (int k = 0; k < 5; k++) {
      plc_lower_mem_add(c->mem, k, f->rec[k]);
      if (c->mem_rec)
        plc_q_rat_add(c->mem_rec[k], c->mem_rec[k], f->rec[k]);
    }
    L->ev->watch_reads |= f->reads;
    L->run->memory_declared |= f->declared;
    return;
  }
  plc_lower_memory_cached(c, t, layer, unit);
}

/* Layers, their split, the size check, then every stage's lists. */
static int plc_lower_body(plc_lower *L)
{
  plc_lower_run_value(L);
  int nlayers;
  const char **kinds = plc_lower_layers(L, &nlayers);
  L->nlayers = nlayers;
  if (!kinds || !plc_lower_split(L, nlayers) || !plc_lower_memory_first(L, kinds) ||
      !plc_lower_estimate(L, kinds, nlayers))
    return 0;
  for (int s = 0; s < L->run->nstages; s++)
    if (!plc_lower_stage(L, s, kinds))
      return 0;
  return plc_lower_check_sizes(L);
}

/* Is o a top-level declaration's instance (the same in every candidate of
 * a search, as the names its templates see are)? */
static int plc_lower_global(plc_eval *ev, const plc_obj *o)
{
  plc_binding *b = o->name ? plc_env_find_local(ev->global, o->name) : NULL;
  return b && b->val && b->val->tag == PLC_V_OBJ && b->val->obj == o;
}

plc_ir_run *plc_lower_train(plc_eval *ev, const plc_ast *decl, plc_obj *train)
{
  /* the switches (tests): read once per cache of a search thread or plan */
  plc_lcache *X = ev->lower_cache;
  plc_lower L = {.ev = ev, .ar = ev->arena, .diag = ev->diag, .train = train,
                 .cap = PLC_LOWER_MAX_OPS, .like = -1,
                 .no_memo = X ? X->no_memo : plc_lower_env_flag("PLC_LOWER_NO_MEMO")};
  if (X && !X->no_xcache)
    L.xcache = X;
  L.errors = ev->diag->errors;
  L.run = plc_arena_alloc(ev->arena, sizeof *L.run);
  L.run->name = decl->name;
  L.run->decl = decl;
  plc_ir_stream(L.ar, L.run, "compute");
  L.model = plc_lower_ref(&L, "model", PLC_DECL_MODEL);
  L.cluster = plc_lower_ref(&L, "cluster", PLC_DECL_CLUSTER);
  L.framework = plc_lower_ref(&L, "framework", PLC_DECL_FRAMEWORK);
  const plc_obj *outer_train = ev->ctx_train, *outer_fw = ev->ctx_framework;
  ev->ctx_train = train;
  ev->ctx_framework = L.framework;
  if (L.framework && !plc_lower_global(ev, L.framework))
    L.xcache = NULL; /* its templates could read what differs between candidates */
  if (L.model && plc_lower_global(ev, L.model))
    L.model_node = L.model->node;
  int ok = L.model && L.cluster && L.framework && plc_place_run(&L) && plc_lower_body(&L);
  ev->ctx_train = outer_train;
  ev->ctx_framework = outer_fw;
  free(L.mark);
  free(L.xheld);
  free(L.memo);
  free(L.layer_map);
  if (L.mfirst)
    free(L.mfirst->v);
  free(L.mfirst);
  return ok ? L.run : NULL;
}

