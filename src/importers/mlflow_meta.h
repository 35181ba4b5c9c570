// The flat YAML of MLflow's file store meta.yaml files and its metric files, parsed without a YAML
// library: MLflow writes them with yaml.safe_dump as one "key: scalar" per line at the top level
// (nested values such as tags: [] are skipped), and metric files as "timestamp value step" lines.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "importers/mlflow_store.h"

namespace scaleprof::importers {

// Top-level scalar keys of a meta.yaml; quoted scalars ('it''s', "a\tb") are unquoted. Lines that
// are not "key: value" at column 0 are ignored. Fails (naming `path` and the line) on an unterminated
// quote.
Result<std::map<std::string, std::string>> parse_mlflow_meta(std::string_view text, const std::string& path);

// A metric file: "timestamp value step" per line (older files: "timestamp value"). Fails naming the
// file and line of the first malformed line. MLflow writes NaN and +-Inf as nan / inf / -inf.
Result<std::vector<MetricPoint>> parse_mlflow_metric_file(std::string_view text, const std::string& path);

}  // namespace scaleprof::importers
