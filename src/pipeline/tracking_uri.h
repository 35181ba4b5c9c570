// --tracking-uri as `mlflow sync`, `report` and `generate-scalability-report` take it: MLflow's own
// MLFLOW_TRACKING_URI is its default (the flag wins), the scheme is matched without regard to case
// (HTTP://, as libcurl and MLflow accept it), and a URI that cannot be meant (a mistyped scheme,
// `host:port` without one) is a bad command line (ErrorKind::kUsage, exit 2), not a failure to read.
// In the pipeline layer so that the report's choice of source (pipeline/report_source.h) and the
// CLI's `mlflow sync` check a URI the same way.
#pragma once

#include <string>

#include "core/result.h"

namespace scaleprof::pipeline {

// MLFLOW_TRACKING_URI, or "" when unset or empty. Read by the front-ends, which pass it in.
std::string tracking_uri_from_environment();

// The URI with its scheme lower-cased, or an error (one line, credentials removed) for one that is not
// a tracking URI: an unknown scheme, `host:port` with no scheme, a malformed sqlite: URI. With
// `server_only`, anything but http(s):// is such an error (sync writes to a server).
Result<std::string> checked_tracking_uri(const std::string& uri, bool server_only);

}  // namespace scaleprof::pipeline
