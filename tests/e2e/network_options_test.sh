#!/usr/bin/env bash
# podman network create options on our plugins: --internal (no gateway, no
# masquerade: peers reachable, nothing outside the subnet), --ipv6 with a
# ULA subnet (v6 addresses, v6 traffic between containers, a published port
# on the host's v6 address, the outside through v6 masquerading), -o mtu=1400
# (the container's eth0), --ip-range (addresses only from the range).
source "$(dirname "$0")/lib.sh"
e2e_main "$@"

outside_setup

step "create the networks"
podman network create e2e-open >/dev/null
podman network create --internal --subnet 10.70.0.0/24 e2e-int >/dev/null
podman network create --ipv6 --subnet fd00:e2e:6::/64 e2e-v6 >/dev/null
podman network create -o mtu=1400 --subnet 10.71.0.0/24 e2e-mtu >/dev/null
podman network create --subnet 10.72.0.0/24 --ip-range 10.72.0.128/26 e2e-range >/dev/null

step "start the servers"
web int-a --network e2e-int &
web v6-a --network e2e-v6 -p 8086:80 &
web v6-b --network e2e-v6 &
web mtu-a --network e2e-mtu &
for i in 1 2 3; do web range-$i --network e2e-range & done
wait

step "--internal"
ia=$(ctr_ip int-a e2e-int)
[[ $ia == 10.70.0.* ]] || fail "internal address '$ia'"
# The control: a container on an ordinary network reaches the outside.
expect_page "open network -> outside $OUTSIDE (the control)" ctr_fetch $OUTSIDE 80 --network e2e-open
expect_page "internal peer -> $ia:80" ctr_fetch "$ia" 80 --network e2e-int
expect_no_page "internal -> outside $OUTSIDE" exec_fetch int-a $OUTSIDE 80
expect_no_page "internal -> host $HOST_ADDR (outside its subnet)" exec_fetch int-a $HOST_ADDR 80
routes=$(podman exec int-a ip -4 route)
[[ $routes != *default* ]] || fail "internal container has a default route: $routes"
iptables -t nat -S | grep -q '10\.70\.0\.' && fail "internal network has NAT rules: $(iptables -t nat -S | grep '10\.70\.0\.')"
echo "ok: no default route, no NAT rule for the internal network"

step "--ipv6 --subnet fd00:e2e:6::/64"
a6=$(ctr_ip v6-a e2e-v6 v6)
b6=$(ctr_ip v6-b e2e-v6 v6)
[[ $a6 == fd00:e2e:6::* && $b6 == fd00:e2e:6::* && $a6 != "$b6" ]] || fail "v6 addresses: '$a6' '$b6'"
podman exec v6-a ip -6 addr show dev eth0 | grep -q "inet6 $a6/64" ||
  fail "v6-a eth0: $(podman exec v6-a ip -6 addr show dev eth0)"
echo "ok: $a6 and $b6 assigned"
expect_page "v6-a -> [$b6]:80" exec_fetch v6-a "$b6" 80
expect_page "v6-b -> [$a6]:80" exec_fetch v6-b "$a6" 80
expect_page "host -> [$a6]:80" host_fetch "$a6" 80
expect_page "host -> [$HOST_ADDR6]:8086 (portmap, v6)" host_fetch $HOST_ADDR6 8086
expect_page "v6-b -> [$HOST_ADDR6]:8086 (portmap, v6)" exec_fetch v6-b $HOST_ADDR6 8086
expect_page "v6-b -> outside [$OUTSIDE6]:80 (v6 masquerade)" exec_fetch v6-b $OUTSIDE6 80

step "-o mtu=1400"
mtu=$(podman exec mtu-a cat /sys/class/net/eth0/mtu)
[[ $mtu == 1400 ]] || fail "eth0 mtu $mtu, not 1400"
echo "ok: eth0 mtu 1400"
expect_page "host -> mtu container" host_fetch "$(ctr_ip mtu-a e2e-mtu)" 80

step "--ip-range 10.72.0.128/26"
for i in 1 2 3; do
  a=$(ctr_ip range-$i e2e-range)
  last=${a##*.}
  [[ $a == 10.72.0.* ]] && ((last >= 128 && last <= 191)) || fail "range-$i got $a, outside 10.72.0.128/26"
  expect_page "host -> range-$i $a" host_fetch "$a" 80
done
