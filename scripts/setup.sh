#!/bin/sh
# setup.sh - install what plc needs to build (Debian packages), then
# configure and build it in the source tree.
#
#   scripts/setup.sh            install missing packages, configure, make
#   scripts/setup.sh --deps     only install the packages
#
# Needs root (or sudo) only when a package is missing.
set -eu
cd "$(dirname "$0")/.."

PACKAGES="gcc make flex bison autoconf automake pkg-config libgmp-dev libcunit1-dev mandoc
  libjansson-dev libxml2-utils jq"

missing=""
for p in $PACKAGES; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "setup: installing$missing"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update
  # shellcheck disable=SC2086
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends $missing
fi
[ "${1:-}" = "--deps" ] && exit 0

[ -x configure ] || autoreconf -fi
[ -f Makefile ] || ./configure
make -j"$(nproc 2>/dev/null || echo 2)"
