#!/bin/sh
# cli.sh - what the plc command writes, and with what exit status, when
# assertions fail (plc(1), plc-json(5): the report is written, in every
# format, to standard output or -o, and the status is 1), when a plan has a
# real error (no -o file), and when standard output cannot be written
# (--help and --version report it: status 2).
. "$top_srcdir/tests/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 99

# One device, 2 layers x (1 ms forward + 2 ms backward) x 4 microbatches:
# a step of 24 ms.  budget is checked before evaluation (a constant), limit
# after (it reads a result).
cat > a.plan <<'EOF'
device gpu { peak = 100 TFLOPS }
link fast { bw = 100 GB/s }
cluster box { device = gpu; tier node { size = 1; link = fast } }
model tiny { layers { dense = 2 } }
framework fw { template dense { op mm: compute { time = 1 ms } } }
train t {
  model = tiny; cluster = box; framework = fw
  micro_batch = 1; global_batch = 4; seq = 8
}
train t2 = t { global_batch = 8 }
let budget = 30 ms
let limit = 30 ms
assert budget >= 24 ms, "constant"
assert t.step_time <= limit, "result"
report t
EOF



# count NAME FILE PATTERN N: FILE has N lines matching PATTERN.
count() {
  n=$(grep -c -- "$3" "$2")
  if [ "$n" -eq "$4" ]; then pass; else fail "$1: $n lines '$3' in $2, expected $4"; fi
}

# A -D that falsifies the constant assertion (and the result one): the
# report is written all the same, each assertion reported once, status 1.
run text 1 -D budget=10ms -D limit=10ms a.plan
has text text.out '^train t (a.plan:6)'
has text text.out '^  step  *24 ms'
count text text.err 'assertion failed: constant' 1
count text text.err 'assertion failed: result: 24 ms <= 10 ms is false' 1
run json 1 --format=json -D budget=10ms a.plan
has json json.out '"name": "t"'
has json json.out '"exact": "3/125"' # the step, 24 ms
run md 1 --format=md -D budget=10ms a.plan
has md md.out 't'
has md md.out '24 ms'

# -e values are printed too, with --check as without.
run check-e 1 --check -D budget=10ms -e budget a.plan
has check-e check-e.out '^10 ms$'
run eval-e 1 -D limit=10ms -e t.step_time a.plan
has eval-e eval-e.out '^24 ms$'

# -o: written when assertions fail, whether decided before evaluation or
# after; not written when the plan has an error (a cycle through results).
run o-const 1 -o const.txt -D budget=10ms a.plan
has o-const const.txt '^  step  *24 ms'
run o-result 1 -o result.txt -D limit=10ms a.plan
has o-result result.txt '^  step  *24 ms'
count o-result o-result.err 'assertion failed' 1
run o-json 1 --format=json -o result.json -D limit=10ms a.plan
has o-json result.json '"exact": "3/125"'
run o-deps 1 -MD -o deps.txt -D limit=10ms a.plan
has o-deps deps.d '^ a.plan'
run o-error 1 -o error.txt -D 't.tp=t.step_time/1s' a.plan
if [ ! -e error.txt ]; then pass; else fail "-o wrote error.txt though the plan has an error"; fi
count o-error o-error.err 'depends on its own result' 1

# Cycles through results: the runs on the cycle, and runs computed from a
# definition the cycle left in error, are not reported (no figures computed
# from error values: zeros); the others are.
cat > cyc.plan <<'EOF'
import "a.plan"
model slow = tiny { t_mm = c.step_time / 100 }
framework fw2 { template dense { op mm: compute { time = model.t_mm } } }
train c = t { model = slow; framework = fw2 }
train d = t { model = slow; framework = fw2 }
train e = t { optimizer_time = e.step_time }
report t, c, d, e
EOF
run cyc 1 cyc.plan
count cyc cyc.out '^train ' 1
has cyc cyc.out '^train t (a.plan:6)'
count cyc cyc.err 'depends on its own result' 2

# --compare: the comparison is printed when only assertions fail.
printf 'report t, t2\n' >> a.plan
run cmp 1 --compare -D limit=10ms a.plan
has cmp cmp.out '^comparison of 2 runs'
count cmp cmp.err 'assertion failed' 1
run cmp-o 1 --compare -o cmp.txt -D limit=10ms a.plan
has cmp-o cmp.txt '^comparison of 2 runs'

# A stdlib template refuses what it does not implement (plc(5), assert):
# mindspeed's moe template and megatron's fsdp option.  The same layout
# without fsdp evaluates.
cat > ms.plan <<'EOF'
import "hw/nvidia"
import "models/mixtral"
import "frameworks/mindspeed"
train moe {
  model = Mixtral_8x7B; cluster = dgx_h100(nodes = 1); framework = mindspeed
  tp = 2; dp = 4; ep = 4; micro_batch = 1; global_batch = 64; seq = 4096
  sequence_parallel = true
}
train moe_fsdp = moe { fsdp = true }
EOF
run ms-fsdp 1 --report ms.plan
count ms-fsdp ms-fsdp.err "error: template 'moe' of framework 'mindspeed' does not support this run: MindSpeed's MoE layer does not implement megatron's fsdp option" 1
count ms-fsdp ms-fsdp.err "note: train 'moe_fsdp' uses framework 'mindspeed'" 1
run ms-ok 0 -e moe.step_time ms.plan
has ms-ok ms-ok.out "^[0-9.]* m*s$"

# A write error on standard output is reported, also for --help.
if [ -w /dev/full ]; then
  for opt in --help --version; do
    plc "$opt" > /dev/full 2> full.err
    status=$?
    if [ "$status" -eq 2 ]; then pass; else fail "plc $opt > /dev/full: status $status"; fi
    count "$opt > /dev/full" full.err '^plc: error: writing standard output: ' 1
  done
fi
finish
