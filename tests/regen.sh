#!/bin/sh
# regen.sh - PLC_REGEN=1 of golden.sh and errors.sh, on cases of its own in
# a temporary tree: an output that moved is rewritten and its numbers are
# shown old -> new; a case whose exit status changed is never rewritten.
# Set by the makefile: PLC, top_srcdir.
: "${PLC:?PLC must name the plc binary}"
: "${top_srcdir:?top_srcdir must be set}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/plc-regen.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT INT TERM
mkdir -p "$tmp/tests/golden" "$tmp/tests/errors" "$tmp/run"
cp "$top_srcdir/tests/lib.sh" "$tmp/tests/"
failed=0
bad() { echo "FAIL: $1"; failed=1; }

# golden/moved: x is now 42 ms and 3 * 42 ms = 126 ms; the old file says 41, 123.
printf 'let x = 42 ms\nlet y = 3\n' > "$tmp/tests/golden/moved.plan"
echo '-e x*y' > "$tmp/tests/golden/moved.args"
printf '123 ms\n' > "$tmp/tests/golden/moved.out"
# golden/broken: now an error (exit 1); its old output must stay.
printf 'let x = 1 ms + 1 B\n' > "$tmp/tests/golden/broken.plan"
echo '-e x' > "$tmp/tests/golden/broken.args"
printf 'old output\n' > "$tmp/tests/golden/broken.out"
# errors/fixed: expected to fail (status 1) but now checks clean (exit 0).
printf 'let x = 1 ms\n' > "$tmp/tests/errors/fixed.plan"
printf 'old diagnostics\n' > "$tmp/tests/errors/fixed.err"

cd "$tmp/run" || exit 99
PLC_REGEN=1 top_srcdir=$tmp sh "$top_srcdir/tests/golden.sh" > golden.log 2>&1 &&
  bad "golden.sh passed with a case that exits 1"
PLC_REGEN=1 top_srcdir=$tmp sh "$top_srcdir/tests/errors.sh" > errors.log 2>&1 &&
  bad "errors.sh passed with a case whose exit status changed"
cat golden.log errors.log

[ "$(cat "$tmp/tests/golden/moved.out")" = "126 ms" ] || bad "moved.out not regenerated"
grep -q '^ *1: *123 -> 126$' golden.log || bad "no numeric diff 123 -> 126 for moved"
[ "$(cat "$tmp/tests/golden/broken.out")" = "old output" ] || bad "broken.out was rewritten"
grep -q 'not regenerated' golden.log || bad "golden.sh does not say broken was kept"
[ "$(cat "$tmp/tests/errors/fixed.err")" = "old diagnostics" ] || bad "fixed.err was rewritten"
grep -q 'not regenerated' errors.log || bad "errors.sh does not say fixed was kept"
exit $failed
