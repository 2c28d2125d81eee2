#include "cni/protocol/skel.h"
#include "tuning.h"

int main() { return cni::PluginMain(cni::tuning::Funcs(), {{}, cni::AboutLine("tuning")}); }
