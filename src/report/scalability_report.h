// The scalability report's renderers: the tables, sentences and plot data every output form
// (console, CSV, JSON, gnuplot, HTML) shows of a ScalabilityAnalysis (analysis/scalability.h).
//
// Formulas are in analysis/scaling.h and docs/report.md. This file reads no files.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/scalability.h"
#include "report/table.h"
#include "tables/run_data.h"

namespace scaleprof::report {

// The analysis (analysis/scalability.h) and the data it reads (tables/run_data.h), under the names
// the renderers use.
using analysis::analyse_scalability;
using analysis::GpuDeviceRow;
using analysis::ScalabilityAnalysis;
using analysis::ScalabilityOptions;
using analysis::ScaleGroup;
using analysis::SeriesResult;
using tables::ComputationSums;
using tables::GpuSeries;
using tables::RunData;
using tables::ScalabilityData;
using tables::TraceSums;

// One console section: "######## Epoch Time Report ########", notes, tables.
struct ReportSection {
  std::string key;                 // JSON key prefix, e.g. "epoch_time"
  std::string title;               // "Epoch Time Report"
  std::vector<std::string> notes;  // printed under the heading
  std::vector<std::string> table_keys;
  std::vector<Table> tables;
};

std::vector<ReportSection> scalability_sections(const ScalabilityAnalysis& analysis);

// Console text: every section under its heading, its tables fit to options.max_width as the table
// renderer does (options.wide: every column); options.color makes headings and headers bold.
std::string render_sections_text(const std::vector<ReportSection>& sections, const RenderOptions& options);
// JSON object: one key per table, plus "explanation", "warnings", "errors", "skip_epochs".
std::string render_sections_json(const std::vector<ReportSection>& sections, const ScalabilityAnalysis& analysis);
// CSV: every table after a "# key" line, separated by blank lines.
std::string render_sections_csv(const std::vector<ReportSection>& sections);

}  // namespace scaleprof::report
