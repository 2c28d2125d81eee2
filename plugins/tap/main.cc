#include "cni/protocol/skel.h"
#include "tap.h"

int main() { return cni::PluginMain(cni::tap::Funcs(), {{}, cni::AboutLine("tap")}); }
