/* import.h - `plc import`: plan text from a Hugging Face config.json or a
 * Megatron-LM / MindSpeed command line, and the helpers both importers share
 * (reading the input, writing safe plan text, the model block's parameter
 * formulas).
 *
 * Exit status of every importer: 0 success, 1 the input is understood but
 * wrong (bad JSON, unknown architecture, a missing or bad key or flag),
 * 2 usage or I/O errors. */
#ifndef PLC_IMPORT_H
#define PLC_IMPORT_H

#include <stddef.h>
#include <stdio.h>

/* `plc import ...`: argv[0] is "import". */
int plc_import_main(int argc, char **argv);
/* `plc import --help`; returns the exit status. */
int plc_import_help(void);

/* The importers, called with argv[0] = "hf" or "megatron". */
int plc_import_hf(int argc, char **argv);
int plc_import_megatron(int argc, char **argv);

/* The whole of a file ("-": standard input), at most 16 MiB, NUL-terminated;
 * NULL after an error message (exit status 2). */
char *plc_import_read(const char *path, size_t *len);

/* Write s into a `#` comment: control characters and invalid UTF-8 become
 * '?', so the comment stays on its line and the lexer accepts it. */
void plc_import_put_comment(FILE *f, const char *s);
/* Write s as a plan string literal, quotes included, escaped. */
void plc_import_put_string(FILE *f, const char *s);
/* A plan identifier made from s (letters, digits and '_'; not a keyword),
 * into buf of n > 8 bytes. */
void plc_import_ident(const char *s, char *buf, size_t n);
/* Is s a valid plan identifier and not a keyword? */
int plc_import_is_ident(const char *s);

/* A growing text: the "keys read" lists of the header comments. */
typedef struct plc_import_text {
  char *s;
  size_t len, cap;
} plc_import_text;

void plc_import_text_add(plc_import_text *t, const char *fmt, ...)
  __attribute__((format(printf, 2, 3)));
/* Write t as `#` comment lines of at most 78 columns, breaking at spaces. */
void plc_import_text_comment(FILE *f, const plc_import_text *t);

/* `  name = value   # comment`, the comment aligned as in the stdlib. */
void plc_import_field(FILE *f, const char *name, const char *value, const char *comment);

/* What a model block's parameter formulas include.  The importer writes the
 * dimension fields (hidden, heads, kv_heads, head_dim, ffn or gelu_ffn,
 * vocab, tie_embeddings, dtype, the MoE and MLA fields, layers { });
 * plc_import_params writes the counts from them. */
typedef struct plc_import_shape {
  int gelu;        /* two-matrix GELU FFN of width gelu_ffn, else SwiGLU */
  int qkv_bias;    /* biases of Q, K and V */
  int o_bias;      /* bias of the attention output projection */
  int mlp_bias;    /* biases of the FFN (and expert) matrices */
  int layernorm;   /* LayerNorm (weight and bias), else RMSNorm */
  int qk_norm;     /* a norm of head_dim on Q and on K (Qwen3) */
  int pos_embed;   /* learned position embedding of `context` rows */
  int mla;         /* the importer wrote mla_linear_params, mla_norm_params */
  int moe;         /* experts, top_k, expert_ffn, shared_ffn exist */
  int shared;      /* shared_ffn > 0 */
  int shared_gate; /* a sigmoid gate (d -> 1) on the shared expert (Qwen) */
  int router_bias; /* a bias per expert in the router (DeepSeek-V3) */
  int mtp;         /* mtp_layers exists (DeepSeek-V3's MTP module) */
} plc_import_shape;

void plc_import_params(FILE *f, const plc_import_shape *s);

#endif
