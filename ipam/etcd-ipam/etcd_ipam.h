// etcd-ipam: cluster-wide IPAM whose reservations live in an etcd v3 cluster.
//
// Keys, under <prefix>/<network>/:
//   ips/<address>                      one per reserved address; value
//                                      {"containerID","ifname","network"}
//   attachments/<containerID>/<ifname> one per attachment; value: the same
//                                      plus "node" (host name), "ips" and a
//                                      random "token" of the ADD that wrote it
//   hints/<range set>                  the last address handed out from that
//                                      range set (round-robin start)
// An ADD writes all of them in ONE transaction that succeeds only if the
// attachment key and every chosen address key are still absent
// (create_revision == 0), so two nodes never get one address and an ADD that
// dies at any point leaves nothing half-written.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "cni/protocol/skel.h"
#include "cni/protocol/types.h"
#include "config.h"

namespace cni::etcdipam {

// Key layout (exposed for tests and tools).
std::string NetworkPrefix(const Config& cfg);
std::string IpKey(const Config& cfg, const net::IpAddress& ip);
std::string AttachmentKey(const Config& cfg, absl::string_view container_id,
                          absl::string_view ifname);

// ADD, DEL, CHECK, GC and STATUS (etcd_ipam.cc says what each does).
PluginFuncs Funcs();

}  // namespace cni::etcdipam
