// `brisk chat` in a real terminal (a pseudo-terminal from forkpty): Ctrl-C is the byte 0x03 typed
// into it, which the terminal's line discipline turns into SIGINT, as when a person presses it.
// On the synthetic Qwen2.5-0.5B (real speed, random weights: answers are long noise), a Ctrl-C
// mid-answer stops the answer and keeps the conversation; at the prompt, the first Ctrl-C prints a
// hint and the second quits with exit code 0; Ctrl-D quits with 0 too.
#include <gtest/gtest.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <regex>
#include <string>

namespace {

// One `brisk chat` process on a pseudo-terminal, its output (stdout and stderr) collected.
class ChatTerminal {
 public:
  ChatTerminal() {
    pid_ = forkpty(&fd_, nullptr, nullptr, nullptr);
    if (pid_ == 0) {
      execl(BRISK_BINARY, "brisk", "chat", "-m", BRISK_CHAT_MODEL, "-n", "2000", nullptr);
      _exit(127);
    }
  }
  ~ChatTerminal() {
    if (pid_ > 0 && !exited_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (fd_ >= 0) close(fd_);
  }
  bool started() const { return pid_ > 0; }

  void Type(const std::string& s) { ASSERT_EQ(write(fd_, s.data(), s.size()), ssize_t(s.size())); }

  // Reads until `re` matches the output after `from` (returns the match) or `seconds` pass.
  std::smatch WaitFor(const std::string& re, size_t from, double seconds) {
    const std::regex pattern(re);
    std::smatch m;
    const auto end = Now() + seconds;
    while (true) {
      tail_ = out_.substr(std::min(from, out_.size()));
      if (std::regex_search(tail_, m, pattern) || Now() > end || !ReadSome(end - Now())) break;
    }
    return m;
  }
  // Reads until `n` more bytes than `from` arrived.
  bool WaitForBytes(size_t from, size_t n, double seconds) {
    const auto end = Now() + seconds;
    while (out_.size() < from + n)
      if (Now() > end || !ReadSome(end - Now())) return false;
    return true;
  }
  bool Alive() { return !exited_ && waitpid(pid_, &status_, WNOHANG) == 0; }
  // The exit code, or -1 when it did not exit in time (or died of a signal).
  int ExitCode(double seconds) {
    const auto end = Now() + seconds;
    while (!exited_ && Now() < end) {
      ReadSome(0.1);
      if (waitpid(pid_, &status_, WNOHANG) == pid_) exited_ = true;
    }
    return exited_ && WIFEXITED(status_) ? WEXITSTATUS(status_) : -1;
  }
  const std::string& output() const { return out_; }
  size_t size() const { return out_.size(); }

 private:
  static double Now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  bool ReadSome(double seconds) {
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, int(std::max(seconds, 0.0) * 1000)) <= 0) return true;  // nothing yet
    char buf[4096];
    const ssize_t n = read(fd_, buf, sizeof buf);
    if (n <= 0) return false;  // EIO: the program closed the terminal
    out_.append(buf, size_t(n));
    return true;
  }
  pid_t pid_ = -1;
  int fd_ = -1;
  int status_ = 0;
  bool exited_ = false;
  std::string out_, tail_;
};

// "[prompt P tokens (R reused), TTFT .. ms, G tokens, .. tok/s, interrupted]" then the prompt.
const char* kInterruptedTurn =
    R"(\[prompt (\d+) tokens \(\d+ reused\), TTFT \d+ ms, (\d+) tokens, [0-9.]+ tok/s, )"
    R"(interrupted\]\s*\r?\n> )";
constexpr double kLoad = 120, kTurn = 60;

TEST(ChatTerminal, CtrlCStopsTheAnswerKeepsTheConversationAndTwiceAtThePromptQuits) {
  ChatTerminal chat;
  ASSERT_TRUE(chat.started());
  ASSERT_FALSE(chat.WaitFor(R"(quits\.\s*\r?\n> )", 0, kLoad).empty()) << chat.output();

  // Turn 1: Ctrl-C once a few dozen tokens of noise have streamed (2000 would take minutes).
  size_t mark = chat.size();
  chat.Type("hello there\n");
  ASSERT_TRUE(chat.WaitForBytes(mark, 240, kTurn)) << chat.output();
  chat.Type("\x03");
  std::smatch t1 = chat.WaitFor(kInterruptedTurn, mark, kTurn);
  ASSERT_FALSE(t1.empty()) << "no interrupted turn and new prompt:\n" << chat.output();
  ASSERT_TRUE(chat.Alive());
  const int prompt1 = std::stoi(t1[1]), generated1 = std::stoi(t1[2]);
  ASSERT_GE(generated1, 16) << chat.output();

  // Turn 2 sees turn 1, the partial answer included: its prompt holds the first prompt plus
  // (re-tokenised) the interrupted answer. Without the answer it would grow by ~8 tokens.
  mark = chat.size();
  chat.Type("and again\n");
  ASSERT_TRUE(chat.WaitForBytes(mark, 40, kTurn)) << chat.output();
  chat.Type("\x03");
  std::smatch t2 = chat.WaitFor(kInterruptedTurn, mark, kTurn);
  ASSERT_FALSE(t2.empty()) << chat.output().substr(mark);
  EXPECT_GE(std::stoi(t2[1]), prompt1 + generated1 / 2 + 4) << chat.output();

  // At the prompt: the first Ctrl-C only explains, the second quits, with exit code 0.
  mark = chat.size();
  chat.Type("\x03");
  ASSERT_FALSE(chat.WaitFor(R"(Ctrl-C again.*\r?\n> )", mark, 10).empty())
      << chat.output().substr(mark);
  ASSERT_TRUE(chat.Alive());
  chat.Type("\x03");
  EXPECT_EQ(chat.ExitCode(20), 0) << chat.output().substr(mark);
}

TEST(ChatTerminal, CtrlDAtThePromptQuits) {
  ChatTerminal chat;
  ASSERT_TRUE(chat.started());
  ASSERT_FALSE(chat.WaitFor(R"(quits\.\s*\r?\n> )", 0, kLoad).empty()) << chat.output();
  chat.Type("\x04");
  EXPECT_EQ(chat.ExitCode(20), 0) << chat.output();
}

}  // namespace
