// `scaleprof runs`: list what was recorded, before any report.
#pragma once

#include <CLI/CLI.hpp>

namespace scaleprof::cli {

void setup_runs_command(CLI::App& app, int* exit_code);

}  // namespace scaleprof::cli
