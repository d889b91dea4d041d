/* report_parts.h - what every report writer shows of a result, derived once.
 *
 * The text (report.c), JSON (report_json.c) and Markdown (report_md.c)
 * reports all take from here: values formatted as the text report prints
 * them, the layout sentences, the reason and hidden share of a
 * communication row, the parts of the step with their shares and notes, the
 * bottleneck, and the walk over the critical stage's collectives.  So the
 * three formats agree on every number and every word.  Strings returned are
 * malloc'd unless said otherwise. */
#ifndef PLC_REPORT_PARTS_H
#define PLC_REPORT_PARTS_H

#include <stddef.h>

#include "analysis.h"
#include "report.h"

/* printf into a new string. */
char *plc_report_sprintf(const char *fmt, ...)
#ifdef __GNUC__
  __attribute__((format(printf, 1, 2)))
#endif
  ;

/* Values as the reports print them, rounded to o->digits with a unit chosen
 * by magnitude, or exact in base units with o->exact. */
char *plc_report_time(const plc_report_opts *o, mpq_srcptr v);
char *plc_report_bytes(const plc_report_opts *o, mpq_srcptr v);
char *plc_report_bw(const plc_report_opts *o, mpq_srcptr v);
/* A fraction as a percentage ("10.12%"), or the exact fraction. */
char *plc_report_pct(const plc_report_opts *o, mpq_srcptr v);
/* A plain number (tokens/s). */
char *plc_report_num(const plc_report_opts *o, mpq_srcptr v);

/* "512 devices of H100_SXM: tp 4 x cp 1 x dp 32 x pp 4 (ep 8, edp 4); vpp 2;
 * interleaved schedule" */
char *plc_report_layout(const plc_ir_run *run);
/* "mu = 4 microbatches of 2 x 8192 tokens per step; recompute full" */
char *plc_report_batch(const plc_ir_run *run);
/* "all_reduce 360 GB/s, p2p 50 GB/s": the bandwidths a dimension used. */
char *plc_report_bandwidths(const plc_ir_place *p, const plc_report_opts *o);

/* Whether the placement table has a row for dimension d: size 2 or more,
 * except edp on a run without expert parallelism (ep 1), where edp is dp
 * again, unless some op uses it. */
int plc_report_place_shown(const plc_ir_run *run, int d);

/* Names of phases ("fwd", "recomp", "bwd", "step"), recompute settings
 * ("none", "selective", "full") and DP tail kinds ("none", "pinned",
 * "declared", "simulated"); static strings. */
const char *plc_report_phase(plc_phase p);
const char *plc_report_recompute(int recompute);
const char *plc_report_tail_kind(plc_tail_kind k);

/* The commonest reason among a row's exposed ops (among all of them when
 * none is exposed); "" when no op has one.  Static. */
const char *plc_report_why(const plc_coll_row *row);
/* out = the hidden fraction of a row's time, (time - exposed) / time; 0
 * for a row that takes no time. */
void plc_report_hidden(mpq_t out, const plc_coll_row *row);

/* out = the bytes each rank of a group of n sends (and receives) for a
 * collective moving size S: 2(n-1)/n S for an all-reduce, (n-1)/n S for an
 * all-gather, reduce-scatter or all-to-all, S for a p2p or a broadcast --
 * the bus bytes nccl-tests and hand analyses compare (the factor plc
 * times the op with). */
void plc_report_rank_bytes(mpq_t out, plc_opk kind, long n, mpq_srcptr size);
/* A row's bytes per rank for one op ("mixed" when its ops differ) and in
 * all (the row's ops in one microbatch). */
char *plc_report_row_rank_each(const plc_report_opts *o, const plc_ir_run *run,
                               const plc_coll_row *row);
void plc_report_row_rank_total(mpq_t out, const plc_ir_run *run, const plc_coll_row *row);

/* The parts of the step: step = compute + exposed communication of each
 * dimension + waits + bubble + DP tail + optimizer. */
typedef enum plc_part_kind {
  PLC_PART_COMPUTE, PLC_PART_EXPOSED, PLC_PART_WAITS, PLC_PART_BUBBLE, PLC_PART_TAIL,
  PLC_PART_OPTIMIZER, PLC_PART_STEP
} plc_part_kind;

typedef struct plc_report_part {
  plc_part_kind kind;
  plc_pdim dim;          /* of PLC_PART_EXPOSED */
  mpq_t time, share;     /* time per step; its share of the step */
} plc_report_part;

#define PLC_REPORT_MAX_PARTS (PLC_PD_COUNT + 6)

/* Fill parts[] (room for PLC_REPORT_MAX_PARTS) in report order and return
 * how many: compute, exposed communication per dimension, waits, bubble, DP
 * tail, optimizer, step.  With all == 0 only what the text report lists
 * (exposure, waits and optimizer when not zero); with all != 0 also zeros,
 * and the exposure of every dimension of size 2 or more.  Free with
 * plc_report_parts_clear. */
int plc_report_parts(const plc_result *r, int all, plc_report_part *parts);
void plc_report_parts_clear(plc_report_part *parts, int n);
/* The part's row label: "compute", "tp", "waits", "bubble", "dp tail",
 * "optimizer", "step"; static. */
const char *plc_report_part_label(const plc_report_part *p);
/* How the part is obtained ("mu x exposed tp communication", "90% of 1605 ms
 * declared hidden"); "" when there is nothing to say. */
char *plc_report_part_note(const plc_result *r, const plc_report_opts *o,
                           const plc_report_part *p);

/* The critical device's F&B blocks (analysis.h), for the step-time
 * section: "F&B blocks on device 0: 13 x F(model stage 0) with B(model
 * stage 3), 90.1 ms each (29.91 ms + 65.57 ms apart); ...", or NULL when
 * the schedule runs none. */
char *plc_report_fb_text(const plc_result *r, const plc_report_opts *o);

/* The bottleneck, the largest part that is not compute (ties go to the
 * first in the order exposed dimensions, bubble, DP tail, waits,
 * optimizer): returns 1 and fills *b (init'd here; clear with
 * plc_report_parts_clear), or 0 when every such part is zero. */
int plc_report_bottleneck(const plc_result *r, plc_report_part *b);
/* What a bottleneck part is: "exposed ep communication", "the pipeline
 * bubble", ... */
char *plc_report_part_what(const plc_report_part *p);

/* Every collective that ran in one microbatch of the critical stage,
 * forward list then backward list: fn(ctx, list name, list, index, its
 * simulation). */
typedef void plc_report_coll_fn(void *ctx, const char *list, const plc_ir_list *l, int i,
                                const plc_sim_op *so);
void plc_report_each_coll(const plc_result *r, plc_report_coll_fn *fn, void *ctx);

/* One collective of --ops as the text and Markdown reports list it: list,
 * layer, op, primitive(dim), bytes per rank, start, consumer, window, time,
 * exposed, reason; each cell malloc'd, freed with plc_report_cells_free. */
#define PLC_REPORT_OP_CELLS 11
void plc_report_op_cells(const plc_report_opts *o, const char *list, const plc_ir_list *l, int i,
                         const plc_sim_op *so, char **cells);
void plc_report_cells_free(char **cells, int n);

/* One row of "what would hide the exposed communication" (r->sense[i]) as
 * the text and Markdown reports list it: dim, primitive, phase, exposed
 * per microbatch, the bandwidth now, the bandwidth that would hide it (or
 * "none suffices"), the step time then (with " (if free)" when none does);
 * freed with plc_report_cells_free. */
#define PLC_REPORT_SENSE_CELLS 7
void plc_report_sense_cells(const plc_report_opts *o, const plc_result *r, int i, char **cells);

/* Which stage the per-microbatch tables (communication, collectives, what
 * would hide) show, for their headers, malloc'd: "critical stage c of p"
 * ("critical stage c" without total); where the critical device is not
 * simply that stage, where it is too: under DualPipe ", on critical device
 * d" (device d holds model stages d and p-1-d) or ", on device e; the
 * critical device is d"; with chunks run as blocks "; the critical device
 * is stage d" when the stage with the most work over the step is another. */
char *plc_report_critical_where(const plc_result *r, int total);
/* The same, empty when the critical device is the critical stage (for a
 * header that names no stage otherwise): " (critical stage c, on critical
 * device d)". */
char *plc_report_critical_note(const plc_result *r);

/* The bubble as the text and Markdown reports say it, in three malloc'd
 * sentences: how it was obtained ("simulated at block level" or "by the
 * formula: why"); the measured split ("idle on critical stage s: ... in
 * warm-up, ... in the steady phase, ... in cool-down"; NULL when not
 * measured); the closed form with its
 * numbers and value, and whether it agrees ("... (the same)"; NULL for a
 * custom order, which has none). */
void plc_report_bubble_text(const plc_result *r, const plc_report_opts *o, char **how,
                            char **split, char **formula);

/* One stage of the memory table (r->mem->st[s]), as the text and Markdown
 * reports list it: stage, weights, grads, optimizer, activations with the
 * microbatch-chunks in flight, buffers, peak, headroom ("-" when the
 * capacity is unknown); freed with plc_report_cells_free. */
#define PLC_REPORT_MEM_CELLS 8
void plc_report_mem_cells(const plc_report_opts *o, const plc_result *r, int s, char **cells);
/* The line under the memory table: capacity, reserve, usable, and whether
 * every stage fits; or why memory is not modelled.  malloc'd. */
char *plc_report_mem_summary(const plc_result *r, const plc_report_opts *o);

#endif
