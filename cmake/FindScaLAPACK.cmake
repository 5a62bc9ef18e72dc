# Provides the imported target kembed::scalapack (ScaLAPACK + BLACS + LAPACK + BLAS).
#   KEMBED_SCALAPACK_VENDOR=Debian : pkg-config module scalapack-openmpi (Debian/Ubuntu packages)
#   KEMBED_SCALAPACK_VENDOR=Custom : the link line in KEMBED_SCALAPACK_LIBRARIES, e.g. for MKL
#     "-lmkl_scalapack_lp64;-lmkl_blacs_openmpi_lp64;-lmkl_gf_lp64;-lmkl_sequential;-lmkl_core"
#     or empty for Cray LibSci (the compiler wrappers link it).
include(FindPackageHandleStandardArgs)
if(KEMBED_SCALAPACK_VENDOR STREQUAL "Custom")
  set(ScaLAPACK_LIBRARIES "${KEMBED_SCALAPACK_LIBRARIES}")
  set(ScaLAPACK_FOUND_VAR TRUE)
  find_package_handle_standard_args(ScaLAPACK DEFAULT_MSG ScaLAPACK_FOUND_VAR)
else()
  find_package(PkgConfig REQUIRED)
  pkg_check_modules(SCALAPACK_PC QUIET scalapack-openmpi)
  find_library(ScaLAPACK_LIBRARY NAMES scalapack-openmpi scalapack
               HINTS ${SCALAPACK_PC_LIBRARY_DIRS})
  find_package(LAPACK REQUIRED)
  set(ScaLAPACK_LIBRARIES ${ScaLAPACK_LIBRARY} ${LAPACK_LIBRARIES})
  find_package_handle_standard_args(ScaLAPACK DEFAULT_MSG ScaLAPACK_LIBRARY)
endif()
if(ScaLAPACK_FOUND AND NOT TARGET kembed::scalapack)
  add_library(kembed::scalapack INTERFACE IMPORTED)
  set_target_properties(kembed::scalapack PROPERTIES INTERFACE_LINK_LIBRARIES "${ScaLAPACK_LIBRARIES}")
endif()
