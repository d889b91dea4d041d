#!/bin/sh
# outputs.sh - the files plc writes (-o, --trace, --svg, -MD): their mode
# follows the umask; symbolic links are followed and stay links; devices,
# FIFOs and /dev/stdout are written in place, never replaced by a regular
# file; a long legal name works (the temporary name is short); no
# temporary file survives a signal; make can read a prerequisite with ':'.
. "$top_srcdir/tests/lib.sh"
small="$top_srcdir/tests/golden/ir-small.plan"
d="$outdir/outputs"
rm -rf "$d"
mkdir -p "$d"
x="$d/x.plan"
printf 'let A = 42\nlet B = 6\n' > "$x"

# leftovers DIR: the names in DIR that no test made (temporary files).
leftovers() { ls -A "$1" | grep '^\.plc-\|\.json\.\|\.txt\.\|\.svg\.\|\.d\.'; }
mode() { stat -c %a "$1"; }

# ---- modes: 0666 less the umask, for every kind of output -------------------
(umask 022 && plc -MD -o "$d/r.txt" --trace="$d/t.json" --svg="$d/p.svg" "$small" > /dev/null)
for f in r.txt t.json p.svg r.d; do
  if [ "$(mode "$d/$f")" = 644 ]; then pass; else fail "umask 022: $f is $(mode "$d/$f"), not 644"; fi
done
(umask 002 && plc -o "$d/r.txt" -e A "$x" > /dev/null)
if [ "$(mode "$d/r.txt")" = 664 ]; then pass; else fail "umask 002: r.txt is $(mode "$d/r.txt")"; fi
(umask 077 && plc -o "$d/r.txt" -e A "$x" > /dev/null)
if [ "$(mode "$d/r.txt")" = 600 ]; then pass; else fail "umask 077: r.txt is $(mode "$d/r.txt")"; fi

# ---- symbolic links: the target is written (atomically), the link stays -----
mkdir -p "$d/sub"
echo old > "$d/sub/real.txt"
ln -s sub/real.txt "$d/link.txt"           # relative to the link's directory
ln -s "$d/link.txt" "$d/link2.txt"          # a link to a link
plc -o "$d/link2.txt" -e A "$x" > /dev/null
if [ -L "$d/link.txt" ] && [ -L "$d/link2.txt" ] && [ "$(cat "$d/sub/real.txt")" = 42 ]; then pass
else fail "-o through two links: $(ls -l "$d" | tr '\n' ' ')"; fi
ln -s nothing-yet.txt "$d/dangling.txt"
plc -o "$d/dangling.txt" -e B "$x" > /dev/null
if [ -L "$d/dangling.txt" ] && [ "$(cat "$d/nothing-yet.txt" 2> /dev/null)" = 6 ]; then pass
else fail "-o through a dangling link creates its target"; fi
ln -s loop-b "$d/loop-a"
ln -s loop-a "$d/loop-b"
plc -o "$d/loop-a" -e A "$x" > /dev/null 2> "$d/loop.err"
if [ $? -eq 2 ] && grep -q "cannot write.*symbolic links" "$d/loop.err"; then pass
else fail "a loop of links is an I/O error: $(cat "$d/loop.err")"; fi

# ---- what is not a regular file is written in place --------------------------
mkfifo "$d/fifo"
# The reader gives up by itself if plc never opens the FIFO (opening it
# for writing here to release the reader would race with its exit).
timeout 20 cat "$d/fifo" > "$d/from-fifo.txt" &
reader=$!
plc -o "$d/fifo" -e A "$x" > /dev/null
if [ -p "$d/fifo" ]; then pass; else fail "-o replaced a FIFO"; fi
wait "$reader"
if [ "$(cat "$d/from-fifo.txt")" = 42 ]; then pass; else fail "-o through a FIFO"; fi
out=$(plc -o /dev/stdout -e A "$x" 2>&1 | cat)
if [ "$out" = 42 ]; then pass; else fail "-o /dev/stdout into a pipe: $out"; fi
echo first > "$d/append.txt"
plc -o /dev/stdout -e A "$x" >> "$d/append.txt"
if [ "$(cat "$d/append.txt" | tr '\n' ' ')" = "first 42 " ]; then pass
else fail "-o /dev/stdout with >>: $(cat "$d/append.txt")"; fi
# Device nodes of our own (as root), never the system's /dev/null.
if mknod "$d/null" c 1 3 2> /dev/null && mknod "$d/full" c 1 7 2> /dev/null; then
  plc -o "$d/null" -e A "$x" > /dev/null
  if [ $? -eq 0 ] && [ -c "$d/null" ]; then pass; else fail "-o onto a null device replaced it"; fi
  plc --trace="$d/full" "$small" > /dev/null 2> "$d/full.err"
  if [ $? -eq 2 ] && [ -c "$d/full" ] && grep -q "cannot write.*No space left" "$d/full.err"; then pass
  else fail "--trace onto a full device: $(cat "$d/full.err")"; ls -l "$d/full"; fi
else
  echo "(no mknod: the device-node cases are skipped)"
fi

# ---- a 250-character name: legal (NAME_MAX is 255), the temporary is short ---
long=$(printf '%0250d' 0 | tr 0 a)
if plc -o "$d/$long" -e A "$x" > /dev/null 2> "$d/long.err" && [ "$(cat "$d/$long")" = 42 ]; then pass
else fail "-o with a 250-character name: $(cat "$d/long.err")"; fi

# ---- signals: the temporary file goes with the process -----------------------
# A file size limit kills plc with SIGXFSZ in the middle of the trace.
mkdir -p "$d/sig"
(ulimit -f 4 && exec "$PLC" --trace="$d/sig/big.json" "$top_srcdir/examples/m3-megatron.plan") \
  > /dev/null 2>&1
st=$?
if [ $st -gt 128 ] && [ -z "$(ls -A "$d/sig")" ]; then pass
else fail "killed by SIGXFSZ (status $st): left $(ls -A "$d/sig")"; fi
# SIGTERM and SIGHUP while plc waits for its plan on standard input, its -o
# file open (a background job ignores SIGINT; test_timeline covers it).
for sig in TERM HUP; do
  rm -f "$d/sig/in"
  mkfifo "$d/sig/in"
  "$PLC" -o "$d/sig/out.txt" - < "$d/sig/in" > /dev/null 2>&1 &
  pid=$!
  exec 3> "$d/sig/in"
  n=0
  while [ -z "$(ls -A "$d/sig" | grep '^\.plc-')" ] && [ $n -lt 100 ]; do sleep 0.05; n=$((n + 1)); done
  kill -s "$sig" "$pid"
  # A signal ignored when the suite started (nohup ignores SIGHUP) stays
  # ignored in plc, as in any Unix tool: say so rather than hang.
  k=0
  while kill -0 "$pid" 2> /dev/null && [ $k -lt 100 ]; do sleep 0.05; k=$((k + 1)); done
  ignored=
  if kill -0 "$pid" 2> /dev/null; then ignored=1; kill -s KILL "$pid"; fi
  wait "$pid"
  st=$?
  exec 3>&-
  rm -f "$d/sig/in"
  if [ -n "$ignored" ]; then
    rm -f "$d"/sig/.plc-* # SIGKILL leaves it: nothing can remove it then
    echo "note: SIG$sig is ignored in this environment (nohup?): not checked"
  elif [ $n -lt 100 ] && [ $st -gt 128 ] && [ -z "$(ls -A "$d/sig")" ]; then pass
  else fail "SIG$sig (status $st, waited $n): left $(ls -A "$d/sig")"; fi
done

# ---- -MD: a prerequisite with ':' read back by make --------------------------
mkdir -p "$d/mk"
printf 'let S = 100 MB\n' > "$d/mk/m:n.plan"
printf 'out.txt: m\\:n.plan\n\t$(PLC) -MD -o out.txt -e S m\\:n.plan\n-include out.d\n' > "$d/mk/Makefile"
(cd "$d/mk" && make -s PLC="$PLC" > make.log 2>&1 && make -q > make-q.log 2>&1)
if [ $? -eq 0 ] && grep -q '^ m\\:n.plan$' "$d/mk/out.d"; then pass
else fail "-MD with ':': $(cat "$d/mk/out.d" "$d/mk/make.log" "$d/mk/make-q.log")"; fi

# ---- nothing left behind anywhere --------------------------------------------
if [ -z "$(leftovers "$d")" ]; then pass; else fail "temporary files left: $(leftovers "$d")"; fi
finish
