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
