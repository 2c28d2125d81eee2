// Parsing a plugin's Config (Config::Parse) from a few JSON members, for the
// unit tests of each plugin's config.cc. No root.
#pragma once

#include <string>

#include <catch2/catch.hpp>

#include "absl/status/statusor.h"
#include "cni/protocol/skel.h"
#include "cni/protocol/types.h"

namespace cni::test {

// Config::Parse of {"cniVersion":"1.0.0","name":"n","type":<type>,<members>}
// (`members`: JSON object members without braces, may be empty) with CNI_ARGS
// `cni_args`. REQUIREs the network configuration itself to parse.
template <typename Config>
absl::StatusOr<Config> ParseConfig(const std::string& type, const std::string& members,
                                   const std::string& cni_args = "") {
  std::string text = R"({"cniVersion":"1.0.0","name":"n","type":")" + type + "\"";
  if (!members.empty()) text += "," + members;
  text += "}";
  absl::StatusOr<NetConf> conf = NetConf::Parse(text);
  REQUIRE(conf.ok());
  CmdArgs args;
  args.conf = *conf;
  args.args = cni_args;
  return Config::Parse(args);
}

}  // namespace cni::test
