#!/bin/sh
# check-files.sh - every stdlib and validation plan passes `plc --check`,
# every example is evaluated with all its assertions holding (exit 0), and
# the generated file lists name every plan and every golden output, error
# and argument file (see scripts/filelists.sh).
. "$top_srcdir/tests/lib.sh"
cd "$top_srcdir" || exit 99
for f in $(find stdlib examples/article validation -name '*.plan' | LC_ALL=C sort); do
  if plc --check "$f" > "$outdir/check.out" 2>&1; then pass
  else fail "plc --check $f"; cat "$outdir/check.out"; fi
done
for f in examples/*.plan; do
  if plc "$f" > "$outdir/check.out" 2>&1; then pass
  else fail "plc $f"; cat "$outdir/check.out"; fi
done
for f in $(find examples stdlib validation tests/golden tests/errors -type f \
           \( -name '*.plan' -o -name '*.out' -o -name '*.err' -o -name '*.args' \
              -o -name '*.status' \) | LC_ALL=C sort); do
  if grep -q "^  $f\( \\\\\)\{0,1\}\$" tests/data.am stdlib/files.am; then pass
  else fail "$f is not listed: run scripts/filelists.sh"; fi
done
finish
