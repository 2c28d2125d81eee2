#include "cni/protocol/skel.h"
#include "loopback.h"

int main() { return cni::PluginMain(cni::loopback::Funcs(), {{}, cni::AboutLine("loopback")}); }
