/* import_model.c - the parameter formulas of an imported model block.
 *
 * The importers write the dimensions; these lines turn them into `params`
 * (and `active_params`), as the stdlib's hand-written models do, so that
 * `plc -e NAME.params` gives the exact count in elements.  One writer for
 * every architecture: what differs (biases, LayerNorm or RMSNorm, GELU or
 * SwiGLU, MLA, experts) is a flag of plc_import_shape. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "import.h"

/* Attention: Q, K, V and O (or MLA's projections), their biases, Q/K norms. */
static void plc_import_attn(FILE *f, const plc_import_shape *s)
{
  if (s->mla) {
    fputs("  attn_params = mla_linear_params + mla_norm_params\n", f);
    return;
  }
  fputs("  attn_params = hidden * (heads + 2 * kv_heads) * head_dim + heads * head_dim * hidden", f);
  if (s->qkv_bias)
    fputs(" +\n                (heads + 2 * kv_heads) * head_dim", f);
  if (s->o_bias)
    fputs(" + hidden", f);
  if (s->qk_norm)
    fprintf(f, " + %s * head_dim", s->layernorm ? "4" : "2");
  fputc('\n', f);
}

/* A dense FFN; experts are SwiGLU, with biases when the FFN has them. */
static void plc_import_ffn(FILE *f, const plc_import_shape *s)
{
  if (s->gelu)
    fprintf(f, "  ffn_params = 2 * hidden * gelu_ffn%s\n", s->mlp_bias ? " + gelu_ffn + hidden" : "");
  else
    fprintf(f, "  ffn_params = 3 * hidden * ffn%s\n", s->mlp_bias ? " + 2 * ffn + hidden" : "");
  fprintf(f, "  norm_params = %s * hidden\n", s->layernorm ? "4" : "2");
  fputs("  dense_layer_params = attn_params + ffn_params + norm_params\n", f);
  if (!s->moe)
    return;
  fprintf(f, "  expert_params = 3 * hidden * expert_ffn%s\n",
          s->mlp_bias ? " + 2 * expert_ffn + hidden" : "");
  fprintf(f, "  router_params = experts * hidden%s\n", s->router_bias ? " + experts" : "");
  if (s->shared)
    fprintf(f, "  shared_params = 3 * hidden * shared_ffn%s%s\n",
            s->mlp_bias ? " + 2 * shared_ffn + hidden" : "", s->shared_gate ? " + hidden" : "");
  fprintf(f, "  moe_layer_params = attn_params + experts * expert_params + router_params +%s\n"
          "                     norm_params\n", s->shared ? " shared_params +" : "");
}

void plc_import_params(FILE *f, const plc_import_shape *s)
{
  fputs("\n  # ---- parameter counts (elements) "
        "-----------------------------------------\n", f);
  plc_import_attn(f, s);
  plc_import_ffn(f, s);
  fprintf(f, "  embed_params = vocab * hidden%s\n", s->pos_embed ? " + context * hidden" : "");
  fputs("  head_params = tie_embeddings ? 0 : vocab * hidden\n", f);
  fprintf(f, "  params = layers.dense * dense_layer_params +%s\n"
          "           embed_params + head_params + %s   # the final norm\n",
          s->moe ? " layers.moe * moe_layer_params +" : "", s->layernorm ? "2 * hidden" : "hidden");
  if (s->moe) {
    fputs("  # One token: everything but the routed experts it is not sent to.\n"
          "  active_params = params - layers.moe * (experts - top_k) * expert_params\n", f);
  } else {
    fputs("  active_params = params      # dense: every parameter for every token\n", f);
  }
  if (s->mtp)
    fputs("  # The MTP module as stored on the hub: one MoE block, enorm and hnorm,\n"
          "  # eh_proj (2d -> d), shared_head.norm, and its own copies of the\n"
          "  # embedding and output matrices.\n"
          "  mtp_params = mtp_layers * (moe_layer_params + 2 * hidden * hidden + 3 * hidden +\n"
          "                             embed_params + head_params)\n"
          "  params_with_mtp = params + mtp_params\n", f);
}
