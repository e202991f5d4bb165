target_sources(a2av PRIVATE
  ${PROJECT_SOURCE_DIR}/src/sparse/dense.cpp
  ${PROJECT_SOURCE_DIR}/src/sparse/driver.cpp
  ${PROJECT_SOURCE_DIR}/src/sparse/grid.cpp
  ${PROJECT_SOURCE_DIR}/src/sparse/nbx.cpp
  ${PROJECT_SOURCE_DIR}/src/sparse/shared_memory.cpp
  ${PROJECT_SOURCE_DIR}/src/sparse/windowed_sends.cpp)
