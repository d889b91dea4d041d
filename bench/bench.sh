#!/bin/sh
# bench.sh - `make bench`: time plc evaluating every example and a large
# synthetic plan, as whole processes, over several runs; prints the best and
# the median wall time of each (from spawning each process to reaping it:
# bench/spawn.c, which make bench builds, and which also gives the fewest
# page faults a run took; run by hand without $SPAWN, a
# time includes a `date` process).  Speed is measured here, never in tests.
set -eu
: "${PLC:=./plc}"
: "${top_srcdir:=.}"
RUNS=${RUNS:-7}
export PLC_PATH=
now() { date +%s%N; }
# bench FILE [LABEL [RUNS [PLC OPTION]...]]
bench() {
  file=$1
  label=${2:-$(basename "$file")}
  runs=${3:-$RUNS}
  [ $# -ge 3 ] && shift 3 || set --
  if [ -n "${SPAWN:-}" ]; then # the timer of whole processes (bench/spawn.c)
    set -- $("$SPAWN" "$runs" "$PLC" "$@" "$file")
    best=$1 median=$2 faults=$3
  else # by hand, without it: each time includes a `date` process
    times=""
    for _ in $(seq "$runs"); do
      t0=$(now)
      "$PLC" "$@" "$file" > /dev/null 2>&1 || true
      t1=$(now)
      times="$times $(( (t1 - t0) / 1000 ))"
    done
    sorted=$(printf '%s\n' $times | sort -n)
    best=$(printf '%s\n' "$sorted" | head -n 1) faults=-
    median=$(printf '%s\n' "$sorted" | sed -n "$(( (runs + 1) / 2 ))p")
  fi
  awk -v f="$label" -v b="$best" -v m="$median" -v p="$faults" \
    'BEGIN { printf "%-45s best %8.1f ms   median %8.1f ms   faults %s\n", f, b / 1000, m / 1000, p }'
  echo "$best $label" >> "$names.best"
}
echo "plc bench: $RUNS runs each, wall time of the whole process"
if [ -n "${SPAWN:-}" ]; then # what spawning any process costs here
  set -- $("$SPAWN" "$RUNS" /bin/true)
  awk -v b="$1" -v m="$2" -v p="$3" \
    'BEGIN { printf "%-45s best %8.1f ms   median %8.1f ms   faults %s\n", "(/bin/true, for scale)", b / 1000, m / 1000, p }'
fi
# 40,000 top-level names, each read by the next (name lookup must stay
# linear; issue 9 item 16), generated here.
names=$(mktemp "${TMPDIR:-/tmp}/plc-bench-names.XXXXXX")
trap 'rm -f "$names"' EXIT
awk 'BEGIN { print "let n0 = 0"; for (i = 1; i < 40000; i++) print "let n" i " = n0 + " i;
             print "assert n39999 == 39999" }' > "$names"
for f in "$top_srcdir"/examples/*.plan "$top_srcdir"/bench/large.plan; do
  bench "$f"
done
bench "$names" "40,000 names (generated)"
# The start-up and latency targets: a small plan (hello.plan) under 3 ms,
# every example and large.plan under 20 ms (best wall times above).
grep -v "40,000 names" "$names.best" | awk '
  $2 == "hello.plan" { hello = $1 }
  $1 > worst { worst = $1; name = $2 }
  END { printf "targets: hello.plan %.1f ms (3 ms); slowest of the examples and large.plan: %s %.1f ms (20 ms)\n", hello / 1000, name, worst / 1000 }'
# The whole step (issue 10 item 6): the report (which simulates it once,
# links as the train says) and --emit=step (twice: shared, then dedicated)
# of Llama 3 405B on 16,384 GPUs (1F1B, 72,506 ops) and of a step of 1,024
# microbatches (876,580 ops); 3 runs each.
for f in "$top_srcdir"/bench/llama3-405b-1f1b.plan "$top_srcdir"/bench/mu1024.plan; do
  bench "$f" "$(basename "$f")" 3
  bench "$f" "$(basename "$f") --emit=step" 3 --emit=step
done
# Layout search (issue 12): configurations per second per core, one thread,
# from the user + system CPU time of REPS whole processes run back to back
# (/usr/bin/time counts in hundredths of a second: a search of a few
# milliseconds needs repeating), best of 3.
search() {
  file=$1
  reps=${SEARCH_REPS:-10}
  n=$("$PLC" "$file" 2> /dev/null | sed -n 's/^  \([0-9]*\) candidates, .*/\1/p')
  best=
  for _ in $(seq 3); do
    /usr/bin/time -f '%U %S' -o "$names.time" sh -c \
      'i=0; while [ $i -lt "$1" ]; do "$2" --jobs=1 "$3" > /dev/null 2>&1; i=$((i + 1)); done' \
      sh "$reps" "$PLC" "$file" || true
    cpu=$(awk '{ printf "%d", ($1 + $2) * 1000 }' "$names.time")
    [ -z "$best" ] || [ "$cpu" -lt "$best" ] && best=$cpu
  done
  awk -v f="$(basename "$file")" -v n="$n" -v r="$reps" -v ms="$best" \
    'BEGIN { printf "%-45s %d candidates x %d runs in %.2f s of CPU: %.0f configurations/s per core\n", f, n, r, ms / 1000, (ms > 0 ? n * r * 1000 / ms : 0) }'
}
search "$top_srcdir"/bench/search-70b.plan
search "$top_srcdir"/bench/search-530b.plan
rm -f "$names.time" "$names.best"
