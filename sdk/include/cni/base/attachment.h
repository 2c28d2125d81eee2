// Which attachment of a network a piece of state belongs to: the pair a
// runtime names an attachment by (CNI_CONTAINERID + CNI_IFNAME). A value type
// of the base layer, so that the kernel and packet-filter layers can scope
// what they record without knowing the CNI protocol's types.
#pragma once

#include <string>

namespace cni {

// An attachment, e.g. one named in GC's "cni.dev/valid-attachments".
struct Attachment {
  std::string container_id;  // "containerID"
  std::string ifname;        // "ifname"
  friend bool operator==(const Attachment&, const Attachment&) = default;
};

}  // namespace cni
