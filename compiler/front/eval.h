/* eval.h - evaluating plan expressions exactly.
 *
 * The evaluator serves two masters.  In concrete mode it computes values
 * (lowering binds `run`, `model`, `layer` to real things).  In abstract mode
 * (the semantic pass) some values are unknown: a template parameter, a field
 * of `model`; an unknown number may still have a known dimension, so the
 * same code that computes 3 ms + 2 ms also rejects 3 ms + 2 B before any
 * plan is lowered.  Values live in the compilation's arena. */
#ifndef PLC_EVAL_H
#define PLC_EVAL_H

#include "arena.h"
#include "ast.h"
#include "diag.h"

struct plc_ir_run; /* ir.h */

typedef enum plc_vtag {
  PLC_V_ERR,   /* an error was reported; propagate silently */
  PLC_V_ANY,   /* unknown, of unknown type (abstract mode only) */
  PLC_V_NUM, PLC_V_BOOL, PLC_V_STR, PLC_V_LIST,
  PLC_V_OBJ,   /* an instance of a declaration or section */
  PLC_V_FUNC,  /* a `let f(x) = ...`, a builtin, or a declaration with parameters */
  PLC_V_OP,    /* a reference to an op of the current template */
  PLC_V_WORD   /* a bare name used as a word (enum value, dimension, stream) */
} plc_vtag;

typedef struct plc_env plc_env;
typedef struct plc_obj plc_obj;
typedef struct plc_value plc_value;
typedef struct plc_binding plc_binding;

struct plc_value {
  plc_vtag tag;
  int known;          /* NUM/BOOL: the value is known */
  int dim_known;      /* NUM: the dimension is known */
  plc_dim dim;
  mpq_ptr q;          /* NUM, when known */
  int b;              /* BOOL */
  const char *s;      /* STR, WORD, OP (op name) */
  plc_value **items;  /* LIST */
  size_t n;
  plc_obj *obj;       /* OBJ; FUNC of a declaration */
  const plc_ast *def; /* FUNC: the LET or DECL; OP: the OP node */
  plc_env *env;       /* FUNC: where it was defined */
  int builtin;        /* FUNC: builtin number + 1, 0 for user functions */
  int prev;           /* OP: refers to the previous layer instance */
};

/* A declaration instance: its own items, evaluated lazily in env. */
struct plc_obj {
  int kind;              /* plc_decl_kind, or -1 for a section */
  const plc_ast *node;   /* DECL or SECTION */
  const char *name;
  plc_env *env;          /* parameters, fields and lets of this instance */
  plc_obj *base;         /* derived declarations: the instance they copy */
  int abstract;          /* plc_abstract: what a field not given means */
  /* The base's items evaluated late for this object, hashed by name.  Not
   * in env: a binding there moves when env grows, and these are added while
   * others are being evaluated. */
  plc_binding **late;
  size_t nlate, late_cap;
};

/* Objects of the semantic pass stand for any instance: a field they do not
 * have is an unknown value (ANY: any name at all, as for `model`; TYPED:
 * only the names of the kind's schema, as for `run`), not an error. */
enum plc_abstract { PLC_CONCRETE = 0, PLC_ABSTRACT_ANY = 1, PLC_ABSTRACT_TYPED = 2 };

struct plc_binding {
  const char *name;
  const plc_ast *def;  /* LET, SET, DECL, OPTION, OP... (NULL when val is given) */
  plc_env *def_env;    /* environment the definition is evaluated in */
  plc_value *val;      /* memoised value */
  int busy;            /* being evaluated: a second visit is a cycle */
  unsigned hash;       /* plc_name_hash(name): compared before the names */
};

/* 80 bytes: an env is made for every call (the counts below 2^32: an env
 * of that many bindings would be 160 GB). */
struct plc_env {
  plc_env *parent;
  plc_binding *b;
  size_t n;
  size_t *index;       /* hash of names to binding number + 1 (large envs) */
  unsigned long long names; /* bit PLC_ENV_BIT(hash) of every name bound: a
                               name whose bit is clear is not here */
  unsigned long long firsts; /* bit PLC_ENV_FIRSTS(name) of the names of
                                bindings [0, nfirsts): the same for a name
                                not hashed (from C); made when one is
                                looked up (eval.c, plc_env_find) */
  plc_obj *self;       /* instance whose items these bindings are, if any */
  plc_obj *late;       /* a derived object on whose behalf a base's item is
                          evaluated: base items found beyond resolve via it */
  unsigned cap;        /* room in b */
  unsigned index_cap;  /* slots in index (a power of two), 0: none yet */
  unsigned nfirsts;
  int call;            /* a call's parameters (eval.c, plc_cshare) */
};

/* A name's bit in plc_env.names: from the top of its hash (the index
 * uses the bottom). */
#define PLC_ENV_BIT(hash) (1ULL << ((hash) >> 26))
/* A name's bit in plc_env.firsts: its first character's (every letter
 * and '_' its own). */
#define PLC_ENV_FIRSTS(name) (1ULL << ((unsigned char)(name)[0] & 63))

typedef struct plc_eval {
  plc_arena *arena;
  plc_diag *diag;
  plc_env *global;
  int abstract;
  int depth;          /* calls and definitions being evaluated */
  int nest;           /* expressions being evaluated, across calls */
  long steps;         /* expressions evaluated so far */
  int stopped;        /* an evaluation limit was reported: evaluate nothing more */
  /* Results of evaluated trains (step_time, eta, ...) for asserts and -e,
   * read at `use`; NULL before evaluation.  Returns NULL when the train
   * has none. */
  plc_value *(*result)(struct plc_eval *ev, plc_obj *train, const char *name,
                       const plc_loc *use);
  void *result_ctx;
  /* Reads of definitions whose value is an error (reported when it was
   * computed): the driver fails a run whose evaluation read one, rather
   * than report figures computed from it. */
  long err_reads;
  int dry;  /* > 0: checking a branch that is not taken: types and dimensions
               only, no values, so `n == 0 ? 0 : 1 / n` is fine at n = 0 */
  /* While lowering instantiates a template: the train, its framework and
   * the template, so that a model field the template reads but the model
   * lacks is reported at the user's model and train (NULL otherwise). */
  const plc_obj *ctx_train, *ctx_framework;
  const char *ctx_template;
  /* For an unknown name: the import that would define it, or NULL. */
  const char *(*import_hint)(void *ctx, const char *name);
  void *import_ctx;
  /* Lowering's instance memo: the fields of `watch` read so far, as bits
   * of their binding numbers (the first 32). */
  const plc_obj *watch;
  unsigned watch_reads;
  /* Lowering's cross-candidate cache (lower.c): while xread is set, every
   * read of a field of xwatch[k] (run, model, layer, device) and of a name
   * bound in xenv (a template's context: its options) is reported with its
   * value, so that a lowered instance can be keyed by all it read; a name
   * there whose value is one of xwatch's objects (`run`, `model`) is not:
   * what is read of it is its fields. */
  const plc_obj *xwatch[4];
  const plc_env *xenv;
  void (*xread)(void *ctx, int slot, const char *name, const plc_value *v, const plc_loc *use);
  void *xread_ctx;
  /* The cache itself (a search's worker thread owns it, or the driver of
   * a plan's trains), or NULL. */
  struct plc_lcache *lower_cache;
  /* No sensitivity analysis will change the lowered op times in place (a
   * search's candidates), so lowering may share them between copies. */
  int lower_share_times;
  /* A search's early check (drive.c), or NULL: lowering calls it with the
   * run's memory figures (stage memory, no op lowered yet) and stops,
   * failing the run, when it returns 1 (the run does not fit) or 2 (it
   * fits, but its layout was warned about, and a search skips it). */
  int (*lower_unfit)(void *ctx, const struct plc_ir_run *run);
  void *lower_unfit_ctx;
  /* The memo of calls of top-level plan functions (eval.c, "call memo"),
   * NULL until the first, and the deepest nest and depth reached (for it). */
  struct plc_cmemo *cmemo;
  int nest_hw, depth_hw;
  /* Calls kept across compilations (a search's worker thread owns it), or
   * NULL: see plc_cshare_new. */
  struct plc_cshare *cshare;
} plc_eval;

/* A memo of calls shared by compilations of the same syntax trees (a
 * search's candidates): a call whose result depends only on its scalar
 * arguments and fields of its declaration arguments is replayed in another
 * compilation once those fields have the same values there.  It keeps each
 * template body's ops too (plc_eval_define_ops names them from a list). */
struct plc_cshare *plc_cshare_new(void);
void plc_cshare_free(struct plc_cshare *sh);
/* Calls this thread replayed from one (for tests). */
extern _Thread_local long plc_cshare_replays;

/* 0: no call memo (tests compare the evaluator with and without it). */
extern int plc_eval_call_memo;

/* Limits of plc(5) LIMITS.  Nested calls and definitions; nested expressions
 * in all (so a deep expression in each of many nested calls cannot overflow
 * the stack); expressions evaluated in one compilation (so an exponential
 * recursion or a huge loop stops before it costs minutes and gigabytes: a
 * step allocates about 100 bytes). */
#define PLC_EVAL_MAX_DEPTH 1000
#define PLC_EVAL_MAX_NEST 10000
#define PLC_EVAL_MAX_STEPS 4000000
/* The step limit in force: PLC_EVAL_MAX_STEPS; tests lower it to reach it
 * quickly. */
extern long plc_eval_max_steps;

void plc_eval_init(plc_eval *ev, plc_arena *ar, plc_diag *d);
plc_env *plc_env_new(plc_eval *ev, plc_env *parent);
/* Bind a name to a definition evaluated lazily in def_env, or to a value. */
plc_binding *plc_env_define(plc_eval *ev, plc_env *env, const char *name, const plc_ast *def,
                            plc_env *def_env);
plc_binding *plc_env_bind(plc_eval *ev, plc_env *env, const char *name, plc_value *val);
/* Make the empty env `into` hold from's names and definitions, none of
 * their values (a definition made in from is made in into). */
void plc_env_copy(plc_eval *ev, plc_env *into, const plc_env *from);
plc_binding *plc_env_find_local(plc_env *env, const char *name);
plc_binding *plc_env_lookup(plc_env *env, const char *name);

/* Name every op of a template body (in every phase, branch and loop) in
 * env, so `after = [x]` can refer to any of them (the first op of a name;
 * a name env has already is not redefined). */
void plc_eval_define_ops(plc_eval *ev, plc_env *env, const plc_ast_list *items);
/* Count work that evaluates no expression (an iteration of a template's
 * for loop) against the step limit, as `weight` steps (about its memory in
 * expression steps); 0 (the error reported at `at`, once) when the budget
 * is spent. */
int plc_eval_step(plc_eval *ev, const plc_ast *at, long weight);
/* A for loop's iteration allocates a scope, a value and a rational. */
#define PLC_EVAL_LOOP_STEPS 8
/* Evaluate an expression; errors are reported and give PLC_V_ERR. */
plc_value *plc_eval_expr(plc_eval *ev, const plc_ast *e, plc_env *env);
/* The value of a binding (evaluates and memoises). */
plc_value *plc_eval_binding(plc_eval *ev, plc_binding *b, const plc_loc *use);
/* Field of an object, or NULL when it has none (no error reported). */
plc_value *plc_eval_field(plc_eval *ev, plc_obj *o, const char *name, const plc_loc *use);
/* Instantiate a declaration with arguments; args NULL means the parameters
 * are already bound in def_env (the semantic pass binds them to unknowns). */
plc_value *plc_eval_instance(plc_eval *ev, const plc_ast *decl, plc_env *def_env,
                             const plc_ast_list *args, plc_env *args_env, const plc_loc *use);

plc_value *plc_value_new(plc_eval *ev, plc_vtag tag);
plc_value *plc_value_err(plc_eval *ev);
plc_value *plc_value_any(plc_eval *ev);
plc_value *plc_value_num(plc_eval *ev, const plc_quantity *q);
/* An unknown number of the given dimension (abstract mode). */
plc_value *plc_value_unknown_num(plc_eval *ev, const int e[PLC_NDIM]);
/* Forget memoised values that were unknown when computed (results read
 * before evaluation), so they are computed again. */
void plc_env_forget_unknown(plc_env *env);
/* Short description of a value's type for messages: "a number in B/s". */
char *plc_value_describe(const plc_value *v); /* malloc'd */

#endif
