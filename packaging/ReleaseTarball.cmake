# cmake -DBUILD_DIR=<build> -DOUT=<dir>/cni-plugins-linux-<arch>-v<version>.tgz
#       -DPLUGIN_DIR=<CNI_PLUGIN_INSTALL_DIR> -P ReleaseTarball.cmake
#
# Installs the "plugins" component of an existing build (stripped, nothing is
# rebuilt) into a staging directory and packs the plugins flat, as upstream's
# release tarball does (entries "./bridge", "./ptp", ...), reproducibly (sorted,
# owner 0, fixed mtime). Writes <OUT>.sha256 and <OUT>.sha512 beside it.
#
# With -DCOMPONENT=sdk (and no PLUGIN_DIR): the SDK tarball instead, the "sdk"
# component (headers, libcnisdk.a, the test kit libcnitesting.a, the CMake
# package, the pkg-config files, the docs) as a relocatable prefix tree
# (entries "./include/...", "./lib/...", "./share/..."): unpack it anywhere
# and point CMAKE_PREFIX_PATH or PKG_CONFIG_PATH at it.
if(NOT DEFINED COMPONENT)
  set(COMPONENT plugins)
endif()
set(required BUILD_DIR OUT)
if(COMPONENT STREQUAL "plugins")
  list(APPEND required PLUGIN_DIR)
endif()
foreach(var IN LISTS required)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "ReleaseTarball.cmake: -D${var}=... is required")
  endif()
endforeach()
get_filename_component(out_dir "${OUT}" DIRECTORY)
get_filename_component(out_name "${OUT}" NAME)
set(stage "${out_dir}/.tarball-stage")
file(REMOVE_RECURSE "${stage}")
file(MAKE_DIRECTORY "${stage}" "${out_dir}")

if(COMPONENT STREQUAL "sdk")
  # The installed CMake and pkg-config files find their prefix from their
  # own location, so the staged tree is the package as it is. (DESTDIR, so
  # that an absolute destination would land in the stage too.)
  execute_process(
    COMMAND ${CMAKE_COMMAND} -E env DESTDIR=${stage}
            ${CMAKE_COMMAND} --install ${BUILD_DIR} --component sdk --prefix / --strip
    OUTPUT_QUIET RESULT_VARIABLE rc)
  set(bin "${stage}")
  file(GLOB_RECURSE plugins RELATIVE "${bin}" "${bin}/*")
else()
  execute_process(
    COMMAND ${CMAKE_COMMAND} -E env DESTDIR=${stage}
            ${CMAKE_COMMAND} --install ${BUILD_DIR} --component plugins --prefix /usr --strip
    OUTPUT_QUIET RESULT_VARIABLE rc)
  if(IS_ABSOLUTE "${PLUGIN_DIR}")
    set(bin "${stage}${PLUGIN_DIR}")
  else()
    set(bin "${stage}/usr/${PLUGIN_DIR}")
  endif()
  file(GLOB plugins RELATIVE "${bin}" "${bin}/*")
endif()
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "installing the ${COMPONENT} component of ${BUILD_DIR} failed")
endif()
list(SORT plugins)
if(NOT plugins)
  message(FATAL_ERROR "nothing of ${COMPONENT} installed under ${bin}")
endif()
set(entries "")
foreach(p IN LISTS plugins)
  list(APPEND entries "./${p}")
endforeach()

find_program(TAR tar REQUIRED)
if(DEFINED ENV{SOURCE_DATE_EPOCH})
  set(mtime "@$ENV{SOURCE_DATE_EPOCH}")
else()
  set(mtime "@0")
endif()
execute_process(
  COMMAND ${TAR} --create --gzip --file ${OUT} --sort=name --owner=0 --group=0
          --numeric-owner --mtime=${mtime} ${entries}
  WORKING_DIRECTORY "${bin}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "tar failed")
endif()
file(REMOVE_RECURSE "${stage}")
foreach(algo SHA256 SHA512)
  file(${algo} "${OUT}" sum)
  string(TOLOWER ${algo} ext)
  file(WRITE "${OUT}.${ext}" "${sum}  ${out_name}\n")
endforeach()
list(JOIN plugins " " names)
message(STATUS "${OUT}: ${names}")
