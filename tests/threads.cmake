# Threads (docs/design.md, "Threads"): under MPI_THREAD_MULTIPLE, six threads per rank, each on
# its own communicator, run alltoallv, sparse and in-place exchanges at the same time. A plain
# main of its own (MPI_Init_thread), not the harness's. With -DA2AV_SANITIZE_THREADS=ON it runs
# under ThreadSanitizer, which sees a2av's accesses and not the MPI library's.
add_executable(test_threads mpi/test_threads.cpp)
target_link_libraries(test_threads PRIVATE a2av::a2av)
target_compile_options(test_threads PRIVATE -Wall -Wextra)
foreach(n 3 5)
  add_test(NAME test_threads.np${n}
    COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${n} ${A2AV_MPIEXEC_FLAGS}
            ${MPIEXEC_PREFLAGS} $<TARGET_FILE:test_threads> ${MPIEXEC_POSTFLAGS})
  set_tests_properties(test_threads.np${n} PROPERTIES TIMEOUT 120
    ENVIRONMENT "${A2AV_TEST_ENV}" LABELS mpi)
  # Any report fails the test. UCX_MEM_EVENTS=no: UCX's memory hooks (MPICH's transport here)
  # crash the sanitizer's interceptors when a thread ends.
  if(A2AV_SANITIZE_THREADS)
    set_property(TEST test_threads.np${n} APPEND PROPERTY ENVIRONMENT
      "TSAN_OPTIONS=ignore_noninstrumented_modules=1 halt_on_error=1" UCX_MEM_EVENTS=no)
  endif()
endforeach()
