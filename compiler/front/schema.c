/* schema.c - field tables of devices, links, clusters, trains and ops. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "schema.h"
#include "ast.h"

#include "xalloc.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define DIMLESS {0, 0, 0}
#define BYTES {1, 0, 0}
#define SECS {0, 1, 0}
#define FLOPS {0, 0, 1}
#define BYTES_PER_S {1, -1, 0}
#define FLOP_PER_S {0, -1, 1}
#define PER_S {0, -1, 0}

static const char *const plc_recompute_vals[] = {"none", "selective", "full", NULL};
/* An op's precision: bf16 and fp16 run at the device's peak, fp8 at its
 * peak_fp8. */
static const char *const plc_precision_vals[] = {"bf16", "fp16", "fp8", NULL};
static const char *const plc_schedule_vals[] = {"gpipe", "1f1b", "interleaved", "zb_h1",
                                                "dualpipe", "dualpipev", "custom", NULL};

#define PLC_FIELD_END {NULL, 0, DIMLESS, 0, NULL, 0, NULL, NULL, 0}
#define NUM(n, d, req, chk, doc) {n, PLC_FT_NUM, d, 0, NULL, req, doc, NULL, PLC_CHK_##chk}
/* An optional number with a default: a literal or another field's name. */
#define NUMD(n, d, dflt, chk, doc) {n, PLC_FT_NUM, d, 0, NULL, 0, doc, dflt, PLC_CHK_##chk}
#define STR(n, doc) {n, PLC_FT_STR, DIMLESS, 0, NULL, 0, doc, NULL, 0}
#define REF(n, k, req, doc) {n, PLC_FT_REF, DIMLESS, k, NULL, req, doc, NULL, 0}

static const plc_field plc_device_fields[] = {
  NUM("peak", FLOP_PER_S, 1, POS, "peak dense FLOP rate"),
  NUM("peak_fp8", FLOP_PER_S, 0, POS, "peak dense FP8 FLOP rate, for ops with precision fp8"),
  NUMD("efficiency", DIMLESS, "1", FRAC, "fraction of peak reached by compute ops (default 1)"),
  NUM("memory", BYTES, 0, POS, "device memory"),
  NUM("mem_bw", BYTES_PER_S, 0, POS, "memory bandwidth (roofline)"),
  NUMD("memory_reserve", BYTES, "0", NONNEG,
       "memory the training cannot use: runtime context, allocator slack (default 0)"),
  /* Streaming multiprocessors (NVIDIA) or AI cores (Ascend): the units a
   * GEMM's tiles are spread over and that communication kernels may hold.
   * 0 means not known; frameworks then leave out what depends on it. */
  NUMD("sms", DIMLESS, "0", NONNEG,
       "streaming multiprocessors / AI cores (default 0: not known)"),
  STR("source", "where the numbers come from"), STR("note", "free text"), PLC_FIELD_END,
};

static const plc_field plc_link_fields[] = {
  NUM("bw", BYTES_PER_S, 0, POS, "effective bandwidth of every primitive not given below"),
  NUMD("all_reduce", BYTES_PER_S, "bw", POS, "effective all-reduce bus bandwidth (default bw)"),
  NUMD("all_gather", BYTES_PER_S, "bw", POS, "effective all-gather bus bandwidth (default bw)"),
  NUMD("reduce_scatter", BYTES_PER_S, "bw", POS, "effective reduce-scatter bus bandwidth (default bw)"),
  NUMD("all_to_all", BYTES_PER_S, "bw", POS, "effective all-to-all bandwidth (default bw)"),
  NUMD("p2p", BYTES_PER_S, "bw", POS, "point-to-point bandwidth (default bw)"),
  NUMD("broadcast", BYTES_PER_S, "bw", POS, "effective broadcast bandwidth (default bw)"),
  NUMD("latency", SECS, "0", NONNEG, "per-step latency alpha (default 0)"),
  STR("source", "where the numbers come from"), STR("note", "free text"), PLC_FIELD_END,
};

static const plc_field plc_cluster_fields[] = {
  REF("device", PLC_DECL_DEVICE, 1, "the accelerator"),
  STR("source", "where the numbers come from"), STR("note", "free text"), PLC_FIELD_END,
};

static const plc_field plc_tier_fields[] = {
  NUM("size", DIMLESS, 1, COUNT, "devices in one unit of this tier"),
  REF("link", PLC_DECL_LINK, 1, "the link inside one unit of this tier"),
  STR("port", "the device port its traffic uses: tiers naming one port share one link"),
  STR("note", "free text"), PLC_FIELD_END,
};

static const plc_field plc_train_fields[] = {
  REF("model", PLC_DECL_MODEL, 1, "the model"),
  REF("cluster", PLC_DECL_CLUSTER, 1, "the cluster"),
  REF("framework", PLC_DECL_FRAMEWORK, 1, "the framework templates"),
  NUMD("tp", DIMLESS, "1", COUNT, "tensor parallel size"), NUMD("pp", DIMLESS, "1", COUNT, "pipeline stages"),
  NUMD("vpp", DIMLESS, "1", COUNT, "virtual stages per pipeline stage"),
  NUMD("dp", DIMLESS, "1", COUNT, "data parallel size"), NUMD("cp", DIMLESS, "1", COUNT, "context parallel size"),
  NUMD("ep", DIMLESS, "1", COUNT, "expert parallel size"),
  NUM("edp", DIMLESS, 0, COUNT, "expert data parallel size (default dp*cp/ep)"),
  NUMD("shard", DIMLESS, "1", COUNT, "FSDP/HSDP shard group size"),
  NUMD("replicate", DIMLESS, "1", COUNT, "HSDP replicate group size"),
  NUM("micro_batch", DIMLESS, 1, COUNT, "sequences per microbatch"),
  NUM("global_batch", DIMLESS, 1, COUNT, "sequences per step"),
  NUM("seq", DIMLESS, 1, COUNT, "tokens per sequence"),
  {"recompute", PLC_FT_ENUM, DIMLESS, 0, plc_recompute_vals, 0, "activation recomputation", NULL, 0},
  {"schedule", PLC_FT_ENUM, DIMLESS, 0, plc_schedule_vals, 0, "pipeline schedule", NULL, 0},
  {"order", PLC_FT_DIMS, DIMLESS, 0, NULL, 0, "rank order, innermost first", NULL, 0},
  {"stages", PLC_FT_NUMS, DIMLESS, 0, NULL, 0, "layers per pipeline stage", NULL, 0},
  {"schedule_order", PLC_FT_STRS, DIMLESS, 0, NULL, 0,
   "schedule custom: each stage's blocks in order (\"F0 F1 B0 ...\")", NULL, 0},
  NUM("dp_hidden", DIMLESS, 0, UNIT, "declared hidden fraction of the DP gradient sync"),
  NUM("dp_tail", SECS, 0, NONNEG, "pinned exposed DP gradient tail"),
  NUM("optimizer_time", SECS, 0, NONNEG, "optimizer step time"),
  NUM("memory_reserve", BYTES, 0, NONNEG, "memory the training cannot use (default the device's)"),
  {"shared_links", PLC_FT_BOOL, DIMLESS, 0, NULL, 0,
   "whole-step simulation: concurrent transfers share a link (default true)", NULL, 0},
  STR("source", "where the numbers come from"), STR("note", "free text"), PLC_FIELD_END,
};

static const plc_field plc_result_fields[] = {
  NUM("step_time", SECS, 0, ANY, "time of one training step"),
  NUM("bubble", SECS, 0, ANY, "pipeline bubble per step"),
  NUM("eta", DIMLESS, 0, ANY, "useful compute / step time"),
  NUM("busy", DIMLESS, 0, ANY, "all compute including recompute / step time"),
  NUM("mfu", DIMLESS, 0, ANY, "model FLOPs utilisation"),
  NUM("tokens_per_s", PER_S, 0, ANY, "throughput"),
  NUM("mu", DIMLESS, 0, ANY, "microbatches per step"),
  NUM("t_f", SECS, 0, ANY, "forward time of one microbatch on the critical stage"),
  NUM("t_b", SECS, 0, ANY, "backward time (with recompute) of one microbatch"),
  NUM("dp_tail_time", SECS, 0, ANY, "exposed DP gradient tail"),
  NUM("world", DIMLESS, 0, ANY, "devices used"),
  NUM("tokens", DIMLESS, 0, ANY, "tokens per microbatch"),
  NUM("sim_step_time", SECS, 0, ANY, "whole-step simulation: the step (makespan)"),
  NUM("sim_compute", SECS, 0, ANY, "whole-step simulation: compute of the critical stage"),
  NUM("sim_exposed", SECS, 0, ANY, "whole-step simulation: exposed communication, critical stage"),
  NUM("sim_other_stream", SECS, 0, ANY, "whole-step simulation: waits for other streams"),
  NUM("sim_wait_stage", SECS, 0, ANY, "whole-step simulation: waits for other stages"),
  NUM("sim_fill", SECS, 0, ANY, "whole-step simulation: idle before the first op"),
  NUM("sim_drain", SECS, 0, ANY, "whole-step simulation: idle after the last op"),
  NUM("peak_memory", BYTES, 0, ANY, "peak memory of the fullest device, reserve excluded"),
  NUM("memory_headroom", BYTES, 0, ANY, "least free memory of any device (negative: does not fit)"),
  NUM("memory_weights", BYTES, 0, ANY, "weights on the device with the peak"),
  NUM("memory_grads", BYTES, 0, ANY, "gradient buffers on the device with the peak"),
  NUM("memory_optimizer", BYTES, 0, ANY, "optimizer state on the device with the peak"),
  NUM("memory_activations", BYTES, 0, ANY, "activations in flight at the peak"),
  NUM("memory_buffers", BYTES, 0, ANY, "transient buffers at the peak"),
  PLC_FIELD_END,
};

static const plc_field plc_op_fields[] = {
  NUM("flops", FLOPS, 0, NONNEG, "floating-point work of a compute op"),
  NUM("bytes", BYTES, 0, NONNEG, "memory traffic of a compute op (roofline)"),
  NUM("size", BYTES, 0, NONNEG, "buffer size of a collective"),
  NUM("time", SECS, 0, NONNEG, "pinned duration"),
  NUM("efficiency", DIMLESS, 0, FRAC, "fraction of peak for this op"),
  {"precision", PLC_FT_WORD, DIMLESS, 0, plc_precision_vals, 0,
   "bf16 (default) or fp16: the device's peak; fp8: its peak_fp8", NULL, 0},
  {"stream", PLC_FT_WORD, DIMLESS, 0, NULL, 0, "stream the op runs on", NULL, 0},
  {"after", PLC_FT_OPS, DIMLESS, 0, NULL, 0, "ops this op waits for", NULL, 0},
  {"useful", PLC_FT_BOOL, DIMLESS, 0, NULL, 0, "counts as useful compute for eta", NULL, 0},
  {"once", PLC_FT_BOOL, DIMLESS, 0, NULL, 0, "runs only in the last microbatch of a step", NULL, 0},
  {"wgrad", PLC_FT_BOOL, DIMLESS, 0, NULL, 0, "a weight-gradient op (t_w of ZB-H1, DualPipe)", NULL, 0},
  NUM("chunk", DIMLESS, 0, NONNEG, "pipeline template: the virtual chunk of the stage it belongs to"),
  STR("note", "free text"), PLC_FIELD_END,
};

/* A template's `memory` section: what one instance keeps on its device. */
static const plc_field plc_memory_fields[] = {
  NUM("weights", BYTES, 0, NONNEG, "parameters held (resident)"),
  NUM("grads", BYTES, 0, NONNEG, "gradient buffers"),
  NUM("optimizer", BYTES, 0, NONNEG, "optimizer state (with master weights)"),
  NUM("activations", BYTES, 0, NONNEG, "kept from forward to backward, per microbatch"),
  NUM("buffers", BYTES, 0, NONNEG, "transient working set while the layer runs"),
  PLC_FIELD_END,
};

static const plc_field plc_layer_fields[] = {
  NUM("index", DIMLESS, 0, ANY, "layer index in the model, from 0"),
  NUM("stage", DIMLESS, 0, ANY, "pipeline stage of the layer"),
  {"first", PLC_FT_BOOL, DIMLESS, 0, NULL, 0, "the first layer of its stage", NULL, 0},
  {"last", PLC_FT_BOOL, DIMLESS, 0, NULL, 0, "the last layer of its stage", NULL, 0},
  {"model_first", PLC_FT_BOOL, DIMLESS, 0, NULL, 0, "the model's first layer", NULL, 0},
  {"model_last", PLC_FT_BOOL, DIMLESS, 0, NULL, 0, "the model's last layer", NULL, 0},
  {"kind", PLC_FT_STR, DIMLESS, 0, NULL, 0, "layer kind name", NULL, 0}, PLC_FIELD_END,
};

/* A schema's table and its number of fields (the end marker not counted). */
#define PLC_SCHEMA_T(t) (*n = sizeof t / sizeof t[0] - 1, t)
static const plc_field *plc_schema_table_n(int schema, size_t *n)
{
  switch (schema) {
  case PLC_DECL_DEVICE: return PLC_SCHEMA_T(plc_device_fields);
  case PLC_DECL_LINK: return PLC_SCHEMA_T(plc_link_fields);
  case PLC_DECL_CLUSTER: return PLC_SCHEMA_T(plc_cluster_fields);
  case PLC_DECL_TIER: return PLC_SCHEMA_T(plc_tier_fields);
  case PLC_DECL_TRAIN: return PLC_SCHEMA_T(plc_train_fields);
  case PLC_SCHEMA_OP: return PLC_SCHEMA_T(plc_op_fields);
  case PLC_SCHEMA_RESULT: return PLC_SCHEMA_T(plc_result_fields);
  case PLC_SCHEMA_LAYER: return PLC_SCHEMA_T(plc_layer_fields);
  case PLC_SCHEMA_MEMORY: return PLC_SCHEMA_T(plc_memory_fields);
  default: *n = 0; return NULL;
  }
}
#undef PLC_SCHEMA_T

static const plc_field *plc_schema_table(int schema)
{
  size_t n;
  return plc_schema_table_n(schema, &n);
}

int plc_schema_closed(int schema) { return plc_schema_table(schema) != NULL; }

/* Each schema's fields by the hash of their names (ast.h), built before
 * main(): the evaluator asks a schema for every field it does not find
 * set (a default, a train's result), and scanning dozens of fields by
 * their characters cost more than the rest of the lookup. */
#define PLC_SCHEMA_SLOTS 128 /* a power of two, more than twice any table */
#define PLC_SCHEMA_NTABLES (PLC_DECL_KIND_COUNT + 4)
static struct {
  unsigned hash;
  unsigned short field; /* its index + 1; 0: an empty slot */
} plc_schema_index[PLC_SCHEMA_NTABLES][PLC_SCHEMA_SLOTS];
/* Each row's table (plc_schema_table_n's), kept with its index: a field
 * lookup then takes no switch on the schema. */
static const plc_field *plc_schema_rows[PLC_SCHEMA_NTABLES];
static size_t plc_schema_nfields[PLC_SCHEMA_NTABLES];

/* The row of plc_schema_index of a schema, or -1. */
static int plc_schema_row(int schema)
{
  if (schema >= 0 && schema < PLC_DECL_KIND_COUNT)
    return schema;
  if (schema >= PLC_SCHEMA_OP && schema <= PLC_SCHEMA_MEMORY)
    return PLC_DECL_KIND_COUNT + schema - PLC_SCHEMA_OP;
  return -1;
}

__attribute__((constructor)) static void plc_schema_index_build(void)
{
  static const int schemas[] = {PLC_DECL_DEVICE, PLC_DECL_LINK, PLC_DECL_CLUSTER,
                                PLC_DECL_TIER, PLC_DECL_TRAIN, PLC_SCHEMA_OP,
                                PLC_SCHEMA_RESULT, PLC_SCHEMA_LAYER, PLC_SCHEMA_MEMORY};
  for (size_t k = 0; k < sizeof schemas / sizeof schemas[0]; k++) {
    size_t n;
    const plc_field *t = plc_schema_table_n(schemas[k], &n);
    int row = plc_schema_row(schemas[k]);
    if (2 * n >= PLC_SCHEMA_SLOTS)
      abort(); /* a table outgrew its index: raise PLC_SCHEMA_SLOTS */
    plc_schema_rows[row] = t;
    plc_schema_nfields[row] = n;
    for (size_t i = 0; i < n; i++) {
      unsigned h = plc_name_fnv(t[i].name);
      size_t j = h % PLC_SCHEMA_SLOTS;
      while (plc_schema_index[row][j].field)
        j = (j + 1) % PLC_SCHEMA_SLOTS;
      plc_schema_index[row][j].hash = h;
      plc_schema_index[row][j].field = (unsigned short)(i + 1);
    }
  }
}

const plc_field *plc_schema_at(int schema, size_t i)
{
  int row = plc_schema_row(schema);
  const plc_field *t = row < 0 ? NULL : plc_schema_rows[row];
  return t && i < plc_schema_nfields[row] ? &t[i] : NULL;
}

/* The field of table t (row row) named name, of hash hash; a function of
 * its own, not inlined, so that plc_schema_field_h's answer for the many
 * lookups in schemas without a table needs no stack frame. */
__attribute__((noinline)) static const plc_field *plc_schema_probe(const plc_field *t, int row,
                                                                  const char *name,
                                                                  unsigned hash)
{
  for (size_t j = hash % PLC_SCHEMA_SLOTS; plc_schema_index[row][j].field;
       j = (j + 1) % PLC_SCHEMA_SLOTS) {
    const plc_field *f = &t[plc_schema_index[row][j].field - 1];
    if (plc_schema_index[row][j].hash == hash && !strcmp(f->name, name))
      return f;
  }
  return NULL;
}

const plc_field *plc_schema_field_h(int schema, const char *name, unsigned hash)
{
  int row = plc_schema_row(schema);
  const plc_field *t = row < 0 ? NULL : plc_schema_rows[row];
  if (!t)
    return NULL;
  return plc_schema_probe(t, row, name, hash ? hash : plc_name_hash(name));
}

const plc_field *plc_schema_field(int schema, const char *name)
{
  return plc_schema_field_h(schema, name, 0);
}

/* Numeric defaults, parsed once (the first time one is asked for, after
 * main() started: GMP's allocator is installed then): by schema row and
 * field index, NULL for a default that names another field.  Never freed. */
static mpq_ptr *plc_schema_dnum[PLC_SCHEMA_NTABLES];
static pthread_once_t plc_schema_dnum_once = PTHREAD_ONCE_INIT;

static void plc_schema_dnum_build(void)
{
  for (int schema = 0; schema < PLC_SCHEMA_MEMORY + 1; schema++) {
    size_t n;
    const plc_field *t = plc_schema_table_n(schema, &n);
    int row = plc_schema_row(schema);
    if (!t || row < 0)
      continue;
    plc_schema_dnum[row] = plc_xcalloc(n, sizeof *plc_schema_dnum[row]);
    for (size_t i = 0; i < n; i++) {
      if (!t[i].dflt || plc_schema_field(schema, t[i].dflt))
        continue;
      plc_quantity q;
      plc_q_init(&q);
      plc_q_parse_number(&q, t[i].dflt, strlen(t[i].dflt));
      mpq_ptr v = plc_xmalloc(sizeof(mpq_t));
      mpq_init(v);
      mpq_set(v, q.v);
      plc_q_clear(&q);
      plc_schema_dnum[row][i] = v;
    }
  }
}

mpq_srcptr plc_schema_default_num(int schema, const plc_field *f)
{
  size_t n;
  const plc_field *t = plc_schema_table_n(schema, &n);
  int row = plc_schema_row(schema);
  if (!t || row < 0 || f < t || f >= t + n)
    return NULL;
  pthread_once(&plc_schema_dnum_once, plc_schema_dnum_build);
  return plc_schema_dnum[row][f - t];
}

static const char *const plc_dims[] = {"tp", "cp", "dp", "ep", "pp", "edp", "shard",
                                       "replicate", NULL};
static const char *const plc_opkinds[] = {"compute", "all_reduce", "all_gather",
                                          "reduce_scatter", "all_to_all", "p2p",
                                          "broadcast", NULL};

static int plc_schema_in(const char *const *set, const char *name)
{
  for (size_t i = 0; set[i]; i++)
    if (!strcmp(set[i], name))
      return 1;
  return 0;
}

int plc_schema_is_dim(const char *name) { return plc_schema_in(plc_dims, name); }
int plc_schema_is_opkind(const char *name) { return plc_schema_in(plc_opkinds, name); }
const char *plc_schema_dims_list(void) { return "tp, cp, dp, ep, pp, edp, shard, replicate"; }
const char *plc_schema_opkinds_list(void)
{
  return "compute, all_reduce, all_gather, reduce_scatter, all_to_all, p2p, broadcast";
}

/* Levenshtein distance, capped: names are short, so O(n*m) is fine. */
static size_t plc_schema_distance(const char *a, const char *b)
{
  size_t n = strlen(a), m = strlen(b);
  if (n > 63 || m > 63)
    return 99;
  size_t row[64];
  for (size_t j = 0; j <= m; j++)
    row[j] = j;
  for (size_t i = 1; i <= n; i++) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= m; j++) {
      size_t up = row[j];
      size_t best = diag + (a[i - 1] != b[j - 1]);
      if (up + 1 < best)
        best = up + 1;
      if (row[j - 1] + 1 < best)
        best = row[j - 1] + 1;
      row[j] = best;
      diag = up;
    }
  }
  return row[m];
}

const char *plc_schema_suggest(const char *name, const char *const *cands, size_t n)
{
  const char *best = NULL;
  size_t bestd = 3;
  for (size_t i = 0; i < n; i++) {
    size_t d = plc_schema_distance(name, cands[i]);
    if (d < bestd && d < strlen(name)) {
      bestd = d;
      best = cands[i];
    }
  }
  return best;
}
