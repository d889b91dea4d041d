#!/bin/sh
# errors.sh - bad plans in, pinned diagnostics and exit status out.
# tests/errors/NAME.plan runs as `plc ARGS NAME.plan` (ARGS from NAME.args,
# default --check) in tests/errors; stderr must equal NAME.err and the exit
# status must equal NAME.status (default 1).  PLC_REGEN=1 rewrites the .err
# files that differ, each with the numbers that moved, but never one of a
# case whose exit status changed (that case fails).
. "$top_srcdir/tests/lib.sh"
cd "$top_srcdir/tests/errors" || exit 99
for plan in *.plan; do
  [ -e "$plan" ] || continue
  name=${plan%.plan}
  args=--check
  [ -f "$name.args" ] && args=$(cat "$name.args")
  want=1
  [ -f "$name.status" ] && want=$(cat "$name.status")
  # shellcheck disable=SC2086
  plc $args "$plan" > "$outdir/$name.stdout" 2> "$outdir/$name.err"
  status=$?
  if [ "$status" -ne "$want" ]; then
    fail "$name: exit status $status, expected $want"; regen_refused; cat "$outdir/$name.err"
    continue
  fi
  if [ -n "${PLC_REGEN:-}" ]; then regen "$name.err" "$outdir/$name.err" "$name"; fi
  if same "$name.err" "$outdir/$name.err"; then pass
  else fail "$name: diagnostics differ"; fi
done
finish
