#!/bin/sh
# stdlib-path.sh - which stdlib serves `import "hw/nvidia"` (read from the
# rule plc -M writes): the build tree's plc reads its source tree's stdlib;
# the same binary copied elsewhere is an installed plc, which never falls
# back to the source tree it was built from (plc(5), IMPORTS).  That the
# installed stdlib of the configured prefix is read, also after configure
# changed the prefix, is checked by scripts/install-check.sh (CI).
# Set by the makefile: PLC, top_srcdir.
: "${PLC:?PLC must name the plc binary}"
: "${top_srcdir:?top_srcdir must be set}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/plc-stdlib-path.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT INT TERM
src=$(cd "$top_srcdir" && pwd -P)
printf 'import "hw/nvidia"\n' > "$tmp/probe.plan"
failed=0
unset PLC_PATH

# The directory of the hw/nvidia.plan a rule names, with links and ".."
# resolved (a VPATH build, as in make distcheck, names it through "..").
nvidia_dir() {
  for w in $(tr -d '\\' < "$1"); do
    case "$w" in */hw/nvidia.plan) (cd "${w%/nvidia.plan}" 2> /dev/null && pwd -P); return ;; esac
  done
}

"$PLC" -M "$tmp/probe.plan" > "$tmp/built.d" 2>&1 || { cat "$tmp/built.d"; failed=1; }
[ "$(nvidia_dir "$tmp/built.d")" = "$src/stdlib/hw" ] ||
  { echo "FAIL: the build tree's plc does not read $src/stdlib"; cat "$tmp/built.d"; failed=1; }

mkdir "$tmp/bin"
cp "$PLC" "$tmp/bin/plc"
"$tmp/bin/plc" -M "$tmp/probe.plan" > "$tmp/moved.d" 2>&1
if [ "$(nvidia_dir "$tmp/moved.d")" = "$src/stdlib/hw" ]; then
  echo "FAIL: a plc outside its build tree reads the source tree's stdlib"
  cat "$tmp/moved.d"
  failed=1
fi
[ $failed = 0 ] && echo "stdlib paths: ok"
exit $failed
