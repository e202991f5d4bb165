# The suite's MPICH side, built with AddressSanitizer and UndefinedBehaviorSanitizer
# (tests/mpich/build.sh; a fixture, so its build time is not the tests'): the quick MPI tests
# in launches of 2 and 4 ranks (communicators of 1, 2, 3 and 4), and the preload programs, at
# up to 4, under the sanitized preload library. Any report fails the test: the sanitizers
# halt on the first. Leak checking is off: MPICH keeps allocations until exit by design, and
# the library's own buffers are owned by RAII types.
find_program(A2AV_MPICH_CC mpicc.mpich)
find_program(A2AV_MPICH_MPIEXEC mpiexec.mpich)
find_program(A2AV_MPICH_FC mpifort.mpich)
if(NOT (A2AV_MPICH_CC AND A2AV_MPICH_MPIEXEC AND A2AV_MPICH_FC))
  return()
endif()
set(_mpich ${CMAKE_CURRENT_BINARY_DIR}/mpich)
set(_mpich_tests test_exchange test_semantics test_errors test_repeated_calls test_shared_memory
    test_sparse test_inplace test_ialltoallv test_plan test_neighbor_alltoallv test_first_call)
add_test(NAME mpich_build
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/mpich/build.sh ${PROJECT_SOURCE_DIR} ${_mpich}
          ${_mpich_tests} test_threads)
set_tests_properties(mpich_build PROPERTIES TIMEOUT 900 FIXTURES_SETUP mpich LABELS mpich)
# Beyond the cores MPICH busy-polls, so a launch of 4 holds both cores alone (PROCESSORS 2),
# and test_exchange keeps there two of its five uniform sizes and two of its six generators
# (every algorithm on each; the rest took 60 of its 80 s): Open MPI runs the whole sweep.
set(_mpich_exchange_np4_skipped Elements.* EqualBlocks.* *UniformSizes.*/0 *UniformSizes.*/1
    *UniformSizes.*/2 *Distributions.*/0 *Distributions.*/1 *Distributions.*/4
    *Distributions.*/5)
list(JOIN _mpich_exchange_np4_skipped ":" _mpich_exchange_np4_filter)
foreach(test IN LISTS _mpich_tests)
  foreach(n 2 4)
    add_test(NAME mpich_${test}.np${n}
      COMMAND ${A2AV_MPICH_MPIEXEC} -n ${n} ${_mpich}/build/tests/${test})
    set_tests_properties(mpich_${test}.np${n} PROPERTIES TIMEOUT 300 FIXTURES_REQUIRED mpich
      ENVIRONMENT "${A2AV_SANITIZER_ENV}" LABELS "mpi;mpich")
  endforeach()
  set_tests_properties(mpich_${test}.np4 PROPERTIES PROCESSORS 2)
endforeach()
set_property(TEST mpich_test_exchange.np4 APPEND PROPERTY ENVIRONMENT
             GTEST_FILTER=-${_mpich_exchange_np4_filter})
# Threads under MPICH, whose global critical section is held around a generalized request's
# free function (a free that waited there for a2av's progress lock deadlocked): 2 ranks, as
# 6 busy-polling threads per rank take 48 s at 3 on 2 cores.
add_test(NAME mpich_test_threads.np2 COMMAND ${A2AV_MPICH_MPIEXEC} -n 2 ${_mpich}/build/tests/test_threads)
set_tests_properties(mpich_test_threads.np2 PROPERTIES TIMEOUT 300 FIXTURES_REQUIRED mpich
  ENVIRONMENT "${A2AV_SANITIZER_ENV}" LABELS "mpi;mpich" PROCESSORS 2)

# Programs that are not built with the sanitizers load their runtime first, then the preload.
set(_mpich_run FIXTURE mpich PRELOAD ${A2AV_ASAN_RUNTIME}:${_mpich}/relocated/lib/liba2av_preload.so
    MPIEXEC ${A2AV_MPICH_MPIEXEC} ENV ${A2AV_SANITIZER_ENV})
# MPICH 4 has the large-count forms (MPI_Alltoallv_c, ...): a2av takes the blocking all-to-all
# ones and the persistent inits (their starts are MPICH's nonblocking forms, as the nonblocking
# large-count calls), the rest are counted on their way to MPICH.
# Up to 3 ranks: MPICH busy-polls beyond the cores (51 s at 4 ranks on 2 cores); the
# conformance program's 4-rank shapes run under Open MPI (preload_c).
a2av_preload_test(NAME preload_mpich_c ${_mpich_run} RANKS 1 2 3
                  MATCH ${_c_entry_points_taken} "MPI_Alltoallv_c calls via [a-z]"
                        "MPI_Alltoall_c calls via [a-z]" "MPI_Alltoallv_init_c calls via [a-z]"
                        "MPI_Alltoall_init_c calls via [a-z]"
                        "MPI_Start \\(persistent MPI_Alltoallv_c\\) calls via large counts:PMPI"
                        "MPI_Ialltoallv_c calls via large counts:PMPI"
                        "MPI_Alltoallw_c calls via per-peer"
                  COMMAND ${_mpich}/conformance)
# Threads through the preload (tests/preload.cmake); at 3 ranks MPICH's busy polling takes 2 s.
a2av_preload_test(NAME preload_mpich_threads ${_mpich_run} RANKS 1 2 MATCH ${_threads_taken}
                  COMMAND ${_mpich}/threads)
# Persistent starts that run a plan to completion (A2AV_PRELOAD_PLAN_STARTS=1), the large-count
# forms' included.
a2av_preload_test(NAME preload_mpich_c_plan_starts ${_mpich_run} RANKS 2
                  ENV ${A2AV_SANITIZER_ENV} A2AV_PRELOAD_PLAN_STARTS=1
                  MATCH "MPI_Start \\(persistent MPI_Alltoallv\\) calls via shared_memory:"
                        "MPI_Start \\(persistent MPI_Alltoallv_c\\) calls via shared_memory:"
                  COMMAND ${_mpich}/conformance)
# No first-call deadlock under MPICH either, whose nonblocking collectives progress only
# inside MPI calls (tests/CMakeLists.txt, test_first_call); persistent starts local, advanced
# by the program's waits and tests.
a2av_preload_test(NAME preload_mpich_first_call ${_mpich_run} RANKS 2 3
                  MATCH "${_ialltoallv_taken}" "MPIX?_Alltoallv_init calls via [a-z]"
                        "MPI_Ineighbor_alltoallv calls via neighbor:nonblocking:direct"
                        "MPI_Start \\(persistent MPI_Alltoallv\\) calls via nonblocking:[a-z]"
                        "MPI_Start \\(persistent MPI_Alltoall_c\\) calls via large counts:PMPI"
                  COMMAND ${_mpich}/first_call)
# Erroneous programs (tests/preload.cmake): under MPICH the aliased call gets MPICH's error.
foreach(n 2 3)
  add_test(NAME preload_mpich_erroneous.np${n}
    COMMAND ${Python3_EXECUTABLE} ${_tool_dir}/expect.py --timeout 100 --match " No Errors"
            --match "1 MPI_Alltoall calls via a2av, failed:error handler"
            --match "1 MPI_Alltoallv calls via PMPI_Alltoallv"
            -- ${A2AV_MPICH_MPIEXEC} -n ${n} env -u LD_LIBRARY_PATH
            LD_PRELOAD=${A2AV_ASAN_RUNTIME}:${_mpich}/relocated/lib/liba2av_preload.so
            A2AV_PRELOAD_STATS=1 ${A2AV_SANITIZER_ENV} ${_mpich}/erroneous)
  set_tests_properties(preload_mpich_erroneous.np${n} PROPERTIES TIMEOUT 120
    FIXTURES_REQUIRED mpich ENVIRONMENT "${A2AV_TEST_ENV}" LABELS "mpi;mpich;preload")
endforeach()
foreach(variant MPIFH USE_MPI USE_MPI_F08)
  string(TOLOWER "${variant}" name)
  a2av_preload_test(NAME preload_mpich_fortran_${name} ${_mpich_run} RANKS 1 4
                    MATCH ${_entry_points_taken} ${_fortran_later_entry_points}
                    COMMAND ${_mpich}/fortran_${variant})
endforeach()
