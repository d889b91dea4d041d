/* ir.h - the lowered form of a training run.
 *
 * Lowering turns a train declaration into, for each pipeline stage, two op
 * lists for one microbatch: forward, and backward (with each layer's
 * recompute ops just before its backward ops).  With vpp > 1 each list
 * covers all the stage's virtual chunks; every op carries its chunk, so the
 * whole-step simulation can run chunk c's ops alone (step.h).  Each op has a kind, a
 * stream, dependencies (indices of earlier ops in the same list) and an
 * exact duration.  The interpreter (runtime/sim.c) runs these lists; the
 * analysis turns the results into the report.  Everything here is owned by
 * the compilation's arena. */
#ifndef PLC_IR_H
#define PLC_IR_H

#include <stdio.h>

#include "arena.h"
#include "ast.h"

typedef enum plc_opk {
  PLC_OPK_COMPUTE, PLC_OPK_ALL_REDUCE, PLC_OPK_ALL_GATHER, PLC_OPK_REDUCE_SCATTER,
  PLC_OPK_ALL_TO_ALL, PLC_OPK_P2P, PLC_OPK_BROADCAST,
  PLC_OPK_COUNT
} plc_opk;

/* Parallel dimensions, in the order of the placement table. */
typedef enum plc_pdim {
  PLC_PD_TP, PLC_PD_CP, PLC_PD_EP, PLC_PD_DP, PLC_PD_EDP, PLC_PD_SHARD, PLC_PD_REPLICATE,
  PLC_PD_PP,
  PLC_PD_COUNT
} plc_pdim;

typedef enum plc_phase { PLC_PH_FWD, PLC_PH_RECOMP, PLC_PH_BWD, PLC_PH_STEP } plc_phase;

typedef struct plc_ir_op {
  const char *name;     /* as written, with the index of a for loop: "rs[2]" */
  int *deps;            /* indices of earlier ops of the same list */
  mpq_ptr time;         /* duration, s */
  mpq_ptr flops;        /* compute work, FLOP (0 when pinned by time) */
  mpq_ptr size;         /* collective buffer, B */
  const plc_ast *node;  /* the op in its template, for locations */
  int layer;            /* model layer index; -1 for pipeline and step ops */
  int replica;          /* lowering's own: n > 0 when its time and those of the n - 1
                           ops after it are (the same rationals as) those of ops before
                           them in the run's lists, whose size check covers them */
  /* From here to the end, the fields the simulator compares between the
   * blocks of repeated layers as one run of bytes (plc_s64_alike_op).  The
   * small ones are 8-bit fields: a search copies and reads ops by the
   * hundred thousand, and an op of 104 bytes became one of 80. */
  int group;            /* collectives: the group size n (>= 2) */
  int stream;           /* index into plc_ir_run.streams; 0 is "compute" */
  int ndeps;
  int chunk;            /* the virtual chunk (0 .. vpp-1) of its stage it belongs to: a
                           layer op its layer's, a pipeline op its `chunk` field (0);
                           the whole-step simulation runs each chunk's ops as its blocks */
  plc_phase phase : 8;
  plc_opk kind : 8;
  plc_pdim dim : 8;     /* collectives: the group */
  unsigned useful : 8;  /* compute that counts toward eta */
  unsigned once : 8;    /* only in the last microbatch of the step */
  unsigned wgrad : 8;   /* a weight-gradient op: part of t_w */
  unsigned pinned : 8;  /* its time was given (`time =`), not derived from its work */
  unsigned after_layers : 8; /* a pipeline op that names no dependency: its one dep is
                           the list's last layer op on the compute stream (what the
                           layers produced); per chunk, that chunk's last one */
} plc_ir_op;

typedef struct plc_ir_list {
  plc_ir_op *ops;
  int n, cap;
} plc_ir_list;

/* Placement of one parallel dimension (DESIGN.md section 4). */
typedef struct plc_ir_place {
  int size, stride;     /* group size and rank stride */
  long span;            /* (size - 1) * stride + 1 consecutive ranks */
  const char *tier;     /* smallest cluster tier holding the span */
  const char *port;     /* the tier's port: one physical link per device */
  const char *link;     /* its link, or the train's override */
  int overridden;       /* the link comes from the train's links section */
  mpq_ptr bw[PLC_OPK_COUNT]; /* effective bandwidth per primitive, B/s */
  mpq_ptr latency;      /* s */
} plc_ir_place;

/* What one virtual chunk of a stage keeps in device memory, summed over
 * the `memory` sections of its template instances (bytes; buffers is the
 * largest one instance declares, not a sum). */
typedef struct plc_ir_mem {
  mpq_ptr weights, grads, optimizer; /* resident for the whole step */
  mpq_ptr activations;               /* per microbatch in flight */
  mpq_ptr buffers;                   /* transient, while one instance runs */
} plc_ir_mem;

typedef struct plc_ir_stage {
  int *layers, nlayers;  /* model layer indices, in execution order */
  int *chunk_end;        /* vpp entries: layers[..chunk_end[c]) are chunks 0..c */
  plc_ir_mem *mem;       /* vpp entries, chunk c (model chunk stage + c * pp) */
  plc_ir_list fwd, bwd; /* one microbatch */
  plc_ir_list step;     /* once per step, after the last backward (stage's share) */
} plc_ir_stage;

typedef struct plc_ir_run {
  const char *name;
  const plc_ast *decl;
  /* layout */
  int size[PLC_PD_COUNT];
  int vpp, micro_batch, global_batch, seq, world, devices;
  long mu;
  int recompute;        /* 0 none, 1 selective, 2 full */
  const char *schedule;
  /* schedule custom: each stage's blocks as written, and where (the list
   * item, or the field's value when it is not a list literal) */
  const char **order;
  const plc_ast **order_at, *order_node;
  int norder;
  plc_ir_place place[PLC_PD_COUNT];
  /* device */
  const char *device;
  mpq_ptr peak;         /* FLOP/s, times efficiency is what compute gets */
  mpq_ptr model_flops;  /* useful FLOPs of one microbatch over all stages, for MFU */
  /* pins from the train */
  mpq_ptr dp_hidden, dp_tail, optimizer_time; /* NULL when not given */
  /* memory: the device's capacity (NULL when not given), the reserve the
   * training cannot use, and whether any template has a memory section */
  mpq_ptr memory, memory_reserve;
  int memory_declared;
  int shared_links;     /* the whole-step simulation shares links (default) */
  /* streams, by name; 0 is "compute" */
  const char **streams;
  int nstreams;
  plc_ir_stage *stages;
  int nstages;
} plc_ir_run;

const char *plc_opk_name(plc_opk k);
int plc_opk_lookup(const char *name);   /* -1 when unknown */
const char *plc_pdim_name(plc_pdim d);
int plc_pdim_lookup(const char *name);  /* -1 when unknown */
const char *plc_phase_name(plc_phase p); /* fwd, recomp, bwd, step */

/* Append an op to a list; returns its index. */
int plc_ir_push(plc_arena *ar, plc_ir_list *l, const plc_ir_op *op);
/* Room for `more` ops after the list's last, in ar. */
void plc_ir_reserve(plc_arena *ar, plc_ir_list *l, int more);
/* Intern a stream name. */
int plc_ir_stream(plc_arena *ar, plc_ir_run *r, const char *name);

/* --emit=ir: one line per op (stage, phase, layer, name, kind, stream,
 * deps, cost in exact units). */
void plc_ir_dump(FILE *out, const plc_ir_run *r);

#endif
