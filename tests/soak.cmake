# The soak: tests/soak/soak.cpp makes 100 000 calls with changing patterns, sizes,
# algorithms and communicators and fails if resident memory, open file descriptors or the
# library's /dev/shm entries grow; kill_mid_exchange.py kills ranks during shared-memory
# exchanges and fails if a segment name is left in /dev/shm.
add_executable(soak soak/soak.cpp)
target_link_libraries(soak PRIVATE a2av::a2av)
target_compile_options(soak PRIVATE -Wall -Wextra)

add_test(NAME soak.np4
  COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 4 ${A2AV_MPIEXEC_FLAGS}
          ${MPIEXEC_PREFLAGS} $<TARGET_FILE:soak> ${MPIEXEC_POSTFLAGS})
set_tests_properties(soak.np4 PROPERTIES TIMEOUT 300 ENVIRONMENT "${A2AV_TEST_ENV}"
  LABELS "mpi;soak;long")

add_test(NAME soak_kill_shm
  COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/soak/kill_mid_exchange.py
          --soak $<TARGET_FILE:soak> --mpiexec ${MPIEXEC_EXECUTABLE}
          --numproc-flag=${MPIEXEC_NUMPROC_FLAG} --rounds 1 -- ${A2AV_MPIEXEC_FLAGS})
set_tests_properties(soak_kill_shm PROPERTIES TIMEOUT 300 ENVIRONMENT "${A2AV_TEST_ENV}"
  LABELS "mpi;soak")
