#include "bench/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "util/clock.h"

extern char** environ;

namespace brisk {
namespace {

// Closes a descriptor when it goes out of scope.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};

// Reads the child's stdout until EOF, the deadline or the size limit; the status says which.
Status ReadAll(int fd, double deadline, size_t max_output, std::string* out) {
  char buf[4096];
  for (;;) {
    const double left = deadline - NowSeconds();
    if (left <= 0) return Status::Unavailable("timed out");
    pollfd p{fd, POLLIN, 0};
    const int r = poll(&p, 1, int(std::ceil(left * 1000)));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return Status::Internal(std::string("poll: ") + std::strerror(errno));
    if (r == 0) continue;  // the deadline check above ends it
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::Internal(std::string("read: ") + std::strerror(errno));
    if (n == 0) return Status::Ok();
    if (out->size() + size_t(n) > max_output)
      return Status::ResourceExhausted("more than " + std::to_string(max_output) +
                                       " bytes of output");
    out->append(buf, size_t(n));
  }
}

constexpr double kReapAfterKillS = 1;

// Waits until `deadline` (NowSeconds) for the child to end; true with its status when it did.
bool WaitUntil(pid_t pid, double deadline, int* wstatus) {
  for (;;) {
    const pid_t r = waitpid(pid, wstatus, WNOHANG);
    if (r == pid) return true;
    if (r < 0 && errno != EINTR) return true;  // not our child any more: nothing to wait for
    if (NowSeconds() >= deadline) return false;
    usleep(2000);
  }
}

// Kills the child's process group and reaps it, waiting a moment at most: a process stuck in the
// kernel (a hung driver) dies only when its call returns, and stays a zombie until then.
void KillAndReap(pid_t pid) {
  kill(-pid, SIGKILL);
  int ignored = 0;
  WaitUntil(pid, NowSeconds() + kReapAfterKillS, &ignored);
}

}  // namespace

std::string FindExecutable(std::string_view name) {
  const char* path = std::getenv("PATH");
  if (name.empty() || !path) return "";
  std::string_view dirs(path);
  while (!dirs.empty()) {
    const size_t colon = dirs.find(':');
    std::string dir(dirs.substr(0, colon));
    dirs.remove_prefix(colon == std::string_view::npos ? dirs.size() : colon + 1);
    if (dir.empty()) dir = ".";  // an empty PATH entry means the current directory
    const std::string file = dir + "/" + std::string(name);
    struct stat st {};
    if (stat(file.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(file.c_str(), X_OK) == 0)
      return file;
  }
  return "";
}

Result<std::string> RunCommandOutput(const std::vector<std::string>& argv,
                                     const CommandLimits& limits) {
  if (argv.empty()) return Status::InvalidArgument("no program to run");
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0)
    return Status::Internal(std::string("pipe: ") + std::strerror(errno));
  Fd read_end{pipe_fds[0]}, write_end{pipe_fds[1]};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, write_end.fd, 1);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  // Its own process group, so a timeout also kills what it started (a wrapper script's children
  // would otherwise keep the pipe open).
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  pid_t pid = 0;
  const int err = posix_spawn(&pid, args[0], &actions, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (err != 0) return Status::NotFound(argv[0] + ": cannot run: " + std::strerror(err));
  close(write_end.fd);  // the child holds its copy: EOF arrives when it exits
  write_end.fd = -1;
  std::string out;
  const double deadline = NowSeconds() + limits.timeout_s;
  const Status read = ReadAll(read_end.fd, deadline, limits.max_output, &out);
  if (!read.ok()) {
    KillAndReap(pid);
    return read.WithContext(argv[0]);
  }
  // Its stdout is closed; it may still be running (or stuck while exiting).
  int wstatus = 0;
  if (!WaitUntil(pid, deadline, &wstatus)) {
    KillAndReap(pid);
    return Status::Unavailable(argv[0] + ": timed out");
  }
  if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0)
    return Status::Unavailable(
        argv[0] + (WIFEXITED(wstatus) ? ": exit status " + std::to_string(WEXITSTATUS(wstatus))
                                      : std::string(": killed by a signal")));
  return out;
}

}  // namespace brisk
