/* schedule.h - pipeline schedules as data: generators, custom orders, and
 * an exact block-level simulator.
 *
 * A schedule orders, per pipeline stage, the blocks of one training step:
 * F(mb, c) the forward of microbatch mb through model chunk c, B(mb, c) its
 * backward, W(mb, c) its weight-gradient part when the schedule runs that
 * separately, and FB, a forward and a backward of two different
 * (mb, chunk) pairs that DualPipe runs overlapped as one block.
 *
 * B means the whole backward (input and weight gradients) unless the
 * schedule also has a W block for the same (mb, chunk); then B is only the
 * input-gradient part and the block's `split` flag is set.  gpipe, 1f1b and
 * interleaved never split; zb_h1 always splits; dualpipe and dualpipev
 * split the backwards the DualPipe sources run with `enable_zb` and keep
 * the rest whole (an FB's backward is always whole there).
 *
 * Placement (model chunk -> stage), by schedule:
 *   gpipe, 1f1b, zb_h1   p chunks, chunk c on stage c (v = 1);
 *   interleaved          p*v chunks, round-robin: stage s holds chunks
 *                        s, s+p, ..., s+(v-1)p (Megatron's vp stages);
 *   dualpipev            2p chunks in a V: stage s holds s and 2p-1-s; every
 *                        microbatch runs chunks 0..2p-1;
 *   dualpipe             two directions over p model stages: chunk c < p is
 *                        model stage c of the direction fed at stage 0 (on
 *                        stage c), chunk p+k is model stage k of the
 *                        direction fed at stage p-1 (on stage p-1-k), so
 *                        stage_of is the V's; microbatches 0..mu/2-1 run
 *                        chunks 0..p-1, mu/2..mu-1 run chunks p..2p-1.
 * Dependencies: F(mb,c) after F(mb,c-1); B(mb,c) after B(mb,c+1) and
 * F(mb,c); W(mb,c) after B(mb,c) (within the microbatch's chunk range; a
 * dependency on another stage adds that stage's p2p latency).
 *
 * Sources (read, not copied; details in schedule.c and plc(5)):
 *   Megatron-LM megatron/core/pipeline_parallel/schedules.py (1f1b,
 *   interleaved); the zero-bubble paper's hand schedule, sail-sg/zero-
 *   bubble-pipeline-parallelism, branch arxiv, megatron/core/pipeline_
 *   parallel/efficiency.py get_hand_schedule(warmup_c=1) (zb_h1);
 *   deepseek-ai/DualPipe dualpipe/dualpipe.py and dualpipev.py (dualpipe,
 *   dualpipev); GPipe (Huang et al. 2019) as PyTorch's ScheduleGPipe runs
 *   it (torch/distributed/pipelining/schedules.py) for gpipe.
 *
 * The block model: a block waits for the blocks it depends on and nothing
 * else.  Two things of the real runtimes are left to the op-level engine:
 * DualPipe defers each send to the next commit and waits for every receive
 * posted so far before a compute; Megatron's 1F1B sends a forward's
 * output together with the receive of a backward's gradient
 * (send_forward_recv_backward) and waits for both.
 *
 * Times are per stage and per block (a stage's chunks share them; an
 * interleaved chunk takes the stage's t_f/v).  For uniform stages without
 * p2p time the simulated bubble equals the closed forms exactly when
 * (test_schedule.c checks these over grids of p, mu and rational times;
 * t_b is the whole backward):
 *   gpipe, 1f1b   (p-1)(t_f+t_b), always;
 *   interleaved   (p-1)(t_f+t_b)/v, under Megatron's preconditions;
 *   zb_h1         (p-1)(t_f+t_b-2t_w), when p = 1, or mu >= p, t_w <= t_f
 *                 and t_w <= t_b - t_w (the paper's T_W <= T_F, T_B);
 *   dualpipe      (p/2-1)(t_FB+t_b-3t_w), when t_FB = t_f + t_b,
 *                 t_b - t_w = t_f and t_w <= t_f (DualPipe's figure:
 *                 F, input B and W one unit each);
 *   dualpipev     the same with PP = 2p stages: (p-1)(t_FB+t_b-3t_w).
 * Outside them (uneven stages, p2p time, a W longer than F or than the
 * input-gradient B, an FB that overlaps) the two part.
 *
 * Ownership: plc_sched_generate fills a plc_sched whose storage is one
 * allocation, freed by plc_sched_free; plc_sched_sim keeps its scratch
 * between runs, so a search re-simulates without allocating; a
 * plc_sched_prep (plc_sched_prepare) holds what every run of one schedule
 * shares, so a schedule simulated again (a report's re-analyses) only
 * propagates its new times. */
#ifndef PLC_SCHEDULE_H
#define PLC_SCHEDULE_H

#include <stddef.h>
#include <stdint.h>
#include <gmp.h>

typedef enum plc_sched_phase {
  PLC_SCHED_F, PLC_SCHED_B, PLC_SCHED_W, PLC_SCHED_FB
} plc_sched_phase;

typedef enum plc_sched_kind {
  PLC_SCHED_GPIPE, PLC_SCHED_1F1B, PLC_SCHED_INTERLEAVED, PLC_SCHED_ZB_H1,
  PLC_SCHED_DUALPIPE, PLC_SCHED_DUALPIPEV, PLC_SCHED_NKINDS
} plc_sched_kind;

typedef enum plc_sched_placement {
  PLC_SCHED_PLACE_STAGE,  /* chunk c on stage c */
  PLC_SCHED_PLACE_ROUND,  /* chunk c on stage c mod p */
  PLC_SCHED_PLACE_V,      /* chunk c on c < p ? c : 2p-1-c */
  PLC_SCHED_PLACE_BIDIR   /* as V, two directions of p chunks each */
} plc_sched_placement;

typedef struct plc_sched_block {
  uint8_t phase;        /* plc_sched_phase */
  uint8_t split;        /* B / FB's backward: a W block does its weights */
  int32_t mb, chunk;    /* F, B, W; the forward of an FB */
  int32_t mb2, chunk2;  /* the backward of an FB; else unused (-1) */
} plc_sched_block;

typedef struct plc_sched_params {
  int p;      /* pipeline stages (devices) */
  int v;      /* chunks per stage: 1, vpp for interleaved, 2 for dual* */
  int mu;     /* microbatches per step */
  int group;  /* interleaved: Megatron's microbatch_group_size_per_vp_stage;
                 0 means its default, p */
} plc_sched_params;

typedef struct plc_sched {
  plc_sched_placement place;
  plc_sched_params par;
  int nchunks;
  int nblocks;
  int *start;              /* p+1: stage s has blocks[start[s]..start[s+1]) */
  plc_sched_block *blocks;
  /* Runs the generator copied (plc_sched_info.gen), 3 per stage, or NULL
   * (an explicit order): on stage s every block i in [copy[3s+1],
   * copy[3s+2]) is block i - copy[3s] with copy_m microbatches more (mb,
   * and an FB's mb2; all else the same), so a reader need not compare
   * them (the prepared order's repeat, schedule_sim.c).  copy_m 0: none. */
  int *copy;
  int copy_m;
} plc_sched;

typedef struct plc_sched_info {
  const char *name;
  plc_sched_placement place;
  const char *source;      /* citation, also in plc(5) */
  /* NULL when the parameters fit, else why not (a static string). */
  const char *(*check)(const plc_sched_params *par);
  /* Write stage s's blocks to out (room for plc_sched_max_stage_blocks)
   * and return their number; when it wrote a run of them as copies of
   * earlier ones, copy[0..3] = rep, from, to, m: every block in
   * [from, to) of out is the one rep before with m microbatches more
   * (copy is zeroed by the caller). */
  int (*gen)(const plc_sched_params *par, int s, plc_sched_block *out, int *copy);
  /* Blocks a stage runs per microbatch and chunk it holds (F and B, and W
   * when split), so a schedule is allocated to the block; 0 when F&B
   * blocks make it vary. */
  int per_mb;
} plc_sched_info;

extern const plc_sched_info plc_sched_table[PLC_SCHED_NKINDS];

/* The table entry named name, or NULL. */
const plc_sched_info *plc_sched_find(const char *name);

/* Placement maps.  nchunks: p for STAGE, p*v for ROUND, 2p for V/BIDIR. */
int plc_sched_nchunks(plc_sched_placement pl, const plc_sched_params *par);
int plc_sched_stage_of(plc_sched_placement pl, const plc_sched_params *par, int chunk);
/* The chunks microbatch mb runs, in order: [*first, *last]. */
void plc_sched_mb_range(plc_sched_placement pl, const plc_sched_params *par, int mb,
                        int *first, int *last);
/* The model part (layers) chunk c computes: c, or c mod p for BIDIR. */
int plc_sched_chunk_part(plc_sched_placement pl, const plc_sched_params *par, int chunk);

/* Blocks a stage can have at most: 3 * mu * (chunks per stage). */
int plc_sched_max_stage_blocks(plc_sched_placement pl, const plc_sched_params *par);

/* Check kind's preconditions and the size limits, then generate.  Returns
 * NULL on success (free with plc_sched_free) or the reason, with *out
 * untouched. */
const char *plc_sched_generate(plc_sched_kind kind, const plc_sched_params *par,
                               plc_sched *out);
void plc_sched_free(plc_sched *s);

/* Validate an explicit order (s->place, par, start, blocks filled by the
 * caller; split flags are set here from the W blocks present).  Returns 1
 * when every needed block is there exactly once, on the stage that holds
 * its chunk, and the order runs without deadlock; else 0 with a message
 * naming the first offending block in msg. */
int plc_sched_validate(plc_sched *s, char *msg, size_t msglen);

/* What a block waits for: the F or B of (mb, chunk), on stage. */
typedef struct plc_sched_dep {
  uint8_t phase;        /* PLC_SCHED_F or PLC_SCHED_B */
  int32_t mb, chunk;
  int stage;
} plc_sched_dep;

/* The blocks b of s waits for, at most 4 (an FB: its forward's and its
 * backward's), into out; returns their number. */
int plc_sched_deps(const plc_sched *s, const plc_sched_block *b, plc_sched_dep out[4]);

/* "F(mb 3, chunk 1)" etc. into buf. */
void plc_sched_block_name(const plc_sched_block *b, char *buf, size_t len);

/* Microbatch-chunks in flight on stage s, at most, from the order alone:
 * inflight_b counts F done and B not yet done, inflight_w F done and the
 * whole backward (B, and W when split) not yet done; an FB counts its
 * forward before its backward. */
void plc_sched_inflight(const plc_sched *s, int stage, int *inflight_b, int *inflight_w);

/* Per-stage block durations: f forward, b the whole backward (B+W), w the
 * weight-gradient part (a split B takes b - w), fb an overlapped FB (a
 * split FB's backward makes it fb - w; read only when the schedule has
 * F&B blocks, and fbo only with fb_pairs), p2p the latency of a transfer
 * leaving the stage.  With sim->fb_pairs, fbo is an F&B of this entry's
 * forward and the backward of its stage's other entry (two per stage),
 * overlapped (fbpair.h); a split one takes fbo less the other's w. */
typedef struct plc_sched_times {
  mpq_t f, b, w, fb, p2p, fbo;
} plc_sched_times;

void plc_sched_times_init(plc_sched_times *t, int n);
void plc_sched_times_clear(plc_sched_times *t, int n);

/* The simulator's machine integers: 128 bits where the compiler has them
 * (GCC and Clang on 64-bit targets), else 64. */
#ifdef __SIZEOF_INT128__
__extension__ typedef __int128 plc_sched_int;
#else
typedef int64_t plc_sched_int;
#endif

/* A schedule prepared to be simulated again and again with other times:
 * its blocks in an order where each comes after every block it waits for
 * (the order a run advances the stages in), each with its stage, its
 * dependencies as positions in that order and the p2p latency each adds,
 * the time entries its duration takes and the idle phase of the gap
 * before it.  None of that depends on the times, only on the blocks and
 * on per_chunk and fb_pairs (plc_sched_sim), so a simulation through it
 * gives the times a run of the schedule itself gives, and only has to
 * propagate them.  It also notes where the order repeats (a steady
 * phase), so a run can skip the repeats when its times repeat too
 * (schedule_sim.c); a walk may write parts of it not written yet, so
 * one prep serves one thread at a time.  Opaque; see plc_sched_prepare. */
typedef struct plc_sched_prep plc_sched_prep;

/* Simulator results and scratch, reusable across runs. */
typedef struct plc_sched_sim {
  mpq_t makespan;
  mpq_t bubble;         /* makespan - busy of the critical stage (device) */
  int critical;         /* stage with the most work, its blocks' times summed
                           (the lowest on ties) */
  int p;
  int exact_only;       /* set to skip the machine-integer path (tests) */
  int full_walk;        /* set to time every block: no skipping of the
                           steady phase's repeats (tests) */
  int wide_only;        /* set to skip the 64-bit walk (tests) */
  int lazy;             /* set by the caller: a run on machine integers leaves
                           each stage's busy, idle, warmup, steady, cooldown
                           and stage_free to plc_sched_sim_stage (the
                           makespan, bubble and critical stage are filled) */
  int pending;          /* those figures wait for plc_sched_sim_stage */
  int used_narrow;      /* the last run walked on int64_t (schedule_walk.h) */
  int skipped;          /* blocks the last run did not walk (steady
                           repeats, schedule_sim.c), 0 on the mpz path */
  /* set by the caller: times has an entry per chunk, stage st's local
   * chunk k (chunk / p) at st x (nchunks / p) + k, so a stage's chunks can
   * take different times (DualPipe's second direction on device s runs
   * model stage p-1-s); an F&B of two entries takes the forward of one
   * plus the (split) backward of the other, or with fb_pairs (two
   * entries per stage) the forward entry's fbo.  Else an entry per stage. */
  int per_chunk;
  int fb_pairs;
  /* set by the caller to record when each block starts and ends (indexed
   * like s->blocks, initialised, as many as its blocks; the mpz path) */
  mpq_t *rec_start, *rec_end;
  /* set by the caller: the schedule prepared (plc_sched_prepare) with this
   * per_chunk and fb_pairs; else, or when it was prepared for another
   * schedule or other flags, each run prepares the schedule itself */
  const plc_sched_prep *prep;
  int used_fast;        /* the last run used the machine-integer path */
  mpq_t *busy, *idle;   /* per stage */
  /* per stage, its idle time by the phase it falls in: warm-up, up to the
   * start of its first backward (B, W or F&B); cool-down, after the end of
   * its last forward (F or F&B) once past the warm-up, and after its last
   * block; steady, the gaps between.  warmup + steady + cooldown = idle.
   * A uniform 1F1B, interleaved or ZB-H1 pipeline idles in its steady
   * phase only for p2p time; uneven stages idle there too, and DualPipe's
   * order itself does (its bubble falls between its phases). */
  mpq_t *warmup, *steady, *cooldown;
  /* scratch */
  int cap_p, cap_t, cap_n, cap_n64, cap_zn;
  mpq_t *stage_free;    /* per stage, when it ends */
  /* Every time is an integer multiple of 1/den, den the least common
   * denominator of the stages' times: the machine-integer path keeps them
   * in plc_sched_int (each block's end, per-stage free, busy, warm-up and
   * steady idle, durations), the other path in mpz_t, the same arithmetic
   * without a gcd per operation. */
  mpz_t den;
  plc_sched_int *endi, *freei, *busyi, *duri, *warmi, *steadyi;
  plc_sched_int *busyq; /* per stage, its busy time's growth over a period (schedule_sim.c) */
  /* the same on int64_t, for a step whose ends all fit (schedule_walk.h) */
  int64_t *end64, *free64, *busy64, *dur64, *warm64, *steady64, *grow64;
  mpz_t *endz, *freez, *busyz, *durz, *warmz, *steadyz;
  mpz_t zstart, zgap, zdur;
} plc_sched_sim;

void plc_sched_sim_init(plc_sched_sim *sim);
void plc_sched_sim_clear(plc_sched_sim *sim);

/* Fill stage st's figures after a run that left them (sim->lazy); a
 * no-op when they are filled.  Valid until the next run. */
void plc_sched_sim_stage(plc_sched_sim *sim, int st);

/* Prepare s (from plc_sched_generate or a successful plc_sched_validate)
 * for runs with per_chunk and fb_pairs set so (plc_sched_sim).  Returns
 * it (free with plc_sched_prep_free, before s), or NULL with a message
 * when the order deadlocks, the message plc_sched_simulate gives. */
plc_sched_prep *plc_sched_prepare(const plc_sched *s, int per_chunk, int fb_pairs, char *msg,
                                  size_t msglen);
void plc_sched_prep_free(plc_sched_prep *prep);
/* Blocks whose repeat prep took from s->copy without comparing (tests). */
long plc_sched_prep_trusted(const plc_sched_prep *prep);

/* s must come from plc_sched_generate or a successful plc_sched_validate.
 * Run every stage's blocks in order, each starting at max(stage free, each
 * dependency's end + the p2p latency of its stage when it is on another
 * stage).  times has p entries (nchunks with sim->per_chunk); the
 * properties (faster blocks never make the step longer, bubble >= 0) need
 * them >= 0 and w <= b.  Returns 1, or
 * 0 with a message when the order deadlocks (see plc_sched_validate).
 * With sim->prep the order is not searched again, only timed.
 * When every time over their common denominator fits in 63 bits with room
 * for the whole step, the run is done in plc_sched_int and converted back, which
 * is exact (tests compare it with the GMP run); else it runs on mpq_t. */
int plc_sched_simulate(const plc_sched *s, const plc_sched_times *times, plc_sched_sim *sim,
                       char *msg, size_t msglen);

#endif
