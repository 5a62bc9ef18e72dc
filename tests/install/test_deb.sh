#!/usr/bin/env bash
# Builds the DEB packages of the build tree (cpack -G DEB: kembed and
# kembed-dev), extracts each with dpkg-deb -x into a temporary root, checks
# which files each holds and runs `kembed --version` from the runtime one.
# Usage: test_deb.sh BUILD_DIR CPACK VERSION
set -euo pipefail
build=$1 cpack=$2 version=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

(cd "$tmp" && "$cpack" -G DEB --config "$build/CPackConfig.cmake" -B "$tmp/pkg" > "$tmp/cpack.log") \
  || { cat "$tmp/cpack.log"; exit 1; }
deb=$(ls "$tmp"/pkg/kembed_*.deb)
dev=$(ls "$tmp"/pkg/kembed-dev_*.deb)
for p in "$deb" "$dev"; do
  echo "package: $(basename "$p")"
  dpkg-deb -f "$p" Package Version Depends
done
# The shared libraries the binary loads must be declared (dpkg-shlibdeps).
dpkg-deb -f "$deb" Depends | grep -q scalapack || { echo "FAIL: kembed's Depends lacks ScaLAPACK"; exit 1; }
dpkg-deb -f "$dev" Depends | grep -q "kembed (= $version)" ||
  { echo "FAIL: kembed-dev does not depend on kembed $version"; exit 1; }
dpkg-deb -f "$dev" Depends | grep -q libscalapack-openmpi-dev ||
  { echo "FAIL: kembed-dev does not depend on libscalapack-openmpi-dev"; exit 1; }
dpkg-deb -x "$deb" "$tmp/root"
dpkg-deb -x "$dev" "$tmp/dev"
has() { [ -n "$(find "$1" -path "*/$2")" ]; }
for f in bin/kembed bin/kembed-plot share/doc/kembed/LICENSE; do
  has "$tmp/root" "$f" || { echo "FAIL: kembed lacks $f"; exit 1; }
done
for f in include/kembed/mpi/comm.hpp lib/libkembed.a lib/cmake/kembed/kembedConfig.cmake \
         lib/pkgconfig/kembed.pc; do
  has "$tmp/dev" "$f" || { echo "FAIL: kembed-dev lacks $f"; exit 1; }
  has "$tmp/root" "$f" && { echo "FAIL: the runtime package holds $f"; exit 1; }
done
bin=$(find "$tmp/root" -path '*/bin/kembed' -type f)
out=$("$bin" --version)
echo "$out" | head -1
head -1 <<< "$out" | grep -q "^kembed $version " || { echo "FAIL: kembed --version from the package"; exit 1; }
echo "deb test passed"
