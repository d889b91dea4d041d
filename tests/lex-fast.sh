#!/bin/sh
# lex-fast.sh - the scanner's fast path (grammar/lexer.l: names, operators,
# line breaks with their indentation, spaces and plain integers read from
# flex's buffer) changes nothing: for every stdlib file, example, golden
# plan and error case, the tokens and the AST, and every diagnostic with
# its location, are the same with PLC_LEX_NO_FAST=1, which reads every
# token through flex's tables.  (tests/unit/test_lexer compares the two on
# random texts.)
. "$top_srcdir/tests/lib.sh"
files="$top_srcdir/stdlib/*/*.plan $top_srcdir/examples/*.plan
       $top_srcdir/examples/article/*.plan $top_srcdir/tests/golden/*.plan
       $top_srcdir/tests/errors/*.plan"
# Sampled (valgrind or sanitizers in CI, for memory errors), a few will do.
! sampled || files="$top_srcdir/stdlib/frameworks/megatron.plan
  $top_srcdir/examples/hello.plan $top_srcdir/tests/errors/lex-*.plan
  $top_srcdir/tests/errors/syn-*.plan"
for f in $files; do
  [ -e "$f" ] || continue
  d=$(dirname "$f") b=$(basename "$f")
  for mode in --emit=tokens --emit=ast; do
    (cd "$d" && plc "$mode" "$b") > "$outdir/lex-fast.out" 2>&1
    switch_same PLC_LEX_NO_FAST "$outdir/lex-fast.out" "the scanner's fast path" "$d" "$b" "$mode"
  done
done
finish
