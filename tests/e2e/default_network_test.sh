#!/usr/bin/env bash
# podman on our plugins, a network as `podman network create` writes it
# (bridge + portmap + firewall + tuning): the container is reachable from the
# host namespace, reaches the outside through masquerading with the filter
# table's FORWARD policy at DROP (so only the firewall plugin's rules let it
# through), and its published port (-p 8080:80) answers on the host's
# addresses from the host and from containers; a port published on one host
# address (-p 127.0.0.1:9090:80) answers there only. All of it again after
# `podman restart` (DEL, then ADD) and after the host's rules were flushed
# and `podman network reload` put them back (DEL over records of rules that
# are gone, then ADD).
source "$(dirname "$0")/lib.sh"
e2e_main "$@"

outside_setup
# As on a hardened node: forwarding is denied unless a rule accepts it.
iptables -P FORWARD DROP
ip6tables -P FORWARD DROP

step "network create (default plugins)"
podman network create e2e-net >/dev/null
conf=$W/net.d/e2e-net.conflist
for t in bridge portmap firewall tuning; do
  grep -q "\"type\": \"$t\"" "$conf" || fail "podman's conflist has no $t: $(cat "$conf")"
done

step "a web server with -p 8080:80 -p 127.0.0.1:9090:80, a second one without"
web web --network e2e-net -p 8080:80 -p 127.0.0.1:9090:80 &
web web2 --network e2e-net &
wait

# Everything the web server must answer; $1 says when.
check_web() {
  local when=$1 ip ip2
  ip=$(ctr_ip web e2e-net)
  ip2=$(ctr_ip web2 e2e-net)
  [[ $ip == 10.89.0.* && $ip2 == 10.89.0.* && $ip != "$ip2" ]] || fail "addresses: '$ip' '$ip2'"
  step "$when: web $ip, web2 $ip2"
  expect_page "host -> container $ip:80" host_fetch "$ip" 80
  expect_page "host -> 127.0.0.1:8080 (portmap)" host_fetch 127.0.0.1 8080
  expect_page "host -> $HOST_ADDR:8080 (portmap)" host_fetch $HOST_ADDR 8080
  expect_page "host -> 127.0.0.1:9090 (portmap, host IP)" host_fetch 127.0.0.1 9090
  expect_no_page "host -> $HOST_ADDR:9090 (published on 127.0.0.1 only)" host_fetch $HOST_ADDR 9090
  expect_no_page "host -> $HOST_ADDR:8081 (not published)" host_fetch $HOST_ADDR 8081
  expect_page "web2 -> $HOST_ADDR:8080 (portmap)" exec_fetch web2 $HOST_ADDR 8080
  expect_page "web -> $HOST_ADDR:8080 (its own port: hairpin)" exec_fetch web $HOST_ADDR 8080
  expect_page "web -> web2 $ip2:80" exec_fetch web "$ip2" 80
  expect_page "web -> outside $OUTSIDE:80 (masquerade, firewall)" exec_fetch web $OUTSIDE 80
}
check_web "started"
expect_page "a new container -> $HOST_ADDR:8080 (portmap)" ctr_fetch $HOST_ADDR 8080 --network e2e-net
expect_page "a new container -> outside $OUTSIDE:80" ctr_fetch $OUTSIDE 80 --network e2e-net

podman restart -t 0 web >/dev/null
check_web "after podman restart web"

step "flush the host's rules: the containers are cut off"
for t in iptables ip6tables; do
  $t -t nat -F && $t -t nat -X && $t -F && $t -X
done
expect_no_page "host -> $HOST_ADDR:8080 after the flush" host_fetch $HOST_ADDR 8080
expect_no_page "web -> outside after the flush" exec_fetch web $OUTSIDE 80
podman network reload web web2 >/dev/null
check_web "after podman network reload"

step "podman rm -f after the reload"
ids=$(podman ps -q --no-trunc | tr '\n' ' ')
podman rm -f -t 0 web web2 >/dev/null
expect_gone "after rm -f" $ids 10.89.0.
