# Block redistribution: the local algorithm without MPI, the engine at every rank count.
add_executable(test_redist_unit unit/test_transmutation.cpp)
target_link_libraries(test_redist_unit PRIVATE a2av::a2av GTest::gtest_main)
target_include_directories(test_redist_unit PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_compile_options(test_redist_unit PRIVATE -Wall -Wextra)
add_test(NAME test_redist_unit COMMAND test_redist_unit)
set_tests_properties(test_redist_unit PROPERTIES TIMEOUT 60 LABELS unit)

a2av_mpi_test(NAME test_redistribute SOURCES mpi/test_redistribute.cpp)
