#!/usr/bin/env bash
# podman run options on our plugins: --ip (exactly that address), --mac-address
# (exactly that MAC), and one container on two networks (two interfaces, the
# server reachable on both addresses), also with an address of its choosing
# on each (--network name:ip=...).
source "$(dirname "$0")/lib.sh"
e2e_main "$@"

step "create the networks"
podman network create --subnet 10.80.0.0/24 e2e-a >/dev/null
podman network create --subnet 10.81.0.0/24 e2e-b >/dev/null

MAC=92:d0:c6:0a:29:33
step "start the servers"
web fixed --network e2e-a --ip 10.80.0.77 &
web mac --network e2e-a --mac-address $MAC &
web both --network e2e-a,e2e-b &
web pinned --network e2e-a:ip=10.80.0.88 --network e2e-b:ip=10.81.0.99 &
wait

step "--ip 10.80.0.77"
[[ $(ctr_ip fixed e2e-a) == 10.80.0.77 ]] || fail "podman reports $(ctr_ip fixed e2e-a)"
podman exec fixed ip -4 addr show dev eth0 | grep -q 'inet 10.80.0.77/24' ||
  fail "eth0: $(podman exec fixed ip -4 addr show dev eth0)"
[[ -e /var/lib/cni/networks/e2e-a/10.80.0.77 ]] || fail "no host-local reservation of 10.80.0.77"
expect_page "host -> 10.80.0.77" host_fetch 10.80.0.77 80
# The address is taken: a second container asking for it must not start.
if run_ctr --name fixed2 --network e2e-a --ip 10.80.0.77 $IMAGE sleep 1000 >/dev/null 2>&1; then
  fail "a second container got 10.80.0.77 too"
fi
echo "ok: a second --ip 10.80.0.77 is refused"
podman rm -f -t 0 fixed2 >/dev/null 2>&1 || true

step "--mac-address $MAC"
mac=$(podman exec mac cat /sys/class/net/eth0/address)
[[ $mac == "$MAC" ]] || fail "eth0 MAC $mac, not $MAC"
pmac=$(podman inspect mac --format '{{(index .NetworkSettings.Networks "e2e-a").MacAddress}}')
[[ $pmac == "$MAC" ]] || fail "podman reports MAC $pmac, not $MAC"
echo "ok: eth0 has $MAC (podman reports it too)"
ma=$(ctr_ip mac e2e-a)
expect_page "host -> mac container $ma" host_fetch "$ma" 80
ip neigh show "$ma" | grep -q "lladdr $MAC" || fail "host's neighbour entry for $ma: $(ip neigh show "$ma")"
echo "ok: the host resolved $ma to $MAC"

step "one container on two networks"
a=$(ctr_ip both e2e-a)
b=$(ctr_ip both e2e-b)
[[ $a == 10.80.0.* && $b == 10.81.0.* ]] || fail "addresses '$a' '$b'"
links=$(podman exec both ip -o link show | sed -e 's/^[0-9]*: //' -e 's/[:@].*//' | sort | tr '\n' ' ')
[[ $links == "eth0 eth1 lo " ]] || fail "links in the container: $links"
podman exec both ip -4 addr show | grep -q "inet $a/24" || fail "no $a in the container"
podman exec both ip -4 addr show | grep -q "inet $b/24" || fail "no $b in the container"
echo "ok: eth0 and eth1 with $a and $b"
expect_page "host -> $a (network e2e-a)" host_fetch "$a" 80
expect_page "host -> $b (network e2e-b)" host_fetch "$b" 80
expect_page "container on e2e-a -> $a" ctr_fetch "$a" 80 --network e2e-a
expect_page "container on e2e-b -> $b" ctr_fetch "$b" 80 --network e2e-b

step "two networks, an address on each (--network e2e-a:ip=10.80.0.88 --network e2e-b:ip=10.81.0.99)"
[[ $(ctr_ip pinned e2e-a) == 10.80.0.88 && $(ctr_ip pinned e2e-b) == 10.81.0.99 ]] ||
  fail "podman reports $(ctr_ip pinned e2e-a) and $(ctr_ip pinned e2e-b)"
podman exec pinned ip -4 addr show | grep -q 'inet 10.80.0.88/24' || fail "no 10.80.0.88 in the container"
podman exec pinned ip -4 addr show | grep -q 'inet 10.81.0.99/24' || fail "no 10.81.0.99 in the container"
expect_page "host -> 10.80.0.88" host_fetch 10.80.0.88 80
expect_page "host -> 10.81.0.99" host_fetch 10.81.0.99 80
