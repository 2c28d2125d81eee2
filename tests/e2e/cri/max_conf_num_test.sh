#!/usr/bin/env bash
# containerd's max_conf_num = 2: the first two configuration lists in the
# directory (by file name) are both applied to every pod, as eth0 and eth1;
# a third is not. Here bridge + portmap, then ptp (host-local of its own);
# both attachments carry traffic and both are removed with the pod.
MAX_CONF_NUM=2
source "$(dirname "$0")/cri_lib.sh"
e2e_main "$@"

write_k8s_conflist
cat >$NETD/20-second.conflist <<'EOF'
{
  "cniVersion": "1.0.0",
  "name": "second",
  "plugins": [
    {
      "type": "ptp",
      "ipMasq": false,
      "ipam": {"type": "host-local", "ranges": [[{"subnet": "10.245.0.0/24"}]]}
    }
  ]
}
EOF
# Beyond max_conf_num: never applied.
cat >$NETD/30-third.conflist <<'EOF'
{
  "cniVersion": "1.0.0",
  "name": "third",
  "plugins": [
    {"type": "bridge", "bridge": "cni9", "ipam": {"type": "host-local", "ranges": [[{"subnet": "10.246.0.0/24"}]]}}
  ]
}
EOF
step "start the node"
cri_start
outside_setup

step "two pods, each on both networks"
web=$(pod web --port tcp:80:8080)
client=$(pod client)
for p in $web $client; do
  links=$(in_pod $p ip -o link show | awk -F': ' '{sub(/@.*/, "", $2); print $2}' | sort | tr '\n' ' ')
  [[ $links == "eth0 eth1 lo " ]] || fail "pod ${p:0:12} has links '$links', not eth0 eth1 lo"
done
web0=$(pod_ip $web)
web1=$(in_pod $web ip -o -4 addr show dev eth1 | awk '{sub(/\/.*/, "", $4); print $4}')
client1=$(in_pod $client ip -o -4 addr show dev eth1 | awk '{sub(/\/.*/, "", $4); print $4}')
echo "web ${web:0:12}: eth0 $web0 eth1 $web1; client ${client:0:12}: eth1 $client1"
[[ $web0 == 10.244.0.* ]] || fail "eth0 is not on the first list's network: $web0"
[[ $web1 == 10.245.0.* && $client1 == 10.245.0.* && $web1 != "$client1" ]] ||
  fail "eth1 is not on the second list's network: $web1 $client1"
ip -o link show cni9 >/dev/null 2>&1 && fail "the third list was applied (cni9 exists)"
[[ ! -e /var/lib/cni/networks/third ]] || fail "the third list reserved an address"
echo "ok: eth0 from the first list, eth1 from the second, the third not applied"

step "traffic on both"
pod_serve $web
expect_page "the node -> web's eth0 (bridge)" host_fetch $web0 80
expect_page "the node -> web's eth1 (ptp)" host_fetch $web1 80
expect_page "outside -> hostPort (portmap of the first list)" \
  ip netns exec e2e-out curl -sS -m 5 http://$HOST_ADDR:8080/

step "remove the pods"
client0=$(pod_ip $client)
pod_remove $web $client
expect_clean "after RemovePodSandbox" $web $client $web0 $web1 $client0 $client1
