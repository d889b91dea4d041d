#!/bin/sh
# install-check.sh - check that an installed plc runs every installed example
# with nothing but what `make install` put under its prefix.
#
#   sh scripts/install-check.sh [BUILDDIR]      (default: the current directory)
#
# BUILDDIR is a configured build tree (it has a Makefile).  The script makes
# a distribution tarball there, builds it in a temporary directory with
# `./configure --prefix=$tmp/old`, configures it again with
# `--prefix=$tmp/inst` and installs it (as a user who changes their mind
# would: the stdlib directory compiled into plc must follow).  With the
# unpacked tree still there it checks that the installed plc reads its
# imports from $tmp/inst and never from the source tree, even for a file
# missing from the installation, while the build tree's plc reads the
# source tree's stdlib.  Then it deletes the unpacked source and build tree,
# and runs `$tmp/inst/bin/plc FILE` for every file under
# $tmp/inst/share/plc/examples (examples/article/ holds imported parts, not
# plans to run), from a directory outside any source tree, with PLC_PATH
# unset.  Every run must exit 0 (their assertions hold).  Nothing is copied
# by hand and the build tree is left as it was, but for the tarball, which
# is removed again.
#
# Why not `make install prefix=$tmp` in the build tree: the directory of the
# installed stdlib is compiled into plc (PLC_STDLIB_DIR in plc_paths.h, from
# the prefix given to configure), and on purpose make does not rebuild plc
# when prefix changes on its command line (stow-like installs keep the
# configured paths).  Such a plc would look for its stdlib under the
# configure prefix.  Hence a configure with --prefix, and the source tree
# removed before the examples run, so that nothing but the installation can
# serve them.
set -eu

build=${1:-.}
[ -f "$build/Makefile" ] || { echo "install-check: $build is not a configured build tree" >&2; exit 2; }
build=$(cd "$build" && pwd)

# Which file serves `import "hw/nvidia"` is read from plc -M's rule.
deps_of() {
  printf 'import "hw/nvidia"\n' > "$tmp/elsewhere/probe.plan"
  "$1" -M "$tmp/elsewhere/probe.plan" > "$tmp/deps.out" 2>&1 || { cat "$tmp/deps.out"; return 1; }
}

# $1: the unpacked source and build tree, still in place.
check_stdlib() {
  echo "== the installed plc reads the stdlib of its own prefix"
  deps_of "$plc"
  grep -qF "$stdlib/hw/nvidia.plan" "$tmp/deps.out" || {
    echo "install-check: installed plc does not import $stdlib/hw/nvidia.plan:" >&2
    cat "$tmp/deps.out" >&2; exit 1; }
  echo "== ... and never the source tree's, even for a file not installed"
  mv "$stdlib/hw/nvidia.plan" "$tmp/nvidia.plan"
  if "$plc" --check "$tmp/elsewhere/probe.plan" > "$tmp/deps.out" 2>&1; then
    echo "install-check: installed plc found hw/nvidia outside its prefix" >&2; exit 1
  fi
  grep -q 'hw/nvidia' "$tmp/deps.out" || { cat "$tmp/deps.out" >&2; exit 1; }
  mv "$tmp/nvidia.plan" "$stdlib/hw/nvidia.plan"
  echo "== the build tree's plc reads the source tree's stdlib"
  deps_of "$1/plc"
  grep -qF "$1/stdlib/hw/nvidia.plan" "$tmp/deps.out" || {
    echo "install-check: uninstalled plc does not import $1/stdlib/hw/nvidia.plan:" >&2
    cat "$tmp/deps.out" >&2; exit 1; }
}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/plc-install-check.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
tmp=$(cd "$tmp" && pwd -P) # -M names files by their real directories

echo "== make dist in $build"
( cd "$build" && make dist > "$tmp/dist.log" 2>&1 ) || { cat "$tmp/dist.log"; exit 1; }
tarball=$(ls -t "$build"/plc-*.tar.gz | head -n 1)
mv "$tarball" "$tmp/"
tarball=$tmp/$(basename "$tarball")

echo "== configure --prefix=$tmp/old, make; configure --prefix=$tmp/inst, make install"
mkdir "$tmp/src"
tar -xzf "$tarball" -C "$tmp/src"
src=$(ls -d "$tmp"/src/plc-*)
( cd "$src" && ./configure --prefix="$tmp/old" && make -j2 &&
  ./configure --prefix="$tmp/inst" && make install ) \
  > "$tmp/build.log" 2>&1 || { tail -n 40 "$tmp/build.log"; exit 1; }

plc=$tmp/inst/bin/plc
stdlib=$tmp/inst/share/plc/stdlib
examples=$tmp/inst/share/plc/examples
[ -x "$plc" ] || { echo "install-check: $plc was not installed" >&2; exit 1; }
[ -d "$stdlib" ] || { echo "install-check: no installed stdlib" >&2; exit 1; }
[ -d "$examples/article" ] || { echo "install-check: no installed examples/article" >&2; exit 1; }

mkdir "$tmp/elsewhere"
cd "$tmp/elsewhere"
unset PLC_PATH
check_stdlib "$src"

# The unpacked tree could stand in for a missing installed file: remove it.
rm -rf "$tmp/src" "$tarball"
passed=0
failed=0
for f in "$examples"/*.plan; do
  if "$plc" "$f" > "$tmp/run.out" 2>&1; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAIL: $plc $f"
    cat "$tmp/run.out"
  fi
done
echo "$passed passed, $failed failed"
[ "$passed" -gt 0 ] && [ "$failed" -eq 0 ]
