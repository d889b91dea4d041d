#!/bin/sh
# gmp-pool.sh - GMP's small blocks from plc's per-thread free lists
# (runtime/base/xalloc.c) change nothing: for every example and golden plan
# the exact JSON is the same with PLC_GMP_NO_POOL=1 (GMP's blocks from
# malloc), and a search run on two threads (blocks freed by another thread
# than the one that allocated them) gives the same table as on one.
# (tests/unit/test_quantity checks the machine-integer arithmetic of
# plc_q_rat_* against GMP's own, operand by operand.)
. "$top_srcdir/tests/lib.sh"
files="$top_srcdir/examples/*.plan $top_srcdir/tests/golden/*.plan"
# Sampled (valgrind or sanitizers in CI, for memory errors), two plans will do.
! sampled || files="$top_srcdir/examples/m3-megatron.plan
  $top_srcdir/tests/golden/search-small.plan"
for f in $files; do
  [ -e "$f" ] || continue
  d=$(dirname "$f") b=$(basename "$f")
  (cd "$d" && plc --exact --format=json "$b") > "$outdir/pool-on.out" 2>&1
  (cd "$d" && PLC_GMP_NO_POOL=1 plc --exact --format=json "$b") > "$outdir/pool-off.out" 2>&1
  if same "$outdir/pool-off.out" "$outdir/pool-on.out"; then pass
  else fail "$b: the GMP block pool changes the output"; fi
done
s="$top_srcdir/tests/golden/search-small.plan"
(cd "$(dirname "$s")" && plc --jobs=1 "$(basename "$s")") > "$outdir/pool-j1.out" 2>&1
(cd "$(dirname "$s")" && plc --jobs=2 "$(basename "$s")") > "$outdir/pool-j2.out" 2>&1
if same "$outdir/pool-j1.out" "$outdir/pool-j2.out"; then pass
else fail "search-small.plan: two threads change the table"; fi
finish
