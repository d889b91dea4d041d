/* report_json.c - the report as JSON, built with jansson.
 *
 * Every quantity becomes {"exact", "base_unit", "value", "unit"}: the exact
 * rational in base units and the decimal the text report prints, as
 * strings, so no consumer ever sees a binary floating-point number (json_real
 * is never used).  Counts and sizes are JSON integers.  The figures and
 * words come from report_parts.c, as in the text and Markdown reports. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "report_json.h"
#include "memory.h"
#include "report_parts.h"
#include "report_whole.h"
#include "sensitivity.h"
#include "xalloc.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

struct plc_json_doc {
  json_t *root, *runs;
};

/* ---- values ------------------------------------------------------------------ */

/* A JSON string; NULL becomes null.  jansson takes only valid UTF-8: any
 * other text (a file name in another encoding) has its non-ASCII bytes
 * shown as '?'. */
static json_t *plc_json_str(const char *s)
{
  if (!s)
    return json_null();
  json_t *j = json_string(s);
  if (j)
    return j;
  char *t = plc_xstrdup(s);
  for (char *p = t; *p; p++)
    if ((unsigned char)*p >= 0x80)
      *p = '?';
  j = json_string(t);
  free(t);
  return j;
}

static void plc_json_set(json_t *obj, const char *key, json_t *v)
{
  json_object_set_new(obj, key, v ? v : json_null());
}

/* {"exact": ..., "base_unit": ..., "value": ..., "unit": ...}; frees exact
 * and value. */
static json_t *plc_json_qobj(char *exact, const char *base, char *value, const char *unit)
{
  json_t *q = json_object();
  plc_json_set(q, "exact", plc_json_str(exact));
  plc_json_set(q, "base_unit", plc_json_str(base));
  plc_json_set(q, "value", plc_json_str(value));
  plc_json_set(q, "unit", plc_json_str(unit));
  free(exact);
  free(value);
  return q;
}

/* A quantity of dimension B^b s^s FLOP^f, shown in the unit the text
 * report would choose. */
static json_t *plc_json_q(const plc_report_opts *o, mpq_srcptr v, int b, int s, int f)
{
  plc_quantity q;
  plc_q_init(&q);
  plc_q_set_raw(&q, v, b, s, f);
  char *unit, *value = plc_q_format_split(&q, o->digits, &unit), *base = plc_dim_str(q.dim);
  json_t *j = plc_json_qobj(plc_fmt_exact(v), base, value, unit);
  free(unit);
  free(base);
  plc_q_clear(&q);
  return j;
}

static json_t *plc_json_time(const plc_report_opts *o, mpq_srcptr v)
{
  return plc_json_q(o, v, 0, 1, 0);
}

/* A fraction: exact as is, shown as a percentage. */
static json_t *plc_json_pct(const plc_report_opts *o, mpq_srcptr v)
{
  mpq_t p;
  mpq_init(p);
  mpq_set_ui(p, 100, 1);
  mpq_mul(p, p, v);
  json_t *j = plc_json_qobj(plc_fmt_exact(v), "1", plc_fmt_sig(p, o->digits), "%");
  mpq_clear(p);
  return j;
}

/* ---- run header, layout, placement ------------------------------------------------ */

static json_t *plc_json_layout(const plc_ir_run *run)
{
  static const plc_pdim order[] = {PLC_PD_TP, PLC_PD_CP, PLC_PD_DP, PLC_PD_PP, PLC_PD_EP,
                                   PLC_PD_EDP, PLC_PD_SHARD, PLC_PD_REPLICATE};
  json_t *l = json_object();
  for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
    plc_json_set(l, plc_pdim_name(order[i]), json_integer(run->size[order[i]]));
  plc_json_set(l, "vpp", json_integer(run->vpp));
  plc_json_set(l, "world", json_integer(run->world));
  plc_json_set(l, "devices", json_integer(run->devices));
  plc_json_set(l, "mu", json_integer(run->mu));
  plc_json_set(l, "micro_batch", json_integer(run->micro_batch));
  plc_json_set(l, "global_batch", json_integer(run->global_batch));
  plc_json_set(l, "seq", json_integer(run->seq));
  plc_json_set(l, "recompute", plc_json_str(plc_report_recompute(run->recompute)));
  plc_json_set(l, "schedule", plc_json_str(run->schedule));
  return l;
}

static json_t *plc_json_device(const plc_ir_run *run, const plc_report_opts *o)
{
  json_t *d = json_object();
  plc_json_set(d, "name", plc_json_str(run->device));
  plc_json_set(d, "peak", run->peak ? plc_json_q(o, run->peak, 0, -1, 1) : NULL);
  return d;
}

static json_t *plc_json_place(const plc_ir_place *p, plc_pdim d, const plc_report_opts *o)
{
  json_t *j = json_object(), *bw = json_object();
  plc_json_set(j, "dim", plc_json_str(plc_pdim_name(d)));
  plc_json_set(j, "size", json_integer(p->size));
  plc_json_set(j, "stride", json_integer(p->stride));
  plc_json_set(j, "span", json_integer(p->span));
  plc_json_set(j, "tier", plc_json_str(p->tier));
  plc_json_set(j, "link", plc_json_str(p->link));
  plc_json_set(j, "overridden", json_boolean(p->overridden));
  plc_json_set(j, "latency", p->latency ? plc_json_time(o, p->latency) : NULL);
  for (int k = 1; k < PLC_OPK_COUNT; k++)
    if (p->bw[k])
      plc_json_set(bw, plc_opk_name(k), plc_json_q(o, p->bw[k], 1, -1, 0));
  plc_json_set(j, "bandwidth", bw);
  return j;
}

static json_t *plc_json_placement(const plc_ir_run *run, const plc_report_opts *o)
{
  json_t *a = json_array();
  for (int d = 0; d < PLC_PD_COUNT; d++)
    if (plc_report_place_shown(run, d))
      json_array_append_new(a, plc_json_place(&run->place[d], (plc_pdim)d, o));
  return a;
}

/* ---- communication ------------------------------------------------------------------ */

static json_t *plc_json_row(const plc_ir_run *run, const plc_coll_row *row,
                            const plc_report_opts *o)
{
  mpq_t each, all;
  mpq_inits(each, all, NULL);
  plc_report_rank_bytes(each, row->kind, run->size[row->dim], row->size_each);
  plc_report_row_rank_total(all, run, row);
  json_t *j = json_object();
  plc_json_set(j, "dim", plc_json_str(plc_pdim_name(row->dim)));
  plc_json_set(j, "primitive", plc_json_str(plc_opk_name(row->kind)));
  plc_json_set(j, "phase", plc_json_str(plc_report_phase(row->phase)));
  plc_json_set(j, "count", json_integer(row->count));
  plc_json_set(j, "bytes_per_op", row->uniform ? plc_json_q(o, row->size_each, 1, 0, 0) : NULL);
  plc_json_set(j, "time_per_op", row->uniform ? plc_json_time(o, row->time_each) : NULL);
  plc_json_set(j, "bytes", plc_json_q(o, row->bytes, 1, 0, 0));
  plc_json_set(j, "rank_bytes_per_op", row->uniform ? plc_json_q(o, each, 1, 0, 0) : NULL);
  plc_json_set(j, "rank_bytes", plc_json_q(o, all, 1, 0, 0));
  mpq_clears(each, all, NULL);
  plc_json_set(j, "total", plc_json_time(o, row->time));
  plc_json_set(j, "window", plc_json_time(o, row->window));
  plc_json_set(j, "exposed", plc_json_time(o, row->exposed));
  mpq_t h;
  mpq_init(h);
  plc_report_hidden(h, row);
  plc_json_set(j, "hidden", plc_json_pct(o, h));
  mpq_clear(h);
  const char *why = plc_report_why(row);
  plc_json_set(j, "reason", *why ? plc_json_str(why) : NULL);
  return j;
}

static json_t *plc_json_communication(const plc_result *r, const plc_report_opts *o)
{
  json_t *a = json_array();
  for (int i = 0; i < r->nrows; i++)
    json_array_append_new(a, plc_json_row(r->run, &r->rows[i], o));
  return a;
}

typedef struct plc_json_ops_ctx {
  json_t *list;
  const plc_ir_run *run;
  const plc_report_opts *o;
} plc_json_ops_ctx;

/* One collective of --ops: the article's four-step test. */
static void plc_json_op(void *ctx, const char *list, const plc_ir_list *l, int i,
                        const plc_sim_op *so)
{
  const plc_json_ops_ctx *c = ctx;
  const plc_ir_op *op = &l->ops[i];
  json_t *j = json_object();
  plc_json_set(j, "list", plc_json_str(list));
  plc_json_set(j, "index", json_integer(i));
  plc_json_set(j, "layer", json_integer(op->layer));
  plc_json_set(j, "op", plc_json_str(op->name));
  plc_json_set(j, "phase", plc_json_str(plc_report_phase(op->phase)));
  plc_json_set(j, "primitive", plc_json_str(plc_opk_name(op->kind)));
  plc_json_set(j, "dim", plc_json_str(plc_pdim_name(op->dim)));
  plc_json_set(j, "group", json_integer(op->group));
  plc_json_set(j, "stream", plc_json_str(c->run->streams[op->stream]));
  plc_json_set(j, "bytes", op->size ? plc_json_q(c->o, op->size, 1, 0, 0) : NULL);
  mpq_t b;
  mpq_init(b);
  plc_report_rank_bytes(b, op->kind, op->group, op->size);
  plc_json_set(j, "rank_bytes", plc_json_q(c->o, b, 1, 0, 0));
  mpq_clear(b);
  plc_json_set(j, "start", plc_json_time(c->o, so->start));
  plc_json_set(j, "consumer", so->consumer >= 0 ? plc_json_str(l->ops[so->consumer].name) : NULL);
  plc_json_set(j, "window", plc_json_time(c->o, so->window));
  plc_json_set(j, "time", plc_json_time(c->o, op->time));
  plc_json_set(j, "exposed", plc_json_time(c->o, so->exposed));
  plc_json_set(j, "reason", plc_json_str(plc_why_text(so->why)));
  json_array_append_new(c->list, j);
}

/* ---- bubble, step, efficiency, bottleneck ------------------------------------------- */

/* "What would hide the exposed communication": one object per exposed
 * row of the inventory. */
static json_t *plc_json_sensitivity(const plc_result *r, const plc_report_opts *o)
{
  json_t *a = json_array();
  for (int i = 0; i < r->nsense; i++) {
    const plc_sense *sn = &r->sense[i];
    const plc_coll_row *row = &r->rows[sn->row];
    json_t *j = json_object();
    plc_json_set(j, "dim", plc_json_str(plc_pdim_name(row->dim)));
    plc_json_set(j, "primitive", plc_json_str(plc_opk_name(row->kind)));
    plc_json_set(j, "phase", plc_json_str(plc_report_phase(row->phase)));
    plc_json_set(j, "exposed", plc_json_time(o, row->exposed));
    plc_json_set(j, "bandwidth", plc_json_q(o, sn->bw_now, 1, -1, 0));
    plc_json_set(j, "possible", json_boolean(sn->possible));
    plc_json_set(j, "bandwidth_needed", sn->possible ? plc_json_q(o, sn->bw_needed, 1, -1, 0)
                                                     : NULL);
    plc_json_set(j, "step_if_hidden", plc_json_time(o, sn->step_if));
    json_array_append_new(a, j);
  }
  return a;
}

static json_t *plc_json_bubble(const plc_result *r, const plc_report_opts *o)
{
  json_t *j = json_object();
  int m = r->bubble_measured;
  plc_json_set(j, "schedule", plc_json_str(r->run->schedule));
  plc_json_set(j, "value", plc_json_time(o, r->bubble));
  plc_json_set(j, "measured", json_boolean(m));
  plc_json_set(j, "why_formula", m ? NULL : plc_json_str(r->bubble_why));
  plc_json_set(j, "critical_stage", json_integer(r->critical));
  plc_json_set(j, "critical_device", json_integer(r->device));
  plc_json_set(j, "warmup", m ? plc_json_time(o, r->bubble_warmup) : NULL);
  plc_json_set(j, "steady", m ? plc_json_time(o, r->bubble_steady) : NULL);
  plc_json_set(j, "cooldown", m ? plc_json_time(o, r->bubble_cooldown) : NULL);
  char *f = r->bubble_formula_known ? plc_bubble_formula(r, o->digits, 0) : NULL;
  plc_json_set(j, "formula", f ? plc_json_str(f) : NULL);
  plc_json_set(j, "formula_value", f ? plc_json_time(o, r->bubble_formula) : NULL);
  free(f);
  return j;
}

static const char *plc_json_part_key(const plc_report_part *p)
{
  static const char *const keys[] = {"compute", "exposed", "waits", "bubble", "dp_tail",
                                     "optimizer", "step"};
  return keys[p->kind];
}

/* {"time", "share"} of one part, with what the DP tail comes from. */
static json_t *plc_json_part(const plc_result *r, const plc_report_part *p,
                             const plc_report_opts *o)
{
  json_t *j = json_object();
  plc_json_set(j, "time", plc_json_time(o, p->time));
  plc_json_set(j, "share", plc_json_pct(o, p->share));
  if (p->kind == PLC_PART_TAIL) {
    plc_json_set(j, "kind", plc_json_str(plc_report_tail_kind(r->tail_kind)));
    plc_json_set(j, "sync", plc_json_time(o, r->tail_full));
    plc_json_set(j, "declared_hidden", r->tail_kind == PLC_TAIL_DECLARED && r->run->dp_hidden
                 ? plc_json_pct(o, r->run->dp_hidden) : NULL);
  }
  return j;
}

/* The critical device's F&B blocks (analysis.h): one object per pairing
 * it runs, or null when the schedule runs none. */
static json_t *plc_json_fb(const plc_result *r, const plc_report_opts *o)
{
  if (!r->fbo)
    return NULL;
  json_t *a = json_array();
  plc_fb_pair p[2];
  int n = plc_fb_pairs_of(r, r->device, p);
  for (int k = 0; k < n; k++) {
    json_t *j = json_object();
    plc_json_set(j, "forward_of", json_integer(p[k].fm));
    plc_json_set(j, "backward_of", json_integer(p[k].bm));
    plc_json_set(j, "count", json_integer(p[k].count));
    plc_json_set(j, "time", plc_json_time(o, p[k].time));
    plc_json_set(j, "t_f", plc_json_time(o, p[k].f));
    plc_json_set(j, "t_b", plc_json_time(o, p[k].b));
    json_array_append_new(a, j);
  }
  return a;
}

static json_t *plc_json_step(const plc_result *r, const plc_report_opts *o)
{
  json_t *j = json_object(), *exposed = json_object();
  plc_json_set(j, "t_f", plc_json_time(o, r->t_f));
  plc_json_set(j, "t_b", plc_json_time(o, r->t_b));
  plc_json_set(j, "per_microbatch", plc_json_time(o, r->t));
  plc_json_set(j, "fb_blocks", plc_json_fb(r, o));
  plc_report_part parts[PLC_REPORT_MAX_PARTS];
  int n = plc_report_parts(r, 1, parts);
  for (int i = 0; i < n; i++) {
    if (parts[i].kind == PLC_PART_STEP)
      plc_json_set(j, "time", plc_json_time(o, parts[i].time));
    else if (parts[i].kind == PLC_PART_EXPOSED)
      plc_json_set(exposed, plc_pdim_name(parts[i].dim), plc_json_part(r, &parts[i], o));
    else
      plc_json_set(j, plc_json_part_key(&parts[i]), plc_json_part(r, &parts[i], o));
    if (parts[i].kind == PLC_PART_COMPUTE)
      plc_json_set(j, "exposed", json_incref(exposed));
  }
  json_decref(exposed);
  plc_report_parts_clear(parts, n);
  return j;
}

static json_t *plc_json_efficiency(const plc_result *r, const plc_report_opts *o)
{
  json_t *j = json_object();
  plc_json_set(j, "eta", plc_json_pct(o, r->eta));
  plc_json_set(j, "busy", plc_json_pct(o, r->busy));
  plc_json_set(j, "mfu", r->mfu_known ? plc_json_pct(o, r->mfu) : NULL);
  plc_json_set(j, "tokens_per_s", plc_json_qobj(plc_fmt_exact(r->tokens_per_s), "1/s",
                                                plc_fmt_sig(r->tokens_per_s, o->digits),
                                                "tokens/s"));
  return j;
}

static json_t *plc_json_bottleneck(const plc_result *r, const plc_report_opts *o)
{
  plc_report_part b;
  if (!plc_report_bottleneck(r, &b))
    return json_null();
  json_t *j = json_object();
  char *what = plc_report_part_what(&b);
  plc_json_set(j, "part", plc_json_str(plc_json_part_key(&b)));
  plc_json_set(j, "dim", b.kind == PLC_PART_EXPOSED ? plc_json_str(plc_pdim_name(b.dim)) : NULL);
  plc_json_set(j, "what", plc_json_str(what));
  plc_json_set(j, "time", plc_json_time(o, b.time));
  plc_json_set(j, "share", plc_json_pct(o, b.share));
  free(what);
  plc_report_parts_clear(&b, 1);
  return j;
}

/* ---- memory ---------------------------------------------------------------------- */

static json_t *plc_json_mem_stage(const plc_mem *m, int s, const plc_report_opts *o)
{
  const plc_mem_stage *st = &m->st[s];
  json_t *j = json_object();
  plc_json_set(j, "stage", json_integer(s));
  plc_json_set(j, "weights", plc_json_q(o, st->weights, 1, 0, 0));
  plc_json_set(j, "grads", plc_json_q(o, st->grads, 1, 0, 0));
  plc_json_set(j, "optimizer", plc_json_q(o, st->optimizer, 1, 0, 0));
  plc_json_set(j, "activations", plc_json_q(o, st->activations, 1, 0, 0));
  plc_json_set(j, "in_flight", json_integer(st->inflight));
  plc_json_set(j, "max_in_flight", json_integer(st->max_inflight));
  plc_json_set(j, "buffers", plc_json_q(o, st->buffers, 1, 0, 0));
  plc_json_set(j, "peak", plc_json_q(o, st->peak, 1, 0, 0));
  plc_json_set(j, "headroom", m->capacity_known ? plc_json_q(o, st->headroom, 1, 0, 0) : NULL);
  return j;
}

/* null when no template declares memory; capacity fields null when the
 * device declares none. */
static json_t *plc_json_memory(const plc_result *r, const plc_report_opts *o)
{
  const plc_mem *m = r->mem;
  if (!m || !m->known)
    return NULL;
  json_t *j = json_object(), *stages = json_array();
  plc_json_set(j, "capacity", m->capacity_known ? plc_json_q(o, m->capacity, 1, 0, 0) : NULL);
  plc_json_set(j, "reserve", plc_json_q(o, m->reserve, 1, 0, 0));
  plc_json_set(j, "usable", m->capacity_known ? plc_json_q(o, m->usable, 1, 0, 0) : NULL);
  plc_json_set(j, "fits", m->capacity_known ? json_boolean(m->fits) : NULL);
  plc_json_set(j, "peak_stage", json_integer(m->worst));
  plc_json_set(j, "peak", plc_json_q(o, m->st[m->worst].peak, 1, 0, 0));
  plc_json_set(j, "in_flight_note", m->why[0] ? plc_json_str(m->why) : NULL);
  for (int s = 0; s < m->nstages; s++)
    json_array_append_new(stages, plc_json_mem_stage(m, s, o));
  plc_json_set(j, "stages", stages);
  return j;
}

/* ---- the whole step (report_whole.h) ------------------------------------------- */

/* Every key always there: null when the step was not simulated (why says
 * why); exposed has each dimension with exposed time. */
static json_t *plc_json_whole(const plc_result *r, const plc_report_opts *o)
{
  const plc_whole *w = plc_whole_get(r);
  json_t *j = json_object(), *exp = json_object();
  plc_report_whole_row rows[PLC_REPORT_WHOLE_MAX_ROWS];
  int n = plc_report_whole_rows(w, r, o, rows);
  plc_json_set(j, "simulated", json_boolean(w->known));
  plc_json_set(j, "why", w->known ? NULL : plc_json_str(w->why));
  plc_json_set(j, "shared_links", json_boolean(w->share));
  plc_json_set(j, "ops", w->known ? json_integer(w->nops) : NULL);
  plc_json_set(j, "critical_stage", w->known ? json_integer(w->critical) : NULL);
  static const char *const keys[] = {"fill", "compute", "other_stream", "wait_stage", "drain",
                                     "time"};
  for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
    plc_json_set(j, keys[k], NULL);
  for (int i = 0; i < n; i++)
    plc_json_set(rows[i].dim >= 0 ? exp : j, rows[i].key, plc_json_time(o, rows[i].time));
  plc_json_set(j, "exposed", w->known ? exp : (json_decref(exp), NULL));
  plc_json_set(j, "report_time", plc_json_time(o, r->step));
  plc_json_set(j, "difference", w->known ? plc_json_time(o, w->diff) : NULL);
  plc_report_whole_rows_free(rows, n);
  return j;
}

/* ---- the document ---------------------------------------------------------------- */

static json_t *plc_json_run(const plc_result *r, const plc_report_opts *o)
{
  const plc_ir_run *run = r->run;
  json_t *j = json_object();
  plc_json_set(j, "name", plc_json_str(run->name));
  plc_json_set(j, "file", plc_json_str(run->decl->loc.src->path));
  plc_json_set(j, "line", json_integer(run->decl->loc.first_line));
  plc_json_set(j, "layout", plc_json_layout(run));
  plc_json_set(j, "device", plc_json_device(run, o));
  plc_json_set(j, "placement", plc_json_placement(run, o));
  plc_json_set(j, "stages", json_integer(run->nstages));
  plc_json_set(j, "critical_stage", json_integer(r->critical));
  plc_json_set(j, "communication", plc_json_communication(r, o));
  if (o->ops) {
    plc_json_ops_ctx c = {json_array(), run, o};
    plc_report_each_coll(r, plc_json_op, &c);
    plc_json_set(j, "ops", c.list);
  }
  plc_json_set(j, "bubble", plc_json_bubble(r, o));
  plc_json_set(j, "step", plc_json_step(r, o));
  plc_json_set(j, "whole_step", o->whole_step ? plc_json_whole(r, o) : NULL);
  plc_json_set(j, "sensitivity", plc_json_sensitivity(r, o));
  plc_json_set(j, "memory", plc_json_memory(r, o));
  plc_json_set(j, "efficiency", plc_json_efficiency(r, o));
  plc_json_set(j, "bottleneck", plc_json_bottleneck(r, o));
  return j;
}

void plc_json_init(void)
{
  json_set_alloc_funcs(plc_xmalloc, free); /* out of memory aborts, as everywhere */
}

void plc_json_add_search(plc_json_doc *doc, void *search)
{
  json_t *a = json_object_get(doc->root, "searches");
  if (!a) {
    a = json_array();
    json_object_set_new(doc->root, "searches", a);
  }
  json_array_append_new(a, search);
}

plc_json_doc *plc_json_new(const char *version, const char *const *overrides, size_t n)
{
  plc_json_init();
  plc_json_doc *doc = plc_xmalloc(sizeof *doc);
  doc->root = json_object();
  doc->runs = json_array();
  json_t *ov = json_array();
  for (size_t i = 0; i < n; i++)
    json_array_append_new(ov, plc_json_str(overrides[i]));
  plc_json_set(doc->root, "plc", plc_json_str(version));
  plc_json_set(doc->root, "schema", json_integer(PLC_JSON_SCHEMA));
  plc_json_set(doc->root, "overrides", ov);
  plc_json_set(doc->root, "runs", json_incref(doc->runs));
  return doc;
}

void plc_json_add_run(plc_json_doc *doc, const plc_result *r, const plc_report_opts *o)
{
  json_array_append_new(doc->runs, plc_json_run(r, o));
}

int plc_json_finish(plc_json_doc *doc, FILE *out)
{
  int rc = json_dumpf(doc->root, out, JSON_INDENT(2));
  if (rc == 0 && fputc('\n', out) == EOF)
    rc = -1;
  json_decref(doc->runs);
  json_decref(doc->root);
  free(doc);
  return rc;
}
