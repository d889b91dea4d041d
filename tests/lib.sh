# lib.sh - shared by the data-driven test scripts (sourced, not run).
# Each case is NAME.plan with optional NAME.args (extra arguments, one line).
# Set by the makefile: PLC (the binary), top_srcdir.
: "${PLC:?PLC must name the plc binary}"
: "${top_srcdir:?top_srcdir must be set}"
passed=0
failed=0
outdir=$(pwd)/test-output
mkdir -p "$outdir"

# Run plc, under $PLC_WRAP when set (e.g. valgrind; see .ci/run).
plc() {
  # shellcheck disable=SC2086
  ${PLC_WRAP:-} "$PLC" "$@"
}

pass() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $1"; }

# Compare expected file $1 with actual file $2; show a diff on mismatch.
same() {
  if cmp -s "$1" "$2"; then return 0; fi
  diff -u "$1" "$2" | head -n 40
  return 1
}

finish() {
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
}
