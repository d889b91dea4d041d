#!/bin/sh
# call-memo.sh - the evaluator's memo of calls (eval.c: a call of a
# top-level function replayed within a compilation, and across a search's
# candidates) changes nothing: the whole exact JSON output of searches (on
# one thread and on two) and of single plans is byte-identical with
# PLC_EVAL_NO_CALL_MEMO=1 (every call evaluated).  The searches are
# tests/search-xcache.sh's (they vary the model, cluster, tp, pp,
# micro_batch, recompute and options the stdlib's functions read); the
# plans every example, whose templates call megatron's, FSDP2's and
# DeepSpeed's functions.  tests/unit/test_eval.c compares the two on
# random plans (values, errors, limits, steps).
. "$top_srcdir/tests/lib.sh"
dir="$top_srcdir/tests/search"
searches="$dir/xcache.plan $dir/diff.plan $dir/defaults.plan
          $top_srcdir/tests/golden/search-small.plan $top_srcdir/bench/search-70b.plan
          $top_srcdir/examples/llama3-8b-search.plan"
plans=$(ls "$top_srcdir"/examples/*.plan | grep -v search)
# Sampled (valgrind or sanitizers in CI): one search and one plan.
! sampled || { searches="$dir/xcache.plan"; plans="$top_srcdir/examples/m3-megatron.plan"; }
for f in $searches; do
  b=$(basename "$f")
  for j in 1 2; do
    plc --exact --format=json --jobs=$j "$f" > "$outdir/cm-on.json" 2>&1
    PLC_EVAL_NO_CALL_MEMO=1 plc --exact --format=json --jobs=$j "$f" > "$outdir/cm-off.json" 2>&1
    if same "$outdir/cm-off.json" "$outdir/cm-on.json"; then pass
    else fail "$b --jobs=$j: the call memo changes the output"; fi
  done
done
for f in $plans; do
  b=$(basename "$f")
  (cd "$(dirname "$f")" && plc --exact --format=json "$b") > "$outdir/cm-on.json" 2>&1
  (cd "$(dirname "$f")" && PLC_EVAL_NO_CALL_MEMO=1 plc --exact --format=json "$b") \
    > "$outdir/cm-off.json" 2>&1
  if same "$outdir/cm-off.json" "$outdir/cm-on.json"; then pass
  else fail "$b: the call memo changes the output"; fi
done
finish
