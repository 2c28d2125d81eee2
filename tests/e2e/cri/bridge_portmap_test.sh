#!/usr/bin/env bash
# A Kubernetes node's usual network: bridge (host-local, masquerade, hairpin)
# and portmap for hostPorts, as kubeadm's and containerd's example lists
# have it. Three pods at once get distinct addresses, reach each other, and
# the one with a hostPort (PodSandboxConfig.port_mappings, handed to portmap
# by containerd) and a web server container is reached on the node's address from outside the node and
# from the node itself. Removing the pods leaves nothing of them.
source "$(dirname "$0")/cri_lib.sh"
e2e_main "$@"

write_k8s_conflist
step "start the node"
cri_start
echo "runtime: $(cri version)"
outside_setup

step "three pods at once"
declare -A ID IP
pids=()
for p in web a b; do
  if [[ $p == web ]]; then pod $p --port tcp:80:8080 >$W/$p.id & else pod $p >$W/$p.id & fi
  pids+=($!)
done
for pid in "${pids[@]}"; do wait $pid || fail "RunPodSandbox failed"; done
for p in web a b; do
  ID[$p]=$(cat $W/$p.id)
  [[ $(cri status ${ID[$p]} state) == SANDBOX_READY ]] || fail "pod $p is not ready"
  IP[$p]=$(pod_ip ${ID[$p]})
  [[ ${IP[$p]} == 10.244.0.* ]] || fail "pod $p: address ${IP[$p]} is not in 10.244.0.0/24"
  echo "pod $p: ${ID[$p]:0:12} ${IP[$p]}"
done
[[ $(printf '%s\n' "${IP[@]}" | sort -u | wc -l) == 3 ]] || fail "addresses are not distinct: ${IP[*]}"
echo "ok: three distinct addresses"
[[ $(in_pod ${ID[a]} ip -o -4 addr show dev eth0) == *"${IP[a]}/24"* ]] ||
  fail "pod a's eth0 does not hold ${IP[a]}"
echo "ok: the address containerd reports is on the pod's eth0"

step "traffic"
# The server is a container of the pod, created and started through CRI.
pod_web_container ${ID[web]}
expect_page "pod a -> pod web" pod_fetch ${ID[a]} ${IP[web]} 80
expect_page "pod b -> pod web" pod_fetch ${ID[b]} ${IP[web]} 80
in_pod ${ID[a]} ping -c1 -W2 ${IP[b]} >/dev/null || fail "pod a cannot ping pod b"
echo "ok: pod a pings pod b"
expect_page "the node -> pod web" host_fetch ${IP[web]} 80
expect_page "outside -> hostPort 8080 on the node's address" \
  ip netns exec e2e-out curl -sS -m 5 http://$HOST_ADDR:8080/
expect_page "the node -> its own hostPort" host_fetch $HOST_ADDR 8080
expect_page "pod a -> the hostPort on the node's address" pod_fetch ${ID[a]} $HOST_ADDR 8080
expect_page "pod web -> its own hostPort (hairpin)" pod_fetch ${ID[web]} $HOST_ADDR 8080
expect_page "pod a -> the outside world (masquerade)" pod_fetch ${ID[a]} $OUTSIDE 80

step "remove the pods"
pod_remove ${ID[web]} ${ID[a]} ${ID[b]}
expect_clean "after RemovePodSandbox" ${ID[web]} ${ID[a]} ${ID[b]} ${IP[web]} ${IP[a]} ${IP[b]}
expect_no_page "the hostPort is gone" ip netns exec e2e-out curl -sS -m 2 http://$HOST_ADDR:8080/
