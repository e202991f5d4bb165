# The particle rebalancing example (examples/particles) on small inputs at 3 and 4 ranks:
# every exchange, rebalancing by a2av::Redistributor, a budget so tight that ranks overflow
# between scheduled rebalances (forced rebalances, whole-array in-place exchanges), and
# --bench. The program checks count, checksums and ownership after every exchange and exits
# non-zero on any failure; a budget too small to rebalance into must fail that way.
if(NOT TARGET particles)
  return()
endif()

# a2av_particles_test(<name> [FAIL] [MATCH regex...] ARGS ...): one ctest per rank count
# (3 and 4); every MATCH pattern must appear, and FAIL tests must exit non-zero.
function(a2av_particles_test name)
  cmake_parse_arguments(T "FAIL" "" "MATCH;ARGS" ${ARGN})
  set(flags "")
  if(T_FAIL)
    set(flags --fail)
  endif()
  foreach(n 3 4)
    set(matches "")
    foreach(p IN LISTS T_MATCH)
      list(APPEND matches --match ${p})
    endforeach()
    add_test(NAME example_particles_${name}.np${n}
      COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tests/tool/expect.py --timeout 100
              ${flags} ${matches} --
              ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${n} ${A2AV_MPIEXEC_FLAGS}
              ${MPIEXEC_PREFLAGS} $<TARGET_FILE:particles> ${MPIEXEC_POSTFLAGS} ${T_ARGS})
    set_tests_properties(example_particles_${name}.np${n} PROPERTIES TIMEOUT 120
      ENVIRONMENT "${A2AV_TEST_ENV}" LABELS "mpi;examples")
  endforeach()
endfunction()

set(_small --particles-per-rank 3000 --steps 30 --rebalance-every 8)
set(_passed "checks passed at every step")
foreach(exchange vendor auto inplace)
  a2av_particles_test(${exchange} MATCH ${_passed} ARGS ${_small} --exchange ${exchange})
endforeach()
foreach(algorithm inplace_bitonic inplace_pairwise)
  a2av_particles_test(${algorithm} MATCH ${_passed} "${algorithm}:chunk_bytes=1024 \\(leavers\\)"
    ARGS ${_small} --inplace-algorithm ${algorithm}:chunk_bytes=1024)
endforeach()
foreach(algorithm auto parking cyclic)
  a2av_particles_test(redistribute_${algorithm} MATCH ${_passed}
    ARGS ${_small} --rebalance redistribute --redistribute-algorithm ${algorithm})
endforeach()
# 5% headroom and no scheduled rebalance: ranks overflow as particles crowd together.
a2av_particles_test(tight MATCH ${_passed}
  "rebalances: 0 scheduled, [1-9][0-9]* forced" "\\(whole array\\)"
  ARGS --particles-per-rank 3000 --steps 30 --rebalance-every 1000 --capacity-factor 1.05)
a2av_particles_test(tight_redistribute MATCH ${_passed}
  "[1-9][0-9]* forced" "redistribute (parking|cyclic)"
  ARGS --particles-per-rank 3000 --steps 30 --rebalance-every 1000 --capacity-factor 1.05
       --rebalance redistribute)
# A 2x2 grid cannot be cut into equal parts within a budget of exactly N/P.
a2av_particles_test(over_budget FAIL MATCH "FAILED at step [0-9]+: after rebalancing"
  ARGS --particles-per-rank 3000 --steps 10 --capacity-factor 1 --grid-level 1)
a2av_particles_test(bench MATCH "inplace\\+redistribute .* passed" "# vendor ran: MPI_Alltoallv"
  ARGS --particles-per-rank 2000 --steps 12 --rebalance-every 4 --bench)
