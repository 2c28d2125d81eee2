// The deleters of libnl-route's objects, in a file of their own: no plugin
// of ours builds these objects (the SDK writes and reads route messages
// itself), and referencing them would link libnl-route's object model and
// run its start-up registrations in every program (see netlink.cc). They stay
// for plugin authors who use libnl's objects with the SDK's handles.
#include <netlink/route/action.h>
#include <netlink/route/addr.h>
#include <netlink/route/classifier.h>
#include <netlink/route/link.h>
#include <netlink/route/nexthop.h>
#include <netlink/route/qdisc.h>
#include <netlink/route/route.h>

#include "cni/net/netlink.h"

namespace cni::net {

void NlDeleter::operator()(rtnl_link* p) const { rtnl_link_put(p); }
void NlDeleter::operator()(rtnl_addr* p) const { rtnl_addr_put(p); }
void NlDeleter::operator()(rtnl_route* p) const { rtnl_route_put(p); }
void NlDeleter::operator()(rtnl_nexthop* p) const { rtnl_route_nh_free(p); }
void NlDeleter::operator()(rtnl_qdisc* p) const { rtnl_qdisc_put(p); }
void NlDeleter::operator()(rtnl_cls* p) const { rtnl_cls_put(p); }
void NlDeleter::operator()(rtnl_act* p) const { rtnl_act_put(p); }

}  // namespace cni::net
