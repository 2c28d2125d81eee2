#!/usr/bin/env bash
# Package test: installation and the SDK for third-party plugins.
#   install_test.sh <build-dir> <source-dir> <config> <version> <plugin-install-dir> <libdir> <includedir>
#
# 1. Installs the build (nothing is rebuilt) into a scratch root (DESTDIR, prefix
#    /usr) and compares the installed files with a manifest built from the source
#    tree: every plugin, every public header (the test kit's cni/testing/
#    included), libcnisdk.a and libcnitesting.a, the CMake package, the
#    pkg-config files; nothing else. The CMake and pkg-config files and the
#    libraries' data (debug info aside) must not name the source or build tree.
# 2. Every installed plugin prints "CNI <name> plugin <version> (cni-cpp)".
# 3. --prefix works for the SDK component.
# 4. Configures and builds sdk/examples/route-plugin against the INSTALLED SDK
#    (find_package(CniSdk COMPONENTS testing), with warnings as errors) and
#    runs its tests, written with the installed test kit (cni::testing; as
#    root they include the namespace case).
#    As root, the installed cni-conformance passes it (chained after the
#    installed ptp, tests/conformance/route-example.conflist).
# 5. Builds the same example with only `pkg-config --cflags --libs cni-sdk` and
#    runs it through the CNI protocol; builds sdk/README.md's cni::testing
#    example with only `pkg-config ... cni-testing` and, as root, runs it.
set -euo pipefail
build=$(realpath "$1") src=$(realpath "$2") config=$3 version=$4 plugindir=$5 libdir=$6 includedir=$7
here=$(dirname "$(realpath "$0")")
source "$here/common.sh"
jobs=$(nproc)
(( jobs > 2 )) && jobs=2

scratch=$(mktemp -d /tmp/cni-package-test.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
root=$scratch/root
prefix=/usr

step "install into DESTDIR=$root, prefix $prefix"
DESTDIR=$root cmake --install "$build" --prefix "$prefix" >"$scratch/install.log" ||
  { cat "$scratch/install.log"; fail "cmake --install"; }

step "installed files match the manifest"
[[ $plugindir = /* ]] || plugindir=$prefix/$plugindir
[[ $libdir = /* ]] || libdir=$prefix/$libdir
[[ $includedir = /* ]] || includedir=$prefix/$includedir
plugins=$(source_plugins "$src")
[[ -n $plugins ]] || fail "no plugins found in the source tree"
if [[ -f $build/packaging/plugins.txt ]] && ! diff <(echo "$plugins") "$build/packaging/plugins.txt" >/dev/null; then
  fail "the build's plugin list differs from the source tree's: $(diff <(echo "$plugins") "$build/packaging/plugins.txt")"
fi
{
  for p in $plugins; do echo "$plugindir/$p"; done
  for h in $(source_helpers "$src"); do echo "$plugindir/$h"; done
  echo "$plugindir/cnitool"
  echo "$plugindir/cni-conformance"
  for u in $(source_units "$src"); do echo "$prefix/$u"; done
  (cd "$src/sdk/include" && find cni -name '*.h') | sed "s|^|$includedir/|"
  for d in $(source_sdk_docs "$src"); do echo "$prefix/$d"; done
  echo "$libdir/libcnisdk.a"
  echo "$libdir/libcnitesting.a"
  echo "$libdir/pkgconfig/cni-sdk.pc"
  echo "$libdir/pkgconfig/cni-testing.pc"
  for f in CniSdkConfig.cmake CniSdkConfigVersion.cmake CniSdkTargets.cmake \
           "CniSdkTargets-$(config_suffix "$config").cmake"; do
    echo "$libdir/cmake/CniSdk/$f"
  done
} | sort >"$scratch/expected"
(cd "$root" && find . -type f -o -type l) | sed 's|^\.||' | sort >"$scratch/actual"
if ! diff -u "$scratch/expected" "$scratch/actual"; then
  fail "installed files differ from the manifest (- expected, + installed)"
fi
echo "$(wc -l <"$scratch/actual") files: $(echo $plugins | wc -w) plugins, SDK headers, lib, CMake and pkg-config files"
if grep -rlF -e "$src" -e "$build" "$root$libdir/cmake" "$root$libdir/pkgconfig"; then
  fail "installed package files point into the source or build tree"
fi
# The libraries' own data: no compiled-in source or build directory (the
# test kit takes plugin paths from the test). Debug info names the sources
# by design; it is what --strip (and the .deb) drop.
for lib in libcnisdk.a libcnitesting.a; do
  objcopy --strip-debug "$root$libdir/$lib" "$scratch/$lib"
  if strings "$scratch/$lib" | grep -F -e "$src" -e "$build"; then
    fail "$lib holds a path of the source or build tree"
  fi
done

step "every plugin's about line names the project, the plugin and the version"
for p in $plugins; do
  about=$(env -i "$root$plugindir/$p" </dev/null 2>&1 >/dev/null) || fail "$p: exit status $? without CNI_COMMAND"
  line=${about%%$'\n'*}
  want="CNI $p plugin $version (cni-cpp)"
  [[ $line == "$want" ]] || fail "$p: about line \"$line\", want \"$want\""
  echo "  $line"
done

step "--prefix relocates the SDK"
cmake --install "$build" --prefix "$scratch/prefix2" --component sdk >/dev/null
[[ -f $scratch/prefix2/${includedir#$prefix/}/cni/protocol/skel.h && -f $scratch/prefix2/${libdir#$prefix/}/libcnisdk.a ]] ||
  fail "--prefix: SDK not under $scratch/prefix2"

example=$src/sdk/examples/route-plugin
step "build $example and its kit-based tests against the installed SDK (CMake)"
# The build's compiler launcher (ccache) too, with the scratch directory as
# ccache's base, so that the next run's random scratch path still hits.
launcher=$(sed -n 's/^CMAKE_CXX_COMPILER_LAUNCHER:[A-Z]*=//p' "$build/CMakeCache.txt")
export CCACHE_BASEDIR=$scratch
started=$SECONDS
cmake -G Ninja -S "$example" -B "$scratch/example" \
  -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_COMPILER_LAUNCHER="$launcher" \
  -DCMAKE_PREFIX_PATH="$root$prefix" \
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF \
  -DCMAKE_EXPORT_COMPILE_COMMANDS=ON \
  -DCMAKE_CXX_FLAGS="-Wall -Wextra -Wpedantic -Werror" >"$scratch/example-configure.log" ||
  { cat "$scratch/example-configure.log"; fail "configuring the example"; }
found=$(sed -n 's/^CniSdk_DIR:PATH=//p' "$scratch/example/CMakeCache.txt")
[[ $found == "$root$libdir/cmake/CniSdk" ]] || fail "the example found CniSdk in \"$found\", not in the installed copy"
ninja -C "$scratch/example" -j"$jobs" >"$scratch/example-build.log" ||
  { cat "$scratch/example-build.log"; fail "building the example"; }
if grep -qF -e "$src/sdk/include" -e "$build" "$scratch/example/compile_commands.json"; then
  fail "the example was compiled against the source or build tree's SDK"
fi
grep -qF "$root$includedir" "$scratch/example/compile_commands.json" ||
  fail "the example was not compiled against the installed headers"
grep -qF "$root$libdir/libcnitesting.a" "$scratch/example/build.ninja" ||
  fail "the example's test did not link the installed libcnitesting.a"
if grep -rq '#include "support/' "$example"; then fail "the example includes the project's own test support"; fi
ctest --test-dir "$scratch/example" --output-on-failure || fail "the example's tests"
echo "  built and tested in $((SECONDS - started)) s"

step "the installed cni-conformance passes the example (chained after the installed ptp)"
if [[ $(id -u) -ne 0 ]]; then
  echo "  SKIP: needs root for its private namespaces"
else
  "$root$plugindir/cni-conformance" --cni-path "$root$plugindir" "$scratch/example/route-example" \
    "$src/tests/conformance/route-example.conflist" >"$scratch/conformance.txt" ||
    { cat "$scratch/conformance.txt"; fail "cni-conformance against the example"; }
  echo "  $(tail -1 "$scratch/conformance.txt")"
fi

step "build the example with pkg-config only"
export PKG_CONFIG_PATH=$root$libdir/pkgconfig
pkg-config --exists --print-errors cni-sdk || fail "pkg-config cni-sdk"
[[ $(pkg-config --modversion cni-sdk) == "$version" ]] || fail "cni-sdk.pc version"
# shellcheck disable=SC2046
g++ -std=c++20 -Wall -Wextra -Werror -O1 "$example/main.cc" "$example/route_example.cc" \
  $(pkg-config --cflags --libs cni-sdk) -static-libstdc++ -static-libgcc -o "$scratch/route-example-pc" ||
  fail "compiling with pkg-config flags: $(pkg-config --cflags --libs cni-sdk)"
out=$(env -i CNI_COMMAND=VERSION "$scratch/route-example-pc" </dev/null)
[[ $out == *'"supportedVersions"'* ]] || fail "pkg-config build: VERSION printed \"$out\""
conf='{"cniVersion":"1.0.0","name":"n","type":"route-example","routes":[{"dst":"192.0.2.0/24"}]}'
out=$(env -i CNI_COMMAND=ADD CNI_CONTAINERID=c1 CNI_NETNS=/run/netns/none CNI_IFNAME=eth0 CNI_PATH=/opt/cni/bin \
  "$scratch/route-example-pc" <<<"$conf" || true)
[[ $out == *'"code":7'*'prevResult missing'* ]] || fail "pkg-config build: ADD without prevResult printed \"$out\""
# The kit through pkg-config (cni-testing brings cni-sdk): the example test
# of sdk/README.md's "Testing a plugin: cni::testing", compiled as shown and,
# as root, run against the example plugin.
step "sdk/README.md's cni::testing example, built with pkg-config cni-testing"
pkg-config --exists --print-errors cni-testing || fail "pkg-config cni-testing"
{
  echo '#define CATCH_CONFIG_MAIN'
  sed -n '/^## Testing a plugin: cni::testing/,/^## /p' "$src/sdk/README.md" | sed -n '/^```cpp$/,/^```$/p' | sed '/^```/d'
} >"$scratch/readme_kit_test.cc"
grep -q TEST_CASE "$scratch/readme_kit_test.cc" || fail "no C++ example in sdk/README.md's cni::testing section"
# shellcheck disable=SC2046
(cd "$scratch" && $launcher g++ -std=c++20 -Wall -Wextra -Werror -O1 readme_kit_test.cc \
  $(pkg-config --cflags --libs cni-testing) -o readme_kit_test) ||
  fail "compiling with pkg-config flags: $(pkg-config --cflags --libs cni-testing)"
if [[ $(id -u) -ne 0 ]]; then
  echo "  SKIP running it: needs root"
else
  CNI_PLUGIN_DIR=$scratch/example "$scratch/readme_kit_test" >"$scratch/readme_kit_test.log" 2>&1 ||
    { cat "$scratch/readme_kit_test.log"; fail "sdk/README.md's cni::testing example"; }
  echo "  $(grep -E "^(All tests passed|test cases:)" "$scratch/readme_kit_test.log" | tail -1)"
fi

libs=$(ldd "$scratch/route-example-pc")
if grep -q 'libabsl\|libstdc++' <<<"$libs"; then
  fail "pkg-config build links Abseil or libstdc++ dynamically: $libs"
fi

echo "install_test: PASS"
