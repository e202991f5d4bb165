# Parallel sorting (include/a2av/sort.hpp): the library functions at every rank count, then
# the sample_sort example, which verifies its own output and exits non-zero if it is wrong.
a2av_mpi_test(NAME test_sort SOURCES mpi/test_sort.cpp MAX_RANKS 8 TIMEOUT 120)

if(TARGET sample_sort)
  foreach(n 3 4)
    add_test(NAME example_sample_sort.np${n}
      COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tests/tool/expect.py --timeout 100
              --once "sorted, permutation verified" --
              ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${n} ${A2AV_MPIEXEC_FLAGS}
              ${MPIEXEC_PREFLAGS} $<TARGET_FILE:sample_sort> ${MPIEXEC_POSTFLAGS}
              --keys-per-rank 20000 --distribution duplicates --records)
    add_test(NAME example_sample_sort_bench.np${n}
      COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tests/tool/expect.py --timeout 100
              --match "vendor" --match "within the bound" --
              ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${n} ${A2AV_MPIEXEC_FLAGS}
              ${MPIEXEC_PREFLAGS} $<TARGET_FILE:sample_sort> ${MPIEXEC_POSTFLAGS}
              --keys-per-rank 5000 --distribution skewed --bench --repetitions 2)
    set_tests_properties(example_sample_sort.np${n} example_sample_sort_bench.np${n}
      PROPERTIES TIMEOUT 120 ENVIRONMENT "${A2AV_TEST_ENV}" LABELS "mpi;sort;example")
  endforeach()
endif()
