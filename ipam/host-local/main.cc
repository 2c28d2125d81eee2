#include "cni/protocol/skel.h"
#include "host_local.h"

int main() { return cni::PluginMain(cni::hostlocal::Funcs(), {{}, cni::AboutLine("host-local")}); }
