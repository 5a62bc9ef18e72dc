#!/usr/bin/env bash
# Installs the build tree into a temporary prefix (cmake --install), then builds
# and runs a one-file consumer against it twice: through find_package(kembed)
# and through pkg-config. Usage: test_install.sh BUILD_DIR SOURCE_DIR CMAKE CXX MPIEXEC VERSION
set -euo pipefail
build=$1 src=$2 cmake=$3 cxx=$4 mpiexec=$5 version=$6
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix

"$cmake" --install "$build" --prefix "$prefix" > "$tmp/install.log"
for f in bin/kembed lib/libkembed.a include/kembed/mpi/comm.hpp include/kembed/linalg/dist_matrix.hpp \
         lib/cmake/kembed/kembedConfig.cmake lib/cmake/kembed/kembedConfigVersion.cmake \
         lib/cmake/kembed/kembedTargets.cmake lib/cmake/kembed/FindScaLAPACK.cmake \
         lib/pkgconfig/kembed.pc share/doc/kembed/LICENSE bin/kembed-plot \
         share/kembed/python/kembed/plot.py; do
  [ -f "$prefix/$f" ] || { echo "FAIL: cmake --install did not install $f"; exit 1; }
done
# Nothing of the build or source tree may leak into the installed package files.
if grep -l -e "$build" -e "$src/include" "$prefix"/lib/cmake/kembed/*.cmake "$prefix/lib/pkgconfig/kembed.pc"; then
  echo "FAIL: installed package files refer to the build or source tree"; exit 1
fi

run_consumer() {  # $1: executable, $2: version it must print
  local out
  out=$("$mpiexec" --oversubscribe --timeout 60 -np 2 "$1")
  echo "$out"
  grep -q "^kembed $2: 7x5 round trip on 2 ranks, 0 wrong entries$" <<< "$out" \
    || { echo "FAIL: unexpected output from $1"; exit 1; }
}

# find_package(kembed): the usage requirements bring MPI, ScaLAPACK and the
# compile definitions (KEMBED_VERSION) to a project that names only kembed::kembed.
# Once as project(app CXX), the usual form (the package must not ask for C),
# once with C enabled too.
for with_c in OFF ON; do
  consumer=$tmp/consumer-c-$with_c
  "$cmake" -S "$src/tests/install/consumer" -B "$consumer" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_PREFIX_PATH="$prefix" -DKEMBED_CONSUMER_WITH_C=$with_c \
    > "$tmp/configure.log" 2>&1 || { cat "$tmp/configure.log"; echo "FAIL: consumer (C $with_c) configure"; exit 1; }
  "$cmake" --build "$consumer" > "$tmp/build.log" || { cat "$tmp/build.log"; exit 1; }
  run_consumer "$consumer/kembed_consumer" "$version"
done

# pkg-config with a plain compiler (no MPI wrapper): the .pc file carries MPI too.
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
[ "$(pkg-config --modversion kembed)" = "$version" ] || { echo "FAIL: pkg-config version"; exit 1; }
# shellcheck disable=SC2046
"$cxx" -std=c++17 -O1 "$src/tests/install/consumer/main.cpp" -o "$tmp/pc_consumer" \
  $(pkg-config --cflags --libs kembed)
run_consumer "$tmp/pc_consumer" "unknown (no usage requirements)"

"$prefix/bin/kembed" --version | head -1 | grep -q "^kembed $version " \
  || { echo "FAIL: installed kembed --version"; exit 1; }
# The installed picture script, on a result made by the installed binary.
if "${KEMBED_PYTHON:-python3}" -c "import numpy, matplotlib" 2> /dev/null; then
  "$mpiexec" --oversubscribe --timeout 60 -np 2 "$prefix/bin/kembed" kpca --generate circles \
    --rows 200 --cols 2 --kernel rbf --gamma 5 -k 2 -o "$tmp/result" --quiet
  "$prefix/bin/kembed-plot" "$tmp/result" > "$tmp/plot.log"
  [ "$(stat -c %s "$tmp/result-plots/embedding.png")" -gt 10000 ] \
    || { echo "FAIL: installed kembed-plot wrote no picture"; exit 1; }
else
  echo "note: ${KEMBED_PYTHON:-python3} lacks numpy or matplotlib: installed kembed-plot not run"
fi
echo "install test passed"
