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

# Whether the heavy byte-identity suites run a sample of their plans: under
# a wrapper (valgrind) or a sanitizer build (.ci/run sets PLC_SAMPLE), where
# every plan would take too long and a sample finds the memory errors.
sampled() { [ -n "${PLC_WRAP:-}${PLC_SAMPLE:-}" ]; }

pass() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $1"; }

# Compare expected file $1 with actual file $2; show a diff on mismatch.
same() {
  if cmp -s "$1" "$2"; then return 0; fi
  diff -u "$1" "$2" | head -n 40
  return 1
}

# switch_same VAR REF WHAT DIR PLAN [PLC ARG]...: plc run in DIR on PLAN
# with environment variable VAR=1 (a slow path's switch) gives file REF
# again; else WHAT (the fast path's name) "changes the output".
switch_same() {
  var=$1 ref=$2 what=$3 dir=$4 plan=$5
  shift 5
  (cd "$dir" && export "$var=1" && plc "$@" "$plan") > "$outdir/switch-off.out" 2>&1
  if same "$outdir/switch-off.out" "$ref"; then pass
  else fail "$plan $*: $what changes the output"; fi
}

# Show what moved between expected file $1 and new output $2, line by line:
# for each changed line its number in $2 and, side by side, the old and new
# values of every number that differs ("step 35.2 -> 36.1" reads as
# "  12: 35.2 -> 36.1"); a line whose numbers all stay shows its new text, a
# line only in one file shows that text with - or +.  Lines of a changed
# block are paired in order.
numdiff() {
  diff "$1" "$2" | awk '
    function nums(s, a,   n) {
      n = 0
      while (match(s, /[-+]?[0-9]+([.][0-9]+)?([eE][-+]?[0-9]+)?/)) {
        a[++n] = substr(s, RSTART, RLENGTH); s = substr(s, RSTART + RLENGTH)
      }
      return n
    }
    function pair(o, w, line,   a, b, na, nb, i, out) {
      na = nums(o, a); nb = nums(w, b); out = ""
      for (i = 1; i <= na || i <= nb; i++)
        if (a[i] != b[i])
          out = out sprintf("  %s -> %s", i <= na ? a[i] : "(none)", i <= nb ? b[i] : "(none)")
      if (out == "") out = "  (numbers unchanged) " substr(w, 1, 60)
      printf "  %5d:%s\n", line, out
    }
    function flush(   i) {
      for (i = 1; i <= no || i <= nn; i++) {
        if (i <= no && i <= nn) pair(old[i], new[i], start + i - 1)
        else if (i <= no) printf "  %5s- %s\n", "", substr(old[i], 1, 70)
        else printf "  %5d+ %s\n", start + i - 1, substr(new[i], 1, 70)
      }
      no = nn = 0
    }
    /^[0-9]/ { flush(); s = $0; sub(/^[0-9,]*[acd]/, "", s); sub(/,.*/, "", s); start = s + 0 }
    /^< / { old[++no] = substr($0, 3) }
    /^> / { new[++nn] = substr($0, 3) }
    END { flush() }'
}

# PLC_REGEN=1: make expected file $1 the new output $2 of case $3 and show
# what moved.  Only called when the case exits as it should: a case whose
# exit status changed is a failure, never a new expectation.
regen() {
  cmp -s "$1" "$2" && return 0
  echo "regenerated $3 ($1):"
  numdiff "$1" "$2"
  cp "$2" "$1"
}

# The status check refused regeneration: say so with the failure.
regen_refused() {
  [ -n "${PLC_REGEN:-}" ] && echo "  not regenerated: the exit status changed"
  return 0
}

finish() {
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
}

# run NAME WANT-STATUS ARGS...: plc ARGS > NAME.out 2> NAME.err, status WANT.
# (Scripts with their own run or has define them after sourcing this.)
run() {
  name=$1 want=$2
  shift 2
  plc "$@" > "$name.out" 2> "$name.err"
  status=$?
  if [ "$status" -eq "$want" ]; then pass
  else fail "plc $*: exit status $status, expected $want"; cat "$name.err"; fi
}

# has NAME FILE PATTERN: FILE has a line matching the grep pattern.
has() {
  if grep -q -- "$3" "$2"; then pass; else fail "$1: no '$3' in $2"; head -5 "$2"; fi
}
