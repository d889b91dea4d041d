#!/bin/sh
# validate-smoke.sh - `make validate` runs: validation/validate.sh exits 0
# (every fit holds, every row evaluates) and its table has one line per row
# declared in validation/*.plan, plus the overall summary, and the op-level
# column (sim_step_time) where the engine takes a row.  The errors are
# not checked: the suite measures plc's model, not the code (issue 13).  A
# coarse fit (2^-10) keeps it quick.
. "$top_srcdir/tests/lib.sh"
out="$outdir/validate.out"
if VALIDATE_BITS=10 sh "$top_srcdir/validation/validate.sh" > "$out" 2> "$outdir/validate.err"; then
  pass
else
  fail "validation/validate.sh exits non-zero"; cat "$outdir/validate.err"
fi
rows=$(sed -n 's/^let \([A-Za-z_][A-Za-z0-9_]*\)_measured *=.*/\1/p' "$top_srcdir"/validation/*.plan)
[ -n "$rows" ] || fail "no rows declared in validation/*.plan"
for r in $rows; do
  if grep -q "^$r .*[0-9]s  *[0-9.]*s  *[-+][0-9.]*%" "$out"; then pass
  else fail "row $r missing from the table"; fi
done
if grep -q "^  all sources  .*average |error|" "$out"; then pass
else fail "no overall summary"; cat "$out"; fi
# the op-level column: a step and an error where the engine takes the row
# (Korthikanti's 22B does), "-" where it refuses it (its 1T: 3M ops)
if grep -q "^korthikanti_22b_full .*%  *[0-9.]*s  *[-+][0-9.]*%$" "$out"; then pass
else fail "no op-level step for korthikanti_22b_full"; grep korthikanti_22b_full "$out"; fi
if grep -q "^korthikanti_1t_full .*%  *-  *-$" "$out"; then pass
else fail "korthikanti_1t_full should have no op-level step"; grep korthikanti_1t_full "$out"; fi
if grep -q "^  all sources, op-level  .*average |error|" "$out"; then pass
else fail "no op-level summary"; cat "$out"; fi
if grep -q "^  all sources: average |error| <= 10%  *\(met\|not met\)$" "$out"; then pass
else fail "no verdict on the targets"; cat "$out"; fi
finish
