#include "cni/protocol/skel.h"
#include "vlan.h"

int main() { return cni::PluginMain(cni::vlan::Funcs(), {{}, cni::AboutLine("vlan")}); }
