#!/bin/sh
# make-deps.sh - plc -MD in a real makefile: the output is rebuilt when an
# imported file changes, and only then; -M writes the rule with every
# import; -MP adds phony rules; -o leaves no file behind on error.
. "$top_srcdir/tests/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 99
printf 'let S = 100 MB\n' > lib.plan
printf 'import "lib"\nlet T = S / (50 GB/s)\n' > main.plan
cat > Makefile <<MK
main.out: main.plan
	\$(PLC) -MD -MP -o \$@ -e T main.plan
-include main.d
MK
mk() { make -s PLC="${PLC_WRAP:-} $PLC" "$@" 2>&1; }

mk > make1.log
if [ "$(cat main.out)" = "2 ms" ]; then pass; else fail "first build: $(cat main.out make1.log)"; fi
if grep -q '^ lib.plan' main.d && grep -q '^lib.plan:$' main.d; then pass
else fail "main.d lacks lib.plan or its phony rule"; cat main.d; fi

if mk -q main.out; then pass; else fail "main.out is rebuilt though nothing changed"; fi

sleep 1 # make compares modification times in seconds on some file systems
printf 'let S = 200 MB\n' > lib.plan
if ! mk -q main.out; then pass; else fail "a change of lib.plan does not make main.out stale"; fi
mk > make2.log
if [ "$(cat main.out)" = "4 ms" ]; then pass; else fail "rebuild: $(cat main.out make2.log)"; fi

# -M: the rule on standard output, instead of the value
plc -M -e T main.plan > rule.txt
if [ "$(head -n 1 rule.txt)" = "main.report: \\" ] && grep -q '^ lib.plan$' rule.txt; then pass
else fail "-M rule"; cat rule.txt; fi

# -o: on error no file is left and the old one stays
printf 'let S = 1 s +\n' > lib.plan
if plc -o main.out -e T main.plan 2> err.txt; then fail "a broken plan succeeded"; else pass; fi
if [ "$(cat main.out)" = "4 ms" ] && [ "$(ls -A | grep -c '^main.out\|^\.plc-')" -eq 1 ]; then pass
else fail "-o after an error: $(ls)"; fi
finish
