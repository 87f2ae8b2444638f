# Install the library, its headers and a package config, so that find_package(hwaro)
# works from an install prefix; export(...) makes it work from the build tree too.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS hwaro EXPORT hwaroTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS hwaro_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY include/hwaro DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT hwaroTargets NAMESPACE hwaro:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/hwaro)

configure_package_config_file(cmake/hwaroConfig.cmake.in ${CMAKE_CURRENT_BINARY_DIR}/hwaroConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/hwaro)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/hwaroConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/hwaroConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/hwaroConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/hwaro)

export(EXPORT hwaroTargets NAMESPACE hwaro:: FILE ${CMAKE_CURRENT_BINARY_DIR}/hwaroTargets.cmake)
