#!/bin/sh
# validate.sh - `make validate`: plc's predictions against published runs.
#
# Every plan of validation/ that declares rows is a source; a row is a
# training run NAME with a constant `let NAME_measured = T s` (the published
# step time), and a `# unverified` comment on that line leaves the row out
# of the averages.  The calibration constants of validation/calibration.plan
# (one efficiency per device type, each with a `# fit CONST on FILE ROW`
# line) are first fitted on their rows by exact bisection, then every row
# is evaluated with them (-D) and compared: error = (predicted - measured) /
# measured, exact rationals from `plc --exact`, summed and maximised by plc
# itself; awk only rounds them for the table.  Each row's op-level step
# (sim_step_time, plc --whole-step) is given beside it for information.
#
#   PLC=./plc top_srcdir=. sh validation/validate.sh [FILE.plan...]
#
# Environment: VALIDATE_BITS (default 20), the fit's resolution 2^-BITS.
# Exit status: 0 when every row evaluates and every fit holds (whatever the
# errors: the suite measures the model, not the code), 1 otherwise.
set -eu
: "${PLC:=./plc}"
: "${top_srcdir:=.}"
BITS=${VALIDATE_BITS:-20}
export PLC_PATH=
vdir="$top_srcdir/validation"
cal="$vdir/calibration.plan"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/plc-validate.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
status=0

# plc_eval ARGS...: run plc quietly, one value per line on stdout.
plc_eval() { "$PLC" -w "$@" 2> "$tmp/err"; }

# is_true EXPR FILE DEFS...: whether plc evaluates EXPR to true.
is_true() {
  it_e=$1; it_f=$2; shift 2
  [ "$(plc_eval "$@" -e "$it_e" "$it_f")" = true ]
}

# fit CONST FILE ROW: the least k/2^BITS at which ROW is no slower than
# measured (step time falls as efficiency rises), or k-1 if that is closer.
# Prints "-D CONST=k/2^BITS".
fit() {
  c=$1; f="$vdir/$2"; row=$3; den=$((1 << BITS))
  pred="$row.step_time <= ${row}_measured"
  if ! is_true "$pred" "$f" $defs -D "$c=1"; then
    echo "validate: $row is slower than measured even at $c = 1" >&2; return 1
  fi
  # Bracket [lo, hi] (P false at lo, true at hi) around the value in
  # calibration.plan, widening by doubling steps: when the model has not
  # moved the fit costs two evaluations; lo = 0 stands for "false".
  k0=$(plc_eval --exact -e "max(1, min($den, floor($c * $den)))" "$cal")
  if is_true "$pred" "$f" $defs -D "$c=$k0/$den"; then
    hi=$k0; step=1; lo=$((hi - 1))
    while [ "$lo" -gt 0 ] && is_true "$pred" "$f" $defs -D "$c=$lo/$den"; do
      hi=$lo; step=$((step * 2)); lo=$((hi - step)); [ "$lo" -ge 0 ] || lo=0
    done
  else
    lo=$k0; step=1; hi=$((lo + 1))
    while [ "$hi" -lt "$den" ] && ! is_true "$pred" "$f" $defs -D "$c=$hi/$den"; do
      lo=$hi; step=$((step * 2)); hi=$((lo + step)); [ "$hi" -le "$den" ] || hi=$den
    done
  fi
  while [ $((hi - lo)) -gt 1 ]; do
    mid=$(( (lo + hi) / 2 ))
    if is_true "$pred" "$f" $defs -D "$c=$mid/$den"; then hi=$mid; else lo=$mid; fi
  done
  err="abs(($row.step_time - ${row}_measured) / ${row}_measured)"
  k=$hi
  if [ "$lo" -gt 0 ]; then
    e_hi=$(plc_eval --exact $defs -D "$c=$hi/$den" -e "$err" "$f")
    e_lo=$(plc_eval --exact $defs -D "$c=$lo/$den" -e "$err" "$f")
    is_true "$e_lo < $e_hi" "$cal" && k=$lo
  fi
  # The fit must reproduce its row: a step time that jumps past the
  # measured one (a non-monotone model) would leave it far off.
  if ! is_true "$err <= 0.5%" "$f" $defs -D "$c=$k/$den"; then
    echo "validate: $c = $k/$den leaves $row more than 0.5% off" >&2; return 1
  fi
  echo "-D $c=$k/$den"
}

# ---- 1. calibration: one constant per device type, each on its row ------
defs=""
fits=$(sed -n 's/^# fit \([A-Za-z_][A-Za-z0-9_]*\) on \([^ ]*\) \([A-Za-z_][A-Za-z0-9_]*\)$/\1 \2 \3/p' "$cal")
calrows=""
echo "plc validate: published runs against plc's predictions"
echo
echo "calibration (validation/calibration.plan; resolution 2^-$BITS):"
while read -r c f row; do
  [ -n "$c" ] || continue
  d=$(fit "$c" "$f" "$row") || { status=1; continue; }
  defs="$defs $d"
  calrows="$calrows $row"
  v=${d#-D *=}
  printf '  %-10s = %-16s %s on %s\n' "$c" "$v" \
    "$(echo "$v" | awk -F/ '{ printf "(%.4f)", $1 / $2 }')" "$row"
  [ "$BITS" != 20 ] || is_true "$c == $v" "$cal" ||
    echo "  (calibration.plan says $c = $(plc_eval --exact -e "$c" "$cal"); update it to $v)"
done <<EOF
$fits
EOF
echo

# ---- 2. every row of every source -----------------------------------------
if [ $# -gt 0 ]; then files="$*"; else files=$(ls "$vdir"/*.plan | LC_ALL=C sort); fi
: > "$tmp/rows"
: > "$tmp/summary"
for f in $files; do
  src=$(basename "$f" .plan)
  rows=$(sed -n 's/^let \([A-Za-z_][A-Za-z0-9_]*\)_measured *=.*/\1/p' "$f")
  [ -n "$rows" ] || continue
  set --
  for r in $rows; do
    set -- "$@" -e "${r}_measured" -e "$r.step_time" \
      -e "($r.step_time - ${r}_measured) / ${r}_measured"
  done
  # shellcheck disable=SC2086
  if ! plc_eval --exact $defs "$@" "$f" > "$tmp/vals"; then
    echo "validate: $f does not evaluate:" >&2; cat "$tmp/err" >&2; status=1; continue
  fi
  i=0
  for r in $rows; do
    m=$(sed -n "$((3 * i + 1))p" "$tmp/vals"); p=$(sed -n "$((3 * i + 2))p" "$tmp/vals")
    e=$(sed -n "$((3 * i + 3))p" "$tmp/vals")
    kind=predicted
    grep -q "^let ${r}_measured *=.*# *unverified" "$f" && kind=unverified
    case " $calrows " in *" $r "*) kind=fit ;; esac
    # The step simulated op by op (--whole-step) with the same fits, when
    # the engine takes the row ("-" when it refuses: too many ops).
    if ws=$(plc_eval --exact $defs -e "$r.sim_step_time" \
              -e "($r.sim_step_time - ${r}_measured) / ${r}_measured" "$f"); then
      wp=$(echo "$ws" | sed -n 1p); we=$(echo "$ws" | sed -n 2p); wp=${wp% s}
    else
      wp=- we=-
    fi
    echo "$r $src ${m% s} ${p% s} $e $kind $wp $we" >> "$tmp/rows"
    i=$((i + 1))
  done
done

# Rational p/q (or p) as a decimal, for display only.
dec() { awk -v x="$1" -v fmt="$2" 'BEGIN { n = split(x, a, "/"); v = n > 1 ? a[1] / a[2] : a[1]; if (fmt ~ /%%/) v *= 100; printf fmt, v }'; }

printf '%-30s %-26s %9s %9s %8s %9s %8s\n' row source measured predicted error op-level error
while read -r r src m p e kind wp we; do
  note=""
  [ "$kind" = predicted ] || note="  ($kind)"
  if [ "$wp" = - ]; then ws=$(printf '%9s %8s' - -)
  else ws=$(printf '%8ss %8s' "$(dec "$wp" %.2f)" "$(dec "$we" "%+.2f%%")"); fi
  printf '%-30s %-26s %8ss %8ss %8s %s%s\n' "$r" "$src" "$(dec "$m" %.2f)" "$(dec "$p" %.2f)" \
    "$(dec "$e" "%+.2f%%")" "$ws" "$note"
done < "$tmp/rows"
echo "(op-level: the whole step simulated op by op, plc --whole-step, with the same fits;"
echo " - where the engine refuses the row: more than its 1,000,000 ops)"

# ---- 3. averages: exact in plc, rounded here ------------------------------
# summary LABEL FILTER [FIELD]: mean and max |error| over the rows FILTER
# selects, of field FIELD of the rows file (5, the report's step; 8, the
# op-level one).
summary() {
  errs=$(awk "$2"' { print $'"${3:-5}"' }' "$tmp/rows")
  n=$(printf '%s\n' "$errs" | grep -c . || true)
  [ "$n" -gt 0 ] || return 0
  sum=""; mx=""
  for e in $errs; do
    sum="${sum:+$sum + }abs($e)"; mx="${mx:+$mx, }abs($e)"
  done
  out=$(plc_eval --exact -e "100 * ($sum) / $n" -e "100 * max($mx)" "$cal")
  avg=$(echo "$out" | sed -n 1p); max=$(echo "$out" | sed -n 2p)
  echo "$(echo "$1" | tr ' ' _) $avg $max" >> "$tmp/summary"
  printf '  %-40s %3d rows  average |error| %6s%%  max %6s%%\n' "$1" "$n" \
    "$(dec "$avg" %.2f)" "$(dec "$max" %.2f)"
}
echo
echo "summary (predicted rows; the fit rows and unverified rows are not counted):"
for src in $(awk '{ print $2 }' "$tmp/rows" | uniq); do
  summary "$src" "\$2 == \"$src\" && \$6 == \"predicted\""
done
summary "all sources" '$6 == "predicted"'
if grep -q ' unverified ' "$tmp/rows"; then
  summary "unverified rows (for information)" '$6 == "unverified"'
  summary "every row but the fits, unverified too" '$6 != "fit"'
fi
echo "the rows the op-level engine takes (for information), the report's step, then op-level:"
summary "all sources, the report's step" '$6 == "predicted" && $8 != "-"'
summary "all sources, op-level" '$6 == "predicted" && $8 != "-"' 8
summary "every row but the fits, the report's step" '$6 != "fit" && $8 != "-"'
summary "every row but the fits, op-level" '$6 != "fit" && $8 != "-"' 8

# ---- 4. the targets of issue 13, decided exactly ------------------------
# target LABEL SOURCE FIELD BOUND: whether SOURCE's average (2) or max (3)
# |error| is at most BOUND percent.
target() {
  v=$(awk -v s="$2" -v f="$3" '$1 == s { print $f }' "$tmp/summary" 2>/dev/null)
  [ -n "$v" ] || return 0
  if is_true "$v <= $4" "$cal"; then r=met; else r="not met"; fi
  printf '  %-46s %s\n' "$1" "$r"
}
echo
echo "targets (issue 13), over the predicted rows:"
target "all sources: average |error| <= 10%" all_sources 2 10
target "all sources: max |error| <= 20%" all_sources 3 20
target "korthikanti2022-table5: average |error| <= 5%" korthikanti2022-table5 2 5
if grep -q ' unverified ' "$tmp/rows"; then
  echo "and over every row but the fits, unverified ones too (for information):"
  target "average |error| <= 10%" every_row_but_the_fits,_unverified_too 2 10
  target "max |error| <= 20%" every_row_but_the_fits,_unverified_too 3 20
fi
exit $status
