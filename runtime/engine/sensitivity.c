/* sensitivity.c - bandwidths that would hide exposed collectives, and the
 * step time they would give (see sensitivity.h). */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "sensitivity.h"
#include "blocks.h"
#include "xalloc.h"

#include <stdlib.h>
#include <string.h>

/* Bus factor f and latency steps k of a collective: T = f S / b + k a. */
static void plc_sense_factors(const plc_ir_op *op, mpq_t f, long *k)
{
  long n = op->group;
  *k = n - 1;
  switch (op->kind) {
  case PLC_OPK_ALL_REDUCE: mpq_set_si(f, 2 * (n - 1), (unsigned long)n); *k = 2 * (n - 1); break;
  case PLC_OPK_P2P: mpq_set_si(f, 1, 1); *k = 1; break;
  case PLC_OPK_BROADCAST: mpq_set_si(f, 1, 1); break;
  default: mpq_set_si(f, n - 1, (unsigned long)n); break;
  }
  mpq_canonicalize(f);
}

static int plc_sense_match(const plc_coll_row *row, const plc_ir_op *op)
{
  return op->kind == row->kind && op->dim == row->dim && op->phase == row->phase;
}

/* The least bandwidth hiding every exposed op of the row on the critical
 * stage: to wait for nobody an op with exposure E must end E sooner, in
 * T - E, so b >= f S / (T - E - k a).  An op slowed by sharing its link
 * took D > T: its transfer part ran s = (D - k a) / (T - k a) times slower,
 * so at the same share b >= s f S / (D - E - k a) (s = 1, D = T
 * otherwise).  0 when some op cannot: nothing is left when E = D (on the
 * compute stream, or no independent work) or the latency alone fills
 * D - E. */
static int plc_sense_needed(const plc_result *r, const plc_coll_row *row, mpq_t need)
{
  const plc_ir_run *run = r->run;
  const plc_ir_stage *st = &run->stages[r->critical];
  const plc_ir_list *lists[2] = {&st->fwd, &st->bwd};
  const plc_sim *sims[2] = {&r->fwd, &r->bwd};
  mpq_t f, room, took, lat, s;
  mpq_inits(f, room, took, lat, s, NULL);
  mpq_set_ui(need, 0, 1);
  int ok = 1;
  for (int l = 0; l < 2 && ok; l++)
    for (int i = 0; i < lists[l]->n && ok; i++) {
      const plc_ir_op *op = &lists[l]->ops[i];
      const plc_sim_op *so = &sims[l]->ops[i];
      if (!so->ran || !plc_sense_match(row, op) || mpq_sgn(so->exposed) == 0)
        continue;
      mpq_srcptr alpha = run->place[op->dim].latency;
      if (mpq_sgn(op->size) == 0 || !alpha) { /* pinned by time: no bandwidth helps */
        ok = 0;
        break;
      }
      long k;
      plc_sense_factors(op, f, &k);
      plc_sim_took(sims[l], lists[l], i, took);
      mpq_set_si(lat, k, 1);
      mpq_mul(lat, lat, alpha);
      mpq_add(room, lat, so->exposed);
      mpq_sub(room, took, room);
      if (mpq_sgn(room) <= 0) {
        ok = 0;
        break;
      }
      mpq_mul(f, f, op->size);
      mpq_div(f, f, room);
      if (!mpq_equal(took, op->time)) { /* slowed by sharing: s */
        mpq_sub(s, op->time, lat);
        if (mpq_sgn(s) <= 0) {
          ok = 0;
          break;
        }
        mpq_sub(room, took, lat);
        mpq_div(s, room, s);
        mpq_mul(f, f, s);
      }
      if (mpq_cmp(f, need) > 0)
        mpq_set(need, f);
    }
  mpq_clears(f, room, took, lat, s, NULL);
  return ok;
}

/* Set every matching op of every stage to its time at bandwidth bw (or to
 * zero when bw is NULL); the old times go to saved, in order. */
static void plc_sense_apply(plc_ir_run *run, const plc_coll_row *row, mpq_srcptr bw,
                            mpq_t *saved, int restore)
{
  int j = 0;
  mpq_t f;
  mpq_init(f);
  for (int s = 0; s < run->nstages; s++) {
    plc_ir_list *lists[3] = {&run->stages[s].fwd, &run->stages[s].bwd, &run->stages[s].step};
    for (int l = 0; l < 3; l++)
      for (int i = 0; i < lists[l]->n; i++) {
        plc_ir_op *op = &lists[l]->ops[i];
        if (!plc_sense_match(row, op))
          continue;
        if (restore) {
          mpq_set(op->time, saved[j++]);
          continue;
        }
        mpq_set(saved[j++], op->time);
        long k;
        plc_sense_factors(op, f, &k);
        if (!bw || mpq_sgn(op->size) == 0 || !run->place[op->dim].latency) {
          mpq_set_ui(op->time, 0, 1);
          continue;
        }
        mpq_mul(f, f, op->size);
        mpq_div(op->time, f, bw);
        mpq_set_si(f, k, 1);
        mpq_mul(f, f, run->place[op->dim].latency);
        mpq_add(op->time, op->time, f);
      }
  }
  mpq_clear(f);
}

static int plc_sense_count(const plc_ir_run *run, const plc_coll_row *row)
{
  int n = 0;
  for (int s = 0; s < run->nstages; s++) {
    const plc_ir_list *lists[3] = {&run->stages[s].fwd, &run->stages[s].bwd, &run->stages[s].step};
    for (int l = 0; l < 3; l++)
      for (int i = 0; i < lists[l]->n; i++)
        n += plc_sense_match(row, &lists[l]->ops[i]);
  }
  return n;
}

static void plc_sense_row(plc_result *r, plc_ir_run *run, int i, plc_sense *sn)
{
  const plc_coll_row *row = &r->rows[i];
  sn->row = i;
  mpq_inits(sn->bw_now, sn->bw_needed, sn->step_if, NULL);
  if (run->place[row->dim].bw[row->kind])
    mpq_set(sn->bw_now, run->place[row->dim].bw[row->kind]);
  sn->possible = plc_sense_needed(r, row, sn->bw_needed) && mpq_sgn(sn->bw_needed) > 0;
  int n = plc_sense_count(run, row);
  mpq_t *saved = plc_xcalloc((size_t)n + 1, sizeof *saved);
  for (int k = 0; k < n; k++)
    mpq_init(saved[k]);
  plc_sense_apply(run, row, sn->possible ? sn->bw_needed : NULL, saved, 0);
  plc_result alt; /* only the lists of the row's phase changed */
  plc_analyse_step(&alt, run, r, row->phase == PLC_PH_FWD ? PLC_CHANGED_FWD : PLC_CHANGED_BWD);
  mpq_set(sn->step_if, alt.step);
  plc_result_free(&alt);
  plc_sense_apply(run, row, NULL, saved, 1);
  for (int k = 0; k < n; k++)
    mpq_clear(saved[k]);
  free(saved);
}

void plc_sensitivity(plc_result *r, plc_ir_run *run)
{
  r->sense = plc_xcalloc((size_t)r->nrows + 1, sizeof *r->sense);
  plc_blocks_keep(run); /* every re-analysis runs the same schedule */
  for (int i = 0; i < r->nrows; i++)
    if (mpq_sgn(r->rows[i].exposed) > 0)
      plc_sense_row(r, run, i, &r->sense[r->nsense++]);
  plc_blocks_keep_end();
}

void plc_sense_free(plc_result *r)
{
  for (int i = 0; i < r->nsense; i++)
    mpq_clears(r->sense[i].bw_now, r->sense[i].bw_needed, r->sense[i].step_if, NULL);
  free(r->sense);
  r->sense = NULL;
  r->nsense = 0;
}
