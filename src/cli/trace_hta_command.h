// `scaleprof trace potential-stragglers`, `trace kernel-sequences`, `trace annotations` and `trace
// cupti-counters` (issue 31): HTA's analyses that have arguments of their own.
#pragma once

#include <CLI/CLI.hpp>

namespace scaleprof::cli {

// Adds those subcommands to the `trace` command. `exit_code` receives the result.
void setup_hta_extra_commands(CLI::App& trace, int* exit_code);

}  // namespace scaleprof::cli
