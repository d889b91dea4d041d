/* drive.c - from a checked program to reports and decided assertions. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "drive.h"
#include "blocks.h"
#include "lower.h"
#include "memory.h"
#include "runsched.h"
#include "sensitivity.h"
#include "xalloc.h"

#include <stdlib.h>
#include <string.h>

static plc_value *plc_drive_result(plc_eval *ev, plc_obj *train, const char *name,
                                   const plc_loc *at);

void plc_drive_init(plc_drive *d, plc_sema *s, plc_program *p, const plc_report_opts *o)
{
  memset(d, 0, sizeof *d);
  d->sema = s;
  d->prog = p;
  d->opts = *o;
  d->sensitivity = 1;
  s->ev.abstract = 0;
  s->ev.result = plc_drive_result;
  s->ev.result_ctx = d;
  plc_env_forget_unknown(s->ev.global);
}

void plc_drive_free(plc_drive *d)
{
  for (int i = 0; i < d->nruns; i++) {
    if (d->runs[i]->state == PLC_RUN_DONE)
      plc_result_free(&d->runs[i]->res);
    free(d->runs[i]);
  }
  free(d->runs);
}

static void plc_drive_collect(const plc_ast *file, const plc_ast ***out, int *n, int reports)
{
  for (const plc_ast *it = file->list.head; it; it = it->next) {
    const plc_ast_list *names = NULL;
    if (reports && it->kind == PLC_AST_REPORT)
      names = &it->list;
    if (!reports && it->kind == PLC_AST_DECL &&
        (it->op == PLC_DECL_TRAIN || it->op == PLC_DECL_SEARCH)) {
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

/* Errors reported since `before`, leaving out warnings that -Werror
 * turned into errors: those do not make a run's figures wrong. */
static int plc_drive_new_errors(const plc_diag *g, int before_errors, int before_promoted)
{
  return g->errors - before_errors > g->promoted - before_promoted;
}

/* A layout whose busiest device needs more memory than it has is a
 * warning at the train (an error under -Werror): its figures are still
 * worth reading, e.g. to compare with one that fits.  Returns whether it
 * does not fit. */
static int plc_drive_memory_warn(plc_drive *d, const plc_drive_run *r, const plc_mem *m)
{
  if (!m || !m->known || !m->capacity_known || m->fits)
    return 0;
  const plc_mem_stage *st = &m->st[m->worst];
  char *need = plc_q_format_raw(st->peak, 1, 0, 0, 4, 0);
  char *have = plc_q_format_raw(m->usable, 1, 0, 0, 4, 0);
  char *cap = plc_q_format_raw(m->capacity, 1, 0, 0, 4, 0);
  plc_warning(d->sema->ev.diag, &r->decl->loc, "train '%s' does not fit in memory: stage %d "
              "needs %s at its peak, the device has %s usable (%s less the reserve)",
              r->decl->name, m->worst, need, have, cap);
  free(need);
  free(have);
  free(cap);
  return 1;
}

/* With unfit_stops: the memory alone, before the analysis; 1 when the run
 * does not fit (warned, and the run fails). */
static int plc_drive_unfit(plc_drive *d, const plc_drive_run *r)
{
  if (!d->unfit_stops || r->mem_checked) /* checked before its ops already */
    return 0;
  plc_mem m;
  plc_mem_analyse(&m, r->ir);
  int unfit = plc_drive_memory_warn(d, r, &m);
  plc_mem_free(&m);
  d->unfit_seen |= unfit;
  return unfit;
}

/* With unfit_stops, lowering calls this once the run's memory sections are
 * summed, before any op is lowered (eval.h, lower_unfit): 1 when the run
 * does not fit, 2 when it fits but, with warn_stops, its placement warned
 * (lowering then stops and the run fails: the search skips it under that
 * warning without lowering its ops).  A run that fails anyway before the
 * memory check (an error so far, an error value read, a custom order that
 * cannot run) is not checked here: lowering goes on and it fails as it
 * would. */
static int plc_drive_unfit_early(void *ctx, const plc_ir_run *run)
{
  plc_drive *d = ctx;
  plc_drive_run *r = d->current;
  plc_eval *ev = &d->sema->ev;
  if (!r || !d->unfit_stops || r->poisoned || ev->err_reads != r->err_reads0 ||
      plc_drive_new_errors(ev->diag, r->errors0, r->promoted0))
    return 0;
  if (!strcmp(run->schedule, "custom")) {
    plc_sched s;
    char why[256];
    int stage;
    if (!plc_runsched_build(run, &s, why, sizeof why, &stage))
      return 0;
    plc_sched_free(&s);
  }
  /* not warned as plc_drive_unfit does: unfit_stops is a search's, whose
   * candidates' diagnostics are captured, and a run that does not fit is
   * skipped under that reason, not under its warning's text; so a stage
   * whose static state alone does not fit says it without the walk */
  int unfit = plc_mem_static_unfit(run);
  if (!unfit) {
    plc_mem m;
    plc_mem_analyse(&m, run);
    unfit = m.known && m.capacity_known && !m.fits;
    plc_mem_free(&m);
  }
  d->unfit_seen |= unfit;
  r->mem_checked = !unfit;
  if (!unfit && d->warn_stops && ev->diag->warnings > r->warnings0) {
    d->warn_seen = 1; /* the layout lint warned (placement): skipped, as after lowering */
    return 2;
  }
  return unfit;
}

/* A custom schedule's order runs every block once without deadlock, or
 * is an error at the stage string at fault (or the whole order). */
static int plc_drive_order_ok(plc_drive *d, const plc_drive_run *r)
{
  const plc_ir_run *run = r->ir;
  if (strcmp(run->schedule, "custom"))
    return 1;
  plc_sched s;
  char why[256];
  int stage;
  if (plc_runsched_build(run, &s, why, sizeof why, &stage)) {
    plc_sched_free(&s);
    return 1;
  }
  const plc_ast *at = stage >= 0 && stage < run->norder ? run->order_at[stage] : run->order_node;
  plc_error(d->sema->ev.diag, &at->loc, "the custom schedule cannot run: %s", why);
  return 0;
}

/* The sensitivity rows of a run (one re-analysis per exposed row: the
 * costly part).  Only reports print them, so only a run the driver asks
 * for has them: a train read for an assertion or by another train's
 * fields (llama3-405b-h100's third) does not, unless printed after. */
static void plc_drive_sense(plc_drive_run *r)
{
  plc_blocks_keep(r->ir);
  plc_sensitivity(&r->res, r->ir);
  plc_blocks_keep_end();
  r->sensed = 1;
}

/* Evaluate the train's instance, lower and analyse it into r. */
static void plc_drive_evaluate(plc_drive *d, plc_drive_run *r)
{
  plc_eval *ev = &d->sema->ev;
  const plc_ast *decl = r->decl;
  int errors = ev->diag->errors, promoted = ev->diag->promoted, warnings = ev->diag->warnings;
  long err_reads = ev->err_reads;
  r->errors0 = errors;
  r->promoted0 = promoted;
  r->warnings0 = warnings;
  r->err_reads0 = err_reads;
  ev->lower_unfit = d->unfit_stops ? plc_drive_unfit_early : NULL;
  ev->lower_unfit_ctx = d;
  plc_binding *b = plc_env_find_local(ev->global, decl->name);
  plc_value *v = b ? plc_eval_binding(ev, b, &decl->loc) : NULL;
  if (v && v->tag == PLC_V_OBJ)
    r->ir = plc_lower_train(ev, decl, v->obj);
  /* an error on the way (a field reading a failed or cyclic result, or a
   * definition that was an error already) would leave figures computed
   * from error values: the run fails instead */
  if (!r->ir || r->poisoned || ev->err_reads != err_reads ||
      plc_drive_new_errors(ev->diag, errors, promoted))
    return;
  if (!plc_drive_order_ok(d, r) || plc_drive_unfit(d, r))
    return;
  if (d->warn_stops && ev->diag->warnings > warnings) {
    d->warn_seen = 1;
    return;
  }
  /* the analysis and every re-analysis of the sensitivity run one block
   * schedule: built and prepared once (blocks.h) */
  plc_blocks_keep(r->ir);
  int cut = 0;
  if (d->cut && d->nesting == 1) { /* the step first: a search may need no more */
    plc_analyse_first(&r->res, r->ir);
    cut = d->cut(d->cut_ctx, &r->res);
    plc_analyse_rest(&r->res, !cut);
  } else {
    plc_analyse(&r->res, r->ir);
  }
  if (cut) { /* the run fails: its result is dropped here */
    plc_result_free(&r->res);
    plc_blocks_keep_end();
    d->cut_seen = 1;
    return;
  }
  plc_result_memory(&r->res);
  plc_drive_memory_warn(d, r, r->res.mem);
  if (d->sensitivity && !r->read_at.src && d->nesting == 1)
    plc_drive_sense(r); /* the driver asked for it: it is printed */
  plc_blocks_keep_end();
  r->state = PLC_RUN_DONE;
}

static plc_drive_run *plc_drive_find(const plc_drive *d, const plc_ast *decl)
{
  for (int i = 0; i < d->nruns; i++)
    if (d->runs[i]->decl == decl)
      return d->runs[i];
  return NULL;
}

/* Lower and analyse a train on behalf of a read of its result `field` at
 * `at` (NULL when the driver asks); the run being evaluated is left busy
 * meanwhile, so a read that comes back to it is a cycle. */
static plc_drive_run *plc_drive_start(plc_drive *d, const plc_ast *decl, const plc_loc *at,
                                      const char *field)
{
  plc_drive_run *r = plc_drive_find(d, decl);
  if (r)
    return r;
  d->runs = plc_xrealloc(d->runs, (size_t)(d->nruns + 1) * sizeof *d->runs);
  r = d->runs[d->nruns++] = plc_xcalloc(1, sizeof *r);
  r->decl = decl;
  r->state = PLC_RUN_BUSY;
  r->outer = d->current;
  if (at)
    r->read_at = *at;
  r->read_field = field;
  d->current = r;
  d->nesting++;
  plc_drive_evaluate(d, r);
  d->nesting--;
  d->current = r->outer;
  r->outer = NULL;
  if (r->state == PLC_RUN_BUSY)
    r->state = PLC_RUN_FAILED;
  return r;
}

plc_drive_run *plc_drive_train(plc_drive *d, const plc_ast *decl)
{
  plc_drive_run *r = plc_drive_start(d, decl, NULL, NULL);
  if (r->state != PLC_RUN_DONE)
    return NULL;
  if (d->sensitivity && !r->sensed) /* read by another run first */
    plc_drive_sense(r);
  return r;
}

/* Append "A reads B.field" to the chain of a cycle message. */
static void plc_drive_chain_add(char **buf, size_t *len, const char *a, const char *b,
                                const char *field)
{
  size_t need = strlen(a) + strlen(b) + strlen(field) + 16;
  *buf = plc_xrealloc(*buf, *len + need);
  *len += (size_t)snprintf(*buf + *len, need, "%s%s reads %s.%s", *len ? ", " : "", a, b, field);
}

/* The busy run r is read (r.field at `at`) while the innermost run is
 * evaluated: a cycle.  The busy runs from r inwards are the runs whose
 * evaluation led here; the message gives their reads in order. */
static void plc_drive_cycle(plc_drive *d, const plc_drive_run *r, const char *field,
                            const plc_loc *at)
{
  int n = 0;
  for (const plc_drive_run *x = d->current; x && x != r; x = x->outer)
    n++;
  const plc_drive_run **frames = plc_xmalloc((size_t)(n + 1) * sizeof *frames);
  const plc_drive_run *x = d->current;
  for (int i = n; i >= 0; i--, x = x->outer)
    frames[i] = x; /* frames[0] is r, frames[n] the innermost reader */
  char *chain = NULL;
  size_t len = 0;
  for (int i = 1; i <= n; i++)
    plc_drive_chain_add(&chain, &len, frames[i - 1]->decl->name, frames[i]->decl->name,
                        frames[i]->read_field);
  plc_drive_chain_add(&chain, &len, frames[n]->decl->name, r->decl->name, field);
  plc_error(d->prog->diag, at, "train '%s' depends on its own result: %s", r->decl->name,
            chain);
  for (int i = 1; i <= n; i++) /* where the reads on the way are */
    if (frames[i]->read_at.src)
      plc_note(d->prog->diag, &frames[i]->read_at, "%s.%s is read here", frames[i]->decl->name,
               frames[i]->read_field);
  free(chain);
  free(frames);
}

/* The evaluator asks for a train's results (train.name read at `at`):
 * evaluate the train on demand.  An error value poisons the run being
 * evaluated, if any: its figures would be computed from it. */
static plc_value *plc_drive_result(plc_eval *ev, plc_obj *train, const char *name,
                                   const plc_loc *at)
{
  plc_drive *d = ev->result_ctx;
  if (!train->node)
    return NULL;
  const plc_loc *where = at ? at : &train->node->loc;
  plc_drive_run *r = plc_drive_find(d, train->node);
  if (r && r->state == PLC_RUN_BUSY)
    plc_drive_cycle(d, r, name, where);
  else if (!r && d->nesting >= PLC_DRIVE_MAX_NESTING)
    plc_error(ev->diag, where, "runs read each other's results more than %d deep",
              PLC_DRIVE_MAX_NESTING);
  else if (!r)
    r = plc_drive_start(d, train->node, where, name);
  plc_value *v = NULL;
  if (r && r->state == PLC_RUN_DONE) {
    plc_quantity q;
    plc_q_init(&q);
    const char *why = plc_report_figure(&r->res, name, &q);
    v = why ? NULL : plc_value_num(ev, &q);
    plc_q_clear(&q);
    if (why)
      plc_error(ev->diag, where, "train '%s' has %s", train->name, why);
  }
  if (!v && d->current)
    d->current->poisoned = 1;
  return v ? v : plc_value_err(ev);
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

/* A failed assertion shows the values it compared; returns 1 when false. */
static int plc_drive_assert(plc_drive *d, const plc_ast *it)
{
  plc_eval *ev = &d->sema->ev;
  plc_value *v = plc_eval_expr(ev, it->a, ev->global);
  if (v->tag != PLC_V_BOOL || !v->known || v->b)
    return 0;
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
  return 1;
}

static int plc_drive_skipped(const plc_drive *d, const plc_ast *it)
{
  for (size_t i = 0; i < d->nskip; i++)
    if (d->skip_asserts[i] == it)
      return 1;
  return 0;
}

void plc_drive_asserts(plc_drive *d)
{
  for (size_t f = 0; f < d->prog->nfiles; f++)
    for (const plc_ast *it = d->prog->files[f]->list.head; it; it = it->next)
      if (it->kind == PLC_AST_ASSERT && !plc_drive_skipped(d, it))
        d->failed_asserts += plc_drive_assert(d, it);
}
