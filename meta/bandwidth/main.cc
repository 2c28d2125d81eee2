#include "bandwidth.h"
#include "cni/protocol/skel.h"

int main() {
  return cni::PluginMain(cni::bandwidth::Funcs(),
                         {cni::bandwidth::SupportedVersions(), cni::AboutLine("bandwidth")});
}
