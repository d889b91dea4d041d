/* schema.c - field tables of devices, links, clusters, trains and ops. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "schema.h"
#include "ast.h"

#include <string.h>

#define DIMLESS {0, 0, 0}
#define BYTES {1, 0, 0}
#define SECS {0, 1, 0}
#define FLOPS {0, 0, 1}
#define BYTES_PER_S {1, -1, 0}
#define FLOP_PER_S {0, -1, 1}
#define PER_S {0, -1, 0}

static const char *const plc_recompute_vals[] = {"none", "selective", "full", NULL};
static const char *const plc_schedule_vals[] = {"gpipe", "1f1b", "interleaved", "zb_h1",
                                                "dualpipe", NULL};

#define PLC_FIELD_END {NULL, 0, DIMLESS, 0, NULL, 0, NULL, NULL}
#define NUM(n, d, req, doc) {n, PLC_FT_NUM, d, 0, NULL, req, doc, NULL}
/* An optional number with a default: a literal or another field's name. */
#define NUMD(n, d, dflt, doc) {n, PLC_FT_NUM, d, 0, NULL, 0, doc, dflt}
#define STR(n, doc) {n, PLC_FT_STR, DIMLESS, 0, NULL, 0, doc, NULL}
#define REF(n, k, req, doc) {n, PLC_FT_REF, DIMLESS, k, NULL, req, doc, NULL}

static const plc_field plc_device_fields[] = {
  NUM("peak", FLOP_PER_S, 1, "peak dense FLOP rate"),
  NUMD("efficiency", DIMLESS, "1", "fraction of peak reached by compute ops (default 1)"),
  NUM("memory", BYTES, 0, "device memory"),
  NUM("mem_bw", BYTES_PER_S, 0, "memory bandwidth (roofline)"),
  STR("source", "where the numbers come from"), STR("note", "free text"), PLC_FIELD_END,
};

static const plc_field plc_link_fields[] = {
  NUM("bw", BYTES_PER_S, 0, "effective bandwidth of every primitive not given below"),
  NUMD("all_reduce", BYTES_PER_S, "bw", "effective all-reduce bus bandwidth (default bw)"),
  NUMD("all_gather", BYTES_PER_S, "bw", "effective all-gather bus bandwidth (default bw)"),
  NUMD("reduce_scatter", BYTES_PER_S, "bw", "effective reduce-scatter bus bandwidth (default bw)"),
  NUMD("all_to_all", BYTES_PER_S, "bw", "effective all-to-all bandwidth (default bw)"),
  NUMD("p2p", BYTES_PER_S, "bw", "point-to-point bandwidth (default bw)"),
  NUMD("broadcast", BYTES_PER_S, "bw", "effective broadcast bandwidth (default bw)"),
  NUMD("latency", SECS, "0", "per-step latency alpha (default 0)"),
  STR("source", "where the numbers come from"), STR("note", "free text"), PLC_FIELD_END,
};

static const plc_field plc_cluster_fields[] = {
  REF("device", PLC_DECL_DEVICE, 1, "the accelerator"),
  STR("source", "where the numbers come from"), STR("note", "free text"), PLC_FIELD_END,
};

static const plc_field plc_tier_fields[] = {
  NUM("size", DIMLESS, 1, "devices in one unit of this tier"),
  REF("link", PLC_DECL_LINK, 1, "the link inside one unit of this tier"),
  STR("note", "free text"), PLC_FIELD_END,
};

static const plc_field plc_train_fields[] = {
  REF("model", PLC_DECL_MODEL, 1, "the model"),
  REF("cluster", PLC_DECL_CLUSTER, 1, "the cluster"),
  REF("framework", PLC_DECL_FRAMEWORK, 1, "the framework templates"),
  NUMD("tp", DIMLESS, "1", "tensor parallel size"), NUMD("pp", DIMLESS, "1", "pipeline stages"),
  NUMD("vpp", DIMLESS, "1", "virtual stages per pipeline stage"),
  NUMD("dp", DIMLESS, "1", "data parallel size"), NUMD("cp", DIMLESS, "1", "context parallel size"),
  NUMD("ep", DIMLESS, "1", "expert parallel size"),
  NUM("edp", DIMLESS, 0, "expert data parallel size (default dp*cp/ep)"),
  NUMD("shard", DIMLESS, "1", "FSDP/HSDP shard group size"),
  NUMD("replicate", DIMLESS, "1", "HSDP replicate group size"),
  NUM("micro_batch", DIMLESS, 1, "sequences per microbatch"),
  NUM("global_batch", DIMLESS, 1, "sequences per step"),
  NUM("seq", DIMLESS, 1, "tokens per sequence"),
  {"recompute", PLC_FT_ENUM, DIMLESS, 0, plc_recompute_vals, 0, "activation recomputation", NULL},
  {"schedule", PLC_FT_ENUM, DIMLESS, 0, plc_schedule_vals, 0, "pipeline schedule", NULL},
  {"order", PLC_FT_DIMS, DIMLESS, 0, NULL, 0, "rank order, innermost first", NULL},
  {"stages", PLC_FT_NUMS, DIMLESS, 0, NULL, 0, "layers per pipeline stage", NULL},
  NUM("dp_hidden", DIMLESS, 0, "declared hidden fraction of the DP gradient sync"),
  NUM("dp_tail", SECS, 0, "pinned exposed DP gradient tail"),
  NUM("optimizer_time", SECS, 0, "optimizer step time"),
  STR("source", "where the numbers come from"), STR("note", "free text"), PLC_FIELD_END,
};

static const plc_field plc_result_fields[] = {
  NUM("step_time", SECS, 0, "time of one training step"),
  NUM("bubble", SECS, 0, "pipeline bubble per step"),
  NUM("eta", DIMLESS, 0, "useful compute / step time"),
  NUM("busy", DIMLESS, 0, "all compute including recompute / step time"),
  NUM("mfu", DIMLESS, 0, "model FLOPs utilisation"),
  NUM("tokens_per_s", PER_S, 0, "throughput"),
  NUM("mu", DIMLESS, 0, "microbatches per step"),
  NUM("t_f", SECS, 0, "forward time of one microbatch on the critical stage"),
  NUM("t_b", SECS, 0, "backward time (with recompute) of one microbatch"),
  NUM("dp_tail_time", SECS, 0, "exposed DP gradient tail"),
  NUM("world", DIMLESS, 0, "devices used"),
  NUM("tokens", DIMLESS, 0, "tokens per microbatch"), PLC_FIELD_END,
};

static const plc_field plc_op_fields[] = {
  NUM("flops", FLOPS, 0, "floating-point work of a compute op"),
  NUM("bytes", BYTES, 0, "memory traffic of a compute op (roofline)"),
  NUM("size", BYTES, 0, "buffer size of a collective"),
  NUM("time", SECS, 0, "pinned duration"),
  NUM("efficiency", DIMLESS, 0, "fraction of peak for this op"),
  {"stream", PLC_FT_WORD, DIMLESS, 0, NULL, 0, "stream the op runs on", NULL},
  {"after", PLC_FT_OPS, DIMLESS, 0, NULL, 0, "ops this op waits for", NULL},
  {"useful", PLC_FT_BOOL, DIMLESS, 0, NULL, 0, "counts as useful compute for eta", NULL},
  STR("note", "free text"), PLC_FIELD_END,
};

static const plc_field plc_layer_fields[] = {
  NUM("index", DIMLESS, 0, "layer index in the model, from 0"),
  NUM("stage", DIMLESS, 0, "pipeline stage of the layer"),
  NUM("first", DIMLESS, 0, "1 for the first layer of its stage, else 0"),
  NUM("last", DIMLESS, 0, "1 for the last layer of its stage, else 0"),
  {"kind", PLC_FT_STR, DIMLESS, 0, NULL, 0, "layer kind name", NULL}, PLC_FIELD_END,
};

static const plc_field *plc_schema_table(int schema)
{
  switch (schema) {
  case PLC_DECL_DEVICE: return plc_device_fields;
  case PLC_DECL_LINK: return plc_link_fields;
  case PLC_DECL_CLUSTER: return plc_cluster_fields;
  case PLC_DECL_TIER: return plc_tier_fields;
  case PLC_DECL_TRAIN: return plc_train_fields;
  case PLC_SCHEMA_OP: return plc_op_fields;
  case PLC_SCHEMA_RESULT: return plc_result_fields;
  case PLC_SCHEMA_LAYER: return plc_layer_fields;
  default: return NULL;
  }
}

int plc_schema_closed(int schema) { return plc_schema_table(schema) != NULL; }

const plc_field *plc_schema_at(int schema, size_t i)
{
  const plc_field *t = plc_schema_table(schema);
  if (!t)
    return NULL;
  for (size_t k = 0; t[k].name; k++)
    if (k == i)
      return &t[k];
  return NULL;
}

const plc_field *plc_schema_field(int schema, const char *name)
{
  const plc_field *t = plc_schema_table(schema);
  for (size_t k = 0; t && t[k].name; k++)
    if (!strcmp(t[k].name, name))
      return &t[k];
  return NULL;
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
