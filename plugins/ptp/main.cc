#include "cni/protocol/skel.h"
#include "ptp.h"

int main() { return cni::PluginMain(cni::ptp::Funcs(), {{}, cni::AboutLine("ptp")}); }
