/* sspec.h - the parts of a search declaration (plc(5) SEARCH).
 *
 *   search best = base_train {
 *     vary { tp = [1, 2, 4]; recompute = ["none", "full"] }
 *     dp = 64 / (tp * pp)             # an entry evaluated per candidate
 *     require = [peak_memory < 75 GB]  # filters over results and fields
 *     minimize = step_time             # or maximize = ...
 *     top = 20
 *   }
 *
 * The semantic pass checks a search (sema.c); the command line evaluates
 * it (cli/search.c).  Both take the declaration apart here, and both give
 * the bare names of `require` and the objective their meaning here: a
 * result of the candidate run, else a field of the candidate train. */
#ifndef PLC_SSPEC_H
#define PLC_SSPEC_H

#include "eval.h"

#define PLC_SSPEC_DEFAULT_TOP 20

typedef struct plc_sspec {
  const plc_ast *decl;
  const plc_ast **vary;  /* SET nodes of the vary section, in order (a: the LIST) */
  int nvary;
  const plc_ast **sets;  /* the other train entries, in order */
  int nsets;
  const plc_ast *require;   /* the SET, or NULL */
  const plc_ast *objective; /* the SET of minimize or maximize, or NULL: step_time */
  int maximize;
  const plc_ast *top;       /* the SET, or NULL */
} plc_sspec;

/* Take a (checked) search declaration apart; free with plc_sspec_free. */
void plc_sspec_get(plc_sspec *sp, const plc_ast *decl);
void plc_sspec_free(plc_sspec *sp);
/* The candidates of a vary entry: its LIST, written out or named by a
 * top-level let (let tps = [1, 2, 4]; vary { tp = tps }), or NULL. */
const plc_ast *plc_sspec_candidates(plc_env *global, const plc_ast *set);
/* Is name one of the search's own entries (require, minimize, maximize, top)? */
int plc_sspec_is_own(const char *name);

/* The train fields with a default (cp, ep, vpp, ...) that the search's
 * entries read by a bare name while neither the search nor its base train
 * sets them: a derived train's body sees only the fields set, so the
 * candidate train sets these to the base's value (its default).  Returns
 * how many; *names is malloc'd. */
int plc_sspec_defaults(const plc_sspec *sp, plc_env *global, const char ***names);
/* Add those fields to the candidate train t as NAME = BASE.NAME. */
void plc_sspec_add_defaults(const plc_sspec *sp, plc_env *global, plc_arena *ar, plc_ast *t);

/* What a bare name of a require or objective expression means: a value, or
 * NULL for "not a result or field" (then the enclosing scope decides). */
typedef plc_value *plc_sspec_lookup(void *ctx, const char *name, const plc_loc *at);
/* A scope for evaluating expr: a child of parent binding each bare name
 * that expr reads to what lookup gives. */
plc_env *plc_sspec_env(plc_eval *ev, plc_env *parent, const plc_ast *expr,
                       plc_sspec_lookup *lookup, void *ctx);

#endif
