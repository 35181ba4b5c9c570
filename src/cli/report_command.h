// `scaleprof report` (and its itwinai-compatible twin `scaleprof generate-scalability-report`): the
// scalability report over run directories and itwinai's CSV layout.
#pragma once

#include <CLI/CLI.hpp>

namespace scaleprof::cli {

// Adds `report` and `generate-scalability-report` to `app`. `exit_code` receives the result.
void setup_report_command(CLI::App& app, int* exit_code);

}  // namespace scaleprof::cli
