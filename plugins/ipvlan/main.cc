#include "cni/protocol/skel.h"
#include "ipvlan.h"

int main() { return cni::PluginMain(cni::ipvlan::Funcs(), {{}, cni::AboutLine("ipvlan")}); }
