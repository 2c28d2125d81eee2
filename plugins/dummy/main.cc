#include "cni/protocol/skel.h"
#include "dummy.h"

int main() { return cni::PluginMain(cni::dummy::Funcs(), {{}, cni::AboutLine("dummy")}); }
