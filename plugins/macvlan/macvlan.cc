#include "macvlan.h"

#include "cni/net/macvlan.h"
#include "cni/plugin/sublink.h"
#include "config.h"

namespace cni::macvlan {

PluginFuncs Funcs() {
  return sublink::Funcs<Config>({
      .plugin = "macvlan",
      .name_prefix = "mv",  // the link is made as "mv" + 8 hex digits
      .create = [](net::NetlinkSocket& master_sock, const net::MasterLink& link, const Config& config) {
        return net::CreateMacvlan(master_sock, link,
                                  {.mode = config.mode, .mac = config.mac, .bc_queue_len = config.bc_queue_len});
      },
      // CHECK: the macvlan mode is the configured one.
      .check = sublink::ModeCheck<Config>("macvlan", &Config::mode, net::MacvlanModeOf, net::MacvlanModeName),
  });
}

}  // namespace cni::macvlan
