# Parallel sorting (include/a2av/sort.hpp): sample sort by regular sampling and bucket sort.
target_sources(a2av PRIVATE
  ${PROJECT_SOURCE_DIR}/src/sort/bucket_sort.cpp
  ${PROJECT_SOURCE_DIR}/src/sort/sample_sort.cpp)
