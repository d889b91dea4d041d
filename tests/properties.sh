#!/bin/sh
# properties.sh - properties every report must have (issue 10 item 8),
# checked exactly over every example and golden plan that has reports:
#  - hiding a collective never makes the step slower: every row of "what
#    would hide the exposed communication" gives a step if hidden at most
#    the step (a free p2p send once lengthened the DP tail past it);
#  - eta, busy and MFU lie in [0, 1];
#  - a collective's exposed time is at most its time;
#  - the DP tail, simulated or declared, is at most the gradient sync it
#    comes from (a pinned one is the plan's own figure);
#  - the compute of the step, and its bubble, are at most the step;
#  - the whole step simulated op by op (--whole-step) is its critical
#    stage's fill, compute, waits, exposed communication and drain, exactly.
# The comparisons are rationals of the JSON's exact strings, evaluated by
# plc itself (-e), so nothing is rounded.
. "$top_srcdir/tests/lib.sh"
command -v jq > /dev/null || { echo "jq not installed"; exit 77; }

empty=$outdir/properties-empty.plan
echo 'let unused = 0' > "$empty"

# One line per property of each run: "LABEL<TAB>EXPR", EXPR a plc boolean.
props='
def q: .exact | "(" + . + ")";
.runs[] | .name as $n | .step.time as $step |
  ( (.sensitivity // [])[] |
      select(.step_if_hidden != null) |
      "\($n): hiding \(.dim) \(.primitive) \(.phase)\t\(.step_if_hidden | q) <= \($step | q)" ),
  ( .efficiency | to_entries[] | select(.key != "tokens_per_s" and .value != null) |
      "\($n): \(.key) in [0, 1]\t\(.value | q) >= 0 && \(.value | q) <= 1" ),
  ( (.communication // [])[] |
      "\($n): \(.dim) \(.primitive) \(.phase) exposed <= time\t\(.exposed | q) <= \(.total | q)" ),
  ( .step.dp_tail | select(. != null and .sync != null and .kind != "pinned") |
      "\($n): dp tail <= its sync\t\(.time | q) <= \(.sync | q)" ),
  ( .whole_step | select(. != null and .simulated) |
      "\($n): whole step: fill + compute + waits + exposed + drain = its time\t" +
      "\(.fill | q) + \(.compute | q) + \(.other_stream | q) + \(.wait_stage | q) + " +
      "\(.drain | q) + \([.exposed[] | q] | join(" + ") | if . == "" then "0" else . end)" +
      " == \(.time | q)" ),
  "\($n): compute <= step\t\(.step.compute.time | q) <= \($step | q)",
  "\($n): bubble <= step\t\(.step.bubble.time | q) <= \($step | q)"
'

files="$top_srcdir/examples/*.plan $top_srcdir/tests/golden/*.plan"
least=20
# Sampled (valgrind or sanitizers in CI, for memory errors), three plans will do.
! sampled || files="$top_srcdir/examples/my-70b.plan $top_srcdir/examples/m3-megatron.plan
  $top_srcdir/tests/golden/wgrad.plan" least=3
checked=0
for f in $files; do
  b=$(basename "$f" .plan)
  # plans whose golden says they fail, and searches, have no reports to check
  [ -e "$top_srcdir/tests/golden/$b.status" ] && continue
  grep -q '^search ' "$f" && continue
  (cd "$(dirname "$f")" && plc --whole-step --format=json "$(basename "$f")") > "$outdir/prop.json" 2> /dev/null
  status=$?
  [ "$status" -le 1 ] || continue # errors: nothing evaluated
  jq -r "$props" "$outdir/prop.json" > "$outdir/prop.txt" 2> "$outdir/prop.err" ||
    { fail "$b: jq: $(cat "$outdir/prop.err")"; continue; }
  [ -s "$outdir/prop.txt" ] || continue
  expr=$(cut -f 2 "$outdir/prop.txt" | awk '{ printf "%s(%s)", (NR > 1 ? " && " : ""), $0 }')
  if [ "$("$PLC" -e "$expr" "$empty" 2>&1)" = true ]; then
    pass
    checked=$((checked + 1))
  else
    while IFS="$(printf '\t')" read -r label e; do
      [ "$("$PLC" -e "$e" "$empty" 2>&1)" = true ] || fail "$b: $label: $e"
    done < "$outdir/prop.txt"
  fi
done
# the check must have something to check
if [ "$checked" -ge "$least" ]; then pass; else fail "only $checked plans checked"; fi
finish
