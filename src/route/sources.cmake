# Permutation routing over a bitonic merge network and its 0-1 fixpoint analysis
# (include/a2av/route.hpp, docs/route.md).
target_sources(a2av PRIVATE
  ${PROJECT_SOURCE_DIR}/src/route/bitonic_route.cpp
  ${PROJECT_SOURCE_DIR}/src/route/fixpoints.cpp)
