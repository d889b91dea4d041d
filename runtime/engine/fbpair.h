/* fbpair.h - DualPipe's F&B block: the forward of one microbatch and the
 * backward of another run as one list, interleaved at their wait points.
 *
 * The rule (DeepSeek-V3 report, Figure 4; DualPipe's
 * _forward_backward_compute_chunk): each part's layer ops are cut into
 * segments, a new one at every compute-stream op that waits for an op of
 * another stream (the part's own communication); the block issues the
 * backward's segment 0, the forward's segment 0, the backward's segment
 * 1, ..., each part in its own order, so what one part waits for flies
 * while the other part's segment computes; then the forward's ops after
 * the layers (its sends), then the backward's.  The op-level engine
 * (step.c) numbers a block's ops in this order; the analysis (analysis.h)
 * runs the merged list through the stream interpreter, so a block-level
 * F&B takes the time the overlap leaves instead of t_f + t_b. */
#ifndef PLC_FBPAIR_H
#define PLC_FBPAIR_H

#include "ir.h"

/* Segment of each layer op of l (seg[i], i below the return value, which
 * is the index of l's first op after the layers).  map, when not NULL,
 * says which ops run in this block (map[i] >= 0); the others start no
 * segment. */
int plc_fb_segments(const plc_ir_list *l, const int *map, int *seg);

/* The merged list of an F&B block. */
typedef struct plc_fb_list {
  plc_ir_list list;  /* the merged ops, dependencies renumbered */
  int *pool;         /* their dependency lists */
} plc_fb_list;

/* The F&B block of forward list f and backward list b (no op of one
 * waits for the other: they are different microbatches).  Free with
 * plc_fb_free. */
void plc_fb_merge(const plc_ir_list *f, const plc_ir_list *b, plc_fb_list *out);
void plc_fb_free(plc_fb_list *m);

#endif
