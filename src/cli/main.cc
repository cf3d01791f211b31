// brisk: one binary, subcommands (DESIGN §2).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <vector>

#include "cli/cli_util.h"
#include "cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"brisk: fast inference server for small Qwen-family models"};
  app.set_version_flag("--version", std::string("brisk ") + BRISK_VERSION);
  app.require_subcommand(1);
  std::vector<std::pair<CLI::App*, brisk::cli::CommandFn>> commands;
  auto add = [&](brisk::cli::CommandFn (*adder)(CLI::App&)) {
    size_t before = app.get_subcommands({}).size();
    brisk::cli::CommandFn fn = adder(app);
    commands.emplace_back(app.get_subcommands({})[before], std::move(fn));
  };
  add(brisk::cli::AddInfoCommand);
  add(brisk::cli::AddRunCommand);
  add(brisk::cli::AddLogitsCommand);
  add(brisk::cli::AddPullCommand);
  add(brisk::cli::AddSynthCommand);
  add(brisk::cli::AddQuantizeCommand);
  add(brisk::cli::AddBenchCommand);
  add(brisk::cli::AddTuneCommand);
  add(brisk::cli::AddChatCommand);
  add(brisk::cli::AddTokenizeCommand);
  add(brisk::cli::AddServeCommand);
  brisk::cli::SetCommandLine(argc, argv);
  CLI11_PARSE(app, argc, argv);
  for (auto& [sub, fn] : commands)
    if (sub->parsed()) return fn();
  return 2;
}
