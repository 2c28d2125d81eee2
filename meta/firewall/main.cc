#include "cni/protocol/skel.h"
#include "firewall.h"

int main() {
  return cni::PluginMain(cni::firewall::Funcs(), {cni::firewall::SupportedVersions(), cni::AboutLine("firewall")});
}
