#!/bin/sh
# golden.sh - plan in, expected output out, compared exactly.
# tests/golden/NAME.plan runs as `plc ARGS NAME.plan` (ARGS from NAME.args,
# default --emit=ast) in tests/golden; stdout must equal NAME.out and the exit
# status must be 0.  Set PLC_REGEN=1 to rewrite the .out files.
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
  if [ -n "${PLC_REGEN:-}" ]; then cp "$outdir/$name.out" "$name.out"; fi
  if [ "$status" -ne 0 ]; then
    fail "$name: exit status $status"; cat "$outdir/$name.stderr"
  elif same "$name.out" "$outdir/$name.out"; then pass
  else fail "$name: output differs"; fi
done
finish
