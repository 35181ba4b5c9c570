// `scaleprof slurm`: scaling tests on SLURM from YAML configs, and `scaleprof slurm status`.
#pragma once

#include <CLI/CLI.hpp>

namespace scaleprof::cli {

void setup_slurm_command(CLI::App& app, int* exit_code);

}  // namespace scaleprof::cli
