#include "bridge.h"
#include "cni/protocol/skel.h"

int main() { return cni::PluginMain(cni::bridge::Funcs(), {{}, cni::AboutLine("bridge")}); }
