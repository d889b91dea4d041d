#!/bin/sh
# lower-memo.sh - the instance memo of lowering (compiler/lower/lower.c),
# and the stage copy it allows (a stage of the same layers as the one
# before, whose instances read neither index nor stage), change nothing:
# for every example and article example and the golden
# plans of memory and schedules, the whole JSON report (every figure, the
# memory table included) is the same with PLC_LOWER_NO_MEMO=1, which
# lowers every instance; for the examples, the lowered ops (--emit=ir) too,
# and for two with chunks (interleaved, DualPipe) the whole step.  The
# trains of one plan share the cross-instance cache (cli/main.c): the same
# outputs again with PLC_LOWER_NO_XCACHE=1, the plain report included (its
# sensitivity rows change replayed op times in place, which must not leak
# into the next train's replays), and the cache does replay across the
# trains of llama3-405b-h100.plan and of results-read.plan (whose runs read
# each other's results, the sensitivity rows of a run read first computed
# when it is printed).
# (Checked by hand for every golden and validation plan when the memo was
# written; too slow for every run under valgrind.)
. "$top_srcdir/tests/lib.sh"
files="$top_srcdir/examples/*.plan $top_srcdir/examples/article/*.plan
       $top_srcdir/tests/golden/mem-*.plan $top_srcdir/tests/golden/memory-small.plan
       $top_srcdir/tests/golden/schedule-custom.plan $top_srcdir/tests/golden/results-read.plan"
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
    switch_same PLC_LOWER_NO_MEMO "$outdir/memo-on.out" "the memo" "$d" "$b" "$mode"
    switch_same PLC_LOWER_NO_XCACHE "$outdir/memo-on.out" "the trains' shared cache" "$d" "$b" \
      "$mode"
  done
  (cd "$d" && plc "$b") > "$outdir/memo-on.out" 2>&1
  switch_same PLC_LOWER_NO_XCACHE "$outdir/memo-on.out" "the trains' shared cache" "$d" "$b"
done
g=$top_srcdir/tests/golden
for f in "$top_srcdir/examples/llama3-405b-h100.plan" "$g/results-read.plan"; do
  d=$(dirname "$f") b=$(basename "$f")
  args=""
  [ -f "$d/${b%.plan}.args" ] && args=$(cat "$d/${b%.plan}.args")
  # shellcheck disable=SC2086
  (cd "$d" && plc $args "$b") > "$outdir/xc-on.out" 2>&1
  # shellcheck disable=SC2086
  (cd "$d" && PLC_LOWER_NO_XCACHE=1 plc $args "$b") > "$outdir/xc-off.out" 2>&1
  if same "$outdir/xc-off.out" "$outdir/xc-on.out"; then pass
  else fail "$b $args: the trains' shared cache changes the output"; fi
  # shellcheck disable=SC2086
  (cd "$d" && PLC_LOWER_XCACHE_STATS=1 plc $args "$b") 2>&1 > /dev/null |
    sed -n "s/^plc: trains' lowering cache: [0-9]* entries, \([0-9]*\) hits.*/\1/p" > "$outdir/xc-hits"
  if [ "$(cat "$outdir/xc-hits")" -gt 0 ] 2>/dev/null; then pass
  else fail "$b: the trains did not share the cache ($(cat "$outdir/xc-hits") hits)"; fi
done
finish
