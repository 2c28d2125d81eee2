#include "cni/protocol/skel.h"
#include "static.h"

int main() {
  return cni::PluginMain(cni::static_ipam::Funcs(), {{}, cni::AboutLine("static")});
}
