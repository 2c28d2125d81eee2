#include "support/etcd_cluster.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "cni/base/json.h"

namespace cni::test {
namespace {

constexpr const char* kEtcd = "/usr/bin/etcd";
constexpr const char* kEtcdctl = "/usr/bin/etcdctl";

}  // namespace

EtcdCluster::EtcdCluster(int members, const std::string& host, int base_port, bool tls)
    : host_(host), base_port_(base_port), tls_(tls), pids_(members, -1) {
  if (tls_) MakeCertificates();
  for (int i = 0; i < members; ++i) Start(i);
  if (!WaitQuorum()) {
    for (int i = 0; i < members; ++i) Stop(i);
    throw std::runtime_error("the test etcd cluster did not get a quorum (logs in " + dir_.str() + ")");
  }
}

EtcdCluster::~EtcdCluster() {
  for (size_t i = 0; i < pids_.size(); ++i) Stop(static_cast<int>(i));
}

std::vector<std::string> EtcdCluster::Endpoints() const {
  std::vector<std::string> out;
  for (size_t i = 0; i < pids_.size(); ++i) {
    out.push_back(absl::StrCat(tls_ ? "https://" : "http://", host_, ":",
                               base_port_ + 2 * static_cast<int>(i)));
  }
  return out;
}

void EtcdCluster::Start(int i) {
  if (pids_[i] > 0) return;
  std::vector<std::string> peers;
  for (size_t k = 0; k < pids_.size(); ++k) {
    peers.push_back(absl::StrCat("m", k, "=http://", host_, ":", base_port_ + 2 * static_cast<int>(k) + 1));
  }
  std::string client = Endpoints()[i];
  std::string peer = absl::StrCat("http://", host_, ":", base_port_ + 2 * i + 1);
  // Short heartbeats and elections: a lost leader is replaced in about a second.
  std::vector<std::string> argv = {kEtcd,
                                   "--name", absl::StrCat("m", i),
                                   "--data-dir", absl::StrCat(dir_.str(), "/m", i),
                                   "--listen-client-urls", client,
                                   "--advertise-client-urls", client,
                                   "--listen-peer-urls", peer,
                                   "--initial-advertise-peer-urls", peer,
                                   "--initial-cluster", absl::StrJoin(peers, ","),
                                   "--initial-cluster-state", "new",
                                   "--initial-cluster-token", "cni-test",
                                   "--heartbeat-interval", "50",
                                   "--election-timeout", "500",
                                   "--logger", "zap",
                                   "--log-level", "warn"};
  if (tls_) {
    argv.insert(argv.end(), {"--cert-file", dir_.str() + "/server.pem", "--key-file",
                             dir_.str() + "/server.key", "--trusted-ca-file", CaFile(),
                             "--client-cert-auth"});
  }
  std::string log = absl::StrCat(dir_.str(), "/m", i, ".log");
  std::vector<char*> cargv;
  for (std::string& s : argv) cargv.push_back(s.data());
  cargv.push_back(nullptr);
  char path_env[] = "PATH=/usr/sbin:/usr/bin:/sbin:/bin";
  char* envp[] = {path_env, nullptr};
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    // Dies with the test process, whatever happens to it.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(1);
    int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
    }
    int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null >= 0) dup2(null, 0);
    execve(kEtcd, cargv.data(), envp);
    _exit(127);
  }
  pids_[i] = pid;
}

void EtcdCluster::Stop(int i) {
  if (pids_[i] <= 0) return;
  kill(pids_[i], SIGKILL);
  waitpid(pids_[i], nullptr, 0);
  pids_[i] = -1;
}

RunResult EtcdCluster::RunEtcdctl(const std::vector<std::string>& args, int timeout_ms) const {
  std::vector<std::string> argv = {kEtcdctl, "--endpoints=" + absl::StrJoin(Endpoints(), ","),
                                   "--dial-timeout=1s", "--command-timeout=2s"};
  if (tls_) {
    argv.insert(argv.end(), {"--cacert=" + CaFile(), "--cert=" + ClientCert(), "--key=" + ClientKey()});
  }
  argv.insert(argv.end(), args.begin(), args.end());
  return RunProcess(argv, {kTestPath, "ETCDCTL_API=3"}, "", timeout_ms);
}

void EtcdCluster::MakeCertificates() const {
  const std::string d = dir_.str();
  auto run = [](const std::vector<std::string>& argv) {
    RunResult r = RunProcess(argv, {kTestPath}, "", 30000);
    if (r.exit_code != 0) throw std::runtime_error("openssl: " + r.err);
  };
  const std::string ext = d + "/san.ext";
  std::ofstream(ext) << "subjectAltName=IP:" << host_ << "\n";
  run({"/usr/bin/openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
       "-nodes", "-keyout", d + "/ca.key", "-out", CaFile(), "-days", "2", "-subj", "/CN=cni-test-ca"});
  for (const char* who : {"server", "client"}) {
    std::string key = absl::StrCat(d, "/", who, ".key"), csr = absl::StrCat(d, "/", who, ".csr");
    run({"/usr/bin/openssl", "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
         "-keyout", key, "-out", csr, "-subj", absl::StrCat("/CN=cni-test-", who)});
    std::vector<std::string> sign = {"/usr/bin/openssl", "x509", "-req", "-in", csr, "-CA", CaFile(),
                                     "-CAkey", d + "/ca.key", "-CAcreateserial", "-days", "2",
                                     "-out", absl::StrCat(d, "/", who, ".pem")};
    if (std::string(who) == "server") sign.insert(sign.end(), {"-extfile", ext});
    run(sign);
  }
}

int EtcdCluster::Leader() const {
  // "endpoint status" prints one JSON object per member: its own member ID and
  // the leader's.
  RunResult r = RunEtcdctl({"endpoint", "status", "-w", "json"});
  if (r.exit_code != 0) return -1;
  Json all = Json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  if (!all.is_array()) return -1;
  std::vector<std::string> eps = Endpoints();
  for (const Json& m : all) {
    const Json& header = m["Status"]["header"];
    if (header.is_object() && header.value("member_id", uint64_t{0}) == m["Status"].value("leader", uint64_t{1})) {
      auto it = std::find(eps.begin(), eps.end(), m.value("Endpoint", ""));
      if (it != eps.end()) return static_cast<int>(it - eps.begin());
    }
  }
  return -1;
}

bool EtcdCluster::WaitQuorum(int timeout_ms) const {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    if (RunEtcdctl({"get", "/quorum-probe"}, 5000).exit_code == 0) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

std::map<std::string, std::string> EtcdCluster::Get(const std::string& prefix) const {
  RunResult r = RunEtcdctl({"get", "--prefix", prefix});
  if (r.exit_code != 0) throw std::runtime_error("etcdctl get: " + r.err);
  std::vector<std::string> lines = absl::StrSplit(r.out, '\n');
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  std::map<std::string, std::string> out;
  for (size_t i = 0; i + 1 < lines.size(); i += 2) out[lines[i]] = lines[i + 1];
  return out;
}

void EtcdCluster::Put(const std::string& key, const std::string& value) const {
  RunResult r = RunEtcdctl({"put", key, value});
  if (r.exit_code != 0) throw std::runtime_error("etcdctl put: " + r.err);
}

}  // namespace cni::test
