/* runsched.c - the schedule a lowered run follows (runsched.h). */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "runsched.h"
#include "xalloc.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* More blocks per stage than this is refused (as schedule.c's limit). */
#define PLC_RUNSCHED_MAX_STAGE (1L << 24)

int plc_runsched_params(const plc_ir_run *run, plc_sched_placement *place,
                        plc_sched_params *par, char *why, size_t len)
{
  int custom = !strcmp(run->schedule, "custom");
  const plc_sched_info *info = custom ? NULL : plc_sched_find(run->schedule);
  if (!custom && !info) {
    snprintf(why, len, "schedule '%s' has no generator", run->schedule);
    return 0;
  }
  *place = custom ? (run->vpp > 1 ? PLC_SCHED_PLACE_ROUND : PLC_SCHED_PLACE_STAGE) : info->place;
  *par = (plc_sched_params){.p = run->nstages, .mu = run->mu > INT32_MAX ? 0 : (int)run->mu,
                            .v = *place == PLC_SCHED_PLACE_ROUND ? run->vpp
                               : *place == PLC_SCHED_PLACE_STAGE ? 1 : 2};
  if (par->mu < 1 || 3L * par->v * par->mu > PLC_RUNSCHED_MAX_STAGE) {
    snprintf(why, len, "schedule '%s': more than 2^24 blocks per stage", run->schedule);
    return 0;
  }
  const char *bad = info && info->check ? info->check(par) : NULL;
  if (bad) {
    snprintf(why, len, "schedule '%s': %s", run->schedule, bad);
    return 0;
  }
  return 1;
}

/* Blocks in a stage's string: an upper bound, from its words. */
static long plc_runsched_words(const char *s)
{
  long n = 0;
  for (int in = 0; *s; s++) {
    int sep = isspace((unsigned char)*s) || *s == ',';
    n += !sep && !in;
    in = !sep;
  }
  return n;
}

/* A non-negative number at *p (at most 9 digits); -1 when there is none. */
static long plc_runsched_num(const char **p)
{
  if (!isdigit((unsigned char)**p))
    return -1;
  long v = 0;
  for (int k = 0; isdigit((unsigned char)**p); (*p)++, k++)
    if (k < 9)
      v = v * 10 + (**p - '0');
    else
      return -1;
  return v;
}

/* Parse one word ("F3", "B12.1", "W0") into b; NULL or why not. */
static const char *plc_runsched_word(const char **p, const plc_sched_params *par,
                                     plc_sched_placement place, int stage, plc_sched_block *b)
{
  const char *phases = "FBW", *at = strchr(phases, **p);
  if (!**p || !at)
    return "a block is F, B or W, then its microbatch (F3), then .CHUNK with vpp > 1 (F3.1)";
  (*p)++;
  long mb = plc_runsched_num(p), k = 0;
  if (mb < 0)
    return "a block's microbatch is a number (F3)";
  if (**p == '.') {
    (*p)++;
    if ((k = plc_runsched_num(p)) < 0)
      return "a block's chunk is a number (F3.1)";
  }
  if (**p && !isspace((unsigned char)**p) && **p != ',')
    return "a block is F, B or W, then its microbatch (F3), then .CHUNK with vpp > 1 (F3.1)";
  if (mb >= par->mu)
    return "a block's microbatch is past the step's microbatches";
  if (k >= par->v)
    return "a block's chunk is past the stage's chunks (vpp)";
  *b = (plc_sched_block){.phase = (uint8_t)(at - phases), .mb = (int32_t)mb,
                         .chunk = (int32_t)(place == PLC_SCHED_PLACE_ROUND ? stage + k * par->p
                                                                           : stage),
                         .mb2 = -1, .chunk2 = -1};
  return NULL;
}

static int plc_runsched_custom(const plc_ir_run *run, plc_sched *out, char *why, size_t len,
                               int *stage)
{
  long total = 0;
  for (int s = 0; s < run->norder; s++)
    total += plc_runsched_words(run->order[s]);
  size_t bytes = (size_t)(total + 1) * sizeof(plc_sched_block) +
                 (size_t)(run->nstages + 1) * sizeof(int);
  out->blocks = plc_xmalloc(bytes);
  out->start = (int *)(void *)(out->blocks + total + 1);
  out->nchunks = plc_sched_nchunks(out->place, &out->par);
  out->nblocks = 0;
  for (int s = 0; s < run->nstages; s++) {
    out->start[s] = out->nblocks;
    const char *p = s < run->norder ? run->order[s] : "";
    for (;;) {
      while (isspace((unsigned char)*p) || *p == ',')
        p++;
      if (!*p)
        break;
      const char *word = p;
      const char *bad = plc_runsched_word(&p, &out->par, out->place, s,
                                          &out->blocks[out->nblocks]);
      if (bad) {
        int n = (int)strcspn(word, " \t\r\n,");
        snprintf(why, len, "stage %d, block %d ('%.*s'): %s", s, out->nblocks - out->start[s],
                 n > 24 ? 24 : n, word, bad);
        *stage = s;
        return 0;
      }
      out->nblocks++;
    }
  }
  out->start[run->nstages] = out->nblocks;
  return plc_sched_validate(out, why, len);
}

int plc_runsched_build(const plc_ir_run *run, plc_sched *out, char *why, size_t len, int *stage)
{
  *stage = -1;
  memset(out, 0, sizeof *out);
  plc_sched_params par;
  plc_sched_placement place;
  if (!plc_runsched_params(run, &place, &par, why, len))
    return 0;
  if (!strcmp(run->schedule, "custom")) {
    out->place = place;
    out->par = par;
    int ok = plc_runsched_custom(run, out, why, len, stage);
    if (!ok)
      plc_sched_free(out);
    return ok;
  }
  const plc_sched_info *info = plc_sched_find(run->schedule);
  const char *bad = plc_sched_generate((plc_sched_kind)(info - plc_sched_table), &par, out);
  if (bad)
    snprintf(why, len, "schedule '%s': %s", run->schedule, bad);
  return bad == NULL;
}
