// Ctrl-C for interactive commands (`brisk chat`): SIGINT only records that it came (a counter and
// a byte on a self-pipe, both async-signal-safe); the command decides what it means where it is:
// stop the answer being generated, or leave the prompt.
#pragma once

#include <string>

namespace brisk::cli {

class Interrupts {
 public:
  // Installs the SIGINT handler (once per process) without SA_RESTART.
  static void Install();
  // Whether a SIGINT came since the last call; clears it (and drains the pipe).
  static bool Take();

  enum class Input { kLine, kEof, kInterrupt };
  // Reads one line from stdin (without its '\n') unless a SIGINT comes first. Bytes of a
  // half-read line are kept for the next call.
  static Input ReadLine(std::string* line);
};

}  // namespace brisk::cli
