#include "cni/protocol/skel.h"
#include "macvlan.h"

int main() { return cni::PluginMain(cni::macvlan::Funcs(), {{}, cni::AboutLine("macvlan")}); }
