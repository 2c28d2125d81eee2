#include "cni/protocol/skel.h"
#include "etcd_ipam.h"

int main() { return cni::PluginMain(cni::etcdipam::Funcs(), {{}, cni::AboutLine("etcd-ipam")}); }
