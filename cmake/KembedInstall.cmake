# `cmake --install` layout, the CMake package kembed::kembed, the pkg-config
# file and the CPack DEB package. Included from the top CMakeLists.txt after
# the targets kembed and kembed_lib exist.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(KEMBED_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/kembed)
set(KEMBED_BOOST_MIN_VERSION 1.74)
set(KEMBED_JSON_MIN_VERSION 3.10)
# KEMBED_HAVE_HDF5 is set by the HDF5 block of the top CMakeLists.txt.
if(TARGET PkgConfig::ELPA)
  set(KEMBED_HAVE_ELPA TRUE)
else()
  set(KEMBED_HAVE_ELPA FALSE)
endif()

install(TARGETS kembed RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)
install(TARGETS kembed_lib EXPORT kembedTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/kembed DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        COMPONENT dev)
install(EXPORT kembedTargets NAMESPACE kembed:: DESTINATION ${KEMBED_CMAKE_DIR} COMPONENT dev)

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/kembedConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/kembedConfig.cmake
                              INSTALL_DESTINATION ${KEMBED_CMAKE_DIR})
# 0.x: a new minor version may change the API, so only the same minor matches.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/kembedConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/kembedConfig.cmake
              ${PROJECT_BINARY_DIR}/kembedConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/FindScaLAPACK.cmake
        DESTINATION ${KEMBED_CMAKE_DIR} COMPONENT dev)

# pkg-config: libkembed is static, so Libs lists everything it needs, as CMake
# found it (full paths); system include directories are left out.
set(KEMBED_PC_REQUIRES "")
set(KEMBED_PC_CFLAGS "")
set(KEMBED_PC_LIBS "")
get_target_property(kembed_json_includes nlohmann_json::nlohmann_json INTERFACE_INCLUDE_DIRECTORIES)
set(kembed_hdf5_includes "")
set(kembed_hdf5_libraries "")
if(KEMBED_HAVE_HDF5)
  set(kembed_hdf5_includes ${HDF5_C_INCLUDE_DIRS})
  set(kembed_hdf5_libraries ${HDF5_C_LIBRARIES})
endif()
foreach(dir IN LISTS MPI_CXX_INCLUDE_DIRS kembed_json_includes kembed_hdf5_includes)
  if(dir AND NOT dir MATCHES "^/usr/include/?$" AND NOT dir MATCHES "-NOTFOUND$")
    string(APPEND KEMBED_PC_CFLAGS " -I${dir}")
  endif()
endforeach()
foreach(opt IN LISTS MPI_CXX_COMPILE_OPTIONS)
  string(APPEND KEMBED_PC_CFLAGS " ${opt}")
endforeach()
get_target_property(kembed_po_lib Boost::program_options IMPORTED_LOCATION_RELEASE)
if(NOT kembed_po_lib)
  get_target_property(kembed_po_lib Boost::program_options IMPORTED_LOCATION)
endif()
if(NOT kembed_po_lib)
  set(kembed_po_lib -lboost_program_options)
endif()
foreach(lib IN LISTS ScaLAPACK_LIBRARIES kembed_po_lib kembed_hdf5_libraries MPI_CXX_LIBRARIES)
  string(APPEND KEMBED_PC_LIBS " ${lib}")
endforeach()
if(KEMBED_HAVE_ELPA)
  set(KEMBED_PC_REQUIRES "elpa")
endif()
string(STRIP "${KEMBED_PC_CFLAGS}" KEMBED_PC_CFLAGS)
string(STRIP "${KEMBED_PC_LIBS}" KEMBED_PC_LIBS)
file(RELATIVE_PATH KEMBED_PC_TO_PREFIX "/p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/p")
string(REGEX REPLACE "/$" "" KEMBED_PC_TO_PREFIX "${KEMBED_PC_TO_PREFIX}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/kembed.pc.in ${PROJECT_BINARY_DIR}/kembed.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/kembed.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig
        COMPONENT dev)

# The pure-Python package (python/kembed) under share/, for kembed-plot; pip
# installs the same package with its own kembed-plot entry point.
set(KEMBED_PYTHON_DIR ${CMAKE_INSTALL_DATADIR}/kembed/python)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/python/kembed DESTINATION ${KEMBED_PYTHON_DIR}
        COMPONENT runtime PATTERN __pycache__ EXCLUDE)
file(RELATIVE_PATH KEMBED_BIN_TO_PYTHON "/p/${CMAKE_INSTALL_BINDIR}" "/p/${KEMBED_PYTHON_DIR}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/kembed-plot.in ${PROJECT_BINARY_DIR}/kembed-plot @ONLY)
install(PROGRAMS ${PROJECT_BINARY_DIR}/kembed-plot DESTINATION ${CMAKE_INSTALL_BINDIR}
        COMPONENT runtime)

install(FILES ${PROJECT_SOURCE_DIR}/LICENSE ${PROJECT_SOURCE_DIR}/README.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT runtime)

# The man page kembed(1) in share/man/man1 (component runtime, so in the
# kembed DEB), when Sphinx and MyST are found (cmake/KembedDocs.cmake).
include(KembedDocs)

# cpack (and `make install`) would otherwise build every target first, the
# tests included; kembed and its library are what gets installed, and they
# are built by then.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY TRUE)

# `cpack -G DEB` in the build tree, Debian's split: kembed (the binary,
# kembed-plot, documentation; dependencies from dpkg-shlibdeps) and
# kembed-dev (static library, headers, CMake package and pkg-config file;
# depends on kembed of the same version and on the -dev packages a consumer
# compiles and links against).
set(CPACK_PACKAGE_NAME kembed)
set(CPACK_PACKAGE_VENDOR "the kembed project")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "Distributed spectral dimensionality reduction (kernel PCA, PCA, classical MDS) on MPI and ScaLAPACK")
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_GENERATOR DEB)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "the kembed project")
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# kembed-plot (bin/, share/kembed/python) runs on these; kembed itself does not.
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "python3-numpy, python3-matplotlib")
# mpirun comes with the MPI the binary was linked with, not with a shared library.
if(MPI_CXX_LIBRARY_VERSION_STRING MATCHES "Open MPI" OR MPI_CXX_LIBRARIES MATCHES "openmpi")
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "openmpi-bin")
endif()
set(CPACK_PACKAGE_CONTACT "the kembed project")
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL runtime dev)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME kembed)
set(CPACK_DEBIAN_DEV_PACKAGE_NAME kembed-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(KEMBED_DEV_DEPENDS "kembed (= ${PROJECT_VERSION}), libscalapack-openmpi-dev, libopenmpi-dev, libboost-program-options-dev, nlohmann-json3-dev")
if(KEMBED_HAVE_HDF5)
  string(APPEND KEMBED_DEV_DEPENDS ", libhdf5-openmpi-dev")
endif()
if(KEMBED_HAVE_ELPA)
  string(APPEND KEMBED_DEV_DEPENDS ", libelpa-dev")
endif()
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "${KEMBED_DEV_DEPENDS}")
set(CPACK_DEBIAN_DEV_PACKAGE_SHLIBDEPS OFF)
include(CPack)
