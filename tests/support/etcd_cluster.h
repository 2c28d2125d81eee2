// A real etcd cluster for tests: `members` etcd processes (Debian's etcd-server)
// on one address of the test's private network namespace (loopback by
// default), data directories in a TempDir. Started by the constructor (which
// waits for a quorum), killed and removed by the destructor; each member dies
// with the test process too (PR_SET_PDEATHSIG), so nothing outlives a crash.
//
//   cni::test::NetnsFixture fx;          // first: the private namespace
//   cni::test::EtcdCluster etcd(3);
//   conf["ipam"]["etcd"]["endpoints"] = etcd.Endpoints();
//   etcd.Stop(1); ...; etcd.Start(1); etcd.WaitQuorum();
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

#include "support/run.h"

namespace cni::test {

class EtcdCluster {
 public:
  // Client ports are base_port + 2*i, peer ports base_port + 2*i + 1.
  // `tls`: clients must speak https with a client certificate signed by the
  // cluster's own CA (made here with openssl; see CaFile() and friends).
  // Throws std::runtime_error when the cluster does not get a quorum in time.
  explicit EtcdCluster(int members = 3, const std::string& host = "127.0.0.1",
                       int base_port = 23790, bool tls = false);
  ~EtcdCluster();
  EtcdCluster(const EtcdCluster&) = delete;
  EtcdCluster& operator=(const EtcdCluster&) = delete;

  // Client URLs of every member ("http://host:port", https with tls).
  std::vector<std::string> Endpoints() const;
  // With tls: the CA certificate, a client certificate and its key (PEM files).
  std::string CaFile() const { return dir_.str() + "/ca.pem"; }
  std::string ClientCert() const { return dir_.str() + "/client.pem"; }
  std::string ClientKey() const { return dir_.str() + "/client.key"; }
  // SIGKILLs member i and waits for it (its data stays).
  void Stop(int i);
  // Starts member i again on its data directory.
  void Start(int i);
  bool Running(int i) const { return pids_[i] > 0; }
  // The index of the member that is the leader now, -1 when none answers as one.
  int Leader() const;
  // Waits until a linearizable read succeeds (a quorum with a leader).
  bool WaitQuorum(int timeout_ms = 20000) const;

  // Every key under `prefix` with its value (etcdctl get --prefix); throws
  // when the cluster does not answer.
  std::map<std::string, std::string> Get(const std::string& prefix) const;
  void Put(const std::string& key, const std::string& value) const;

 private:
  RunResult RunEtcdctl(const std::vector<std::string>& args, int timeout_ms = 10000) const;
  void MakeCertificates() const;

  TempDir dir_;
  std::string host_;
  int base_port_;
  bool tls_;
  std::vector<pid_t> pids_;
};

}  // namespace cni::test
