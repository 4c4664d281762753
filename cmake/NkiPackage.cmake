# The nki CMake package: find_package(nki CONFIG) from an install prefix (cmake --install) or
# from this build tree (nki_DIR=<build dir>) gives nki::nki and the libraries it is made of.
include(CMakePackageConfigHelpers)

set(NKI_EXPORTED_TARGETS nki_dsl nki_simulator nki_core nki_compile nki_dist nki_launch nki_tune nki_runtime nki_kernels
  nki_cli nki_nki)
if(NKI_HAVE_PYTHON)
  list(APPEND NKI_EXPORTED_TARGETS nki_python)  # nki::python: nki/python.h, for modules of your own
endif()
foreach(target IN LISTS NKI_EXPORTED_TARGETS)
  string(REPLACE "nki_" "" export_name ${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${export_name})
endforeach()

install(TARGETS ${NKI_EXPORTED_TARGETS} EXPORT nkiTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS nki RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
set(NKI_INCLUDE_DIRS dsl/include simulator/include runtime/core/include runtime/compile/include runtime/dist/include
  runtime/launch/include runtime/tune/include runtime/cli/include kernels/include)
if(NKI_HAVE_PYTHON)
  list(APPEND NKI_INCLUDE_DIRS runtime/python/include)
endif()
foreach(dir IN LISTS NKI_INCLUDE_DIRS)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${dir}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endforeach()

set(NKI_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/nki)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/nkiConfig.cmake.in ${PROJECT_BINARY_DIR}/nkiConfig.cmake
  INSTALL_DESTINATION ${NKI_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/nkiConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(EXPORT nkiTargets NAMESPACE nki:: DESTINATION ${NKI_CMAKE_DIR})
install(FILES ${PROJECT_BINARY_DIR}/nkiConfig.cmake ${PROJECT_BINARY_DIR}/nkiConfigVersion.cmake DESTINATION ${NKI_CMAKE_DIR})
# The build tree is a package too: nki_DIR=<build dir> uses the libraries where they were built.
export(EXPORT nkiTargets NAMESPACE nki:: FILE ${PROJECT_BINARY_DIR}/nkiTargets.cmake)
