#include "cni/protocol/skel.h"
#include "flannel.h"

int main() { return cni::PluginMain(cni::flannel::Funcs(), {{}, cni::AboutLine("flannel")}); }
