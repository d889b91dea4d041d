#!/bin/sh
# man-lint.sh - the manual pages lint clean with mandoc (skipped without it).
. "$top_srcdir/tests/lib.sh"
command -v mandoc > /dev/null || { echo "mandoc not installed"; exit 77; }
for page in "$top_srcdir"/man/*.[1-9]; do
  if mandoc -Tlint -W warning "$page" > "$outdir/mandoc.out" 2>&1; then pass
  else fail "mandoc -Tlint $page"; cat "$outdir/mandoc.out"; fi
done
finish
