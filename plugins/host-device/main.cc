#include "cni/protocol/skel.h"
#include "host_device.h"

int main() { return cni::PluginMain(cni::host_device::Funcs(), {{}, cni::AboutLine("host-device")}); }
