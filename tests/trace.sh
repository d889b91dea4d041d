#!/bin/sh
# trace.sh - --trace=FILE writes Chrome trace-event JSON that jq can read,
# with sound tracks and the exact values of tests/golden/ir-small.plan:
#   mm = 2e12 FLOP / (100 TFLOPS x 50%) = 40 ms = 1/25 s;
#   ag = (1/2) x 1 GB / 100 GB/s + 1 us = 5.001 ms = 5001/1000000 s, the
#   first one wholly exposed (the compute stream waits 0 .. 5001 us for it).
# Stage 0 runs 7 forward and 12 backward ops per microbatch, mu = 2, and a
# step op: 39 op events.  Stage 1 runs 2 forward ops, 4 backward ops, 6 in
# the last backward (its two once reduce-scatters), and a step op: 15.
# A microbatch spans 125.102 ms of forward (t_f) and 380.004 ms of backward
# (t_b = 375.003 ms, and the last reduce-scatter ends 5.001 ms later).
# The file is written atomically: a failed run leaves an old file alone.
. "$top_srcdir/tests/lib.sh"
command -v jq > /dev/null || { echo "jq is needed (apt-get install jq)"; exit 99; }
small="$top_srcdir/tests/golden/ir-small.plan"
t="$outdir/small.trace.json"
rm -f "$t"

# check NAME JQ-EXPRESSION FILE: the expression must print true.
check() {
  if [ "$(jq "$2" "$3" 2>&1)" = true ]; then pass; else fail "$1"; jq "$2" "$3" 2>&1 | head -5; fi
}

# The invariants every trace must keep.
sound() {
  check "$1: dur >= 0 and integer ts" \
    '[.traceEvents[] | select(.ph == "X") | (.dur >= 0 and (.ts | floor) == .ts and (.dur | floor) == .dur)] | all' "$2"
  check "$1: one thread per (pid, stream), tids unique" \
    '[.traceEvents[] | select(.name == "thread_name")] | (map([.pid, .args.name]) | unique | length) == length and (map(.tid) | unique | length) == length' "$2"
  check "$1: every X event on a named thread" \
    '([.traceEvents[] | select(.name == "thread_name") | [.pid, .tid]] | unique) as $t | [.traceEvents[] | select(.ph == "X") | [.pid, .tid] | IN($t[])] | all' "$2"
  check "$1: events on one thread never overlap" \
    '[.traceEvents[] | select(.ph == "X")] | group_by(.tid) | map(sort_by(.ts, .dur) | [range(1; length) as $i | .[$i].ts >= .[$i - 1].ts + .[$i - 1].dur] | all) | all' "$2"
}

if "$PLC" --trace="$t" "$small" > "$outdir/trace.stdout" 2>&1; then pass
else fail "plc --trace exit status"; cat "$outdir/trace.stdout"; fi
check "top level" '.displayTimeUnit == "ns" and (.traceEvents | type) == "array"' "$t"
sound small "$t"
check "every event has a cat, metadata too (some loaders reject one without)" \
  '([.traceEvents[] | (.cat | type) == "string"] | all) and ([.traceEvents[] | select(.ph == "M") | .cat] | unique) == ["__metadata"]' "$t"
check "process names" \
  '[.traceEvents[] | select(.name == "process_name") | .args.name] == ["small: stage 0 of 2 (critical)", "small: stage 1 of 2", "small: whole step, block level (1f1b)", "small: whole step, op level (1f1b, links shared)"]' "$t"
check "mm is 40 ms exactly" \
  '[.traceEvents[] | select(.ph == "X" and .args.op == "mm" and .args.phase == "fwd" and .pid == 1) | .args.duration] | unique == ["1/25 s"]' "$t"
check "first ag: 5.001 ms, exposed all of it" \
  '.traceEvents[] | select(.ph == "X" and .args.op == "ag" and .args.layer == 0 and .args.microbatch == 0 and .args.phase == "fwd") | .args.duration == "5001/1000000 s" and .args.exposed == "5001/1000000 s" and .ts == 0 and .dur == 5001 and .args.group == "shard" and .args.size == "1000000000 B"' "$t"
check "the compute stream waits 0 .. 5001 us for it" \
  '[.traceEvents[] | select(.ph == "X" and .cat == "exposed" and .pid == 1 and .ts == 0)] | length == 1 and .[0].dur == 5001 and .[0].args.waits_for == "ag"' "$t"
check "op events per stage" \
  '[.traceEvents[] | select(.ph == "X" and .args.op != null and .pid <= 2)] | group_by(.pid) | map(length) == [39, 15]' "$t"
check "op level: the same ops, every microbatch of every stage" \
  '[.traceEvents[] | select(.ph == "X" and .args.op != null and .pid == 4)] | length == 54' "$t"
check "second microbatch follows the first" \
  '[.traceEvents[] | select(.ph == "X" and .pid == 1 and .args.op == "ag" and .args.layer == 0 and .args.phase == "fwd")] | map(.args.microbatch) == [0, 1] and .[1].ts == 505106' "$t"
check "once ops only in the last backward" \
  '[.traceEvents[] | select(.ph == "X" and .args.once == true) | .args.microbatch] == [1, 1]' "$t"
check "a step op per stage, after everything else of its stage" \
  '[.traceEvents[] | select(.ph == "X" and .args.list != null)] | group_by(.pid) | map((map(select(.args.list == "step")) | length == 1 and .[0].args.op == "opt") and ((map(select(.args.list == "step"))[0].ts) >= (map(select(.args.list != "step") | .ts + .dur) | max))) | all' "$t"

# The whole step at block level (runtime/engine/blocks.h): 1F1B over 2
# stages and 2 microbatches, each block its stage's per-microbatch time.
# Stage 0: F 125.102 ms (t_f), B 380.004 ms; stage 1: F 80 ms (two mm of
# 40 ms), B 200 ms.  Stage 1's F0 starts when stage 0's ends (the p2p is
# inside the lists), its B0 follows at once (205.102 .. 405.102 ms);
# stage 0 runs F1 meanwhile and starts B0 at 405.102 ms, ends it at
# 785.106; stage 1's F1 (405.102 .. 485.102) and B1 (.. 685.102) run
# meanwhile, so stage 0's B1 ends the step at 1165.11 ms.
check "blocks: one thread per stage, blocks in 1F1B order" \
  '[.traceEvents[] | select(.ph == "X" and .cat != null and (.cat | IN("forward", "backward")))] | group_by(.tid) | map(map(.name)) == [["F0", "F1", "B0", "B1"], ["F0", "B0", "F1", "B1"]]' "$t"
check "blocks: stage 0 exact times" \
  '[.traceEvents[] | select(.ph == "X" and (.cat | IN("forward", "backward"))) | [.name, .args.start, .args.end]] | .[0:4] == [["F0", "0 s", "62551/500000 s"], ["F1", "62551/500000 s", "62551/250000 s"], ["B0", "202551/500000 s", "392553/500000 s"], ["B1", "392553/500000 s", "116511/100000 s"]]' "$t"
check "blocks: stage 1 waits for stage 0" \
  '[.traceEvents[] | select(.ph == "X" and (.cat | IN("forward", "backward"))) | [.name, .args.start, .args.end]] | .[4:6] == [["F0", "62551/500000 s", "102551/500000 s"], ["B0", "102551/500000 s", "202551/500000 s"]]' "$t"
check "blocks: no memory counter without memory sections" \
  '[.traceEvents[] | select(.ph == "C")] | length == 0' "$t"

# The whole step op by op (runtime/engine/step.h), on
# tests/golden/step-sharing.plan, derived by hand there: links shared, the
# two 4 MB gathers progress at half speed and end at 6 ms; d waits 4 .. 6
# ms for them (exposed), runs 6 .. 7, bb 7 .. 8.  Dedicated, they end at 3
# and nothing waits.
st="$outdir/sharing.trace.json"
if "$PLC" --trace="$st" "$top_srcdir/tests/golden/step-sharing.plan" > /dev/null 2>&1; then pass
else fail "plc --trace on step-sharing"; fi
sound sharing "$st"
check "op level: a process per train, links as each says" \
  '[.traceEvents[] | select(.name == "process_name") | .args.name | select(test("op level"))] == ["t: whole step, op level (1f1b, links shared)", "t_dedicated: whole step, op level (1f1b, links dedicated)"]' "$st"
check "op level: shared gathers, the exposed wait and d" \
  '[.traceEvents[] | select(.ph == "X" and .pid == 3) | [.name, .cat, .args.start, .args.end]] == [["L0 c mb0", "compute", "0 s", "1/250 s"], ["L0 ag1 mb0", "all_gather", "0 s", "3/500 s"], ["L0 ag2 mb0", "all_gather", "0 s", "3/500 s"], ["wait for ag2", "exposed", "1/250 s", "3/500 s"], ["L0 d mb0", "compute", "3/500 s", "7/1000 s"], ["L0 bb mb0", "compute", "7/1000 s", "1/125 s"]]' "$st"
check "op level: dedicated, no wait" \
  '[.traceEvents[] | select(.ph == "X" and .pid == 6) | [.name, .args.end]] == [["L0 c mb0", "1/250 s"], ["L0 ag1 mb0", "3/1000 s"], ["L0 ag2 mb0", "3/1000 s"], ["L0 d mb0", "1/200 s"], ["L0 bb mb0", "3/500 s"]]' "$st"
check "op level: a thread per stage and stream" \
  '[.traceEvents[] | select(.name == "thread_name" and .pid == 3) | .args.name] == ["stage 0: compute", "stage 0: s1", "stage 0: s2"]' "$st"

# Memory along the step: tests/golden/memory-small.plan (pp 4, 1F1B, 8
# microbatches).  Stage 0 holds 17 GB of state and keeps 4 GB per
# microbatch; during F0 it holds 17 + 4 + 4 GB of buffers = 25 GB, after it
# 21 GB; during F3 (4 in flight) 37 GB, its peak, which B0 keeps.
mt="$outdir/mem.trace.json"
if "$PLC" --trace="$mt" "$top_srcdir/tests/golden/memory-small.plan" > /dev/null 2>&1; then pass
else fail "plc --trace on memory-small"; fi
sound memory "$mt"
check "memory: counter per stage" \
  '[.traceEvents[] | select(.ph == "C") | .name] | unique == ["memory, stage 0", "memory, stage 1", "memory, stage 2", "memory, stage 3"]' "$mt"
check "memory: stage 0 along its first blocks" \
  '[.traceEvents[] | select(.ph == "C" and .name == "memory, stage 0") | .args.bytes] | .[0:8] == [25000000000, 21000000000, 29000000000, 25000000000, 33000000000, 29000000000, 37000000000, 33000000000]' "$mt"
check "memory: the highest counter is the reported peak" \
  '[.traceEvents[] | select(.ph == "C") | .args.bytes] | max == 37000000000' "$mt"

# A large plan: four stages, four streams, four microbatches.
m3="$outdir/m3.trace.json"
if "$PLC" --trace="$m3" "$top_srcdir/examples/m3-megatron.plan" > /dev/null 2>&1; then pass
else fail "plc --trace on m3-megatron"; fi
sound m3 "$m3"
check "m3: four stages, critical 3" \
  '.otherData.trains[0] | .stages == 4 and .critical_stage == 3 and .microbatches == 4' "$m3"

# FSDP2's slot marks (compute ops of no duration on streams ag_slotN that
# bound the prefetch) are neither events nor lanes.
fs="$outdir/fsdp2-slots.plan"
printf '%s\n' 'import "hw/nvidia"' 'import "models/llama3"' 'import "frameworks/fsdp2"' \
  'train fs { model = Llama3_8B; cluster = dgx_h100(nodes = 1); framework = fsdp2; shard = 8' \
  '  micro_batch = 1; global_batch = 8; seq = 4096 }' > "$fs"
if "$PLC" --trace="$outdir/fs.json" "$fs" > /dev/null 2>&1; then pass; else fail "plc --trace on fsdp2"; fi
check "fsdp2: lanes compute, ag, rs only" \
  '[.traceEvents[] | select(.name == "thread_name") | .args.name | select(startswith("stage ") | not)] | unique == ["ag", "compute", "rs"]' "$outdir/fs.json"
check "fsdp2: no event of no duration" \
  '[.traceEvents[] | select(.ph == "X" and .args.duration == "0 s")] | length == 0' "$outdir/fs.json"

# Streaming: a 24 MB trace (bench/large.plan cut to pp = 4 and 100 layers:
# 4 stages x 32 microbatches x ~25 layers x ~7 ops x 3 lists, about 67,000
# events) is written event by event, in well under 100 MB of address space;
# built whole in memory it took 230 MB.  Skipped where plc cannot start in
# 100 MB at all (sanitizer builds reserve terabytes).
mid="$outdir/mid.plan"
sed -e 's/dense = 900; moe = 100/dense = 90; moe = 10/' -e 's/pp = 64; vpp = 4/pp = 4/' \
  -e 's/schedule = interleaved/schedule = "1f1b"/' -e 's/nodes = 1024/nodes = 64/' \
  "$top_srcdir/bench/large.plan" > "$mid"
if (ulimit -v 100000 && "$PLC" --version) > /dev/null 2>&1; then
  if (ulimit -v 100000 && exec "$PLC" --trace="$outdir/mid.json" "$mid") > /dev/null 2>&1 &&
     [ "$(jq '.traceEvents | length' "$outdir/mid.json")" -gt 60000 ]; then pass
  else fail "a 24 MB trace in 100 MB of memory"; fi
  rm -f "$outdir/mid.json"
else
  echo "(plc does not start in 100 MB of address space: the streaming case is skipped)"
fi

# Atomic writes: errors leave an old file as it was and no temporary (in a
# directory of its own: svg.sh may be writing in $outdir meanwhile).
a="$outdir/trace-atomic"
rm -rf "$a"
mkdir -p "$a"
echo old > "$a/keep.json"
printf 'let x = 1 +\n' > "$outdir/trace-bad.plan"
"$PLC" --trace="$a/keep.json" "$outdir/trace-bad.plan" > /dev/null 2>&1
if [ $? -eq 1 ] && [ "$(cat "$a/keep.json")" = old ] && [ -z "$(ls -A "$a" | grep "^keep.json.\|^\.plc-")" ]; then pass
else fail "a plan with errors must not replace the trace file"; fi
"$PLC" --trace="$outdir/no/such/dir/t.json" "$small" > /dev/null 2> "$outdir/nodir.err"
if [ $? -eq 2 ] && grep -q "cannot write" "$outdir/nodir.err"; then pass
else fail "an unwritable trace file is an I/O error (status 2)"; cat "$outdir/nodir.err"; fi
mkdir -p "$a/adir"
"$PLC" --trace="$a/adir" "$small" > /dev/null 2>&1
if [ $? -eq 2 ] && [ -d "$a/adir" ] && [ -z "$(ls -A "$a" | grep "^adir.\|^\.plc-")" ]; then pass
else fail "renaming over a directory fails cleanly"; fi
finish
