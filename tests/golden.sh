#!/bin/sh
# golden.sh - plan in, expected output out, compared exactly.
# tests/golden/NAME.plan runs as `plc ARGS NAME.plan` (ARGS from NAME.args,
# default --emit=ast) in tests/golden; stdout must equal NAME.out and the exit
# status must be 0.  Set PLC_REGEN=1 to rewrite the .out files that differ,
# each with the numbers that moved; a case that exits non-zero is not
# rewritten (it fails).
. "$top_srcdir/tests/lib.sh"
cd "$top_srcdir/tests/golden" || exit 99
for plan in *.plan; do
  [ -e "$plan" ] || continue
  name=${plan%.plan}
  args=--emit=ast
  [ -f "$name.args" ] && args=$(cat "$name.args")
  # shellcheck disable=SC2086
  plc $args "$plan" > "$outdir/$name.out" 2> "$outdir/$name.stderr"
  status=$?
  if [ "$status" -ne 0 ]; then
    fail "$name: exit status $status"; regen_refused; cat "$outdir/$name.stderr"
    continue
  fi
  if [ -n "${PLC_REGEN:-}" ]; then regen "$name.out" "$outdir/$name.out" "$name"; fi
  if same "$name.out" "$outdir/$name.out"; then pass
  else fail "$name: output differs"; fi
done
finish
