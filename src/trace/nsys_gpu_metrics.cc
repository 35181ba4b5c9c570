#include "trace/nsys_gpu_metrics.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>

#include "core/sqlite_read.h"

namespace scaleprof::trace {

namespace {

Error table_error(SqliteFile& file, std::string_view table) {
  if (file.expired()) {
    return Error{fmt::format("{}: reading the GPU metrics took too long; stopped at table {}", file.path(), table),
                 ErrorKind::kTooLarge};
  }
  return Error{fmt::format("{}: cannot read table {}: {} {}", file.path(), table, file.message(), kNsysExportHint)};
}

// Whether `table` is a real table with `columns`: nullopt when absent, an error when present but not
// one (a view, a virtual table) or without a column read.
Result<bool> usable(SqliteFile& file, const char* table, std::initializer_list<const char*> columns) {
  std::string type;
  switch (file.check_table(table, &type)) {
    case SqliteTableCheck::kMissing:
      return false;
    case SqliteTableCheck::kFailed:
      return table_error(file, table);
    case SqliteTableCheck::kTable:
      break;
    default:
      return Error{fmt::format("{}: {} is a {}, not a table {}", file.path(), table,
                               type.empty() ? "schema object" : type, kNsysExportHint)};
  }
  const std::set<std::string> have = file.columns(table);
  if (have.empty()) return table_error(file, table);
  for (const char* c : columns) {
    if (have.count(c) == 0)
      return Error{fmt::format("{}: table {} has no column {} {}", file.path(), table, c, kNsysExportHint)};
  }
  return true;
}

}  // namespace

Result<std::optional<NsysGpuMetricsHeader>> read_nsys_gpu_metrics(
    const std::string& path, const std::function<void(const NsysGpuMetricsHeader&)>& begin, const NsysGpuMetricRow& row,
    int64_t* skipped, const NsysReadOptions& options) {
  SqliteLimits limits = options.limits;
  if (!limits.file_deadline) limits.file_deadline = limits.query_deadline;
  auto opened = SqliteFile::open(path, limits);
  if (!opened) return opened.error();
  SqliteFile& file = *opened.value();
  auto samples = usable(file, "GPU_METRICS", {"timestamp", "typeId", "metricId", "value"});
  if (!samples) return samples.error();
  if (!samples.value()) return std::optional<NsysGpuMetricsHeader>();
  auto names = usable(file, "TARGET_INFO_GPU_METRICS", {"typeId", "metricId", "metricName"});
  if (!names) return names.error();
  NsysGpuMetricsHeader header;
  if (names.value()) {
    const bool has_type_name = file.columns("TARGET_INFO_GPU_METRICS").count("typeName") > 0;
    SqliteStatement s(
        file, has_type_name ? "SELECT typeId, metricId, metricName, typeName FROM TARGET_INFO_GPU_METRICS NOT INDEXED"
                            : "SELECT typeId, metricId, metricName, '' FROM TARGET_INFO_GPU_METRICS NOT INDEXED");
    if (!s.ok()) return table_error(file, "TARGET_INFO_GPU_METRICS");
    std::set<std::pair<int64_t, int64_t>> seen;  // the table repeats a metric per source
    int rc = 0;
    while ((rc = s.step()) == SQLITE_ROW) {
      if (s.type(0) != SQLITE_INTEGER || s.type(1) != SQLITE_INTEGER || s.bytes(2) > 256 || s.bytes(3) > 256) {
        continue;
      }
      if (!seen.insert({s.integer(0), s.integer(1)}).second) continue;
      if (header.metrics.size() >= kMaxNsysGpuMetrics) {
        return Error{
            fmt::format("{}: table TARGET_INFO_GPU_METRICS: more than {} metrics; not read", path, kMaxNsysGpuMetrics),
            ErrorKind::kTooLarge};
      }
      header.metrics.push_back({s.integer(0), s.integer(1), s.text(2), s.text(3)});
    }
    if (rc != SQLITE_DONE) return table_error(file, "TARGET_INFO_GPU_METRICS");
  }
  {
    SqliteStatement s(file, "SELECT MIN(timestamp), MAX(timestamp), COUNT(*) FROM GPU_METRICS NOT INDEXED");
    if (!s.ok() || s.step() != SQLITE_ROW) return table_error(file, "GPU_METRICS");
    if (s.type(0) == SQLITE_INTEGER && s.type(1) == SQLITE_INTEGER) {
      header.first_ns = s.integer(0);
      header.last_ns = s.integer(1);
    }
    header.rows = s.integer(2);
  }
  begin(header);
  SqliteStatement s(file, "SELECT timestamp, typeId, metricId, value FROM GPU_METRICS NOT INDEXED");
  if (!s.ok()) return table_error(file, "GPU_METRICS");
  int rc = 0;
  while ((rc = s.step()) == SQLITE_ROW) {
    const bool number = s.type(3) == SQLITE_INTEGER || s.type(3) == SQLITE_FLOAT;
    if (s.type(0) != SQLITE_INTEGER || s.type(1) != SQLITE_INTEGER || s.type(2) != SQLITE_INTEGER || !number ||
        !std::isfinite(s.real(3))) {
      ++*skipped;
      continue;
    }
    row(s.integer(1), s.integer(2), s.integer(0), s.real(3));
  }
  if (rc != SQLITE_DONE) return table_error(file, "GPU_METRICS");
  return std::optional<NsysGpuMetricsHeader>(std::move(header));
}

}  // namespace scaleprof::trace
