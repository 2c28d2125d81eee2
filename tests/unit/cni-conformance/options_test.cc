// cni-conformance's command line, configuration loading and report.
#include <catch2/catch.hpp>

#include "options.h"
#include "report.h"
#include "subject.h"

using conformance::Outcome;
using conformance::ParseOptions;

TEST_CASE("conformance options: defaults and flags", "[conformance]") {
  auto o = ParseOptions({"/opt/cni/bin/bridge", "net.json"}, {});
  REQUIRE(o.ok());
  CHECK(o->plugin == "/opt/cni/bin/bridge");
  CHECK(o->cni_path == std::vector<std::string>{"/opt/cni/bin"});  // the plugin's directory
  CHECK(o->ifname == "eth0");
  CHECK(!o->json);
  o = ParseOptions({"--json", "--cni-path=/a:/b", "--data-dir", "/var/lib/x/", "--master", "m0", "--ifname", "net1",
                    "--cap-args", R"({"portMappings":[]})", "--timeout", "1.5", "--xfail", "^DEL", "/p/x", "c.json"},
                   {{"CNI_PATH", "/ignored"}});
  REQUIRE(o.ok());
  CHECK(o->json);
  CHECK(o->cni_path == std::vector<std::string>{"/a", "/b"});
  CHECK(o->data_dirs == std::vector<std::string>{"/var/lib/x/"});
  CHECK(o->host_veths == std::vector<std::string>{"m0"});
  CHECK(o->ifname == "net1");
  CHECK(o->capability_args.contains("portMappings"));
  CHECK(o->timeout == std::chrono::milliseconds(1500));
  CHECK(o->xfail == std::vector<std::string>{"^DEL"});
  CHECK(ParseOptions({"/p/x", "c.json"}, {{"CNI_PATH", "/e1:/e2"}})->cni_path == std::vector<std::string>{"/e1", "/e2"});
  CHECK(absl::IsCancelled(ParseOptions({"--help"}, {}).status()));
  for (const std::vector<std::string>& bad : std::vector<std::vector<std::string>>{
           {"/p/x"}, {"/p/x", "c", "extra"}, {"--data-dir", "rel", "/p/x", "c"}, {"--cap-args", "[]", "/p/x", "c"},
           {"--timeout", "0", "/p/x", "c"}, {"--xfail", "(", "/p/x", "c"}, {"--bogus", "1", "/p/x", "c"},
           {"/p/x", "c", "--master"}, {"--master", "sixteen-bytes-xx", "/p/x", "c"}}) {
    CHECK_FALSE(ParseOptions(bad, {}).ok());
  }
}

TEST_CASE("conformance subject: a conf, a conflist entry and a conflist", "[conformance]") {
  auto conf = conformance::LoadSubject(R"({"cniVersion":"1.0.0","name":"n","type":"bridge","bridge":"b0"})");
  REQUIRE(conf.ok());
  CHECK(conf->network == "n");
  CHECK(conf->before.empty());
  CHECK(conf->plugin.type == "bridge");
  CHECK_FALSE(conf->plugin.conf.contains("cniVersion"));  // set per version by the runner
  auto entry = conformance::LoadSubject(R"({"type":"portmap","capabilities":{"portMappings":true}})");
  REQUIRE(entry.ok());
  CHECK(entry->network == "conformance");
  CHECK(entry->plugin.capabilities.at("portMappings"));
  auto list = conformance::LoadSubject(R"({"cniVersion":"1.0.0","name":"l","plugins":[{"type":"ptp"},{"type":"tuning"}]})");
  REQUIRE(list.ok());
  REQUIRE(list->before.size() == 1);
  CHECK(list->before[0].type == "ptp");
  CHECK(list->plugin.type == "tuning");
  cni::runtime::NetworkConfigList pre = conformance::PredecessorList(*list, "0.4.0");
  CHECK(pre.cni_version == "0.4.0");
  CHECK(pre.plugins.size() == 1);
  for (const char* bad : {"[]", "{", R"({"name":"x"})", R"({"plugins":[]})", R"({"plugins":[{"type":""}]})"}) {
    CHECK_FALSE(conformance::LoadSubject(bad).ok());
  }
}

TEST_CASE("conformance report: outcomes, known failures, table and JSON", "[conformance]") {
  conformance::Report r;
  r.ExpectFailures({"^known"});
  r.Add("a", Outcome::kPass);
  r.Expect("b", {"x", "y"});
  r.Add("c", Outcome::kSkip, "why");
  r.Expect("known bad", {"still broken"});
  r.Expect("known but fixed", {});
  CHECK(r.rows()[1].detail == "x; y");
  CHECK(r.rows()[3].outcome == Outcome::kKnownFail);
  // A known failure that passes is a failure: the list must stay true.
  CHECK(r.rows()[4].outcome == Outcome::kFail);
  CHECK(r.Count(Outcome::kFail) == 2);
  CHECK_FALSE(r.Passed());
  std::string table = r.Table();
  CHECK(table.find("1 passed, 2 failed, 1 skipped, 1 known failures") != std::string::npos);
  cni::Json j = r.ToJson("/p/x", "c.json");
  CHECK(j["summary"] == cni::Json({{"pass", 1}, {"fail", 2}, {"skip", 1}, {"xfail", 1}}));
  CHECK(j["checks"][2] == cni::Json({{"name", "c"}, {"result", "skip"}, {"detail", "why"}}));
  conformance::Report clean;
  clean.Add("a", Outcome::kPass);
  CHECK(clean.Passed());
}
