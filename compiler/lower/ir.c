/* ir.c - names, construction and printing of the lowered ops. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "ir.h"
#include "quantity.h"

#include <stdlib.h>
#include <string.h>

static const char *const plc_opk_names[PLC_OPK_COUNT] = {
  "compute", "all_reduce", "all_gather", "reduce_scatter", "all_to_all", "p2p", "broadcast",
};

static const char *const plc_pdim_names[PLC_PD_COUNT] = {
  "tp", "cp", "ep", "dp", "edp", "shard", "replicate", "pp",
};

const char *plc_opk_name(plc_opk k) { return plc_opk_names[k]; }
const char *plc_pdim_name(plc_pdim d) { return plc_pdim_names[d]; }

const char *plc_phase_name(plc_phase p)
{
  static const char *const names[] = {"fwd", "recomp", "bwd", "step"};
  return names[p];
}

static int plc_ir_find(const char *const *names, int n, const char *name)
{
  for (int i = 0; i < n; i++)
    if (!strcmp(names[i], name))
      return i;
  return -1;
}

int plc_opk_lookup(const char *name) { return plc_ir_find(plc_opk_names, PLC_OPK_COUNT, name); }
int plc_pdim_lookup(const char *name) { return plc_ir_find(plc_pdim_names, PLC_PD_COUNT, name); }

void plc_ir_reserve(plc_arena *ar, plc_ir_list *l, int more)
{
  if (l->n + more <= l->cap)
    return;
  int cap = l->cap ? l->cap * 2 : 16;
  while (cap < l->n + more)
    cap *= 2;
  plc_ir_op *ops = plc_arena_alloc_raw(ar, (size_t)cap * sizeof *ops); /* [0, n) only */
  if (l->n)
    memcpy(ops, l->ops, (size_t)l->n * sizeof *ops);
  l->ops = ops;
  l->cap = cap;
}

int plc_ir_push(plc_arena *ar, plc_ir_list *l, const plc_ir_op *op)
{
  plc_ir_reserve(ar, l, 1);
  l->ops[l->n] = *op;
  return l->n++;
}

int plc_ir_stream(plc_arena *ar, plc_ir_run *r, const char *name)
{
  int i = plc_ir_find(r->streams, r->nstreams, name);
  if (i >= 0)
    return i;
  const char **s = plc_arena_alloc(ar, (size_t)(r->nstreams + 1) * sizeof *s);
  if (r->nstreams)
    memcpy(s, r->streams, (size_t)r->nstreams * sizeof *s);
  s[r->nstreams] = name;
  r->streams = s;
  return r->nstreams++;
}

/* ---- sameness (plc_ir_run_same) --------------------------------------------------- */

/* Two rationals of the IR, either NULL: both NULL, or equal values (the
 * same address most often: lowering shares a memo's and a cache's times). */
static int plc_ir_q_same(mpq_srcptr a, mpq_srcptr b)
{
  if (a == b)
    return 1;
  return a && b && mpq_equal(a, b);
}

static int plc_ir_s_same(const char *a, const char *b)
{
  return a == b || (a && b && !strcmp(a, b));
}

static int plc_ir_op_same(const plc_ir_op *x, const plc_ir_op *y)
{
  return x->layer == y->layer && x->phase == y->phase && x->kind == y->kind &&
         x->dim == y->dim && x->group == y->group && x->stream == y->stream &&
         x->ndeps == y->ndeps && x->useful == y->useful && x->once == y->once &&
         x->wgrad == y->wgrad && x->pinned == y->pinned && x->chunk == y->chunk &&
         x->after_layers == y->after_layers && x->replica == y->replica && x->node == y->node &&
         (x->ndeps == 0 || !memcmp(x->deps, y->deps, (size_t)x->ndeps * sizeof *x->deps)) &&
         plc_ir_q_same(x->time, y->time) && plc_ir_q_same(x->flops, y->flops) &&
         plc_ir_q_same(x->size, y->size) && plc_ir_s_same(x->name, y->name);
}

static int plc_ir_list_same(const plc_ir_list *a, const plc_ir_list *b)
{
  if (a->n != b->n)
    return 0;
  for (int i = 0; i < a->n; i++)
    if (!plc_ir_op_same(&a->ops[i], &b->ops[i]))
      return 0;
  return 1;
}

static int plc_ir_place_same(const plc_ir_place *a, const plc_ir_place *b)
{
  if (a->size != b->size || a->stride != b->stride || a->span != b->span ||
      a->overridden != b->overridden || !plc_ir_s_same(a->tier, b->tier) ||
      !plc_ir_s_same(a->port, b->port) || !plc_ir_s_same(a->link, b->link) ||
      !plc_ir_q_same(a->latency, b->latency))
    return 0;
  for (int k = 0; k < PLC_OPK_COUNT; k++)
    if (!plc_ir_q_same(a->bw[k], b->bw[k]))
      return 0;
  return 1;
}

static int plc_ir_mem_same(const plc_ir_mem *a, const plc_ir_mem *b)
{
  return plc_ir_q_same(a->weights, b->weights) && plc_ir_q_same(a->grads, b->grads) &&
         plc_ir_q_same(a->optimizer, b->optimizer) &&
         plc_ir_q_same(a->activations, b->activations) &&
         plc_ir_q_same(a->buffers, b->buffers);
}

/* Stage s of both runs, vpp chunks each. */
static int plc_ir_stage_same(const plc_ir_stage *a, const plc_ir_stage *b, int vpp)
{
  if (a->nlayers != b->nlayers ||
      (a->nlayers && memcmp(a->layers, b->layers, (size_t)a->nlayers * sizeof *a->layers)))
    return 0;
  if (!a->chunk_end != !b->chunk_end || !a->mem != !b->mem)
    return 0;
  for (int c = 0; c < vpp; c++)
    if ((a->chunk_end && a->chunk_end[c] != b->chunk_end[c]) ||
        (a->mem && !plc_ir_mem_same(&a->mem[c], &b->mem[c])))
      return 0;
  return plc_ir_list_same(&a->fwd, &b->fwd) && plc_ir_list_same(&a->bwd, &b->bwd) &&
         plc_ir_list_same(&a->step, &b->step);
}

/* The run's own fields: layout, schedule, device, pins, memory, streams;
 * not its declaration (a search's candidates have one each), which only
 * reports read, for where the train is. */
static int plc_ir_head_same(const plc_ir_run *a, const plc_ir_run *b)
{
  if (memcmp(a->size, b->size, sizeof a->size) || a->vpp != b->vpp ||
      a->micro_batch != b->micro_batch || a->global_batch != b->global_batch ||
      a->seq != b->seq || a->world != b->world || a->devices != b->devices || a->mu != b->mu ||
      a->recompute != b->recompute || a->norder != b->norder || a->order_node != b->order_node ||
      a->memory_declared != b->memory_declared || a->shared_links != b->shared_links ||
      a->nstreams != b->nstreams || a->nstages != b->nstages ||
      !plc_ir_s_same(a->name, b->name) || !plc_ir_s_same(a->schedule, b->schedule) ||
      !plc_ir_s_same(a->device, b->device) || !plc_ir_q_same(a->peak, b->peak) ||
      !plc_ir_q_same(a->model_flops, b->model_flops) ||
      !plc_ir_q_same(a->dp_hidden, b->dp_hidden) || !plc_ir_q_same(a->dp_tail, b->dp_tail) ||
      !plc_ir_q_same(a->optimizer_time, b->optimizer_time) ||
      !plc_ir_q_same(a->memory, b->memory) ||
      !plc_ir_q_same(a->memory_reserve, b->memory_reserve))
    return 0;
  for (int i = 0; i < a->norder; i++)
    if (!plc_ir_s_same(a->order[i], b->order[i]) || a->order_at[i] != b->order_at[i])
      return 0;
  for (int i = 0; i < a->nstreams; i++)
    if (!plc_ir_s_same(a->streams[i], b->streams[i]))
      return 0;
  for (int d = 0; d < PLC_PD_COUNT; d++)
    if (!plc_ir_place_same(&a->place[d], &b->place[d]))
      return 0;
  return 1;
}

int plc_ir_run_same(const plc_ir_run *a, const plc_ir_run *b)
{
  if (!plc_ir_head_same(a, b))
    return 0;
  for (int s = 0; s < a->nstages; s++)
    if (!plc_ir_stage_same(&a->stages[s], &b->stages[s], a->vpp))
      return 0;
  return 1;
}

static void plc_ir_dump_q(FILE *out, const char *label, mpq_srcptr v, int b, int s, int f)
{
  char *t = plc_q_format_raw(v, b, s, f, 0, 1);
  fprintf(out, " %s=%s", label, t);
  free(t);
}

static void plc_ir_dump_list(FILE *out, const plc_ir_run *r, int stage, const char *phase,
                             const plc_ir_list *l)
{
  for (int i = 0; i < l->n; i++) {
    const plc_ir_op *op = &l->ops[i];
    fprintf(out, "stage %d %s #%d %s layer=%d %s", stage, phase, i, plc_phase_name(op->phase),
            op->layer, op->name);
    fprintf(out, " %s", plc_opk_name(op->kind));
    if (op->kind != PLC_OPK_COMPUTE)
      fprintf(out, "(%s n=%d)", plc_pdim_name(op->dim), op->group);
    fprintf(out, " stream=%s deps=[", r->streams[op->stream]);
    for (int d = 0; d < op->ndeps; d++)
      fprintf(out, "%s%d", d ? "," : "", op->deps[d]);
    fputc(']', out);
    if (op->kind == PLC_OPK_COMPUTE && mpq_sgn(op->flops))
      plc_ir_dump_q(out, "flops", op->flops, 0, 0, 1);
    if (op->kind != PLC_OPK_COMPUTE)
      plc_ir_dump_q(out, "size", op->size, 1, 0, 0);
    plc_ir_dump_q(out, "time", op->time, 0, 1, 0);
    if (op->useful)
      fputs(" useful", out);
    if (op->once)
      fputs(" once", out);
    if (op->wgrad) /* t_w of ZB-H1 and DualPipe sums these */
      fputs(" wgrad", out);
    if (op->pinned)
      fputs(" pinned", out);
    if (r->vpp > 1) /* the virtual chunk the whole-step simulation runs it in */
      fprintf(out, " chunk=%d", op->chunk);
    fputc('\n', out);
  }
}

void plc_ir_dump(FILE *out, const plc_ir_run *r)
{
  fprintf(out, "train %s: world=%d mu=%ld schedule=%s vpp=%d\n", r->name, r->world, r->mu,
          r->schedule, r->vpp);
  for (int d = 0; d < PLC_PD_COUNT; d++) {
    const plc_ir_place *p = &r->place[d];
    if (p->size > 1)
      fprintf(out, "place %s size=%d stride=%d span=%ld tier=%s link=%s\n", plc_pdim_name(d),
              p->size, p->stride, p->span, p->tier, p->link);
  }
  for (int s = 0; s < r->nstages; s++) {
    const plc_ir_stage *st = &r->stages[s];
    plc_ir_dump_list(out, r, s, "fwd", &st->fwd);
    plc_ir_dump_list(out, r, s, "bwd", &st->bwd);
    plc_ir_dump_list(out, r, s, "step", &st->step);
  }
}
