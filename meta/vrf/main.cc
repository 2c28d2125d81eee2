#include "cni/protocol/skel.h"
#include "vrf.h"

int main() {
  return cni::PluginMain(cni::vrf::Funcs(), {cni::vrf::Versions(), cni::AboutLine("vrf")});
}
