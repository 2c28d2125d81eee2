# cni_add_plugin(<name> [DYNAMIC] SOURCES <files...>)
# Builds one plugin executable into ${CNI_PLUGIN_BUILD_DIR} and installs it into
# ${CNI_PLUGIN_INSTALL_DIR}. The plugin's logic also goes into a static library
# <name>_lib (everything but main.cc) so unit tests can link it.
#
# Start-up cost decides the link: a plugin is exec'ed on every pod start and
# most of a short call is spent loading and relocating shared libraries. So a
# plugin is a static PIE (no dynamic loader at all). No plugin loads
# libnftables: the nftables backend (ipMasq, macspoofchk, portmap) reads and
# writes over netlink (cni/fw/nft.h, nft_batch.h), and user-written nft text
# (portmap's conditions) goes through the nft program.
#
# The static link prints glibc's warnings that getaddrinfo, getprotobyname and
# getprotobynumber "require at runtime the shared libraries": libnl's addr.o
# and utils.o contain name-resolving helpers (nl_addr_parse of a host name,
# nl_ip_proto2str). The plugins never call them: they build every address from
# bytes and never print protocol names, so no NSS module is ever loaded.
#
# DYNAMIC: for a plugin that needs a library Debian ships only as a shared
# object. It still links libstdc++ and libgcc statically, as the non-static
# build does. No plugin needs it today: firewall, which talks to firewalld
# through libsystemd's sd-bus, leaves that to a small dynamically linked
# helper (meta/firewall/helper_main.cc) and stays a static PIE.
function(cni_add_plugin name)
  cmake_parse_arguments(ARG "DYNAMIC" "" "SOURCES" ${ARGN})
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
  if(CNI_SANITIZE)
    # Sanitizers want the shared runtime libraries.
  elseif(NOT CNI_STATIC_PLUGINS OR ARG_DYNAMIC)
    target_link_options(${name} PRIVATE -static-libstdc++ -static-libgcc -Wl,--gc-sections)
  else()
    # --gc-sections drops the functions no plugin path reaches (libstdc++'s
    # and the SDK's, built with -ffunction-sections): tuning's text 3.46 ->
    # 2.89 MB from libstdc++ alone.
    target_link_options(${name} PRIVATE -static-pie -Wl,--gc-sections)
  endif()
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CNI_PLUGIN_BUILD_DIR})
  # A relative CNI_PLUGIN_INSTALL_DIR is taken relative to CMAKE_INSTALL_PREFIX.
  install(TARGETS ${name} RUNTIME DESTINATION ${CNI_PLUGIN_INSTALL_DIR} COMPONENT plugins)
  # packaging/ lists every plugin (install manifest, release tarball).
  set_property(GLOBAL APPEND PROPERTY CNI_PLUGINS ${name})
endfunction()
