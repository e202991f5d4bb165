# a2av bench --collectives (collectives_bench.hpp).
target_sources(a2av_tool PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/collectives_bench.cpp)
