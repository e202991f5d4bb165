# The Python package (python/, docs/python.md) as users meet it: installed, the prefix moved
# (the preload tests' fixture, tests/preload.cmake), found through PYTHONPATH alone with
# LD_LIBRARY_PATH unset, under A2AV_PYTHON (Debian's python3) and its mpi4py, which is built for Open MPI.
# Each program checks every byte and prints " No Errors" on rank 0 (tests/python/).
# The package is built where A2AV_PYTHON has its headers (python/CMakeLists.txt).
set(_python_usable FALSE)
if(TARGET a2av_python_exchange AND A2AV_MPI_FLAVOUR STREQUAL "Open MPI")
  execute_process(COMMAND ${A2AV_PYTHON} -c "import mpi4py, numpy"
                  RESULT_VARIABLE _python_imports OUTPUT_QUIET ERROR_QUIET)
  if(_python_imports EQUAL 0)
    set(_python_usable TRUE)
  endif()
endif()
if(NOT _python_usable)
  message(STATUS "a2av: no python_ tests (they need the package built, ${A2AV_PYTHON} with "
                 "mpi4py and numpy, and Open MPI)")
  return()
endif()

set(_python ${A2AV_PYTHON})
set(_python_env env -u LD_LIBRARY_PATH
    PYTHONPATH=${CMAKE_CURRENT_BINARY_DIR}/preload/relocated/lib/python3/dist-packages)
set(_python_expect ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tests/tool/expect.py --timeout 100)

# The package imports (and so finds its library) with nothing but PYTHONPATH.
string(REPLACE "." "[.]" _version_pattern "${PROJECT_VERSION}")
add_test(NAME python_import
  COMMAND ${_python_expect} --match "^${_version_pattern}$" --
          ${_python_env} ${_python} -c "import a2av; print(a2av.__version__)")
set_tests_properties(python_import PROPERTIES TIMEOUT 120 FIXTURES_REQUIRED preload_prefix
  ENVIRONMENT "${A2AV_TEST_ENV}" LABELS "python")

foreach(program alltoallv sparse inplace errors)
  foreach(n 1 2 3 4)
    add_test(NAME python_${program}.np${n}
      COMMAND ${_python_expect} --match " No Errors" --
              ${MPIEXEC_EXECUTABLE} ${A2AV_MPIEXEC_FLAGS} -n ${n} ${_python_env} ${_python}
              ${CMAKE_CURRENT_SOURCE_DIR}/python/test_${program}.py)
    set_tests_properties(python_${program}.np${n} PROPERTIES TIMEOUT 120
      FIXTURES_REQUIRED preload_prefix ENVIRONMENT "${A2AV_TEST_ENV}" LABELS "mpi;python")
  endforeach()
endforeach()

# Threads, each on its own communicator, through every call at once (test_threads.py).
foreach(n 1 3)
  add_test(NAME python_threads.np${n}
    COMMAND ${_python_expect} --match " No Errors" --
            ${MPIEXEC_EXECUTABLE} ${A2AV_MPIEXEC_FLAGS} -n ${n} ${_python_env} ${_python}
            ${CMAKE_CURRENT_SOURCE_DIR}/python/test_threads.py)
  set_tests_properties(python_threads.np${n} PROPERTIES TIMEOUT 120
    FIXTURES_REQUIRED preload_prefix ENVIRONMENT "${A2AV_TEST_ENV}" LABELS "mpi;python")
endforeach()
