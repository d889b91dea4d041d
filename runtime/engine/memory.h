/* memory.h - device memory over a training step: the static state the
 * templates declare and the activations of the microbatches in flight,
 * taken from the schedule itself.
 *
 * Every template instance may declare, in a `memory` section, the bytes it
 * keeps resident (weights, grads, optimizer), the bytes one microbatch
 * keeps from its forward to its backward (activations) and a transient
 * working set while it runs (buffers).  Lowering sums them per stage and
 * virtual chunk (plc_ir_mem).  Here each stage's blocks are walked in the
 * schedule's order (schedule.h): F(mb, c) allocates chunk c's activations
 * at its end, B(mb, c) frees them at its end, or W(mb, c) when the
 * schedule splits the backward (the weight gradient still needs the
 * layer inputs); an FB allocates its forward's before freeing its
 * backward's.  The device's level during a block is
 *   static + activations in flight + the block's chunk's buffers,
 * and the peak is the largest level over the step.  Since a stage's blocks
 * run one after another on its compute stream, the order alone fixes when
 * each allocation and release happens relative to the others: the peak is
 * the one the whole-step simulation would reach, without its times.
 *
 * Which chunks a stage holds follows the schedule's placement: a DualPipe
 * stage holds two model parts (its own and the mirror one), so its static
 * state is both parts'. */
#ifndef PLC_MEMORY_H
#define PLC_MEMORY_H

#include <gmp.h>
#include "ir.h"
#include "schedule.h"

typedef struct plc_mem_stage {
  mpq_t weights, grads, optimizer; /* resident */
  mpq_t activations;  /* in flight at the peak */
  mpq_t buffers;      /* the transient working set at the peak */
  mpq_t peak;         /* the sum of the five: the stage's highest level */
  mpq_t headroom;     /* capacity - reserve - peak, when the capacity is known */
  int inflight;       /* microbatch-chunks in flight at the peak */
  int max_inflight;   /* the most in flight at any time */
} plc_mem_stage;

typedef struct plc_mem {
  int known;          /* some template has a memory section */
  int capacity_known; /* the device declares its memory */
  mpq_t capacity, reserve, usable; /* usable = capacity - reserve */
  int nstages;
  plc_mem_stage *st;  /* nstages entries; NULL when !known */
  int worst;          /* the stage with the highest peak (the first on ties) */
  int fits;           /* every stage's peak <= usable (1 when capacity unknown) */
  char why[160];      /* when in flight could not be worked out: why ("" else) */
} plc_mem;

/* Work out every stage's peak for run.  Never fails: a schedule that cannot
 * be generated counts every microbatch of every chunk in flight (the most
 * any order holds) and leaves a
 * reason in why. */
void plc_mem_analyse(plc_mem *m, const plc_ir_run *run);

/* 1 when some stage's static state alone (weights, grads and optimizer of
 * all its virtual chunks) passes the usable memory: the device holding
 * that stage then cannot fit whatever its activations and buffers (every
 * memory entry is at least 0), so plc_mem_analyse would find !fits.  0
 * says nothing (without a memory model or a capacity, or when the static
 * state fits).  A search's early check asks it before walking the
 * schedule. */
int plc_mem_static_unfit(const plc_ir_run *run);
void plc_mem_free(plc_mem *m);

/* res->mem for res->run (allocated here; freed by plc_result_free). */
struct plc_result;
void plc_result_memory(struct plc_result *res);
void plc_result_memory_free(struct plc_result *res);

/* One stage's walk (exposed for tests): blocks in order, act[c] and buf[c]
 * per schedule chunk.  Sets out's activations, buffers, inflight and
 * max_inflight at the highest activations + buffers, and peak to that sum
 * (static state not included).  out must be initialised. */
void plc_mem_walk(const plc_sched_block *blocks, int n, int nchunks, mpq_t *act, mpq_t *buf,
                  plc_mem_stage *out);

/* What a block does to memory: the chunk it allocates (when it ends), the
 * chunk it frees (when it ends), the chunks whose buffers it holds while
 * it runs (-1: none). */
typedef struct plc_mem_ev {
  int alloc, release, buf1, buf2;
} plc_mem_ev;
plc_mem_ev plc_mem_event(const plc_sched_block *b);

/* The run's schedule's parameters (0, with why, when it has none:
 * runsched.h), with per schedule chunk its activations and
 * buffers (nchunks entries each, allocated here, freed with
 * plc_mem_chunks_free); when st is not NULL, each stage's resident state
 * (the parts it holds) is added into st[stage]. */
int plc_mem_chunk_figures(const plc_ir_run *run, plc_sched_params *par, int *nchunks,
                          mpq_t **act, mpq_t **buf, plc_mem_stage *st, char *why, size_t len);
void plc_mem_chunks_free(int nchunks, mpq_t *act, mpq_t *buf);

void plc_mem_stage_init(plc_mem_stage *st);
void plc_mem_stage_clear(plc_mem_stage *st);

#endif
