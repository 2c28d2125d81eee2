#!/usr/bin/env bash
# A dual-stack node: bridge with host-local over an IPv4 and an IPv6 range,
# and portmap. containerd reports the IPv4 address as the pod's and the IPv6
# one among its additional addresses; pods reach each other and the outside
# (masqueraded) over both; the hostPort answers on the node's IPv4 and IPv6
# addresses. Removing the pods leaves nothing of either family.
source "$(dirname "$0")/cri_lib.sh"
e2e_main "$@"

cat >$NETD/10-dual.conflist <<'EOF'
{
  "cniVersion": "1.0.0",
  "name": "dual-stack",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "cni0",
      "isGateway": true,
      "ipMasq": true,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "ranges": [[{"subnet": "10.244.0.0/24"}], [{"subnet": "fd00:10:244::/64"}]],
        "routes": [{"dst": "0.0.0.0/0"}, {"dst": "::/0"}]
      }
    },
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
EOF
step "start the node"
cri_start
outside_setup

step "two pods"
web=$(pod web --port tcp:80:8080)
client=$(pod client)
read -r web4 web6 <<<"$(pod_ips $web)"
read -r client4 client6 <<<"$(pod_ips $client)"
echo "pods: web ${web:0:12} $web4 $web6, client ${client:0:12} $client4 $client6"
[[ $web4 == 10.244.0.* && $client4 == 10.244.0.* && $web4 != "$client4" ]] ||
  fail "IPv4 addresses wrong or not distinct: $web4 $client4"
[[ $web6 == fd00:10:244::* && $client6 == fd00:10:244::* && $web6 != "$client6" ]] ||
  fail "IPv6 addresses (additional_ips) wrong or not distinct: '$web6' '$client6'"
echo "ok: an IPv4 address as the pod's IP, an IPv6 one among its additional IPs"

step "traffic"
pod_serve $web
expect_page "client -> web over IPv4" pod_fetch $client $web4 80
expect_page "client -> web over IPv6" pod_fetch $client $web6 80
expect_page "outside -> hostPort on the node's IPv4 address" \
  ip netns exec e2e-out curl -sS -m 5 http://$HOST_ADDR:8080/
expect_page "outside -> hostPort on the node's IPv6 address" \
  ip netns exec e2e-out curl -sS -g -m 5 "http://[$HOST_ADDR6]:8080/"
expect_page "client -> the outside world over IPv4 (masquerade)" pod_fetch $client $OUTSIDE 80
expect_page "client -> the outside world over IPv6 (masquerade)" pod_fetch $client $OUTSIDE6 80

step "remove the pods"
pod_remove $web $client
expect_clean "after RemovePodSandbox" $web $client $web4 $web6 $client4 $client6
