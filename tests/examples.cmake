# The applications (examples/fft, examples/transitive_closure; TuNA paper, Section VI) on
# small inputs at 3 and 4 ranks. Each program checks its own result (FFT: against FFTW's
# MPI transform and by a round trip; closure: against a serial closure) and exits non-zero
# on a failed check. a2av_mpi_test passes no arguments, so these are registered here.

# a2av_example_test(NAME <name> TARGET <target> ARGS ...): one ctest per rank count.
function(a2av_example_test)
  cmake_parse_arguments(T "" "NAME;TARGET" "ARGS" ${ARGN})
  foreach(n 3 4)
    add_test(NAME ${T_NAME}.np${n}
      COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${n} ${A2AV_MPIEXEC_FLAGS}
              ${MPIEXEC_PREFLAGS} $<TARGET_FILE:${T_TARGET}> ${MPIEXEC_POSTFLAGS} ${T_ARGS})
    set_tests_properties(${T_NAME}.np${n} PROPERTIES TIMEOUT 60
      ENVIRONMENT "${A2AV_TEST_ENV}" LABELS "mpi;examples")
  endforeach()
endfunction()

# Sizes that divide by none of 3 and 4, so every transpose has uneven and empty blocks; the
# paper's N1 configuration also leaves ranks without data.
if(TARGET fft)
  foreach(decomposition slab pencil)
    foreach(algorithm auto vendor inplace inplace_pairwise inplace_bitonic)
      a2av_example_test(NAME fft_${decomposition}_${algorithm} TARGET fft
        ARGS --decomposition ${decomposition} --algorithm ${algorithm} --size 10,7,6)
    endforeach()
    a2av_example_test(NAME fft_${decomposition}_n1 TARGET fft
      ARGS --decomposition ${decomposition} --config n1 --algorithm inplace_pairwise)
  endforeach()
  a2av_example_test(NAME fft_bench TARGET fft ARGS --size 9,5,11 --decomposition pencil --bench
    --iterations 2 --algorithms vendor,auto,inplace_bitonic)
endif()

if(TARGET transitive_closure)
  foreach(algorithm auto vendor inplace inplace_pairwise inplace_bitonic)
    a2av_example_test(NAME transitive_closure_${algorithm} TARGET transitive_closure
      ARGS --scale 10 --edges 1500 --seed 7 --algorithm ${algorithm})
  endforeach()
  a2av_example_test(NAME transitive_closure_sparse_nbx TARGET transitive_closure
    ARGS --scale 10 --edges 1500 --seed 7 --algorithm sparse:nbx)
  a2av_example_test(NAME transitive_closure_file TARGET transitive_closure
    ARGS --input ${PROJECT_SOURCE_DIR}/examples/transitive_closure/data/chain_and_cycle.txt)
  a2av_example_test(NAME transitive_closure_bench TARGET transitive_closure
    ARGS --scale 10 --edges 1500 --bench --algorithms vendor,auto,inplace_pairwise,sparse:grid)
endif()
