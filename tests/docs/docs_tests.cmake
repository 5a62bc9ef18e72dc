# Documentation tests (label docs), included at the end of tests/CMakeLists.txt:
# - docs_build: Sphinx builds docs/ with warnings as errors and every
#   cross-reference resolved (-n -W), its command-line reference generated
#   from the kembed under test; registered when sphinx-build, MyST and furo
#   are found (scripts/test installs them), else a STATUS line says so;
# - docs_examples_<page>: every console example and runnable table line of
#   the README and of each docs page runs as written, on at most 2 ranks, in
#   a fresh directory (tests/docs/run_examples.py); needs no Sphinx;
# - docs_man_page: the man page kembed(1) was built, when it is built.
set(kembed_docs_dir ${PROJECT_SOURCE_DIR}/docs)
find_program(KEMBED_DOCS_PYTHON python3 HINTS /usr/bin)
kembed_find_sphinx(kembed_docs_reason myst_parser furo)  # cmake/KembedDocs.cmake
if(kembed_docs_reason)
  message(STATUS "docs_build not registered: ${kembed_docs_reason} "
                 "(Debian: python3-sphinx python3-myst-parser furo; scripts/test installs them)")
else()
  add_test(NAME docs_build
           COMMAND ${CMAKE_COMMAND} -E env KEMBED_BINARY=$<TARGET_FILE:kembed>
                   ${KEMBED_SPHINX_BUILD} -q -n -W --keep-going -b html
                   -d ${PROJECT_BINARY_DIR}/docs-test/doctrees
                   ${kembed_docs_dir} ${PROJECT_BINARY_DIR}/docs-test/html)
  set_tests_properties(docs_build PROPERTIES LABELS docs TIMEOUT 300
                       ENVIRONMENT "${KEMBED_TEST_ENV}")
endif()

# One test per page that has runnable examples, so a failure names its page.
file(GLOB_RECURSE kembed_doc_pages CONFIGURE_DEPENDS ${kembed_docs_dir}/*.md)
list(FILTER kembed_doc_pages EXCLUDE REGEX "/docs/(data|_[a-z]+)/")
foreach(page ${PROJECT_SOURCE_DIR}/README.md ${kembed_doc_pages})
  file(READ ${page} kembed_page_text)
  string(FIND "${kembed_page_text}" "```console" kembed_console)
  string(FIND "${kembed_page_text}" "runnable" kembed_runnable)
  if(kembed_console EQUAL -1 AND kembed_runnable EQUAL -1)
    continue()
  endif()
  file(RELATIVE_PATH kembed_page_name ${PROJECT_SOURCE_DIR} ${page})
  string(REGEX REPLACE "^docs/|\\.md$" "" kembed_page_name "${kembed_page_name}")
  string(REGEX REPLACE "[^A-Za-z0-9]+" "_" kembed_page_name "${kembed_page_name}")
  add_test(NAME docs_examples_${kembed_page_name}
           COMMAND ${KEMBED_DOCS_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/docs/run_examples.py
                   --kembed $<TARGET_FILE:kembed> --mpiexec ${MPIEXEC_EXECUTABLE}
                   --plot ${PROJECT_BINARY_DIR}/kembed-plot --root ${PROJECT_SOURCE_DIR}
                   --timeout 120 ${page})
  set_tests_properties(docs_examples_${kembed_page_name} PROPERTIES LABELS docs TIMEOUT 600
                       PROCESSORS 2 ENVIRONMENT "${KEMBED_TEST_ENV}")
endforeach()

if(KEMBED_MAN_PAGE)
  add_test(NAME docs_man_page
           COMMAND sh -c "test -s \"$1\" && grep -q 'kembed kpca' \"$1\"" sh ${KEMBED_MAN_PAGE})
  set_tests_properties(docs_man_page PROPERTIES LABELS docs TIMEOUT 30)
endif()
