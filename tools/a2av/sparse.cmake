target_sources(a2av_tool PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/sparse_bench.cpp)
