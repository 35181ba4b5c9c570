// What is MLflow's about talking to its server, over the generic client (core/http_client.h): its
// credential variables, the words that name it in messages, and its error bodies. Used by the
// importer (mlflow_server_store.cc) and by the exporter (mlflow_sync/mlflow_writer.h).
#pragma once

#include <string>
#include <string_view>

#include "core/http_client.h"  // IWYU pragma: export

namespace scaleprof::importers {

// MLflow's variables from the process environment: MLFLOW_TRACKING_TOKEN (Authorization: Bearer),
// MLFLOW_TRACKING_USERNAME / _PASSWORD (basic auth), MLFLOW_TRACKING_INSECURE_TLS=true.
HttpCredentials credentials_from_environment();

// "the MLflow server", and the variables above in the client's hints.
HttpWording mlflow_http_wording();

// A one-line description of a failed REST call: "<server>: <endpoint>: HTTP 500: <message>", the
// server's message (MLflow's error body) redacted and cut to one line of at most 300 bytes.
std::string http_failure(const HttpClient& client, std::string_view endpoint, const HttpResponse& response);

}  // namespace scaleprof::importers
