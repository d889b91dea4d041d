#!/bin/sh
# svg.sh - --svg=FILE draws well-formed SVG (xmllint) with its legend and
# the ops of tests/golden/ir-small.plan where hand arithmetic puts them.
# Stage 0's microbatch spans 505.106 ms (t_f 125.102 ms, then the backward
# until its last reduce-scatter ends at 380.004 ms) over 1010 pixels from
# x = 150, so a time t sits at 150 + round(t x 1010 / 505.106 ms):
#   L0 mm runs 5.001 .. 45.001 ms: x 160 .. 240, drawn 79 wide (a
#   one-pixel gap separates neighbours);
#   the first all-gather, 0 .. 5.001 ms, is exposed all along: a red line
#   under the ag lane (y 108 + 18 - 5) from x 150, 10 wide, and the compute
#   stream's wait for it shaded on the compute lane (y 86).
. "$top_srcdir/tests/lib.sh"
command -v xmllint > /dev/null || { echo "xmllint is needed (apt-get install libxml2-utils)"; exit 99; }
small="$top_srcdir/tests/golden/ir-small.plan"
svg="$outdir/small.svg"
rm -f "$svg"

# has NAME STRING FILE: the file contains the string.
has() {
  if grep -qF -- "$2" "$3"; then pass; else fail "$1: no '$2' in $3"; fi
}

if "$PLC" --svg="$svg" "$small" > /dev/null 2> "$outdir/svg.err"; then pass
else fail "plc --svg exit status"; cat "$outdir/svg.err"; fi
if xmllint --noout "$svg" 2> "$outdir/xmllint.err"; then pass
else fail "xmllint"; head -5 "$outdir/xmllint.err"; fi
has "legend" '>exposed communication</text>' "$svg"
has "legend" '>compute stream waits for it</text>' "$svg"
has "legend" '>all_gather</text>' "$svg"
has "legend" '>reduce_scatter</text>' "$svg"
has "axis" '>time (ms)</text>' "$svg"
has "stage heading" '>stage 0 (critical)</text>' "$svg"
has "stage heading" '>t_f 125.1 ms + t_b 380 ms; exposed communication 25.11 ms</text>' "$svg"
has "L0 mm" '<rect x="160" y="86" width="79" height="18" fill="#4e79a7"><title>L0 mm (fwd): compute, 5.001 ms to 45 ms, 40 ms</title></rect>' "$svg"
has "exposed all-gather" '<rect x="150" y="121" width="10" height="5" fill="#d62728"/>' "$svg"
has "the wait for it" '<rect x="150" y="86" width="10" height="18" fill="#f7c4c4"><title>the compute stream waits 5.001 ms for ag</title></rect>' "$svg"
has "the all-gather's tooltip" 'over shard n=2; exposed 5.001 ms: consumer follows at once' "$svg"

# The realistic M3 plan: four stages, well-formed.
# The whole step at block level under it (tests/trace.sh derives the
# times): 1F1B, makespan 1165.11 ms over 1010 pixels, so t sits at
# 150 + round(t x 1010 / 1165.11 ms): stage 0's F0 0 .. 125.102 ms at
# x 150 .. 258 (107 wide, a pixel between neighbours), its B0 405.102 ..
# 785.106 ms at 501 .. 831; stage 1's lane 22 pixels lower.
has "step panel" '>whole step, block level: 1f1b schedule, 2 microbatches, 1.165 s</text>' "$svg"
has "step F0" '<rect x="150" y="364" width="107" height="18" fill="#4e79a7"><title>stage 0: F(mb 0, chunk 0), 0 s to 125.1 ms</title></rect>' "$svg"
has "step B0" '<rect x="501" y="364" width="329" height="18" fill="#59a14f">' "$svg"
has "step stage 1 F0" '<rect x="258" y="386" width="69" height="18" fill="#4e79a7">' "$svg"
if grep -q '<polyline' "$svg"; then fail "a memory line without memory sections"; else pass; fi
# With memory (tests/golden/memory-small.plan): a red memory line per stage.
msvg="$outdir/mem.svg"
if "$PLC" --svg="$msvg" "$top_srcdir/tests/golden/memory-small.plan" > /dev/null 2>&1 &&
   xmllint --noout "$msvg" 2> /dev/null; then pass
else fail "plc --svg on memory-small"; fi
n=$(grep -c '<polyline fill="none" stroke="#d62728"' "$msvg")
if [ "$n" -eq 4 ]; then pass; else fail "memory-small: $n memory lines, expected 4"; fi
has "memory highest" 'memory in red, highest 37 GB' "$msvg"
# A long step: 4000 microbatches x 8 blocks (4 stages, F and B) = 32,000
# blocks, more than 20,000: the first and last 20,000 / (2 x 8) = 1250
# microbatches are drawn at their true times, 1250 .. 2749 elided.
lsvg="$outdir/long.svg"
if "$PLC" --svg="$lsvg" -D t.global_batch=8000 "$top_srcdir/tests/golden/memory-small.plan" \
     > /dev/null 2>&1; xmllint --noout "$lsvg" 2> /dev/null; then pass
else fail "plc --svg on a long step"; fi
has "long step elided" 'microbatches 1250 to 2749 elided, the others at their true times' "$lsvg"
n=$(grep -c 'height="18" fill="#\(4e79a7\|59a14f\)"><title>stage' "$lsvg")
if [ "$n" -eq 20000 ]; then pass; else fail "long step: $n blocks drawn, expected 20000"; fi

m3="$outdir/m3.svg"
if "$PLC" --svg="$m3" "$top_srcdir/examples/m3-megatron.plan" > /dev/null 2>&1 &&
   xmllint --noout "$m3" 2> /dev/null; then pass
else fail "plc --svg on m3-megatron"; fi
n=$(grep -c 'font-weight="bold">stage [0-3]\( (critical)\)\{0,1\}</text>' "$m3")
if [ "$n" -eq 4 ]; then pass; else fail "m3: $n stage headings, expected 4"; fi
has "m3 legend" '>all_to_all</text>' "$m3"

# FSDP2's slot marks (ops of no duration on streams ag_slotN) get no lane.
fs="$outdir/svg-fsdp2-slots.plan"
printf '%s\n' 'import "hw/nvidia"' 'import "models/llama3"' 'import "frameworks/fsdp2"' \
  'train fs { model = Llama3_8B; cluster = dgx_h100(nodes = 1); framework = fsdp2; shard = 8' \
  '  micro_batch = 1; global_batch = 8; seq = 4096 }' > "$fs"
if "$PLC" --svg="$outdir/fs.svg" "$fs" > /dev/null 2>&1 && ! grep -q 'ag_slot' "$outdir/fs.svg"; then pass
else fail "fsdp2: a lane for the slot marks"; fi

# Two runs, one under the other, each with its own critical stage.
two="$outdir/two.svg"
if "$PLC" --svg="$two" "$small" "$top_srcdir/examples/llama70b-fsdp2-h100.plan" > /dev/null 2>&1 &&
   xmllint --noout "$two" 2> /dev/null; then pass
else fail "plc --svg with two runs"; fi
has "first run" '>plc timeline: train small</text>' "$two"
has "second run" '>plc timeline: train llama70b_fsdp2</text>' "$two"
n=$(grep -c '>stage 0 (critical)</text>' "$two")
if [ "$n" -eq 2 ]; then pass; else fail "two runs: $n critical stage 0 headings, expected 2"; fi

# Atomic writes: a failed run leaves the old picture alone (in a directory
# of its own: trace.sh may be writing in $outdir meanwhile).
a="$outdir/svg-atomic"
rm -rf "$a"
mkdir -p "$a"
echo old > "$a/keep.svg"
printf 'let x = 1 +\n' > "$outdir/svg-bad.plan"
"$PLC" --svg="$a/keep.svg" "$outdir/svg-bad.plan" > /dev/null 2>&1
if [ $? -eq 1 ] && [ "$(cat "$a/keep.svg")" = old ] && [ -z "$(ls -A "$a" | grep "^keep.svg.\|^\.plc-")" ]; then pass
else fail "a plan with errors must not replace the picture"; fi
"$PLC" --svg="$outdir/no/such/dir/x.svg" "$small" > /dev/null 2>&1
if [ $? -eq 2 ]; then pass; else fail "an unwritable picture is an I/O error (status 2)"; fi
finish
