#include "cli/interrupts.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>

namespace brisk::cli {
namespace {

volatile std::sig_atomic_t g_pending = 0;
int g_pipe[2] = {-1, -1};  // [0] read end, polled next to stdin; [1] written by the handler
std::string g_buffered;    // stdin bytes read past the last returned line

void OnSigint(int) {
  const int saved = errno;  // the interrupted code may be about to read errno
  g_pending = 1;
  const char byte = 1;
  // Non-blocking: a full pipe already says "interrupted".
  [[maybe_unused]] ssize_t n = write(g_pipe[1], &byte, 1);
  errno = saved;
}

}  // namespace

void Interrupts::Install() {
  if (g_pipe[0] >= 0) return;
  if (pipe2(g_pipe, O_CLOEXEC | O_NONBLOCK) != 0) return;  // then Ctrl-C keeps its default
  struct sigaction sa = {};
  sa.sa_handler = OnSigint;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: a blocked read returns, though poll() is what waits here
  sigaction(SIGINT, &sa, nullptr);
}

bool Interrupts::Take() {
  if (!g_pending) return false;
  g_pending = 0;
  char drain[64];
  while (g_pipe[0] >= 0 && read(g_pipe[0], drain, sizeof drain) > 0) {
  }
  return true;
}

Interrupts::Input Interrupts::ReadLine(std::string* line) {
  while (true) {
    if (const size_t nl = g_buffered.find('\n'); nl != std::string::npos) {
      *line = g_buffered.substr(0, nl);
      g_buffered.erase(0, nl + 1);
      return Input::kLine;
    }
    if (Take()) return Input::kInterrupt;
    pollfd fds[2] = {{STDIN_FILENO, POLLIN, 0}, {g_pipe[0], POLLIN, 0}};
    if (poll(fds, g_pipe[0] >= 0 ? 2 : 1, -1) < 0) continue;  // EINTR: Take() decides
    if (!(fds[0].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    char chunk[4096];
    const ssize_t n = read(STDIN_FILENO, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {  // end of input: a last line without '\n' still counts
      if (g_buffered.empty()) return Input::kEof;
      *line = std::move(g_buffered);
      g_buffered.clear();
      return Input::kLine;
    }
    g_buffered.append(chunk, size_t(n));
  }
}

}  // namespace brisk::cli
