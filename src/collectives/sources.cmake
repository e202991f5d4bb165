# The textbook collectives (include/a2av/collectives.hpp, docs/collectives.md).
target_sources(a2av PRIVATE
  ${PROJECT_SOURCE_DIR}/src/collectives/allgather.cpp
  ${PROJECT_SOURCE_DIR}/src/collectives/allreduce.cpp
  ${PROJECT_SOURCE_DIR}/src/collectives/alltoall.cpp
  ${PROJECT_SOURCE_DIR}/src/collectives/bcast.cpp
  ${PROJECT_SOURCE_DIR}/src/collectives/common.cpp
  ${PROJECT_SOURCE_DIR}/src/collectives/halving.cpp
  ${PROJECT_SOURCE_DIR}/src/collectives/model.cpp
  ${PROJECT_SOURCE_DIR}/src/collectives/reduce.cpp
  ${PROJECT_SOURCE_DIR}/src/collectives/scatter_gather.cpp)
