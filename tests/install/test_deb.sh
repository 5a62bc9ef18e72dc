#!/usr/bin/env bash
# Builds the DEB package of the build tree (cpack -G DEB), extracts it with
# dpkg-deb -x into a temporary root and runs `kembed --version` from there.
# Usage: test_deb.sh BUILD_DIR CPACK VERSION
set -euo pipefail
build=$1 cpack=$2 version=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

(cd "$tmp" && "$cpack" -G DEB --config "$build/CPackConfig.cmake" -B "$tmp/pkg" > "$tmp/cpack.log") \
  || { cat "$tmp/cpack.log"; exit 1; }
deb=$(ls "$tmp"/pkg/kembed_*.deb)
echo "package: $(basename "$deb")"
dpkg-deb -f "$deb" Package Version Depends
# The shared libraries the binary loads must be declared (dpkg-shlibdeps).
dpkg-deb -f "$deb" Depends | grep -q scalapack || { echo "FAIL: Depends lacks ScaLAPACK"; exit 1; }
dpkg-deb -x "$deb" "$tmp/root"
bin=$(find "$tmp/root" -path '*/bin/kembed' -type f)
[ -n "$bin" ] || { echo "FAIL: no bin/kembed in the package"; exit 1; }
for f in include/kembed/mpi/comm.hpp lib/libkembed.a lib/cmake/kembed/kembedConfig.cmake share/doc/kembed/LICENSE; do
  [ -n "$(find "$tmp/root" -path "*/$f")" ] || { echo "FAIL: the package lacks $f"; exit 1; }
done
out=$("$bin" --version)
echo "$out" | head -1
head -1 <<< "$out" | grep -q "^kembed $version " || { echo "FAIL: kembed --version from the package"; exit 1; }
echo "deb test passed"
