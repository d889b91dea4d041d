/* lower.h - from a train declaration to per-stage op lists (ir.h).
 *
 * Lowering evaluates the train concretely (sizes, cluster, model, framework),
 * places each parallel dimension on a cluster tier (place.c), then
 * instantiates the framework's template for every layer of every pipeline
 * stage (lower.c).  Errors are reported with the location of the template
 * or field that caused them; the run is then NULL. */
#ifndef PLC_LOWER_H
#define PLC_LOWER_H

#include "eval.h"
#include "ir.h"

/* Lowering refuses plans larger than this before allocating them. */
#define PLC_LOWER_MAX_LAYERS 100000
#define PLC_LOWER_MAX_OPS 250000 /* about 2 KB each: half a gigabyte at most */
#define PLC_LOWER_MAX_LOOP 100000
#define PLC_LOWER_MAX_CHUNKS 10000 /* pp x vpp: each stage costs some kilobytes */

typedef struct plc_lower {
  plc_eval *ev;
  plc_arena *ar;
  plc_diag *diag;
  plc_ir_run *run;
  plc_obj *train;        /* the train instance */
  plc_obj *model, *cluster, *framework, *device;
  plc_obj *links[PLC_PD_COUNT]; /* the link each dimension runs on */
  plc_value *run_val;    /* what templates see as `run` */
  long nops;             /* ops created so far, against cap */
  long each;             /* the estimate's most ops of one layer's forward (lists are
                            sized from it) */
  long cap;              /* PLC_LOWER_MAX_OPS, or the estimate's bound for one instance */
  int counting;          /* the estimate's side lowering: ops are counted, not built */
  int stop;              /* the cap was passed: stop (an error, or the estimate's answer) */
  long *mark, nmark;     /* per op index: the stamp of the last dependency list holding it */
  long stamp;
  int errors;            /* diagnostics count when lowering began */
  int nlayers;           /* the model's layers (its last is layer.model_last) */
  /* the layer fields (bit k: binding k of plc_lower_layer_value) read by
   * the instances of the stage being lowered; the last stage lowered layer
   * by layer whose instances read neither index nor stage, what they read,
   * and its chunks' memory after its layers: the next stage of the same
   * layers copies its lists (lower.c, plc_lower_stage_copy) */
  unsigned stage_reads;
  int like;              /* that stage, or -1 */
  int like_nfwd, like_nbwd; /* its layers' ops, first in its lists */
  unsigned like_reads;
  plc_ir_mem *like_mem;
  int *layer_map;        /* per model layer: its place in the copy (scratch) */
  int *copied;           /* per stage s: at 2 s and 2 s + 1, how many of its forward and
                            backward ops are such a copy (0 when none) */
  /* instances lowered once and copied for the layers that read the same
   * layer fields with the same values (lower.c, "instance memo") */
  struct plc_memo *memo;
  int nmemo, capmemo;
  int no_memo;           /* PLC_LOWER_NO_MEMO set: lower every instance (tests) */
  /* the cross-candidate cache (lower.c, "cross-candidate cache"): the
   * search worker's, when this run may use it; the reads of the instance
   * being lowered into it */
  /* memory first's instances and their figures (lower.c, plc_lower_memory_again) */
  struct plc_mfirsts *mfirst;
  struct plc_lcache *xcache;
  struct plc_xlog *xlog;
  const struct plc_inst *xprev; /* the previous instance of the one looked up in it */
  struct plc_xlayer { const char *name; plc_value *v; long gen; } xlayer[16];
  long xgen;             /* the fields of its layer read so far in that lookup (xgen
                            numbers the lookups), by name (lower.c) */
  int xsame;             /* the lookups are of one layer's memory entries: one xgen */
  const plc_ast *model_node; /* the model's declaration, when it is a top-level one */
  unsigned char *xheld;  /* per read number (lower.c, plc_xrid): 0 not checked yet in this
                            run, 1 holds, 2 does not */
  int nxheld;
  /* the templates found by kind so far (lower.c, plc_lower_find_template):
   * every layer asks for its kind's */
  struct plc_found {
    const char *kind;
    const plc_ast *decl;
    plc_env *env;
    int recomp, bwd;     /* its sections (lower.c, plc_tmpl) */
  } found[8];
  int nfound;
  /* collective times computed so far (lower.c, plc_lower_coll_time): a
   * layer's collectives recur in every layer, and replays re-time them */
  struct plc_ctime { int kind, dim, group; mpq_ptr size, time; } ctime[32];
  int nctime;
  /* the framework's options and, once found, their values in this run
   * (lower.c, plc_lower_bind_options) */
  struct plc_opt { struct plc_binding *b; plc_value *v; } *opts;
  int nopts;
  const char *names[30]; /* lower.c's bound and op field names, interned when first used */
  /* the op fields (lower.c, plc_lower_opfields): their names and hashes,
   * found once per run; the op environment of the op being lowered and
   * their bindings there */
  const char *fname[12];
  unsigned fhash[12];
  plc_env *op_env;
  plc_binding *op_field[12];
  plc_env *layer_env;    /* the names of `layer`, bound in order (each layer's a copy) */
  plc_env *ctx_env;      /* a template instance's context as first made (lower.c,
                            plc_lower_context_keep), the later ones' copies; */
  int ctx_tried;         /* made once */
} plc_lower;

/* A cache of lowered template instances that outlives one compilation: a
 * search's candidates share their syntax trees, so an instance that read
 * the same values lowers to the same ops in each; so do a plan's trains.
 * One per thread.  With PLC_LOWER_XCACHE_STATS=1, freeing it prints its
 * counts on stderr, on a line that begins "plc: " followed by whose (e.g.
 * "" for a search's, "trains' " for the plan's trains'). */
typedef struct plc_lcache plc_lcache;
plc_lcache *plc_lcache_new(const char *whose);
void plc_lcache_free(plc_lcache *x);
/* Its hits and misses so far, and how many of the hits were of entries
 * replayed after whatever previous instance (lower.c, prev-free; tests). */
void plc_lcache_counts(const plc_lcache *x, long *hits, long *misses, long *prev_free);

/* Lower one train (decl is its DECL node; train its instance). */
plc_ir_run *plc_lower_train(plc_eval *ev, const plc_ast *decl, plc_obj *train);

/* place.c: layout sizes, the cluster and the placement of every dimension.
 * Returns 0 on success. */
int plc_place_run(plc_lower *L);

/* Helpers shared by place.c and lower.c. */
plc_value *plc_lower_field(plc_lower *L, plc_obj *o, const char *name);
const plc_ast *plc_lower_field_node(plc_obj *o, const char *name);
int plc_lower_int(plc_lower *L, plc_value *v, long lo, long hi, const plc_ast *at,
                  const char *what, long *out);
mpq_ptr plc_lower_num(plc_lower *L, plc_value *v, const int e[PLC_NDIM], const plc_ast *at,
                      const char *what);
/* plc_lower_num's checks, and the value itself (the evaluator's: to be
 * read at once, not kept or changed) instead of a copy. */
mpq_srcptr plc_lower_num_read(plc_lower *L, plc_value *v, const int e[PLC_NDIM],
                              const plc_ast *at, const char *what);
#define PLC_LOWER_FAILED(L) ((L)->stop || (L)->diag->errors > (L)->errors)

#endif
