#include "pipeline/report_source.h"

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>

#include "core/credential_redaction.h"
#include "pipeline/tracking_uri.h"

namespace scaleprof::pipeline {

namespace {

constexpr const char* kItwinaiMlflowDir = "mllogs/mlflow";
constexpr const char* kUsagePrefix = "usage: ";
constexpr const char* kDefaultRoot = "scalability-metrics";

Result<std::string> checked(const std::string& uri) {
  auto c = checked_tracking_uri(uri, false);
  if (!c) return Error{kUsagePrefix + c.error().message, c.error().kind};
  return c;
}

}  // namespace

void read_source_environment(SourceRequest* request) {
  request->env_tracking_uri = tracking_uri_from_environment();
  const char* root = std::getenv("SCALEPROF_ROOT");
  request->env_root = root != nullptr ? std::string(root) : std::string();
}

Result<ReportSource> choose_report_source(const SourceRequest& request) {
  ReportSource out;
  const bool root_given = !request.root.empty();
  const bool root_from_env = !root_given && !request.env_root.empty();
  out.root = root_given ? request.root : root_from_env ? request.env_root : std::string(kDefaultRoot);
  const std::string& root = out.root;
  const std::string root_flag = request.itwinai ? "--log-dir" : "--root";
  std::error_code ec;
  if (!request.tracking_uri.empty()) {
    auto uri = checked(request.tracking_uri);
    if (!uri) return uri.error();
    out.tracking_uri = uri.value();
    return out;
  }
  if (root_given) return out;
  const bool root_here = std::filesystem::is_directory(root, ec);
  if (!request.env_tracking_uri.empty()) {
    auto uri = checked(request.env_tracking_uri);
    if (!uri) return Error{fmt::format("{}(from MLFLOW_TRACKING_URI)", uri.error().message + " "), uri.error().kind};
    out.tracking_uri = uri.value();
    if (root_here) {
      out.note = fmt::format(
          "reading MLflow at {} (MLFLOW_TRACKING_URI); the run folder {} is not read: pass {} {} to read it, or "
          "--tracking-uri to choose another store",
          redact_url(out.tracking_uri), root, root_flag, root);
    }
    return out;
  }
  const bool mlflow_here = request.itwinai && std::filesystem::is_directory(kItwinaiMlflowDir, ec);
  if (root_here) {
    if (mlflow_here) {
      out.note = fmt::format(
          "reading {} (run folders or itwinai CSVs); itwinai's MLflow store {} is here too and is not read: pass "
          "--tracking-uri {} to read it instead",
          root, kItwinaiMlflowDir, kItwinaiMlflowDir);
    }
    return out;
  }
  // itwinai's report reads its MLflow store (mllogs/mlflow) unless told otherwise; do the same when
  // that is the only data here.
  if (mlflow_here && !root_from_env) {
    out.tracking_uri = kItwinaiMlflowDir;
    return out;
  }
  return Error{
      fmt::format(
          "no data to read: {} does not exist{}. Pass {} DIR (scaleprof run folders or itwinai CSVs) or --tracking-uri "
          "URI (an MLflow server, sqlite:///file.db or a file store folder; or set MLFLOW_TRACKING_URI)",
          root,
          root_from_env     ? " ($SCALEPROF_ROOT)"
          : request.itwinai ? fmt::format(" and neither does {}", kItwinaiMlflowDir)
                            : "",
          root_flag),
      ErrorKind::kNotFound};
}

}  // namespace scaleprof::pipeline
