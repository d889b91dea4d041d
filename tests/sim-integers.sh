#!/bin/sh
# sim-integers.sh - the interpreter's integer path (runtime/engine/sim.c:
# an op list run on machine integers over the common denominator of its
# times, when every figure fits) changes nothing: for every example,
# article example and golden plan, the whole report (exposure rows and
# their reasons, sensitivity, memory) and the exact JSON are the same with
# PLC_SIM_NO_FAST=1, which runs every list on rationals; for two examples
# the timeline and the whole step too.  (tests/unit/test_sim compares the
# two paths op by op on random lists.)  And the exact JSON is the same
# with PLC_SIM_NO_EPISODES=1, which runs a list whose transfers meet on a
# link by the flow over the whole list from their first meeting, not
# episode by episode (sim.c), and with PLC_SIM_NO_STEADY=1, which reads
# every op's duration and walks every op rather than copying a repeated
# layer's from the layer before and adding the settled shift.
. "$top_srcdir/tests/lib.sh"
files="$top_srcdir/examples/*.plan $top_srcdir/examples/article/*.plan
       $top_srcdir/tests/golden/*.plan"
# Sampled (valgrind or sanitizers in CI, for memory errors), three plans will do.
! sampled || files="$top_srcdir/examples/hello.plan
  $top_srcdir/examples/m3-megatron.plan $top_srcdir/tests/golden/search-small.plan"
for f in $files; do
  [ -e "$f" ] || continue
  d=$(dirname "$f") b=$(basename "$f")
  modes="--format=text --exact"
  case $f in
    */examples/m3-h100.plan|*/examples/dualpipe-moe.plan)
      modes="--format=text --exact --timeline --emit=step" ;;
  esac
  for mode in $modes; do
    [ "$mode" = --exact ] && set -- --exact --format=json || set -- "$mode"
    (cd "$d" && plc "$@" "$b") > "$outdir/int-on.out" 2>&1
    on=$outdir/int-on.out
    switch_same PLC_SIM_NO_FAST "$on" "the integer interpreter" "$d" "$b" "$@"
    [ "$mode" = --exact ] || continue
    switch_same PLC_SIM_NO_EPISODES "$on" "running shared links by episodes" "$d" "$b" "$@"
    switch_same PLC_SIM_NO_STEADY "$on" "repeated layers' steady state" "$d" "$b" "$@"
  done
done
finish
