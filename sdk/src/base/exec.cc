#include "absl/strings/string_view.h"
#include "cni/base/exec.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/cleanup/cleanup.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/base/fs.h"

extern char** environ;

namespace cni {
namespace {

// A pipe whose ends close themselves.
struct Pipe {
  UniqueFd read_end, write_end;
  bool Open() {
    int fd[2];
    if (pipe2(fd, O_CLOEXEC) != 0) return false;
    read_end.reset(fd[0]);
    write_end.reset(fd[1]);
    return true;
  }
};

std::vector<char*> CStrings(const std::vector<std::string>& v) {
  std::vector<char*> out;
  out.reserve(v.size() + 1);
  for (const auto& s : v) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

// Feeds stdin and drains stdout/stderr in one poll loop so that neither side
// can block the other, whatever order the child reads and writes in.
void Pump(Pipe& in, Pipe& out, Pipe* err, absl::string_view input, CommandResult& result,
          pid_t pid, std::chrono::milliseconds timeout) {
  size_t written = 0;
  if (input.empty()) in.write_end.reset();
  else fcntl(in.write_end.get(), F_SETFL, O_NONBLOCK);
  auto deadline = std::chrono::steady_clock::now() + timeout;
  char buf[65536];
  while (out.read_end.valid() || (err && err->read_end.valid())) {
    pollfd fds[3];
    int n = 0, out_i = -1, err_i = -1, in_i = -1;
    if (out.read_end.valid()) { fds[n] = {out.read_end.get(), POLLIN, 0}; out_i = n++; }
    if (err && err->read_end.valid()) { fds[n] = {err->read_end.get(), POLLIN, 0}; err_i = n++; }
    if (in.write_end.valid()) { fds[n] = {in.write_end.get(), POLLOUT, 0}; in_i = n++; }
    int wait_ms = -1;
    if (timeout.count() > 0) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        kill(pid, SIGKILL);
        result.timed_out = true;
        return;
      }
      wait_ms = static_cast<int>(left.count());
    }
    if (poll(fds, n, wait_ms) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (in_i >= 0 && fds[in_i].revents) {
      ssize_t w = write(in.write_end.get(), input.data() + written, input.size() - written);
      if (w > 0) written += static_cast<size_t>(w);
      // EPIPE: the child does not want (more) input; that is its business.
      if ((w < 0 && errno != EAGAIN && errno != EINTR) || written >= input.size()) in.write_end.reset();
    }
    auto drain = [&](int idx, Pipe& p, std::string& sink) {
      if (idx < 0 || !fds[idx].revents) return;
      ssize_t r = read(p.read_end.get(), buf, sizeof(buf));
      if (r > 0) sink.append(buf, static_cast<size_t>(r));
      else if (r == 0 || (errno != EINTR && errno != EAGAIN)) p.read_end.reset();
    };
    drain(out_i, out, result.out);
    if (err) drain(err_i, *err, result.err);
  }
}

}  // namespace

absl::StatusOr<CommandResult> RunCommand(const std::vector<std::string>& argv,
                                         const std::vector<std::string>& env,
                                         absl::string_view stdin_data,
                                         const CommandOptions& options) {
  if (argv.empty()) return absl::InvalidArgumentError("running a command: empty argv");
  // A child writing to a pipe we closed must not kill us, nor we it.
  signal(SIGPIPE, SIG_IGN);
  Pipe in, out, err;
  if (!in.Open() || !out.Open() || (options.capture_stderr && !err.Open())) {
    return absl::ErrnoToStatus(errno, "creating pipes");
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  absl::Cleanup destroy = [&] { posix_spawn_file_actions_destroy(&actions); };
  posix_spawn_file_actions_adddup2(&actions, in.read_end.get(), 0);
  posix_spawn_file_actions_adddup2(&actions, out.write_end.get(), 1);
  if (options.capture_stderr) posix_spawn_file_actions_adddup2(&actions, err.write_end.get(), 2);
  auto cargv = CStrings(argv);
  auto cenv = CStrings(env);
  pid_t pid = -1;
  // glibc's posix_spawn reports exec failures (ENOENT, ETXTBSY, EACCES) here.
  int rc = posix_spawn(&pid, argv[0].c_str(), &actions, nullptr, cargv.data(), cenv.data());
  if (rc != 0) {
    return ErrnoError(rc, absl::StrCat("executing \"", argv[0], "\""));
  }
  in.read_end.reset();
  out.write_end.reset();
  err.write_end.reset();
  CommandResult result;
  Pump(in, out, options.capture_stderr ? &err : nullptr, stdin_data, result, pid, options.timeout);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  else if (WIFSIGNALED(status)) result.exit_code = 128 + WTERMSIG(status);
  return result;
}

std::string FindSystemProgram(absl::string_view name) {
  for (const char* dir : {"/usr/sbin/", "/sbin/", "/usr/bin/", "/bin/"}) {
    std::string path = absl::StrCat(dir, name);
    if (access(path.c_str(), X_OK) == 0) return path;
  }
  return "";
}

std::vector<std::string> ProcessEnvironment() {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) env.emplace_back(*e);
  return env;
}

std::map<std::string, std::string> EnvironmentMap(const std::vector<std::string>& env) {
  std::map<std::string, std::string> by_name;
  for (const std::string& kv : env) {
    size_t eq = kv.find('=');
    if (eq != std::string::npos) by_name.emplace(kv.substr(0, eq), kv.substr(eq + 1));
  }
  return by_name;
}

}  // namespace cni
