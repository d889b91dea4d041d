#!/bin/sh
# search-xcache.sh - the cross-candidate cache of lowering (lower.c, a
# search worker's lowered template instances reused by later candidates)
# changes nothing: a search's whole JSON output (every ranked figure,
# exact, and the skip counts) is byte-identical with PLC_LOWER_NO_XCACHE=1,
# on one thread and on two.  tests/search/xcache.plan varies every input
# the cache keys by (model, cluster, tp, pp, micro_batch, recompute, an
# option); the test checks that the cache did replay instances there
# (PLC_LOWER_XCACHE_STATS), and that some of its layouts evaluated alone
# (plc -D) give exactly their ranked row's figures.
. "$top_srcdir/tests/lib.sh"
dir="$top_srcdir/tests/search"
# bench/search-70b.plan: interleaved and 1f1b, every recompute mode, up to 8
# stages, whose step instances read their stage, and dp from 8 to 512 (a
# replayed collective is timed again on its group: lower.c keys it only on
# whether the group has more than one rank), and whose backward instances
# wait for ops of the one before (`prev.`: lower.c reads where those are,
# back from that instance's end); xcache.plan's first and last layers read
# their stage and its other layers read it only in a branch not taken
# (lower.c counts such reads by type); examples/llama3-8b-search.plan, a
# search with requirements (no ranking cut).
files="$dir/xcache.plan $dir/xcache-count.plan $dir/diff.plan $dir/defaults.plan
       $top_srcdir/tests/golden/search-small.plan $top_srcdir/bench/search-70b.plan
       $top_srcdir/examples/llama3-8b-search.plan"
# Sampled (valgrind or sanitizers in CI), the cache's own plan will do.
! sampled || files="$dir/xcache.plan"
for f in $files; do
  b=$(basename "$f")
  for j in 1 2; do
    plc --exact --format=json --jobs=$j "$f" > "$outdir/xc-on.json" 2>&1
    PLC_LOWER_NO_XCACHE=1 plc --exact --format=json --jobs=$j "$f" > "$outdir/xc-off.json" 2>&1
    if same "$outdir/xc-off.json" "$outdir/xc-on.json"; then pass
    else fail "$b --jobs=$j: the cross-candidate cache changes the output"; fi
  done
done

# The estimate's counts kept by the cache follow the loop bound that
# decides them (xcache-count.plan's header): 4 pass, 2 are too large.
plc "$dir/xcache-count.plan" > "$outdir/xc-count.txt" 2>&1
grep -q ' 4 pass, 4 skipped' "$outdir/xc-count.txt" &&
  grep -q '^ *2  the plan would lower to N ops or more' "$outdir/xc-count.txt" && pass \
  || fail "xcache-count.plan: counts"

# The cache is used: most instances of xcache.plan's 288 candidates are
# replays.
PLC_LOWER_XCACHE_STATS=1 plc --jobs=1 "$dir/xcache.plan" > /dev/null 2> "$outdir/xc-stats"
hits=$(sed -n 's/^plc: lowering cache: [0-9]* entries, \([0-9]*\) hits.*/\1/p' "$outdir/xc-stats")
if [ "${hits:-0}" -gt 100 ]; then pass
else fail "xcache.plan: the cache replayed ${hits:-no} instances (expected more than 100)"; fi

# A candidate that does not fit in memory is skipped before its ops are
# lowered (lower.c, "memory first"): every candidate diff.plan skips as
# not fitting (the count is read from its output) stopped there, with the
# cache and without it.
plc --jobs=1 "$dir/diff.plan" > "$outdir/mf.txt" 2>&1
want=$(sed -n 's/^ *\([0-9]*\)  does not fit in memory$/\1/p' "$outdir/mf.txt")
for x in 0 1; do
  PLC_LOWER_NO_XCACHE=$x PLC_LOWER_XCACHE_STATS=1 plc --jobs=1 "$dir/diff.plan" \
    > /dev/null 2> "$outdir/mf-stats"
  got=$(sed -n 's/^plc: lowering cache: .*; \([0-9]*\) runs did not fit before their ops$/\1/p' \
        "$outdir/mf-stats")
  if [ "${want:-0}" -gt 0 ] && [ "$got" = "$want" ]; then pass
  else fail "diff.plan (PLC_LOWER_NO_XCACHE=$x): ${got:-no} runs stopped before their ops, ${want:-no} did not fit"; fi
done

# Layouts of the space alone, against their rows (CSV columns: rank, the
# 7 varied values, step, mfu, tokens/s, peak, bubble).  Each is a later
# candidate than others with the same tp, micro_batch and recompute, so
# its layer instances were replays.
plc --exact --format=csv "$dir/xcache.plan" > "$outdir/xc.csv" 2>&1
for key in small,fast,2,2,2,full,false wide,slow,4,1,1,none,true wide,laggy,1,2,2,full,true small,laggy,2,1,1,none,true \
           small,slow,4,2,1,none,false wide,slow,2,2,2,full,false; do
  IFS=, read -r m c tp pp mb rc ov <<KEY
$key
KEY
  row=$(grep "^[0-9]*,$key," "$outdir/xc.csv" | cut -d, -f9-13),
  alone=$(plc --exact -Werror -D t.dp='16 / (tp * pp)' -D t.model=$m -D t.cluster=$c \
            -D t.tp=$tp -D t.pp=$pp -D t.micro_batch=$mb -D t.recompute="\"$rc\"" \
            -D t.overlap=$ov -e 't.step_time / 1 s' -e 't.mfu' -e 't.tokens_per_s * 1 s' \
            -e 't.peak_memory / 1 B' -e 't.bubble / 1 s' "$dir/xcache.plan" 2> /dev/null |
          tr '\n' ,)
  if [ "$row" = "$alone" ] && [ "$row" != , ]; then pass
  else fail "xcache.plan $key: search $row alone $alone"; fi
done
finish
