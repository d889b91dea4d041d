/* schedule.c - the table of pipeline schedules, their generators, the
 * placement maps and the validation of explicit orders.
 *
 * Every generator writes one stage's blocks in the order the source runs
 * them, O(blocks), into storage the caller owns.  The sources (read with
 * git, never copied):
 *   [MLM] NVIDIA/Megatron-LM d98e8a6 megatron/core/pipeline_parallel/
 *         schedules.py: forward_backward_pipelining_without_interleaving,
 *         get_pp_rank_microbatches, get_schedule_table,
 *         forward_backward_pipelining_with_interleaving.
 *   [ZB]  sail-sg/zero-bubble-pipeline-parallelism f68d387 (branch arxiv)
 *         megatron/core/pipeline_parallel/efficiency.py get_hand_schedule,
 *         the paper's own ZB-H1 (warmup_c=1) order and its bubble check.
 *   [DP]  deepseek-ai/DualPipe 3da1bbe dualpipe/dualpipe.py and
 *         dualpipe/dualpipev.py DualPipe.step / DualPipeV.step; the order
 *         of dualpipev's README figure is a test.
 *   gpipe: PyTorch torch/distributed/pipelining/schedules.py ScheduleGPipe. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedule.h"
#include "xalloc.h"

/* Keep every count, key and index well inside an int. */
#define PLC_SCHED_MAX_BLOCKS (1L << 24)

/* ---- placement --------------------------------------------------------- */

int plc_sched_nchunks(plc_sched_placement pl, const plc_sched_params *par)
{
  switch (pl) {
  case PLC_SCHED_PLACE_STAGE: return par->p;
  case PLC_SCHED_PLACE_ROUND: return par->p * par->v;
  default: return 2 * par->p;
  }
}

int plc_sched_stage_of(plc_sched_placement pl, const plc_sched_params *par, int chunk)
{
  int p = par->p;
  switch (pl) {
  case PLC_SCHED_PLACE_STAGE: return chunk;
  case PLC_SCHED_PLACE_ROUND: return chunk % p;
  default: return chunk < p ? chunk : 2 * p - 1 - chunk;
  }
}

void plc_sched_mb_range(plc_sched_placement pl, const plc_sched_params *par, int mb,
                        int *first, int *last)
{
  if (pl == PLC_SCHED_PLACE_BIDIR) {
    int dir = mb >= par->mu / 2;
    *first = dir * par->p;
    *last = *first + par->p - 1;
    return;
  }
  *first = 0;
  *last = plc_sched_nchunks(pl, par) - 1;
}

int plc_sched_chunk_part(plc_sched_placement pl, const plc_sched_params *par, int chunk)
{
  return pl == PLC_SCHED_PLACE_BIDIR ? chunk % par->p : chunk;
}

int plc_sched_max_stage_blocks(plc_sched_placement pl, const plc_sched_params *par)
{
  int per_stage = plc_sched_nchunks(pl, par) / par->p;
  return 3 * par->mu * per_stage;
}

/* ---- emitting ---------------------------------------------------------- */

static inline plc_sched_block *put(plc_sched_block *o, plc_sched_phase ph, int mb, int chunk)
{
  *o = (plc_sched_block){.phase = (uint8_t)ph, .mb = mb, .chunk = chunk, .mb2 = -1, .chunk2 = -1};
  return o;
}

/* ---- gpipe, 1f1b ------------------------------------------------------- */

/* GPipe (Huang et al. 2019) as PyTorch's ScheduleGPipe runs it
 * (torch/distributed/pipelining/schedules.py): every forward, then every
 * full backward, both in microbatch order. */
static int gen_gpipe(const plc_sched_params *par, int s, plc_sched_block *out, int *copy)
{
  (void)copy;
  int n = 0;
  for (int mb = 0; mb < par->mu; mb++)
    put(&out[n++], PLC_SCHED_F, mb, s);
  for (int mb = 0; mb < par->mu; mb++)
    put(&out[n++], PLC_SCHED_B, mb, s);
  return n;
}

/* [MLM] forward_backward_pipelining_without_interleaving: warm-up
 * min(p - s - 1, mu) forwards, then (forward, backward) pairs, then the
 * cool-down backwards. */
static int gen_1f1b(const plc_sched_params *par, int s, plc_sched_block *out, int *copy)
{
  (void)copy;
  int mu = par->mu, warm = par->p - s - 1, n = 0;
  if (warm > mu)
    warm = mu;
  for (int k = 0; k < warm; k++)
    put(&out[n++], PLC_SCHED_F, k, s);
  for (int k = 0; k < mu - warm; k++) {
    put(&out[n++], PLC_SCHED_F, warm + k, s);
    put(&out[n++], PLC_SCHED_B, k, s);
  }
  for (int k = mu - warm; k < mu; k++)
    put(&out[n++], PLC_SCHED_B, k, s);
  return n;
}

static const char *check_v1(const plc_sched_params *par)
{
  return par->v == 1 ? NULL : "this schedule places one chunk per stage (v = 1)";
}

/* ---- interleaved ------------------------------------------------------- */

/* [MLM] get_schedule_table, walked in order: microbatches in groups of g,
 * each group through local chunks 0..v-1; a group whose end reaches mu
 * takes the rest of the microbatches. */
typedef struct vp_iter {
  int m0, size, j, i, g, v, mu;
} vp_iter;

static void vp_start(vp_iter *it, int g, int v, int mu)
{
  *it = (vp_iter){0, g >= mu ? mu : g, 0, 0, g, v, mu};
}

/* Position it at table entry k, within the groups of g microbatches or
 * at their end. */
static void vp_seek(vp_iter *it, int k)
{
  int gv = it->g * it->v;
  it->m0 = k / gv * it->g;
  it->j = k % gv / it->g;
  it->i = k % it->g;
  it->size = it->m0 + it->g >= it->mu ? it->mu - it->m0 : it->g;
}

static inline __attribute__((always_inline)) void vp_next(vp_iter *it, int *mb, int *j)
{
  *mb = it->m0 + it->i;
  *j = it->j;
  if (++it->i < it->size)
    return;
  it->i = 0;
  if (++it->j < it->v)
    return;
  it->j = 0;
  it->m0 += it->size;
  it->size = it->m0 + it->g >= it->mu ? it->mu - it->m0 : it->g;
}

static int vp_group(const plc_sched_params *par)
{
  return par->group > 0 ? par->group : par->p;
}

/* [MLM] forward_backward_pipelining_with_interleaving with
 * get_pp_rank_microbatches: warm-up (p - s - 1)*2 + (v - 1)*g forwards
 * capped at mu*v; forward k runs table[k] on local chunk j (global chunk
 * j*p + s), backward k runs table[k]'s microbatch on local chunk v-1-j;
 * the steady state does forward k+warm, then backward k.  Table entry
 * k + g v is entry k a group (g microbatches) later, while both are in
 * whole groups (k + g v < (mu / g) g v), so the steady pairs t whose
 * forward and backward are there, from t = g v on, are the blocks 2 g v
 * before, g microbatches later: copied (copy, see plc_sched_info). */
static int gen_interleaved(const plc_sched_params *par, int s, plc_sched_block *out, int *copy)
{
  int p = par->p, v = par->v, total = par->mu * v, g = vp_group(par), n = 0;
  int warm = (p - s - 1) * 2 + (v - 1) * g;
  if (warm > total)
    warm = total;
  int gv = g * v, whole = par->mu / g * gv; /* the table's entries in whole groups */
  int tc = total - warm < whole - warm ? total - warm : whole - warm; /* pairs before tc copy */
  vp_iter fi, bi;
  vp_start(&fi, g, v, par->mu);
  vp_start(&bi, g, v, par->mu);
  int mb, j;
  for (int k = 0; k < warm; k++) {
    vp_next(&fi, &mb, &j);
    put(&out[n++], PLC_SCHED_F, mb, j * p + s);
  }
  for (int k = 0; k < total; k++) {
    if (k == gv && tc > gv) { /* pairs [gv, tc): the blocks 2 g v back, g microbatches on */
      copy[0] = 2 * gv;
      copy[1] = n;
      for (int end = n + 2 * (tc - gv); n < end; n++) {
        out[n] = out[n - 2 * gv];
        out[n].mb += g;
      }
      copy[2] = n;
      copy[3] = g;
      k = tc;
      vp_seek(&fi, warm + tc);
      vp_seek(&bi, tc);
      if (k == total)
        break;
    }
    if (k + warm < total) {
      vp_next(&fi, &mb, &j);
      put(&out[n++], PLC_SCHED_F, mb, j * p + s);
    }
    vp_next(&bi, &mb, &j);
    put(&out[n++], PLC_SCHED_B, mb, (v - 1 - j) * p + s);
  }
  return n;
}

/* [MLM] the checks at the top of forward_backward_pipelining_with_
 * interleaving, with g defaulting to p (model_parallel_config.py). */
static const char *check_interleaved(const plc_sched_params *par)
{
  int g = vp_group(par);
  if (par->v < 2)
    return "interleaved needs v >= 2 chunks per stage (v = 1 is 1f1b)";
  if (g < par->p || g > par->mu)
    return "interleaved needs the microbatch group (default p) within [p, mu]: "
           "Megatron-LM requires microbatch_group_size_per_vp_stage in [PP, M]";
  int rem = par->mu % g;
  if (rem > 0 && rem < par->p)
    return "interleaved needs mu mod the microbatch group (default p) to be 0 or at "
           "least p, as Megatron-LM requires (else dependency bubbles)";
  return NULL;
}

/* ---- zb_h1 ------------------------------------------------------------- */

/* [ZB] get_hand_schedule(warmup_c=1): p - s - 1 forwards, then for each
 * i < mu a forward (while any remain), a B, and a W once i >= s; then the
 * s deferred Ws.  Ws run first in, first out. */
static int gen_zb_h1(const plc_sched_params *par, int s, plc_sched_block *out, int *copy)
{
  (void)copy;
  int mu = par->mu, warm = par->p - s - 1, n = 0, f = 0, w = 0;
  while (f < warm)
    put(&out[n++], PLC_SCHED_F, f++, s);
  for (int i = 0; i < mu; i++) {
    if (warm + i < mu)
      put(&out[n++], PLC_SCHED_F, f++, s);
    put(&out[n++], PLC_SCHED_B, i, s)->split = 1;
    if (warm + i >= par->p - 1)
      put(&out[n++], PLC_SCHED_W, w++, s);
  }
  while (w < mu)
    put(&out[n++], PLC_SCHED_W, w++, s);
  return n;
}

/* The hand order is well formed (each block once) when its p - 1 - s
 * warm-up forwards and s deferred Ws fit in mu; [ZB]'s script asserts
 * mu >= 2p for its bubble identity. */
static const char *check_zb_h1(const plc_sched_params *par)
{
  if (par->v != 1)
    return check_v1(par);
  if (par->mu < par->p - 1)
    return "zb_h1 needs mu >= p - 1 microbatches (its p - 1 - s warm-up forwards)";
  return NULL;
}

/* ---- dualpipe, dualpipev ----------------------------------------------- */

/* [DP] step(): each rank runs two local phases.  DualPipeV: phase 0 is
 * chunk s, phase 1 chunk 2p-1-s, every microbatch enters at stage 0.
 * DualPipe: phase ^ (s in the second half) is the direction; direction 0
 * (fed at stage 0) runs chunk s, direction 1 (fed at stage p-1) chunk
 * 2p-1-s, each on its half of the microbatches.  The k-th forward (and
 * the k-th backward) of a phase is its k-th microbatch; a W runs the
 * oldest B that deferred its weights (WeightGradStore, first in first
 * out). */
typedef struct dual_gen {
  plc_sched_block *out;
  int n, wcur;
  int s, p, M, second, bidir;
  int fcnt[2], bcnt[2];
} dual_gen;

static int dual_chunk(const dual_gen *g, int ph)
{
  return (ph ^ g->second) == 0 ? g->s : 2 * g->p - 1 - g->s;
}

static int dual_mb(const dual_gen *g, int ph, int k)
{
  return (g->bidir ? (ph ^ g->second) * g->M : 0) + k;
}

static void dual_f(dual_gen *g, int ph)
{
  put(&g->out[g->n++], PLC_SCHED_F, dual_mb(g, ph, g->fcnt[ph]++), dual_chunk(g, ph));
}

static void dual_b(dual_gen *g, int ph, int zb)
{
  put(&g->out[g->n++], PLC_SCHED_B, dual_mb(g, ph, g->bcnt[ph]++), dual_chunk(g, ph))->split =
      (uint8_t)zb;
}

static void dual_fb(dual_gen *g, int ph0, int ph1)
{
  plc_sched_block *o = put(&g->out[g->n++], PLC_SCHED_FB, dual_mb(g, ph0, g->fcnt[ph0]++),
                           dual_chunk(g, ph0));
  o->mb2 = dual_mb(g, ph1, g->bcnt[ph1]++);
  o->chunk2 = dual_chunk(g, ph1);
}

static void dual_w(dual_gen *g)
{
  while (g->wcur < g->n &&
         !(g->out[g->wcur].phase == PLC_SCHED_B && g->out[g->wcur].split))
    g->wcur++;
  if (g->wcur == g->n)
    return; /* cannot happen for the counts below; tests check every W */
  const plc_sched_block *b = &g->out[g->wcur++];
  put(&g->out[g->n++], PLC_SCHED_W, b->mb, b->chunk);
}

/* The eight steps of [DP] step(), with P ranks per half (DualPipe: p/2,
 * DualPipeV: p), h the rank within its half, M microbatches per direction
 * (DualPipe: mu/2, DualPipeV: mu).  The middle ranks (DualPipeV: the last
 * rank) run the first step-4 pair as a separate F and B. */
static void dual_steps(dual_gen *g, int P, int h, int middle)
{
  for (int i = 0; i < (P - h - 1) * 2; i++)            /* 1: nF0 */
    dual_f(g, 0);
  for (int i = 0; i < h + 1; i++) {                    /* 2: nF0F1 */
    dual_f(g, 0);
    dual_f(g, 1);
  }
  for (int i = 0; i < P - h - 1; i++) {                /* 3: nB1W1F1 */
    dual_b(g, 1, 1);
    dual_w(g);
    dual_f(g, 1);
  }
  for (int i = 0; i < g->M - 2 * P + h + 1; i++) {     /* 4: nF0B1F1B0 */
    if (i == 0 && middle) {
      dual_f(g, 0);
      dual_b(g, 1, 0);
    } else {
      dual_fb(g, 0, 1);
    }
    dual_fb(g, 1, 0);
  }
  for (int i = 0; i < P - h - 1; i++) {                /* 5: nB1F1B0 */
    dual_b(g, 1, 0);
    dual_fb(g, 1, 0);
  }
  int zb = 0;                                          /* 6: nB1B0 */
  for (int i = 0; i < h + 1; i++) {
    if (i == (h + 1) / 2 && h % 2 == 1)
      zb = 1;
    dual_b(g, 1, zb);
    if (i == (h + 1) / 2 && h % 2 == 0)
      zb = 1;
    dual_b(g, 0, zb);
  }
  for (int i = 0; i < P - h - 1; i++) {                /* 7: nWB0 */
    dual_w(g);
    dual_b(g, 0, 1);
  }
  for (int i = 0; i < h + 1; i++)                      /* 8: nW */
    dual_w(g);
}

static int gen_dual(const plc_sched_params *par, int s, plc_sched_block *out, int bidir)
{
  dual_gen g = {.out = out, .s = s, .p = par->p, .bidir = bidir};
  int P, h, middle;
  if (bidir) {
    P = par->p / 2;
    h = s < par->p - 1 - s ? s : par->p - 1 - s;
    g.M = par->mu / 2;
    g.second = s >= P;
    middle = s == P - 1 || s == P;
  } else {
    P = par->p;
    h = s;
    g.M = par->mu;
    middle = s == par->p - 1;
  }
  dual_steps(&g, P, h, middle);
  return g.n;
}

static int gen_dualpipe(const plc_sched_params *par, int s, plc_sched_block *out, int *copy)
{
  (void)copy;
  return gen_dual(par, s, out, 1);
}

static int gen_dualpipev(const plc_sched_params *par, int s, plc_sched_block *out, int *copy)
{
  (void)copy;
  return gen_dual(par, s, out, 0);
}

/* [DP] DualPipe.step asserts an even number of ranks and num_chunks even
 * and >= 2 * num_ranks; DualPipeV.step asserts num_chunks >= 2 * num_ranks. */
static const char *check_dualpipe(const plc_sched_params *par)
{
  if (par->v != 2)
    return "dualpipe places two chunks per stage (v = 2)";
  if (par->p % 2 != 0)
    return "dualpipe needs an even number of stages p";
  if (par->mu % 2 != 0 || par->mu < 2 * par->p)
    return "dualpipe needs an even mu >= 2p microbatches (half enter at each end)";
  return NULL;
}

static const char *check_dualpipev(const plc_sched_params *par)
{
  if (par->v != 2)
    return "dualpipev places two chunks per stage (v = 2)";
  if (par->mu < 2 * par->p)
    return "dualpipev needs mu >= 2p microbatches";
  return NULL;
}

/* ---- the table --------------------------------------------------------- */

const plc_sched_info plc_sched_table[PLC_SCHED_NKINDS] = {
  {"gpipe", PLC_SCHED_PLACE_STAGE,
   "GPipe, Huang et al. 2019; PyTorch torch/distributed/pipelining/schedules.py, ScheduleGPipe",
   check_v1, gen_gpipe, 2},
  {"1f1b", PLC_SCHED_PLACE_STAGE,
   "Megatron-LM megatron/core/pipeline_parallel/schedules.py, "
   "forward_backward_pipelining_without_interleaving",
   check_v1, gen_1f1b, 2},
  {"interleaved", PLC_SCHED_PLACE_ROUND,
   "Megatron-LM megatron/core/pipeline_parallel/schedules.py, "
   "forward_backward_pipelining_with_interleaving",
   check_interleaved, gen_interleaved, 2},
  {"zb_h1", PLC_SCHED_PLACE_STAGE,
   "Qi et al., Zero Bubble Pipeline Parallelism (ICLR 2024); sail-sg/zero-bubble-"
   "pipeline-parallelism, efficiency.py get_hand_schedule",
   check_zb_h1, gen_zb_h1, 3},
  {"dualpipe", PLC_SCHED_PLACE_BIDIR,
   "DeepSeek-V3 Technical Report; deepseek-ai/DualPipe dualpipe/dualpipe.py",
   check_dualpipe, gen_dualpipe, 0},
  {"dualpipev", PLC_SCHED_PLACE_V,
   "deepseek-ai/DualPipe dualpipe/dualpipev.py (Sea AI Lab's cut-in-half)",
   check_dualpipev, gen_dualpipev, 0},
};

const plc_sched_info *plc_sched_find(const char *name)
{
  for (int k = 0; k < PLC_SCHED_NKINDS; k++)
    if (strcmp(plc_sched_table[k].name, name) == 0)
      return &plc_sched_table[k];
  return NULL;
}

/* ---- generating -------------------------------------------------------- */

/* Size limits shared by generated and explicit orders. */
static const char *check_size(plc_sched_placement pl, const plc_sched_params *par)
{
  if (par->p < 1 || par->v < 1 || par->mu < 1)
    return "a schedule needs p, v and mu of at least 1";
  long chunks = pl == PLC_SCHED_PLACE_STAGE ? par->p
              : pl == PLC_SCHED_PLACE_ROUND ? (long)par->p * par->v : 2L * par->p;
  if (chunks > PLC_SCHED_MAX_BLOCKS || 3 * chunks * (long)par->mu > PLC_SCHED_MAX_BLOCKS)
    return "a schedule of more than 2^24 blocks is not supported";
  return NULL;
}

static void sched_alloc(plc_sched *s, plc_sched_placement pl, const plc_sched_params *par,
                        long maxblocks)
{
  s->place = pl;
  s->par = *par;
  s->nchunks = plc_sched_nchunks(pl, par);
  s->nblocks = 0;
  /* One allocation: the blocks, then the stage offsets and copied runs. */
  size_t bytes = (size_t)maxblocks * sizeof(plc_sched_block) + (size_t)(4 * par->p + 1) * sizeof(int);
  s->blocks = plc_xmalloc(bytes);
  s->start = (int *)(void *)(s->blocks + maxblocks);
  s->copy = s->start + par->p + 1;
  s->copy_m = 0;
}

const char *plc_sched_generate(plc_sched_kind kind, const plc_sched_params *par,
                               plc_sched *out)
{
  if ((unsigned)kind >= PLC_SCHED_NKINDS)
    return "unknown schedule";
  const plc_sched_info *in = &plc_sched_table[kind];
  const char *why = check_size(in->place, par);
  if (!why && in->check)
    why = in->check(par);
  if (why)
    return why;
  /* as many blocks as the stages run when that is fixed (room beyond them
   * is memory the heap touches at its end, a huge page) */
  int per = in->per_mb ? in->per_mb * par->mu * (plc_sched_nchunks(in->place, par) / par->p)
                       : plc_sched_max_stage_blocks(in->place, par);
  sched_alloc(out, in->place, par, (long)per * par->p);
  out->copy_m = 0;
  for (int s = 0; s < par->p; s++) {
    int copy[4] = {0, 0, 0, 0}, *c = &out->copy[3 * s];
    out->start[s] = out->nblocks;
    int n = in->gen(par, s, out->blocks + out->nblocks, copy);
    if (in->per_mb && n != per)
      abort(); /* a generator's count differs from its table entry's */
    c[0] = c[1] = c[2] = 0;
    if (copy[0] > 0 && (out->copy_m == 0 || out->copy_m == copy[3])) {
      out->copy_m = copy[3];
      c[0] = copy[0];
      c[1] = out->nblocks + copy[1];
      c[2] = out->nblocks + copy[2];
    }
    out->nblocks += n;
  }
  out->start[par->p] = out->nblocks;
  return NULL;
}

void plc_sched_free(plc_sched *s)
{
  free(s->blocks);
  s->blocks = NULL;
  s->start = NULL;
  s->copy = NULL;
  s->copy_m = 0;
  s->nblocks = 0;
}

void plc_sched_block_name(const plc_sched_block *b, char *buf, size_t len)
{
  static const char *const names[] = {"F", "B", "W", "FB"};
  if (b->phase == PLC_SCHED_FB)
    snprintf(buf, len, "FB(F mb %d chunk %d, B mb %d chunk %d)", (int)b->mb, (int)b->chunk,
             (int)b->mb2, (int)b->chunk2);
  else if (b->phase <= PLC_SCHED_W)
    snprintf(buf, len, "%s(mb %d, chunk %d)", names[b->phase], (int)b->mb, (int)b->chunk);
  else
    snprintf(buf, len, "block of unknown phase %d", (int)b->phase);
}

/* ---- in flight ----------------------------------------------------------- */

void plc_sched_inflight(const plc_sched *s, int stage, int *inflight_b, int *inflight_w)
{
  int nb = 0, nw = 0, mb = 0, mw = 0;
  for (int i = s->start[stage]; i < s->start[stage + 1]; i++) {
    const plc_sched_block *b = &s->blocks[i];
    if (b->phase == PLC_SCHED_F || b->phase == PLC_SCHED_FB) {
      nb++, nw++;
      if (nb > mb) mb = nb;
      if (nw > mw) mw = nw;
    }
    if (b->phase == PLC_SCHED_B || b->phase == PLC_SCHED_FB) {
      nb--;
      if (!b->split) nw--;
    }
    if (b->phase == PLC_SCHED_W)
      nw--;
  }
  *inflight_b = mb;
  *inflight_w = mw;
}

/* ---- validating explicit orders ------------------------------------------ */

/* Why (mb, chunk) cannot be on stage, or NULL. */
static const char *bad_pair(const plc_sched *s, int stage, int mb, int chunk)
{
  int first, last;
  if (mb < 0 || mb >= s->par.mu)
    return "its microbatch is out of range";
  plc_sched_mb_range(s->place, &s->par, mb, &first, &last);
  if (chunk < first || chunk > last)
    return "its microbatch does not run that chunk";
  if (plc_sched_stage_of(s->place, &s->par, chunk) != stage)
    return "its chunk is on another stage";
  return NULL;
}

static int fail(char *msg, size_t len, const plc_sched *s, int stage, int i, const char *why)
{
  char name[96];
  plc_sched_block_name(&s->blocks[i], name, sizeof name);
  snprintf(msg, len, "stage %d, block %d: %s: %s", stage, i - s->start[stage], name, why);
  return 0;
}

/* Count one (mb, chunk) of phase k; a second one is a duplicate. */
static const char *count_pair(const plc_sched *s, unsigned char *cnt, int k, int mb, int chunk)
{
  unsigned char *c = &cnt[((size_t)k * s->par.mu + (size_t)mb) * (size_t)s->nchunks + (size_t)chunk];
  if (*c)
    return k == 0 ? "its forward appears twice" : k == 1 ? "its backward appears twice"
                                                       : "its W appears twice";
  *c = 1;
  return NULL;
}

static const char *check_block(const plc_sched *s, int stage, const plc_sched_block *b,
                               unsigned char *cnt)
{
  const char *why;
  switch (b->phase) {
  case PLC_SCHED_F: case PLC_SCHED_B: case PLC_SCHED_W:
    if ((why = bad_pair(s, stage, b->mb, b->chunk)))
      return why;
    return count_pair(s, cnt, b->phase, b->mb, b->chunk);
  case PLC_SCHED_FB:
    if ((why = bad_pair(s, stage, b->mb, b->chunk)) || (why = bad_pair(s, stage, b->mb2, b->chunk2)))
      return why;
    if ((why = count_pair(s, cnt, 0, b->mb, b->chunk)))
      return why;
    return count_pair(s, cnt, 1, b->mb2, b->chunk2);
  default:
    return "unknown phase";
  }
}

/* Every F and B of every microbatch's chunks must be present. */
static int check_missing(const plc_sched *s, const unsigned char *cnt, char *msg, size_t len)
{
  size_t K = (size_t)s->par.mu * (size_t)s->nchunks;
  for (int mb = 0; mb < s->par.mu; mb++) {
    int first, last;
    plc_sched_mb_range(s->place, &s->par, mb, &first, &last);
    for (int c = first; c <= last; c++)
      for (int k = 0; k < 2; k++)
        if (!cnt[(size_t)k * K + (size_t)mb * (size_t)s->nchunks + (size_t)c]) {
          snprintf(msg, len, "%s(mb %d, chunk %d) is missing (it belongs on stage %d)",
                   k ? "B" : "F", mb, c, plc_sched_stage_of(s->place, &s->par, c));
          return 0;
        }
  }
  return 1;
}

/* A B (or an FB's backward) is split exactly when its W is present. */
static void set_split(plc_sched *s, const unsigned char *cnt)
{
  size_t K = (size_t)s->par.mu * (size_t)s->nchunks;
  for (int i = 0; i < s->nblocks; i++) {
    plc_sched_block *b = &s->blocks[i];
    if (b->phase == PLC_SCHED_B)
      b->split = cnt[2 * K + (size_t)b->mb * (size_t)s->nchunks + (size_t)b->chunk];
    else if (b->phase == PLC_SCHED_FB)
      b->split = cnt[2 * K + (size_t)b->mb2 * (size_t)s->nchunks + (size_t)b->chunk2];
    else
      b->split = 0;
  }
}

static int check_shape(const plc_sched *s, char *msg, size_t len)
{
  const char *why = check_size(s->place, &s->par);
  if (why) {
    snprintf(msg, len, "%s", why);
    return 0;
  }
  if (s->nblocks < 0 || s->start[0] != 0 || s->start[s->par.p] != s->nblocks) {
    snprintf(msg, len, "the stage offsets do not cover the blocks");
    return 0;
  }
  for (int st = 0; st < s->par.p; st++)
    if (s->start[st + 1] < s->start[st]) {
      snprintf(msg, len, "the stage offsets decrease at stage %d", st);
      return 0;
    }
  return 1;
}

int plc_sched_validate(plc_sched *s, char *msg, size_t len)
{
  if (!check_shape(s, msg, len))
    return 0;
  s->nchunks = plc_sched_nchunks(s->place, &s->par);
  size_t K = (size_t)s->par.mu * (size_t)s->nchunks;
  unsigned char *cnt = plc_xcalloc(3 * K, 1);
  int ok = 1;
  for (int st = 0; ok && st < s->par.p; st++)
    for (int i = s->start[st]; ok && i < s->start[st + 1]; i++) {
      const char *why = check_block(s, st, &s->blocks[i], cnt);
      if (why)
        ok = fail(msg, len, s, st, i, why);
    }
  ok = ok && check_missing(s, cnt, msg, len);
  if (ok)
    set_split(s, cnt);
  free(cnt);
  if (!ok)
    return 0;
  plc_sched_sim sim;
  plc_sched_sim_init(&sim);
  ok = plc_sched_simulate(s, NULL, &sim, msg, len);
  plc_sched_sim_clear(&sim);
  return ok;
}
