/* trace.c - trace-event JSON, each event made with jansson and written at
 * once (see trace.h). */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "trace.h"
#include "blocks.h"
#include "step.h"
#include "output.h"
#include "timeline.h"
#include "xalloc.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#ifndef PACKAGE_VERSION /* builds without config.h (the fuzz harnesses) */
#define PACKAGE_VERSION "(unknown version)"
#endif

struct plc_trace {
  FILE *f;          /* where the events go, one at a time */
  plc_output out;   /* the file, when plc_trace_open made it */
  int own;          /* out is ours to commit or abort */
  long nevents;     /* written so far: a comma goes before the next */
  json_t *trains;   /* otherData.trains, small: kept until the end */
  long next_pid, next_tid;
  int failed;       /* jansson ran out of memory, or a write failed */
  int err;          /* the errno of the first failed write, or 0 */
  int range;        /* a time does not fit a JSON integer */
};

typedef struct plc_trace_ctx {
  plc_trace *t;
  const plc_ir_run *run;
  long pid;
  long *tid;        /* per stream of the run; 0 when unused */
  mpq_t us;         /* microseconds per second */
} plc_trace_ctx;

/* The head of the document: the events follow as they are made. */
plc_trace *plc_trace_new(FILE *f)
{
  plc_trace *t = plc_xcalloc(1, sizeof *t);
  t->f = f;
  t->trains = json_array();
  t->next_pid = t->next_tid = 1;
  t->failed = !t->trains || fputs("{\"traceEvents\":[", f) == EOF;
  return t;
}

plc_trace *plc_trace_open(const char *path)
{
  plc_output out;
  if (plc_output_open(&out, path) != 0)
    return NULL;
  plc_trace *t = plc_trace_new(out.f);
  t->out = out;
  t->own = 1;
  return t;
}

void plc_trace_free(plc_trace *t)
{
  if (!t)
    return;
  if (t->own)
    plc_output_abort(&t->out); /* not finished: the old file stays */
  json_decref(t->trains);
  free(t);
}

/* ---- values ------------------------------------------------------------------ */

/* Write one event and let it go: the file is never held in memory. */
static void plc_trace_push(plc_trace *t, json_t *ev)
{
  errno = 0;
  if (!ev || t->failed || (t->nevents && fputc(',', t->f) == EOF) ||
      json_dumpf(ev, t->f, JSON_COMPACT) != 0) {
    if (!t->failed && ferror(t->f))
      t->err = errno;
    t->failed = 1;
  }
  t->nevents++;
  json_decref(ev);
}

static void plc_trace_set(plc_trace *t, json_t *obj, const char *key, json_t *v)
{
  if (!obj || !v || json_object_set_new(obj, key, v) != 0)
    t->failed = 1;
}

/* An exact value with its unit, B^b s^s FLOP^f: "5001/1000000 s". */
static void plc_trace_exact(plc_trace *t, json_t *obj, const char *key, mpq_srcptr v, int b,
                            int s, int f)
{
  char *text = plc_q_format_raw(v, b, s, f, 0, 1);
  plc_trace_set(t, obj, key, json_string(text));
  free(text);
}

/* A time in whole microseconds, rounded half up; 0 when out of range. */
static long plc_trace_us(plc_trace_ctx *c, mpq_srcptr v)
{
  mpz_t z;
  mpz_init(z);
  plc_timeline_round(z, v, c->us);
  long n = 0;
  if (mpz_fits_slong_p(z))
    n = mpz_get_si(z);
  else
    c->t->range = 1;
  mpz_clear(z);
  return n;
}

/* ---- metadata ---------------------------------------------------------------- */

static void plc_trace_meta(plc_trace *t, const char *what, long pid, long tid, const char *key,
                           json_t *value)
{
  /* "cat" too, though Chrome's format leaves it optional there: some
   * loaders reject an event without one; "__metadata" is Chrome's own. */
  json_t *ev = json_pack("{s:s, s:s, s:s, s:I, s:I, s:{s:o}}", "name", what, "cat", "__metadata",
                         "ph", "M", "pid", (json_int_t)pid, "tid", (json_int_t)tid, "args", key,
                         value);
  plc_trace_push(t, ev);
}

/* The stage's process and one thread per stream with ops on it. */
static void plc_trace_stage_meta(plc_trace_ctx *c, const plc_timeline_stage *st, int critical)
{
  char name[256];
  snprintf(name, sizeof name, "%s: stage %d of %d%s", c->run->name, st->stage, c->run->nstages,
           critical ? " (critical)" : "");
  c->pid = c->t->next_pid++;
  plc_trace_meta(c->t, "process_name", c->pid, 0, "name", json_string(name));
  plc_trace_meta(c->t, "process_sort_index", c->pid, 0, "sort_index", json_integer(c->pid));
  for (int r = 0; r < st->nstreams; r++) {
    int k = st->streams[r];
    c->tid[k] = c->t->next_tid++;
    plc_trace_meta(c->t, "thread_name", c->pid, c->tid[k], "name",
                   json_string(c->run->streams[k]));
    plc_trace_meta(c->t, "thread_sort_index", c->pid, c->tid[k], "sort_index", json_integer(r));
  }
}

/* ---- events ------------------------------------------------------------------ */

/* A complete event on a thread, [a, b) with endpoints rounded. */
static json_t *plc_trace_event(plc_trace_ctx *c, const char *name, const char *cat, int stream,
                               const plc_timeline_item *it)
{
  long ts = plc_trace_us(c, it->a), end = plc_trace_us(c, it->b);
  return json_pack("{s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:{}}", "name", name, "cat", cat, "ph",
                   "X", "ts", (json_int_t)ts, "dur", (json_int_t)(end - ts), "pid",
                   (json_int_t)c->pid, "tid", (json_int_t)c->tid[stream], "args");
}

/* Where an item is: list, microbatch, start and end (exact). */
static void plc_trace_where(plc_trace *t, json_t *args, const plc_timeline_item *it)
{
  plc_trace_set(t, args, "list", json_string(it->block->label));
  if (it->block->micro >= 0)
    plc_trace_set(t, args, "microbatch", json_integer(it->block->micro));
  plc_trace_exact(t, args, "start", it->a, 0, 1, 0);
  plc_trace_exact(t, args, "end", it->b, 0, 1, 0);
}

static void plc_trace_op_args(plc_trace_ctx *c, json_t *args, const plc_timeline_item *it)
{
  const plc_ir_op *op = it->op;
  plc_trace *t = c->t;
  plc_trace_set(t, args, "op", json_string(op->name));
  plc_trace_set(t, args, "kind", json_string(plc_opk_name(op->kind)));
  plc_trace_set(t, args, "phase", json_string(plc_phase_name(op->phase)));
  if (op->layer >= 0)
    plc_trace_set(t, args, "layer", json_integer(op->layer));
  plc_trace_where(t, args, it);
  plc_trace_exact(t, args, "duration", op->time, 0, 1, 0);
  if (op->kind == PLC_OPK_COMPUTE) {
    if (mpq_sgn(op->flops))
      plc_trace_exact(t, args, "flops", op->flops, 0, 0, 1);
    plc_trace_set(t, args, "useful", json_boolean(op->useful));
  } else {
    plc_trace_set(t, args, "group", json_string(plc_pdim_name(op->dim)));
    plc_trace_set(t, args, "group_size", json_integer(op->group));
    plc_trace_exact(t, args, "size", op->size, 1, 0, 0);
    plc_trace_exact(t, args, "exposed", it->so->exposed, 0, 1, 0);
    plc_trace_set(t, args, "reason", json_string(plc_why_text(it->so->why)));
  }
  if (op->once)
    plc_trace_set(t, args, "once", json_true());
}

/* A stall of the compute stream, named after what it waited for. */
static void plc_trace_wait(plc_trace_ctx *c, const plc_timeline_item *it)
{
  char name[128];
  int comm = it->op && it->op->kind != PLC_OPK_COMPUTE;
  snprintf(name, sizeof name, "wait for %s", it->op ? it->op->name : "nothing");
  json_t *ev = plc_trace_event(c, name, comm ? "exposed" : "wait", 0, it);
  json_t *args = ev ? json_object_get(ev, "args") : NULL;
  mpq_t d;
  mpq_init(d);
  mpq_sub(d, it->b, it->a);
  plc_trace_exact(c->t, args, "duration", d, 0, 1, 0);
  plc_trace_where(c->t, args, it);
  if (it->op) {
    plc_trace_set(c->t, args, "waits_for", json_string(it->op->name));
    plc_trace_set(c->t, args, "kind", json_string(plc_opk_name(it->op->kind)));
  }
  mpq_clear(d);
  plc_trace_push(c->t, ev);
}

static void plc_trace_item(void *ctx, const plc_timeline_item *it)
{
  plc_trace_ctx *c = ctx;
  if (it->what == PLC_TL_WAIT) {
    plc_trace_wait(c, it);
  } else if (it->what == PLC_TL_OP) {
    char name[128];
    plc_timeline_label(name, sizeof name, it->op, 1);
    json_t *ev = plc_trace_event(c, name, plc_opk_name(it->op->kind), it->stream, it);
    plc_trace_op_args(c, ev ? json_object_get(ev, "args") : NULL, it);
    plc_trace_push(c->t, ev);
  } /* exposed parts lie inside their collective's event: its args say how much */
}

/* ---- the whole step, block level ------------------------------------------- */

/* A block's name: "F3", "B3", "W3", "F3&B1"; ".c" with its chunk when a
 * stage holds several. */
static void plc_trace_block_name(char *buf, size_t n, const plc_sched_block *b, int chunks)
{
  static const char ph[] = "FBWX";
  if (b->phase == PLC_SCHED_FB && chunks)
    snprintf(buf, n, "F%d.%d&B%d.%d", b->mb, b->chunk, b->mb2, b->chunk2);
  else if (b->phase == PLC_SCHED_FB)
    snprintf(buf, n, "F%d&B%d", b->mb, b->mb2);
  else if (chunks)
    snprintf(buf, n, "%c%d.%d", ph[b->phase], b->mb, b->chunk);
  else
    snprintf(buf, n, "%c%d", ph[b->phase], b->mb);
}

/* The memory counter of a stage at time at: value in whole bytes. */
static void plc_trace_counter(plc_trace_ctx *c, const char *name, mpq_srcptr at,
                              mpq_srcptr bytes)
{
  mpz_t z;
  mpq_t one;
  mpz_init(z);
  mpq_init(one);
  mpq_set_ui(one, 1, 1);
  plc_timeline_round(z, bytes, one);
  json_t *ev = json_pack("{s:s, s:s, s:s, s:I, s:I, s:{s:I}}", "name", name, "cat", "memory",
                         "ph", "C", "ts", (json_int_t)plc_trace_us(c, at), "pid",
                         (json_int_t)c->pid, "args", "bytes",
                         (json_int_t)(mpz_fits_slong_p(z) ? mpz_get_si(z) : 0));
  plc_trace_push(c->t, ev);
  mpz_clear(z);
  mpq_clear(one);
}

static void plc_trace_block(plc_trace_ctx *c, const plc_blocks *bl, const plc_blocks_item *it,
                            int chunks)
{
  static const char *const cats[] = {"forward", "backward", "weight gradient", "forward&backward"};
  char name[96];
  plc_trace_block_name(name, sizeof name, &it->b, chunks);
  long ts = plc_trace_us(c, it->start), end = plc_trace_us(c, it->end);
  json_t *ev = json_pack("{s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:{s:i, s:i}}", "name", name, "cat",
                         cats[it->b.phase], "ph", "X", "ts", (json_int_t)ts, "dur",
                         (json_int_t)(end - ts), "pid", (json_int_t)c->pid, "tid",
                         (json_int_t)c->tid[it->stage], "args", "microbatch", it->b.mb, "chunk",
                         it->b.chunk);
  json_t *args = ev ? json_object_get(ev, "args") : NULL;
  plc_trace_exact(c->t, args, "start", it->start, 0, 1, 0);
  plc_trace_exact(c->t, args, "end", it->end, 0, 1, 0);
  if (bl->mem_known)
    plc_trace_exact(c->t, args, "memory", it->level, 1, 0, 0);
  plc_trace_push(c->t, ev);
  if (!bl->mem_known)
    return;
  char cname[64];
  snprintf(cname, sizeof cname, "memory, stage %d", it->stage);
  plc_trace_counter(c, cname, it->start, it->level);
  plc_trace_counter(c, cname, it->end, it->after);
}

/* One process for the train's whole step: a thread per stage with its
 * blocks, and per stage a memory counter when memory is modelled. */
static void plc_trace_blocks(plc_trace_ctx *c, const plc_result *res)
{
  plc_blocks bl;
  if (!plc_blocks_build(&bl, res)) {
    plc_blocks_free(&bl);
    return;
  }
  char name[256];
  snprintf(name, sizeof name, "%s: whole step, block level (%s)", c->run->name,
           c->run->schedule);
  c->pid = c->t->next_pid++;
  plc_trace_meta(c->t, "process_name", c->pid, 0, "name", json_string(name));
  plc_trace_meta(c->t, "process_sort_index", c->pid, 0, "sort_index", json_integer(0));
  long *tid = plc_xcalloc((size_t)bl.nstages, sizeof *tid);
  long *saved = c->tid;
  c->tid = tid;
  for (int s = 0; s < bl.nstages; s++) {
    char tn[32];
    snprintf(tn, sizeof tn, "stage %d", s);
    tid[s] = c->t->next_tid++;
    plc_trace_meta(c->t, "thread_name", c->pid, tid[s], "name", json_string(tn));
    plc_trace_meta(c->t, "thread_sort_index", c->pid, tid[s], "sort_index", json_integer(s));
  }
  int chunks = bl.n > 0 && (c->run->vpp > 1 || !strcmp(c->run->schedule, "dualpipe"));
  for (int i = 0; i < bl.n; i++)
    plc_trace_block(c, &bl, &bl.items[i], chunks);
  c->tid = saved;
  free(tid);
  plc_blocks_free(&bl);
}

/* ---- the whole step, op level ---------------------------------------------- */

/* Ops of a whole step drawn at most; a larger step gets no op-level process
 * (the file would run to hundreds of megabytes). */
#define PLC_TRACE_STEP_MAX 200000

/* One simulated op: "name mbN" on its stage's stream thread. */
static void plc_trace_step_op(plc_trace_ctx *c, const plc_step *st, int i, long tid)
{
  const plc_ir_op *op = st->src[i];
  char name[160], label[128];
  plc_timeline_label(label, sizeof label, op, 1);
  if (st->mb_of[i] >= 0)
    snprintf(name, sizeof name, "%s mb%d", label, st->mb_of[i]);
  else
    snprintf(name, sizeof name, "%s", label);
  long ts = plc_trace_us(c, st->flow.start[i]), end = plc_trace_us(c, st->flow.end[i]);
  json_t *ev = json_pack("{s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:{s:s, s:i, s:i, s:s}}", "name",
                         name, "cat", plc_opk_name(op->kind), "ph", "X", "ts", (json_int_t)ts,
                         "dur", (json_int_t)(end - ts), "pid", (json_int_t)c->pid, "tid",
                         (json_int_t)tid, "args", "op", op->name, "microbatch", st->mb_of[i],
                         "chunk", op->chunk, "phase", plc_phase_name(op->phase));
  json_t *args = ev ? json_object_get(ev, "args") : NULL;
  plc_trace_exact(c->t, args, "start", st->flow.start[i], 0, 1, 0);
  plc_trace_exact(c->t, args, "end", st->flow.end[i], 0, 1, 0);
  plc_trace_push(c->t, ev);
}

/* The compute stream idle [a, b) before op i, named after the op whose
 * end let i start: a collective ("exposed"), compute elsewhere or another
 * stage ("wait"). */
static void plc_trace_step_gap(plc_trace_ctx *c, const plc_step *st, int i, mpq_srcptr a,
                               long tid)
{
  int k = st->flow.cause[i];
  const plc_ir_op *why = k >= 0 ? st->src[k] : NULL;
  int comm = why && why->kind != PLC_OPK_COMPUTE;
  int other = k >= 0 && st->stage_of[k] != st->stage_of[i];
  char name[160];
  snprintf(name, sizeof name, "wait for %s%s", why ? why->name : "nothing",
           other ? " (another stage)" : "");
  long ts = plc_trace_us(c, a), end = plc_trace_us(c, st->flow.start[i]);
  json_t *ev = json_pack("{s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:{}}", "name", name, "cat",
                         comm ? "exposed" : "wait", "ph", "X", "ts", (json_int_t)ts, "dur",
                         (json_int_t)(end - ts), "pid", (json_int_t)c->pid, "tid",
                         (json_int_t)tid, "args");
  json_t *args = ev ? json_object_get(ev, "args") : NULL;
  plc_trace_exact(c->t, args, "start", a, 0, 1, 0);
  plc_trace_exact(c->t, args, "end", st->flow.start[i], 0, 1, 0);
  plc_trace_push(c->t, ev);
}

/* The thread of (stage s, stream k), named when first used. */
static long plc_trace_step_tid(plc_trace_ctx *c, long *tid, int s, int k)
{
  long *t = &tid[(size_t)s * (size_t)c->run->nstreams + (size_t)k];
  if (!*t) {
    char tn[160];
    snprintf(tn, sizeof tn, "stage %d: %s", s, c->run->streams[k]);
    *t = c->t->next_tid++;
    plc_trace_meta(c->t, "thread_name", c->pid, *t, "name", json_string(tn));
    plc_trace_meta(c->t, "thread_sort_index", c->pid, *t, "sort_index",
                   json_integer((json_int_t)s * c->run->nstreams + k));
  }
  return *t;
}

/* One process for the train's whole step simulated op by op (step.h),
 * links as the train says: a thread per stage and stream, every op, and
 * the idle gaps of each stage's compute stream named after their cause.
 * Ops are in each stream's order, so a stream's ops come in start order. */
static void plc_trace_step(plc_trace_ctx *c)
{
  const plc_ir_run *run = c->run;
  plc_step st;
  char why[256];
  plc_step_opts opts = {.share = run->shared_links};
  if (!plc_step_run(&st, run, &opts, why, sizeof why) || st.nops > PLC_TRACE_STEP_MAX) {
    plc_step_free(&st);
    return;
  }
  char name[256];
  snprintf(name, sizeof name, "%s: whole step, op level (%s, links %s)", run->name,
           run->schedule, run->shared_links ? "shared" : "dedicated");
  c->pid = c->t->next_pid++;
  plc_trace_meta(c->t, "process_name", c->pid, 0, "name", json_string(name));
  plc_trace_meta(c->t, "process_sort_index", c->pid, 0, "sort_index", json_integer(0));
  size_t nt = (size_t)run->nstages * (size_t)run->nstreams;
  long *tid = plc_xcalloc(nt, sizeof *tid);
  mpq_t *free_at = plc_xmalloc((size_t)run->nstages * sizeof *free_at);
  for (int s = 0; s < run->nstages; s++)
    mpq_init(free_at[s]);
  for (int i = 0; i < st.nops; i++) {
    if (!st.flow.ran[i])
      continue;
    int s = st.stage_of[i], k = st.src[i]->stream;
    long t = plc_trace_step_tid(c, tid, s, k);
    if (k == 0 && mpq_cmp(st.flow.start[i], free_at[s]) > 0)
      plc_trace_step_gap(c, &st, i, free_at[s], t);
    if (k == 0)
      mpq_set(free_at[s], st.flow.end[i]);
    plc_trace_step_op(c, &st, i, t);
  }
  for (int s = 0; s < run->nstages; s++)
    mpq_clear(free_at[s]);
  free(free_at);
  free(tid);
  plc_step_free(&st);
}

/* What otherData says about one train. */
static void plc_trace_train(plc_trace *t, const plc_result *res)
{
  const plc_ir_run *run = res->run;
  json_t *o = json_pack("{s:s, s:i, s:I, s:i}", "train", run->name, "stages", run->nstages,
                        "microbatches", (json_int_t)run->mu, "critical_stage", res->critical);
  plc_trace_exact(t, o, "t_f", res->t_f, 0, 1, 0);
  plc_trace_exact(t, o, "t_b", res->t_b, 0, 1, 0);
  plc_trace_exact(t, o, "step_time", res->step, 0, 1, 0);
  if (!o || json_array_append_new(t->trains, o) != 0)
    t->failed = 1;
}

int plc_trace_add(plc_trace *t, const plc_result *res)
{
  plc_timeline tl;
  plc_timeline_sequence(&tl, res);
  plc_trace_ctx c;
  c.t = t;
  c.run = res->run;
  c.tid = plc_xcalloc((size_t)res->run->nstreams + 1, sizeof *c.tid);
  mpq_init(c.us);
  mpq_set_ui(c.us, 1000000, 1);
  for (int s = 0; s < tl.nstages; s++) {
    plc_trace_stage_meta(&c, &tl.stages[s], tl.stages[s].stage == res->critical);
    plc_timeline_each(&tl.stages[s], plc_trace_item, &c);
  }
  plc_trace_blocks(&c, res);
  plc_trace_step(&c);
  plc_trace_train(t, res);
  mpq_clear(c.us);
  free(c.tid);
  plc_timeline_free(&tl);
  if (t->range)
    fprintf(stderr, "plc: error: train '%s': a time is too large for a trace file\n",
            res->run->name);
  return t->range ? -1 : 0;
}

/* The tail: the end of the events, then otherData. */
static int plc_trace_tail(plc_trace *t)
{
  json_t *other = json_pack("{s:s, s:s, s:s, s:s, s:O}", "generator", "plc " PACKAGE_VERSION,
                            "time", "ts and dur: whole microseconds, endpoints rounded; args: "
                            "exact values in seconds",
                            "layout", "per stage, mu microbatches forward then backward back to "
                            "back, the last backward with its gradient sync (once ops), then the "
                            "step list; each stage from 0; not a pipeline schedule; beyond 32 "
                            "microbatches the first 31 and the last, at their true offsets",
                            "step", "the process 'TRAIN: whole step, block level' lays out "
                            "every block of the step in the schedule's order, each taking its "
                            "stage's per-microbatch time, with each stage's memory as a counter "
                            "(bytes) when the templates declare it",
                            "trains", t->trains);
  int rc = -1;
  if (other && !t->failed && fputs("],\"displayTimeUnit\":\"ns\",\"otherData\":", t->f) != EOF &&
      json_dumpf(other, t->f, JSON_COMPACT) == 0 && fputs("}\n", t->f) != EOF)
    rc = 0;
  json_decref(other);
  return rc;
}

int plc_trace_finish(plc_trace *t)
{
  int rc = plc_trace_tail(t);
  if (!t->own)
    return rc;
  t->own = 0;
  if (rc != 0) {
    fprintf(stderr, "plc: error: cannot write '%s': %s\n", t->out.path,
            t->err ? strerror(t->err) : "the output could not be produced");
    plc_output_abort(&t->out);
    return -1;
  }
  return plc_output_commit(&t->out);
}
