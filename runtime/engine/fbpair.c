/* fbpair.c - DualPipe's F&B block as one list (fbpair.h). */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "fbpair.h"
#include "xalloc.h"

#include <stdlib.h>

int plc_fb_segments(const plc_ir_list *l, const int *map, int *seg)
{
  int cur = 0, i = 0;
  for (; i < l->n && l->ops[i].layer >= 0; i++) {
    const plc_ir_op *op = &l->ops[i];
    if ((!map || map[i] >= 0) && op->stream == 0)
      for (int d = 0; d < op->ndeps; d++)
        if (l->ops[op->deps[d]].stream != 0) {
          cur++;
          break;
        }
    seg[i] = cur;
  }
  return i;
}

/* Append a part's ops [from, to) to the merged list, noting where each
 * went in pos. */
static void plc_fb_take(plc_fb_list *m, int *pos, int from, int to)
{
  for (int i = from; i < to; i++)
    pos[i] = m->list.n++;
}

/* Copy part l's ops to their places, their dependencies renumbered. */
static size_t plc_fb_copy(plc_fb_list *m, const plc_ir_list *l, const int *pos, size_t used)
{
  for (int i = 0; i < l->n; i++) {
    plc_ir_op o = l->ops[i];
    o.deps = m->pool + used;
    for (int d = 0; d < o.ndeps; d++)
      o.deps[d] = pos[l->ops[i].deps[d]];
    used += (size_t)o.ndeps;
    m->list.ops[pos[i]] = o;
  }
  return used;
}

void plc_fb_merge(const plc_ir_list *f, const plc_ir_list *b, plc_fb_list *out)
{
  const plc_ir_list *part[2] = {b, f}; /* the backward's segment first */
  int *seg[2], *pos[2], tail[2], at[2] = {0, 0};
  size_t nd = 1;
  for (int q = 0; q < 2; q++) {
    seg[q] = plc_xmalloc(((size_t)part[q]->n + 1) * sizeof *seg[q]);
    pos[q] = plc_xmalloc(((size_t)part[q]->n + 1) * sizeof *pos[q]);
    tail[q] = plc_fb_segments(part[q], NULL, seg[q]);
    for (int i = 0; i < part[q]->n; i++)
      nd += (size_t)part[q]->ops[i].ndeps;
  }
  out->list.n = 0;
  out->list.cap = f->n + b->n;
  out->list.ops = plc_xmalloc(((size_t)out->list.cap + 1) * sizeof *out->list.ops);
  out->pool = plc_xmalloc(nd * sizeof *out->pool);
  for (int cur = 0; at[0] < tail[0] || at[1] < tail[1]; cur++)
    for (int q = 0; q < 2; q++) {
      int from = at[q];
      while (at[q] < tail[q] && seg[q][at[q]] <= cur)
        at[q]++;
      plc_fb_take(out, pos[q], from, at[q]);
    }
  plc_fb_take(out, pos[1], tail[1], f->n); /* the forward's sends, then the backward's */
  plc_fb_take(out, pos[0], tail[0], b->n);
  size_t used = plc_fb_copy(out, b, pos[0], 0);
  plc_fb_copy(out, f, pos[1], used);
  for (int q = 0; q < 2; q++) {
    free(seg[q]);
    free(pos[q]);
  }
}

void plc_fb_free(plc_fb_list *m)
{
  free(m->list.ops);
  free(m->pool);
  m->list.ops = NULL;
  m->pool = NULL;
}
