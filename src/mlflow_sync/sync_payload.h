// The JSON bodies `scaleprof mlflow sync` sends to MLflow's REST API 2.0, and the split of a run's
// params, tags and metric points into runs/log-batch calls within the server's limits. Pure
// functions, so the limits and the exact bytes are unit-tested without a server.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "mlflow_sync/sync_plan.h"

namespace scaleprof::mlflow_sync {

// MLflow's limits on one runs/log-batch request (mlflow/utils/validation.py).
struct BatchLimits {
  size_t max_metrics = 1000;
  size_t max_params = 100;
  size_t max_tags = 100;
  size_t max_entities = 1000;    // metrics + params + tags
  size_t max_bytes = 1'000'000;  // the whole request body
};

struct LogBatch {
  std::vector<std::pair<std::string, std::string>> params;
  std::vector<std::pair<std::string, std::string>> tags;
  std::vector<MetricValue> metrics;
};

// Splits in order: params and tags first (they are few), then the metric points, each batch as
// full as the limits allow. Every item lands in exactly one batch; nothing is dropped (an item that
// alone exceeds max_bytes still gets a batch of its own, and the server says what it thinks).
std::vector<LogBatch> split_batches(const std::vector<std::pair<std::string, std::string>>& params,
                                    const std::vector<std::pair<std::string, std::string>>& tags,
                                    const std::vector<MetricValue>& metrics, const BatchLimits& limits = {});

// {"run_id": ..., "metrics": [...], "params": [...], "tags": [...]}. Values are written with the
// shortest text that reads back as the same double, so the server stores exactly the recorded value.
std::string log_batch_json(const std::string& run_id, const LogBatch& batch);

// runs/create: experiment, run name, start time (when known), and tags (the sync id, the parent).
std::string create_run_json(const std::string& experiment_id, const RunPlan& run,
                            const std::vector<std::pair<std::string, std::string>>& tags);

// runs/update: the final status and end time (when known).
std::string update_run_json(const std::string& run_id, const RunPlan& run);

// experiments/create.
std::string create_experiment_json(const std::string& name);

// runs/search for every run of an experiment that carries the sync id tag, one page.
std::string search_synced_runs_json(const std::string& experiment_id, const std::string& page_token);

// runs/search for the runs of an experiment tagged with one sync id (active ones); empty when the id
// holds a character MLflow's filter strings cannot quote (' or \\), then only the whole search helps.
std::string search_sync_id_json(const std::string& experiment_id, const std::string& sync_id);

// The path below the artifact proxy (PUT /api/2.0/mlflow-artifacts/artifacts/<path>) of a run's
// artifact root "mlflow-artifacts:/1/<run>/artifacts" (or "mlflow-artifacts://host:port/..."); empty
// when the root is not served by the server (a local path, s3://, ...).
std::string proxied_artifact_root(const std::string& artifact_uri);

}  // namespace scaleprof::mlflow_sync
