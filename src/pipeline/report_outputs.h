// `scaleprof report` (and `generate-scalability-report`) end to end, for the CLI and the Python module
// alike: the options checked, the runs read and analysed (scalability_pipeline.h), the tables rendered
// and written (-o FILE or standard output, or handed back to the caller), the plots drawn, the HTML
// page with the runs' trace pages beside it (trace_pages.h) and itwinai's backup CSV. The front-ends
// only fill ReportOptions from their arguments and choose what to do with the messages and the outcome
// (the CLI prints them and turns the outcome into an exit code).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/message_sink.h"
#include "core/result.h"

namespace scaleprof::pipeline {

// How option names are spelt in messages: the CLI's flags ("--skip-epochs") or the Python keyword
// arguments ("skip_epochs").
enum class OptionSpelling { kCli, kPython };

// The report's options, one type for both front-ends (defaults: `scaleprof report`'s).
struct ReportOptions {
  std::string root;                    // --root / --log-dir; empty: the source is chosen (report_source.h)
  std::string experiment;              // only this experiment
  std::vector<std::string> run_names;  // only these runs; empty: all
  std::string tracking_uri;            // an MLflow store to read instead
  std::string mlflow_experiment;       // its experiment (report's --experiment-name); empty: `experiment`
  bool itwinai = false;                // generate-scalability-report: itwinai's defaults, notes and plot names
  bool include_communication = false;
  bool do_backup = false;
  std::string backup_root_dir = "backup-scalability-metrics";
  std::string plot_dir = "plots";
  std::string plot_suffix = ".png";
  std::string html;  // also the HTML page to this file (and the trace pages beside it); empty: none
  std::string format = "table";
  // Where the rendered tables go: a file, or "" for standard output (or, with keep_text, for
  // ReportOutcome::text).
  std::string output;
  bool keep_text = false;
  int skip_epochs = 1;
  std::vector<std::string> what_ifs;
  int64_t gpus_per_node = 0;  // 0: not given (from the data, else 4)
  bool no_plots = false;
  bool no_warnings = false;
  bool include_superseded = false;  // runs of jobs a later `scaleprof slurm --force` replaced
  bool wide = false;                // text tables keep every column, however wide
  bool no_trace_pages = false;      // html without the pages of each run's traces beside it
  unsigned threads = 0;             // trace files read in parallel (0: one per core)
  // What the front-end knows of the terminal: whether standard output may be coloured (a terminal,
  // NO_COLOR unset) and the width text tables fit.
  bool terminal_color = false;
  size_t max_width = 120;
  OptionSpelling spelling = OptionSpelling::kCli;
};

// The messages for the user, in the order the report meets them (core/message_sink.h).
using ReportMessage = MessageSink;

struct ReportOutcome {
  size_t input_errors = 0;         // input problems the report names (the report is partial)
  bool plots_failed = false;       // the tables are complete, the plots could not be drawn
  std::string text;                // the rendered tables, with keep_text and no output file
  std::vector<std::string> plots;  // plot files saved
  std::string html;                // the HTML page written (absolute), or empty
  size_t trace_pages = 0;          // trace pages written beside it
  std::string backup_dir;          // the backup folder written, or empty
};

// Names given as one comma-separated text (`--run-names a,b`), empty items dropped.
std::vector<std::string> split_names(std::string_view text);

// The options' own checks (format, plot suffix, skip epochs, GPUs per node): kUsage, naming the option
// as `options.spelling` spells it. write_report makes them first; a front-end may make them earlier.
Status check_report_options(const ReportOptions& options);

// The report written as the options ask. An error stops it (bad options, no data, nothing found, a
// file that cannot be written); problems in the input make a partial report (input_errors), not an
// error.
Result<ReportOutcome> write_report(const ReportOptions& options, const ReportMessage& message);

}  // namespace scaleprof::pipeline
