#!/bin/sh
# import.sh - `plc import hf` and `plc import megatron` (plc(1), IMPORTS).
#  - The exact output for each input of tests/import/ equals NAME.expected,
#    and its warnings NAME.err (PLC_REGEN=1 rewrites both);
#  - every output passes `plc --check`;
#  - params.plan checks the imported models' parameter counts against the
#    published totals and the stdlib's hand-written models, trains.plan and
#    megatron-use.plan evaluate trains with them under the stdlib frameworks
#    (a failed assertion there exits 1);
#  - bad input: the message on stderr equals err-*.err, with exit status 1
#    (2 for usage and I/O), and -o leaves no file;
#  - every file of tests/import/ is distributed (named in Makefile.am).
. "$top_srcdir/tests/lib.sh"
out=$outdir/import
rm -rf "$out"
mkdir -p "$out"
cd "$top_srcdir/tests/import" || exit 99

# same_or_regen WANT GOT: compare, or with PLC_REGEN rewrite WANT.
same_or_regen() {
  if [ -n "${PLC_REGEN:-}" ]; then
    if [ -s "$2" ]; then cp "$2" "$1"; else rm -f "$1"; fi
    return 0
  fi
  if [ -f "$1" ]; then same "$1" "$2"; else [ ! -s "$2" ] || { cat "$2"; return 1; }; fi
}

# case NAME WANT ARGS...: plc ARGS > $out/NAME.plan, exit status WANT; stdout
# equals NAME.expected and stderr NAME.err (each empty when the file is absent).
case_() {
  name=$1 want=$2
  shift 2
  plc "$@" > "$out/$name.plan" 2> "$out/$name.stderr"
  status=$?
  if [ "$status" -ne "$want" ]; then
    fail "plc $*: exit status $status, expected $want"
    cat "$out/$name.stderr"
    return
  fi
  if same_or_regen "$name.expected" "$out/$name.plan"; then pass
  else fail "plc $*: output differs from tests/import/$name.expected"; fi
  if same_or_regen "$name.err" "$out/$name.stderr"; then pass
  else fail "plc $*: stderr differs from tests/import/$name.err"; fi
}

# Runs plc on a plan with the outputs importable; exit 0 wanted.
evaluate() {
  if plc -I "$out" "$@" > "$out/eval.out" 2>&1; then pass
  else fail "plc -I OUT $*"; cat "$out/eval.out"; fi
}

# ---- Hugging Face configs ---------------------------------------------------
for f in *.json; do
  case $f in err-*) continue ;; esac
  name=${f%.json}
  case_ "$name" 0 import hf "$f"
  evaluate --check "$out/$name.plan"
done
evaluate params.plan
evaluate trains.plan
# --name, and -o writes the same text.
case_ named 0 import hf --name Llama3_8B_hf llama3-8b.json
plc import hf -o "$out/o.plan" llama3-8b.json && cmp -s "$out/o.plan" "$out/llama3-8b.plan" &&
  pass || fail "import hf -o writes what standard output gets"

# A file name with a quote, a backslash and a newline: the comments and the
# source string stay valid plan text.
odd="$out/we\"ird\\
name.json"
cp llama3-8b.json "$odd" && plc import hf "$odd" > "$out/odd.plan" 2>&1 &&
  grep -q '^  source = ".*/we\\"ird\\\\\\nname.json"' "$out/odd.plan" &&
  plc --check "$out/odd.plan" > /dev/null 2>&1 &&
  pass || fail "import hf of a file whose name has a quote, a backslash and a newline"

# ---- Megatron-LM / MindSpeed command lines ---------------------------------
case_ llama3-70b-megatron 0 import megatron llama3-70b-megatron.sh
case_ mixtral-mindspeed 0 import megatron --world-size 64 @mixtral-mindspeed.args
case_ megatron-args 0 import megatron --name cli_run -- --tensor-model-parallel-size 4 \
  --micro-batch-size 2 --seq-length 2048 --global-batch-size 64 --bf16 --lr 1e-4 \
  --made-up-flag 3 --overlap-grad-reduce
# FP8 and Megatron-FSDP map to the fp8 and fsdp options; a sharding
# strategy other than ZeRO-3's is warned about.
case_ megatron-fp8-fsdp 0 import megatron --name f8 -- --tensor-model-parallel-size 4 \
  --micro-batch-size 2 --seq-length 2048 --global-batch-size 64 --bf16 --fp8-format hybrid \
  --use-megatron-fsdp --data-parallel-sharding-strategy optim
case_ err-fp8-format 1 import megatron -- --micro-batch-size 2 --seq-length 2048 \
  --fp8-format e5m2
for name in llama3-70b-megatron mixtral-mindspeed megatron-args megatron-fp8-fsdp; do
  evaluate --check "$out/$name.plan"
done
evaluate megatron-use.plan

# ---- errors ------------------------------------------------------------------
case_ err-syntax 1 import hf err-syntax.json
case_ err-unknown 1 import hf err-unknown.json
case_ err-missing 1 import hf err-missing.json
case_ err-type 1 import hf err-type.json
case_ err-duplicate 1 import hf err-duplicate.json
case_ err-unreadable 2 import hf no-such-config.json
case_ err-quote 1 import megatron err-quote.sh
case_ err-layout 1 import megatron err-layout.sh
case_ err-flags 1 import megatron -- --bf16=true --micro-batch-size two --seq-length
# Products of flag values that would overflow 64 bits are errors.
case_ err-big 1 import megatron -- --num-layers 8 --hidden-size 1024 --num-attention-heads 8 \
  --micro-batch-size 1000000000000 --seq-length 8 --world-size-is-not-a-flag \
  --tensor-model-parallel-size 1000000000000 --vocab-size 1000 \
  --make-vocab-size-divisible-by 1000000000000
case_ err-big-world 1 import megatron -- --micro-batch-size 1 --seq-length 8 \
  --nnodes 1000000000000 --nproc-per-node 1000000000000
case_ err-big-batch 1 import megatron --world-size 1000000000000 -- --micro-batch-size 1000000000000 \
  --seq-length 8
case_ err-usage 2 import megatron
case_ err-kind 2 import gguf model.gguf
plc import hf -o "$out/none.plan" err-missing.json 2> /dev/null
[ ! -e "$out/none.plan" ] && pass || fail "import hf -o left a file after an error"

# ---- every data file is distributed ------------------------------------------
for f in *; do
  if grep -q "tests/import/$f\( \\\\\)\{0,1\}\$" "$top_srcdir/Makefile.am"; then pass
  else fail "tests/import/$f is not listed in Makefile.am (EXTRA_DIST)"; fi
done
finish
