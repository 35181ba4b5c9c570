#include "cli/report_command.h"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <memory>

#include "analysis/scalability.h"
#include "cli/exit_codes.h"
#include "cli/output.h"
#include "importers/run_data_reader.h"
#include "pipeline/report_source.h"
#include "pipeline/scalability_pipeline.h"
#include "pipeline/trace_pages.h"
#include "report/scalability_html.h"
#include "report/scalability_plots.h"
#include "report/scalability_report.h"

namespace scaleprof::cli {

namespace {

struct ReportOptions {
  std::string root;
  std::string experiment;
  std::string run_names;          // comma separated
  std::string tracking_uri;       // MLflow: server, sqlite:///db or file store directory
  std::string mlflow_experiment;  // MLflow experiment name (report's --experiment-name)
  bool itwinai = false;           // generate-scalability-report: itwinai's defaults and notes
  bool include_communication = false;
  bool do_backup = false;
  std::string backup_root_dir = "backup-scalability-metrics";
  std::string plot_dir = "plots";
  std::string plot_suffix = ".png";
  std::string html;
  std::string format = "table";
  std::string output;
  int skip_epochs = 1;
  std::vector<std::string> what_ifs;
  int64_t gpus_per_node = 0;  // 0: not given (from the data, else 4)
  bool no_plots = false;
  bool no_warnings = false;
  bool include_superseded = false;  // runs of jobs a later `scaleprof slurm --force` replaced
  bool wide = false;                // text tables keep every column, however wide
  bool no_trace_pages = false;      // --html without the pages of each run's traces beside it
  unsigned threads = 0;
};

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    if (comma == std::string::npos) comma = text.size();
    std::string item = text.substr(pos, comma - pos);
    if (!item.empty()) out.push_back(std::move(item));
    pos = comma + 1;
  }
  return out;
}

// What itwinai's users see besides the tables: how much the warm-up epoch weighs in the means it
// reports (it keeps every epoch), and its caution on the computation fraction.
void print_itwinai_notes(const ReportOptions& opt, const pipeline::ScalabilityReport& report) {
  if (!report.warmup_changes.empty()) {
    print_message(stderr, "note",
                  "means include the warm-up epoch, as itwinai's do; with --skip-epochs 1 they would be: " +
                      report.warmup_changes);
  }
  if (opt.include_communication) {
    print_message(stderr, "note",
                  "--include-communication: itwinai's communication report is deprecated (it counts operators by "
                  "NCCL names); communication that is not hidden under computation is measured in \"Where Scaling "
                  "Is Lost\" when profiler traces exist");
  }
  const std::string rule(38, '-');
  print_message(stderr, "", rule + "DISCLAIMER" + rule);
  print_message(stderr, "",
                "The computation fraction is experimental. It is the self device time of ATen, c10 and autograd "
                "operators over the self device time of all operators (ProfilerStep* left out). It ignores "
                "parallelism and overlap between operators, so compare it across GPU counts of one strategy, not "
                "across strategies.");
  print_message(stderr, "", std::string(86, '-'));
}

// itwinai's backup folder name: the runs joined by '_' (or aggregated_run) and a time stamp.
std::string backup_dir(const ReportOptions& opt) {
  std::string names;
  for (const std::string& n : split_commas(opt.run_names)) {
    for (char c : n) names += (std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '.') ? c : '_';
    names += '_';
  }
  if (names.empty()) names = "aggregated_run_";
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  localtime_r(&now, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y%m%d_%H%M%S", &tm);
  return opt.backup_root_dir + "/" + names + stamp;
}

int run_report(const ReportOptions& opt) {
  report::RenderOptions render;
  if (!report::parse_format(opt.format, &render.format)) {
    print_message(stderr, "error", fmt::format("--format must be table, csv or json (got '{}')", opt.format));
    return kExitUsage;
  }
  if (!report::is_plot_suffix(opt.plot_suffix)) {
    print_message(stderr, "error",
                  fmt::format("--plot-file-suffix must be .png, .svg or .pdf (got '{}')", opt.plot_suffix));
    return kExitUsage;
  }
  if (opt.skip_epochs < 0) {
    print_message(stderr, "error", fmt::format("--skip-epochs must be 0 or more (got {})", opt.skip_epochs));
    return kExitUsage;
  }
  if (opt.gpus_per_node < 0) {
    print_message(stderr, "error", fmt::format("--gpus-per-node must be 1 or more (got {})", opt.gpus_per_node));
    return kExitUsage;
  }
  // Where the runs come from is the pipeline's choice (pipeline/report_source.h), from the flags and
  // the environment.
  pipeline::SourceRequest request;
  request.root = opt.root;
  request.tracking_uri = opt.tracking_uri;
  pipeline::read_source_environment(&request);
  request.itwinai = opt.itwinai;
  auto source = pipeline::choose_report_source(request);
  if (!source) return fail_with(source.error());
  if (!source.value().note.empty() && !opt.no_warnings) print_message(stderr, "note", source.value().note);
  importers::ScalabilityReadOptions read;
  read.root = source.value().root;
  read.experiment = opt.experiment;
  read.run_names = split_commas(opt.run_names);
  read.gpus_per_node = opt.gpus_per_node;
  read.include_superseded = opt.include_superseded;
  pipeline::ScalabilityReportOptions pipeline_options;
  pipeline_options.read = read;
  pipeline_options.tracking_uri = source.value().tracking_uri;
  pipeline_options.mlflow_experiment = !opt.mlflow_experiment.empty() ? opt.mlflow_experiment : opt.experiment;
  pipeline_options.threads = opt.threads;
  pipeline_options.analysis.skip_epochs = opt.skip_epochs;
  pipeline_options.analysis.include_communication = opt.include_communication;
  pipeline_options.what_ifs = opt.what_ifs;
  pipeline_options.warmup_note = opt.itwinai && !opt.no_warnings;
  auto built = pipeline::build_scalability_report(pipeline_options);
  if (!built) {
    return fail_with(built.error());
  }
  const pipeline::ScalabilityReport& result = built.value();
  const tables::ScalabilityData& data = result.data;
  const analysis::ScalabilityAnalysis& analysis = result.analysis;
  read.root = result.source;

  for (const std::string& e : analysis.errors) print_message(stderr, "error", e);
  auto warn = [&](const std::string& w) {
    if (!opt.no_warnings) print_message(stderr, "warning", w);
  };
  for (const std::string& w : analysis.warnings) warn(w);
  for (const std::string& n : data.notes) {
    if (!opt.no_warnings) print_message(stderr, "note", n);
  }
  if (opt.itwinai && !opt.no_warnings) print_itwinai_notes(opt, result);
  if (Status found = pipeline::runs_found(result); !found) return fail_with(found.error());

  const std::vector<report::ReportSection> sections = report::scalability_sections(analysis);
  std::string text;
  if (render.format == report::Format::kJson) {
    text = report::render_sections_json(sections, analysis);
  } else if (render.format == report::Format::kCsv) {
    text = report::render_sections_csv(sections);
  } else {
    render.color = table_color(opt.output, render.format);
    render.max_width = terminal_columns(opt.output.empty() ? STDOUT_FILENO : -1);
    render.wide = opt.wide;
    text = report::render_sections_text(sections, render);
  }

  // Plots and the HTML page.
  const std::vector<report::PlotSpec> specs = report::scalability_plot_specs(
      analysis, opt.itwinai ? report::PlotNames::kItwinai : report::PlotNames::kScaleprof);
  const std::string gnuplot = report::find_gnuplot();
  const bool want_plots = !opt.no_plots || !opt.html.empty();
  std::vector<std::string> saved;
  std::string plots_note;
  bool plots_failed = false;
  if (want_plots && gnuplot.empty()) {
    plots_note = "gnuplot not found: no plots drawn (install gnuplot, e.g. apt-get install gnuplot-nox)";
    warn(plots_note);
  } else if (want_plots && !opt.no_plots) {
    auto drawn = report::draw_plots(specs, opt.plot_dir, opt.plot_suffix, gnuplot);
    if (drawn) {
      saved = std::move(drawn).value();
    } else {
      print_message(stderr, "error", fmt::format("plots: {}", drawn.error().message));
      plots_failed = true;
    }
  }
  if (render.format == report::Format::kTable) {
    for (const std::string& f : saved) text += fmt::format("Saved plot at '{}'.\n", terminal_safe(f));
  } else {
    for (const std::string& f : saved) print_message(stderr, "", fmt::format("Saved plot at '{}'.", f));
  }
  if (Status written = write_output_file(opt.output, text); !written) {
    return fail_with(written.error());
  }
  if (!opt.html.empty()) {
    std::vector<report::HtmlPlot> plots;
    if (!gnuplot.empty() && !specs.empty()) {
      auto svgs = report::render_svg_plots(specs, gnuplot);
      if (svgs) {
        for (size_t i = 0; i < specs.size(); ++i) plots.push_back({specs[i].stem, specs[i].title, svgs.value()[i]});
      } else {
        plots_note = "plots could not be drawn: " + svgs.error().message;
        print_message(stderr, "error", plots_note);
        plots_failed = true;
      }
    }
    report::HtmlOptions html_options;
    html_options.root = read.root;
    html_options.plots_note = plots_note;
    if (!opt.no_trace_pages) {
      // The runs' trace pages first, so the report's page links only to pages that exist.
      pipeline::TracePagesOptions pages_options;
      pages_options.folder = pipeline::trace_pages_folder(opt.html);
      pages_options.href_prefix = std::filesystem::path(pages_options.folder).filename().string() + "/";
      pages_options.threads = opt.threads;
      auto pages = pipeline::write_trace_pages(data, pages_options);
      if (!pages) return fail_with(pages.error());
      html_options.trace_pages = std::move(pages.value().links);
      if (!html_options.trace_pages.empty()) {
        print_message(stderr, "",
                      fmt::format("Saved {} trace page(s) in '{}'.", html_options.trace_pages.size(),
                                  std::filesystem::absolute(pages_options.folder).string()));
      }
    }
    const std::string page = report::render_scalability_html(analysis, sections, plots, html_options);
    if (Status written = write_output_file(opt.html, page); !written) {
      return fail_with(written.error());
    }
    print_message(stderr, "", fmt::format("Saved HTML report at '{}'.", std::filesystem::absolute(opt.html).string()));
  }
  if (opt.do_backup) {
    const std::string dir = backup_dir(opt);
    std::error_code mkdir_error;
    std::filesystem::create_directories(dir, mkdir_error);
    if (Status written = write_output_file(dir + "/report.csv", report::render_sections_csv(sections)); !written) {
      print_message(stderr, "error", "backup: " + written.error().message);
      return kExitError;
    }
    print_message(stderr, "",
                  fmt::format("Saved a backup of the report data at '{}'.", std::filesystem::absolute(dir).string()));
  }
  if (!analysis.errors.empty()) {
    print_message(
        stderr, "warning",
        fmt::format("report is partial: {} input problem(s) (exit code {})", analysis.errors.size(), kExitPartial));
    return kExitPartial;
  }
  if (plots_failed) {
    print_message(stderr, "warning",
                  fmt::format("the tables are complete but plots could not be drawn (exit code {})", kExitPlotsFailed));
    return kExitPlotsFailed;
  }
  return kExitOk;
}

// Options both spellings of the command share, under the same names.
void add_plot_options(CLI::App* cmd, ReportOptions& opt) {
  cmd->add_option("--plot-dir", opt.plot_dir, "Folder for the plots")->capture_default_str();
  cmd->add_option("--plot-file-suffix", opt.plot_suffix, "Plot format: .png, .svg or .pdf")->capture_default_str();
}

void add_output_options(CLI::App* cmd, ReportOptions& opt) {
  cmd->add_option("--html", opt.html,
                  "Also write one self-contained HTML report to FILE, and beside it (FILE without .html, then "
                  "-traces/) the `trace summary --html` page of every run with profiler traces, linked from it");
  cmd->add_flag("--no-trace-pages", opt.no_trace_pages, "With --html: write no trace pages (and no links to them)");
  cmd->add_option("--skip-epochs", opt.skip_epochs, "Warm-up epochs dropped from the start of every run")
      ->capture_default_str();
  cmd->add_option("--what-if", opt.what_ifs,
                  "Re-time every rank's profiled steps under a change and print the predicted epoch and step time "
                  "at each scale (repeatable): 'rank N at median', 'stragglers at median', 'communication free', "
                  "'communication 2x faster', computation, data loading, optimizer, host overhead, idle followed by "
                  "'2x faster', 'free' or 'at base' (shrunk with the workers since the smallest scale), or the name "
                  "of an operator, annotation or kernel (any containing it) followed by '2x faster' or 'free'")
      ->allow_extra_args(false);
  cmd->add_option("--gpus-per-node", opt.gpus_per_node,
                  "itwinai epoch-time files count nodes: workers = nodes x this (default: what the run's GPU files "
                  "say, else 4)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--format", opt.format, "Output format: table, csv or json")->capture_default_str();
  cmd->add_flag("--wide", opt.wide,
                "Text tables keep every column on one line (default: they fit the terminal, $COLUMNS or 120 when "
                "not a terminal: headers wrap, names are shortened, the least needed columns are left out with a "
                "note, the rest folded; CSV and JSON always have every column)");
}

}  // namespace

void setup_report_command(CLI::App& app, int* exit_code) {
  {
    auto opt = std::make_shared<ReportOptions>();
    CLI::App* cmd = app.add_subcommand(
        "report", "Scalability report: epoch time, speedup, efficiency, Amdahl, GPU energy, where scaling is lost");
    cmd->add_option("--root", opt->root,
                    "Data folder: scaleprof run directories and/or itwinai CSVs (default: $SCALEPROF_ROOT or "
                    "./scalability-metrics)");
    cmd->add_option("--experiment", opt->experiment, "Only this experiment (default: all)");
    cmd->add_option("--run-names", opt->run_names, "Only these runs, comma separated (default: all)");
    cmd->add_option("--tracking-uri", opt->tracking_uri,
                    "Read MLflow runs instead: http(s)://server, sqlite:///file.db, or a file store folder "
                    "(itwinai: mllogs/mlflow; default: $MLFLOW_TRACKING_URI unless --root is given)");
    cmd->add_option("--experiment-name", opt->mlflow_experiment,
                    "MLflow experiment to read with --tracking-uri (default: unnamed-experiment)");
    add_plot_options(cmd, *opt);
    cmd->add_flag("--no-plots", opt->no_plots, "Draw no plot files");
    add_output_options(cmd, *opt);
    cmd->add_option("-o,--output", opt->output, "Write to FILE instead of standard output");
    cmd->add_flag("--no-warnings", opt->no_warnings, "Print no warnings (errors are still printed)");
    cmd->add_flag("--include-superseded", opt->include_superseded,
                  "Keep the runs of SLURM jobs that a later 'scaleprof slurm --force' superseded");
    cmd->add_option("--threads", opt->threads, "Trace files read in parallel (default: one per core)");
    cmd->callback([opt, exit_code] { *exit_code = run_report(*opt); });
  }
  {
    // itwinai's option names, so its users can switch without relearning.
    auto opt = std::make_shared<ReportOptions>();
    CLI::App* cmd = app.add_subcommand("generate-scalability-report",
                                       "The scalability report under itwinai's command and option names");
    cmd->add_option("--root,--log-dir", opt->root,
                    "Data folder (itwinai's --log-dir; default: $SCALEPROF_ROOT or ./scalability-metrics)");
    cmd->add_option("--tracking-uri", opt->tracking_uri,
                    "MLflow store to read: http(s)://server, sqlite:///file.db or a file store folder (default: "
                    "$MLFLOW_TRACKING_URI unless --log-dir is given, else mllogs/mlflow when it exists and "
                    "./scalability-metrics does not)");
    cmd->add_option("--experiment-name", opt->experiment,
                    "MLflow experiment (default: unnamed-experiment); with --log-dir only this experiment");
    cmd->add_option("--run-names,--run-ids", opt->run_names, "Only these runs, comma separated");
    add_plot_options(cmd, *opt);
    cmd->add_flag("--no-warnings,!--no-no-warnings", opt->no_warnings, "Print no warnings and no disclaimer");
    cmd->add_flag("--include-communication,!--no-include-communication", opt->include_communication,
                  "Also itwinai's deprecated computation-vs-communication report and plot (NCCL names)");
    cmd->add_flag("--do-backup,!--no-do-backup", opt->do_backup,
                  "Also save the report's tables as CSV under --backup-root-dir");
    cmd->add_option("--backup-root-dir", opt->backup_root_dir, "Folder for --do-backup")->capture_default_str();
    opt->itwinai = true;
    opt->skip_epochs = 0;  // itwinai keeps every epoch
    add_output_options(cmd, *opt);
    cmd->callback([opt, exit_code] { *exit_code = run_report(*opt); });
  }
}

}  // namespace scaleprof::cli
