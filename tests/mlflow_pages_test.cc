// The one pagination mechanism (importers/mlflow/mlflow_pages.h) on its own, and through the server store
// and `mlflow sync`'s writer against hostile servers on 127.0.0.1 (issue 18, finding 8): a repeated
// page token stops at once with an error naming the repetition; pages, rows and bytes are capped
// with an error stating the numbers; every paged call (runs/search, metrics/get-history,
// artifacts/list) goes through it.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "hostile_http_server.h"
#include "importers/mlflow/mlflow_pages.h"
#include "importers/mlflow/mlflow_store.h"
#include "mlflow_sync/mlflow_writer.h"

namespace scaleprof::importers {
namespace {

using scaleprof::testing::HostileHttpServer;
using scaleprof::testing::http_response;
using scaleprof::testing::HttpConnection;
using scaleprof::testing::HttpRequest;

bool contains(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

// A fetcher over scripted bodies, one per call; counts the calls and records the tokens asked for.
struct ScriptedPages {
  explicit ScriptedPages(std::vector<std::string> pages) : bodies(std::move(pages)) {}
  std::vector<std::string> bodies;
  std::vector<std::string> asked;
  PageFetcher fetcher() {
    return [this](const std::string& token) -> Result<std::string> {
      asked.push_back(token);
      if (asked.size() > bodies.size()) return bodies.back();
      return bodies[asked.size() - 1];
    };
  }
};

std::string history_page(int first_step, int n, std::string_view next) {
  std::string body = R"({"metrics":[)";
  for (int i = 0; i < n; ++i) {
    if (i > 0) body += ",";
    body += R"({"key":"loss","value":1.5,"timestamp":1700000000000,"step":)" + std::to_string(first_step + i) + "}";
  }
  body += "]";
  if (!next.empty()) body += R"(,"next_page_token":")" + std::string(next) + "\"";
  return body + "}";
}

std::string runs_page(const std::string& run_id, std::string_view next) {
  std::string body = R"({"runs":[{"info":{"run_id":")" + run_id +
                     R"(","lifecycle_stage":"active"},"data":{"tags":[{"key":"scaleprof.sync_id","value":")" + run_id +
                     R"("}]}}])";
  if (!next.empty()) body += R"(,"next_page_token":")" + std::string(next) + "\"";
  return body + "}";
}

TEST(Pagination, FollowsTokensToTheLastPage) {
  ScriptedPages s({history_page(0, 3, "p2"), history_page(3, 3, "p3"), history_page(6, 2, "")});
  auto points = read_metric_history({}, s.fetcher());
  ASSERT_TRUE(points) << points.error().message;
  ASSERT_EQ(points.value().size(), 8u);
  EXPECT_EQ(points.value()[7].step, 7);
  EXPECT_EQ(s.asked, (std::vector<std::string>{"", "p2", "p3"}));
}

TEST(Pagination, RepeatedTokenStopsAtOnce) {
  ScriptedPages s({history_page(0, 2, "same")});  // every page says "same"
  auto points = read_metric_history({}, s.fetcher());
  ASSERT_FALSE(points);
  EXPECT_EQ(points.error().message,
            "metrics/get-history: the server sent page token 'same' again after 2 pages: it repeats its pages (a "
            "pagination loop); stopped");
  EXPECT_EQ(s.asked.size(), 2u);
}

TEST(Pagination, TokenCycleIsALoopToo) {
  ScriptedPages s({runs_page("a", "t1"), runs_page("b", "t2"), runs_page("c", "t1")});
  auto runs = read_all_runs({}, s.fetcher());
  ASSERT_FALSE(runs);
  EXPECT_TRUE(contains(runs.error().message, "runs/search: the server sent page token 't1' again after 3 pages"))
      << runs.error().message;
}

TEST(Pagination, CapsStateTheirNumbers) {
  // Fresh tokens for ever, each page the same rows: the caps stop it.
  int n = 0;
  const PageFetcher endless = [&](const std::string&) -> Result<std::string> {
    ++n;
    return history_page(0, 10, "t" + std::to_string(n));
  };
  PageLimits pages;
  pages.max_pages = 50;
  auto by_pages = read_metric_history(pages, endless);
  ASSERT_FALSE(by_pages);
  EXPECT_TRUE(contains(by_pages.error().message, "metrics/get-history: more than 50 pages (51 pages, 510 rows, "))
      << by_pages.error().message;
  EXPECT_EQ(n, 51);

  PageLimits rows;
  rows.max_rows = 25;
  auto by_rows = read_metric_history(rows, endless);
  ASSERT_FALSE(by_rows);
  EXPECT_TRUE(contains(by_rows.error().message, "more than 25 rows (3 pages, 30 rows, ")) << by_rows.error().message;

  PageLimits bytes;
  bytes.max_bytes = 5000;
  auto by_bytes = read_metric_history(bytes, endless);
  ASSERT_FALSE(by_bytes);
  EXPECT_TRUE(contains(by_bytes.error().message, "more than 5000 response bytes (")) << by_bytes.error().message;
}

TEST(Pagination, ALongTokenIsCutInTheMessage) {
  const std::string token(5000, 'k');
  ScriptedPages s({history_page(0, 1, token)});
  auto points = read_metric_history({}, s.fetcher());
  ASSERT_FALSE(points);
  EXPECT_LT(points.error().message.size(), 200u);
  EXPECT_TRUE(contains(points.error().message, std::string(40, 'k') + "...'")) << points.error().message;
}

// A server whose runs/search and get-history always name the same next page, and whose
// artifacts/list pages twice before the profiling file.
class LoopingServer {
 public:
  LoopingServer()
      : server_([this](HttpConnection& c, const HttpRequest& r) {
          if (r.target.starts_with("/api/2.0/mlflow/runs/search")) {
            c.send(http_response(200, runs_page("run" + std::to_string(++runs_), "again")));
          } else if (r.target.starts_with("/api/2.0/mlflow/metrics/get-history")) {
            c.send(http_response(200, history_page(0, 100, "again")));
          } else if (r.target.starts_with("/api/2.0/mlflow/artifacts/list")) {
            const bool second = r.target.find("page_token=next") != std::string::npos;
            c.send(http_response(200, second ? R"({"files":[{"path":"prof/avg.csv","file_size":3}]})"
                                             : R"({"files":[{"path":"prof/other","is_dir":true}],)"
                                               R"("next_page_token":"next"})"));
          } else if (r.target.starts_with("/get-artifact")) {
            c.send(http_response(200, "a,b"));
          } else {
            c.send(http_response(404, "{}"));
          }
        }) {}
  std::string url() const { return server_.url(); }
  size_t requests() const { return server_.requests().size(); }

 private:
  int runs_ = 0;
  HostileHttpServer server_;
};

TEST(Pagination, ServerStoreStopsALoopingServer) {
  LoopingServer server;
  auto store = open_mlflow_server_store(server.url());
  ASSERT_TRUE(store);
  MlflowRun run;
  run.run_id = "r1";
  auto runs = store.value()->runs("1");
  ASSERT_FALSE(runs);
  EXPECT_EQ(runs.error().message, server.url() +
                                      ": runs/search: the server sent page token 'again' again after 2 pages: it "
                                      "repeats its pages (a pagination loop); stopped");
  auto history = store.value()->metric_history(run, "loss");
  ASSERT_FALSE(history);
  EXPECT_TRUE(contains(history.error().message, server.url() + ": metrics/get-history: the server sent page token"))
      << history.error().message;
  EXPECT_EQ(server.requests(), 4u);
  // artifacts/list is paged too: the file is on its second page.
  auto artifact = store.value()->artifact(run, "prof/avg.csv");
  ASSERT_TRUE(artifact) << artifact.error().message;
  ASSERT_TRUE(artifact.value());
  EXPECT_EQ(*artifact.value(), "a,b");
}

TEST(Pagination, SyncWriterStopsALoopingServer) {
  LoopingServer server;
  mlflow_sync::MlflowWriter writer(server.url());
  auto runs = writer.synced_runs("1");
  ASSERT_FALSE(runs);
  EXPECT_TRUE(contains(runs.error().message, server.url() + ": runs/search: the server sent page token 'again'"))
      << runs.error().message;
  auto history = writer.metric_history("r1", "loss");
  ASSERT_FALSE(history);
  EXPECT_TRUE(contains(history.error().message, "metrics/get-history: the server sent page token 'again'"))
      << history.error().message;
  EXPECT_EQ(server.requests(), 4u);
}

}  // namespace
}  // namespace scaleprof::importers
