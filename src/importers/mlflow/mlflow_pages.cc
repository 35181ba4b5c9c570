#include "importers/mlflow/mlflow_pages.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <utility>

namespace scaleprof::importers {

namespace {

std::string shown_token(std::string_view token) {
  // The server's words: cut, so a megabyte token cannot make a megabyte message.
  if (token.size() <= 40) return std::string(token);
  return std::string(token.substr(0, 40)) + "...";
}

std::string megabytes(int64_t bytes) {
  return fmt::format("{:.1f} MB", static_cast<double>(bytes) / 1e6);
}

// The generic reader: fetch, parse, admit, keep.
template <class Page, class Row>
Result<std::vector<Row>> read_pages(std::string_view endpoint, const PageLimits& limits, const PageFetcher& fetch,
                                    Result<Page> (*parse)(std::string_view), std::vector<Row> Page::*rows) {
  std::vector<Row> out;
  PageWalk walk(endpoint, limits);
  for (;;) {
    auto body = fetch(walk.token());
    if (!body) return body.error();
    auto parsed = parse(body.value());
    if (!parsed) return parsed.error();
    Page& page = parsed.value();
    auto more = walk.admit(
        {page.next_page_token, static_cast<int64_t>((page.*rows).size()), static_cast<int64_t>(body.value().size())});
    if (!more) return more.error();
    std::move((page.*rows).begin(), (page.*rows).end(), std::back_inserter(out));
    if (!more.value()) return out;
  }
}

}  // namespace

Result<bool> PageWalk::admit(const PageStep& step) {
  const int64_t pages = pages_ + 1;
  const int64_t rows = rows_ + step.rows;
  const int64_t bytes = bytes_ + step.bytes;
  const auto over = [&](std::string_view what, int64_t cap) {
    return Error{fmt::format("{}: more than {} {} ({} pages, {} rows, {} received); stopped", endpoint_, cap, what,
                             pages, rows, megabytes(bytes)),
                 ErrorKind::kTooLarge};
  };
  if (pages > limits_.max_pages) return over("pages", limits_.max_pages);
  if (rows > limits_.max_rows) return over("rows", limits_.max_rows);
  if (bytes > limits_.max_bytes) return over("response bytes", limits_.max_bytes);
  pages_ = pages;
  rows_ = rows;
  bytes_ = bytes;
  if (step.next_page_token.empty()) return false;
  // A token seen before (or the one just asked for) means the server would send the same pages
  // again, for ever.
  const auto it = std::lower_bound(seen_.begin(), seen_.end(), step.next_page_token);
  if (step.next_page_token == token_ || (it != seen_.end() && *it == step.next_page_token)) {
    return Error{
        fmt::format(
            "{}: the server sent page token '{}' again after {} pages: it repeats its pages (a pagination loop); "
            "stopped",
            endpoint_, shown_token(step.next_page_token), pages_),
        ErrorKind::kNetwork};
  }
  seen_.insert(it, step.next_page_token);
  token_ = step.next_page_token;
  return true;
}

Result<std::vector<MlflowRun>> read_all_runs(const PageLimits& limits, const PageFetcher& fetch) {
  return read_pages<RunsPage, MlflowRun>("runs/search", limits, fetch, parse_search_runs_response, &RunsPage::runs);
}

Result<std::vector<MetricPoint>> read_metric_history(const PageLimits& limits, const PageFetcher& fetch) {
  return read_pages<MetricPage, MetricPoint>("metrics/get-history", limits, fetch, parse_metric_history_response,
                                             &MetricPage::points);
}

Result<std::vector<ArtifactEntry>> read_artifact_list(const PageLimits& limits, const PageFetcher& fetch) {
  return read_pages<ArtifactPage, ArtifactEntry>("artifacts/list", limits, fetch, parse_artifact_list_response,
                                                 &ArtifactPage::files);
}

}  // namespace scaleprof::importers
