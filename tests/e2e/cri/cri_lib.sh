# Helpers of the CRI end-to-end tests (sourced by tests/e2e/cri/*_test.sh).
#
# Each test script is run as `bash <script> <plugin-dir>` and starts with
#   source cri_lib.sh; e2e_main "$@"
# then writes its CNI configuration lists into $NETD and calls cri_start.
#
# One script is one Kubernetes node: containerd 1.6 with its CRI plugin,
# driven by our own CRI client (cri_client.py over gRPC, as kubelet drives
# it), inside the private network and mount namespace of tests/e2e/lib.sh.
# Everything the node has is private: containerd's root and state under the
# private /var/lib and /run, its socket, its CNI configuration directory, the
# CNI cache and host-local reservations (/var/lib/cni), the pod netns pins
# (/run/netns). The machine's containerd, if any, is never touched: ours has
# its own configuration file and socket. The one image, the sandbox ("pause")
# image and the containers' alike, is busybox-static (sleep as its entry
# point, the page under /www), built here as a docker archive and imported;
# nothing is pulled.

source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

E2E_TOOLS="containerd containerd-shim-runc-v2 ctr runc protoc busybox curl unshare nsenter nft ip tc"
E2E_SETUP=cri_setup
CRI_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# Debian's python, whatever python3 comes first in PATH: python3-grpcio and
# python3-protobuf are installed for it.
CRI_PYTHON=/usr/bin/python3
CRI_IMAGE=localhost/e2e-busybox:1
# CNI configuration lists the node loads (max_conf_num of them, by name).
MAX_CONF_NUM=${MAX_CONF_NUM:-1}

cri_setup() {
  # The tier's own files, read before e2e_private_dirs covers /tmp and /run:
  # a checkout there (a CI clone in /tmp) would vanish with them.
  local proto client
  proto=$(<"$CRI_DIR/cri_subset.proto")
  client=$(<"$CRI_DIR/cri_client.py")
  e2e_private_dirs
  CRI_DIR=$W/cri
  mkdir -p "$CRI_DIR"
  printf '%s\n' "$proto" >"$CRI_DIR/cri_subset.proto"
  printf '%s\n' "$client" >"$CRI_DIR/cri_client.py"
  "$CRI_PYTHON" -c 'import grpc, google.protobuf' 2>/dev/null ||
    fail "python3-grpcio or python3-protobuf is missing (scripts/bootstrap)"
  NETD=$W/net.d
  SOCK=/run/e2e/containerd.sock
  CRI_SERVERS=()
  CONTAINERD_PID=
  trap cri_teardown EXIT
  mkdir -p $W/pb
  protoc -I "$CRI_DIR" --python_out=$W/pb "$CRI_DIR/cri_subset.proto"
  cri_image
  cat >$W/containerd.toml <<EOF
version = 2
root = "/var/lib/containerd"
state = "/run/containerd"
# Only what a CRI node needs: no snapshotters but overlayfs and native, no
# tracing.
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs",
  "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]

[grpc]
  address = "$SOCK"

# Its default, /opt/containerd, is on the machine.
[plugins."io.containerd.internal.v1.opt"]
  path = "/var/lib/containerd/opt"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$CRI_IMAGE"
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  enable_selinux = false
  disable_apparmor = true
  # Sandboxes get an oom_score_adj no lower than containerd's own: lowering it
  # needs CAP_SYS_RESOURCE, which a CI container may lack.
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$E2E_PLUGIN_DIR"
    conf_dir = "$NETD"
    max_conf_num = $MAX_CONF_NUM
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
EOF
}

# The image: busybox-static with its applets, $PAGE in /www, /bin/sleep as
# the entry point (the sandbox's), as a docker archive (manifest.json, the
# config, one layer), which `ctr images import` reads.
cri_image() {
  local root=$W/image-root img=$W/image diff cfg a
  mkdir -p $root/bin $root/www $root/tmp $img
  cp /bin/busybox $root/bin/busybox
  for a in $(/bin/busybox --list); do
    [[ $a == busybox ]] || ln -s busybox "$root/bin/$a"
  done
  echo "$PAGE" >$root/www/index.html
  tar -C $root -cf $img/layer.tar .
  diff=$(sha256sum $img/layer.tar | cut -d' ' -f1)
  printf '{"architecture":"%s","os":"linux","config":{"Entrypoint":["/bin/sleep","2147483647"],"Env":["PATH=/bin"]},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' \
    "$(dpkg --print-architecture)" "$diff" >$img/config.json
  cfg=$(sha256sum $img/config.json | cut -d' ' -f1)
  mv $img/config.json $img/$cfg.json
  printf '[{"Config":"%s.json","RepoTags":["%s"],"Layers":["layer.tar"]}]' "$cfg" "$CRI_IMAGE" \
    >$img/manifest.json
  tar -C $img -cf $W/image.tar .
}

# Writes the usual Kubernetes list into $NETD/10-k8s.conflist, as kubeadm's
# and containerd's examples have it: bridge cni0 (gateway, masquerade,
# hairpin) with host-local over 10.244.0.0/24, then portmap. Each argument
# adds a range set (another family: dual stack).
write_k8s_conflist() {
  local ranges='[{"subnet": "10.244.0.0/24"}]' subnet
  for subnet in "$@"; do ranges+=", [{\"subnet\": \"$subnet\"}]"; done
  cat >"$NETD/10-k8s.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "k8s-pod-network",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "cni0",
      "isGateway": true,
      "ipMasq": true,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "ranges": [$ranges],
        "routes": [{"dst": "0.0.0.0/0"}]
      }
    },
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
EOF
}

# Starts the node's containerd (again, after cri_stop_containerd) and waits
# until its CRI plugin says the runtime and the network are ready (a
# configuration list in $NETD). The first start imports the sandbox image.
cri_start() {
  containerd_up || { tail -20 $W/containerd.log >&2; fail "containerd did not open $SOCK in 10 s"; }
  if [[ -z ${CRI_IMAGE_DONE:-} ]]; then
    ctr -a $SOCK -n k8s.io images import --snapshotter overlayfs $W/image.tar >/dev/null
    CRI_IMAGE_DONE=1
  fi
  cri wait
}

# Starts containerd and waits for its socket (10 s at most).
containerd_up() {
  containerd --config $W/containerd.toml >>$W/containerd.log 2>&1 &
  CONTAINERD_PID=$!
  local try
  for try in $(seq 100); do
    [[ -S $SOCK ]] && return 0
    kill -0 $CONTAINERD_PID 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}

# Stops containerd the way a service manager does (SIGTERM); the pods' shims
# and sandboxes keep running, as on a node during an upgrade.
cri_stop_containerd() {
  [[ -n $CONTAINERD_PID ]] || return 0
  kill -TERM $CONTAINERD_PID 2>/dev/null || true
  wait $CONTAINERD_PID 2>/dev/null || true
  CONTAINERD_PID=
  rm -f $SOCK
}

# The CRI client on this node: cri <command> [args] (see cri_client.py).
cri() {
  CRI_PB_DIR=$W/pb CRI_CGROUP_PARENT=/$CNI_E2E_CGROUP "$CRI_PYTHON" "$CRI_DIR/cri_client.py" $SOCK "$@"
}

# A pod: pod <name> [--port proto:pod-port:host-port]... prints its sandbox id.
pod() { cri run "$@"; }
pod_ips() { cri status "$1" ips; }
pod_ip() { local ips; ips=$(pod_ips "$1"); echo "${ips%% *}"; }
# The pod's netns path, kept in a file (commands run in subshells) for when
# containerd is down.
pod_netns() {
  local f=$W/netns.$1
  [[ -s $f ]] || cri status "$1" netns >$f
  cat $f
}
# A command in the pod's network namespace (the sandbox's, as a container of
# the pod would have it): in_pod <id> <command...>
in_pod() {
  local ns
  ns=$(pod_netns "$1")
  shift
  nsenter --net="$ns" "$@"
}

# Until something listens on the pod's TCP port 80 (5 s at most).
pod_wait_listen() {
  local try
  for try in $(seq 50); do
    in_pod "$1" busybox netstat -ltn 2>/dev/null | grep -q ':80 ' && return 0
    sleep 0.1
  done
  fail "nothing listens on port 80 of pod $1"
}

# Serves $PAGE on port 80 of the pod from a container of the pod (CRI's
# CreateContainer and StartContainer: busybox httpd); StopPodSandbox stops it.
pod_web_container() {
  cri container "$1" $CRI_IMAGE /bin/httpd -f -p 80 -h /www >/dev/null
  pod_wait_listen "$1"
}

# Serves $PAGE on port 80 of the pod from its netns (busybox httpd run with
# nsenter), as a container of the pod would; stopped by pod_remove or the
# teardown.
pod_serve() {
  local ns
  ns=$(pod_netns "$1")
  mkdir -p $W/www
  echo "$PAGE" >$W/www/index.html
  nsenter --net="$ns" busybox httpd -f -p 80 -h $W/www &
  CRI_SERVERS+=($!)
  pod_wait_listen "$1"
}

# Fetches the page from the pod's netns: pod_fetch <id> <ip> <port>
pod_fetch() { in_pod "$1" curl -sS -g -m 5 "http://$(url_host "$2"):$3/"; }

# Kills the servers this script started (by their pids).
stop_servers() {
  local pid
  for pid in "${CRI_SERVERS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${CRI_SERVERS[@]}"; do wait "$pid" 2>/dev/null || true; done
  CRI_SERVERS=()
}

# StopPodSandbox then RemovePodSandbox, as kubelet does for a deleted pod.
pod_remove() {
  local id
  stop_servers
  for id in "$@"; do
    cri stop "$id"
    cri rm "$id"
  done
}

# The node as it is now (tests/e2e/lib.sh host_state), for expect_clean to
# compare with while other pods are still up.
node_baseline() { host_state >$W/baseline; }

# After RemovePodSandbox: nothing of the given pods (sandbox ids, addresses)
# is left on the node. With no node_baseline: no link or veth, no rule or
# per-pod chain, no host-local reservation or cached result at all
# (tests/e2e/lib.sh expect_gone); with one, the node's links, rules and CNI
# files are exactly as they were then and none names the pods. Either way one
# netns pin and nsfs mount per pod containerd still lists, no address of
# theirs in the node's addresses, routes (ptp's host routes) or legacy
# iptables, and containerd has forgotten them. (Neighbour entries are the
# kernel's: they age out, no plugin owns them.)
expect_clean() {
  local what=$1 x
  shift
  if [[ -f $W/baseline ]]; then
    local now
    now=$(host_state)
    if [[ $now != "$(cat $W/baseline)" ]]; then
      diff $W/baseline <(echo "$now") >&2 || true
      fail "$what: the node is not as it was before the pod (above: < before, > after)"
    fi
    for x in "$@"; do
      ! grep -qwF -- "$x" <<<"$now" || fail "$what: $x is still there"
    done
    echo "ok: $what: links, rules and CNI files as before the pod, none of the $# ids and addresses"
  else
    expect_gone "$what" "$@"
  fi
  local legacy listed pods pins mounts routes
  legacy=$({ iptables-legacy-save; ip6tables-legacy-save; } 2>/dev/null || true)
  routes=$(ip -o addr show; ip -4 route show table all; ip -6 route show table all)
  listed=$(cri list)
  for x in "$@"; do
    ! grep -qwF -- "$x" <<<"$legacy" || fail "$what: $x is in a legacy iptables rule"
    if grep -qwF -- "$x" <<<"$routes"; then
      grep -wF -- "$x" <<<"$routes" >&2
      fail "$what: $x is in the node's addresses or routes"
    fi
    ! grep -qwF -- "$x" <<<"$listed" || fail "$what: containerd still lists $x"
  done
  pods=$(grep -c . <<<"$listed" || true)
  pins=$(compgen -G "/run/netns/cni-*" | wc -l || true)
  mounts=$(grep ' nsfs ' /proc/self/mountinfo | grep -c '/cni-' || true)
  ((pins == pods)) || { ls -l /run/netns >&2; fail "$what: $pins netns pins for $pods pods"; }
  ((mounts == pods)) || { grep ' nsfs ' /proc/self/mountinfo >&2; fail "$what: $mounts netns mounts for $pods pods"; }
  echo "ok: $what: one netns pin and mount per pod left ($pods); no address, route or legacy rule; not listed"
}

# Every pod removed (as kubelet's GC would; containerd is started again if a
# failure left it stopped), containerd stopped, its shims gone (they exit when
# their sandbox is deleted), whatever is left in the cgroup parent killed,
# then the cgroup parent removed.
cri_teardown() {
  local rc=$? id
  stop_servers
  if [[ -z $CONTAINERD_PID && -n ${CRI_IMAGE_DONE:-} ]]; then
    containerd_up || true
  fi
  if [[ -n $CONTAINERD_PID ]]; then
    for id in $(cri list 2>/dev/null); do
      cri stop "$id" 2>/dev/null || true
      cri rm "$id" 2>/dev/null || true
    done
  fi
  if ((rc != 0)) && [[ -f $W/containerd.log ]]; then
    echo "-- containerd's log (the last 30 lines):" >&2
    tail -30 $W/containerd.log >&2
  fi
  cri_stop_containerd
  # A shim whose sandbox could not be deleted is ended by its pid: only
  # processes of this private network namespace are looked at.
  local me p try
  me=$(readlink /proc/self/ns/net)
  for try in $(seq 50); do
    local shims=()
    for p in /proc/[0-9]*; do
      [[ $(readlink "$p/ns/net" 2>/dev/null) == "$me" ]] || continue
      grep -qa containerd-shim "$p/cmdline" 2>/dev/null && shims+=("${p#/proc/}")
    done
    ((${#shims[@]} == 0)) && break
    ((try == 50)) && kill -KILL "${shims[@]}" 2>/dev/null
    sleep 0.1
  done
  if [[ -n ${E2E_OUTSIDE:-} ]]; then
    local pid
    for pid in $(ip netns pids e2e-out 2>/dev/null); do kill "$pid" 2>/dev/null || true; done
  fi
  # Sandboxes containerd could not remove live on in their own network
  # namespaces, out of e2e_main's sight: they are in this script's cgroup
  # parent, and only there.
  local procs
  procs=$(find /sys/fs/cgroup -maxdepth 4 -path "*/$CNI_E2E_CGROUP/*" -name cgroup.procs \
            -exec cat {} + 2>/dev/null | sort -u)
  if [[ -n $procs ]]; then
    echo "teardown: killing sandbox processes left in the cgroup parent: $procs" >&2
    kill -KILL $procs 2>/dev/null || true
  fi
  e2e_remove_cgroup_parent
  exit "$rc"
}
