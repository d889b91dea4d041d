#!/bin/sh
# install-check.sh - check that an installed plc runs every installed example
# with nothing but what `make install` put under its prefix.
#
#   sh scripts/install-check.sh [BUILDDIR]      (default: the current directory)
#
# BUILDDIR is a configured build tree (it has a Makefile).  The script makes
# a distribution tarball there, builds it in a temporary directory with
# `./configure --prefix=$tmp/inst`, installs it, deletes the unpacked source
# and build tree, and then runs `$tmp/inst/bin/plc FILE` for every file under
# $tmp/inst/share/plc/examples (examples/article/ holds imported parts, not
# plans to run), from a directory outside any source tree, with PLC_PATH
# unset.  Every run must exit 0 (their assertions hold).  Nothing is copied
# by hand and the build tree is left as it was, but for the tarball, which
# is removed again.
#
# Why not `make install prefix=$tmp` in the build tree: the directory of the
# installed stdlib is compiled into plc (PLC_STDLIB_DIR, from the prefix
# given to configure), and make does not rebuild plc when prefix changes on
# its command line.  Such a plc looks for its stdlib under the configure
# prefix (/usr/local by default), finds none, and falls back to the source
# tree it was built from (plc(5), IMPORTS): the examples would pass without
# testing the installation.  Hence a fresh configure with --prefix, and the
# source tree removed before the examples run, so that the fallback cannot
# hide a missing installed file.
set -eu

build=${1:-.}
[ -f "$build/Makefile" ] || { echo "install-check: $build is not a configured build tree" >&2; exit 2; }
build=$(cd "$build" && pwd)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/plc-install-check.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

echo "== make dist in $build"
( cd "$build" && make dist > "$tmp/dist.log" 2>&1 ) || { cat "$tmp/dist.log"; exit 1; }
tarball=$(ls -t "$build"/plc-*.tar.gz | head -n 1)
mv "$tarball" "$tmp/"
tarball=$tmp/$(basename "$tarball")

echo "== configure --prefix=$tmp/inst, make, make install"
mkdir "$tmp/src"
tar -xzf "$tarball" -C "$tmp/src"
src=$(ls -d "$tmp"/src/plc-*)
( cd "$src" && ./configure --prefix="$tmp/inst" && make -j2 && make install ) \
  > "$tmp/build.log" 2>&1 || { tail -n 40 "$tmp/build.log"; exit 1; }

# The unpacked tree is plc's fallback stdlib: remove it.
rm -rf "$tmp/src" "$tarball"

plc=$tmp/inst/bin/plc
examples=$tmp/inst/share/plc/examples
[ -x "$plc" ] || { echo "install-check: $plc was not installed" >&2; exit 1; }
[ -d "$tmp/inst/share/plc/stdlib" ] || { echo "install-check: no installed stdlib" >&2; exit 1; }
[ -d "$examples/article" ] || { echo "install-check: no installed examples/article" >&2; exit 1; }

mkdir "$tmp/elsewhere"
cd "$tmp/elsewhere"
unset PLC_PATH
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
