#!/usr/bin/env bash
# What `podman rm -f` and `podman network rm` leave behind on our plugins:
# no link, no firewall rule (portmap's, the firewall plugin's, bridge's
# masquerade) naming the container, no host-local reservation, no cached
# result, no netns pin; a failed start leaves nothing either; a second round
# of containers leaves exactly the state the first one did; eight containers
# started and removed at once on a fresh network (one bridge made by
# concurrent ADDs, concurrent reservations and rule changes) all work and
# leave nothing.
source "$(dirname "$0")/lib.sh"
e2e_main "$@"

step "create the networks"
podman network create e2e-c1 >/dev/null
podman network create --subnet 10.85.0.0/24 e2e-c2 >/dev/null

# One round: three containers (port mappings tcp and udp, one on both
# networks, one with --ip), checked, a start that must fail, then rm -f.
round() {
  local n=$1
  step "round $n: start three containers"
  web p1 --network e2e-c1 -p 8080:80 &
  web p2 --network e2e-c1,e2e-c2 -p 8081:80 &
  web p3 --network e2e-c2 --ip 10.85.0.50 -p 8082:80 -p 8053:53/udp &
  wait
  local ids ips s before after
  ids=$(podman ps -q --no-trunc | tr '\n' ' ')
  ips="$(ctr_ip p1 e2e-c1) $(ctr_ip p2 e2e-c1) $(ctr_ip p2 e2e-c2) $(ctr_ip p3 e2e-c2)"
  expect_page "host -> 127.0.0.1:8080 (p1)" host_fetch 127.0.0.1 8080
  expect_page "host -> 127.0.0.1:8081 (p2)" host_fetch 127.0.0.1 8081
  expect_page "host -> 127.0.0.1:8082 (p3)" host_fetch 127.0.0.1 8082
  # The control: while they run, the state names every one of them.
  s=$(host_state)
  local ip id
  for ip in $ips; do
    grep -q "ip daddr $ip " <<<"$s" || fail "no rule for $ip while running"
    [[ -e /var/lib/cni/networks/e2e-c1/$ip || -e /var/lib/cni/networks/e2e-c2/$ip ]] ||
      fail "no reservation for $ip while running"
  done
  for id in $ids; do
    grep -q "results/e2e-c[12]-$id-eth" <<<"$s" || fail "no cached result for $id while running"
  done
  [[ $(ip -o link show type veth | wc -l) == 4 ]] || fail "not 4 veths: $(ip -o link show type veth)"
  echo "ok: rules, reservations, cached results and veths of the three containers"

  step "round $n: a start that fails (--ip 10.85.0.50 is taken) changes nothing"
  before=$(host_state)
  if run_ctr --name p4 --network e2e-c2 --ip 10.85.0.50 $IMAGE sleep 1000 >/dev/null 2>&1; then
    fail "p4 got the address of p3"
  fi
  after=$(host_state)
  if [[ $before != "$after" ]]; then
    diff <(echo "$before") <(echo "$after") >&2 || true
    fail "the failed start left something (above)"
  fi
  echo "ok: the failed start left nothing"
  podman rm -f -t 0 p4 >/dev/null

  step "round $n: podman rm -f"
  podman rm -f -t 0 p1 p2 p3 >/dev/null
  expect_gone "after rm -f" $ids $ips
}

round 1
s1=$(host_state)
round 2
s2=$(host_state)
if [[ $s1 != "$s2" ]]; then
  diff <(echo "$s1") <(echo "$s2") >&2 || true
  fail "the second round left a different state than the first (above: < first, > second)"
fi
echo "ok: the second round left exactly what the first did"

step "eight containers at once on a fresh network"
podman network create --subnet 10.86.0.0/24 e2e-par >/dev/null
for i in 1 2 3 4 5 6 7 8; do web par-$i --network e2e-par -p 810$i:80 & done
wait
dups=$(for i in 1 2 3 4 5 6 7 8; do ctr_ip par-$i e2e-par; done | sort | uniq -d)
[[ -z $dups ]] || fail "addresses given twice: $dups"
br=$(sed -n 's/.*"bridge": "\(.*\)".*/\1/p' $W/net.d/e2e-par.conflist)
[[ $(ip -o link show master "$br" | wc -l) == 8 ]] || fail "ports of $br: $(ip -o link show master "$br")"
echo "ok: eight addresses, eight ports on $br"
for i in 1 2 3 4 5 6 7 8; do
  expect_page "host -> 127.0.0.1:810$i (par-$i)" host_fetch 127.0.0.1 810$i
done
ids=$(podman ps -q --no-trunc | tr '\n' ' ')
for i in 1 2 3 4 5 6 7 8; do podman rm -f -t 0 par-$i >/dev/null & done
wait
expect_gone "after eight rm -f at once" $ids 10.86.0.

step "podman network rm"
podman network rm e2e-c1 e2e-c2 e2e-par >/dev/null
links=$(ip -o link show | sed -e 's/^[0-9]*: //' -e 's/[:@].*//' | sort | tr '\n' ' ')
[[ $links == "lo " ]] || fail "links left after network rm: $links"
expect_gone "after network rm" 10.89.0. 10.85.0. 10.86.0. cni-podman
