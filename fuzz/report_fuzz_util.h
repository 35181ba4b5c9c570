// Shared by the report fuzz targets: a scratch folder per input, the input cut into files, and the
// whole report rendered (tables, CSV, JSON, HTML; never plots) with the checks every output must
// pass whatever the input.
#pragma once

#include <simdjson.h>
#include <stdlib.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/scalability.h"
#include "importers/mlflow/mlflow_importer.h"
#include "importers/mlflow/mlflow_store.h"
#include "importers/run_data_reader.h"
#include "report/scalability_html.h"
#include "report/scalability_plots.h"
#include "report/scalability_report.h"

namespace scaleprof::fuzzing {

// A fresh folder under /tmp for one input, removed afterwards.
class ScratchRoot {
 public:
  ScratchRoot() {
    char name[] = "/tmp/scaleprof-fuzz-XXXXXX";
    if (mkdtemp(name) != nullptr) path_ = name;
  }
  ScratchRoot(const ScratchRoot&) = delete;
  ScratchRoot& operator=(const ScratchRoot&) = delete;
  ~ScratchRoot() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  bool ok() const { return !path_.empty(); }
  const std::string& path() const { return path_; }
  void write(const std::string& rel, std::string_view text) const {
    const std::filesystem::path p = std::filesystem::path(path_) / rel;
    std::error_code ec;
    std::filesystem::create_directories(p.parent_path(), ec);
    std::ofstream(p, std::ios::binary).write(text.data(), static_cast<std::streamsize>(text.size()));
  }

 private:
  std::string path_;
};

// The input cut at each "\n===\n" into at most `n` parts (missing parts are empty).
inline std::vector<std::string_view> split_parts(std::string_view input, size_t n) {
  std::vector<std::string_view> parts;
  while (parts.size() + 1 < n) {
    const size_t cut = input.find("\n===\n");
    if (cut == std::string_view::npos) break;
    parts.push_back(input.substr(0, cut + 1));
    input.remove_prefix(cut + 5);
  }
  parts.push_back(input);
  parts.resize(n);
  return parts;
}

// Renders the report of `data` (read from `root`) every way but plots; traps on any broken guarantee.
inline void render_everything(const tables::ScalabilityData& data, const std::string& root) {
  for (const tables::RunData& r : data.runs) {
    if (r.workers < 1 || r.workers > importers::kMaxWorkers) __builtin_trap();
  }
  const analysis::ScalabilityAnalysis result = analysis::analyse_scalability(data, {});
  const std::vector<report::ReportSection> sections = report::scalability_sections(result);
  // The text form as a terminal of 80 columns gets it (headers wrapped, columns left out, folded)
  // and whole (--wide). Without colour, nothing in it may reach a terminal as a control character.
  report::RenderOptions narrow;
  narrow.max_width = 80;
  report::RenderOptions wide;
  wide.wide = true;
  for (const report::RenderOptions& options : {narrow, wide}) {
    const std::string text = report::render_sections_text(sections, options);
    for (char c : text) {
      if ((static_cast<unsigned char>(c) < 0x20 && c != '\n') || c == 0x7F) __builtin_trap();
    }
  }
  (void)report::render_sections_csv(sections);
  const std::string json = report::render_sections_json(sections, result);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(json).get(doc) != simdjson::SUCCESS) __builtin_trap();  // valid JSON, valid UTF-8
  // The plot specs are built even with --no-plots (the HTML page uses them): bounded whatever the data.
  size_t points = 0;
  for (const report::PlotSpec& spec : report::scalability_plot_specs(result)) {
    points += spec.x_ticks.size();
    for (const report::PlotSeries& s : spec.series) points += s.x.size();
  }
  if (points > 1000000) __builtin_trap();
  report::HtmlOptions html;
  html.root = root;
  const std::string page = report::render_scalability_html(result, sections, {}, html);
  if (!simdjson::validate_utf8(page.data(), page.size())) __builtin_trap();
}

// Reads `root` and renders the report every way but plots; traps on any broken guarantee.
inline void report_everything(const std::string& root, int64_t gpus_per_node) {
  importers::ScalabilityReadOptions read;
  read.root = root;
  read.gpus_per_node = gpus_per_node;
  auto loaded = importers::read_scalability_data(read);
  if (!loaded) return;
  render_everything(loaded.value(), root);
}

// Reads experiment "exp" from an MLflow store the fuzzer built, checks the worker counts and renders
// everything: the common tail of the MLflow store targets.
inline void report_mlflow_store(importers::MlflowStore& store, const std::string& root) {
  importers::MlflowReadOptions options;
  options.experiment_name = "exp";
  auto loaded = importers::read_mlflow_runs(store, options);
  if (!loaded) return;
  for (const tables::RunData& r : loaded.value().runs) {
    if (r.workers < 1 || r.workers > importers::kMaxWorkers) __builtin_trap();
  }
  render_everything(loaded.value(), root);
}

}  // namespace scaleprof::fuzzing
