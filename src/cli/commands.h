// The `brisk` subcommands. Each Add*Command registers its options on the app and returns the
// function that runs it once the command line has been parsed (exit code).
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace brisk::cli {

using CommandFn = std::function<int()>;

CommandFn AddInfoCommand(CLI::App& app);
CommandFn AddRunCommand(CLI::App& app);
CommandFn AddLogitsCommand(CLI::App& app);
CommandFn AddPullCommand(CLI::App& app);
CommandFn AddSynthCommand(CLI::App& app);
CommandFn AddQuantizeCommand(CLI::App& app);
CommandFn AddBenchCommand(CLI::App& app);
// `bench engine`, registered by AddBenchCommand on its `bench` subcommand (cli/bench_engine.cc).
CommandFn AddBenchEngineSubcommand(CLI::App& bench);
// `bench http`, registered by AddBenchCommand on its `bench` subcommand (cli/bench_http.cc).
CommandFn AddBenchHttpSubcommand(CLI::App& bench);
CommandFn AddChatCommand(CLI::App& app);
CommandFn AddTokenizeCommand(CLI::App& app);
CommandFn AddServeCommand(CLI::App& app);

}  // namespace brisk::cli
