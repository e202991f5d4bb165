target_sources(a2av PRIVATE
  ${PROJECT_SOURCE_DIR}/src/redistribute/block_store.cpp
  ${PROJECT_SOURCE_DIR}/src/redistribute/cyclic.cpp
  ${PROJECT_SOURCE_DIR}/src/redistribute/parking.cpp
  ${PROJECT_SOURCE_DIR}/src/redistribute/redistributor.cpp
  ${PROJECT_SOURCE_DIR}/src/redistribute/transfer.cpp
  ${PROJECT_SOURCE_DIR}/src/redistribute/transmutation.cpp)
