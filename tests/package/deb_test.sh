#!/usr/bin/env bash
# Package test: the Debian packages and the release tarball.
#   deb_test.sh <build-dir> <source-dir> <version> <plugin-install-dir> <libdir> <includedir> <nftables-soname>
#
# 1. Builds both .deb packages from the existing build with CPack (into a
#    scratch directory; nothing is rebuilt when the build is up to date).
# 2. cni-cpp-plugins holds exactly the plugins in <plugin-install-dir>, and its
#    declared Depends cover every shared library `ldd` reports for every
#    packaged binary (the package owning each library must be declared).
#    nftables (the nft program, run only for user-written nft text) is
#    Recommended; no plugin loads libnftables.
# 3. Root only: every plugin runs (VERSION, about line) in a chroot that holds
#    nothing but the files of the declared Depends and their own Depends; there,
#    without nft or libnftables (and in a private network namespace), the
#    nftables backend still works (portmap GC and ADD: written over netlink),
#    and only user-written nft conditions fail, with a CNI error naming nft.
# 4. cni-cpp-sdk-dev holds the headers (the test kit's included), libcnisdk.a,
#    libcnitesting.a, the CMake package and the .pc files, and depends on the
#    -dev packages its users compile against.
# 5. The release tarball has the plugins at its top level and valid checksums.
# 6. The SDK tarball holds what cni-cpp-sdk-dev holds (test kit included), as
#    a prefix tree that works where it is unpacked (pkg-config), with valid
#    checksums.
set -euo pipefail
build=$(realpath "$1") src=$(realpath "$2") version=$3 plugindir=$4 libdir=$5 includedir=$6 nft_soname=$7
here=$(dirname "$(realpath "$0")")
source "$here/common.sh"

scratch=$(mktemp -d /tmp/cni-deb-test.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
plugins=$(source_plugins "$src")
helpers=$(source_helpers "$src")  # shipped next to the plugins (firewall-firewalld)
# CPack installs with prefix /usr.
[[ $plugindir = /* ]] || plugindir=/usr/$plugindir
[[ $libdir = /* ]] || libdir=/usr/$libdir
[[ $includedir = /* ]] || includedir=/usr/$includedir

step "cpack -G DEB"
(cd "$build" && cpack -G DEB -B "$scratch/pkgs") >"$scratch/cpack.log" 2>&1 ||
  { cat "$scratch/cpack.log"; fail "cpack"; }
arch=$(dpkg --print-architecture)
deb=$scratch/pkgs/cni-cpp-plugins_${version}_$arch.deb
sdk=$scratch/pkgs/cni-cpp-sdk-dev_${version}_$arch.deb
[[ -f $deb && -f $sdk ]] || fail "expected $(basename "$deb") and $(basename "$sdk"), got: $(ls "$scratch/pkgs")"

step "cni-cpp-plugins: contents"
dpkg-deb -c "$deb" | awk '$1 !~ /^d/ {print $6}' | sed 's|^\.||' | sort >"$scratch/deb-files"
{
  for p in $plugins $helpers; do echo "$plugindir/$p"; done
  for u in $(source_units "$src"); do echo "/usr/$u"; done
} | sort >"$scratch/want-files"
diff -u "$scratch/want-files" "$scratch/deb-files" || fail "cni-cpp-plugins contents (- expected, + packaged)"

step "cni-cpp-plugins: Depends cover ldd of every binary"
depends=$(dpkg-deb -f "$deb" Depends)
echo "  Depends: $depends"
# Package names only (drop versions and architecture qualifiers; every
# alternative counts).
names() { tr ',|' '\n\n' | sed -e 's/(.*)//' -e 's/:.*//' -e 's/ //g' | { grep -v '^$' || true; } | sort -u | xargs; }
member() { [[ " $2 " == *" $1 "* ]]; }
declared=$(names <<<"$depends")
# What apt would install with them: the closure under Depends/Pre-Depends
# (first alternative only).
closure="" queue=$declared
while [[ -n $queue ]]; do
  next=""
  for pkg in $queue; do
    member "$pkg" "$closure" && continue
    closure+="$pkg "
    deps=$(dpkg-query -W -f='${Depends},${Pre-Depends}' "$pkg" 2>/dev/null || true)
    next+=" $(tr ',' '\n' <<<"$deps" | sed 's/|.*//' | names)"
  done
  queue=$next
done
dpkg-deb -x "$deb" "$scratch/x"
# Each packaged systemd unit starts a packaged program (cni-dhcp.service: the dhcp daemon).
for u in $(source_units "$src"); do
  exec=$(sed -n 's/^ExecStart=\([^ ]*\).*/\1/p' "$scratch/x/usr/$u")
  [[ -z $exec || -x $scratch/x$exec ]] || fail "$u: ExecStart=$exec is not in the package"
done
declare -A owner_of=()
owner() {  # sets $pkg: the package owning a library path (merged /usr: try both spellings)
  local path=$1 alt
  if [[ -z ${owner_of[$path]+set} ]]; then
    alt=$( [[ $path == /usr/* ]] && echo "${path#/usr}" || echo "/usr$path")
    owner_of[$path]=$({ dpkg -S "$path" 2>/dev/null || dpkg -S "$alt" 2>/dev/null ||
                         dpkg -S "$(realpath "$path")" 2>/dev/null || true; } | sed -n 1p | cut -d: -f1)
  fi
  pkg=${owner_of[$path]}
}
# Every library ldd loads (direct or not) must come from the closure; every
# library a plugin names itself (DT_NEEDED) from a package Depends declares.
needed_pkgs=""
for bin in "$scratch/x$plugindir"/*; do
  name=$(basename "$bin")
  ldd "$bin" >"$scratch/ldd" || fail "$name: ldd failed"
  if grep -q 'not found' "$scratch/ldd"; then fail "$name: $(grep 'not found' "$scratch/ldd")"; fi
  direct=$(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | xargs)
  while read -r soname lib; do
    [[ -n $lib ]] || continue
    owner "$lib"
    [[ -n $pkg ]] || fail "$name needs $lib, which no package owns"
    member "$pkg" "$closure" || fail "$name loads $lib from $pkg, which Depends does not bring in ($depends)"
    if member "$soname" "$direct"; then
      member "$pkg" "$declared" || fail "$name needs $soname from $pkg, which Depends does not declare ($depends)"
      needed_pkgs+="$pkg "
    fi
  done < <(awk '/=>/ {print $1, $3} /^[[:space:]]*\// {n=$1; sub(".*/", "", n); print n, $1}' "$scratch/ldd")
  if grep -q 'libabsl\|libstdc++' "$scratch/ldd"; then
    fail "$name links Abseil or libstdc++ dynamically"
  fi
  echo "  $name: $direct"
done
needed_pkgs=$(tr ' ' '\n' <<<"$needed_pkgs" | sort -u | xargs)
echo "  the plugins' own libraries come from: $needed_pkgs"
for pkg in $declared; do
  member "$pkg" "$needed_pkgs" || fail "$pkg is declared but no plugin needs it"
done

step "cni-cpp-plugins: Recommends the package of the nft program (run for user-written nft text)"
recommends=$(dpkg-deb -f "$deb" Recommends)
echo "  Recommends: $recommends"
nft_path=$(command -v nft) || fail "nft is not installed here"
owner "$(realpath "$nft_path")"
[[ -n $pkg ]] || fail "no package owns $nft_path"
member "$pkg" "$(names <<<"$recommends")" || fail "Recommends ($recommends) lacks $pkg, which provides nft"
# No plugin loads libnftables (nor any other library at run time).
for p in $plugins; do
  ! grep -lq "$nft_soname" "$scratch/x$plugindir/$p" || fail "$p names $nft_soname"
done

step "plugins run with only the declared packages (chroot)"
if [[ $(id -u) -ne 0 ]]; then
  echo "  SKIP: needs root for chroot"
else
  echo "  chroot packages (Depends and theirs): $closure"
  chroot_dir=$scratch/chroot
  chroot=$(command -v chroot)
  for pkg in $closure; do
    dpkg -L "$pkg" | while read -r f; do
      [[ -d $f ]] && continue  # directories (and merged-/usr links to them) come from mkdir -p
      [[ -e $f || -L $f ]] || continue
      # Their libraries and the loader; not docs, programs, gconv modules.
      case $f in /lib*/* | /usr/lib*/*) ;; *) continue ;; esac
      case $f in */gconv/*) continue ;; esac
      mkdir -p "$chroot_dir$(dirname "$f")"
      cp -a "$f" "$chroot_dir$f"
    done
  done
  mkdir -p "$chroot_dir$plugindir"
  cp -a "$scratch/x$plugindir"/* "$chroot_dir$plugindir/"
  for p in $plugins; do
    out=$(env -i CNI_COMMAND=VERSION "$chroot" "$chroot_dir" "$plugindir/$p" </dev/null) ||
      fail "$p does not run in the chroot"
    [[ $out == *'"supportedVersions"'* ]] || fail "$p in the chroot: VERSION printed \"$out\""
    about=$(env -i "$chroot" "$chroot_dir" "$plugindir/$p" </dev/null 2>&1 >/dev/null) || fail "$p in the chroot: no about line"
    about=${about%%$'\n'*}
    [[ $about == "CNI $p plugin $version (cni-cpp)" ]] || fail "$p in the chroot: about line \"$about\""
    echo "  $p: VERSION ok; $about"
  done
  # A helper starts too (its loader and libraries are there); with no bus
  # in the chroot it answers with its CNI error, as the plugin reads it.
  for h in $helpers; do
    out=$(env -i "$chroot" "$chroot_dir" "$plugindir/$h" running </dev/null 2>&1) && fail "$h: a bus in the chroot?"
    [[ $out == '{"code":'* ]] || fail "$h does not run in the chroot: \"$out\""
    echo "  $h: runs; $out"
  done
  # Neither nft nor libnftables here (nftables is only Recommended).
  ! compgen -G "$chroot_dir/usr/lib/*/$nft_soname" >/dev/null && ! compgen -G "$chroot_dir/lib/*/$nft_soname" >/dev/null ||
    fail "the chroot has $nft_soname"
  for d in /usr/sbin /sbin /usr/bin /bin; do [[ ! -e $chroot_dir$d/nft ]] || fail "the chroot has $d/nft"; done
  # In a private network namespace: GC lists the kernel's rules, and must see
  # none of the machine's.
  gc='{"cniVersion":"1.1.0","name":"pm","type":"portmap","backend":"nftables","cni.dev/valid-attachments":[]}'
  out=$(env -i CNI_COMMAND=GC CNI_PATH="$plugindir" unshare --net "$chroot" "$chroot_dir" "$plugindir/portmap" <<<"$gc" 2>&1) ||
    fail "portmap GC without nftables: $out"
  echo "  portmap GC without nftables installed: ok"
  # ADD writes its rules over netlink: neither nft nor libnftables needed...
  add() {  # extra config keys
    cat <<JSON
{"cniVersion":"1.1.0","name":"pm","type":"portmap","backend":"nftables",$1
 "runtimeConfig":{"portMappings":[{"hostPort":8080,"containerPort":80,"protocol":"tcp"}]},
 "prevResult":{"cniVersion":"1.1.0","interfaces":[{"name":"eth0","sandbox":"/x"}],
               "ips":[{"address":"10.1.1.2/24","interface":0}]}}
JSON
  }
  out=$(add "" | env -i CNI_COMMAND=ADD CNI_CONTAINERID=c1 CNI_NETNS=/x CNI_IFNAME=eth0 CNI_PATH="$plugindir" \
        unshare --net "$chroot" "$chroot_dir" "$plugindir/portmap" 2>&1) || fail "portmap ADD without nftables: $out"
  echo "  portmap ADD (nftables backend) without nftables installed: ok"
  # ...but user-written nft conditions need nft's parser: a clear error.
  out=$(add '"conditionsV4":["ip","saddr","!=","192.0.2.1"],' |
        env -i CNI_COMMAND=ADD CNI_CONTAINERID=c1 CNI_NETNS=/x CNI_IFNAME=eth0 CNI_PATH="$plugindir" \
        unshare --net "$chroot" "$chroot_dir" "$plugindir/portmap" 2>/dev/null) &&
    fail "portmap ADD with conditions without nft succeeded: $out"
  [[ $out == *'"code":999'* && $out == *"needs the nft program (Debian package nftables)"* ]] ||
    fail "portmap ADD with conditions without nft: unexpected answer $out"
  echo "  portmap ADD (nftables, conditionsV4) without nft: $out"
  # etcd-ipam speaks HTTP through libcurl (Depends: libcurl4 and its own): in a
  # private network namespace, where no etcd listens, ADD is code 11.
  conf='{"cniVersion":"1.1.0","name":"e","type":"etcd-ipam","ipam":{"type":"etcd-ipam",
    "ranges":[[{"subnet":"10.1.0.0/24"}]],"etcd":{"endpoints":["http://127.0.0.1:2379"],"timeout":1}}}'
  out=$(env -i CNI_COMMAND=ADD CNI_CONTAINERID=c1 CNI_NETNS=/x CNI_IFNAME=eth0 CNI_PATH="$plugindir" \
        unshare --net "$chroot" "$chroot_dir" "$plugindir/etcd-ipam" <<<"$conf" 2>/dev/null) &&
    fail "etcd-ipam ADD without etcd succeeded: $out"
  [[ $out == *'"code":11'* ]] || fail "etcd-ipam ADD without etcd: unexpected answer $out"
  echo "  etcd-ipam ADD with no etcd reachable: code 11"
fi

step "cni-cpp-sdk-dev: contents and Depends"
dpkg-deb -c "$sdk" | awk '$1 !~ /^d/ {print $6}' | sed 's|^\.||' | sort >"$scratch/sdk-files"
(cd "$src/sdk/include" && find cni -name '*.h' | sed "s|^|$includedir/|") | sort >"$scratch/sdk-headers"
missing=$(comm -23 "$scratch/sdk-headers" "$scratch/sdk-files")
[[ -z $missing ]] || fail "cni-cpp-sdk-dev lacks headers: $missing"
for f in "$libdir/libcnisdk.a" "$libdir/libcnitesting.a" "$libdir/pkgconfig/cni-sdk.pc" \
         "$libdir/pkgconfig/cni-testing.pc" "$libdir/cmake/CniSdk/CniSdkConfig.cmake" \
         "$libdir/cmake/CniSdk/CniSdkConfigVersion.cmake" "$libdir/cmake/CniSdk/CniSdkTargets.cmake"; do
  grep -qx "$f" "$scratch/sdk-files" || fail "cni-cpp-sdk-dev lacks $f"
done
for d in $(source_sdk_docs "$src"); do
  grep -qx "/usr/$d" "$scratch/sdk-files" || fail "cni-cpp-sdk-dev lacks /usr/$d"
done
extra=$(grep -v -e "^$includedir/cni/" -e "^$libdir/libcni\(sdk\|testing\).a\$" \
  -e "^$libdir/pkgconfig/cni-\(sdk\|testing\).pc\$" \
  -e "^$libdir/cmake/CniSdk/" -e "^/usr/share/doc/cni-cpp-sdk-dev/" "$scratch/sdk-files" || true)
[[ -z $extra ]] || fail "cni-cpp-sdk-dev has unexpected files: $extra"
sdk_depends=$(dpkg-deb -f "$sdk" Depends)
echo "  Depends: $sdk_depends"
for pkg in libabsl-dev nlohmann-json3-dev libnl-3-dev libnl-route-3-dev; do
  grep -qw "$pkg" <<<"$sdk_depends" || fail "cni-cpp-sdk-dev does not depend on $pkg"
done

step "release tarball"
tgz=$scratch/pkgs/cni-plugins-linux-$arch-v$version.tgz
cmake -DBUILD_DIR="$build" -DOUT="$tgz" -DPLUGIN_DIR="$plugindir" -P "$src/packaging/ReleaseTarball.cmake" >/dev/null
tar -tzf "$tgz" | sort >"$scratch/tgz-files"
for p in $plugins $helpers; do echo "./$p"; done | sort >"$scratch/want-tgz"
diff -u "$scratch/want-tgz" "$scratch/tgz-files" || fail "tarball contents (- expected, + packed)"
(cd "$scratch/pkgs" && sha256sum -c --quiet "$(basename "$tgz").sha256" && sha512sum -c --quiet "$(basename "$tgz").sha512") ||
  fail "tarball checksums"
mkdir "$scratch/t" && tar -xzf "$tgz" -C "$scratch/t"
for p in $plugins $helpers; do
  [[ -x $scratch/t/$p ]] || fail "tarball: $p is not executable"
done
echo "  $(basename "$tgz"): $(tar -tzf "$tgz" | xargs)"

step "SDK tarball"
sdk_tgz=$scratch/pkgs/cni-cpp-sdk-linux-$arch-v$version.tgz
cmake -DBUILD_DIR="$build" -DOUT="$sdk_tgz" -DCOMPONENT=sdk -P "$src/packaging/ReleaseTarball.cmake" >/dev/null
tar -tzf "$sdk_tgz" | sort >"$scratch/sdk-tgz-files"
sed 's|^/usr/|./|' "$scratch/sdk-files" | sort >"$scratch/want-sdk-tgz"
diff -u "$scratch/want-sdk-tgz" "$scratch/sdk-tgz-files" || fail "SDK tarball contents (- as in the .deb, + packed)"
(cd "$scratch/pkgs" && sha256sum -c --quiet "$(basename "$sdk_tgz").sha256" && sha512sum -c --quiet "$(basename "$sdk_tgz").sha512") ||
  fail "SDK tarball checksums"
mkdir "$scratch/sdk-unpacked" && tar -xzf "$sdk_tgz" -C "$scratch/sdk-unpacked"
kit_libs=$(PKG_CONFIG_PATH=$scratch/sdk-unpacked/lib/pkgconfig pkg-config --libs-only-L cni-testing)
[[ $kit_libs == *"$scratch/sdk-unpacked/"* ]] || fail "SDK tarball: pkg-config cni-testing points at \"$kit_libs\""
echo "  $(basename "$sdk_tgz"): $(wc -l <"$scratch/sdk-tgz-files") files, libcnitesting.a and cni-testing.pc among them"

echo "deb_test: PASS"
