// `scaleprof run [options] -- CMD ARGS...`: record a training launch from outside.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace scaleprof::cli {

// CLI11 reorders or rejects words after `--` in a subcommand, so main() cuts `scaleprof run ... -- CMD`
// at the first `--` before parsing: returns the argc to parse and stores CMD in *command_tail.
int split_run_command(int argc, char** argv, std::vector<std::string>* command_tail);

// `command_tail` must outlive parsing; it holds what split_run_command cut off.
void setup_run_command(CLI::App& app, int* exit_code, const std::vector<std::string>* command_tail);

}  // namespace scaleprof::cli
