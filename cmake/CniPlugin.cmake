# cni_add_plugin(<name> SOURCES <files...>)
# Builds one plugin executable into ${CNI_PLUGIN_BUILD_DIR} and installs it into
# ${CNI_PLUGIN_INSTALL_DIR}. The plugin's logic also goes into a static library
# <name>_lib (everything but main.cc) so unit tests can link it.
function(cni_add_plugin name)
  cmake_parse_arguments(ARG "" "" "SOURCES" ${ARGN})
  set(lib_sources ${ARG_SOURCES})
  list(FILTER lib_sources EXCLUDE REGEX "main\\.cc$")
  if(lib_sources)
    add_library(${name}_lib STATIC ${lib_sources})
    target_link_libraries(${name}_lib PUBLIC cni::sdk)
    target_include_directories(${name}_lib PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
    set(link_target ${name}_lib)
  else()
    set(link_target cni::sdk)
  endif()
  add_executable(${name} main.cc)
  target_link_libraries(${name} PRIVATE ${link_target})
  if(NOT CNI_SANITIZE)
    # Start-up cost: no symbol resolution against libstdc++ at every exec.
    target_link_options(${name} PRIVATE -static-libstdc++ -static-libgcc)
  endif()
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CNI_PLUGIN_BUILD_DIR})
  # A relative CNI_PLUGIN_INSTALL_DIR is taken relative to CMAKE_INSTALL_PREFIX.
  install(TARGETS ${name} RUNTIME DESTINATION ${CNI_PLUGIN_INSTALL_DIR} COMPONENT plugins)
  # packaging/ lists every plugin (install manifest, release tarball).
  set_property(GLOBAL APPEND PROPERTY CNI_PLUGINS ${name})
endfunction()
