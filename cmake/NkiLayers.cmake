# The layers, enforced (table in nki_layers.cmake):
# - at configure time, each library's target may link only the libraries below it;
# - at build time (target nki_layering, part of `all`), every #include of dsl/, simulator/,
#   runtime/ and kernels/ follows the layers (check_layers.cmake); a violation fails the build.
include(${CMAKE_CURRENT_LIST_DIR}/nki_layers.cmake)

foreach(lib IN LISTS NKI_LAYERS)
  if(NOT TARGET nki_${lib})
    continue()  # python: not built without Python
  endif()
  get_target_property(links nki_${lib} LINK_LIBRARIES)
  get_target_property(interface_links nki_${lib} INTERFACE_LINK_LIBRARIES)
  foreach(dep IN LISTS links interface_links)
    string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" dep "${dep}")
    string(REGEX REPLACE "^nki(::|_)" "" layer "${dep}")
    if(layer STREQUAL dep OR NOT layer IN_LIST NKI_LAYERS OR layer STREQUAL lib)
      continue()  # not one of the layered libraries
    endif()
    if(NOT layer IN_LIST NKI_LAYER_USES_${lib})
      message(FATAL_ERROR "nki_${lib} links ${dep}, a library above it (cmake/nki_layers.cmake)")
    endif()
  endforeach()
endforeach()

set(NKI_LAYERED_GLOBS "")
foreach(lib IN LISTS NKI_LAYERS)
  list(APPEND NKI_LAYERED_GLOBS ${PROJECT_SOURCE_DIR}/${NKI_LAYER_DIR_${lib}}/*.h
       ${PROJECT_SOURCE_DIR}/${NKI_LAYER_DIR_${lib}}/*.cpp)
endforeach()
file(GLOB_RECURSE NKI_LAYERED_FILES CONFIGURE_DEPENDS ${NKI_LAYERED_GLOBS})
add_custom_command(OUTPUT ${PROJECT_BINARY_DIR}/layering.stamp
  COMMAND ${CMAKE_COMMAND} -DNKI_SOURCE_DIR=${PROJECT_SOURCE_DIR} -DNKI_STAMP=${PROJECT_BINARY_DIR}/layering.stamp
          -P ${CMAKE_CURRENT_LIST_DIR}/check_layers.cmake
  DEPENDS ${NKI_LAYERED_FILES} ${CMAKE_CURRENT_LIST_DIR}/check_layers.cmake ${CMAKE_CURRENT_LIST_DIR}/nki_layers.cmake
  COMMENT "Checking every include against the layers")
add_custom_target(nki_layering ALL DEPENDS ${PROJECT_BINARY_DIR}/layering.stamp)
