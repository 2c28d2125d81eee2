#!/usr/bin/env bash
# containerd restarted with pods running (an upgrade, a crash): the pods
# keep their network while it is down; after the restart containerd finds
# them ready with the same addresses, a new pod gets an address of its own
# (host-local's reservations survived), and StopPodSandbox and
# RemovePodSandbox of the pods from before the restart (DEL from
# containerd's saved state and CNI's cached results) leave nothing.
source "$(dirname "$0")/cri_lib.sh"
e2e_main "$@"

write_k8s_conflist
step "start the node, two pods"
cri_start
outside_setup
web=$(pod web --port tcp:80:8080)
client=$(pod client)
web_ip=$(pod_ip $web)
client_ip=$(pod_ip $client)
echo "pods: web ${web:0:12} $web_ip, client ${client:0:12} $client_ip"
pod_serve $web
expect_page "client -> web" pod_fetch $client $web_ip 80

step "containerd stops"
cri_stop_containerd
expect_page "client -> web, containerd down" pod_fetch $client $web_ip 80
expect_page "outside -> hostPort, containerd down" ip netns exec e2e-out curl -sS -m 5 http://$HOST_ADDR:8080/

step "containerd starts again"
cri_start
for p in $web $client; do
  [[ $(cri status $p state) == SANDBOX_READY ]] || fail "pod ${p:0:12} is not ready after the restart"
done
[[ $(pod_ip $web) == "$web_ip" && $(pod_ip $client) == "$client_ip" ]] ||
  fail "addresses changed across the restart: $(pod_ip $web) $(pod_ip $client)"
echo "ok: both pods ready with their addresses"
late=$(pod late)
late_ip=$(pod_ip $late)
[[ $late_ip == 10.244.0.* && $late_ip != "$web_ip" && $late_ip != "$client_ip" ]] ||
  fail "the new pod's address $late_ip is not a free one"
echo "ok: a new pod after the restart: $late_ip"
expect_page "new pod -> web" pod_fetch $late $web_ip 80
expect_page "outside -> hostPort after the restart" ip netns exec e2e-out curl -sS -m 5 http://$HOST_ADDR:8080/

step "remove the pods"
pod_remove $web $client $late
expect_clean "after RemovePodSandbox" $web $client $late $web_ip $client_ip $late_ip
