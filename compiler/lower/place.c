/* place.c - the layout of a train: sizes, microbatches, the cluster's tiers,
 * and the placement of each parallel dimension on a tier and its link.
 *
 * Rank order (innermost first) defaults to Megatron's tp, cp, dp, pp.  EP is
 * carved out of the dp*cp block (its ranks are consecutive there) and EDP
 * is the rest of it; FSDP's shard groups are innermost in dp and replicate
 * the rest.  A group of size n and stride s spans (n-1)*s+1 consecutive
 * ranks and runs on the link of the smallest tier that holds the span. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "lower.h"
#include "schema.h"
#include "xalloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PLC_PLACE_MAX_SIZE (1L << 24) /* plc(5) LIMITS: parallel and batch sizes */

/* ---- helpers shared with lower.c --------------------------------------- */

plc_value *plc_lower_field(plc_lower *L, plc_obj *o, const char *name)
{
  return plc_eval_field(L->ev, o, name, &L->train->node->loc);
}

const plc_ast *plc_lower_field_node(plc_obj *o, const char *name)
{
  for (plc_obj *cur = o; cur; cur = cur->base) {
    plc_binding *b = plc_env_find_local(cur->env, name);
    if (b && b->def)
      return b->def->kind == PLC_AST_SET ? b->def->a : b->def;
  }
  return o->node;
}

/* Is v a known whole number from lo to hi (*out)?  Reports nothing. */
static int plc_lower_int_ok(const plc_value *v, long lo, long hi, long *out)
{
  if (v->tag != PLC_V_NUM || !v->known || !plc_dim_is_none(v->dim))
    return 0;
  /* plc_q_get_long, read in place */
  long n = 0;
  int ok = mpz_cmp_ui(mpq_denref(v->q), 1) == 0 && mpz_fits_slong_p(mpq_numref(v->q)) &&
           (n = mpz_get_si(mpq_numref(v->q))) >= lo && n <= hi;
  if (ok)
    *out = n;
  return ok;
}

int plc_lower_int(plc_lower *L, plc_value *v, long lo, long hi, const plc_ast *at,
                  const char *what, long *out)
{
  if (v->tag == PLC_V_ERR)
    return 0;
  if (plc_lower_int_ok(v, lo, hi, out))
    return 1;
  if (v->tag != PLC_V_NUM || !v->known || !plc_dim_is_none(v->dim))
    plc_error(L->diag, &at->loc, "%s must be a known dimensionless number", what);
  else
    plc_error(L->diag, &at->loc, "%s must be a whole number from %ld to %ld", what, lo, hi);
  return 0;
}

mpq_srcptr plc_lower_num_read(plc_lower *L, plc_value *v, const int e[PLC_NDIM],
                              const plc_ast *at, const char *what)
{
  if (v->tag == PLC_V_ERR)
    return NULL;
  plc_dim d;
  memcpy(d.e, e, sizeof d.e);
  if (v->tag != PLC_V_NUM || !v->known || !plc_dim_eq(v->dim, d)) {
    char *want = plc_dim_str(d);
    plc_error(L->diag, &at->loc, "%s must be a known number in %s", what, want);
    free(want);
    return NULL;
  }
  return v->q;
}

mpq_ptr plc_lower_num(plc_lower *L, plc_value *v, const int e[PLC_NDIM], const plc_ast *at,
                      const char *what)
{
  mpq_srcptr r = plc_lower_num_read(L, v, e, at, what);
  if (!r)
    return NULL;
  mpq_ptr q = plc_arena_mpq(L->ar);
  mpq_set(q, r);
  return q;
}

/* ---- sizes --------------------------------------------------------------- */

/* 'name', for messages (a search reads these fields for every candidate:
 * snprintf was a fifth of it). */
static const char *plc_place_quoted(char what[64], const char *name)
{
  size_t n = strlen(name);
  if (n > 60)
    n = 60;
  what[0] = '\'';
  memcpy(what + 1, name, n);
  what[n + 1] = '\'';
  what[n + 2] = '\0';
  return what;
}

static int plc_place_size(plc_lower *L, const char *name, long *out)
{
  plc_value *v = plc_lower_field(L, L->train, name);
  if (!v) {
    plc_error(L->diag, &L->train->node->loc, "train '%s' needs a field '%s'", L->run->name, name);
    return 0;
  }
  if (plc_lower_int_ok(v, 1, PLC_PLACE_MAX_SIZE, out)) /* where it is set: for an error */
    return 1;
  char what[64];
  return plc_lower_int(L, v, 1, PLC_PLACE_MAX_SIZE, plc_lower_field_node(L->train, name),
                       plc_place_quoted(what, name), out);
}

/* An enum field's word: the name or string written, or dflt. */
static const char *plc_place_word(plc_lower *L, const char *name, const char *dflt)
{
  const plc_ast *n = plc_lower_field_node(L->train, name);
  if (n && (n->kind == PLC_AST_NAME || n->kind == PLC_AST_STR) && n != L->train->node)
    return n->name;
  return dflt;
}

static mpq_ptr plc_place_pin(plc_lower *L, const char *name, const int e[PLC_NDIM])
{
  const plc_ast *n = plc_lower_field_node(L->train, name);
  if (n == L->train->node)
    return NULL; /* not given */
  char what[64];
  return plc_lower_num(L, plc_lower_field(L, L->train, name), e, n, plc_place_quoted(what, name));
}

static int plc_place_sizes(plc_lower *L)
{
  plc_ir_run *r = L->run;
  static const struct { const char *name; int dim; } dims[] = {
    {"tp", PLC_PD_TP}, {"cp", PLC_PD_CP}, {"ep", PLC_PD_EP}, {"dp", PLC_PD_DP},
    {"shard", PLC_PD_SHARD}, {"replicate", PLC_PD_REPLICATE}, {"pp", PLC_PD_PP},
  };
  long v;
  for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++) {
    if (!plc_place_size(L, dims[i].name, &v))
      return 0;
    r->size[dims[i].dim] = (int)v;
  }
  long mb, gb, seq, vpp;
  if (!plc_place_size(L, "vpp", &vpp) || !plc_place_size(L, "micro_batch", &mb) ||
      !plc_place_size(L, "global_batch", &gb) || !plc_place_size(L, "seq", &seq))
    return 0;
  r->vpp = (int)vpp;
  r->micro_batch = (int)mb;
  r->global_batch = (int)gb;
  r->seq = (int)seq;
  int *s = r->size;
  const plc_ast *dpn = plc_lower_field_node(L->train, "dp");
  /* sizes are at most 2^24, so products of two fit in 64 bits */
  int64_t sr = (int64_t)s[PLC_PD_SHARD] * s[PLC_PD_REPLICATE];
  if (s[PLC_PD_DP] == 1 && sr > PLC_PLACE_MAX_SIZE) {
    plc_error(L->diag, &plc_lower_field_node(L->train, "replicate")->loc, "dp = shard x replicate "
              "(%d x %d) is larger than %ld", s[PLC_PD_SHARD], s[PLC_PD_REPLICATE],
              PLC_PLACE_MAX_SIZE);
    return 0;
  }
  if (s[PLC_PD_DP] == 1 && sr > 1)
    s[PLC_PD_DP] = (int)sr; /* FSDP/HSDP: dp = shard x replicate */
  else if (sr > 1 && sr != s[PLC_PD_DP]) {
    plc_error(L->diag, &dpn->loc, "dp (%d) must equal shard x replicate (%d x %d)", s[PLC_PD_DP],
              s[PLC_PD_SHARD], s[PLC_PD_REPLICATE]);
    return 0;
  }
  long dpcp = (long)s[PLC_PD_DP] * s[PLC_PD_CP];
  const plc_ast *edpn = plc_lower_field_node(L->train, "edp");
  if (edpn != L->train->node) { /* given: ep x edp must fill the dp x cp block */
    long edp;
    if (!plc_lower_int(L, plc_lower_field(L, L->train, "edp"), 1, PLC_PLACE_MAX_SIZE, edpn,
                       "'edp'", &edp))
      return 0;
    if (edp * s[PLC_PD_EP] != dpcp) {
      plc_error(L->diag, &edpn->loc, "ep x edp (%d x %ld) must equal dp x cp (%ld)",
                s[PLC_PD_EP], edp, dpcp);
      return 0;
    }
    s[PLC_PD_EDP] = (int)edp;
  } else if (s[PLC_PD_EP] > dpcp) { /* expert groups are carved out of the dp x cp block */
    plc_error(L->diag, &plc_lower_field_node(L->train, "ep")->loc, "ep (%d) is larger than "
              "dp x cp (%ld): expert groups are made of data-parallel ranks", s[PLC_PD_EP], dpcp);
    return 0;
  } else if (dpcp % s[PLC_PD_EP] != 0) {
    plc_warning(L->diag, &plc_lower_field_node(L->train, "ep")->loc,
                "ep (%d) does not divide dp x cp (%ld); expert groups are uneven", s[PLC_PD_EP], dpcp);
    s[PLC_PD_EDP] = 1;
  } else {
    s[PLC_PD_EDP] = (int)(dpcp / s[PLC_PD_EP]);
  }
  long per = (long)s[PLC_PD_DP] * mb;
  r->mu = gb / per;
  if (gb % per != 0 || r->mu < 1) {
    plc_warning(L->diag, &plc_lower_field_node(L->train, "global_batch")->loc,
                "global batch %ld is not divisible by dp x micro batch (%d x %ld)", gb,
                s[PLC_PD_DP], mb);
    if (r->mu < 1)
      r->mu = 1;
  }
  return 1;
}

/* The world size tp x cp x dp x pp, exactly (GMP: four sizes of up to 2^24
 * overflow 64 bits); more than the cluster's devices is an error, so every
 * product of sizes and strides placement makes later fits in an int. */
static int plc_place_world(plc_lower *L)
{
  plc_ir_run *r = L->run;
  mpz_t w;
  mpz_init_set_ui(w, 1);
  static const int dims[] = {PLC_PD_TP, PLC_PD_CP, PLC_PD_DP, PLC_PD_PP};
  for (int i = 0; i < 4; i++)
    mpz_mul_ui(w, w, (unsigned long)r->size[dims[i]]);
  int ok = mpz_cmp_si(w, r->devices) <= 0;
  if (!ok) {
    char *t = mpz_get_str(NULL, 10, w);
    plc_error(L->diag, &L->train->node->loc, "the layout needs tp x cp x dp x pp = %s devices, "
              "but cluster '%s' has %d", t, L->cluster->name, r->devices);
    plc_gmp_free_str(t);
  } else {
    r->world = (int)mpz_get_si(w);
  }
  mpz_clear(w);
  return ok;
}

/* ---- the cluster ----------------------------------------------------------- */

typedef struct plc_tier {
  const char *name;
  const char *port; /* the physical link its traffic uses (default: its name) */
  long size;
  plc_obj *link;
} plc_tier;

/* The tiers of the cluster, smallest first (the derived cluster's own, or
 * its base's). */
static int plc_place_tiers(plc_lower *L, plc_tier *t, int max)
{
  for (plc_obj *c = L->cluster; c; c = c->base) {
    int n = 0;
    for (size_t i = 0; i < c->env->n && n < max; i++) {
      plc_binding *b = &c->env->b[i];
      if (!b->def || b->def->kind != PLC_AST_DECL || b->def->op != PLC_DECL_TIER)
        continue;
      plc_value *tv = plc_eval_binding(L->ev, b, &b->def->loc);
      if (tv->tag != PLC_V_OBJ)
        return -1;
      t[n].name = b->name;
      plc_value *port = plc_lower_field_node(tv->obj, "port") == tv->obj->node
                        ? NULL : plc_lower_field(L, tv->obj, "port");
      t[n].port = port && port->tag == PLC_V_STR && port->s ? port->s : b->name;
      plc_value *size = plc_lower_field(L, tv->obj, "size");
      plc_value *link = plc_lower_field(L, tv->obj, "link");
      if (!size || !link || link->tag != PLC_V_OBJ ||
          !plc_lower_int(L, size, 1, 1L << 30, plc_lower_field_node(tv->obj, "size"),
                         "a tier's size", &t[n].size))
        return -1;
      t[n++].link = link->obj;
    }
    if (n > 0)
      return n;
  }
  plc_error(L->diag, &L->cluster->node->loc, "cluster '%s' has no tiers", L->cluster->name);
  return -1;
}

/* The device's memory capacity (optional) and the reserve the training
 * cannot use: the train's memory_reserve, else the device's. */
static int plc_place_memory(plc_lower *L, plc_obj *dev)
{
  static const int bytes[PLC_NDIM] = {1, 0, 0};
  plc_ir_run *r = L->run;
  const plc_ast *n = plc_lower_field_node(dev, "memory");
  if (n != dev->node &&
      !(r->memory = plc_lower_num(L, plc_lower_field(L, dev, "memory"), bytes, n,
                                  "a device's memory")))
    return 0;
  r->memory_reserve = plc_place_pin(L, "memory_reserve", bytes);
  plc_value *sl = plc_lower_field_node(L->train, "shared_links") == L->train->node
                  ? NULL : plc_lower_field(L, L->train, "shared_links");
  r->shared_links = !(sl && sl->tag == PLC_V_BOOL && sl->known && !sl->b);
  if (!r->memory_reserve)
    r->memory_reserve = plc_lower_num(L, plc_lower_field(L, dev, "memory_reserve"), bytes,
                                      plc_lower_field_node(dev, "memory_reserve"),
                                      "a device's memory_reserve");
  return r->memory_reserve != NULL;
}

static int plc_place_device(plc_lower *L)
{
  plc_value *d = plc_lower_field(L, L->cluster, "device");
  if (!d || d->tag != PLC_V_OBJ)
    return 0;
  L->device = d->obj;
  static const int flops_per_s[PLC_NDIM] = {0, -1, 1}, none[PLC_NDIM] = {0, 0, 0};
  mpq_ptr peak = plc_lower_num(L, plc_lower_field(L, d->obj, "peak"), flops_per_s,
                               plc_lower_field_node(d->obj, "peak"), "a device's peak");
  if (!peak)
    return 0;
  L->run->peak = peak;
  L->run->device = d->obj->name;
  if (!plc_place_memory(L, d->obj))
    return 0;
  return plc_lower_num(L, plc_lower_field(L, d->obj, "efficiency"), none,
                       plc_lower_field_node(d->obj, "efficiency"), "efficiency") != NULL;
}

/* ---- placement -------------------------------------------------------------- */

/* Strides from the rank order: tp, cp, dp, pp by default, innermost first. */
static int plc_place_strides(plc_lower *L, long stride[PLC_PD_COUNT])
{
  int order[4] = {PLC_PD_TP, PLC_PD_CP, PLC_PD_DP, PLC_PD_PP}, n = 0;
  const plc_ast *o = plc_lower_field_node(L->train, "order");
  if (o && o->kind == PLC_AST_LIST) {
    int seen[PLC_PD_COUNT] = {0};
    for (const plc_ast *x = o->list.head; x; x = x->next) {
      int d = plc_pdim_lookup(x->name);
      if (d != PLC_PD_TP && d != PLC_PD_CP && d != PLC_PD_DP && d != PLC_PD_PP) {
        plc_error(L->diag, &x->loc, "the rank order lists tp, cp, dp and pp only (ep, edp, "
                  "shard and replicate are placed inside dp)");
        return 0;
      }
      if (seen[d]++) {
        plc_error(L->diag, &x->loc, "'%s' appears twice in the rank order", x->name);
        return 0;
      }
      order[n++] = d;
    }
    int defaults[4] = {PLC_PD_TP, PLC_PD_CP, PLC_PD_DP, PLC_PD_PP};
    for (int i = 0; i < 4; i++)
      if (!seen[defaults[i]])
        order[n++] = defaults[i];
  }
  long s = 1;
  for (int i = 0; i < 4; i++) {
    stride[order[i]] = s;
    s *= L->run->size[order[i]];
  }
  long inner = stride[PLC_PD_CP] < stride[PLC_PD_DP] ? stride[PLC_PD_CP] : stride[PLC_PD_DP];
  if (L->run->size[PLC_PD_CP] == 1)
    inner = stride[PLC_PD_DP];
  stride[PLC_PD_EP] = inner;
  stride[PLC_PD_EDP] = inner * L->run->size[PLC_PD_EP];
  stride[PLC_PD_SHARD] = stride[PLC_PD_DP];
  stride[PLC_PD_REPLICATE] = stride[PLC_PD_DP] * L->run->size[PLC_PD_SHARD];
  return 1;
}

/* The train's `links { dim = link }` override for a dimension, or NULL. */
static plc_obj *plc_place_override(plc_lower *L, const char *dim)
{
  plc_value *links = plc_lower_field(L, L->train, "links");
  if (!links || links->tag != PLC_V_OBJ)
    return NULL;
  plc_value *l = plc_eval_field(L->ev, links->obj, dim, &L->train->node->loc);
  return l && l->tag == PLC_V_OBJ ? l->obj : NULL;
}

static int plc_place_dims(plc_lower *L, const plc_tier *t, int nt, plc_obj **links)
{
  long stride[PLC_PD_COUNT];
  if (!plc_place_strides(L, stride))
    return 0;
  for (int d = 0; d < PLC_PD_COUNT; d++) {
    plc_ir_place *p = &L->run->place[d];
    p->size = L->run->size[d];
    p->stride = (int)stride[d];
    p->span = (long)(p->size - 1) * stride[d] + 1; /* < 2^24 x 2^30: no overflow */
    int k = 0;
    while (k < nt && t[k].size < p->span)
      k++;
    if (k == nt && p->size > 1) {
      plc_error(L->diag, &plc_lower_field_node(L->train, plc_pdim_name(d))->loc,
                "%s groups span %ld ranks, but the cluster's largest tier '%s' has %ld devices",
                plc_pdim_name(d), p->span, t[nt - 1].name, t[nt - 1].size);
      return 0;
    }
    if (k == nt)
      k = 0;
    p->tier = t[k].name;
    p->port = t[k].port;
    links[d] = plc_place_override(L, plc_pdim_name(d));
    p->overridden = links[d] != NULL;
    if (!links[d])
      links[d] = t[k].link;
    p->link = links[d]->name;
  }
  return 1;
}

/* Warnings of the article's rules (CH 12.2) about a layout. */
static void plc_place_lint(plc_lower *L, const plc_tier *t)
{
  plc_ir_run *r = L->run;
  static const int inner[] = {PLC_PD_TP, PLC_PD_CP};
  for (int i = 0; i < 2; i++) {
    const plc_ir_place *p = &r->place[inner[i]];
    if (p->size > 1 && p->span > t[0].size)
      plc_warning(L->diag, &plc_lower_field_node(L->train, plc_pdim_name(inner[i]))->loc,
                  "%s groups span %ld ranks, more than one '%s' (%ld devices): %s traffic "
                  "leaves the node", plc_pdim_name(inner[i]), p->span, t[0].name, t[0].size,
                  plc_pdim_name(inner[i]));
  }
  if (r->size[PLC_PD_PP] > 1 && r->mu < r->size[PLC_PD_PP])
    plc_warning(L->diag, &plc_lower_field_node(L->train, "global_batch")->loc,
                "%ld microbatches per step is fewer than the %d pipeline stages: the pipeline "
                "never fills", r->mu, r->size[PLC_PD_PP]);
}

/* The preconditions of the pipeline schedules, where their implementations
 * assert them: DualPipe (github.com/deepseek-ai/DualPipe, dualpipe.py,
 * DualPipe.step) needs an even number of ranks and an even number of
 * microbatches, at least twice the ranks; DualPipeV (dualpipev.py,
 * DualPipeV.step) at least twice the ranks' microbatches, and its two
 * chunks per stage in a V are the run's virtual chunks (vpp becomes 2: a
 * plan's vpp must stay 1, as MindSpeed's dualpipev excludes VPP);
 * Megatron-LM's interleaved 1F1B
 * needs more than one virtual stage and (core/pipeline_parallel/
 * schedules.py) a number of microbatches divisible by pp. */
/* schedule = custom: the stages' orders, one string per stage, kept with
 * their locations; the engine parses and checks them. */
static int plc_place_order(plc_lower *L, const plc_ast *at, long p)
{
  plc_ir_run *r = L->run;
  const plc_ast *n = plc_lower_field_node(L->train, "schedule_order");
  if (n == L->train->node) {
    plc_error(L->diag, &at->loc, "schedule custom needs 'schedule_order': one string of blocks "
              "per stage (\"F0 F1 B0 ...\")");
    return 0;
  }
  plc_value *v = plc_lower_field(L, L->train, "schedule_order");
  if (v->tag == PLC_V_ERR)
    return 0;
  if (v->tag != PLC_V_LIST || (long)v->n != p) {
    plc_error(L->diag, &n->loc, "'schedule_order' must list %ld strings, one per stage", p);
    return 0;
  }
  r->norder = (int)p;
  r->order_node = n;
  r->order = plc_arena_alloc(L->ar, (size_t)p * sizeof *r->order);
  r->order_at = plc_arena_alloc(L->ar, (size_t)p * sizeof *r->order_at);
  const plc_ast *item = n->kind == PLC_AST_LIST ? n->list.head : NULL;
  for (long s = 0; s < p; s++, item = item ? item->next : NULL) {
    r->order_at[s] = item ? item : n;
    if (v->items[s]->tag != PLC_V_STR) {
      plc_error(L->diag, &r->order_at[s]->loc, "a stage's order must be a string");
      return 0;
    }
    r->order[s] = v->items[s]->s;
  }
  return 1;
}

static int plc_place_schedule(plc_lower *L)
{
  plc_ir_run *r = L->run;
  const plc_ast *at = plc_lower_field_node(L->train, "schedule");
  long p = r->size[PLC_PD_PP];
  if (!strcmp(r->schedule, "dualpipe")) {
    if (p % 2) {
      plc_error(L->diag, &at->loc, "schedule dualpipe needs an even pp (DualPipe runs two "
                "pipelines in opposite directions over halves of the stages); pp is %ld", p);
      return 0;
    }
    if (r->mu % 2 || r->mu < 2 * p) {
      plc_error(L->diag, &at->loc, "schedule dualpipe needs an even number of microbatches, "
                "at least 2 x pp = %ld; there are %ld", 2 * p, r->mu);
      return 0;
    }
  } else if (!strcmp(r->schedule, "dualpipev")) {
    if (r->vpp != 1) {
      plc_error(L->diag, &plc_lower_field_node(L->train, "vpp")->loc, "schedule dualpipev "
                "places two model chunks per stage in a V (stage s holds chunks s and 2 pp - 1 - "
                "s); vpp must be 1, not %d", r->vpp);
      return 0;
    }
    if (r->mu < 2 * p) {
      plc_error(L->diag, &at->loc, "schedule dualpipev needs at least 2 x pp = %ld microbatches; "
                "there are %ld", 2 * p, r->mu);
      return 0;
    }
    r->vpp = 2;
  } else if (!strcmp(r->schedule, "interleaved")) {
    if (r->vpp < 2) {
      plc_error(L->diag, &at->loc, "schedule interleaved needs vpp > 1 (with one virtual stage "
                "it is 1f1b)");
      return 0;
    }
    if (r->mu >= p && r->mu % p) /* fewer than pp has its own warning */
      plc_warning(L->diag, &at->loc, "Megatron-LM's interleaved schedule needs the number of "
                  "microbatches (%ld) to be a multiple of pp (%ld)", r->mu, p);
  } else if (!strcmp(r->schedule, "custom")) {
    return plc_place_order(L, at, p);
  }
  const plc_ast *order = plc_lower_field_node(L->train, "schedule_order");
  if (order != L->train->node) {
    plc_error(L->diag, &order->loc, "'schedule_order' is for schedule = custom (the schedule is "
              "%s)", r->schedule);
    return 0;
  }
  if (r->vpp > 1 && strcmp(r->schedule, "interleaved") && strcmp(r->schedule, "dualpipe") &&
      strcmp(r->schedule, "dualpipev")) {
    plc_warning(L->diag, &plc_lower_field_node(L->train, "vpp")->loc, "vpp = %d with schedule "
                "%s: the layers are split into pp x vpp chunks, but the %s bubble does not "
                "depend on vpp", r->vpp, r->schedule, r->schedule);
  }
  return 1;
}

int plc_place_run(plc_lower *L)
{
  plc_ir_run *r = L->run;
  if (!plc_place_sizes(L))
    return 0;
  r->recompute = 0;
  const char *rc = plc_place_word(L, "recompute", "none");
  r->recompute = !strcmp(rc, "full") ? 2 : !strcmp(rc, "selective") ? 1 : 0;
  r->schedule = plc_place_word(L, "schedule", r->vpp > 1 ? "interleaved" : "1f1b");
  static const int secs[PLC_NDIM] = {0, 1, 0}, none[PLC_NDIM] = {0, 0, 0};
  r->dp_hidden = plc_place_pin(L, "dp_hidden", none);
  r->dp_tail = plc_place_pin(L, "dp_tail", secs);
  r->optimizer_time = plc_place_pin(L, "optimizer_time", secs);
  if (!plc_place_schedule(L) || !plc_place_device(L))
    return 0;
  plc_tier tiers[16];
  int nt = plc_place_tiers(L, tiers, 16);
  if (nt < 0)
    return 0;
  r->devices = (int)tiers[nt - 1].size;
  if (!plc_place_world(L))
    return 0;
  if (r->world < r->devices)
    plc_warning(L->diag, &L->train->node->loc, "the layout uses tp x cp x dp x pp = %d of the "
                "%d devices of cluster '%s'", r->world, r->devices, L->cluster->name);
  if (!plc_place_dims(L, tiers, nt, L->links))
    return 0;
  plc_place_lint(L, tiers);
  return !PLC_LOWER_FAILED(L);
}
