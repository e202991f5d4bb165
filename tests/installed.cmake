# What a user of an installed a2av meets, from the prefix that preload.cmake installs and then
# moves (fixture preload_prefix; no source tree, LD_LIBRARY_PATH unset): the `a2av` command
# finds the data files it carries (share/a2av), and projects of their own build against the
# CMake package and the pkg-config file, then run on 1 to 4 ranks.

set(_installed ${_preload_out}/relocated)
set(_installed_tool env -u LD_LIBRARY_PATH ${_installed}/bin/a2av)
set(_consumers ${CMAKE_CURRENT_BINARY_DIR}/consumers)

# installed_tool(<name> [FAIL] MATCH <regex...> ARGS <a2av arguments...>)
function(installed_tool name)
  cmake_parse_arguments(T "FAIL" "" "MATCH;ARGS" ${ARGN})
  list(TRANSFORM T_MATCH PREPEND "--match;")
  set(fail)
  if(T_FAIL)
    set(fail --fail)
  endif()
  add_test(NAME installed_${name}
    COMMAND ${Python3_EXECUTABLE} ${_tool_dir}/expect.py ${fail} ${T_MATCH} --
            ${_installed_tool} ${T_ARGS})
  set_tests_properties(installed_${name} PROPERTIES FIXTURES_REQUIRED preload_prefix
    ENVIRONMENT "${A2AV_TEST_ENV}" TIMEOUT 60 LABELS installed)
endfunction()

installed_tool(version MATCH "^a2av [0-9]+\\.[0-9]+\\.[0-9]+\n" "built for: ${A2AV_MPI_FLAVOUR}"
               "data directory: ${_installed}/share/a2av\n" ARGS --version)
installed_tool(machines MATCH "\npolaris +32 " "\nfugaku +32 " "platforms[^\n]*polaris"
               ARGS machines)
installed_tool(help_names_data MATCH "Data files[^\n]*${_installed}/share/a2av"
               ARGS model --help)
installed_tool(model_by_name MATCH "machine polaris" "\n +16384 +16384 " ARGS model
               --machine polaris --ranks 16384)
installed_tool(model_unknown_machine FAIL MATCH "on offer: dev-2core, fugaku, polaris"
               ARGS model --machine nosuch)

# installed_consumer(<name> BUILD <command...> PROGRAM <path>): builds the project (a fixture)
# and runs the program at 1 to 4 ranks; it prints " No Errors" when every value is right.
function(installed_consumer name)
  cmake_parse_arguments(T "" "PROGRAM" "BUILD" ${ARGN})
  add_test(NAME installed_${name}_build COMMAND ${T_BUILD})
  set_tests_properties(installed_${name}_build PROPERTIES FIXTURES_REQUIRED preload_prefix
    FIXTURES_SETUP installed_${name} TIMEOUT 120 LABELS installed)
  foreach(n 1 2 3 4)
    add_test(NAME installed_${name}.np${n}
      COMMAND ${MPIEXEC_EXECUTABLE} -n ${n} ${A2AV_MPIEXEC_FLAGS} env -u LD_LIBRARY_PATH
              LD_PRELOAD=${A2AV_RUNTIME_FIRST} ${T_PROGRAM})
    set_tests_properties(installed_${name}.np${n} PROPERTIES FIXTURES_REQUIRED installed_${name}
      ENVIRONMENT "${A2AV_TEST_ENV}" TIMEOUT 60 LABELS "mpi;installed"
      PASS_REGULAR_EXPRESSION " No Errors|OK: [0-9]+ ranks exchanged")
  endforeach()
endfunction()

# find_package(a2av CONFIG REQUIRED) + a2av::a2av, C++ (tests/consumer/cmake).
installed_consumer(cmake_consumer
  BUILD sh -c "rm -rf \"$1\" && \"$0\" -S \"$2\" -B \"$1\" -DCMAKE_PREFIX_PATH=\"$3\" >/dev/null && \"$0\" --build \"$1\""
        ${CMAKE_COMMAND} ${_consumers}/cmake ${CMAKE_CURRENT_SOURCE_DIR}/consumer/cmake ${_installed}
  PROGRAM ${_consumers}/cmake/consumer)
# pkg-config --cflags --libs a2av, C: the example's own build line (tests/consumer/pkgconfig).
installed_consumer(pkgconfig_consumer
  BUILD sh -c "rm -rf \"$1\" && mkdir -p \"$1\" && cd \"$1\" && PKG_CONFIG_PATH=\"$2\" make -f \"$0\" SOURCE=\"$3\" MPICC=\"$4\""
        ${CMAKE_CURRENT_SOURCE_DIR}/consumer/pkgconfig/Makefile ${_consumers}/pkgconfig
        ${_installed}/lib/pkgconfig ${PROJECT_SOURCE_DIR}/examples/hello_alltoallv.c
        ${MPI_C_COMPILER}
  PROGRAM ${_consumers}/pkgconfig/hello_alltoallv)
