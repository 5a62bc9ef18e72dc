# The man page kembed(1): Sphinx's man builder on docs/man/kembed.md, whose
# command reference is generated from the kembed binary's --help (so the
# page is built after the binary). Optional: building kembed never needs
# the documentation tools. When sphinx-build and MyST (Debian:
# python3-sphinx, python3-myst-parser) are found, the page is part of the
# default build and `cmake --install` puts it in share/man/man1, so in the
# kembed DEB; otherwise a STATUS line says so. Included from
# KembedInstall.cmake, after the target kembed exists.
# Sets KEMBED_SPHINX_BUILD and, in the caller's scope, <reason_var> to why
# Sphinx cannot build the documentation ("" when it can): sphinx-build must
# be found, and the interpreter it runs on must import every module named
# (Debian's sphinx-build first: another python3 earlier in PATH lacks MyST).
function(kembed_find_sphinx reason_var)
  find_program(KEMBED_SPHINX_BUILD sphinx-build HINTS /usr/bin)
  if(NOT KEMBED_SPHINX_BUILD)
    set(${reason_var} "sphinx-build not found" PARENT_SCOPE)
    return()
  endif()
  file(STRINGS ${KEMBED_SPHINX_BUILD} shebang LIMIT_COUNT 1)
  string(REGEX REPLACE "^#! *([^ ]+).*$" "\\1" python "${shebang}")
  string(JOIN ", " modules ${ARGN})
  execute_process(COMMAND ${python} -c "import ${modules}"
                  RESULT_VARIABLE status OUTPUT_QUIET ERROR_QUIET)
  if(status EQUAL 0)
    set(${reason_var} "" PARENT_SCOPE)
  else()
    set(${reason_var} "${modules} not found for ${KEMBED_SPHINX_BUILD}" PARENT_SCOPE)
  endif()
endfunction()

option(KEMBED_WITH_MAN "Build and install the man page kembed(1) when Sphinx and MyST are found" ON)
set(KEMBED_MAN_PAGE "")
# Sanitizer and fuzzing builds build only what their scripts name; a man
# page would run an instrumented binary at build time for nothing.
if(KEMBED_WITH_MAN AND NOT KEMBED_SANITIZE AND NOT KEMBED_FUZZ)
  kembed_find_sphinx(kembed_man_reason myst_parser)
  if(kembed_man_reason)
    message(STATUS "man page kembed(1) not built: ${kembed_man_reason}")
  else()
    message(STATUS "man page kembed(1): ${KEMBED_SPHINX_BUILD}")
    file(GLOB_RECURSE kembed_doc_sources CONFIGURE_DEPENDS
         ${PROJECT_SOURCE_DIR}/docs/*.md ${PROJECT_SOURCE_DIR}/docs/*.py)
    set(KEMBED_MAN_PAGE ${PROJECT_BINARY_DIR}/man/kembed.1)
    add_custom_command(
      OUTPUT ${KEMBED_MAN_PAGE}
      COMMAND ${CMAKE_COMMAND} -E env KEMBED_BINARY=$<TARGET_FILE:kembed>
              ${KEMBED_SPHINX_BUILD} -q -b man -d ${PROJECT_BINARY_DIR}/man/doctrees
              ${PROJECT_SOURCE_DIR}/docs ${PROJECT_BINARY_DIR}/man
      DEPENDS kembed ${kembed_doc_sources}
      COMMENT "Building the man page kembed(1)"
      VERBATIM)
    add_custom_target(kembed_man ALL DEPENDS ${KEMBED_MAN_PAGE})
    # OPTIONAL: a tree where only the kembed target was built (scripts/run)
    # installs without the page rather than failing.
    install(FILES ${KEMBED_MAN_PAGE} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1
            COMPONENT runtime OPTIONAL)
  endif()
endif()
