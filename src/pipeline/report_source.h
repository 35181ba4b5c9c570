// Where the scalability report reads its runs, first that applies: --tracking-uri; --root/--log-dir;
// $MLFLOW_TRACKING_URI (MLflow's own default); $SCALEPROF_ROOT or ./scalability-metrics; for
// generate-scalability-report, itwinai's mllogs/mlflow. When a default was chosen while another source
// is here too, the note says which is read and how to choose the other. docs/mlflow.md, "Which store
// is read". The front-ends (CLI, Python module) pass in the flags they parsed and the environment's
// values, so that the choice is made once, here, and errors are values with a kind (exit codes follow
// the kind: a URI that cannot be meant is kUsage, no data at all kNotFound).
#pragma once

#include <string>

#include "core/result.h"

namespace scaleprof::pipeline {

struct SourceRequest {
  std::string root;              // --root / --log-dir; empty: not given
  std::string tracking_uri;      // --tracking-uri; empty: not given
  std::string env_tracking_uri;  // $MLFLOW_TRACKING_URI; empty: unset
  std::string env_root;          // $SCALEPROF_ROOT; empty: unset
  // generate-scalability-report: itwinai's flag name (--log-dir) in messages, and its MLflow store
  // mllogs/mlflow read when it is the only data here.
  bool itwinai = false;
};

struct ReportSource {
  std::string root;          // the run folder: --root, else $SCALEPROF_ROOT, else scalability-metrics
  std::string tracking_uri;  // the MLflow store to read instead (scheme lower-cased); empty: read `root`
  std::string note;          // one line for the user, or empty
};

// The request's environment values (env_tracking_uri, env_root) from this process's environment:
// what both front-ends pass in, read in one place.
void read_source_environment(SourceRequest* request);

// The source, or an error: kUsage for a tracking URI that cannot be meant (the message starts
// "usage: "), kNotFound when there is no data to read.
Result<ReportSource> choose_report_source(const SourceRequest& request);

}  // namespace scaleprof::pipeline
