#!/usr/bin/env bash
# kubelet's force-delete: the pod's network namespace is already gone (its
# sandbox process killed and its pin removed, as after a node reboot or an
# eviction gone wrong) when StopPodSandbox comes. containerd then sends DEL
# without a netns; the plugins must still remove everything the pod had on
# the node (its address reservation, its hostPort rules, bridge's masquerade
# rules, the cached result) and succeed. A bridge + portmap node, one such
# pod beside one that stays up and keeps working.
source "$(dirname "$0")/cri_lib.sh"
e2e_main "$@"

write_k8s_conflist fd00:10:244::/64
step "start the node"
cri_start
outside_setup

step "two pods"
stays=$(pod stays --port tcp:80:8081)
node_baseline
doomed=$(pod doomed --port tcp:80:8080 --port udp:53:5353)
read -r doomed4 doomed6 <<<"$(pod_ips $doomed)"
read -r stays4 stays6 <<<"$(pod_ips $stays)"
echo "pods: doomed ${doomed:0:12} $doomed4 $doomed6, stays ${stays:0:12} $stays4 $stays6"
pod_serve $doomed
expect_page "outside -> the doomed pod's hostPort" ip netns exec e2e-out curl -sS -m 5 http://$HOST_ADDR:8080/
stop_servers
# What the DEL must remove is there (so the check after it can fail).
[[ -f /var/lib/cni/networks/k8s-pod-network/$doomed4 ]] || fail "no reservation of $doomed4"
rules=$({ nft -s list ruleset; iptables-save; } 2>/dev/null)
grep -qF "$doomed4" <<<"$rules" || fail "no rule names the doomed pod's address"

step "the doomed pod's netns disappears"
ns=$(pod_netns $doomed)
pid=$(cri status $doomed pid)
[[ $ns == /var/run/netns/cni-* || $ns == /run/netns/cni-* ]] || fail "unexpected netns path '$ns'"
((pid > 0)) || fail "no sandbox pid"
kill -KILL $pid
umount "$ns"
rm -f "$ns"
# The namespace dies with its last user, and its veth with it.
for try in $(seq 50); do
  (($(ip -o link show master cni0 type veth | wc -l) == 1)) && break
  sleep 0.1
done
(($(ip -o link show master cni0 type veth | wc -l) == 1)) || fail "the doomed pod's veth did not go with its netns"
echo "ok: sandbox killed, pin removed, its veth gone with the namespace"

step "StopPodSandbox, RemovePodSandbox"
cri stop $doomed
cri rm $doomed
expect_clean "after the force-delete" $doomed $doomed4 $doomed6

step "the other pod is untouched"
[[ $(cri status $stays state) == SANDBOX_READY ]] || fail "the other pod is not ready"
pod_serve $stays
expect_page "outside -> the other pod's hostPort" ip netns exec e2e-out curl -sS -m 5 http://$HOST_ADDR:8081/
expect_page "the other pod -> outside (masquerade)" pod_fetch $stays $OUTSIDE 80

step "remove it"
pod_remove $stays
rm $W/baseline
expect_clean "after RemovePodSandbox" $stays $stays4 $stays6
