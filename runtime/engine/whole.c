/* whole.c - the whole-step simulation kept with a result (see whole.h). */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "whole.h"
#include "step.h"
#include "xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void plc_whole_init(plc_whole *w)
{
  memset(w, 0, sizeof *w);
  mpq_inits(w->step, w->diff, w->fill, w->compute, w->stall_other, w->wait_stage, w->drain,
            w->exposed_all, NULL);
  for (int d = 0; d < PLC_PD_COUNT; d++) mpq_init(w->exposed[d]);
}

static void plc_whole_clear(plc_whole *w)
{
  mpq_clears(w->step, w->diff, w->fill, w->compute, w->stall_other, w->wait_stage, w->drain,
             w->exposed_all, NULL);
  for (int d = 0; d < PLC_PD_COUNT; d++) mpq_clear(w->exposed[d]);
}

/* Copy what the reports need out of the simulation, which is freed. */
static void plc_whole_take(plc_whole *w, const plc_step *st, const plc_result *r)
{
  const plc_step_stage *c = &st->stages[st->critical];
  w->known = 1;
  w->nstages = st->nstages;
  w->critical = st->critical;
  w->nops = st->nops;
  mpq_set(w->step, st->makespan);
  mpq_sub(w->diff, st->makespan, r->step);
  mpq_set(w->fill, c->fill);
  mpq_set(w->compute, c->compute);
  mpq_set(w->stall_other, c->stall_other);
  mpq_set(w->wait_stage, c->wait_stage);
  mpq_set(w->drain, c->drain);
  for (int d = 0; d < PLC_PD_COUNT; d++) {
    mpq_set(w->exposed[d], c->exposed[d]);
    mpq_add(w->exposed_all, w->exposed_all, c->exposed[d]);
  }
}

const plc_whole *plc_whole_get(const plc_result *r)
{
  if (r->whole)
    return r->whole;
  plc_whole *w = plc_xmalloc(sizeof *w);
  plc_whole_init(w);
  w->share = r->run->shared_links;
  plc_step st;
  plc_step_opts opts = {.share = w->share};
  if (plc_step_run(&st, r->run, &opts, w->why, sizeof w->why))
    plc_whole_take(w, &st, r);
  else
    snprintf(w->no, sizeof w->no, "no whole-step simulation (%s)", w->why);
  plc_step_free(&st);
  ((plc_result *)r)->whole = w; /* the cache whole.h describes */
  return w;
}

void plc_whole_release(plc_result *r)
{
  if (!r->whole)
    return;
  plc_whole_clear(r->whole);
  free(r->whole);
  r->whole = NULL;
}
