#include "ipvlan.h"

#include "cni/net/ipvlan.h"
#include "cni/plugin/sublink.h"
#include "config.h"

namespace cni::ipvlan {

PluginFuncs Funcs() {
  return sublink::Funcs<Config>({
      .plugin = "ipvlan",
      .name_prefix = "iv",  // the link is made as "iv" + 8 hex digits
      .chained = true,      // prevResult's addresses, and its interface as the master
      .create = [](net::NetlinkSocket& master_sock, const net::MasterLink& link, const Config& config) {
        return net::CreateIpvlan(master_sock, link, config.mode);
      },
      // CHECK: the ipvlan mode is the configured one.
      .check = sublink::ModeCheck<Config>("ipvlan", &Config::mode, net::IpvlanModeOf, net::IpvlanModeName),
  });
}

}  // namespace cni::ipvlan
