/* import_megatron.c - `plc import megatron`: a train block (and a model
 * block, when the model-shape flags are there) from a Megatron-LM or
 * MindSpeed command line.
 *
 * The arguments come after `--`, or from a file holding them or a whole
 * launch command (a shell script's line: quotes, backslash-newlines and
 * `#` comments are understood; $VARIABLES are not expanded).  Every word is
 * accounted for in the output: flags plc models set a field, flags with no
 * bearing on a step's time are listed as such, and every other flag is
 * listed as ignored in a comment and warned about on stderr.
 *
 * The train is parameterised by the cluster (a command line does not say
 * which machines run it), and by dp when the world size is unknown:
 * Megatron's dp is world / (tp x pp x cp), and the world comes from
 * --world-size of plc import or from torchrun's --nnodes and
 * --nproc-per-node on the command line.  Options whose Megatron default
 * differs from the stdlib's (overlap_grad_reduce, distributed_optimizer)
 * are written out, so the train is the command line's. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "import.h"
#include "output.h"
#include "xalloc.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

/* What a flag sets. */
enum {
  /* layout and batch */
  MG_TP, MG_PP, MG_VPP_LAYERS, MG_VPP, MG_EP, MG_ETP, MG_CP, MG_MBS, MG_GBS, MG_SEQ,
  MG_RC_GRAN, MG_RC_ACT, MG_RC_METHOD, MG_RC_NUM, MG_SP, MG_DISTOPT, MG_OGR, MG_OPG, MG_TPO,
  MG_BF16, MG_FP16, MG_FP8, MG_SH_OV, MG_BUCKET, MG_GRAD_BF16, MG_NO_P2P_OV, MG_DISPATCHER,
  MG_NPROC, MG_NNODES, MG_FSDP, MG_FSDP_STRAT,
  /* MindSpeed */
  MG_A2A_OV, MG_SCHED, MG_FB_OV, MG_TP_EXTEND_EP, MG_FIRST_K,
  /* model shape */
  MG_LAYERS, MG_HIDDEN, MG_FFN, MG_HEADS, MG_GQA, MG_GROUPS, MG_KV_CH, MG_MAXPOS, MG_VOCAB,
  MG_PVOCAB, MG_VDIV, MG_SWIGLU, MG_UNTIE, MG_NORM, MG_NO_BIAS, MG_QKV_BIAS, MG_POS, MG_ROPE,
  MG_QK_NORM, MG_EXPERTS, MG_TOPK, MG_MOE_FFN, MG_MOE_SHARED, MG_MOE_FREQ, MG_MLA, MG_MTP,
  MG_NSLOTS,
  MG_NOTE = -1,     /* read; no bearing on a step's time */
  MG_MINDSPEED = -2 /* MindSpeed-only, not modelled here: warned, but says mindspeed */
};

typedef enum { MG_BOOL, MG_NUM, MG_WORD } plc_mg_kind;

static const struct plc_mg_flag {
  const char *name;
  plc_mg_kind kind;
  int slot;
} plc_mg_flags[] = {
  {"--tensor-model-parallel-size", MG_NUM, MG_TP},
  {"--pipeline-model-parallel-size", MG_NUM, MG_PP},
  {"--num-layers-per-virtual-pipeline-stage", MG_NUM, MG_VPP_LAYERS},
  {"--virtual-pipeline-model-parallel-size", MG_NUM, MG_VPP},
  {"--expert-model-parallel-size", MG_NUM, MG_EP},
  {"--expert-tensor-parallel-size", MG_NUM, MG_ETP},
  {"--context-parallel-size", MG_NUM, MG_CP},
  {"--micro-batch-size", MG_NUM, MG_MBS},
  {"--global-batch-size", MG_NUM, MG_GBS},
  {"--seq-length", MG_NUM, MG_SEQ},
  {"--recompute-granularity", MG_WORD, MG_RC_GRAN},
  {"--recompute-activations", MG_BOOL, MG_RC_ACT},
  {"--recompute-method", MG_WORD, MG_RC_METHOD},
  {"--recompute-num-layers", MG_NUM, MG_RC_NUM},
  {"--sequence-parallel", MG_BOOL, MG_SP},
  {"--use-distributed-optimizer", MG_BOOL, MG_DISTOPT},
  {"--overlap-grad-reduce", MG_BOOL, MG_OGR},
  {"--overlap-param-gather", MG_BOOL, MG_OPG},
  {"--tp-comm-overlap", MG_BOOL, MG_TPO},
  {"--bf16", MG_BOOL, MG_BF16},
  {"--fp16", MG_BOOL, MG_FP16},
  {"--fp8-format", MG_WORD, MG_FP8},
  {"--moe-shared-expert-overlap", MG_BOOL, MG_SH_OV},
  {"--ddp-bucket-size", MG_NUM, MG_BUCKET},
  {"--grad-reduce-in-bf16", MG_BOOL, MG_GRAD_BF16},
  {"--no-overlap-p2p-communication", MG_BOOL, MG_NO_P2P_OV},
  {"--moe-token-dispatcher-type", MG_WORD, MG_DISPATCHER},
  {"--nproc_per_node", MG_NUM, MG_NPROC}, {"--nproc-per-node", MG_NUM, MG_NPROC},
  {"--nnodes", MG_NUM, MG_NNODES},
  {"--use-megatron-fsdp", MG_BOOL, MG_FSDP},
  {"--data-parallel-sharding-strategy", MG_WORD, MG_FSDP_STRAT},
  {"--moe-alltoall-overlap-comm", MG_BOOL, MG_A2A_OV},
  {"--schedules-method", MG_WORD, MG_SCHED},
  {"--moe-fb-overlap", MG_BOOL, MG_FB_OV},
  {"--moe-tp-extend-ep", MG_BOOL, MG_TP_EXTEND_EP},
  {"--first-k-dense-replace", MG_NUM, MG_FIRST_K},
  {"--num-layers", MG_NUM, MG_LAYERS},
  {"--hidden-size", MG_NUM, MG_HIDDEN},
  {"--ffn-hidden-size", MG_NUM, MG_FFN},
  {"--num-attention-heads", MG_NUM, MG_HEADS},
  {"--group-query-attention", MG_BOOL, MG_GQA},
  {"--num-query-groups", MG_NUM, MG_GROUPS},
  {"--kv-channels", MG_NUM, MG_KV_CH},
  {"--max-position-embeddings", MG_NUM, MG_MAXPOS},
  {"--vocab-size", MG_NUM, MG_VOCAB},
  {"--padded-vocab-size", MG_NUM, MG_PVOCAB},
  {"--make-vocab-size-divisible-by", MG_NUM, MG_VDIV},
  {"--swiglu", MG_BOOL, MG_SWIGLU},
  {"--untie-embeddings-and-output-weights", MG_BOOL, MG_UNTIE},
  {"--normalization", MG_WORD, MG_NORM},
  {"--disable-bias-linear", MG_BOOL, MG_NO_BIAS},
  {"--add-qkv-bias", MG_BOOL, MG_QKV_BIAS},
  {"--position-embedding-type", MG_WORD, MG_POS},
  {"--use-rotary-position-embeddings", MG_BOOL, MG_ROPE},
  {"--qk-layernorm", MG_BOOL, MG_QK_NORM},
  {"--num-experts", MG_NUM, MG_EXPERTS},
  {"--moe-router-topk", MG_NUM, MG_TOPK},
  {"--moe-ffn-hidden-size", MG_NUM, MG_MOE_FFN},
  {"--moe-shared-expert-intermediate-size", MG_NUM, MG_MOE_SHARED},
  {"--moe-layer-freq", MG_NUM, MG_MOE_FREQ},
  {"--multi-latent-attention", MG_BOOL, MG_MLA},
  {"--mtp-num-layers", MG_NUM, MG_MTP},
  /* no bearing on the time of a step */
  {"--lr", MG_WORD, MG_NOTE}, {"--min-lr", MG_WORD, MG_NOTE},
  {"--lr-decay-style", MG_WORD, MG_NOTE}, {"--lr-decay-iters", MG_WORD, MG_NOTE},
  {"--lr-warmup-iters", MG_WORD, MG_NOTE}, {"--lr-warmup-fraction", MG_WORD, MG_NOTE},
  {"--weight-decay", MG_WORD, MG_NOTE}, {"--clip-grad", MG_WORD, MG_NOTE},
  {"--adam-beta1", MG_WORD, MG_NOTE}, {"--adam-beta2", MG_WORD, MG_NOTE},
  {"--adam-eps", MG_WORD, MG_NOTE}, {"--init-method-std", MG_WORD, MG_NOTE},
  {"--train-iters", MG_WORD, MG_NOTE}, {"--train-samples", MG_WORD, MG_NOTE},
  {"--eval-iters", MG_WORD, MG_NOTE}, {"--eval-interval", MG_WORD, MG_NOTE},
  {"--save-interval", MG_WORD, MG_NOTE}, {"--log-interval", MG_WORD, MG_NOTE},
  {"--save", MG_WORD, MG_NOTE}, {"--load", MG_WORD, MG_NOTE},
  {"--data-path", MG_WORD, MG_NOTE}, {"--split", MG_WORD, MG_NOTE},
  {"--tokenizer-type", MG_WORD, MG_NOTE}, {"--tokenizer-model", MG_WORD, MG_NOTE},
  {"--tokenizer-name-or-path", MG_WORD, MG_NOTE}, {"--seed", MG_WORD, MG_NOTE},
  {"--attention-dropout", MG_WORD, MG_NOTE}, {"--hidden-dropout", MG_WORD, MG_NOTE},
  {"--rotary-base", MG_WORD, MG_NOTE}, {"--rotary-percent", MG_WORD, MG_NOTE},
  {"--norm-epsilon", MG_WORD, MG_NOTE}, {"--tensorboard-dir", MG_WORD, MG_NOTE},
  {"--distributed-backend", MG_WORD, MG_NOTE}, {"--transformer-impl", MG_WORD, MG_NOTE},
  {"--moe-aux-loss-coeff", MG_WORD, MG_NOTE}, {"--moe-router-load-balancing-type", MG_WORD, MG_NOTE},
  {"--use-mcore-models", MG_BOOL, MG_NOTE}, {"--use-flash-attn", MG_BOOL, MG_NOTE},
  {"--moe-grouped-gemm", MG_BOOL, MG_NOTE}, {"--attention-softmax-in-fp32", MG_BOOL, MG_NOTE},
  {"--no-masked-softmax-fusion", MG_BOOL, MG_NOTE}, {"--log-throughput", MG_BOOL, MG_NOTE},
  {"--no-load-optim", MG_BOOL, MG_NOTE}, {"--no-load-rng", MG_BOOL, MG_NOTE},
  {"--node_rank", MG_WORD, MG_NOTE}, {"--node-rank", MG_WORD, MG_NOTE},
  {"--master_addr", MG_WORD, MG_NOTE}, {"--master-addr", MG_WORD, MG_NOTE},
  {"--master_port", MG_WORD, MG_NOTE}, {"--master-port", MG_WORD, MG_NOTE},
  /* MindSpeed-only switches plc does not model (see frameworks/mindspeed) */
  {"--recompute-in-bubble", MG_BOOL, MG_MINDSPEED},
  {"--recompute-in-advance", MG_BOOL, MG_MINDSPEED},
  {"--moe-zero-memory", MG_WORD, MG_MINDSPEED},
  {"--use-fused-rmsnorm", MG_BOOL, MG_MINDSPEED}, {"--use-fused-swiglu", MG_BOOL, MG_MINDSPEED},
  {"--use-fused-rotary-pos-emb", MG_BOOL, MG_MINDSPEED}, {"--use-mc2", MG_BOOL, MG_MINDSPEED},
};
enum { MG_NFLAGS = sizeof plc_mg_flags / sizeof plc_mg_flags[0] };

/* Largest number a flag may give: keeps every product below 2^63. */
#define MG_MAX 1000000000000LL

typedef struct plc_mg {
  const char *from;          /* the file, or "the command line" */
  const char *where;         /* the file, or "plc", for messages */
  long long num[MG_NSLOTS];
  const char *word[MG_NSLOTS];
  int set[MG_NSLOTS];
  plc_import_text read, notes, ignored, words, warned;
  int errors, mindspeed;
  long long world;           /* 0: unknown */
  char name[80];
  FILE *out;
} plc_mg;

/* A warning on stderr that the output's comment repeats. */
static void plc_mg_warn(plc_mg *m, const char *what)
{
  fprintf(stderr, "plc: warning: %s\n", what);
  plc_import_text_add(&m->warned, " %s.", what);
}

/* ---- words ------------------------------------------------------------- */

typedef struct plc_mg_words {
  char **w;
  size_t n, cap;
} plc_mg_words;

static void plc_mg_push(plc_mg_words *ws, char *w)
{
  if (ws->n == ws->cap) {
    ws->cap = ws->cap ? 2 * ws->cap : 64;
    ws->w = plc_xrealloc(ws->w, ws->cap * sizeof *ws->w);
  }
  ws->w[ws->n++] = w;
}

/* The quoted part of a word from s[i] (the quote) into w[*n]: '...' as it
 * is, "..." with \" \\ \$ \` escapes and backslash-newlines dropped.
 * Returns the index of the closing quote, or of the NUL when there is none
 * (*line is then the line the quote opened on). */
static size_t plc_mg_quote(const char *s, size_t i, char *w, size_t *n, int *line)
{
  char c = s[i];
  int lines = 0;
  size_t j = i + 1;
  for (; s[j] && s[j] != c; j++) {
    if (c == '"' && s[j] == '\\' && s[j + 1] == '\n')
      j++; /* counted below */
    else if (c == '"' && s[j] == '\\' && s[j + 1] && strchr("\"\\$`", s[j + 1]))
      w[(*n)++] = s[++j];
    else
      w[(*n)++] = s[j];
    lines += s[j] == '\n';
  }
  if (s[j])
    *line += lines;
  return j;
}

/* Split text as a shell would split one command: blanks separate words,
 * quotes group, a backslash quotes the next character (a backslash-newline
 * disappears), `#` at the start of a word comments to the end of the line.
 * Returns 0, or -1 after an error (an unterminated quote). */
static int plc_mg_split(const char *from, const char *s, plc_mg_words *ws)
{
  size_t len = strlen(s), n = 0;
  char *w = NULL;
  int line = 1, in = 0; /* in: a word is open */
  for (size_t i = 0; i <= len; i++) {
    char c = s[i];
    if (c == '\0' || c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      if (in)
        w[n] = '\0', plc_mg_push(ws, w), in = 0;
      line += c == '\n';
      continue;
    }
    if (c == '#' && !in) {
      while (s[i + 1] && s[i + 1] != '\n')
        i++;
      continue;
    }
    if (c == '\\' && s[i + 1] == '\n') {
      i++, line++;
      continue;
    }
    if (!in)
      w = plc_xmalloc(len - i + 1), n = 0, in = 1;
    if (c == '\\' && s[i + 1]) {
      w[n++] = s[++i];
    } else if (c == '\'' || c == '"') {
      size_t j = plc_mg_quote(s, i, w, &n, &line);
      if (!s[j]) {
        fprintf(stderr, "%s:%d: error: unterminated %s quote\n", from, line,
                c == '"' ? "double" : "single");
        free(w);
        return -1;
      }
      i = j;
    } else {
      w[n++] = c;
    }
  }
  return 0;
}

/* Shell variables.  NAME=VALUE with blanks in VALUE is a block of
 * arguments (GPT_ARGS="--num-layers 32 ..."): read where it is defined, and
 * its use "$GPT_ARGS" adds nothing.  A one-word VALUE replaces a word
 * "$NAME" or "${NAME}" (its last assignment in the file). */
static int plc_mg_assignment(const char *w)
{
  size_t k = strspn(w, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_0123456789");
  return k > 0 && !(w[0] >= '0' && w[0] <= '9') && w[k] == '=' ? (int)k : 0;
}

static const char *plc_mg_var(const plc_mg_words *in, const char *w)
{
  const char *name = w + 1 + (w[1] == '{');
  size_t nl = strlen(name) - (w[1] == '{');
  if (w[0] != '$' || (w[1] == '{' && w[strlen(w) - 1] != '}'))
    return NULL;
  for (size_t j = in->n; j-- > 0;)
    if (plc_mg_assignment(in->w[j]) == (int)nl && nl && !strncmp(in->w[j], name, nl))
      return in->w[j] + nl + 1;
  return NULL;
}

static int plc_mg_expand(const char *from, const plc_mg_words *all, const plc_mg_words *in,
                         plc_mg_words *out, int depth)
{
  for (size_t i = 0; i < in->n; i++) {
    const char *w = in->w[i], *v = plc_mg_var(all, w);
    int k = plc_mg_assignment(w);
    if ((k && !strpbrk(w + k + 1, " \t\n")) || (v && strpbrk(v, " \t\n")))
      continue; /* a plain assignment; the use of a block */
    if (k && depth < 8) {
      plc_mg_words sub = {0};
      int rc = plc_mg_split(from, w + k + 1, &sub);
      if (rc == 0)
        rc = plc_mg_expand(from, all, &sub, out, depth + 1);
      for (size_t j = 0; j < sub.n; j++)
        free(sub.w[j]);
      free(sub.w);
      if (rc)
        return rc;
      continue;
    }
    plc_mg_push(out, plc_xstrdup(v ? v : w));
  }
  return 0;
}

/* ---- flags ------------------------------------------------------------- */

static const struct plc_mg_flag *plc_mg_find(const char *name, size_t len)
{
  for (int i = 0; i < MG_NFLAGS; i++)
    if (strlen(plc_mg_flags[i].name) == len && !strncmp(plc_mg_flags[i].name, name, len))
      return &plc_mg_flags[i];
  return NULL;
}

static int plc_mg_is_flag(const char *w)
{
  return w[0] == '-' && w[1] && !(w[1] >= '0' && w[1] <= '9') && w[1] != '.';
}

/* A whole number 0..MG_MAX, else -1. */
static long long plc_mg_number(const char *s)
{
  long long v = 0;
  if (!*s)
    return -1;
  for (; *s; s++) {
    if (*s < '0' || *s > '9' || v > MG_MAX / 10)
      return -1;
    v = v * 10 + (*s - '0');
  }
  return v <= MG_MAX ? v : -1;
}

static void plc_mg_error(plc_mg *m, const char *flag, const char *what, const char *value)
{
  fprintf(stderr, "%s: error: %s %s", m->where, flag, what);
  if (value) {
    fputs(", not '", stderr);
    plc_import_put_comment(stderr, value);
    fputs(value[0] == '$' ? "' (shell variables are expanded only when the file assigns them)"
          : "'", stderr);
  }
  fputc('\n', stderr);
  m->errors++;
}

/* A known flag with its value (NULL for a switch). */
static void plc_mg_known(plc_mg *m, const struct plc_mg_flag *f, const char *v)
{
  plc_import_text *t = f->slot == MG_NOTE ? &m->notes : &m->read;
  if (f->slot == MG_MINDSPEED) {
    char msg[160];
    snprintf(msg, sizeof msg, "%s is MindSpeed's and not modelled by plc", f->name);
    plc_mg_warn(m, msg);
    m->mindspeed = 1;
    return;
  }
  plc_import_text_add(t, " %s%s%s,", f->name, v ? " " : "", v ? v : "");
  if (f->slot < 0)
    return;
  if (f->kind == MG_NUM && (m->num[f->slot] = plc_mg_number(v)) < 0)
    plc_mg_error(m, f->name, "takes a whole number", v);
  m->word[f->slot] = v;
  m->set[f->slot] = 1;
  if (f->slot >= MG_A2A_OV && f->slot <= MG_FIRST_K)
    m->mindspeed = 1;
}

/* An unknown flag: its value is the next word unless that is a flag. */
static size_t plc_mg_unknown(plc_mg *m, const char *w, const char *next)
{
  char msg[200];
  int takes = !strchr(w, '=') && next && !plc_mg_is_flag(next);
  snprintf(msg, sizeof msg, "ignored argument '%.80s%s%.80s'", w, takes ? " " : "",
           takes ? next : "");
  plc_import_text_add(&m->ignored, " %s%s%s,", w, takes ? " " : "", takes ? next : "");
  fprintf(stderr, "plc: warning: %s\n", msg);
  return takes;
}

/* Read every word; returns 0, or the number of errors. */
static int plc_mg_read(plc_mg *m, char **w, size_t n)
{
  for (size_t i = 0; i < n; i++) {
    if (!plc_mg_is_flag(w[i])) {
      plc_import_text_add(&m->words, " %s,", w[i]);
      continue;
    }
    const char *eq = w[i][1] == '-' ? strchr(w[i], '=') : NULL;
    const struct plc_mg_flag *f = plc_mg_find(w[i], eq ? (size_t)(eq - w[i]) : strlen(w[i]));
    if (!f) {
      i += plc_mg_unknown(m, w[i], i + 1 < n ? w[i + 1] : NULL);
    } else if (f->kind == MG_BOOL && eq) {
      plc_mg_error(m, f->name, "takes no value", eq + 1);
    } else if (f->kind == MG_BOOL) {
      plc_mg_known(m, f, NULL);
    } else if (eq || i + 1 < n) {
      plc_mg_known(m, f, eq ? eq + 1 : w[++i]);
    } else {
      plc_mg_error(m, f->name, "needs a value", NULL);
    }
  }
  return m->errors;
}

/* ---- the model block --------------------------------------------------- */

static long long plc_mg_num(const plc_mg *m, int slot, long long dflt)
{
  return m->set[slot] ? m->num[slot] : dflt;
}

static void plc_mg_field(plc_mg *m, const char *name, long long v, const char *comment)
{
  char buf[32];
  snprintf(buf, sizeof buf, "%lld", v);
  plc_import_field(m->out, name, buf, comment);
}

/* Can a model block be written?  The three shape flags, no MLA, SwiGLU
 * experts. */
static int plc_mg_has_model(plc_mg *m)
{
  int n = m->set[MG_LAYERS] + m->set[MG_HIDDEN] + m->set[MG_HEADS];
  if (n > 0 && n < 3)
    plc_mg_warn(m, "no model block: it needs --num-layers, --hidden-size and "
                "--num-attention-heads");
  else if (n == 3 && m->set[MG_MLA])
    plc_mg_warn(m, "no model block for --multi-latent-attention: import the model with "
                "plc import hf");
  else if (n == 3 && m->set[MG_EXPERTS] && !m->set[MG_SWIGLU])
    plc_mg_warn(m, "no model block: the stdlib templates know SwiGLU experts only");
  else
    return n == 3;
  return 0;
}

/* Attention and FFN dimensions, with Megatron's defaults. */
static void plc_mg_dims(plc_mg *m, plc_import_shape *s)
{
  long long d = m->num[MG_HIDDEN], h = m->num[MG_HEADS];
  if (!m->set[MG_KV_CH] && (h == 0 || d % h)) {
    plc_mg_error(m, "--hidden-size", "must be a multiple of --num-attention-heads without "
                 "--kv-channels", m->word[MG_HIDDEN]);
    return;
  }
  plc_mg_field(m, "hidden", d, "--hidden-size");
  plc_mg_field(m, "heads", h, "--num-attention-heads");
  if (m->set[MG_GQA] && !m->set[MG_GROUPS])
    plc_mg_error(m, "--group-query-attention", "needs --num-query-groups", NULL);
  if (m->set[MG_GROUPS] && !m->set[MG_GQA])
    plc_mg_warn(m, "--num-query-groups without --group-query-attention: Megatron uses "
                "multi-head attention");
  plc_mg_field(m, "kv_heads", m->set[MG_GQA] ? m->num[MG_GROUPS] : h, m->set[MG_GQA]
               ? "--num-query-groups" : "--num-attention-heads (no --group-query-attention)");
  plc_mg_field(m, "head_dim", m->set[MG_KV_CH] ? m->num[MG_KV_CH] : d / (h ? h : 1),
               m->set[MG_KV_CH] ? "--kv-channels" : "--hidden-size / --num-attention-heads");
  s->gelu = !m->set[MG_SWIGLU];
  /* Megatron's default: 4 d, or int(4 d x 2/3 / 64) x 64 with SwiGLU. */
  long long f = plc_mg_num(m, MG_FFN, s->gelu ? 4 * d : d / 24 * 64);
  const char *fc = m->set[MG_FFN] ? "--ffn-hidden-size" : s->gelu ? "4 x --hidden-size"
                   : "Megatron's SwiGLU default, int(8 d / 3 / 64) x 64";
  plc_mg_field(m, s->gelu ? "gelu_ffn" : "ffn", f, fc);
  if (s->gelu)
    plc_import_field(m->out, "ffn", "2 * gelu_ffn / 3", "SwiGLU equivalent for the templates");
}

/* Experts and the layer kinds: with --moe-layer-freq N every N-th layer
 * (from 0) is MoE, and MindSpeed's --first-k-dense-replace K makes the
 * first K dense; returns the number of MoE layers. */
static long long plc_mg_experts(plc_mg *m, plc_import_shape *s)
{
  long long layers = m->num[MG_LAYERS], moe = 0;
  if (m->set[MG_EXPERTS]) {
    long long e = m->num[MG_EXPERTS], k = plc_mg_num(m, MG_TOPK, 2);
    if (k > e || k == 0 || e == 0)
      plc_mg_error(m, "--moe-router-topk", "must be from 1 to --num-experts", m->word[MG_TOPK]);
    plc_mg_field(m, "experts", e, "--num-experts");
    plc_mg_field(m, "top_k", k, m->set[MG_TOPK] ? "--moe-router-topk" : "Megatron's default");
    plc_mg_field(m, "expert_ffn", plc_mg_num(m, MG_MOE_FFN, m->num[MG_FFN]),
                 m->set[MG_MOE_FFN] ? "--moe-ffn-hidden-size" : "--ffn-hidden-size");
    plc_mg_field(m, "shared_ffn", plc_mg_num(m, MG_MOE_SHARED, 0),
                 m->set[MG_MOE_SHARED] ? "--moe-shared-expert-intermediate-size" : "none");
    plc_import_field(m->out, "shared_experts", "shared_ffn / expert_ffn",
                     "the shared expert's width in expert widths");
    long long freq = plc_mg_num(m, MG_MOE_FREQ, 1), first = plc_mg_num(m, MG_FIRST_K, 0);
    if (freq == 0)
      plc_mg_error(m, "--moe-layer-freq", "must be 1 or more", m->word[MG_MOE_FREQ]);
    first = first < layers ? first : layers;
    freq = freq ? freq : 1;
    moe = (layers + freq - 1) / freq - (first + freq - 1) / freq;
    s->moe = 1;
    s->shared = m->set[MG_MOE_SHARED] && m->num[MG_MOE_SHARED] > 0;
  }
  return moe;
}

/* vocab: --padded-vocab-size as given, --vocab-size padded as Megatron pads
 * it (to a multiple of --make-vocab-size-divisible-by x tp), else a
 * parameter of the model (the tokenizer knows it).  Returns 1 for that. */
static int plc_mg_vocab(plc_mg *m)
{
  if (m->set[MG_PVOCAB]) {
    plc_mg_field(m, "vocab", m->num[MG_PVOCAB], "--padded-vocab-size");
  } else if (m->set[MG_VOCAB]) {
    long long div = plc_mg_num(m, MG_VDIV, 128), tp = plc_mg_num(m, MG_TP, 1);
    long long v = m->num[MG_VOCAB], mult = div * (tp ? tp : 1);
    char c[160];
    if (div == 0 || div > MG_MAX / (tp ? tp : 1)) {
      plc_mg_error(m, "--make-vocab-size-divisible-by", "(128 when absent) must be 1 or more, "
                   "and times tp at most 10^12", m->word[MG_VDIV]);
      return 0;
    }
    snprintf(c, sizeof c, "--vocab-size %lld padded to a multiple of %lld x tp", v,
             plc_mg_num(m, MG_VDIV, 128));
    plc_mg_field(m, "vocab", (v + mult - 1) / mult * mult, c);
  } else {
    plc_import_field(m->out, "vocab", "vocab_size", "the tokenizer's, padded as Megatron pads it");
    return 1;
  }
  return 0;
}

/* Norms, biases and positions, with Megatron's defaults (LayerNorm, biases
 * on every linear, learned absolute positions, tied embeddings). */
static void plc_mg_kinds(plc_mg *m, plc_import_shape *s)
{
  const char *norm = m->set[MG_NORM] ? m->word[MG_NORM] : "LayerNorm";
  const char *pos = m->set[MG_POS] ? m->word[MG_POS] : m->set[MG_ROPE] ? "rope"
                    : "learned_absolute";
  if (strcmp(norm, "LayerNorm") && strcmp(norm, "RMSNorm"))
    plc_mg_error(m, "--normalization", "takes LayerNorm or RMSNorm", norm);
  s->layernorm = !strcmp(norm, "LayerNorm");
  s->o_bias = s->mlp_bias = !m->set[MG_NO_BIAS];
  s->qkv_bias = s->o_bias || m->set[MG_QKV_BIAS];
  s->qk_norm = m->set[MG_QK_NORM];
  s->pos_embed = !strcmp(pos, "learned_absolute");
  if (s->pos_embed)
    plc_mg_field(m, "context", plc_mg_num(m, MG_MAXPOS, m->num[MG_SEQ]), m->set[MG_MAXPOS]
                 ? "--max-position-embeddings (learned positions)"
                 : "--seq-length (learned positions, no --max-position-embeddings)");
  plc_import_field(m->out, "tie_embeddings", m->set[MG_UNTIE] ? "false" : "true",
                   m->set[MG_UNTIE] ? "--untie-embeddings-and-output-weights"
                   : "tied: Megatron's default");
  int half = m->set[MG_BF16] || m->set[MG_FP16];
  plc_import_field(m->out, "dtype", half ? "2 B" : "4 B", m->set[MG_BF16] ? "--bf16"
                   : m->set[MG_FP16] ? "--fp16" : "no --bf16 or --fp16: FP32");
}

/* The model block, NAME_model; returns 0 (none), 1, or 2 (it takes the
 * vocabulary size as a parameter). */
static int plc_mg_model(plc_mg *m)
{
  if (!plc_mg_has_model(m))
    return 0;
  plc_import_shape s = {0};
  int param = !m->set[MG_PVOCAB] && !m->set[MG_VOCAB];
  fprintf(m->out, "model %s_model%s {\n", m->name, param ? "(vocab_size)" : "");
  plc_mg_dims(m, &s);
  long long moe = plc_mg_experts(m, &s);
  plc_mg_vocab(m);
  plc_mg_kinds(m, &s);
  fprintf(m->out, "\n  layers { dense = %lld; moe = %lld }   # --num-layers%s\n",
          m->num[MG_LAYERS] - moe, moe, s.moe ? ", --moe-layer-freq, --first-k-dense-replace"
          : "");
  plc_import_params(m->out, &s);
  fputs("}\n\n", m->out);
  if (m->set[MG_MTP])
    plc_mg_warn(m, "--mtp-num-layers: the MTP layers are not counted in params");
  return param ? 2 : 1;
}

/* ---- the train block --------------------------------------------------- */

/* A layout size: 1 when absent, >= 1 when given. */
static long long plc_mg_size(plc_mg *m, int slot, const char *flag)
{
  if (m->set[slot] && m->num[slot] < 1)
    plc_mg_error(m, flag, "must be 1 or more", m->word[slot]);
  return m->set[slot] && m->num[slot] >= 1 ? m->num[slot] : 1;
}

/* vpp from --virtual-pipeline-model-parallel-size, or from --num-layers /
 * (pp x --num-layers-per-virtual-pipeline-stage). */
static long long plc_mg_vpp(plc_mg *m, long long pp, char *c, size_t n)
{
  snprintf(c, n, "--virtual-pipeline-model-parallel-size");
  if (m->set[MG_VPP])
    return plc_mg_size(m, MG_VPP, "--virtual-pipeline-model-parallel-size");
  if (!m->set[MG_VPP_LAYERS])
    return 1;
  long long per = plc_mg_size(m, MG_VPP_LAYERS, "--num-layers-per-virtual-pipeline-stage");
  long long l = m->num[MG_LAYERS];
  if (!m->set[MG_LAYERS] || l % per || (l / per) % pp) {
    plc_mg_error(m, "--num-layers-per-virtual-pipeline-stage", "needs --num-layers, a multiple "
                 "of it times --pipeline-model-parallel-size", m->word[MG_VPP_LAYERS]);
    return 1;
  }
  snprintf(c, n, "--num-layers %lld / (pp x --num-layers-per-virtual-pipeline-stage %lld)",
           l, per);
  return l / per / pp;
}

/* recompute and schedule, and the warnings about what plc does not model. */
static void plc_mg_recompute(plc_mg *m)
{
  const char *g = m->set[MG_RC_GRAN] ? m->word[MG_RC_GRAN] : m->set[MG_RC_ACT] ? "selective"
                  : "none";
  if (strcmp(g, "full") && strcmp(g, "selective") && strcmp(g, "none"))
    plc_mg_error(m, "--recompute-granularity", "takes full or selective", g);
  plc_import_field(m->out, "recompute", g, m->set[MG_RC_GRAN] ? "--recompute-granularity"
                   : m->set[MG_RC_ACT] ? "--recompute-activations" : "no recomputation");
  if (m->set[MG_RC_METHOD] && !strcmp(m->word[MG_RC_METHOD], "block") && m->set[MG_RC_NUM])
    plc_mg_warn(m, "--recompute-method block: plc recomputes every layer, not only "
                "--recompute-num-layers of them");
  if (m->set[MG_SCHED] && !strcmp(m->word[MG_SCHED], "dualpipev")) {
    plc_import_field(m->out, "schedule", "dualpipe", "--schedules-method dualpipev");
    plc_mg_warn(m, "--schedules-method dualpipev is written as schedule = dualpipe, which "
                "understates DualPipeV's bubble (see frameworks/mindspeed)");
  } else if (m->set[MG_SCHED]) {
    plc_mg_warn(m, "--schedules-method: only dualpipev is known");
  }
  if (m->set[MG_DISPATCHER] && strcmp(m->word[MG_DISPATCHER], "alltoall"))
    plc_mg_warn(m, "--moe-token-dispatcher-type: the templates model alltoall only");
  if (m->set[MG_ETP] && m->num[MG_ETP] != plc_mg_num(m, MG_TP, 1))
    plc_mg_warn(m, "--expert-tensor-parallel-size: the templates split experts by tp");
  if (m->set[MG_FB_OV] || m->set[MG_TP_EXTEND_EP])
    plc_mg_warn(m, "--moe-fb-overlap and --moe-tp-extend-ep are not modelled "
                "(see frameworks/mindspeed)");
}

/* A framework option: the flag's value, or Megatron's default. */
static void plc_mg_option(plc_mg *m, const char *name, int slot, int on_when_set,
                          const char *flag, const char *note)
{
  char c[160];
  int on = m->set[slot] ? on_when_set : !on_when_set;
  snprintf(c, sizeof c, "%s%s%s", m->set[slot] ? "" : "no ", flag, note);
  plc_import_field(m->out, name, on ? "true" : "false", c);
}

static void plc_mg_options(plc_mg *m, long long dp)
{
  plc_mg_option(m, "sequence_parallel", MG_SP, 1, "--sequence-parallel", "");
  plc_mg_option(m, "tp_comm_overlap", MG_TPO, 1, "--tp-comm-overlap", "");
  plc_mg_option(m, "overlap_grad_reduce", MG_OGR, 1, "--overlap-grad-reduce",
                m->set[MG_OGR] ? "" : " (the stdlib's default is true)");
  plc_mg_option(m, "overlap_param_gather", MG_OPG, 1, "--overlap-param-gather", "");
  plc_mg_option(m, "distributed_optimizer", MG_DISTOPT, 1, "--use-distributed-optimizer",
                m->set[MG_DISTOPT] ? "" : " (the stdlib's default is true)");
  plc_mg_option(m, "moe_shared_expert_overlap", MG_SH_OV, 1, "--moe-shared-expert-overlap", "");
  plc_mg_option(m, "grad_reduce_in_bf16", MG_GRAD_BF16, 1, "--grad-reduce-in-bf16", "");
  plc_mg_option(m, "overlap_p2p_comm", MG_NO_P2P_OV, 0, "--no-overlap-p2p-communication", "");
  if (m->set[MG_FSDP]) { /* Megatron-FSDP, optim_grads_params by default (ZeRO-3) */
    if (m->set[MG_FSDP_STRAT] && strcmp(m->word[MG_FSDP_STRAT], "optim_grads_params"))
      plc_mg_warn(m, "--data-parallel-sharding-strategy: only optim_grads_params (ZeRO-3) is "
                  "modelled (fsdp = true)");
    plc_import_field(m->out, "fsdp", "true", "--use-megatron-fsdp");
  }
  if (m->set[MG_FP8]) { /* e4m3 or hybrid: the linear layers' GEMMs in FP8 */
    if (strcmp(m->word[MG_FP8], "e4m3") && strcmp(m->word[MG_FP8], "hybrid"))
      plc_mg_error(m, "--fp8-format", "takes e4m3 or hybrid", m->word[MG_FP8]);
    plc_import_field(m->out, "fp8", "true", "--fp8-format (the device needs a peak_fp8)");
  }
  if (m->mindspeed)
    plc_mg_option(m, "moe_alltoall_overlap_comm", MG_A2A_OV, 1, "--moe-alltoall-overlap-comm",
                  m->set[MG_A2A_OV] ? "" : " (the stdlib's default is true)");
  char v[64];
  if (m->set[MG_BUCKET])
    snprintf(v, sizeof v, "%lld", m->num[MG_BUCKET]);
  else if (dp)
    snprintf(v, sizeof v, "%lld", dp * 1000000 > 40000000 ? dp * 1000000 : 40000000);
  else
    snprintf(v, sizeof v, "max(40_000_000, 1_000_000 * dp_size)");
  plc_import_field(m->out, "grad_bucket", v, m->set[MG_BUCKET] ? "--ddp-bucket-size"
                   : "Megatron's default, max(40M, 1M x dp) parameters");
}

/* dp from the world size, 0 when it is not known. */
static long long plc_mg_dp(plc_mg *m, long long tp, long long pp, long long cp)
{
  long long w = m->world;
  if (!w)
    return 0;
  if (w % tp || (w / tp) % pp || (w / tp / pp) % cp) {
    fprintf(stderr, "%s: error: the world size %lld is not a multiple of tp x pp x cp = "
            "%lld x %lld x %lld\n", m->where, w, tp, pp, cp);
    m->errors++;
    return 0;
  }
  return w / tp / pp / cp;
}

/* micro_batch, global_batch (Megatron's default: micro batch x dp), seq. */
static void plc_mg_batch(plc_mg *m, long long dp)
{
  long long mbs = plc_mg_size(m, MG_MBS, "--micro-batch-size");
  for (int i = 0; i < 2; i++)
    if (!m->set[i ? MG_SEQ : MG_MBS])
      plc_mg_error(m, i ? "--seq-length" : "--micro-batch-size", "is needed for the train",
                   NULL);
  plc_mg_field(m, "micro_batch", mbs, "--micro-batch-size");
  if (m->set[MG_GBS])
    plc_mg_field(m, "global_batch", plc_mg_size(m, MG_GBS, "--global-batch-size"),
                 "--global-batch-size");
  else if (dp && mbs <= MG_MAX / dp)
    plc_mg_field(m, "global_batch", mbs * dp, "micro batch x dp: Megatron's default");
  else if (dp)
    plc_mg_error(m, "--micro-batch-size", "times dp is more than 10^12", m->word[MG_MBS]);
  else
    fprintf(m->out, "  global_batch = %lld * dp_size   # micro batch x dp: Megatron's default\n",
            mbs);
  plc_mg_field(m, "seq", plc_mg_size(m, MG_SEQ, "--seq-length"), "--seq-length");
}

static void plc_mg_train(plc_mg *m, int model)
{
  FILE *f = m->out;
  long long tp = plc_mg_size(m, MG_TP, "--tensor-model-parallel-size");
  long long pp = plc_mg_size(m, MG_PP, "--pipeline-model-parallel-size");
  long long cp = plc_mg_size(m, MG_CP, "--context-parallel-size");
  long long ep = plc_mg_size(m, MG_EP, "--expert-model-parallel-size");
  long long dp = plc_mg_dp(m, tp, pp, cp);
  char c[200];
  /* The model: the one imported here by default, unless it needs its
   * vocabulary size. */
  fprintf(f, "train %s(on_cluster%s, with_model%s%s%s) {\n", m->name, dp ? "" : ", dp_size",
          model == 1 ? " = " : "", model == 1 ? m->name : "", model == 1 ? "_model" : "");
  if (strcmp(m->where, "plc")) {
    fputs("  source = ", f);
    plc_import_put_string(f, m->from);
    fputs("   # the command line read\n", f);
  }
  plc_import_field(f, "model", "with_model", "");
  plc_import_field(f, "cluster", "on_cluster", "");
  plc_import_field(f, "framework", m->mindspeed ? "mindspeed" : "megatron", "");
  plc_mg_field(m, "tp", tp, "--tensor-model-parallel-size");
  plc_mg_field(m, "pp", pp, "--pipeline-model-parallel-size");
  long long vpp = plc_mg_vpp(m, pp, c, sizeof c);
  if (vpp > 1)
    plc_mg_field(m, "vpp", vpp, c);
  plc_mg_field(m, "cp", cp, "--context-parallel-size");
  plc_mg_field(m, "ep", ep, "--expert-model-parallel-size");
  snprintf(c, sizeof c, "world %lld / (tp x pp x cp)", m->world);
  if (dp)
    plc_mg_field(m, "dp", dp, c);
  else
    plc_import_field(f, "dp", "dp_size", "the world size is not known");
  plc_mg_batch(m, dp);
  plc_mg_recompute(m);
  plc_mg_options(m, dp);
  fputs("}\n", f);
}

/* ---- the whole output -------------------------------------------------- */

static void plc_mg_list(FILE *f, plc_import_text *t, const char *title)
{
  if (!t->len)
    return;
  if (t->s[t->len - 1] == ',')
    t->s[t->len - 1] = '.';
  plc_import_text all = {0};
  plc_import_text_add(&all, "%s%s", title, t->s);
  plc_import_text_comment(f, &all);
  free(all.s);
}

static void plc_mg_header(plc_mg *m, FILE *f, int model, const char *world_from)
{
  plc_import_text t = {0};
  plc_import_text_add(&t, "%s - imported by `plc import megatron` from %s.", m->name, m->from);
  plc_import_text_comment(f, &t);
  plc_mg_list(f, &m->read, "Read:");
  plc_mg_list(f, &m->notes, "Read, no bearing on a step's time:");
  plc_mg_list(f, &m->ignored, "IGNORED, not known to plc:");
  plc_mg_list(f, &m->words, "Other words (launcher, script, variables):");
  plc_mg_list(f, &m->warned, "Warnings:");
  t.len = 0;
  if (m->world)
    plc_import_text_add(&t, "The world size, %lld, is %s.", m->world, world_from);
  else
    plc_import_text_add(&t, "The world size is not known (plc import megatron --world-size N, "
                        "or torchrun's --nnodes and --nproc-per-node): dp is the parameter "
                        "dp_size.");
  if (m->mindspeed)
    plc_import_text_add(&t, " Framework mindspeed: the command line has MindSpeed's flags.");
  if (model == 2)
    plc_import_text_add(&t, " The vocabulary comes from the tokenizer: give it, as "
                        "with_model = %s_model(vocab_size = V).", m->name);
  plc_import_text_comment(f, &t);
  long long nodes = m->world && m->world % 8 == 0 ? m->world / 8 : 8;
  fprintf(f, "#\n# Use it with your cluster (world = tp x pp x cp x dp devices), e.g.\n"
          "#   train mine = %s(on_cluster = dgx_h100(nodes = %lld)%s%s\n\n"
          "import \"frameworks/%s\"\n\n", m->name, nodes, m->world ? "" : ", dp_size = 8",
          model == 2 ? ",\n#     with_model = ...(vocab_size = ...))"
          : model == 0 ? ",\n#     with_model = Llama3_70B)   # with import \"models/llama3\"" : ")",
          m->mindspeed ? "mindspeed" : "megatron");
  free(t.s);
}

/* The words of the run: from a file (split as a shell line), or argv. */
static int plc_mg_words_of(const char *file, const char *shown, char **argv, int argc,
                           plc_mg_words *ws)
{
  if (!file) {
    for (int i = 0; i < argc; i++)
      plc_mg_push(ws, plc_xstrdup(argv[i]));
    return 0;
  }
  size_t len;
  char *text = plc_import_read(file, &len);
  if (!text)
    return 2;
  plc_mg_words raw = {0};
  int rc = strlen(text) != len ? (fprintf(stderr, "%s: error: a NUL byte in the file\n", shown), 1)
           : plc_mg_split(shown, text, &raw) ? 1 : plc_mg_expand(shown, &raw, &raw, ws, 0) ? 1 : 0;
  for (size_t i = 0; i < raw.n; i++)
    free(raw.w[i]);
  free(raw.w);
  free(text);
  return rc;
}

typedef struct plc_mg_opts {
  const char *out, *name, *framework, *file;
  long long world;
  char **args;
  int nargs;
} plc_mg_opts;

/* The world size: --world-size, else torchrun's --nnodes x --nproc-per-node;
 * returns where it comes from, or NULL after an error. */
static const char *plc_mg_world(plc_mg *m, long long opt)
{
  long long p = m->num[MG_NPROC], n = m->num[MG_NNODES];
  m->world = opt;
  if (opt || !m->set[MG_NPROC] || !m->set[MG_NNODES] || p == 0 || n == 0)
    return "given by --world-size";
  if (p > MG_MAX / n) {
    fprintf(stderr, "%s: error: torchrun's --nnodes x --nproc-per-node is more than 10^12\n",
            m->where);
    return NULL;
  }
  m->world = p * n;
  return "torchrun's --nnodes x --nproc-per-node";
}

/* The train's name: --name, else the file's name without its extension. */
static void plc_mg_name(plc_mg *m, const plc_mg_opts *o)
{
  int named_file = o->file && strcmp(o->file, "-");
  const char *b = named_file ? strrchr(o->file, '/') : NULL;
  char base[80];
  if (o->name) {
    snprintf(m->name, sizeof m->name, "%s", o->name);
    return;
  }
  snprintf(base, sizeof base, "%s", b ? b + 1 : named_file ? o->file : "megatron_run");
  char *dot = strrchr(base, '.');
  if (dot && dot != base)
    *dot = '\0';
  plc_import_ident(base, m->name, sizeof m->name - 8);
}

/* The model and train blocks into memory, then the header and them to the
 * output; returns the exit status. */
static int plc_mg_write(plc_mg *m, const char *path, const char *world_from)
{
  char *body = NULL;
  size_t blen = 0;
  if (!(m->out = open_memstream(&body, &blen))) {
    perror("plc: error");
    return 2;
  }
  int model = plc_mg_model(m), rc;
  plc_mg_train(m, model);
  fclose(m->out);
  plc_output out;
  rc = m->errors ? 1 : plc_output_open(&out, path) ? 2 : 0;
  if (rc == 0) {
    plc_mg_header(m, out.f, model, world_from);
    fwrite(body, 1, blen, out.f);
    rc = plc_output_commit(&out) ? 2 : 0;
  }
  free(body);
  return rc;
}

static int plc_mg_run(const plc_mg_opts *o)
{
  plc_mg m = {.from = o->file ? strcmp(o->file, "-") ? o->file : "<stdin>" : "the command line"};
  m.where = o->file ? m.from : "plc";
  plc_mg_words ws = {0};
  int rc = plc_mg_words_of(o->file, m.from, o->args, o->nargs, &ws);
  if (rc == 0 && plc_mg_read(&m, ws.w, ws.n))
    rc = 1;
  const char *world_from = plc_mg_world(&m, o->world);
  if (o->framework)
    m.mindspeed = !strcmp(o->framework, "mindspeed");
  plc_mg_name(&m, o);
  if (rc == 0)
    rc = world_from ? plc_mg_write(&m, o->out, world_from) : 1;
  for (size_t i = 0; i < ws.n; i++)
    free(ws.w[i]);
  free(ws.w);
  free(m.read.s), free(m.notes.s), free(m.ignored.s), free(m.words.s), free(m.warned.s);
  return rc;
}

/* plc import megatron's own options; returns -1 to go on, else a status. */
static int plc_mg_options_of(int argc, char **argv, plc_mg_opts *o)
{
  static const struct option opts[] = {
    {"name", required_argument, NULL, 'n'}, {"world-size", required_argument, NULL, 'w'},
    {"framework", required_argument, NULL, 'f'}, {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0}};
  int c;
  optind = 1;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":o:", opts, NULL)) != -1) {
    if (c == 'o')
      o->out = optarg;
    else if (c == 'n' && plc_import_is_ident(optarg) && strlen(optarg) < 64)
      o->name = optarg;
    else if (c == 'w' && (o->world = plc_mg_number(optarg)) > 0)
      continue;
    else if (c == 'f' && (!strcmp(optarg, "megatron") || !strcmp(optarg, "mindspeed")))
      o->framework = optarg;
    else if (c == 'h')
      return plc_import_help();
    else {
      if (c == 'n' || c == 'w' || c == 'f')
        fprintf(stderr, "plc: error: --%s takes %s, not '%s'\n", c == 'n' ? "name" : c == 'w'
                ? "world-size" : "framework", c == 'n' ? "a plan identifier" : c == 'w'
                ? "a whole number of devices" : "megatron or mindspeed", optarg);
      else
        fprintf(stderr, "plc: error: %s option '%s'\n", c == ':' ? "missing argument of"
                : "unrecognized", argv[optind - 1]);
      return 2;
    }
  }
  return -1;
}

int plc_import_megatron(int argc, char **argv)
{
  plc_mg_opts o = {0};
  int rc = plc_mg_options_of(argc, argv, &o);
  if (rc >= 0)
    return rc;
  int dashes = optind > 1 && !strcmp(argv[optind - 1], "--");
  if (dashes) {
    o.args = argv + optind;
    o.nargs = argc - optind;
  } else if (optind == argc - 1) {
    o.file = argv[optind][0] == '@' ? argv[optind] + 1 : argv[optind];
  } else {
    fprintf(stderr, "plc: error: plc import megatron takes one file, or the arguments "
            "after --\nTry 'plc import --help' for more information.\n");
    return 2;
  }
  return plc_mg_run(&o);
}
