# kembed_add_test(<name> SOURCES <files...> RANKS <counts...> [LABELS <labels...>] [TIMEOUT s])
# Adds <files> to the MPI test program kembed_tests and registers one CTest entry
# per rank count, <name>_np<N>, launched with mpiexec --oversubscribe.
# The tests run on one node: Open MPI's shared-memory transport alone, so
# that each of the suites' thousand-odd launches skips probing the network
# transports (InfiniBand, OFI, UCX, PSM): 20-30% of a 4-rank start here.
# And mpiexec kills a job's processes at once when one fails: by default it
# waits odls_base_sigkill_timeout = 1 s twice after a non-zero exit, even when
# every process has already gone (2.1 s for `mpiexec -np 1 sh -c 'exit 1'`,
# 0.13 s with 0), and the suites run several hundred failing jobs on purpose.
# And a rank waiting in MPI yields its core (mpi_yield_when_idle): tests run
# up to 4 ranks, and several tests at once, on 2 cores, where ranks that spin
# while they wait take the core from the rank they wait for. Measured on the
# 2-core VM under load 4-5: test_symmetric_operator at 4 ranks 225 s
# spinning, 3.3 s yielding; MdsAdditive.CailliezFromPoints... (many small
# messages of a distributed QR iteration) over 300 s against 18 s.
# And hwloc leaves out the PCI devices (HWLOC_COMPONENTS): mpiexec read every
# device's configuration space at each start, slow in a VM, for network
# locality the shared-memory transport does not use: `mpiexec -np 4 kembed
# --version` 0.61-0.69 s -> 0.54-0.58 s (20 starts each, alternating).
set(KEMBED_TEST_ENV
    "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OPENBLAS_NUM_THREADS=1;OMP_NUM_THREADS=1;OMPI_MCA_rmaps_base_oversubscribe=1"
    "OMPI_MCA_btl=self,vader;OMPI_MCA_pml=ob1;OMPI_MCA_mtl=^ofi,psm,psm2;OMPI_MCA_osc=^ucx"
    "OMPI_MCA_odls_base_sigkill_timeout=0;OMPI_MCA_mpi_yield_when_idle=1"
    "HWLOC_COMPONENTS=-linuxio,-pci")
if(KEMBED_SANITIZE)
  # Any finding ends the process with status 86, so a test expecting kembed's
  # own exit status 1 cannot pass by accident. Leaks are checked; the
  # suppressions cover only leaks inside Open MPI and the libraries it brings
  # (tests/sanitizers/lsan.supp), named with ASan's fast unwinder because the
  # test programs keep Open MPI's components loaded
  # (tests/sanitizers/keep_modules_loaded.cpp).
  list(APPEND KEMBED_TEST_ENV
       "ASAN_OPTIONS=detect_leaks=1:exitcode=86"
       "LSAN_OPTIONS=suppressions=${PROJECT_SOURCE_DIR}/tests/sanitizers/lsan.supp:print_suppressions=0"
       "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:exitcode=86")
endif()

# Headers precompiled for the test programs (tests/CMakeLists.txt): GoogleTest
# and the standard headers most tests include.
set(KEMBED_TEST_PCH_HEADERS <gtest/gtest.h> <algorithm> <cmath> <cstdint> <functional>
    <memory> <string> <utility> <vector>)

# The MPI and unit suites are one program, kembed_tests: the library and
# GoogleTest are linked once per tree instead of once per suite (41 links
# before). Each CTest entry runs the tests of its own source files alone
# (--kembed_sources, tests/mpi_test_main.cpp), so the entries, their names,
# labels and rank counts are those of one program per suite.
# kembed_mpi_tests is what `ctest -L mpi` runs (scripts/test --sanitize).
if(NOT TARGET kembed_mpi_tests)
  add_custom_target(kembed_mpi_tests)
endif()

function(kembed_add_test name)
  cmake_parse_arguments(ARG "" "TIMEOUT" "SOURCES;RANKS;LABELS" ${ARGN})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 300)
  endif()
  set_property(GLOBAL APPEND PROPERTY KEMBED_TEST_SOURCES ${ARG_SOURCES})
  list(JOIN ARG_SOURCES "," sources)
  foreach(np IN LISTS ARG_RANKS)
    # mpiexec's own --timeout ends every rank if a test hangs; CTest's is a backstop.
    math(EXPR mpi_timeout "${ARG_TIMEOUT} - 10")
    add_test(NAME ${name}_np${np}
             COMMAND ${MPIEXEC_EXECUTABLE} --oversubscribe --timeout ${mpi_timeout}
                     ${MPIEXEC_NUMPROC_FLAG} ${np} $<TARGET_FILE:kembed_tests>
                     --kembed_sources=${sources})
    set_tests_properties(${name}_np${np} PROPERTIES
      ENVIRONMENT "${KEMBED_TEST_ENV}" TIMEOUT ${ARG_TIMEOUT}
      LABELS "mpi;np${np};${ARG_LABELS}" PROCESSORS ${np})
  endforeach()
endfunction()

# After the last kembed_add_test: the program of every suite's sources.
# kembed_add_test_program([ALONE <files...>])
# With KEMBED_UNITY_TESTS (on by default) the sources are compiled eight to a
# translation unit (CMake's unity build): the headers, GoogleTest's templates
# and the kembed templates the suites share are compiled once per unit instead
# of once per file. So file-local names (in each file's anonymous namespace)
# must differ between files; the ALONE files keep theirs and are compiled by
# themselves. GoogleTest still records each test's own file (__FILE__ of the
# included source), which --kembed_sources selects by.
function(kembed_add_test_program)
  cmake_parse_arguments(ARG "" "" "ALONE" ${ARGN})
  get_property(sources GLOBAL PROPERTY KEMBED_TEST_SOURCES)
  add_executable(kembed_tests ${sources})
  target_link_libraries(kembed_tests PRIVATE kembed_test_main)
  target_precompile_headers(kembed_tests REUSE_FROM kembed_test_main)
  set_target_properties(kembed_tests PROPERTIES UNITY_BUILD ${KEMBED_UNITY_TESTS}
                                                UNITY_BUILD_BATCH_SIZE 8)
  if(ARG_ALONE)
    set_source_files_properties(${ARG_ALONE} PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
  endif()
  # GCC warns of every fixture in a file's anonymous namespace once that file
  # is included into a unity source (-Wsubobject-linkage: meant for headers).
  if(KEMBED_UNITY_TESTS AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(kembed_tests PRIVATE -Wno-subobject-linkage)
  endif()
  add_dependencies(kembed_mpi_tests kembed_tests)
endfunction()
