// The one pagination mechanism for MLflow's paged REST calls (runs/search, metrics/get-history,
// artifacts/list, and whatever is paged next): every page token is followed through a PageWalk,
// which stops a server that repeats a token (a loop) and caps the pages, rows and bytes kept, with an
// error stating the numbers (issue 18, finding 8).
//
// The readers take the transport as a function from page token to response body, so the server
// store, `mlflow sync` and the fuzz target (fuzz/mlflow_pages_fuzzer.cc) run the same code.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "importers/mlflow/mlflow_http.h"
#include "importers/mlflow/mlflow_json.h"
#include "importers/mlflow/mlflow_store.h"

namespace scaleprof::importers {

struct PageLimits {
  int64_t max_pages = 10'000;
  int64_t max_rows = 10'000'000;                    // runs, metric points or files, over all pages
  int64_t max_bytes = int64_t{1024} * 1024 * 1024;  // response bytes, over all pages
};

// The bounds of a server store: its HTTP client's and its paged calls'.
struct ServerStoreLimits {
  HttpLimits http;
  PageLimits pages;
};

// What a PageWalk needs to know of one page.
struct PageStep {
  std::string next_page_token;  // empty on the last page
  int64_t rows = 0;
  int64_t bytes = 0;
};

// The state of one paged call: the token to ask for next, the tokens followed so far, and what the
// pages held. Errors name `endpoint`:
//   "runs/search: the server sent page token 'abc' again after 3 pages: it repeats its pages (a
//    pagination loop); stopped"
//   "metrics/get-history: more than 10000 pages (10001 pages, 12 rows, 5.0 MB received); stopped"
class PageWalk {
 public:
  PageWalk(std::string_view endpoint, const PageLimits& limits) : endpoint_(endpoint), limits_(limits) {}

  // The token to ask for next ("" first).
  const std::string& token() const { return token_; }
  // Accounts for a page just received with `rows` rows and `bytes` bytes whose next token is
  // `next`: an error when a cap would be passed or `next` was seen before; else true while there
  // are more pages. Keep the page's rows only after this returned a value.
  Result<bool> admit(const PageStep& step);

 private:
  std::string endpoint_;
  PageLimits limits_;
  std::string token_;
  std::vector<std::string> seen_;  // every token followed, sorted
  int64_t pages_ = 0;
  int64_t rows_ = 0;
  int64_t bytes_ = 0;
};

// The body of the page for `page_token` ("" for the first), or an error (transport, HTTP status).
using PageFetcher = std::function<Result<std::string>(const std::string& page_token)>;

// runs/search, every page: the runs in the order given (deleted ones left out).
Result<std::vector<MlflowRun>> read_all_runs(const PageLimits& limits, const PageFetcher& fetch);
// metrics/get-history, every page.
Result<std::vector<MetricPoint>> read_metric_history(const PageLimits& limits, const PageFetcher& fetch);
// artifacts/list, every page.
Result<std::vector<ArtifactEntry>> read_artifact_list(const PageLimits& limits, const PageFetcher& fetch);

}  // namespace scaleprof::importers
