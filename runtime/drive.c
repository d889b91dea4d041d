/* drive.c - from a checked program to reports and decided assertions. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "drive.h"
#include "lower.h"
#include "sensitivity.h"
#include "xalloc.h"

#include <stdlib.h>
#include <string.h>

static plc_value *plc_drive_result(plc_eval *ev, plc_obj *train, const char *name);

void plc_drive_init(plc_drive *d, plc_sema *s, plc_program *p, const plc_report_opts *o)
{
  memset(d, 0, sizeof *d);
  d->sema = s;
  d->prog = p;
  d->opts = *o;
  s->ev.abstract = 0;
  s->ev.result = plc_drive_result;
  s->ev.result_ctx = d;
  plc_env_forget_unknown(s->ev.global);
}

void plc_drive_free(plc_drive *d)
{
  for (int i = 0; i < d->nruns; i++)
    if (d->runs[i].state == 1)
      plc_result_free(&d->runs[i].res);
  free(d->runs);
}

static void plc_drive_collect(const plc_ast *file, const plc_ast ***out, int *n, int reports)
{
  for (const plc_ast *it = file->list.head; it; it = it->next) {
    const plc_ast_list *names = NULL;
    if (reports && it->kind == PLC_AST_REPORT)
      names = &it->list;
    if (!reports && it->kind == PLC_AST_DECL && it->op == PLC_DECL_TRAIN) {
      *out = plc_xrealloc(*out, (size_t)(*n + 1) * sizeof **out);
      (*out)[(*n)++] = it;
    }
    for (const plc_ast *x = names ? names->head : NULL; x; x = x->next) {
      *out = plc_xrealloc(*out, (size_t)(*n + 1) * sizeof **out);
      (*out)[(*n)++] = x; /* a NAME; resolved by plc_drive_train's caller */
    }
  }
}

int plc_drive_select(plc_drive *d, plc_ast *const *files, int nfiles, const plc_ast ***out)
{
  int n = 0;
  *out = NULL;
  for (int f = 0; f < nfiles; f++)
    plc_drive_collect(files[f], out, &n, 1);
  if (n > 0) { /* report statements name trains: find their declarations */
    int k = 0;
    for (int i = 0; i < n; i++) { /* each train once, in the order first named */
      plc_binding *b = plc_env_find_local(d->sema->ev.global, (*out)[i]->name);
      const plc_ast *decl = b ? b->def : NULL;
      int seen = 0;
      for (int j = 0; j < k && !seen; j++)
        seen = (*out)[j] == decl;
      if (!seen)
        (*out)[k++] = decl;
    }
    return k;
  }
  for (int f = 0; f < nfiles; f++)
    plc_drive_collect(files[f], out, &n, 0);
  return n;
}

plc_drive_run *plc_drive_train(plc_drive *d, const plc_ast *decl)
{
  for (int i = 0; i < d->nruns; i++)
    if (d->runs[i].decl == decl)
      return d->runs[i].state == 1 ? &d->runs[i] : NULL;
  d->runs = plc_xrealloc(d->runs, (size_t)(d->nruns + 1) * sizeof *d->runs);
  plc_drive_run *r = &d->runs[d->nruns++];
  memset(r, 0, sizeof *r);
  r->decl = decl;
  r->state = -1;
  plc_eval *ev = &d->sema->ev;
  plc_binding *b = plc_env_find_local(ev->global, decl->name);
  plc_value *v = b ? plc_eval_binding(ev, b, &decl->loc) : NULL;
  if (!v || v->tag != PLC_V_OBJ)
    return NULL;
  r->ir = plc_lower_train(ev, decl, v->obj);
  if (!r->ir)
    return NULL;
  plc_analyse(&r->res, r->ir);
  plc_sensitivity(&r->res, r->ir);
  r->state = 1;
  return r;
}

/* The evaluator asks for a train's results: evaluate it on demand. */
static plc_value *plc_drive_result(plc_eval *ev, plc_obj *train, const char *name)
{
  plc_drive *d = ev->result_ctx;
  if (!train->node)
    return NULL;
  plc_drive_run *r = plc_drive_train(d, train->node);
  if (!r)
    return plc_value_err(ev);
  plc_quantity q;
  plc_q_init(&q);
  plc_value *v = plc_report_figure(&r->res, name, &q) ? plc_value_num(ev, &q) : NULL;
  plc_q_clear(&q);
  if (!v) {
    plc_error(ev->diag, &train->node->loc, "train '%s' has no %s (its compute times are "
              "pinned, so its FLOPs are unknown)", train->name, name);
    v = plc_value_err(ev);
  }
  return v;
}

static void plc_drive_show(plc_drive *d, const plc_value *v, char *buf, size_t n)
{
  if (v->tag == PLC_V_NUM && v->known) {
    plc_quantity q;
    plc_q_init(&q);
    mpq_set(q.v, v->q);
    q.dim = v->dim;
    char *s = plc_q_format(&q, d->opts.digits + 2, d->opts.exact);
    snprintf(buf, n, "%s", s);
    free(s);
    plc_q_clear(&q);
  } else {
    snprintf(buf, n, "%s", v->tag == PLC_V_BOOL ? (v->b ? "true" : "false") : "?");
  }
}

/* A failed assertion shows the values it compared. */
static void plc_drive_assert(plc_drive *d, const plc_ast *it)
{
  plc_eval *ev = &d->sema->ev;
  plc_value *v = plc_eval_expr(ev, it->a, ev->global);
  if (v->tag != PLC_V_BOOL || !v->known || v->b)
    return;
  const plc_ast *e = it->a;
  if (e->kind == PLC_AST_BINARY && e->op >= PLC_OP_EQ && e->op <= PLC_OP_GE) {
    char l[128], r[128];
    plc_drive_show(d, plc_eval_expr(ev, e->a, ev->global), l, sizeof l);
    plc_drive_show(d, plc_eval_expr(ev, e->b, ev->global), r, sizeof r);
    plc_error(d->prog->diag, &it->loc, "assertion failed%s%s: %s %s %s is false", it->b ? ": " : "",
              it->b ? it->b->name : "", l, plc_ast_op_name(e->op), r);
  } else {
    plc_error(d->prog->diag, &it->loc, "assertion failed%s%s", it->b ? ": " : "",
              it->b ? it->b->name : "");
  }
}

void plc_drive_asserts(plc_drive *d)
{
  for (size_t f = 0; f < d->prog->nfiles; f++)
    for (const plc_ast *it = d->prog->files[f]->list.head; it; it = it->next)
      if (it->kind == PLC_AST_ASSERT)
        plc_drive_assert(d, it);
}
