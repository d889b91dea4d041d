#!/bin/sh
# run.sh - build the fuzz harnesses (ASan + UBSan) and run each for a while.
# `make fuzz` runs it; CI runs a short smoke.
#
#   tests/fuzz/run.sh [SECONDS]         libFuzzer (clang), seconds per harness
#   tests/fuzz/run.sh --afl [SECONDS]   the same harnesses under AFL++
#                                       (afl-clang-fast, AFL_USE_ASAN=1)
#
# Harnesses parse from memory and never read imports from the file system.
# The seed corpus is every example with the library files it imports pasted
# in front (imports removed), plus the golden and error test plans.  Crashes
# land in $FUZZ_DIR/crashes (default build-fuzz/); each one found should
# become a test in tests/errors/.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
afl=0
if [ "${1:-}" = "--afl" ]; then afl=1; shift; fi
secs=${1:-60}
out=${FUZZ_DIR:-$top/build-fuzz}
CC=${FUZZ_CC:-clang}
if [ $afl = 1 ]; then
  out=$out/afl
  CC=afl-clang-fast
  export AFL_USE_ASAN=1 AFL_USE_UBSAN=1
fi
mkdir -p "$out/gen" "$out/obj" "$out/seeds" "$out/crashes"

bison -d -Wno-yacc -o "$out/gen/parser.c" "$top/grammar/parser.y"
(cd "$out/gen" && flex "$top/grammar/lexer.l" && mv lex.yy.c lexer.c) # the .l names its output

# The harnesses never read imports: no stdlib directory is real.
{
  echo '#define PLC_STDLIB_DIR "/nonexistent"'
  echo '#define PLC_BINDIR "/nonexistent"'
  echo '#define PLC_BUILD_DIR "/nonexistent"'
  echo '#define PLC_SOURCE_STDLIB_DIR "/nonexistent"'
} > "$out/gen/plc_paths.h"

SAN="-fsanitize=address,undefined -fno-sanitize-recover=all"
CFLAGS="-g -O1 -std=c11 -D_GNU_SOURCE -fsanitize=fuzzer-no-link $SAN \
  -I$top/runtime/base -I$top/compiler/front -I$top/compiler/lower -I$top/runtime/engine -I$top/runtime/report -I$top/cli -I$out/gen $(pkg-config --cflags jansson)"
objs=""
for src in "$top"/runtime/*/*.c "$top"/compiler/*/*.c "$top"/cli/drive.c "$top"/cli/compare.c "$out/gen/parser.c" "$out/gen/lexer.c"; do
  obj="$out/obj/$(basename "$src" .c).o"
  # shellcheck disable=SC2086
  $CC $CFLAGS -c "$src" -o "$obj"
  objs="$objs $obj"
done
for h in frontend pipeline; do
  # shellcheck disable=SC2086
  $CC $CFLAGS -fsanitize=fuzzer "$top/tests/fuzz/fuzz_$h.c" $objs -lgmp $(pkg-config --libs jansson) -o "$out/fuzz_$h"
done

# Seeds: self-contained plans.
libs="$top/stdlib/hw/nvidia.plan $top/stdlib/hw/ascend.plan $top/stdlib/models/minimax.plan \
  $top/stdlib/frameworks/megatron.plan $top/examples/article/hw.plan \
  $top/examples/article/m3.plan $top/examples/article/dense70b.plan"
for f in "$top"/examples/*.plan; do
  # shellcheck disable=SC2086
  cat $libs "$f" | grep -v '^import ' > "$out/seeds/$(basename "$f")"
done
for f in "$top"/tests/golden/*.plan "$top"/tests/errors/*.plan; do
  grep -av '^import ' "$f" > "$out/seeds/t-$(basename "$f")" || true
done

status=0
if [ $afl = 1 ]; then
  export AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_NO_UI=1
  mkdir -p "$out/afl-seeds"
  for f in "$out"/seeds/*; do # AFL++ wants small seeds
    [ "$(wc -c < "$f")" -le 16384 ] && cp "$f" "$out/afl-seeds/"
  done
  for h in frontend pipeline; do
    echo "== afl-fuzz fuzz_$h for $secs s"
    afl-fuzz -i "$out/afl-seeds" -o "$out/afl-$h" -x "$top/tests/fuzz/plc.dict" \
      -V "$secs" -m none -t 20000 -- "$out/fuzz_$h" > "$out/afl-$h.log" 2>&1 || status=1
    tail -n 3 "$out/afl-$h.log"
    grep -E 'execs_done|execs_per_sec|saved_crashes|saved_hangs' "$out/afl-$h/default/fuzzer_stats" || true
  done
  exit $status
fi
for h in frontend pipeline; do
  mkdir -p "$out/corpus-$h"
  echo "== fuzz_$h for $secs s"
  "$out/fuzz_$h" "$out/corpus-$h" "$out/seeds" -dict="$top/tests/fuzz/plc.dict" \
    -max_total_time="$secs" -max_len=65536 -timeout=20 -rss_limit_mb=2048 \
    -artifact_prefix="$out/crashes/$h-" -print_final_stats=1 2>&1 | tail -n 12 || status=1
done
exit $status
