#!/bin/sh
# check-includes.sh - includes point down one list and never back up:
#   base -> front end -> lowering -> engine -> reports -> cli
# (runtime/base, compiler/front with grammar, compiler/lower, runtime/engine,
# runtime/report, cli).  A file may include headers of its own layer or of
# a lower one.  An include of a higher layer, a header that is no plc
# header, or a source file outside every layer fails the test.  The checker
# first proves on a small tree of its own that it catches an upward include.
. "$top_srcdir/tests/lib.sh"

layer_of() {
  case "$1" in
    runtime/base/*) echo 0 ;;
    compiler/front/*|grammar/*) echo 1 ;;
    compiler/lower/*) echo 2 ;;
    runtime/engine/*) echo 3 ;;
    runtime/report/*) echo 4 ;;
    cli/*) echo 5 ;;
    *) echo "" ;;
  esac
}
name_of() {
  n=$(( $1 + 1 ))
  set -- base front-end lowering engine reports cli
  eval "echo \${$n}"
}

# Print one line per violation in the tree at $1 (config.h and the
# generated parser.h are not plc's own headers and are skipped).
violations() {
  (
    cd "$1" || exit 99
    sources=$(find runtime compiler grammar cli -type f \
      \( -name '*.c' -o -name '*.h' -o -name '*.y' -o -name '*.l' \) 2>/dev/null | LC_ALL=C sort)
    for f in $sources; do
      from=$(layer_of "$f")
      if [ -z "$from" ]; then echo "$f is in no layer folder"; continue; fi
      for h in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
        case "$h" in config.h|parser.h|plc_paths.h) continue ;; esac
        path=$(printf '%s\n' $sources | grep "/$h\$" | head -n 1)
        if [ -z "$path" ]; then echo "$f includes \"$h\", which is no header of plc"; continue; fi
        to=$(layer_of "$path")
        [ "$to" -le "$from" ] ||
          echo "$f ($(name_of "$from")) includes $path ($(name_of "$to")): includes must point down"
      done
    done
  )
}

# The checker catches an upward include (engine reaching into reports).
fixture="$outdir/includes-fixture"
rm -rf "$fixture"
mkdir -p "$fixture/runtime/engine" "$fixture/runtime/report" "$fixture/runtime/base"
echo '#include "arena.h"' > "$fixture/runtime/engine/sim.c"
echo '#include "report.h"' >> "$fixture/runtime/engine/sim.c"
: > "$fixture/runtime/report/report.h"
: > "$fixture/runtime/base/arena.h"
got=$(violations "$fixture")
case "$got" in
  "runtime/engine/sim.c (engine) includes runtime/report/report.h (reports): includes must point down")
    pass ;;
  *) fail "the checker missed an upward include in its fixture: '$got'" ;;
esac
rm -rf "$fixture"

# The real tree.
got=$(violations "$top_srcdir")
if [ -z "$got" ]; then pass
else printf '%s\n' "$got" | while read -r line; do echo "FAIL: $line"; done; fail "upward includes"; fi
finish
