// `scaleprof trace ...`: analyses of PyTorch profiler traces.
#pragma once

#include <CLI/CLI.hpp>

namespace scaleprof::cli {

// Adds the `trace` command and its subcommands to `app`. `exit_code` receives the result.
void setup_trace_command(CLI::App& app, int* exit_code);

}  // namespace scaleprof::cli
