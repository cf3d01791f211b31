// brisk: one binary, subcommands (DESIGN §2).
#include <cstdio>
#include <cstring>

int main(int argc, char** argv) {
  std::fprintf(stderr, "usage: brisk <command> [options]\n");
  return 2;
}
