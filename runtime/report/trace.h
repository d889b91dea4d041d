/* trace.h - the simulated timeline as Chrome/Perfetto trace-event JSON.
 *
 * {"traceEvents": [...], "displayTimeUnit": "ns", "otherData": {...}}: each
 * event is built with jansson (which escapes its strings) and written out
 * at once, so the file is never held in memory, however long.  Each pipeline stage of each train is a process
 * (process_name metadata), each stream with ops on it a thread with a tid
 * unique in the file (thread_name, thread_sort_index: compute first, then
 * by name).  Every op is a complete event ("ph": "X"); every stall of the
 * compute stream is one too, on the compute thread, named after the op it
 * waited for.  What is laid out is plc_timeline_sequence: per stage, mu
 * microbatches forward then backward back to back, the last backward with
 * its gradient sync, then the step list -- not a pipeline schedule.  The
 * pipeline schedule is one more process per train: the whole step at block
 * level (blocks.h), a thread per stage, with a memory counter ("ph": "C")
 * per stage when the framework declares memory; and one more, the whole
 * step op by op (step.h), a thread per stage and stream, its compute
 * streams' idle gaps named after their cause (steps of up to 200,000 ops).
 *
 * ts and dur are whole microseconds, endpoints rounded (half up) and dur
 * the difference of the rounded endpoints, so back-to-back ops touch and
 * ops on one thread never overlap; args hold the exact values in seconds
 * ("5001/1000000 s"), the kind, group, size, exposure and its reason. */
#ifndef PLC_TRACE_H
#define PLC_TRACE_H

#include <stdio.h>

#include "analysis.h"

typedef struct plc_trace plc_trace;

/* A trace whose events are written to f as the trains are added. */
plc_trace *plc_trace_new(FILE *f);
/* A trace written to a file atomically (output.h); NULL, with a message,
 * when it cannot be created. */
plc_trace *plc_trace_open(const char *path);
/* Add one analysed train; -1 (with a message) when a time does not fit. */
int plc_trace_add(plc_trace *t, const plc_result *res);
/* Write the end of the document and, for plc_trace_open, put the file in
 * place; 0, or -1 (with a message for a file) when it could not be
 * produced or written. */
int plc_trace_finish(plc_trace *t);
/* Free the trace; an unfinished file is removed (the old one stays). */
void plc_trace_free(plc_trace *t);

#endif
