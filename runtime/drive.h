/* drive.h - evaluating a checked program: lower the trains, analyse them,
 * print reports, and decide the assertions that need results. */
#ifndef PLC_DRIVE_H
#define PLC_DRIVE_H

#include <stdio.h>

#include "analysis.h"
#include "report.h"
#include "sema.h"

typedef struct plc_drive_run {
  const plc_ast *decl;
  plc_ir_run *ir;
  plc_result res;
  int state; /* 0 not yet, 1 analysed, -1 failed */
} plc_drive_run;

typedef struct plc_drive {
  plc_sema *sema;
  plc_program *prog;
  plc_report_opts opts;
  plc_drive_run *runs;
  int nruns;
} plc_drive;

void plc_drive_init(plc_drive *d, plc_sema *s, plc_program *p, const plc_report_opts *o);
void plc_drive_free(plc_drive *d);
/* The trains to report: those named by `report` statements in the given
 * files, else every train declared in them. */
int plc_drive_select(plc_drive *d, plc_ast *const *files, int nfiles, const plc_ast ***out);
/* Lower and analyse one train (once); NULL when it has errors. */
plc_drive_run *plc_drive_train(plc_drive *d, const plc_ast *decl);
/* Evaluate every assertion of the program with the results available. */
void plc_drive_asserts(plc_drive *d);

#endif
