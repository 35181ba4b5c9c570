// `scaleprof mlflow sync`: push recorded runs to an MLflow server (src/mlflow_sync/).
#pragma once

#include <CLI/CLI.hpp>

namespace scaleprof::cli {

// Adds `mlflow` (with its subcommand `sync`) to `app`. `exit_code` receives the result.
void setup_mlflow_command(CLI::App& app, int* exit_code);

}  // namespace scaleprof::cli
