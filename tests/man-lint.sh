#!/bin/sh
# man-lint.sh - the manual pages lint clean with mandoc (skipped without it),
# and plc(1) lists the whole standard library.
. "$top_srcdir/tests/lib.sh"
command -v mandoc > /dev/null || { echo "mandoc not installed"; exit 77; }
for page in "$top_srcdir"/man/*.[1-9]; do
  if mandoc -Tlint -W warning "$page" > "$outdir/mandoc.out" 2>&1; then pass
  else fail "mandoc -Tlint $page"; cat "$outdir/mandoc.out"; fi
done
# plc(1) FILES names every file of the standard library, and plc-stdlib(7).
files=$(sed -n '/^\.SH FILES/,/^\.SH /p' "$top_srcdir/man/plc.1")
for f in "$top_srcdir"/stdlib/*/*.plan; do
  dir=$(basename "$(dirname "$f")")
  if echo "$files" | grep -q "stdlib/$dir/" && echo "$files" | grep -qF "$(basename "$f")"; then pass
  else fail "plc(1) FILES does not list $dir/$(basename "$f")"; fi
done
if grep -q '^\.BR plc\\-stdlib (7)' "$top_srcdir/man/plc.1"; then pass
else fail "plc(1) does not refer to plc-stdlib(7)"; fi
finish
