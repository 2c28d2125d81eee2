#include "cni/protocol/skel.h"
#include "sbr.h"

int main() { return cni::PluginMain(cni::sbr::Funcs(), {{}, cni::AboutLine("sbr")}); }
