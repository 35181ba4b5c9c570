// Helpers of the scalability report's tests (scalability_report_test.cc, scalability_report_itwinai_test.cc):
// the analysis of a root of hand-made runs, and the rows and lines its report is checked by.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "analysis/scalability.h"
#include "engine/run_trace_metrics.h"
#include "importers/run_data_reader.h"
#include "report/scalability_report.h"

namespace scaleprof::report::report_test {

using engine::add_trace_metrics;
using importers::read_scalability_data;
using importers::ScalabilityReadOptions;

inline const SeriesResult* find_series(const ScalabilityAnalysis& a, const std::string& series) {
  for (const SeriesResult& s : a.series) {
    if (s.series == series) return &s;
  }
  return nullptr;
}

inline bool contains(const std::vector<std::string>& lines, const std::string& part) {
  for (const std::string& l : lines) {
    if (l.find(part) != std::string::npos) return true;
  }
  return false;
}

inline bool contains(const std::vector<Diagnostic>& lines, const std::string& part) {
  return contains(texts(lines), part);
}

// The number in column `key` of the row of (strategy, workers) in the table named `table`.
inline double table_value(const std::vector<ReportSection>& sections, const std::string& table,
                          const std::string& strategy, int64_t workers, const std::string& key) {
  for (const ReportSection& s : sections) {
    for (size_t i = 0; i < s.tables.size(); ++i) {
      if (s.table_keys[i] != table) continue;
      const Table& t = s.tables[i];
      size_t col = t.columns.size();
      for (size_t c = 0; c < t.columns.size(); ++c) {
        if (t.columns[c].key == key) col = c;
      }
      EXPECT_LT(col, t.columns.size()) << key;
      for (const auto& row : t.rows) {
        if (std::get<std::string>(row[0].value) == strategy && std::get<int64_t>(row[1].value) == workers &&
            col < row.size() && std::holds_alternative<double>(row[col].value)) {
          return std::get<double>(row[col].value);
        }
      }
    }
  }
  ADD_FAILURE() << "no " << table << " row for " << strategy << " at " << workers;
  return tables::kNaN;
}

inline ScalabilityAnalysis analyse(const std::string& root, int skip, ScalabilityData* data,
                                   ScalabilityReadOptions read = {}) {
  read.root = root;
  auto loaded = read_scalability_data(read);
  EXPECT_TRUE(loaded.ok());
  *data = std::move(loaded).value();
  add_trace_metrics(data);
  ScalabilityOptions options;
  options.skip_epochs = skip;
  return analyse_scalability(*data, options);
}

}  // namespace scaleprof::report::report_test
