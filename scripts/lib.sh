# Shared by scripts/run and scripts/test: install what is missing, configure, build.
# shellcheck shell=bash
set -euo pipefail

KEMBED_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
KEMBED_BUILD=${KEMBED_BUILD:-$KEMBED_ROOT/build}
# Parallel compiles for every build: the machine's processors. Not `nproc`
# after the export of OMP_NUM_THREADS=1 below, which nproc obeys: every
# build ran one compile at a time.
KEMBED_JOBS=${KEMBED_JOBS:-$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)}

# Debian 12 packages kembed needs to build and test.
KEMBED_PACKAGES=(build-essential cmake pkg-config openmpi-bin libopenmpi-dev
  libscalapack-openmpi-dev libopenblas-dev liblapack-dev libboost-program-options-dev
  libgtest-dev nlohmann-json3-dev libelpa-dev libhdf5-openmpi-dev zlib1g-dev)
# What scripts/run needs and no more: the compiler, CMake, MPI, ScaLAPACK and
# its BLAS, Boost.ProgramOptions and the JSON headers to build and run kembed,
# and numpy and matplotlib for the picture (kembed-plot). ELPA, HDF5 and
# GoogleTest are optional for kembed itself and come with KEMBED_PACKAGES.
KEMBED_RUN_PACKAGES=(build-essential cmake pkg-config openmpi-bin libopenmpi-dev
  libscalapack-openmpi-dev libopenblas-dev liblapack-dev libboost-program-options-dev
  nlohmann-json3-dev zlib1g-dev python3-numpy python3-matplotlib)
# The documentation (scripts/docs, the docs tests) and the man page kembed(1):
# Sphinx with MyST Markdown and the furo theme.
KEMBED_DOCS_PACKAGES=(python3-sphinx python3-myst-parser furo)
# Only for tests and reports, not for building or running kembed: a local SLURM
# cluster (tests/slurm), the scaling plot of jobs/report.py, the Python
# package python/ (numpy, pytest, scipy for sparse input; scikit-learn for its
# estimator contract, test_python_sklearn_api, and the Pipeline example of
# docs/python.md, which fail rather than pass untested without it)
# and the documentation, whose build is a test.
KEMBED_TEST_PACKAGES=(slurm-wlm munge python3-matplotlib python3-numpy python3-pytest python3-venv python3-pip
  python3-h5py python3-scipy python3-sklearn "${KEMBED_DOCS_PACKAGES[@]}")
# Only for scripts/fuzz: clang, its libFuzzer and sanitizer runtimes, and
# llvm-symbolizer (llvm-14) for readable stack traces in crash reports.
KEMBED_FUZZ_PACKAGES=(clang libclang-rt-14-dev llvm-14)

# Installs the packages that are not installed yet (idempotent; apt only when needed).
kembed_install() {
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "installing: ${missing[*]}"
  kembed_stage "apt (${#missing[@]} packages)" kembed_apt_get "${missing[@]}"
}

kembed_apt_get() {
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$@"
}

# Runs "$@" as the stage NAME ($1): with KEMBED_STAGE_LOG set (.ci/run sets
# it), appends "NAME<tab>seconds<tab>exit status" to that file, so that the
# run ends with a table of where its time went.
kembed_stage() {
  local name=$1 start=$SECONDS status=0
  shift
  "$@" || status=$?
  if [ -n "${KEMBED_STAGE_LOG:-}" ]; then
    printf '%s\t%d\t%d\n' "$name" $((SECONDS - start)) "$status" >> "$KEMBED_STAGE_LOG"
  fi
  return "$status"
}

# Configures and builds $KEMBED_BUILD (everything, or only the targets in
# $KEMBED_BUILD_TARGET, separated by spaces).
kembed_build() {
  local tree
  tree=$(basename "$KEMBED_BUILD")
  kembed_stage "configure $tree" cmake -S "$KEMBED_ROOT" -B "$KEMBED_BUILD" -DCMAKE_BUILD_TYPE=Release \
    $(kembed_launcher) "$@"
  # shellcheck disable=SC2086  # one word per target
  kembed_stage "build $tree" cmake --build "$KEMBED_BUILD" -j "$KEMBED_JOBS" \
    ${KEMBED_BUILD_TARGET:+--target $KEMBED_BUILD_TARGET}
}

# The sanitizer tree (scripts/test --sanitize and scripts/fuzz share it):
# clang with AddressSanitizer + UndefinedBehaviorSanitizer at -O1, the unit
# and MPI tests and the libFuzzer targets built from one compile of kembed.
# (clang compiles kembed's instrumented code in about half GCC's time, and
# libFuzzer exists only in clang; the Release tree stays GCC.) Line tables
# only: every report still names file and line, and each compile and link
# is cheaper (about 10% per compile, half the object size); configure with
# -g instead to step through a finding in a debugger.
KEMBED_ASAN_BUILD=${KEMBED_ASAN_BUILD:-$KEMBED_ROOT/build-asan}
KEMBED_SANITIZE_ARGS=(-DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++
  -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only"
  "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only"
  -DKEMBED_SANITIZE=ON -DKEMBED_FUZZ=ON -DKEMBED_BUILD_BENCH=OFF)

# ccache as the compiler launcher when it is installed (it is not required,
# and KEMBED_CCACHE=0 turns it off): a rebuild in a fresh clone or another
# tree then compiles only what changed.
kembed_launcher() {
  if [ "${KEMBED_CCACHE:-1}" != 0 ] && command -v ccache > /dev/null; then
    echo "-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache"
  else
    echo "-UCMAKE_CXX_COMPILER_LAUNCHER -UCMAKE_C_COMPILER_LAUNCHER"
  fi
}

# OpenBLAS picks its kernels from the CPU's model, which a virtual machine may
# hide. When it picks kernels older than the CPU, `kembed --version` (the
# binary given) says so and names the OPENBLAS_CORETYPE that fits; this
# exports it, unless it is set already, so that the tests and the example
# run on the kernels a user of this machine is told to use. (On the
# development VM OpenBLAS picked its Prescott kernels on an AVX-512 CPU:
# dgemm ran 4.6x slower, and under AddressSanitizer their dsymv, called by
# pdsyevd, read past a small vector into an unmapped page.)
kembed_blas_coretype() {
  [ -n "${OPENBLAS_CORETYPE:-}" ] && return 0
  local core
  core=$(ASAN_OPTIONS=detect_leaks=0 "$1" --version 2>/dev/null |
         sed -n 's/.*OPENBLAS_CORETYPE=\([A-Za-z0-9]*\).*/\1/p' || true)
  if [ -n "$core" ]; then
    export OPENBLAS_CORETYPE=$core
    echo "OpenBLAS chose kernels older than this CPU: running with OPENBLAS_CORETYPE=$core"
  fi
}

# ccache may share compiles that use CMake's precompiled headers (tests/).
export CCACHE_SLOPPINESS=${CCACHE_SLOPPINESS:-pch_defines,time_macros,include_file_mtime,include_file_ctime}

# Open MPI refuses to run as root without these; cluster users running as
# themselves do not need them. One BLAS thread per rank: ranks already use the cores.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1} OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
