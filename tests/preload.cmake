# The preload library as users meet it: installed to a prefix of its own, then moved, and
# loaded by LD_PRELOAD alone (LD_LIBRARY_PATH unset) under programs that know nothing of
# a2av: C (tests/preload/conformance.c, in the style of the MPI test suites), Fortran through
# mpif.h, `use mpi` and `use mpi_f08`, Python with mpi4py; under Open MPI from this build and
# under MPICH from a build of its own. Each program checks every value (" No Errors"); the
# statistics line shows that a2av, not the MPI library, took every call.

set(_preload_out ${CMAKE_CURRENT_BINARY_DIR}/preload)
set(_preload_expect ${Python3_EXECUTABLE} ${_tool_dir}/expect.py --timeout 100
    --match " No Errors" --match "MPI_Alltoallv calls via [a-z]"
    --match "MPI_Alltoall calls via [a-z]" --absent "via PMPI_")

add_test(NAME preload_install
  COMMAND sh -c "rm -rf \"$2/prefix\" \"$2/relocated\" && \"$0\" --install \"$1\" --prefix \"$2/prefix\" >/dev/null && mv \"$2/prefix\" \"$2/relocated\""
          ${CMAKE_COMMAND} ${PROJECT_BINARY_DIR} ${_preload_out})
set_tests_properties(preload_install PROPERTIES FIXTURES_SETUP preload_prefix LABELS preload)

# What every program that calls MPI_Ialltoallv must show.
set(_ialltoallv_taken "MPI_Ialltoallv calls via nonblocking:[a-z]")
# And the conformance program's other entry points: persistent (MPI_Alltoallv_init, or Open
# MPI 4.1's MPIX_Alltoallv_init) and neighbourhood.
set(_entry_points_taken "${_ialltoallv_taken}" "MPIX?_Alltoallv_init calls via [a-z]"
    "MPI_Start \\(persistent MPI_Alltoallv\\) calls via [a-z]"
    "MPI_Neighbor_alltoallv calls via neighbor:direct")
# The conformance program's later entry points besides: MPI_Ialltoall, the persistent
# MPI_Alltoall and neighbourhood exchanges, MPI_Ineighbor_alltoallv through a2av; the alltoallw
# forms counted on their way to the MPI library.
set(_c_entry_points_taken ${_entry_points_taken} "MPI_Ialltoall calls via nonblocking:[a-z]"
    "MPIX?_Alltoall_init calls via [a-z]" "MPI_Start \\(persistent MPI_Alltoall\\) calls via [a-z]"
    "MPI_Ineighbor_alltoallv calls via neighbor:nonblocking:direct"
    "MPIX?_Neighbor_alltoallv_init calls via arguments kept"
    "MPI_Start \\(persistent MPI_Neighbor_alltoallv\\) calls via neighbor:(nonblocking:)?direct"
    "MPI_Alltoallw calls via per-peer datatypes:PMPI" "MPI_Ialltoallw calls via per-peer"
    "MPI_Neighbor_alltoallw calls via per-peer")

# a2av_preload_test(NAME <name> FIXTURE <f> PRELOAD <lib> MPIEXEC <mpiexec...> RANKS <n...>
#                   [ENV <var=value...>] [MATCH <regex...>] COMMAND <program...>): one test
# per rank count, <name>.np<n>.
function(a2av_preload_test)
  cmake_parse_arguments(T "" "NAME;FIXTURE;PRELOAD" "MPIEXEC;RANKS;ENV;MATCH;COMMAND" ${ARGN})
  list(TRANSFORM T_MATCH PREPEND "--match;")
  foreach(n IN LISTS T_RANKS)
    add_test(NAME ${T_NAME}.np${n}
      COMMAND ${_preload_expect} ${T_MATCH} -- ${T_MPIEXEC} -n ${n} env -u LD_LIBRARY_PATH
              LD_PRELOAD=${T_PRELOAD} A2AV_PRELOAD_STATS=1 ${T_ENV} ${T_COMMAND})
    set_tests_properties(${T_NAME}.np${n} PROPERTIES TIMEOUT 120 FIXTURES_REQUIRED ${T_FIXTURE}
      ENVIRONMENT "${A2AV_TEST_ENV}" LABELS "mpi;preload")
  endforeach()
endfunction()

# Open MPI (this build).
set(_openmpi_run FIXTURE preload_prefix
    PRELOAD ${A2AV_RUNTIME_FIRST}${_preload_out}/relocated/lib/liba2av_preload.so
    MPIEXEC ${MPIEXEC_EXECUTABLE} ${A2AV_MPIEXEC_FLAGS})
add_executable(conformance preload/conformance.c)
target_link_libraries(conformance PRIVATE MPI::MPI_C)
# The programs themselves are right: plain, the MPI library passes them.
add_test(NAME conformance_vendor.np3
  COMMAND ${MPIEXEC_EXECUTABLE} -n 3 ${A2AV_MPIEXEC_FLAGS} $<TARGET_FILE:conformance>)
set_tests_properties(conformance_vendor.np3 PROPERTIES TIMEOUT 60 LABELS "mpi;preload"
  ENVIRONMENT "${A2AV_TEST_ENV}" PASS_REGULAR_EXPRESSION " No Errors")
a2av_preload_test(NAME preload_c ${_openmpi_run} RANKS 1 2 3 4 5 8 9
                  MATCH ${_c_entry_points_taken} COMMAND $<TARGET_FILE:conformance>)
# Persistent starts that run a plan to completion (A2AV_PRELOAD_PLAN_STARTS=1; MPICH's in
# tests/mpich.cmake).
a2av_preload_test(NAME preload_c_plan_starts ${_openmpi_run} RANKS 3 ENV A2AV_PRELOAD_PLAN_STARTS=1
                  MATCH ${_c_entry_points_taken}
                  "MPI_Start \\(persistent MPI_Alltoallv\\) calls via shared_memory:"
                  COMMAND $<TARGET_FILE:conformance>)
# Each algorithm on its own (A2AV_ALGORITHM): the conformance cases through every path. The
# names are the registry's own list, one line per algorithm (src/alltoallv/registry.hpp).
file(READ ${PROJECT_SOURCE_DIR}/src/alltoallv/registry.hpp _registry)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
             ${PROJECT_SOURCE_DIR}/src/alltoallv/registry.hpp)
string(REGEX MATCHALL "\n  X\\([a-z_]+\\)" _registered "${_registry}")
list(TRANSFORM _registered REPLACE "\n  X\\(([a-z_]+)\\)" "\\1")
# auto is the default (preload_c); vendor hands calls to the MPI library, as no preload does.
list(REMOVE_ITEM _registered auto vendor)
foreach(algorithm IN LISTS _registered)
  a2av_preload_test(NAME preload_c_${algorithm} ${_openmpi_run} RANKS 5
                    ENV A2AV_ALGORITHM=${algorithm}
                    MATCH "MPI_Alltoallv calls via ${algorithm}[:,]" COMMAND $<TARGET_FILE:conformance>)
endforeach()

# The same program on a2av's C API (-DCONFORMANCE_C_API: A2AV_* under MPI's names), without
# the preload, with the sparse exchange besides: at several rank counts, and once per
# algorithm (A2AV_ALGORITHM; vendor too, which here is a2av's own path to the MPI library).
add_executable(capi_conformance preload/conformance.c)
target_compile_definitions(capi_conformance PRIVATE CONFORMANCE_C_API)
target_link_libraries(capi_conformance PRIVATE a2av::a2av MPI::MPI_C)
set(_capi_expect ${Python3_EXECUTABLE} ${_tool_dir}/expect.py --timeout 100 --match " No Errors")
foreach(n IN ITEMS 1 2 3 4 5 8)
  add_test(NAME capi_conformance.np${n}
    COMMAND ${_capi_expect} -- ${MPIEXEC_EXECUTABLE} -n ${n} ${A2AV_MPIEXEC_FLAGS}
            $<TARGET_FILE:capi_conformance>)
  set_tests_properties(capi_conformance.np${n} PROPERTIES TIMEOUT 120
    ENVIRONMENT "${A2AV_TEST_ENV}" LABELS "mpi;preload")
endforeach()
foreach(algorithm IN ITEMS vendor ${_registered})
  add_test(NAME capi_conformance_${algorithm}.np5
    COMMAND ${_capi_expect} -- ${MPIEXEC_EXECUTABLE} -n 5 ${A2AV_MPIEXEC_FLAGS}
            env A2AV_ALGORITHM=${algorithm} $<TARGET_FILE:capi_conformance>)
  set_tests_properties(capi_conformance_${algorithm}.np5 PROPERTIES TIMEOUT 120
    ENVIRONMENT "${A2AV_TEST_ENV}" LABELS "mpi;preload")
endforeach()

# Erroneous programs (tests/preload/erroneous.c): counts that disagree fail on every rank in
# a2av; aliased buffers go to the MPI library. Under the preload only (Open MPI alone hangs on
# the first), with expectations of their own: here calls do go to PMPI_.
add_executable(preload_erroneous preload/erroneous.c)
target_link_libraries(preload_erroneous PRIVATE MPI::MPI_C)
foreach(n 2 3 4)
  add_test(NAME preload_erroneous.np${n}
    COMMAND ${Python3_EXECUTABLE} ${_tool_dir}/expect.py --timeout 100 --match " No Errors"
            --match "1 MPI_Alltoall calls via a2av, failed:error handler"
            --match "1 MPI_Alltoallv calls via PMPI_Alltoallv"
            -- ${MPIEXEC_EXECUTABLE} ${A2AV_MPIEXEC_FLAGS} -n ${n} env -u LD_LIBRARY_PATH
            LD_PRELOAD=${A2AV_RUNTIME_FIRST}${_preload_out}/relocated/lib/liba2av_preload.so
            A2AV_PRELOAD_STATS=1 $<TARGET_FILE:preload_erroneous>)
  set_tests_properties(preload_erroneous.np${n} PROPERTIES TIMEOUT 120
    FIXTURES_REQUIRED preload_prefix ENVIRONMENT "${A2AV_TEST_ENV}" LABELS "mpi;preload")
endforeach()

# Threads (MPI_THREAD_MULTIPLE), each on its own communicator, through the blocking,
# nonblocking and persistent entry points at once; the statistics count every thread's calls
# (4 threads x 15 of each kind).
find_package(Threads REQUIRED)
add_executable(preload_threads preload/threads.c)
target_link_libraries(preload_threads PRIVATE MPI::MPI_C Threads::Threads)
set(_threads_taken "60 MPI_Alltoallv calls via [a-z]" "60 MPI_Alltoall calls via [a-z]"
    "60 MPI_Ialltoallv calls via nonblocking:[a-z]" "60 MPIX?_Alltoallv_init calls via [a-z]"
    "120 MPI_Start \\(persistent MPI_Alltoallv\\) calls via [a-z]")
a2av_preload_test(NAME preload_threads ${_openmpi_run} RANKS 1 3 4
                  MATCH ${_threads_taken} COMMAND $<TARGET_FILE:preload_threads>)

include(CheckLanguage)
check_language(Fortran)
if(CMAKE_Fortran_COMPILER)
  enable_language(Fortran)
  find_package(MPI COMPONENTS Fortran)
endif()
if(MPI_Fortran_FOUND)
  set(_fortran_later_entry_points "MPI_Ialltoall calls via nonblocking:[a-z]"
      "MPIX?_Alltoall_init calls via [a-z]"
      "MPI_Start \\(persistent MPI_Alltoall\\) calls via [a-z]"
      "MPI_Ineighbor_alltoallv calls via neighbor:nonblocking:direct")
  set(_fortran_variants MPIFH USE_MPI)
  if(MPI_Fortran_HAVE_F08_MODULE)
    list(APPEND _fortran_variants USE_MPI_F08)
  endif()
  foreach(variant IN LISTS _fortran_variants)
    string(TOLOWER "fortran_${variant}" target)
    add_executable(${target} preload/fortran_alltoall.F90)
    target_compile_definitions(${target} PRIVATE ${variant})
    if(A2AV_MPI_FLAVOUR STREQUAL "Open MPI")  # MPIX_ALLTOALLV_INIT, from its extensions
      target_compile_definitions(${target} PRIVATE OPEN_MPI_EXTENSIONS)
    endif()
    # mpif.h declares no interfaces; gfortran >= 10 needs this for any program using it.
    target_compile_options(${target} PRIVATE -fallow-argument-mismatch -w)
    target_link_libraries(${target} PRIVATE MPI::MPI_Fortran)
    a2av_preload_test(NAME preload_${target} ${_openmpi_run} RANKS 1 3 4
                      MATCH ${_entry_points_taken} ${_fortran_later_entry_points}
                      COMMAND $<TARGET_FILE:${target}>)
    # The first call a nonblocking start on a fresh communicator from each constructor, with
    # the MPI's defaults (2 ranks or more).
    string(TOLOWER "fortran_first_call_${variant}" first_call)
    add_executable(${first_call} preload/fortran_first_call.F90)
    target_compile_definitions(${first_call} PRIVATE ${variant})
    target_compile_options(${first_call} PRIVATE -fallow-argument-mismatch -w)
    target_link_libraries(${first_call} PRIVATE MPI::MPI_Fortran)
    a2av_preload_test(NAME preload_${first_call} ${_openmpi_run} RANKS 3
                      MATCH "MPI_Ialltoallv calls via nonblocking:[a-z]"
                      COMMAND $<TARGET_FILE:${first_call}>)
  endforeach()
endif()

# mpi4py from Debian's python3-mpi4py (built for the distribution's default MPI, Open MPI).
find_program(A2AV_DEBIAN_PYTHON python3 PATHS /usr/bin NO_DEFAULT_PATH)
if(A2AV_DEBIAN_PYTHON)
  a2av_preload_test(NAME preload_mpi4py ${_openmpi_run} RANKS 1 3 4
                    MATCH "${_ialltoallv_taken}" "MPI_Neighbor_alltoallv calls via neighbor:direct"
                          "MPI_Ialltoall calls via nonblocking:[a-z]"
                          "MPI_Ineighbor_alltoallv calls via neighbor:nonblocking:direct"
                    COMMAND ${A2AV_DEBIAN_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/preload/mpi4py_alltoall.py)
endif()

# MPICH: tests/mpich.cmake runs these programs under its sanitized MPICH build.
