# Installs headers, the library, its data files (share/a2av), the CMake package a2av (target
# a2av::a2av) and a2av.pc: the component `library` (`cmake --install --component library`
# leaves out the `a2av` command).
include(CMakePackageConfigHelpers)

install(DIRECTORY include/a2av DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT library
  PATTERN "*.in" EXCLUDE)
install(FILES ${PROJECT_BINARY_DIR}/include/a2av/version.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/a2av COMPONENT library)
install(DIRECTORY data/ DESTINATION ${CMAKE_INSTALL_DATADIR}/a2av COMPONENT library)
install(TARGETS a2av_preload LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT library)
install(TARGETS a2av EXPORT a2avTargets COMPONENT library
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT a2avTargets NAMESPACE a2av:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/a2av
  COMPONENT library)

configure_package_config_file(cmake/a2avConfig.cmake.in
  ${PROJECT_BINARY_DIR}/a2avConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/a2av)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/a2avConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/a2avConfig.cmake ${PROJECT_BINARY_DIR}/a2avConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/a2av COMPONENT library)

# The .pc file finds the prefix relative to itself, so installing with --prefix works.
file(RELATIVE_PATH A2AV_PC_TO_PREFIX "/root/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/root")
configure_file(cmake/a2av.pc.in ${PROJECT_BINARY_DIR}/a2av.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/a2av.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig
  COMPONENT library)
