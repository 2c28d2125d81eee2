#!/usr/bin/env bash
# A k3s node: k3s' own configuration list (flannel delegating to bridge with
# host-local, then portmap and bandwidth) and the subnet file flanneld would
# write (written here). Two pods: addresses in the node's subnet, the subnet
# file's MTU, pod to pod, the hostPort, the bandwidth limits of the pod's
# annotations (an egress shaper on the pod's host veth, an ingress one on an
# ifb device); flannel's saved delegate configuration lives as long as the
# pod. Removing them leaves nothing, the ifb devices and saved files included.
source "$(dirname "$0")/cri_lib.sh"
e2e_main "$@"

mkdir -p /run/flannel
cat >/run/flannel/subnet.env <<'EOF'
FLANNEL_NETWORK=10.42.0.0/16
FLANNEL_SUBNET=10.42.3.1/24
FLANNEL_MTU=1450
FLANNEL_IPMASQ=true
EOF
# As k3s writes it (pkg/agent/flannel/setup.go).
cat >$NETD/10-flannel.conflist <<'EOF'
{
  "name":"cbr0",
  "cniVersion":"1.0.0",
  "plugins":[
    {
      "type":"flannel",
      "delegate":{
        "hairpinMode":true,
        "forceAddress":true,
        "isDefaultGateway":true
      }
    },
    {
      "type":"portmap",
      "capabilities":{
        "portMappings":true
      }
    },
    {
      "type":"bandwidth",
      "capabilities":{
        "bandwidth":true
      }
    }
  ]
}
EOF
step "start the node"
cri_start
outside_setup

step "two pods"
web=$(pod web --port tcp:80:30080 --annotation kubernetes.io/ingress-bandwidth=10M \
  --annotation kubernetes.io/egress-bandwidth=20M)
client=$(pod client)
web_ip=$(pod_ip $web)
client_ip=$(pod_ip $client)
echo "pods: web ${web:0:12} $web_ip, client ${client:0:12} $client_ip"
[[ $web_ip == 10.42.3.* && $client_ip == 10.42.3.* && $web_ip != "$client_ip" ]] ||
  fail "addresses not distinct in the node's subnet 10.42.3.0/24: $web_ip $client_ip"
[[ $(in_pod $client ip -o link show eth0) == *"mtu 1450 "* ]] || fail "the pod's MTU is not flannel's 1450"
[[ $(in_pod $client ip route show default) == "default via 10.42.3.1 "* ]] ||
  fail "the pod's default route is not via the bridge (isDefaultGateway): $(in_pod $client ip route)"
[[ $(ip -o -4 addr show dev cni0) == *10.42.3.1/24* ]] || fail "cni0 does not hold the gateway 10.42.3.1/24"
[[ -f /var/lib/cni/flannel/$web && -f /var/lib/cni/flannel/$client ]] ||
  fail "flannel saved no delegate configuration: $(ls /var/lib/cni/flannel)"
echo "ok: distinct addresses in 10.42.3.0/24, MTU 1450, default via cni0, delegate configurations saved"

step "traffic"
pod_serve $web
expect_page "client pod -> web pod" pod_fetch $client $web_ip 80
expect_page "outside -> hostPort 30080" ip netns exec e2e-out curl -sS -m 5 http://$HOST_ADDR:30080/
# FLANNEL_IPMASQ=true: flanneld masquerades, so the delegate bridge must not
# (ipMasq false) and, without flanneld, the outside cannot answer.
expect_no_page "client pod -> the outside world is not masqueraded by bridge" \
  in_pod $client curl -sS -m 2 http://$OUTSIDE/

step "bandwidth"
host_veth=$(ip -o link show master cni0 type veth | awk -F': ' -v want="$(in_pod $web cat /sys/class/net/eth0/iflink)" '$1 == want {sub(/@.*/, "", $2); print $2}')
[[ -n $host_veth ]] || fail "web pod's host veth not found"
[[ $(tc qdisc show dev $host_veth) == *tbf* ]] || fail "no shaper on $host_veth: $(tc qdisc show dev $host_veth)"
ifbs=$(ip -o link show type ifb | wc -l)
((ifbs == 1)) || fail "expected one ifb device, found $ifbs"
echo "ok: tbf on the web pod's veth $host_veth, one ifb device"

step "remove the pods"
pod_remove $web $client
expect_clean "after RemovePodSandbox" $web $client $web_ip $client_ip
ifbs=$(ip -o link show type ifb | wc -l)
((ifbs == 0)) || fail "ifb devices left: $(ip -o link show type ifb)"
[[ -z $(ls -A /var/lib/cni/flannel 2>/dev/null) ]] || fail "flannel's saved files left: $(ls /var/lib/cni/flannel)"
echo "ok: no ifb device, no saved delegate configuration"
