#!/bin/sh
# memory.sh - layouts that do not fit in device memory are flagged (plc(1):
# a warning located at the train, an error under -Werror), sensible layouts
# of the same models are not; and the device's memory_reserve counts.
# The infeasible layouts are those of issue 11 ("Memory"), which plc used to
# rank without a word.
. "$top_srcdir/tests/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 99

# Qwen2.5-72B (config.json of Qwen/Qwen2.5-72B: hidden_size 8192,
# num_hidden_layers 80, intermediate_size 29568, num_attention_heads 64,
# num_key_value_heads 8, vocab_size 152064, untied embeddings; the QKV
# biases, 0.01% of the parameters, are left out) and Llama 3 8B, through the
# stdlib megatron framework (distributed optimizer: 6 + 12/dp B/param).
cat > models.plan <<'EOF2'
import "hw/nvidia"
import "models/llama3"
import "frameworks/megatron"
model qwen72b {
  hidden = 8192; heads = 64; kv_heads = 8; head_dim = 128
  ffn = 29568; vocab = 152064; dtype = 2 B
  layers { dense = 80; moe = 0 }
}
EOF2

# case NAME TRAIN-BODY: NAME.plan with one train.
case_plan() {
  { echo 'import "models.plan"'; echo "train $1 {"; cat; echo "}"; } > "$1.plan"
}

# Qwen2.5-72B at tp 2, pp 2 on 80 GB H100s: a stage holds about 72.7e9 / 4
# = 18.2e9 parameters, 18.2e9 x (2 + 4 + 12/8) B = 136 GB of static state
# before any activation.
case_plan qwen_tp2pp2 <<'EOF2'
  model = qwen72b; cluster = dgx_h100(nodes = 4); framework = megatron
  tp = 2; pp = 2; dp = 8
  micro_batch = 1; global_batch = 64; seq = 4096
  recompute = selective; sequence_parallel = true
EOF2
# The same model at tp 8, pp 4: 72.7e9 / 32 x 18 B = 41 GB static (dp = 1),
# activations of 4 microbatches of 20 layers on stage 0: fits (54.5 GB).
case_plan qwen_tp8pp4 <<'EOF2'
  model = qwen72b; cluster = dgx_h100(nodes = 4); framework = megatron
  tp = 8; pp = 4; dp = 1
  micro_batch = 1; global_batch = 16; seq = 4096
  recompute = selective; sequence_parallel = true
EOF2
# Llama 3 8B, micro batch 8 without recompute: 8 x 8192 tokens x
# (10 x 4096 + 4 x 4096 + 4 x 1024 + 6 x 14336) B = 9.66 GB of activations
# per layer (megatron.plan, "Memory"), 309 GB for its 32 layers.
case_plan llama8b_mb8 <<'EOF2'
  model = Llama3_8B; cluster = dgx_h100(nodes = 1); framework = megatron
  dp = 8
  micro_batch = 8; global_batch = 512; seq = 8192
  recompute = none
EOF2
# Micro batch 1 with full recompute: 8.03e9 x 7.5 B = 60.2 GB static, 2 s b h
# per layer: fits (68 GB).
case_plan llama8b_mb1 <<'EOF2'
  model = Llama3_8B; cluster = dgx_h100(nodes = 1); framework = megatron
  dp = 8
  micro_batch = 1; global_batch = 64; seq = 8192
  recompute = full
EOF2

hasnot() {
  if grep -q -- "$3" "$2"; then fail "$1: '$3' in $2"; head -5 "$2"; else pass; fi
}

for t in qwen_tp2pp2 llama8b_mb8; do
  run "$t" 0 "$t.plan"
  has "$t" "$t.err" "^$t.plan:2:7: warning: train '$t' does not fit in memory: stage 0 needs "
  has "$t" "$t.out" 'DOES NOT FIT'
  run "$t-werror" 1 -Werror "$t.plan"
  has "$t-werror" "$t-werror.err" "^$t.plan:2:7: error: train '$t' does not fit in memory"
  run "$t-e" 0 -w -e "$t.memory_headroom < 0 B" "$t.plan"
  has "$t-e" "$t-e.out" '^true$'
done
for t in qwen_tp8pp4 llama8b_mb1; do
  run "$t" 0 -Werror "$t.plan"
  hasnot "$t" "$t.err" 'memory'
  has "$t" "$t.out" 'every stage fits'
done

# The reserve: Llama 3 8B at micro batch 1 peaks at 67.95 GB (headroom
# 12.05 GB); a 13 GB reserve makes it not fit, on the device or in the train.
run reserve-dev 1 -Werror -D H100_SXM.memory_reserve=13GB llama8b_mb1.plan
has reserve-dev reserve-dev.err 'does not fit in memory'
run reserve-train 1 -Werror -D llama8b_mb1.memory_reserve=13GB llama8b_mb1.plan
has reserve-train reserve-train.err 'does not fit in memory'
run reserve-ok 0 -Werror -D llama8b_mb1.memory_reserve=12GB llama8b_mb1.plan
finish
