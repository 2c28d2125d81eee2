#include "cni/protocol/skel.h"
#include "portmap.h"

int main() {
  return cni::PluginMain(cni::portmap::Funcs(), {cni::portmap::SupportedVersions(), cni::AboutLine("portmap")});
}
