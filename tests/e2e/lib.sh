# Helpers shared by the podman end-to-end tests (sourced by tests/e2e/*_test.sh)
# and, for e2e_main and the checks, by the CRI tier (tests/e2e/cri).
#
# Each test script is run as `bash <script> <plugin-dir>` and starts with
#   source lib.sh; e2e_main "$@"
# e2e_main checks the machine, re-runs the script inside a private network and
# mount namespace (unshare), compares the machine before and after, and
# fails when anything on it changed. Inside, e2e_setup gives podman private
# state only:
#   - tmpfs on /run (netns pins, podman's run state), /var/lib (CNI's
#     host-local reservations and result cache in /var/lib/cni, and
#     /var/lib/containers), /etc/cni, /tmp, /var/tmp and /dev/shm (podman's
#     shm locks); all die with the namespace. With /run private there is no
#     system D-Bus either, so the firewall plugin's automatic backend is
#     iptables, never the machine's firewalld;
#   - a containers.conf (CONTAINERS_CONF) with the CNI backend on the plugin
#     directory under test and a network_config_dir of its own, and a
#     storage.conf (CONTAINERS_STORAGE_CONF) under the private tmpfs;
#   - every container in a cgroup parent of its own, removed at the end.
# The private namespace is the "host" namespace of every container, so the
# bridge, the veths and every firewall rule podman's plugins write live there.

set -euo pipefail

fail() { echo "FAIL: $*" >&2; exit 1; }
step() { echo "== $*"; }

# The machine's state that the tier must not change: its links, netns pins,
# nftables ruleset (iptables-nft rules included), legacy iptables rules, CNI
# and container directories, podman's default cgroup parent and this
# script's own.
machine_state() {
  echo "## links"; ip -o link show | sed -e 's/^[0-9]*: //' -e 's/[:@].*//' | sort
  echo "## netns"; ip netns list
  echo "## nft"; nft -s list ruleset
  echo "## iptables-legacy"
  iptables-legacy-save 2>/dev/null | grep -v '^#' || true
  ip6tables-legacy-save 2>/dev/null | grep -v '^#' || true
  echo "## files"
  local d
  for d in /etc/cni /etc/containers /run/cni /var/lib/cni /var/lib/containers /run/containers \
           /run/libpod /run/netns /var/lib/containerd /run/containerd /opt/containerd /run/flannel; do
    [[ -e $d ]] && find "$d" -printf '%p %s\n' 2>/dev/null | sort
  done
  ls /dev/shm | grep libpod || true
  # Only this script's cgroup parent: other e2e scripts may run alongside.
  echo "## cgroups"
  # (cgroup v1: /sys/fs/cgroup/<controller>/<parent>; v2: /sys/fs/cgroup/<parent>)
  find /sys/fs/cgroup -mindepth 1 -maxdepth 2 -type d \
    \( -name libpod_parent -o -name "$CNI_E2E_CGROUP" \) 2>/dev/null | sort
  true
}

# The tools a tier needs and its setup inside the private namespace: podman's
# here; the CRI tier (tests/e2e/cri/cri_lib.sh) sets its own before e2e_main.
E2E_TOOLS=${E2E_TOOLS:-podman runc conmon busybox curl unshare nft ip}
E2E_SETUP=${E2E_SETUP:-e2e_setup}

# Entry point: outside, check and wrap; inside, set up and return to the script.
e2e_main() {
  [[ $# -ge 1 ]] || fail "usage: $0 <plugin-dir>"
  E2E_PLUGIN_DIR=$(cd "$1" && pwd)
  if [[ -n ${CNI_E2E_INSIDE:-} ]]; then
    $E2E_SETUP
    return 0
  fi
  [[ $(id -u) -eq 0 ]] || fail "needs root (a container runtime on our plugins, private namespaces)"
  local tool
  for tool in $E2E_TOOLS; do
    command -v "$tool" >/dev/null || fail "$tool is not installed (scripts/bootstrap)"
  done
  [[ -x /bin/busybox ]] || fail "/bin/busybox (busybox-static) is missing"
  local before after rc=0 start=$SECONDS
  export CNI_E2E_CGROUP=cni-e2e-$$
  before=$(machine_state)
  # --propagation private: no mount made inside reaches the machine. The
  # inside writes its network namespace (readlink) to fd 3.
  local nsfile
  nsfile=$(mktemp)
  CNI_E2E_INSIDE=1 unshare --net --mount --propagation private -- bash "$0" "$@" 3>"$nsfile" || rc=$?
  after=$(machine_state)
  if [[ "$before" != "$after" ]]; then
    diff <(echo "$before") <(echo "$after") >&2 || true
    rm -f "$nsfile"
    fail "the machine's state changed (above: < before, > after)"
  fi
  # No process may outlive the private namespace (conmon, a server).
  local ns p left=()
  ns=$(cat "$nsfile")
  rm -f "$nsfile"
  [[ -n $ns ]] || fail "the private namespace did not start"
  for p in /proc/[0-9]*; do
    [[ $(readlink "$p/ns/net" 2>/dev/null) == "$ns" ]] && left+=("${p#/proc/} $(tr '\0' ' ' <"$p/cmdline")")
  done
  ((${#left[@]} == 0)) || fail "processes left in the private namespace: ${left[*]}"
  echo "$(basename "$0"): status $rc in $((SECONDS - start))s"
  exit "$rc"
}

# The private state every tier needs: tmpfs on the directories runtimes and
# CNI write to, the plugins somewhere that stays visible, lo up. Sets W.
e2e_private_dirs() {
  readlink /proc/self/ns/net >&3
  exec 3>&-
  local d
  # Plugins under a directory about to be covered (a checkout in /tmp) would
  # vanish: they are copied to a private tmpfs first, gone with the namespace.
  for d in /run /var/lib /etc/cni /tmp /var/tmp /dev/shm; do
    if [[ $E2E_PLUGIN_DIR == "$d"/* ]]; then
      mount -t tmpfs -o mode=0755 e2e-plugins /mnt
      cp -a "$E2E_PLUGIN_DIR"/. /mnt/
      E2E_PLUGIN_DIR=/mnt
      break
    fi
  done
  for d in /run /var/lib /etc/cni /tmp /var/tmp /dev/shm; do
    mount -t tmpfs -o mode=0755 "e2e-${d//\//-}" "$d"
  done
  chmod 1777 /tmp /var/tmp /dev/shm
  ip link set lo up
  W=/run/e2e
  mkdir -p $W/net.d $W/tmp /var/lib/cni
  export TMPDIR=$W/tmp
}

e2e_setup() {
  e2e_private_dirs
  mkdir -p $W/libpod $W/storage $W/runroot
  E2E_CGROUP_PARENT=/$CNI_E2E_CGROUP
  cat >$W/containers.conf <<EOF
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]

[network]
network_backend = "cni"
cni_plugin_dirs = ["$E2E_PLUGIN_DIR"]
network_config_dir = "$W/net.d"

[engine]
cgroup_manager = "cgroupfs"
events_logger = "file"
runtime = "runc"
tmp_dir = "$W/libpod"
image_copy_tmp_dir = "$W/tmp"
EOF
  cat >$W/storage.conf <<EOF
[storage]
driver = "vfs"
runroot = "$W/runroot"
graphroot = "$W/storage"
EOF
  export CONTAINERS_CONF=$W/containers.conf CONTAINERS_STORAGE_CONF=$W/storage.conf
  # No registries: nothing may be pulled.
  export CONTAINERS_REGISTRIES_CONF=$W/registries.conf
  : >$W/registries.conf
  trap e2e_teardown EXIT
  e2e_image
}

# Stops every container, removes every network, then the cgroup parent.
e2e_teardown() {
  local rc=$?
  podman rm -af -t 0 >/dev/null 2>&1 || true
  podman network prune -f >/dev/null 2>&1 || true
  # The outside server (outside_setup): the only process this script started
  # itself in the background.
  if [[ -n ${E2E_OUTSIDE:-} ]]; then
    local pid
    for pid in $(ip netns pids e2e-out 2>/dev/null); do kill "$pid" 2>/dev/null || true; done
  fi
  # runc removed each container's cgroup; conmon's (<parent>/conmon) and the
  # parent stay. They are empty once the last conmon has exited.
  e2e_remove_cgroup_parent
  exit "$rc"
}

# Removes the tier's cgroup parent ($CNI_E2E_CGROUP, every hierarchy) once
# what is left in it is empty (waits up to 5 s).
e2e_remove_cgroup_parent() {
  local c try
  for try in $(seq 50); do
    for c in /sys/fs/cgroup/"$CNI_E2E_CGROUP" /sys/fs/cgroup/*/"$CNI_E2E_CGROUP"; do
      [[ -d $c ]] && { find "$c" -depth -type d -exec rmdir {} + 2>/dev/null || true; }
    done
    compgen -G "/sys/fs/cgroup/$CNI_E2E_CGROUP" >/dev/null ||
      compgen -G "/sys/fs/cgroup/*/$CNI_E2E_CGROUP" >/dev/null || break
    sleep 0.1
  done
}

# The one image: busybox-static and its applets, imported as "e2e-busybox".
e2e_image() {
  local root=$W/rootfs a
  mkdir -p $root/bin $root/tmp $root/www
  cp /bin/busybox $root/bin/busybox
  for a in $(/bin/busybox --list); do
    [[ $a == busybox ]] || ln -s busybox "$root/bin/$a"
  done
  echo "hello from the e2e container" >$root/www/index.html
  tar -C $root -cf $W/rootfs.tar .
  podman import -q -c 'ENV PATH=/bin' $W/rootfs.tar localhost/e2e-busybox >/dev/null
}

# podman run, detached, in the tier's cgroup parent.
run_ctr() { podman run -d --cgroup-parent "$E2E_CGROUP_PARENT" "$@"; }
# A short-lived container whose output is returned.
run_once() { podman run --rm --cgroup-parent "$E2E_CGROUP_PARENT" "$@"; }

IMAGE=localhost/e2e-busybox

PAGE="hello from the e2e container"

# Prints the page served at ip:port ("[v6]" without brackets is fine) as
# fetched from the private host namespace; fails after 5 s.
host_fetch() { curl -sS -g -m 5 "http://$(url_host "$1"):$2/"; }
url_host() { if [[ $1 == *:* ]]; then echo "[$1]"; else echo "$1"; fi; }

# Fetches ip:port with busybox nc from a new short-lived container attached
# with the given podman options (e.g. --network net1), and prints the reply.
ctr_fetch() {
  local ip=$1 port=$2
  shift 2
  run_once "$@" $IMAGE sh -c \
    "printf 'GET / HTTP/1.0\r\n\r\n' | nc -w 3 $ip $port" 2>&1
}

# The same from inside a running container: exec_fetch <ctr> <ip> <port>
exec_fetch() {
  podman exec "$1" sh -c "printf 'GET / HTTP/1.0\r\n\r\n' | nc -w 3 $2 $3" 2>&1
}

# Asserts that `$@` (a fetch command) prints the page.
expect_page() {
  local what=$1 out
  shift
  out=$("$@" 2>&1) || true
  [[ $out == *"$PAGE"* ]] || fail "$what: no page (got: ${out:0:300})"
  echo "ok: $what"
}
# Asserts that `$@` does not reach the page.
expect_no_page() {
  local what=$1 out
  shift
  out=$("$@" 2>&1) || true
  [[ $out != *"$PAGE"* ]] || fail "$what: reached the page"
  echo "ok: $what"
}

# The private host namespace as the plugins leave it: links, the stateless
# ruleset (no counters), and CNI's files.
host_state() {
  echo "## links"; ip -o link show | sed -e 's/^[0-9]*: //' -e 's/[:@].*//' | sort
  echo "## netns"; ls /run/netns
  echo "## rules"; nft -s list ruleset 2>/dev/null
  echo "## files"; { find /var/lib/cni /run/cni -type f 2>/dev/null || true; } | sort
}

# Fails when the state names any of the given addresses or container ids, or
# holds a per-container chain (portmap's CNI-DN-<hash>, bridge's CNI-<hash>)
# or a container's veth (the outside_setup veth aside).
expect_gone() {
  local what=$1 s x
  shift
  s=$(host_state)
  for x in "$@"; do
    if grep -qF -- "$x" <<<"$s"; then
      grep -nF -- "$x" <<<"$s" >&2
      fail "$what: $x is still there"
    fi
  done
  if grep -qE 'CNI-(DN-)?[0-9a-f]{16,}' <<<"$s"; then
    grep -nE 'CNI-(DN-)?[0-9a-f]{16,}' <<<"$s" >&2
    fail "$what: a per-container chain is still there"
  fi
  local veths
  veths=$(ip -o link show type veth | grep -v ': e2e-' || true)
  [[ -z $veths ]] || fail "$what: veths left: $veths"
  echo "ok: $what: none of the $# ids and addresses, no per-container chain or veth"
}

# A container's address on a network: ctr_ip <ctr> <net> [v6]
ctr_ip() {
  local field=IPAddress
  [[ ${3:-} == v6 ]] && field=GlobalIPv6Address
  podman inspect "$1" --format "{{(index .NetworkSettings.Networks \"$2\").$field}}"
}

# A web server container: web <name> <podman options...>
web() {
  local name=$1
  shift
  run_ctr --name "$name" "$@" $IMAGE httpd -f -p 80 -h /www >/dev/null
}

# The "outside world": a namespace e2e-out behind a veth from the private
# host namespace, serving the page on port 80 of OUTSIDE and OUTSIDE6. It has
# no route to any container subnet, so only masquerading gets replies back.
# HOST_ADDR and HOST_ADDR6 are the host's end: the node's own addresses, as
# on a node's eth0. Forwarding is left as it is: the bridge plugin's
# isGateway must turn it on.
OUTSIDE=203.0.113.2
HOST_ADDR=203.0.113.1
OUTSIDE6=fd00:e2e:99::2
HOST_ADDR6=fd00:e2e:99::1
outside_setup() {
  ip netns add e2e-out
  ip link add e2e-out0 type veth peer name eth0 netns e2e-out
  ip addr add $HOST_ADDR/24 dev e2e-out0
  ip addr add $HOST_ADDR6/64 dev e2e-out0 nodad
  ip link set e2e-out0 up
  ip -n e2e-out addr add $OUTSIDE/24 dev eth0
  ip -n e2e-out addr add $OUTSIDE6/64 dev eth0 nodad
  ip -n e2e-out link set eth0 up
  ip -n e2e-out link set lo up
  mkdir -p $W/outside-www
  echo "$PAGE (outside)" >$W/outside-www/index.html
  ip netns exec e2e-out busybox httpd -p 80 -h $W/outside-www
  E2E_OUTSIDE=1
  expect_page "the outside server answers the host" host_fetch $OUTSIDE 80
  expect_page "the outside server answers the host over IPv6" host_fetch $OUTSIDE6 80
}
