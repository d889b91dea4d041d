#!/bin/sh
# json.sh - `plc --format=json` checked with jq: the document parses, has
# schema 1, and holds the values plc computes exactly (the article's M3 case:
# eta = 396 ms / 3.91495526016 s), overrides, --ops and --digits as
# plc-json(5) says; every example's document keeps the quantity form; and
# ops-small's whole document (less the version) equals
# tests/golden/json-ops-small.expected (PLC_REGEN=1 rewrites it, as
# golden.sh does).
. "$top_srcdir/tests/lib.sh"
command -v jq > /dev/null || { echo "jq not installed"; exit 77; }
cd "$top_srcdir" || exit 99

# check NAME FILE EXPR [JQ OPTION]...: EXPR is true of the document in FILE.
check() {
  name=$1 file=$2 expr=$3
  shift 3
  if jq -e "$@" "$expr" "$file" > /dev/null 2> "$outdir/jq.err"; then pass
  else fail "$name: $expr"; cat "$outdir/jq.err"; fi
}

# run NAME WANT-STATUS ARGS...: plc ARGS > $outdir/NAME.json, exit status WANT.
run() {
  name=$1 want=$2
  shift 2
  "$PLC" "$@" > "$outdir/$name.json" 2> "$outdir/json-$name.stderr"
  status=$?
  if [ "$status" -eq "$want" ]; then pass
  else fail "plc $*: exit status $status, expected $want"; cat "$outdir/json-$name.stderr"; fi
}

m3=$outdir/m3.json
run m3 0 --format=json examples/m3-h100.plan
check parses "$m3" '. | type == "object"'
check schema "$m3" '.schema == 1'
check version "$m3" '.plc == $v' --arg v "$("$PLC" --version | sed 's/^plc //')"
check no-overrides "$m3" '.overrides == []'
check one-run "$m3" '.runs | length == 1'
check name "$m3" '.runs[0].name == "m3_h100" and .runs[0].file == "examples/m3-h100.plan" and .runs[0].line == 14'
check layout "$m3" '.runs[0].layout | .tp == 4 and .cp == 1 and .dp == 32 and .pp == 4 and .ep == 8 and .edp == 4 and .vpp == 2 and .world == 512 and .mu == 4 and .micro_batch == 2 and .seq == 8192 and .recompute == "full" and .schedule == "interleaved"'
check device "$m3" '.runs[0].device | .name == "H100_SXM" and .peak.exact == "989000000000000" and .peak.base_unit == "FLOP/s" and .peak.value == "989" and .peak.unit == "TFLOPS"'
check placement-dims "$m3" '[.runs[0].placement[].dim] == ["tp", "ep", "dp", "edp", "pp"]'
check placement-tp "$m3" '.runs[0].placement[0] | .size == 4 and .stride == 1 and .span == 4 and .tier == "node" and .link == "NVLink4_article" and .overridden == false and .bandwidth.all_reduce.exact == "360000000000" and .bandwidth.all_reduce.value == "360" and .bandwidth.all_reduce.unit == "GB/s"'
check placement-dp-unused "$m3" '.runs[0].placement[2] | .bandwidth == {} and .latency == null'
check critical "$m3" '.runs[0].critical_stage == 0 and .runs[0].stages == 4'

# eta exactly: 4 x 99 ms of useful compute over the step, as -e prints it
eta=$("$PLC" --exact -e m3_h100.eta examples/m3-h100.plan)
check eta-derived "$m3" '.runs[0].efficiency.eta.exact == $eta' --arg eta "$eta"
check eta "$m3" '.runs[0].efficiency.eta == {"exact": "103125000/1019519599", "base_unit": "1", "value": "10.12", "unit": "%"}'
check busy "$m3" '.runs[0].efficiency.busy.exact == "137500000/1019519599"'
check mfu-pinned "$m3" '.runs[0].efficiency.mfu == null'
check tokens "$m3" '.runs[0].efficiency.tokens_per_s | .exact == "1638400000000000/3058558797" and .base_unit == "1/s" and .value == "535700" and .unit == "tokens/s"'
check step "$m3" '.runs[0].step.time == {"exact": "3058558797/781250000", "base_unit": "s", "value": "3.915", "unit": "s"}'
check t_f "$m3" '.runs[0].step | .t_f.exact == "227979777/390625000" and .t_b.exact == "99/1000" and .per_microbatch.value == "682.6"'
check compute "$m3" '.runs[0].step.compute | .time.exact == "66/125" and .share.value == "13.49"'
check exposed-ep "$m3" '.runs[0].step.exposed.ep | .time.exact == "19267584/9765625" and .share.value == "50.4" and .share.unit == "%"'
check exposed-zero "$m3" '.runs[0].step.exposed.dp.time.exact == "0" and .runs[0].step.waits.time.value == "0"'
check dp-tail "$m3" '.runs[0].step.dp_tail | .kind == "declared" and .time.exact == "321/2000" and .sync.exact == "321/200" and .declared_hidden.exact == "9/10" and .declared_hidden.value == "90"'
check bubble "$m3" '.runs[0].bubble | .schedule == "interleaved" and .value.value == "1.024" and .value.unit == "s" and .value.exact == "199988739/195312500"'
check bubble-formula "$m3" '.runs[0].bubble.formula == "(p - 1)(t_f + t_b)/v = (4 - 1) x (583.6 ms + 99 ms) / 2"'
check rows "$m3" '[.runs[0].communication[] | .dim + " " + .primitive + " " + .phase] == ["ep all_to_all fwd", "tp all_reduce fwd", "pp p2p fwd"]'
check ep-row "$m3" '.runs[0].communication[0] | .count == 28 and .bytes_per_op.exact == "402653184" and .bytes_per_op.value == "402.7" and .bytes_per_op.unit == "MB" and .time_per_op.exact == "172032/9765625" and .exposed.exact == "4816896/9765625" and .exposed.value == "493.3" and .window.exact == "0" and .hidden.value == "0" and .reason == "on the compute stream"'
check bottleneck "$m3" '.runs[0].bottleneck | .part == "exposed" and .dim == "ep" and .what == "exposed ep communication" and .share.exact == "73400320/145645657"'
check no-ops "$m3" '.runs[0] | has("ops") | not'

# Bytes each rank moves, against the reference article's traffic figures
# (seed-numbers.md; D_TP = 2 x 8192 x 6144 x 2 B = 201,326,592 B):
#   TP all-reduce, tp = 4: 2 (3/4) D_TP = 301,989,888 B (301.99 MB), 30 per
#     microbatch: 9,059,696,640 B;
#   EP all-to-all of 2 D_TP, ep = 8: (7/8) 402,653,184 B = 352,321,536 B
#     (352.32 MB);
#   p2p: the whole 201,326,592 B;
#   FSDP all-gather of a 70B layer, 0.875e9 x 2 B, shard 8: (7/8) 1.75e9 B =
#     1,531,250,000 B (1.531 GB).
check rank-tp "$m3" '.runs[0].communication[1] | .rank_bytes_per_op.exact == "301989888" and .rank_bytes.exact == "9059696640"'
check rank-ep "$m3" '.runs[0].communication[0] | .rank_bytes_per_op.exact == "352321536" and .rank_bytes_per_op.value == "352.3" and .rank_bytes_per_op.unit == "MB"'
check rank-pp "$m3" '.runs[0].communication[2].rank_bytes_per_op.exact == "201326592"'
# "what would hide" (tests/golden/sensitivity.plan, by hand: c exposed 5 ms
# at 100 GB/s would need 1.5 GB / 10 ms = 150 GB/s, giving a 90 ms step),
# and M3's ep row, which no bandwidth hides (on the compute stream): the
# step with its all-to-alls free, 1202 ms as the text report gives it.
run sense 0 --format=json tests/golden/sensitivity.plan
check sense "$outdir/sense.json" '.runs[0].sensitivity == [{"dim": "tp", "primitive": "all_reduce", "phase": "fwd", "exposed": {"exact": "1/200", "base_unit": "s", "value": "5", "unit": "ms"}, "bandwidth": {"exact": "100000000000", "base_unit": "B/s", "value": "100", "unit": "GB/s"}, "possible": true, "bandwidth_needed": {"exact": "150000000000", "base_unit": "B/s", "value": "150", "unit": "GB/s"}, "step_if_hidden": {"exact": "9/100", "base_unit": "s", "value": "90", "unit": "ms"}}]'
check sense-none "$m3" '.runs[0].sensitivity[0] | .dim == "ep" and .possible == false and .bandwidth_needed == null and .step_if_hidden.exact == "939124557/781250000"'
run dense 0 --format=json examples/llama70b-megatron-h100.plan
check no-edp-on-dense "$outdir/dense.json" '[.runs[0].placement[].dim] == ["tp", "dp", "pp"]'
run fsdp 0 --format=json --ops examples/llama70b-fsdp2-h100.plan
check rank-fsdp "$outdir/fsdp.json" '.runs[0].communication[0] | .primitive == "all_gather" and .rank_bytes_per_op.exact == "1531250000" and .rank_bytes_per_op.value == "1.531" and .rank_bytes_per_op.unit == "GB"'
check rank-fsdp-ops "$outdir/fsdp.json" '[.runs[0].ops[] | select(.primitive == "all_gather") | .rank_bytes.exact] | unique == ["1531250000"]'
"$PLC" --digits=5 --ops examples/m3-h100.plan > "$outdir/m3-rank.txt" 2> /dev/null
for want in 'tp +all_reduce +fwd +30 +201.33 MB +301.99 MB ' 'ep +all_to_all +fwd +28 +402.65 MB +352.32 MB ' \
            'a2a\[0\] +all_to_all\(ep\) +352.32 MB ' 'ar\[0\] +all_reduce\(tp\) +301.99 MB '; do
  if grep -qE "$want" "$outdir/m3-rank.txt"; then pass; else fail "text report: no '$want'"; fi
done
"$PLC" --format=md --digits=5 --ops examples/m3-h100.plan > "$outdir/m3-rank.md" 2> /dev/null
for want in '| tp | all_reduce | fwd | 30 | 201.33 MB | 301.99 MB |' '| all_to_all(ep) | 352.32 MB |'; do
  if grep -qF "$want" "$outdir/m3-rank.md"; then pass; else fail "Markdown report: no '$want'"; fi
done

# what-if: the -D strings are recorded and take effect; the example's own
# assertions then fail (exit 1), but the document is complete
run what-if 1 --format=json -D m3_h100.ep=16 -D 'NVLink4_article.latency=1us' examples/m3-h100.plan
check overrides "$outdir/what-if.json" '.overrides == ["m3_h100.ep=16", "NVLink4_article.latency=1us"]'
check override-ep "$outdir/what-if.json" '.runs[0].layout.ep == 16 and .runs[0].placement[0].latency.exact == "1/1000000"'

# --digits rounds the value strings only; --exact changes nothing
run digits 0 --format=json --digits=6 examples/m3-h100.plan
check digits "$outdir/digits.json" '.runs[0].bubble.value.value == "1.02394" and .runs[0].efficiency.eta.value == "10.1151" and .runs[0].efficiency.eta.exact == "103125000/1019519599"'
run exact 0 --format=json --exact examples/m3-h100.plan
if cmp -s "$m3" "$outdir/exact.json"; then pass; else fail "--exact changed the JSON"; fi

# two files, two runs, one document
run two 0 --format=json examples/m3-h100.plan examples/m3-910c.plan
check two-runs "$outdir/two.json" '[.runs[].name] == ["m3_h100", "m3_910c"]'

# -e values stay plain text
if [ "$("$PLC" --format=json -e m3_h100.eta examples/m3-h100.plan)" = "0.1012" ]; then pass
else fail "-e with --format=json"; fi

# a document that cannot be written is an I/O error (exit 2)
if [ -w /dev/full ]; then
  "$PLC" --format=json examples/m3-h100.plan > /dev/full 2> "$outdir/full.stderr"
  status=$?
  if [ "$status" -eq 2 ]; then pass; else fail "--format=json > /dev/full: exit status $status"; fi
fi

# every example: a document whose quantities all have the four strings,
# exact a canonical rational
for f in examples/*.plan; do
  n=$(basename "$f" .plan)
  run "ex-$n" 0 --format=json --ops "$f"
  check "$n-quantities" "$outdir/ex-$n.json" '[.. | objects | select(has("exact"))] | length > 40 and all(.exact | test("^-?[0-9]+(/[1-9][0-9]*)?$")) and all((.value | type) == "string" and (.unit | type) == "string" and (.base_unit | type) == "string")'
  if grep -q '^search ' "$f"; then # a search example reports its search
    check "$n" "$outdir/ex-$n.json" '.schema == 1 and (.searches | length) >= 1 and all(.searches[]; (.ranked | length) >= 1)'
    continue
  fi
  check "$n" "$outdir/ex-$n.json" '.schema == 1 and (.runs | length) >= 1 and ([.runs[].ops | length] | add) > 0'
  check "$n-shares" "$outdir/ex-$n.json" '[.runs[0].step | .compute, .exposed[], .waits, .bubble, .dp_tail, .optimizer | .time.exact] | all(type == "string")'
done

# a file name that is not UTF-8 still gives valid JSON
bad=$(printf '%s/caf\351.plan' "$outdir")
cp examples/hello.plan "$bad"
run latin1 0 --format=json "$bad"
check latin1 "$outdir/latin1.json" '.runs[0].file | endswith("caf?.plan")'

# the whole document of a small run with --ops, less the version
cd tests/golden || exit 99
run ops-small 0 --format=json --ops ops-small.plan
jq 'del(.plc)' "$outdir/ops-small.json" > "$outdir/json-ops-small.expected"
if [ -n "${PLC_REGEN:-}" ]; then # not when plc failed: run has said so
  if [ "$status" -eq 0 ]; then regen json-ops-small.expected "$outdir/json-ops-small.expected" ops-small
  else regen_refused; fi
fi
if same json-ops-small.expected "$outdir/json-ops-small.expected"; then pass
else fail "ops-small: JSON differs"; fi
# memory: tests/golden/memory-small.plan derives every figure by hand
mem=$outdir/mem.json
run mem 0 --format=json memory-small.plan
check memory-capacity "$mem" '.runs[0].memory | .capacity.exact == "80000000000" and .reserve.exact == "2000000000" and .usable.exact == "78000000000" and .fits == true and .peak_stage == 0 and .peak.exact == "37000000000" and .in_flight_note == null'
check memory-stage0 "$mem" '.runs[0].memory.stages[0] | .weights.exact == "7000000000" and .grads.exact == "4000000000" and .optimizer.exact == "6000000000" and .activations.exact == "16000000000" and .in_flight == 4 and .max_in_flight == 4 and .buffers.exact == "4000000000" and .peak.exact == "37000000000" and .headroom.exact == "41000000000"'
check memory-stages "$mem" '[.runs[0].memory.stages[] | .in_flight] == [4, 3, 2, 1]'
check memory-null "$m3" '.runs[0] | has("memory")'
# the bubble's block-level reference (tests/golden/bubble-uneven.plan: 3 ms
# where the formula gives 6 ms)
run bubble 0 --format=json bubble-uneven.plan
check bubble-measured "$outdir/bubble.json" '.runs[0].bubble | .value.exact == "3/1000" and .measured and .formula_value.exact == "3/500" and .warmup.exact == "1/1000" and .steady.exact == "0" and .cooldown.exact == "1/500" and .critical_stage == 1 and .critical_device == 1 and .why_formula == null'
# search: tests/golden/search-small.plan derives the ranking by hand
srch=$outdir/search.json
run search 0 --format=json search-small.plan
check search-head "$srch" '.runs == [] and (.searches | length) == 1 and (.searches[0] | .name == "s" and .train == "t" and .line == 42 and .direction == "minimize" and .objective == "step_time" and .top == 5 and .vary == ["tp", "pp", "micro_batch"] and .entries == [{"field": "dp", "plan": "8 / (tp * pp)"}] and .space == 18 and .shard == {"index": 1, "count": 1} and .evaluated == 18 and .passed == 9)'
check search-skipped "$srch" '.searches[0].skipped == [{"reason": "require peak_memory < 30 GB is false", "count": 4}, {"reason": "does not fit in memory", "count": 3}, {"reason": "'"'dp'"' must be a whole number of at least N", "count": 2}]'
check search-rows "$srch" '[.searches[0].ranked[] | [.rank, .index, ([.values[].value] | join(" ")), .step_time.exact, .peak_memory.exact, .bubble.exact]] == [[1, 12, "4 1 1", "24/25", "18000000000", "0"], [2, 13, "4 1 2", "24/25", "20000000000", "0"], [3, 14, "4 2 1", "51/50", "10000000000", "3/50"], [4, 15, "4 2 2", "27/25", "12000000000", "3/25"], [5, 8, "2 2 1", "27/25", "20000000000", "3/25"]]'
check search-row3 "$srch" '.searches[0].ranked[2] | .mfu.exact == "16/17" and .tokens_per_s.exact == "800/51" and .objective.exact == "51/50" and .objective_dim == [0, 1, 0] and .exposed == {} and .bottleneck.part == "bubble" and .bottleneck.share.exact == "1/17"'
run search-shard 0 --shard=2/3 search-small.plan
check search-shard "$outdir/search-shard.json" '.searches[0] | .shard == {"index": 2, "count": 3} and .evaluated == 6 and ([.ranked[].index] | all(. % 3 == 1))'
# the whole step (tests/golden/step-sharing.plan derives it by hand: shared,
# 8 ms = 6 ms compute + 2 ms dp exposed, as the report's step with links
# shared in its lists; dedicated, 6 ms), and a step too
# large to simulate (tests/errors/sim-result-unknown.plan: 1,600,000 ops)
run whole 0 --format=json --whole-step step-sharing.plan
check whole-shared "$outdir/whole.json" '.runs[0].whole_step | .simulated == true and .why == null and .shared_links == true and .ops == 5 and .critical_stage == 0 and .time.exact == "1/125" and .compute.exact == "3/500" and .exposed == {"dp": {"exact": "1/500", "base_unit": "s", "value": "2", "unit": "ms"}} and .fill.exact == "0" and .other_stream.exact == "0" and .wait_stage.exact == "0" and .drain.exact == "0" and .report_time.exact == "1/125" and .difference.exact == "0"'
check whole-dedicated "$outdir/whole.json" '.runs[1].whole_step | .shared_links == false and .time.exact == "3/500" and .exposed == {} and .difference.exact == "0"'
# dualpipev's F&B blocks on its critical device (report-dualpipev.plan,
# derived in step-dualpipev.plan: each chunk's F 1 ms and B 2 ms, compute
# only, so an F&B overlaps nothing: 3 ms), one per pairing it runs
run fb 0 --format=json report-dualpipev.plan
check fb-blocks "$outdir/fb.json" '[.runs[0].step.fb_blocks[] | [.forward_of, .backward_of, .count, .time.exact, .t_f.exact, .t_b.exact]] == [[0, 3, 1, "3/1000", "1/1000", "1/500"], [3, 0, 2, "3/1000", "1/1000", "1/500"]]'
run whole-big 1 --format=json --whole-step ../errors/sim-result-unknown.plan
check whole-too-big "$outdir/whole-big.json" '.runs[0].whole_step | .simulated == false and .why == "the whole step has 1600000 ops, more than the 1000000 the simulation takes" and .time == null and .exposed == null and .ops == null'
finish
