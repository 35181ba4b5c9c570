// The flat YAML of MLflow's file store meta.yaml files and its metric files, parsed without a YAML
// library: MLflow writes them with yaml.safe_dump as one "key: scalar" per line at the top level
// (nested values such as tags: [] are skipped), and metric files as "timestamp value step" lines.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "importers/mlflow/mlflow_store.h"

namespace scaleprof::importers {

// Top-level scalar keys of a meta.yaml; quoted scalars ('it''s', "a\tb") are unquoted. Lines that
// are not "key: value" at column 0 are ignored. Fails (naming `path` and the line) on an unterminated
// quote.
Result<std::map<std::string, std::string>> parse_mlflow_meta(std::string_view text, const std::string& path);

// A metric file as read: its points, and one line per line that was skipped.
struct MetricFile {
  std::vector<MetricPoint> points;
  std::vector<std::string> problems;  // "path:line: why; line skipped", the first few, then a count
};

// A metric file: "timestamp value step" per line (older files: "timestamp value"). A malformed line
// (not three numbers, a timestamp or step outside int64, a timestamp outside the times every input
// may carry, core/time_bounds.h) is skipped and named in `problems`; the other lines are kept.
// MLflow writes NaN and +-Inf as nan / inf / -inf. Fails (naming the file) only when the file holds
// more than `max_points` points: a metric is read whole or not at all.
Result<MetricFile> parse_mlflow_metric_file(std::string_view text, const std::string& path,
                                            size_t max_points = MlflowReadLimits{}.max_points_per_metric);

// MLflow's timestamps are milliseconds; those whose nanoseconds stay within core/time_bounds.h, so
// that any two can be subtracted. Every MLflow reader checks its points with it.
bool metric_timestamp_in_bounds(int64_t timestamp_ms);

// At most this many messages per file or metric about skipped lines or points; the rest are counted
// in one more line.
inline constexpr size_t kProblemsPerItem = 5;

}  // namespace scaleprof::importers
