#include "cni/net/tuntap.h"

#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <sys/ioctl.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/base/fs.h"
#include "cni/base/quoted.h"
#include "cni/net/netlink.h"

namespace cni::net {

absl::Status CreateTap(const Netns& ns, const TapSpec& spec) {
  std::string what = absl::StrCat("creating tap ", Quoted(spec.name));
  if (spec.name.empty() || spec.name.size() >= IFNAMSIZ) {
    return Error(ErrorCode::kInvalidNetworkConfig, absl::StrCat(what, ": bad name"));
  }
  return ns.Run([&]() -> absl::Status {
    UniqueFd fd(open("/dev/net/tun", O_RDWR | O_CLOEXEC));
    if (!fd.valid()) return KernelError(errno, absl::StrCat(what, ": opening /dev/net/tun"));
    ifreq ifr{};
    std::memcpy(ifr.ifr_name, spec.name.data(), spec.name.size());
    unsigned flags = IFF_TAP | IFF_NO_PI | IFF_TUN_EXCL;
    if (spec.multi_queue) flags |= IFF_MULTI_QUEUE;
    ifr.ifr_flags = static_cast<short>(flags);
    if (ioctl(fd.get(), TUNSETIFF, &ifr) != 0) {
      int err = errno;
      // IFF_TUN_EXCL on a name that exists: EBUSY.
      return KernelError(err == EBUSY ? EEXIST : err, what);
    }
    if (spec.owner && ioctl(fd.get(), TUNSETOWNER, static_cast<unsigned long>(*spec.owner)) != 0) {
      return KernelError(errno, absl::StrCat(what, ": setting owner ", *spec.owner));
    }
    if (spec.group && ioctl(fd.get(), TUNSETGROUP, static_cast<unsigned long>(*spec.group)) != 0) {
      return KernelError(errno, absl::StrCat(what, ": setting group ", *spec.group));
    }
    if (ioctl(fd.get(), TUNSETPERSIST, 1UL) != 0) {
      return KernelError(errno, absl::StrCat(what, ": making it persistent"));
    }
    return absl::OkStatus();
  });
}

}  // namespace cni::net
