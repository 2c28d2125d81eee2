# Helpers shared by the package tests (sourced).

fail() { echo "FAIL: $*" >&2; exit 1; }
step() { echo "== $*"; }

# The plugins the source tree defines: cni_add_plugin(<name> ...) in the
# CMakeLists.txt of every plugin directory under ipam/, plugins/ and meta/.
source_plugins() {
  local src=$1 f
  for f in "$src"/{ipam,plugins,meta}/*/CMakeLists.txt; do
    [[ -f $f ]] || continue
    sed -e 's/#.*//' "$f" | grep -o 'cni_add_plugin *( *[^ )]*' | sed 's/.*( *//'
  done | sort
}

# The helper programs installed next to the plugins (install(TARGETS <name>
# ... DESTINATION ${CNI_PLUGIN_INSTALL_DIR}) in a plugin directory's
# CMakeLists.txt; e.g. firewall's firewall-firewalld): not plugins, but
# shipped with them.
source_helpers() {
  local src=$1 f
  for f in "$src"/{ipam,plugins,meta}/*/CMakeLists.txt; do
    [[ -f $f ]] || continue
    sed -e 's/#.*//' "$f" | { grep 'DESTINATION *${CNI_PLUGIN_INSTALL_DIR}' || true; } |
      { grep -o 'install *( *TARGETS *[^ )]*' || true; } | sed 's/.*TARGETS *//'
  done | sort
}

# The systemd units the source tree installs with the plugins
# (<plugin>/systemd/<unit>.in -> lib/systemd/system/<unit>), relative to the prefix.
source_units() {
  local src=$1 f
  for f in "$src"/{ipam,plugins,meta}/*/systemd/*.in; do
    [[ -f $f ]] || continue
    f=${f##*/}
    echo "lib/systemd/system/${f%.in}"
  done | sort
}

# The lower-case configuration name as CMake puts it in an export file name.
config_suffix() {
  local c=${1,,}
  echo "${c:-noconfig}"
}

# The SDK's documentation files (sdk/CMakeLists.txt, CNI_SDK_DOC_DIR), relative
# to the prefix: the SDK guide, the design rules, the plugin contracts, the spec.
source_sdk_docs() {
  local src=$1 dir=share/doc/cni-cpp-sdk-dev
  {
    echo "$dir/README.md"
    echo "$dir/DESIGN.md"
    echo "$dir/PLUGINS.md"
    (cd "$src/docs" && find spec -type f) | sed "s|^|$dir/|"
  } | sort
}
