/* search.h - evaluating a search: every candidate layout, ranked.
 *
 * A search (plc(5) SEARCH) is evaluated candidate by candidate, each in a
 * compilation of its own: the main compilation's syntax trees (parsed once,
 * -D overrides applied; nothing writes to a tree after parsing, so threads
 * share them) checked again with the candidate as a derived train,
 * `train __plc_candidate = BASE { tp = 4; ...; dp = ... }`, whose entries
 * are the search's own trees.  A candidate that does not lower, fails a requirement or does not
 * fit in memory is skipped and counted under its reason; the others are
 * ranked by the objective, then peak memory (lower first, known before
 * unknown), then enumeration order: a total order, so any split of the
 * space (threads, shards) merges into the ranking of a single run.  Each
 * compilation is freed once its row (plain data) is taken. */
#ifndef PLC_SEARCH_H
#define PLC_SEARCH_H

#include <stdint.h>
#include <stdio.h>

#include "drive.h"

typedef struct plc_srow {
  uint64_t index;          /* in enumeration order, from 0 */
  char **text;             /* per varied field: the value as shown */
  char **plan;             /* per varied field: the value as plan text */
  mpq_t objective;
  int obj_dim[PLC_NDIM];
  mpq_t step, tokens_per_s, bubble, mfu, peak;
  int mfu_known, peak_known;
  mpq_t exposed[PLC_PD_COUNT]; /* exposed communication per step, per dimension */
  char *bottleneck;        /* part label ("tp", "bubble"), NULL when none */
  mpq_t share;             /* the bottleneck's share of the step */
} plc_srow;

typedef struct plc_sreason {
  char *text;
  uint64_t count;
} plc_sreason;

typedef struct plc_sresult {
  char *name, *train, *file, *objective; /* objective: its source text */
  int line, maximize, top, nvary;
  char **vary;              /* names of the varied fields */
  int nentries;             /* the search's other train entries (dp = ...), */
  char **entry_names, **entry_texts; /* ... with their source texts */
  uint64_t space;           /* candidates in the whole space */
  int shard_k, shard_n;     /* 1..n of n; 1 of 1 for a whole run */
  uint64_t evaluated, ranked; /* ranked: candidates that passed (all, not only top) */
  plc_srow **rows;          /* the best `top`, best first */
  int nrows;
  plc_sreason *reasons;
  int nreasons;
} plc_sresult;

typedef struct plc_search_opts {
  int jobs;                 /* threads, >= 1 */
  int shard_k, shard_n;     /* evaluate candidates i with i % n == k - 1 */
  int progress;             /* report progress on stderr */
  plc_report_opts report;
} plc_search_opts;

/* Evaluate the search declared by decl in the checked program of d.
 * Returns NULL (an error reported) when the search cannot start. */
plc_sresult *plc_search_run(plc_drive *d, const plc_ast *decl, const plc_search_opts *o);
void plc_sresult_free(plc_sresult *r);
/* A row with every figure zero and no texts; freed with plc_srow_free. */
plc_srow *plc_srow_new(int nvary);
void plc_srow_free(plc_srow *w, int nvary);
/* Add src's candidates into dst (same search, another slice); frees src. */
void plc_sresult_merge(plc_sresult *dst, plc_sresult *src);
/* Sort the skip reasons by count (most first), then text. */
void plc_sresult_sort_reasons(plc_sresult *r);

/* Outputs (search_out.c). */
void plc_search_text(FILE *out, const plc_sresult *r, const plc_report_opts *o);
void plc_search_md(FILE *out, const plc_sresult *r, const plc_report_opts *o);
void plc_search_csv(FILE *out, const plc_sresult *r, const plc_report_opts *o);
/* The winner as a train block to paste; returns 1 when there is none. */
int plc_search_emit_plan(FILE *out, const plc_sresult *r);
/* The search as a JSON object (plc-json(5)): a json_t *. */
void *plc_search_json(const plc_sresult *r, const plc_report_opts *o);
/* Read the searches of a JSON document written by plc --format=json;
 * returns how many, or -1 with a message in err. */
int plc_search_read_json(const char *path, plc_sresult ***out, char *err, size_t errlen);

#endif
