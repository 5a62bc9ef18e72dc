# kembed_add_test(<name> SOURCES <files...> RANKS <counts...> [LABELS <labels...>] [TIMEOUT s])
# Builds <name> against the shared MPI gtest main and registers one CTest entry
# per rank count, <name>_np<N>, launched with mpiexec --oversubscribe.
set(KEMBED_TEST_ENV
    "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OPENBLAS_NUM_THREADS=1;OMP_NUM_THREADS=1;OMPI_MCA_rmaps_base_oversubscribe=1")

function(kembed_add_test name)
  cmake_parse_arguments(ARG "" "TIMEOUT" "SOURCES;RANKS;LABELS" ${ARGN})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 300)
  endif()
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE kembed_test_main)
  foreach(np IN LISTS ARG_RANKS)
    # mpiexec's own --timeout ends every rank if a test hangs; CTest's is a backstop.
    math(EXPR mpi_timeout "${ARG_TIMEOUT} - 10")
    add_test(NAME ${name}_np${np}
             COMMAND ${MPIEXEC_EXECUTABLE} --oversubscribe --timeout ${mpi_timeout}
                     ${MPIEXEC_NUMPROC_FLAG} ${np} $<TARGET_FILE:${name}>)
    set_tests_properties(${name}_np${np} PROPERTIES
      ENVIRONMENT "${KEMBED_TEST_ENV}" TIMEOUT ${ARG_TIMEOUT}
      LABELS "mpi;np${np};${ARG_LABELS}" PROCESSORS ${np})
  endforeach()
endfunction()
