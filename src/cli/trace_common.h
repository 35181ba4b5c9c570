// What the `scaleprof trace` subcommands share (cli/trace_command.cc, cli/trace_hta_command.cc): rank
// lists, the width of text tables, rendering the tables and the exit code of a partial read.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "pipeline/trace_pipeline.h"

namespace scaleprof::cli {

// Parses "0,2,5-7" into a list of ranks; false with a one-line message in `error` otherwise.
bool parse_rank_list(const std::string& text, std::vector<int64_t>* out, std::string* error);

// How text tables fit: the terminal's width (report/table_layout.h), --wide keeping every column,
// --full-names every name.
void text_width(const std::string& output, bool wide, bool full_names, report::RenderOptions* render);

// The help of --wide and --full-names (nullptr: no --full-names), for every subcommand.
void add_width_flags(CLI::App* cmd, bool* wide, bool* full_names);

// --format and -o, for every subcommand that writes tables (`Options`: members format, output).
template <class Options>
void add_output_flags(CLI::App* cmd, Options* opt) {
  cmd->add_option("--format", opt->format, "Output format: table, csv or json")->capture_default_str();
  cmd->add_option("-o,--output", opt->output, "Write to FILE instead of standard output");
}

// The width flags, --strict, -q and --threads: how every subcommand that reads traces reads them and
// fits its tables (`Options`: members wide, strict, quiet, threads, and full_names where it has one).
template <class Options>
void add_reading_flags(CLI::App* cmd, Options* opt, const char* quiet_help = "Print no reading warnings") {
  if constexpr (requires { opt->full_names; }) {
    add_width_flags(cmd, &opt->wide, &opt->full_names);
  } else {
    add_width_flags(cmd, &opt->wide, nullptr);
  }
  cmd->add_flag("--strict", opt->strict, "Fail on invalid JSON instead of repairing old Kineto defects");
  cmd->add_flag("-q,--quiet", opt->quiet, quiet_help);
  cmd->add_option("--threads", opt->threads, "Files read in parallel (default: one per core)");
}

// Renders the tables to stdout or -o FILE; the exit code.
int emit(const report::TraceReport& result, report::RenderOptions render, const std::string& output);

// Warns and returns true when some files or events could not be read.
bool partial_exit(const trace::StreamedSet& set);

}  // namespace scaleprof::cli
