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
// The options of `bench` itself (the sweep, cli/bench_sweep_cmd.cc), run when no subcommand is.
CommandFn AddBenchSweepOptions(CLI::App& bench);
// `bench report FILE.json`: re-renders every report format (cli/bench_report_cmd.cc).
CommandFn AddBenchReportSubcommand(CLI::App& bench);
// `bench quality`: file types vs a reference (cli/bench_quality.cc).
CommandFn AddBenchQualitySubcommand(CLI::App& bench);
// `brisk tune` (cli/tune.cc).
CommandFn AddTuneCommand(CLI::App& app);
CommandFn AddChatCommand(CLI::App& app);
CommandFn AddTokenizeCommand(CLI::App& app);
CommandFn AddServeCommand(CLI::App& app);

}  // namespace brisk::cli
