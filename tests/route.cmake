# Permutation routing over a bitonic merge network (include/a2av/route.hpp): the MPI routing at
# powers of two and at 3 and 6 ranks (the +infinity extension), the 0-1 fixpoint analysis
# without MPI, and `a2av fixpoints` (the paper's 151 incorrect states at N = 16).
a2av_mpi_test(NAME test_route SOURCES mpi/test_route.cpp RANKS 1 2 3 4 6 8 16 TIMEOUT 120)

add_executable(test_fixpoints unit/test_fixpoints.cpp)
target_link_libraries(test_fixpoints PRIVATE a2av::a2av GTest::gtest_main)
target_compile_options(test_fixpoints PRIVATE -Wall -Wextra)
add_test(NAME test_fixpoints COMMAND test_fixpoints)
set_tests_properties(test_fixpoints PROPERTIES TIMEOUT 60 LABELS unit)

add_test(NAME tool_fixpoints
  COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tests/tool/expect.py --timeout 50
          --match "\n +16 +151 first_phase +25[.]8% +4 " --match "\n +16 +151 transposition "
          -- $<TARGET_FILE:a2av_tool> fixpoints 8 16)
add_test(NAME tool_fixpoints_error
  COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tests/tool/expect.py --timeout 50 --fail
          --once "N = 12 is not a power of two" -- $<TARGET_FILE:a2av_tool> fixpoints 12)
set_tests_properties(tool_fixpoints tool_fixpoints_error PROPERTIES
  ENVIRONMENT "${A2AV_TEST_ENV}" LABELS "tool;route")
