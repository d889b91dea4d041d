/* drive.h - evaluating a checked program: lower the trains, analyse them,
 * print reports, and decide the assertions that need results. */
#ifndef PLC_DRIVE_H
#define PLC_DRIVE_H

#include <stdio.h>

#include "analysis.h"
#include "report.h"
#include "sema.h"

enum plc_drive_state { PLC_RUN_FAILED = -1, PLC_RUN_BUSY = 0, PLC_RUN_DONE = 1 };

/* One train's evaluation.  Each is allocated on its own and never moves:
 * evaluating a run may evaluate others (a field reading b.step_time), so
 * callers keep pointers to runs while more are added. */
typedef struct plc_drive_run {
  const plc_ast *decl;
  plc_ir_run *ir;
  plc_result res;
  int state;                   /* enum plc_drive_state */
  int poisoned;                /* a result it read was an error */
  struct plc_drive_run *outer; /* while busy: the run whose evaluation asked for it */
  plc_loc read_at;             /* ... and where it read this one (src NULL: the driver) */
  const char *read_field;
  /* while evaluated: the diagnostics and error reads before it (for the
   * early memory check of a search, which a failing run skips) */
  int errors0, promoted0, warnings0;
  long err_reads0;
  int mem_checked;             /* the early memory check ran, and it fits */
  int sensed;                  /* its sensitivity rows are computed */
} plc_drive_run;

typedef struct plc_drive {
  plc_sema *sema;
  plc_program *prog;
  plc_report_opts opts;
  plc_drive_run **runs;
  int nruns;
  plc_drive_run *current;  /* the innermost run being evaluated */
  int nesting;             /* how many runs are being evaluated, one inside another */
  const plc_ast *const *skip_asserts; /* decided (false) already by the semantic pass */
  size_t nskip;
  int failed_asserts;      /* assertions plc_drive_asserts found false */
  int unfit_stops;         /* a run that does not fit in memory fails before
                              its analysis (searches: it is skipped anyway) */
  int unfit_seen;          /* ... and one did */
  int warn_stops;          /* a run that warned while it was evaluated or lowered
                              fails before its analysis (searches: the layout
                              lint rules are filters, it is skipped anyway) */
  int warn_seen;           /* ... and one did */
  /* A search's ranking cut (or NULL): called with a run's result once its
   * step is known (plc_analyse_first); when it returns 1 the run cannot
   * enter the ranking, and fails with its other figures not computed
   * (the run itself, not one whose result it reads).  It may add the
   * figures plc_analyse_step_ratios gives to res. */
  int (*cut)(void *ctx, plc_result *res);
  void *cut_ctx;
  int cut_seen;            /* ... and it did */
  int sensitivity;         /* compute what would hide each exposed row (the
                              reports print it; -e, --compare, --emit and
                              asserts do not need it): 1 unless cleared */
} plc_drive;

/* Runs evaluated one inside another (a field of one reads the result of
 * the next): each level takes C stack for lowering, so it is bounded. */
#define PLC_DRIVE_MAX_NESTING 64

void plc_drive_init(plc_drive *d, plc_sema *s, plc_program *p, const plc_report_opts *o);
void plc_drive_free(plc_drive *d);
/* The trains and searches to report: those named by `report` statements
 * in the given files, else every train and search declared in them (a
 * search's declaration has op PLC_DECL_SEARCH; plc_drive_train takes
 * trains only). */
int plc_drive_select(plc_drive *d, plc_ast *const *files, int nfiles, const plc_ast ***out);
/* Lower and analyse one train (once); NULL when it has errors, also when
 * one of the results it reads has. */
plc_drive_run *plc_drive_train(plc_drive *d, const plc_ast *decl);
/* Evaluate every assertion of the program with the results available,
 * except those in skip_asserts; counts the false ones in failed_asserts. */
void plc_drive_asserts(plc_drive *d);

#endif
