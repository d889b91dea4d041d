#!/bin/sh
# lower-memo.sh - the instance memo of lowering (compiler/lower/lower.c),
# and the stage copy it allows (a stage of the same layers as the one
# before, whose instances read neither index nor stage), change nothing:
# for every example and article example and the golden
# plans of memory and schedules, the whole JSON report (every figure, the
# memory table included) is the same with PLC_LOWER_NO_MEMO=1, which
# lowers every instance; for the examples, the lowered ops (--emit=ir) too,
# and for two with chunks (interleaved, DualPipe) the whole step.
# (Checked by hand for every golden and validation plan when the memo was
# written; too slow for every run under valgrind.)
. "$top_srcdir/tests/lib.sh"
files="$top_srcdir/examples/*.plan $top_srcdir/examples/article/*.plan
       $top_srcdir/tests/golden/mem-*.plan $top_srcdir/tests/golden/memory-small.plan
       $top_srcdir/tests/golden/schedule-custom.plan"
# Sampled (valgrind or sanitizers in CI, for memory errors), three plans will do.
! sampled || files="$top_srcdir/examples/hello.plan
  $top_srcdir/examples/m3-megatron.plan $top_srcdir/tests/golden/memory-small.plan"
for f in $files; do
  [ -e "$f" ] || continue
  d=$(dirname "$f") b=$(basename "$f")
  modes=--format=json
  case $f in
    */examples/m3-h100.plan|*/examples/dualpipe-moe.plan)
      modes="--emit=ir --format=json --emit=step" ;;
    */examples/*) modes="--emit=ir --format=json" ;;
  esac
  for mode in $modes; do
    (cd "$d" && plc "$mode" "$b") > "$outdir/memo-on.out" 2>&1
    (cd "$d" && PLC_LOWER_NO_MEMO=1 plc "$mode" "$b") > "$outdir/memo-off.out" 2>&1
    if same "$outdir/memo-off.out" "$outdir/memo-on.out"; then pass
    else fail "$b $mode: the memo changes the output"; fi
  done
done
finish
