# `a2av fixpoints`: the 0-1 fixpoint analysis of the bitonic merger (src/route/fixpoints.cpp).
target_sources(a2av_tool PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/fixpoints_command.cpp)
