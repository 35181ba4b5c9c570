#include "pipeline/report_outputs.h"

#include <fmt/format.h>

#include <cctype>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <utility>

#include "core/output_file.h"
#include "core/terminal_text.h"
#include "pipeline/report_source.h"
#include "pipeline/scalability_pipeline.h"
#include "pipeline/trace_pages.h"
#include "report/scalability_html.h"
#include "report/scalability_plots.h"
#include "report/scalability_report.h"

namespace scaleprof::pipeline {

namespace {

std::string option_name(const ReportOptions& options, std::string_view cli, std::string_view python) {
  return std::string(options.spelling == OptionSpelling::kCli ? cli : python);
}

// What itwinai's users see besides the tables: how much the warm-up epoch weighs in the means it
// reports (it keeps every epoch), and its caution on the computation fraction.
void itwinai_notes(const ReportOptions& opt, const ScalabilityReport& report, const ReportMessage& message) {
  if (!report.warmup_changes.empty()) {
    message("note", "means include the warm-up epoch, as itwinai's do; with --skip-epochs 1 they would be: " +
                        report.warmup_changes);
  }
  if (opt.include_communication) {
    message("note",
            "--include-communication: itwinai's communication report is deprecated (it counts operators by "
            "NCCL names); communication that is not hidden under computation is measured in \"Where Scaling "
            "Is Lost\" when profiler traces exist");
  }
  const std::string rule(38, '-');
  message("", rule + "DISCLAIMER" + rule);
  message("",
          "The computation fraction is experimental. It is the self device time of ATen, c10 and autograd "
          "operators over the self device time of all operators (ProfilerStep* left out). It ignores "
          "parallelism and overlap between operators, so compare it across GPU counts of one strategy, not "
          "across strategies.");
  message("", std::string(86, '-'));
}

// itwinai's backup folder name: the runs joined by '_' (or aggregated_run) and a time stamp.
std::string backup_dir(const ReportOptions& opt) {
  std::string names;
  for (const std::string& n : opt.run_names) {
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

ScalabilityReportOptions pipeline_options(const ReportOptions& opt, const ReportSource& source) {
  ScalabilityReportOptions out;
  out.read.root = source.root;
  out.read.experiment = opt.experiment;
  out.read.run_names = opt.run_names;
  out.read.gpus_per_node = opt.gpus_per_node;
  out.read.include_superseded = opt.include_superseded;
  out.tracking_uri = source.tracking_uri;
  out.mlflow_experiment = !opt.mlflow_experiment.empty() ? opt.mlflow_experiment : opt.experiment;
  out.threads = opt.threads;
  out.analysis.skip_epochs = opt.skip_epochs;
  out.analysis.include_communication = opt.include_communication;
  out.what_ifs = opt.what_ifs;
  out.warmup_note = opt.itwinai && !opt.no_warnings;
  return out;
}

}  // namespace

std::vector<std::string> split_names(std::string_view text) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    if (comma == std::string_view::npos) comma = text.size();
    if (comma > pos) out.emplace_back(text.substr(pos, comma - pos));
    pos = comma + 1;
  }
  return out;
}

Status check_report_options(const ReportOptions& opt) {
  report::Format format{};
  if (!report::parse_format(opt.format, &format)) {
    return Error{
        fmt::format("{} must be table, csv or json (got '{}')", option_name(opt, "--format", "format"), opt.format),
        ErrorKind::kUsage};
  }
  if (!report::is_plot_suffix(opt.plot_suffix)) {
    return Error{fmt::format("{} must be .png, .svg or .pdf (got '{}')",
                             option_name(opt, "--plot-file-suffix", "plot_file_suffix"), opt.plot_suffix),
                 ErrorKind::kUsage};
  }
  if (opt.skip_epochs < 0) {
    return Error{
        fmt::format("{} must be 0 or more (got {})", option_name(opt, "--skip-epochs", "skip_epochs"), opt.skip_epochs),
        ErrorKind::kUsage};
  }
  if (opt.gpus_per_node < 0) {
    return Error{fmt::format("{} must be 1 or more (got {})", option_name(opt, "--gpus-per-node", "gpus_per_node"),
                             opt.gpus_per_node),
                 ErrorKind::kUsage};
  }
  return Ok{};
}

Result<ReportOutcome> write_report(const ReportOptions& opt, const ReportMessage& message) {
  if (Status checked = check_report_options(opt); !checked) return checked.error();
  report::RenderOptions render;
  report::parse_format(opt.format, &render.format);
  // Where the runs come from is chosen from the options and the environment (report_source.h).
  SourceRequest request;
  request.root = opt.root;
  request.tracking_uri = opt.tracking_uri;
  read_source_environment(&request);
  request.itwinai = opt.itwinai;
  Result<ReportSource> source = choose_report_source(request);
  if (!source) return source.error();
  if (!source.value().note.empty() && !opt.no_warnings) message("note", source.value().note);
  Result<ScalabilityReport> built = build_scalability_report(pipeline_options(opt, source.value()));
  if (!built) return built.error();
  const ScalabilityReport& result = built.value();
  const tables::ScalabilityData& data = result.data;
  const analysis::ScalabilityAnalysis& analysis = result.analysis;

  for (const Diagnostic& e : analysis.errors) message("error", e.text());
  auto warn = [&](const std::string& w) {
    if (!opt.no_warnings) message("warning", w);
  };
  for (const Diagnostic& w : analysis.warnings) warn(w.text());
  for (const Diagnostic& n : data.notes) {
    if (!opt.no_warnings) message("note", n.text());
  }
  if (opt.itwinai && !opt.no_warnings) itwinai_notes(opt, result, message);
  if (Status found = runs_found(result); !found) return found.error();

  ReportOutcome outcome;
  outcome.input_errors = analysis.errors.size();
  const std::vector<report::ReportSection> sections = report::scalability_sections(analysis);
  std::string text;
  if (render.format == report::Format::kJson) {
    text = report::render_sections_json(sections, analysis);
  } else if (render.format == report::Format::kCsv) {
    text = report::render_sections_csv(sections);
  } else {
    render.color = opt.output.empty() && opt.terminal_color;
    render.max_width = opt.max_width;
    render.wide = opt.wide;
    text = report::render_sections_text(sections, render);
  }

  // Plots and the HTML page.
  const std::vector<report::PlotSpec> specs = report::scalability_plot_specs(
      analysis, opt.itwinai ? report::PlotNames::kItwinai : report::PlotNames::kScaleprof);
  const std::string gnuplot = report::find_gnuplot();
  const bool want_plots = !opt.no_plots || !opt.html.empty();
  std::string plots_note;
  if (want_plots && gnuplot.empty()) {
    plots_note = "gnuplot not found: no plots drawn (install gnuplot, e.g. apt-get install gnuplot-nox)";
    warn(plots_note);
  } else if (want_plots && !opt.no_plots) {
    auto drawn = report::draw_plots(specs, opt.plot_dir, opt.plot_suffix, gnuplot);
    if (drawn) {
      outcome.plots = std::move(drawn).value();
    } else {
      message("error", fmt::format("plots: {}", drawn.error().message));
      outcome.plots_failed = true;
    }
  }
  if (render.format == report::Format::kTable) {
    for (const std::string& f : outcome.plots) text += fmt::format("Saved plot at '{}'.\n", terminal_safe(f));
  } else {
    for (const std::string& f : outcome.plots) message("", fmt::format("Saved plot at '{}'.", f));
  }
  if (opt.keep_text && opt.output.empty()) {
    outcome.text = std::move(text);
  } else if (Status written = write_output_file(opt.output, text); !written) {
    return written.error();
  }
  if (!opt.html.empty()) {
    std::vector<report::HtmlPlot> plots;
    if (!gnuplot.empty() && !specs.empty()) {
      auto svgs = report::render_svg_plots(specs, gnuplot);
      if (svgs) {
        for (size_t i = 0; i < specs.size(); ++i) plots.push_back({specs[i].stem, specs[i].title, svgs.value()[i]});
      } else {
        plots_note = "plots could not be drawn: " + svgs.error().message;
        message("error", plots_note);
        outcome.plots_failed = true;
      }
    }
    report::HtmlOptions html_options;
    html_options.root = result.source;
    html_options.plots_note = plots_note;
    if (!opt.no_trace_pages) {
      // The runs' trace pages first, so the report's page links only to pages that exist.
      TracePagesOptions pages_options;
      pages_options.folder = trace_pages_folder(opt.html);
      pages_options.href_prefix = std::filesystem::path(pages_options.folder).filename().string() + "/";
      pages_options.threads = opt.threads;
      Result<TracePages> pages = write_trace_pages(data, pages_options);
      if (!pages) return pages.error();
      html_options.trace_pages = std::move(pages.value().links);
      outcome.trace_pages = html_options.trace_pages.size();
      if (!html_options.trace_pages.empty()) {
        message("", fmt::format("Saved {} trace page(s) in '{}'.", html_options.trace_pages.size(),
                                std::filesystem::absolute(pages_options.folder).string()));
      }
    }
    const std::string page = report::render_scalability_html(analysis, sections, plots, html_options);
    if (Status written = write_output_file(opt.html, page); !written) return written.error();
    outcome.html = std::filesystem::absolute(opt.html).string();
    message("", fmt::format("Saved HTML report at '{}'.", outcome.html));
  }
  if (opt.do_backup) {
    const std::string dir = backup_dir(opt);
    std::error_code mkdir_error;
    std::filesystem::create_directories(dir, mkdir_error);
    if (Status written = write_output_file(dir + "/report.csv", report::render_sections_csv(sections)); !written) {
      return Error{"backup: " + written.error().message, ErrorKind::kIo};
    }
    outcome.backup_dir = std::filesystem::absolute(dir).string();
    message("", fmt::format("Saved a backup of the report data at '{}'.", outcome.backup_dir));
  }
  return outcome;
}

}  // namespace scaleprof::pipeline
