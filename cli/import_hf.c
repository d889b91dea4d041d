/* import_hf.c - `plc import hf CONFIG.json`: a model block from a Hugging
 * Face config.json.
 *
 * The block has the fields the stdlib frameworks read (hidden, heads,
 * kv_heads, head_dim, ffn, vocab, dtype, layers { dense; moe }, and for MoE
 * experts, top_k, shared_experts, expert_ffn) and the exact parameter count
 * `params`, written as the stdlib's hand-written models write them (see
 * stdlib/models/ files), so that an imported Llama 3 8B has the same
 * `params` as Llama3_8B.  Architectures are recognised by model_type, else
 * by architectures[0]; each reads its keys with the defaults of its
 * transformers configuration class.  jansson parses the JSON. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "import.h"
#include "diag.h"
#include "output.h"
#include "xalloc.h"

#include <getopt.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

typedef enum plc_hf_family {
  PLC_HF_LLAMA, PLC_HF_MISTRAL, PLC_HF_QWEN2, PLC_HF_QWEN3, PLC_HF_MIXTRAL, PLC_HF_QWEN2_MOE,
  PLC_HF_QWEN3_MOE, PLC_HF_DEEPSEEK_V2, PLC_HF_DEEPSEEK_V3, PLC_HF_GPT2, PLC_HF_NEOX
} plc_hf_family;

static const struct {
  const char *type, *arch, *what;
  plc_hf_family family;
} plc_hf_archs[] = {
  {"llama", "LlamaForCausalLM", "dense, grouped-query attention, SwiGLU", PLC_HF_LLAMA},
  {"mistral", "MistralForCausalLM", "dense, grouped-query attention, SwiGLU", PLC_HF_MISTRAL},
  {"qwen2", "Qwen2ForCausalLM", "dense, grouped-query attention with QKV biases, SwiGLU",
   PLC_HF_QWEN2},
  {"qwen3", "Qwen3ForCausalLM", "dense, grouped-query attention with Q/K norms, SwiGLU",
   PLC_HF_QWEN3},
  {"mixtral", "MixtralForCausalLM", "sparse MoE, grouped-query attention", PLC_HF_MIXTRAL},
  {"qwen2_moe", "Qwen2MoeForCausalLM", "MoE with a gated shared expert, QKV biases",
   PLC_HF_QWEN2_MOE},
  {"qwen3_moe", "Qwen3MoeForCausalLM", "MoE, grouped-query attention with Q/K norms",
   PLC_HF_QWEN3_MOE},
  {"deepseek_v2", "DeepseekV2ForCausalLM", "MLA, MoE with shared experts", PLC_HF_DEEPSEEK_V2},
  {"deepseek_v3", "DeepseekV3ForCausalLM", "MLA, MoE with shared experts, MTP",
   PLC_HF_DEEPSEEK_V3},
  {"gpt2", "GPT2LMHeadModel", "dense, multi-head attention, GELU, learned positions",
   PLC_HF_GPT2},
  {"gpt_neox", "GPTNeoXForCausalLM", "dense, multi-head attention, GELU, parallel residual",
   PLC_HF_NEOX},
};
enum { PLC_HF_NARCHS = sizeof plc_hf_archs / sizeof plc_hf_archs[0] };

/* Published totals, recognised by architecture and dimensions. */
static const struct {
  plc_hf_family family;
  long long hidden, layers, vocab;
  const char *text;
} plc_hf_published[] = {
  {PLC_HF_LLAMA, 4096, 32, 128256, "8.03B (Llama 3 8B, Meta's model card)"},
  {PLC_HF_LLAMA, 8192, 80, 128256, "70.6B (Llama 3 70B, Meta's model card)"},
  {PLC_HF_LLAMA, 16384, 126, 128256, "405.9B (Llama 3 405B, Meta's model card)"},
  {PLC_HF_MIXTRAL, 4096, 32, 32000, "46.7B, 12.9B active per token (Mixtral 8x7B, "
   "Mistral AI)"},
  {PLC_HF_QWEN2, 8192, 80, 152064, "72.7B (Qwen2.5-72B model card)"},
  {PLC_HF_QWEN2_MOE, 2048, 24, 151936, "14.3B, 2.7B active per token (Qwen1.5-MoE-A2.7B "
   "model card)"},
  {PLC_HF_DEEPSEEK_V3, 7168, 61, 129280, "671B, 37B active per token, and 14B more in the "
   "MTP module: params_with_mtp (DeepSeek-V3 model card)"},
  {PLC_HF_DEEPSEEK_V2, 5120, 60, 102400, "236B (DeepSeek-V2 model card)"},
  {PLC_HF_DEEPSEEK_V2, 2048, 27, 102400, "15.7B (DeepSeek-V2-Lite model card)"},
  {PLC_HF_GPT2, 768, 12, 50257, "124M (GPT-2, OpenAI's model card)"},
  {PLC_HF_NEOX, 768, 12, 50304, "162,322,944 (Pythia-160M, EleutherAI's Pythia table)"},
};

/* One config.json being read. */
typedef struct plc_hf {
  const char *path;
  json_t *root;
  plc_import_text keys; /* "key value, " for the header comment */
  int errors;
  plc_hf_family family;
  const char *type;     /* model_type, or the table's for architectures[0] */
  FILE *out;
} plc_hf;

/* A JSON value, compact, for messages ("4096.0", "\"abc\""); caller frees. */
static char *plc_hf_show(const json_t *v)
{
  char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
  if (s && strlen(s) > 40)
    strcpy(s + 36, "...");
  return s ? s : plc_xstrdup("?");
}

static void plc_hf_bad(plc_hf *h, const char *key, const json_t *v, const char *want)
{
  char *s = plc_hf_show(v);
  fprintf(stderr, "%s: error: key \"%s\" must be %s, not %s\n", h->path, key, want, s);
  free(s);
  h->errors++;
}

/* An integer key >= min; absent (or null, when nullable) gives dflt and
 * *present = 0.  required: absence is an error naming the key. */
static long long plc_hf_get(plc_hf *h, const char *key, long long min, int required,
                            long long dflt, int *present)
{
  json_t *v = json_object_get(h->root, key);
  if (present)
    *present = v && !json_is_null(v);
  if (!v || (json_is_null(v) && !required)) {
    if (required) {
      fprintf(stderr, "%s: error: missing key \"%s\", which a %s config gives\n", h->path, key,
              h->type);
      h->errors++;
    }
    return dflt;
  }
  /* At most 10^12, so that the few products formed here stay exact. */
  if (!json_is_integer(v) || json_integer_value(v) < min ||
      json_integer_value(v) > 1000000000000LL) {
    plc_hf_bad(h, key, v, min > 0 ? "a whole number from 1 to 10^12"
               : "a whole number from 0 to 10^12");
    return dflt;
  }
  plc_import_text_add(&h->keys, " %s %lld,", key, (long long)json_integer_value(v));
  return json_integer_value(v);
}

static long long plc_hf_int(plc_hf *h, const char *key)
{
  return plc_hf_get(h, key, 1, 1, 1, NULL);
}

/* A boolean key, dflt when absent; *present says which. */
static int plc_hf_bool(plc_hf *h, const char *key, int dflt, int *present)
{
  json_t *v = json_object_get(h->root, key);
  *present = v != NULL && !json_is_null(v);
  if (!*present)
    return dflt;
  if (!json_is_boolean(v)) {
    plc_hf_bad(h, key, v, "true or false");
    return dflt;
  }
  plc_import_text_add(&h->keys, " %s %s,", key, json_is_true(v) ? "true" : "false");
  return json_is_true(v);
}

/* A string key, NULL when absent or not a string. */
static const char *plc_hf_str(plc_hf *h, const char *key)
{
  return json_string_value(json_object_get(h->root, key));
}

static void plc_hf_num(plc_hf *h, const char *name, long long v, const char *comment)
{
  char buf[32];
  snprintf(buf, sizeof buf, "%lld", v);
  plc_import_field(h->out, name, buf, comment);
}

/* ---- which architecture ------------------------------------------------- */

static int plc_hf_family_of(plc_hf *h)
{
  json_t *mt = json_object_get(h->root, "model_type");
  json_t *archs = json_object_get(h->root, "architectures");
  const char *arch = json_string_value(json_array_get(archs, 0));
  for (int i = 0; i < PLC_HF_NARCHS; i++)
    if (mt ? json_is_string(mt) && !strcmp(json_string_value(mt), plc_hf_archs[i].type)
           : arch && !strcmp(arch, plc_hf_archs[i].arch)) {
      h->family = plc_hf_archs[i].family;
      h->type = plc_hf_archs[i].type;
      return i;
    }
  char *s = plc_hf_show(mt ? mt : archs ? archs : json_null());
  if (!mt && !archs)
    fprintf(stderr, "%s: error: no key \"model_type\" or \"architectures\" names the "
            "architecture\n", h->path);
  else
    fprintf(stderr, "%s: error: unknown architecture: %s %s\n", h->path,
            mt ? "model_type" : "architectures", s);
  free(s);
  fputs("plc import hf knows model_type", stderr);
  for (int i = 0; i < PLC_HF_NARCHS; i++)
    fprintf(stderr, "%s %s", i == 0 ? "" : i == PLC_HF_NARCHS - 1 ? " and" : ",",
            plc_hf_archs[i].type);
  fputs("\n", stderr);
  return -1;
}

/* ---- the dimensions each architecture writes ---------------------------- */

/* Grouped-query attention: heads, kv_heads, head_dim. */
static void plc_hf_attention(plc_hf *h, long long hidden)
{
  int has_kv, has_hd;
  long long heads = plc_hf_int(h, "num_attention_heads");
  long long kv = plc_hf_get(h, "num_key_value_heads", 1, 0, heads, &has_kv);
  long long hd = plc_hf_get(h, "head_dim", 1, 0, 0, &has_hd);
  if (!h->errors && !has_hd && hidden % heads != 0) {
    fprintf(stderr, "%s: error: hidden_size %lld is not a multiple of num_attention_heads %lld, "
            "and there is no key \"head_dim\"\n", h->path, hidden, heads);
    h->errors++;
  }
  plc_hf_num(h, "heads", heads, "num_attention_heads");
  plc_hf_num(h, "kv_heads", kv, has_kv ? "num_key_value_heads"
             : "num_attention_heads (no num_key_value_heads: multi-head)");
  plc_hf_num(h, "head_dim", has_hd ? hd : heads > 0 ? hidden / heads : 0,
             has_hd ? "head_dim" : "hidden_size / num_attention_heads");
}

/* tie_embeddings and dtype, the end of every block's fields. */
static void plc_hf_tail(plc_hf *h, int tie_default)
{
  int has;
  int tie = plc_hf_bool(h, "tie_word_embeddings", tie_default, &has);
  char c[80];
  snprintf(c, sizeof c, "tie_word_embeddings%s", has ? "" : tie_default
           ? " (absent: true, the default)" : " (absent: false, the default)");
  plc_import_field(h->out, "tie_embeddings", tie ? "true" : "false", c);
  const char *dt = plc_hf_str(h, "torch_dtype");
  char *d = plc_xmalloc(64 + (dt ? strlen(dt) : 0));
  sprintf(d, "BF16 training%s%s%s", dt ? " (torch_dtype " : "", dt ? dt : "", dt ? ")" : "");
  plc_import_field(h->out, "dtype", "2 B", d);
  free(d);
}

/* Llama, Mistral, Qwen2, Qwen3: dense GQA with SwiGLU. */
static void plc_hf_dense(plc_hf *h, plc_import_shape *s)
{
  long long hidden = plc_hf_int(h, "hidden_size");
  plc_hf_num(h, "hidden", hidden, "hidden_size");
  plc_hf_attention(h, hidden);
  plc_hf_num(h, "ffn", plc_hf_int(h, "intermediate_size"), "intermediate_size (SwiGLU)");
  plc_hf_num(h, "vocab", plc_hf_int(h, "vocab_size"), "vocab_size");
  plc_hf_tail(h, 0);
  fprintf(h->out, "\n  layers { dense = %lld; moe = 0 }   # num_hidden_layers\n",
          plc_hf_int(h, "num_hidden_layers"));
  int has;
  s->qkv_bias = h->family == PLC_HF_QWEN2 ||
                plc_hf_bool(h, "attention_bias", 0, &has); /* Qwen2: always */
  s->o_bias = h->family != PLC_HF_QWEN2 && s->qkv_bias;
  s->mlp_bias = h->family == PLC_HF_LLAMA && plc_hf_bool(h, "mlp_bias", 0, &has);
  s->qk_norm = h->family == PLC_HF_QWEN3;
}

/* Count the MoE layers of Qwen-MoE: layer i (from 0) is MoE when (i + 1) is
 * a multiple of decoder_sparse_step and i is not in mlp_only_layers. */
static int plc_hf_cmp(const void *a, const void *b)
{
  long long x = *(const long long *)a, y = *(const long long *)b;
  return x < y ? -1 : x > y;
}

static long long plc_hf_qwen_moe_layers(plc_hf *h, long long layers)
{
  long long step = plc_hf_get(h, "decoder_sparse_step", 1, 0, 1, NULL);
  long long moe = layers / step;
  json_t *only = json_object_get(h->root, "mlp_only_layers");
  size_t n = json_array_size(only), k = 0;
  if (only && !json_is_array(only)) {
    plc_hf_bad(h, "mlp_only_layers", only, "a list of layer numbers");
    return moe;
  }
  long long *v = plc_xmalloc((n + 1) * sizeof *v);
  for (size_t i = 0; i < n; i++) {
    json_t *e = json_array_get(only, i);
    if (!json_is_integer(e) || json_integer_value(e) < 0 || json_integer_value(e) >= layers) {
      plc_hf_bad(h, "mlp_only_layers", e, "a layer number from 0 to num_hidden_layers - 1");
      break;
    }
    v[k++] = json_integer_value(e);
  }
  qsort(v, k, sizeof *v, plc_hf_cmp);
  for (size_t i = 0; i < k; i++)
    if ((i == 0 || v[i] != v[i - 1]) && (v[i] + 1) % step == 0)
      moe--;
  if (k)
    plc_import_text_add(&h->keys, " mlp_only_layers (%zu),", k);
  free(v);
  return moe;
}

/* Mixtral: every layer a sparse MoE block of SwiGLU experts. */
static void plc_hf_mixtral(plc_hf *h, plc_import_shape *s)
{
  long long hidden = plc_hf_int(h, "hidden_size");
  plc_hf_num(h, "hidden", hidden, "hidden_size");
  plc_hf_attention(h, hidden);
  plc_hf_num(h, "experts", plc_hf_int(h, "num_local_experts"), "num_local_experts");
  plc_hf_num(h, "top_k", plc_hf_int(h, "num_experts_per_tok"), "num_experts_per_tok");
  plc_import_field(h->out, "shared_experts", "0", "none");
  long long f = plc_hf_int(h, "intermediate_size");
  plc_hf_num(h, "expert_ffn", f, "intermediate_size: d_ff of one expert");
  plc_hf_num(h, "ffn", f, "no dense FFN; the templates read it for 0 dense layers");
  plc_hf_num(h, "vocab", plc_hf_int(h, "vocab_size"), "vocab_size");
  plc_hf_tail(h, 0);
  fprintf(h->out, "\n  layers { dense = 0; moe = %lld }   # num_hidden_layers\n",
          plc_hf_int(h, "num_hidden_layers"));
  s->moe = 1;
}

/* Qwen2-MoE (a gated shared expert, QKV biases) and Qwen3-MoE. */
static void plc_hf_qwen_moe(plc_hf *h, plc_import_shape *s)
{
  int q2 = h->family == PLC_HF_QWEN2_MOE, has;
  long long hidden = plc_hf_int(h, "hidden_size");
  plc_hf_num(h, "hidden", hidden, "hidden_size");
  plc_hf_attention(h, hidden);
  plc_hf_num(h, "experts", plc_hf_int(h, "num_experts"), "num_experts");
  plc_hf_num(h, "top_k", plc_hf_int(h, "num_experts_per_tok"), "num_experts_per_tok");
  long long ef = plc_hf_int(h, "moe_intermediate_size");
  plc_hf_num(h, "expert_ffn", ef, "moe_intermediate_size: d_ff of one expert");
  if (q2) {
    long long sf = plc_hf_get(h, "shared_expert_intermediate_size", 0, 1, 0, NULL);
    plc_hf_num(h, "shared_ffn", sf, "shared_expert_intermediate_size");
    plc_import_field(h->out, "shared_experts", "shared_ffn / expert_ffn",
                     "the shared expert's width in expert widths");
    s->shared = sf > 0;
    s->shared_gate = 1;
  } else {
    plc_import_field(h->out, "shared_experts", "0", "none");
  }
  long long f = plc_hf_get(h, "intermediate_size", 1, 0, ef, &has);
  plc_hf_num(h, "ffn", f, has ? "intermediate_size: d_ff of the dense layers"
             : "no intermediate_size: the expert width");
  plc_hf_num(h, "vocab", plc_hf_int(h, "vocab_size"), "vocab_size");
  plc_hf_tail(h, 0);
  long long layers = plc_hf_int(h, "num_hidden_layers");
  long long moe = plc_hf_qwen_moe_layers(h, layers);
  fprintf(h->out, "\n  # num_hidden_layers, decoder_sparse_step, mlp_only_layers; the stdlib\n"
          "  # templates take the dense layers first.\n"
          "  layers { dense = %lld; moe = %lld }\n", layers - moe, moe);
  s->moe = 1;
  s->qkv_bias = q2 || plc_hf_bool(h, "attention_bias", 0, &has);
  s->o_bias = !q2 && s->qkv_bias;
  s->qk_norm = !q2;
}

/* MLA's projections, and the template equivalents of stdlib/models/deepseek.plan. */
static void plc_hf_mla(plc_hf *h, int has_q_lora)
{
  FILE *f = h->out;
  fputs("\n  # ---- MLA parameters (elements), and the template equivalents ----------\n", f);
  if (has_q_lora)
    fputs("  # q_a_proj d x q_lora, q_b_proj q_lora x H (nope + rope)\n"
          "  mla_q_params = hidden * q_lora_rank + q_lora_rank * mla_heads * (qk_nope_dim + "
          "qk_rope_dim)\n", f);
  else
    fputs("  # q_proj d x H (nope + rope): no q_lora_rank\n"
          "  mla_q_params = hidden * mla_heads * (qk_nope_dim + qk_rope_dim)\n", f);
  fputs("  # kv_a_proj_with_mqa d x (kv_lora + rope), kv_b_proj kv_lora x H (nope + v)\n"
        "  mla_kv_params = hidden * (kv_lora_rank + qk_rope_dim) +\n"
        "                  kv_lora_rank * mla_heads * (qk_nope_dim + v_head_dim)\n"
        "  mla_o_params = mla_heads * v_head_dim * hidden      # o_proj\n"
        "  mla_linear_params = mla_q_params + mla_kv_params + mla_o_params\n", f);
  fprintf(f, "  mla_norm_params = %skv_lora_rank\n", has_q_lora ? "q_lora_rank + " : "");
  fputs("  # The templates know grouped-query attention: these make them charge MLA's\n"
        "  # exact linear parameters and causal core FLOPs (see models/deepseek).\n"
        "  heads = mla_heads\n"
        "  head_dim = (qk_nope_dim + qk_rope_dim + v_head_dim) / 2\n"
        "  kv_heads = (mla_linear_params / (hidden * head_dim) - 2 * heads) / 2\n", f);
}

/* DeepSeek-V2 and V3's layers: the first first_k_dense_replace dense, then
 * every moe_layer_freq-th MoE; returns the MoE count. */
static long long plc_hf_deepseek_layers(plc_hf *h, long long layers)
{
  long long k = plc_hf_get(h, "first_k_dense_replace", 0, 0, 0, NULL);
  long long freq = plc_hf_get(h, "moe_layer_freq", 1, 0, 1, NULL);
  if (k > layers)
    k = layers;
  /* multiples of freq in [k, layers) */
  return (layers + freq - 1) / freq - (k + freq - 1) / freq;
}

static void plc_hf_deepseek(plc_hf *h, plc_import_shape *s)
{
  int v3 = h->family == PLC_HF_DEEPSEEK_V3, has_q, has;
  plc_hf_num(h, "hidden", plc_hf_int(h, "hidden_size"), "hidden_size, d");
  plc_hf_num(h, "vocab", plc_hf_int(h, "vocab_size"), "vocab_size");
  plc_hf_num(h, "ffn", plc_hf_int(h, "intermediate_size"), "intermediate_size: the dense layers");
  plc_hf_num(h, "experts", plc_hf_int(h, "n_routed_experts"), "n_routed_experts");
  plc_hf_num(h, "top_k", plc_hf_int(h, "num_experts_per_tok"), "num_experts_per_tok");
  long long sh = plc_hf_get(h, "n_shared_experts", 0, 0, 0, &has);
  plc_hf_num(h, "shared_experts", sh, has ? "n_shared_experts" : "none (no n_shared_experts)");
  plc_hf_num(h, "expert_ffn", plc_hf_int(h, "moe_intermediate_size"),
             "moe_intermediate_size: d_ff of one expert");
  plc_import_field(h->out, "shared_ffn", "shared_experts * expert_ffn", "");
  plc_hf_num(h, "mla_heads", plc_hf_int(h, "num_attention_heads"), "num_attention_heads");
  long long ql = plc_hf_get(h, "q_lora_rank", 1, 0, 0, &has_q);
  if (has_q)
    plc_hf_num(h, "q_lora_rank", ql, "q_lora_rank");
  plc_hf_num(h, "kv_lora_rank", plc_hf_int(h, "kv_lora_rank"), "kv_lora_rank");
  plc_hf_num(h, "qk_nope_dim", plc_hf_int(h, "qk_nope_head_dim"), "qk_nope_head_dim");
  plc_hf_num(h, "qk_rope_dim", plc_hf_int(h, "qk_rope_head_dim"), "qk_rope_head_dim");
  plc_hf_num(h, "v_head_dim", plc_hf_int(h, "v_head_dim"), "v_head_dim");
  long long mtp = v3 ? plc_hf_get(h, "num_nextn_predict_layers", 0, 0, 0, &has) : 0;
  if (mtp > 0)
    plc_hf_num(h, "mtp_layers", mtp, "num_nextn_predict_layers");
  plc_hf_tail(h, 0);
  if (plc_hf_bool(h, "attention_bias", 0, &has)) {
    fprintf(stderr, "%s: error: key \"attention_bias\" true: plc import hf counts MLA "
            "without biases\n", h->path);
    h->errors++;
  }
  long long layers = plc_hf_int(h, "num_hidden_layers");
  long long moe = plc_hf_deepseek_layers(h, layers);
  fprintf(h->out, "\n  # num_hidden_layers, first_k_dense_replace, moe_layer_freq\n"
          "  layers { dense = %lld; moe = %lld }\n", layers - moe, moe);
  plc_hf_mla(h, has_q);
  const char *tm = plc_hf_str(h, "topk_method");
  s->moe = s->mla = 1;
  s->shared = sh > 0;
  s->mtp = mtp > 0;
  /* noaux_tc routing keeps a bias per expert (e_score_correction_bias). */
  s->router_bias = tm ? !strcmp(tm, "noaux_tc") : v3;
  if (tm)
    plc_import_text_add(&h->keys, " topk_method \"%s\",", tm);
}

/* GPT-2 and GPT-NeoX: GELU FFN, LayerNorm, biases; the templates get a
 * SwiGLU-equivalent ffn (2/3 of the GELU width: same parameters, FLOPs). */
static void plc_hf_gelu(plc_hf *h, plc_import_shape *s)
{
  int g2 = h->family == PLC_HF_GPT2, has;
  long long d = plc_hf_int(h, g2 ? "n_embd" : "hidden_size");
  long long heads = plc_hf_int(h, g2 ? "n_head" : "num_attention_heads");
  if (!h->errors && d % heads) {
    fprintf(stderr, "%s: error: the hidden size %lld is not a multiple of the %lld heads\n",
            h->path, d, heads);
    h->errors++;
  }
  plc_hf_num(h, "hidden", d, g2 ? "n_embd" : "hidden_size");
  plc_hf_num(h, "heads", heads, g2 ? "n_head" : "num_attention_heads");
  plc_import_field(h->out, "kv_heads", "heads", "multi-head attention");
  plc_hf_num(h, "head_dim", d / heads, "hidden size / heads");
  long long f = g2 ? plc_hf_get(h, "n_inner", 1, 0, 4 * d, &has) : plc_hf_int(h, "intermediate_size");
  plc_hf_num(h, "gelu_ffn", f, g2 ? (has ? "n_inner" : "4 x n_embd (n_inner absent or null)")
             : "intermediate_size (GELU)");
  plc_import_field(h->out, "ffn", "2 * gelu_ffn / 3", "SwiGLU equivalent for the templates");
  plc_hf_num(h, "vocab", plc_hf_int(h, "vocab_size"), "vocab_size");
  if (g2)
    plc_hf_num(h, "context", plc_hf_int(h, "n_positions"), "n_positions (learned)");
  plc_hf_tail(h, g2);
  fprintf(h->out, "\n  layers { dense = %lld; moe = 0 }   # %s\n",
          plc_hf_int(h, g2 ? "n_layer" : "num_hidden_layers"), g2 ? "n_layer" : "num_hidden_layers");
  s->gelu = s->mlp_bias = s->layernorm = 1;
  s->qkv_bias = s->o_bias = g2 || plc_hf_bool(h, "attention_bias", 1, &has);
  s->pos_embed = g2;
}

/* ---- the whole block ---------------------------------------------------- */

/* The model's name: --name, else the last part of _name_or_path, else the
 * file name without .json ("config.json": its directory's name). */
static void plc_hf_name(const plc_hf *h, const char *opt, char *buf, size_t n)
{
  const char *src = plc_hf_str((plc_hf *)h, "_name_or_path");
  char *copy = plc_xmalloc(strlen(src && *src ? src : h->path) + strlen(h->type) + 1);
  strcpy(copy, src && *src ? src : h->path);
  size_t len = strlen(copy);
  while (len > 1 && copy[len - 1] == '/')
    copy[--len] = '\0';
  if (!src || !*src) {
    if (len > 5 && !strcmp(copy + len - 5, ".json"))
      copy[len -= 5] = '\0';
    char *slash = strrchr(copy, '/');
    if (!strcmp(slash ? slash + 1 : copy, "config") && slash)
      *slash = '\0';
    else if (!strcmp(copy, "config") || !strcmp(copy, "<stdin>"))
      strcpy(copy, h->type);
  }
  char *base = strrchr(copy, '/');
  plc_import_ident(opt ? opt : base ? base + 1 : copy, buf, n);
  free(copy);
}

static void plc_hf_header(plc_hf *h, FILE *out, const char *name, int arch)
{
  plc_import_text t = {0};
  plc_import_text_add(&t, "%s - imported by `plc import hf` from %s: model_type \"%s\" (%s), "
                      "%s.", name, h->path, plc_hf_archs[arch].type, plc_hf_archs[arch].arch,
                      plc_hf_archs[arch].what);
  plc_import_text_comment(out, &t);
  t.len = 0;
  if (h->keys.len)
    h->keys.s[h->keys.len - 1] = '.'; /* the last comma */
  plc_import_text_add(&t, "Keys read:%s", h->keys.s ? h->keys.s : " none.");
  plc_import_text_comment(out, &t);
  for (size_t i = 0; i < sizeof plc_hf_published / sizeof plc_hf_published[0]; i++) {
    long long v[3] = {0, 0, 0};
    static const char *const k[3][2] = {{"hidden_size", "n_embd"},
                                        {"num_hidden_layers", "n_layer"}, {"vocab_size", NULL}};
    for (int j = 0; j < 3; j++) {
      json_t *x = json_object_get(h->root, k[j][h->family == PLC_HF_GPT2 && k[j][1]]);
      v[j] = json_is_integer(x) ? json_integer_value(x) : 0;
    }
    if (plc_hf_published[i].family == h->family && plc_hf_published[i].hidden == v[0] &&
        plc_hf_published[i].layers == v[1] && plc_hf_published[i].vocab == v[2]) {
      t.len = 0;
      plc_import_text_add(&t, "Published total: %s; %s.params is plc's exact count.",
                          plc_hf_published[i].text, name);
      plc_import_text_comment(out, &t);
    }
  }
  fputs("#\n# The fields are those the stdlib frameworks read (plc-stdlib(7)); the\n"
        "# counts are in elements.\n\n", out);
  free(t.s);
}

/* The model block into a memory buffer (the header lists the keys read on
 * the way); NULL after errors. */
static char *plc_hf_body(plc_hf *h, const char *name, size_t *len)
{
  plc_import_shape s = {0};
  char *body = NULL;
  h->out = open_memstream(&body, len);
  if (!h->out) {
    perror("plc: error");
    return NULL;
  }
  fprintf(h->out, "model %s {\n  source = ", name);
  plc_import_put_string(h->out, h->path);
  fputs("   # the config.json read\n", h->out);
  switch (h->family) {
  case PLC_HF_MIXTRAL: plc_hf_mixtral(h, &s); break;
  case PLC_HF_QWEN2_MOE: case PLC_HF_QWEN3_MOE: plc_hf_qwen_moe(h, &s); break;
  case PLC_HF_DEEPSEEK_V2: case PLC_HF_DEEPSEEK_V3: plc_hf_deepseek(h, &s); break;
  case PLC_HF_GPT2: case PLC_HF_NEOX: plc_hf_gelu(h, &s); break;
  default: plc_hf_dense(h, &s); break;
  }
  plc_import_params(h->out, &s);
  fputs("}\n", h->out);
  fclose(h->out);
  h->out = NULL;
  if (!h->errors)
    return body;
  free(body);
  return NULL;
}

/* A JSON syntax error at jansson's line and column (in characters), shown
 * as plc shows plan errors. */
static void plc_hf_json_error(const char *path, const char *text, size_t len,
                              const json_error_t *e)
{
  plc_diag d;
  plc_diag_init(&d, stderr);
  plc_source *src = plc_source_new(path, NULL, text, len);
  plc_loc loc = {src, e->line > 0 ? e->line : 1, 1, e->line > 0 ? e->line : 1, 2};
  const char *p = text;
  for (int l = 1; l < loc.first_line && (p = memchr(p, '\n', len - (size_t)(p - text))); l++)
    p++;
  int col = 1;
  for (int c = 1; p && c < e->column && *p && *p != '\n'; p++) {
    col = plc_loc_advance(col, (unsigned char)*p);
    c += ((unsigned char)p[1] & 0xC0) != 0x80;
  }
  loc.first_column = col;
  loc.last_column = col + 1;
  plc_error(&d, &loc, "%s", e->text);
  plc_source_free(src);
}

/* Parse, check and write; returns the exit status. */
static int plc_hf_run(const char *path, const char *name_opt, const char *out_path)
{
  size_t len, blen;
  char *text = plc_import_read(path, &len);
  if (!text)
    return 2;
  json_error_t e;
  plc_hf h = {.path = strcmp(path, "-") ? path : "<stdin>"};
  h.root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &e);
  if (!h.root)
    plc_hf_json_error(h.path, text, len, &e);
  else if (!json_is_object(h.root))
    fprintf(stderr, "%s: error: a config.json holds an object, {...}\n", h.path);
  int arch = h.root && json_is_object(h.root) ? plc_hf_family_of(&h) : -1;
  char name[80];
  char *body = NULL;
  if (arch >= 0) {
    plc_hf_name(&h, name_opt, name, sizeof name);
    body = plc_hf_body(&h, name, &blen);
  }
  plc_output out;
  int rc = !body ? 1 : plc_output_open(&out, out_path) ? 2 : 0;
  if (rc == 0) {
    plc_hf_header(&h, out.f, name, arch);
    fwrite(body, 1, blen, out.f);
    rc = plc_output_commit(&out) ? 2 : 0;
  }
  free(body);
  free(h.keys.s);
  json_decref(h.root);
  free(text);
  return rc;
}

int plc_import_hf(int argc, char **argv)
{
  static const struct option opts[] = {
    {"name", required_argument, NULL, 'n'}, {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
  const char *name = NULL, *out = NULL;
  int c;
  optind = 1;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":o:", opts, NULL)) != -1) {
    if (c == 'o')
      out = optarg;
    else if (c == 'n' && plc_import_is_ident(optarg))
      name = optarg;
    else if (c == 'h')
      return plc_import_help();
    else {
      if (c == 'n')
        fprintf(stderr, "plc: error: --name takes a plan identifier, not '%s'\n", optarg);
      else
        fprintf(stderr, "plc: error: %s option '%s'\n", c == ':' ? "missing argument of"
                : "unrecognized", argv[optind - 1]);
      return 2;
    }
  }
  if (optind != argc - 1) {
    fprintf(stderr, "plc: error: plc import hf takes one config.json\n"
            "Try 'plc import --help' for more information.\n");
    return 2;
  }
  return plc_hf_run(argv[optind], name, out);
}
