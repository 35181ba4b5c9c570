#include "importers/run_reader.h"

#include <fmt/format.h>
#include <signal.h>
#include <simdjson.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <filesystem>
#include <limits>
#include <set>

#include "collect/run_file.h"
#include "core/checked_sum.h"
#include "core/clock_event_reasons.h"
#include "core/csv_reader.h"
#include "core/number_text.h"
#include "importers/value_checks.h"

namespace scaleprof::importers {

namespace fs = std::filesystem;

namespace {

// What a run's files may weigh when read whole: a CSV of a long run (a sample a second on 8 GPUs for
// weeks is a few hundred MB), a JSON record written by scaleprof (a few kB).
constexpr size_t kMaxCsvBytes = size_t{2} << 30;
constexpr size_t kMaxJsonBytes = size_t{16} << 20;

// How serious a file that could not be read is: one not read on purpose (a symbolic link, not a
// regular file) or past its size limit is a warning; one that cannot be opened, read or parsed is
// rejected input.
Severity read_failure_severity(const Error& e) {
  return e.kind == ErrorKind::kRefused || e.kind == ErrorKind::kTooLarge ? Severity::kWarning : Severity::kError;
}

Diagnostic read_failure(const Error& e) {
  return diagnostic(read_failure_severity(e), e.message);
}

Result<CsvTable> read_table(const std::string& path, std::vector<Diagnostic>* diagnostics);

// Column accessors for one row: missing columns and empty cells are "unknown".
struct RowView {
  const CsvTable& table;
  size_t row;
  std::string_view cell(int column) const {
    if (column < 0 || static_cast<size_t>(column) >= table.rows[row].size()) return {};
    return table.rows[row][column];
  }
};

// Reads the records of one CSV into T with `fill`, which returns false for a row whose required
// fields do not parse (reported, then skipped).
template <class T, class Fill>
std::vector<T> read_records(const std::string& path, std::vector<Diagnostic>* warnings, Fill fill) {
  std::vector<T> out;
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(path, ec))) return out;
  auto table = read_table(path, warnings);
  if (!table) {
    warnings->push_back(read_failure(table.error()));
    return out;
  }
  const CsvTable& t = table.value();
  out.reserve(t.rows.size());
  for (size_t r = 0; r < t.rows.size(); ++r) {
    T record;
    if constexpr (requires { record.line; }) record.line = t.line_numbers[r];
    if (fill(t, RowView{t, r}, &record)) {
      out.push_back(record);
    } else {
      warnings->push_back({Severity::kError, fmt::format("{}:{}", path, t.line_numbers[r]),
                           "a required field is missing or not a number; line skipped"});
    }
  }
  return out;
}

// A record's `samples` cell: empty is "not given"; text that is not an integer is an error (the count is
// then not given), not dropped in silence, as the MLflow reader reports a fractional epoch_samples.
std::optional<int64_t> samples_cell(const CsvTable& t, RowView row, std::vector<Diagnostic>* warnings) {
  const std::string_view cell = row.cell(t.column("samples"));
  if (cell.empty()) return std::nullopt;
  std::optional<int64_t> samples = parse_int64(cell);
  if (!samples) {
    constexpr size_t kShown = 40;
    warnings->push_back({Severity::kError, fmt::format("{}:{}", t.path, t.line_numbers[row.row]),
                         fmt::format("samples '{}{}' is not a whole number; samples ignored", cell.substr(0, kShown),
                                     cell.size() > kShown ? "..." : "")});
  }
  return samples;
}

std::vector<collect::EpochRecord> read_epochs(const std::string& path, std::vector<Diagnostic>* warnings) {
  return read_records<collect::EpochRecord>(path, warnings,
                                            [&](const CsvTable& t, RowView row, collect::EpochRecord* e) {
                                              auto epoch = parse_int64(row.cell(t.column("epoch")));
                                              auto start = parse_int64(row.cell(t.column("start_unix_ns")));
                                              auto end = parse_int64(row.cell(t.column("end_unix_ns")));
                                              auto duration = parse_double(row.cell(t.column("duration_s")));
                                              if (!epoch || !duration) return false;
                                              e->epoch = *epoch;
                                              e->start_unix_ns = start.value_or(0);
                                              e->end_unix_ns = end.value_or(0);
                                              e->duration_s = *duration;
                                              e->samples = samples_cell(t, row, warnings);
                                              return true;
                                            });
}

std::vector<collect::StepRecord> read_steps(const std::string& path, std::vector<Diagnostic>* warnings) {
  return read_records<collect::StepRecord>(path, warnings, [&](const CsvTable& t, RowView row, collect::StepRecord* s) {
    auto epoch = parse_int64(row.cell(t.column("epoch")));
    auto step = parse_int64(row.cell(t.column("step")));
    auto duration = parse_double(row.cell(t.column("duration_s")));
    if (!step || !duration) return false;
    s->epoch = epoch.value_or(0);
    s->step = *step;
    s->start_unix_ns = parse_int64(row.cell(t.column("start_unix_ns"))).value_or(0);
    s->duration_s = *duration;
    s->samples = samples_cell(t, row, warnings);
    return true;
  });
}

std::vector<collect::GpuSample> read_gpu(const std::string& path, std::vector<Diagnostic>* warnings) {
  return read_records<collect::GpuSample>(path, warnings, [](const CsvTable& t, RowView row, collect::GpuSample* s) {
    auto time = parse_int64(row.cell(t.column("time_unix_ns")));
    auto device = parse_int64(row.cell(t.column("device")));
    if (!time || !device) return false;
    s->time_unix_ns = *time;
    s->device = *device;
    s->utilization_pct = parse_double(row.cell(t.column("utilization_pct")));
    s->power_w = parse_double(row.cell(t.column("power_w")));
    s->memory_used_bytes = parse_int64(row.cell(t.column("memory_used_bytes")));
    s->energy_j = parse_double(row.cell(t.column("energy_j")));
    // Columns added later (issue 33): a file written before them has none, read as unknown.
    s->sm_clock_mhz = parse_int64(row.cell(t.column("sm_clock_mhz")));
    s->throttle_reasons = parse_clock_event_reasons(row.cell(t.column("throttle_reasons")));
    return true;
  });
}

// Small JSON field readers: a missing key, null or a wrong type all mean "unknown".
std::string json_string(simdjson::dom::object o, const char* key) {
  std::string_view v;
  if (o[key].get_string().get(v) != simdjson::SUCCESS) return {};
  return std::string(v);
}

std::optional<int64_t> json_int(simdjson::dom::object o, const char* key) {
  int64_t v = 0;
  if (o[key].get_int64().get(v) != simdjson::SUCCESS) return std::nullopt;
  return v;
}

std::vector<std::string> json_strings(simdjson::dom::object o, const char* key) {
  std::vector<std::string> out;
  simdjson::dom::array a;
  if (o[key].get_array().get(a) != simdjson::SUCCESS) return out;
  for (simdjson::dom::element e : a) {
    std::string_view s;
    if (e.get_string().get(s) == simdjson::SUCCESS) {
      out.emplace_back(s);
    } else {
      int64_t i = 0;
      if (e.get_int64().get(i) == simdjson::SUCCESS) out.push_back(std::to_string(i));
    }
  }
  return out;
}

Result<simdjson::dom::object> load_json_object(simdjson::dom::parser& parser, const std::string& path) {
  auto text = collect::read_run_file(path, kMaxJsonBytes);
  if (!text) return text.error();
  simdjson::dom::element doc;
  if (auto error = parser.parse(simdjson::padded_string(text.value())).get(doc); error != simdjson::SUCCESS) {
    return Error{fmt::format("{}: unreadable JSON: {}", path, simdjson::error_message(error)), ErrorKind::kBadInput};
  }
  simdjson::dom::object o;
  if (doc.get_object().get(o) != simdjson::SUCCESS) {
    return Error{fmt::format("{}: not a JSON object", path), ErrorKind::kBadInput};
  }
  return o;
}

Result<collect::RunInfo> read_run_json(simdjson::dom::parser& parser, const std::string& path) {
  auto loaded = load_json_object(parser, path);
  if (!loaded) return loaded.error();
  simdjson::dom::object o = loaded.value();
  collect::RunInfo info;
  info.schema_version = static_cast<int>(json_int(o, "schema_version").value_or(0));
  info.experiment = json_string(o, "experiment");
  info.run = json_string(o, "run");
  info.strategy = json_string(o, "strategy");
  info.world_size = json_int(o, "world_size");
  info.nodes = json_int(o, "nodes");
  info.gpus_per_node = json_int(o, "gpus_per_node");
  info.launcher = json_string(o, "launcher");
  info.job_id = json_string(o, "job_id");
  info.command = json_strings(o, "command");
  info.hosts = json_strings(o, "hosts");
  info.start_unix_ns = json_int(o, "start_unix_ns");
  info.end_unix_ns = json_int(o, "end_unix_ns");
  info.exit_status = json_int(o, "exit_status");
  info.status = json_string(o, "status");
  info.scaleprof_version = json_string(o, "scaleprof_version");
  info.torch_version = json_string(o, "torch_version");
  info.writer = json_string(o, "writer");
  info.writer_host = json_string(o, "writer_host");
  info.writer_pid = json_int(o, "writer_pid");
  info.attempt = json_int(o, "attempt").value_or(0);
  info.write_errors = json_int(o, "write_errors").value_or(0);
  info.last_write_error = json_string(o, "last_write_error");
  info.gpu_interval_ns = json_int(o, "gpu_interval_ns");
  return info;
}

Result<collect::RankInfo> read_rank_json(simdjson::dom::parser& parser, const std::string& path) {
  auto loaded = load_json_object(parser, path);
  if (!loaded) return loaded.error();
  simdjson::dom::object o = loaded.value();
  collect::RankInfo info;
  info.schema_version = static_cast<int>(json_int(o, "schema_version").value_or(0));
  auto rank = json_int(o, "rank");
  if (!rank) return Error{fmt::format("{}: no integer \"rank\"", path), ErrorKind::kBadInput};
  info.rank = *rank;
  info.local_rank = json_int(o, "local_rank");
  info.world_size = json_int(o, "world_size");
  info.node_rank = json_int(o, "node_rank");
  info.nodes = json_int(o, "nodes");
  info.host = json_string(o, "host");
  info.pid = json_int(o, "pid");
  info.start_unix_ns = json_int(o, "start_unix_ns");
  info.end_unix_ns = json_int(o, "end_unix_ns");
  info.status = json_string(o, "status");
  info.devices = json_strings(o, "devices");
  info.strategy = json_string(o, "strategy");
  info.experiment = json_string(o, "experiment");
  info.run = json_string(o, "run");
  info.launcher = json_string(o, "launcher");
  info.job_id = json_string(o, "job_id");
  info.torch_version = json_string(o, "torch_version");
  info.attempt = json_int(o, "attempt").value_or(0);
  info.write_errors = json_int(o, "write_errors").value_or(0);
  info.last_write_error = json_string(o, "last_write_error");
  info.gpu_interval_ns = json_int(o, "gpu_interval_ns");
  info.process_group_size = json_int(o, "process_group_size");
  info.process_group_by = json_string(o, "process_group_by");
  return info;
}

bool is_trace_name(const std::string& name) {
  auto ends_with = [&](std::string_view suffix) {
    return name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return ends_with(".json") || ends_with(".json.gz");
}

// The writer appends whole lines with one write(); a last line without '\n' was cut mid-record.
Diagnostic torn_last_line(const std::string& path, int64_t line) {
  return {Severity::kWarning, fmt::format("{}:{}", path, line), "torn last line (the writer stopped mid-record)"};
}

// For files a caller chose not to parse: still report a torn last line, with its line number,
// scanning the bytes without parsing them.
void check_torn_tail(const std::string& path, std::vector<Diagnostic>* warnings) {
  if (collect::is_symlink(path)) {
    warnings->push_back({Severity::kWarning, path, "a symbolic link; not followed (skipped)"});
    return;
  }
  auto file = collect::open_run_file(path);
  if (!file) return;
  char buffer[1 << 16];
  int64_t newlines = 0;
  char last = '\n';
  while (true) {
    const ssize_t n = ::read(file.value().fd(), buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    newlines += std::count(buffer, buffer + n, '\n');
    last = buffer[n - 1];
  }
  if (last != '\n') warnings->push_back(torn_last_line(path, newlines + 1));
}

std::string this_host() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return {};
  return name;
}

std::string rank_status(const RankData& rank, const std::string& local_host) {
  if (!rank.info) return collect::kStatusIncomplete;
  const collect::RankInfo& info = *rank.info;
  if (info.status == collect::kStatusRunning && !writer_may_be_alive(info.host, info.pid, local_host)) {
    return collect::kStatusInterrupted;
  }
  if (info.status.empty()) return collect::kStatusIncomplete;
  return info.status;
}

}  // namespace

int CsvTable::column(std::string_view name) const {
  for (size_t i = 0; i < header.size(); ++i) {
    if (header[i] == name) return static_cast<int>(i);
  }
  return -1;
}

namespace {

Result<CsvTable> read_table(const std::string& path, std::vector<Diagnostic>* warnings) {
  auto loaded = collect::read_run_file(path, kMaxCsvBytes);
  if (!loaded) return loaded.error();
  // The writers append whole lines with one write(): a last line without '\n' was cut mid-record.
  CsvText csv = read_csv_text(loaded.value(), /*appended=*/true);
  for (const CsvText::WrongWidth& w : csv.skipped) {
    warnings->push_back({Severity::kError, fmt::format("{}:{}", path, w.line),
                         fmt::format("{} fields where the header has {}; line skipped", w.fields, csv.header.size())});
  }
  if (csv.torn_line) warnings->push_back(torn_last_line(path, *csv.torn_line));
  CsvTable table;
  table.path = path;
  table.header = std::move(csv.header);
  table.rows = std::move(csv.rows);
  table.line_numbers = std::move(csv.lines);
  return table;
}

}  // namespace

Result<CsvTable> read_csv(const std::string& path, std::vector<std::string>* warnings) {
  std::vector<Diagnostic> diagnostics;
  auto table = read_table(path, &diagnostics);
  for (const Diagnostic& d : diagnostics) warnings->push_back(d.text());
  return table;
}

bool writer_may_be_alive(const std::string& host, std::optional<int64_t> pid, const std::string& local_host) {
  if (!pid || *pid <= 0 || *pid > std::numeric_limits<pid_t>::max()) return true;
  if (host.empty() || host != (local_host.empty() ? this_host() : local_host)) return true;
  return ::kill(static_cast<pid_t>(*pid), 0) == 0 || errno == EPERM;
}

std::string RunData::strategy() const {
  if (info && !info->strategy.empty()) return info->strategy;
  for (const RankData& r : ranks) {
    if (r.info && !r.info->strategy.empty()) return r.info->strategy;
  }
  return {};
}

int64_t RunData::world_size() const {
  int64_t w = info && info->world_size ? *info->world_size : 0;
  for (const RankData& r : ranks) {
    if (r.info && r.info->world_size) w = std::max(w, *r.info->world_size);
  }
  return w;
}

int64_t RunData::node_count() const {
  std::set<std::string> hosts;
  for (const RankData& r : ranks) {
    if (r.info && !r.info->host.empty()) hosts.insert(r.info->host);
  }
  if (!hosts.empty()) return static_cast<int64_t>(hosts.size());
  return info && info->nodes ? *info->nodes : 0;
}

int64_t RunData::epochs_completed() const {
  if (ranks.empty()) return 0;
  size_t n = std::numeric_limits<size_t>::max();
  for (const RankData& r : ranks) n = std::min(n, r.epochs.size());
  return static_cast<int64_t>(n);
}

std::string not_one_process_group(const RunData& run) {
  const int64_t world = run.world_size();
  if (world <= 1) return {};
  for (const RankData& r : run.ranks) {
    if (!r.info || !r.info->process_group_size || *r.info->process_group_size == world) continue;
    const int64_t size = *r.info->process_group_size;
    // Only the writer's own names are repeated: the file is data, not a message to pass on.
    const std::string& by = r.info->process_group_by;
    const std::string seen =
        size <= 1 && (by == "none" || by.empty())
            ? "never joined a process group (neither torch.distributed nor Horovod was initialised)"
            : fmt::format("ran in a process group of {} ({})", size,
                          by == "torch.distributed" || by == "horovod" ? by : "by an unknown library");
    return fmt::format(
        "launched as {} ranks, but the training of rank {} {}: the ranks trained independently, so this is no "
        "{}-rank measurement",
        world, r.rank, seen, world);
  }
  return {};
}

std::string derive_run_status(const RunData& run, const ReadOptions& options, std::string* reason) {
  const std::string local_host = options.local_host.empty() ? this_host() : options.local_host;
  std::string ignored;
  std::string& why = reason != nullptr ? *reason : ignored;
  why.clear();
  bool any_failed = false, any_running = false, any_incomplete = false;
  const RankData* interrupted = nullptr;
  for (const RankData& r : run.ranks) {
    any_failed = any_failed || r.status == collect::kStatusFailed;
    any_running = any_running || r.status == collect::kStatusRunning;
    any_incomplete = any_incomplete || r.status == collect::kStatusIncomplete;
    if (r.status == collect::kStatusInterrupted && interrupted == nullptr) interrupted = &r;
  }
  if (run.info) {
    const collect::RunInfo& info = *run.info;
    if (info.status == collect::kStatusFailed || (info.exit_status && *info.exit_status != 0))
      return collect::kStatusFailed;
    if (info.status == collect::kStatusRunning) {
      if (!writer_may_be_alive(info.writer_host, info.writer_pid, local_host)) {
        why = fmt::format(
            "{} (pid {} on {}) is gone without recording an end: it was killed (e.g. kill -9) or its node failed",
            info.writer == "wrapper" ? "the `scaleprof run` wrapper" : "the writer of run.json", *info.writer_pid,
            info.writer_host);
        return collect::kStatusInterrupted;
      }
      if (!any_failed && interrupted == nullptr) return collect::kStatusRunning;
    }
  }
  if (any_failed) return collect::kStatusFailed;
  if (interrupted != nullptr) {
    why = fmt::format(
        "rank {} (pid {} on {}) is gone without recording an end: it was killed (e.g. kill -9) or its "
        "node failed",
        interrupted->rank, interrupted->info->pid.value_or(0), interrupted->info->host);
    return collect::kStatusInterrupted;
  }
  if (any_running) return collect::kStatusRunning;
  if (std::string flagged = not_one_process_group(run); !flagged.empty()) {
    why = std::move(flagged);
    return collect::kStatusNotDistributed;
  }
  const int64_t world = run.world_size();
  if (any_incomplete || run.ranks.empty() || (world > 0 && static_cast<int64_t>(run.ranks.size()) < world)) {
    return collect::kStatusIncomplete;
  }
  return collect::kStatusCompleted;
}

namespace {

// The subdirectories of `dir` whose names start with `prefix`, sorted. An entry whose type cannot be
// read (a symbolic link loop, no permission) is one line in *problems and is skipped.
// Inside a run folder (`in_run`), a symbolic link is not followed: it is one line in *problems and
// skipped (collect/run_file.h says why).
std::vector<fs::path> subdirectories(const fs::path& dir, std::string_view prefix, std::vector<Diagnostic>* problems,
                                     std::error_code* list_error, bool in_run = false) {
  std::vector<fs::path> out;
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!name.starts_with(prefix)) continue;
    std::error_code type_error;
    if (in_run && it->is_symlink(type_error)) {
      problems->push_back({Severity::kWarning, it->path().string(), "a symbolic link; not followed (skipped)"});
      continue;
    }
    const bool is_dir = it->is_directory(type_error);
    if (type_error) {
      problems->push_back({Severity::kWarning, it->path().string(), type_error.message() + "; skipped"});
      continue;
    }
    if (is_dir) out.push_back(it->path());
  }
  if (list_error != nullptr) *list_error = ec;
  std::sort(out.begin(), out.end());
  return out;
}

// One attempt's folder: run.json, rank-*/, node-*/.
RunData read_attempt(const fs::path& dir, const ReadOptions& options, const std::string& local_host,
                     simdjson::dom::parser& parser) {
  RunData run;
  run.dir = dir.string();
  std::error_code ec;
  const std::string run_json = (dir / collect::kRunJson).string();
  if (fs::exists(fs::symlink_status(run_json, ec))) {
    auto info = read_run_json(parser, run_json);
    if (info) {
      run.info = std::move(info.value());
    } else {
      run.warnings.push_back(read_failure(info.error()));
    }
  }
  for (const fs::path& p : subdirectories(dir, "rank-", &run.warnings, nullptr, true)) {
    const std::string name = p.filename().string();
    auto folder_rank = parse_int64(std::string_view(name).substr(5));
    if (!folder_rank) continue;
    RankData rank;
    rank.dir = p.string();
    rank.rank = *folder_rank;
    const std::string rank_json = (p / collect::kRankJson).string();
    if (fs::exists(fs::symlink_status(rank_json, ec))) {
      auto info = read_rank_json(parser, rank_json);
      if (info) {
        rank.info = std::move(info.value());
        if (rank.info->rank != rank.rank) {
          run.warnings.push_back(
              {Severity::kError, rank_json, fmt::format("says rank {} inside folder {}", rank.info->rank, name)});
        }
      } else {
        run.warnings.push_back(read_failure(info.error()));
      }
    } else {
      run.warnings.push_back({Severity::kWarning, rank_json, "missing (the rank never started writing)"});
    }
    rank.epochs = read_epochs((p / collect::kEpochsCsv).string(), &run.warnings);
    if (options.read_steps) {
      rank.steps = read_steps((p / collect::kStepsCsv).string(), &run.warnings);
    } else {
      check_torn_tail((p / collect::kStepsCsv).string(), &run.warnings);
    }
    if (options.read_gpu) {
      rank.gpu = read_gpu((p / collect::kGpuCsv).string(), &run.warnings);
    } else {
      check_torn_tail((p / collect::kGpuCsv).string(), &run.warnings);
    }
    if (collect::is_symlink((p / collect::kTracesDir).string())) {
      run.warnings.push_back(
          {Severity::kWarning, (p / collect::kTracesDir).string(), "a symbolic link; not followed (skipped)"});
    } else {
      fs::directory_iterator traces(p / collect::kTracesDir, ec);
      for (; !ec && traces != fs::directory_iterator(); traces.increment(ec)) {
        if (!is_trace_name(traces->path().filename().string())) continue;
        std::error_code type_error;
        if (traces->is_symlink(type_error)) {
          run.warnings.push_back(
              {Severity::kWarning, traces->path().string(), "a symbolic link; not followed (skipped)"});
        } else if (traces->is_regular_file(type_error)) {
          rank.trace_files.push_back(traces->path().string());
        }
      }
    }
    ec.clear();
    std::sort(rank.trace_files.begin(), rank.trace_files.end());
    rank.status = rank_status(rank, local_host);
    run.ranks.push_back(std::move(rank));
  }
  for (const fs::path& p : subdirectories(dir, "node-", &run.warnings, nullptr, true)) {
    NodeData node;
    node.dir = p.string();
    node.host = p.filename().string().substr(5);
    if (options.read_gpu) {
      node.gpu = read_gpu((p / collect::kGpuCsv).string(), &run.warnings);
    } else {
      check_torn_tail((p / collect::kGpuCsv).string(), &run.warnings);
    }
    run.nodes.push_back(std::move(node));
  }
  std::sort(run.ranks.begin(), run.ranks.end(), [](const RankData& a, const RankData& b) { return a.rank < b.rank; });
  run.status = derive_run_status(run, options, &run.status_reason);
  return run;
}

}  // namespace

Result<RunData> read_run(const std::string& run_dir, const ReadOptions& options) {
  std::error_code ec;
  if (!fs::is_directory(run_dir, ec)) {
    return Error{fmt::format("{}: not a run directory{}", run_dir, ec ? ": " + ec.message() : ""),
                 ErrorKind::kNotFound};
  }
  fs::path dir(run_dir);
  std::string run_name = dir.filename().string();
  if (run_name.empty()) run_name = dir.parent_path().filename().string();
  std::string experiment = fs::absolute(dir, ec).lexically_normal().parent_path().filename().string();
  if (experiment.empty() || experiment == run_name) {
    experiment = fs::absolute(dir, ec).lexically_normal().parent_path().parent_path().filename().string();
  }
  const std::string local_host = options.local_host.empty() ? this_host() : options.local_host;
  simdjson::dom::parser parser;
  std::vector<Diagnostic> problems;
  std::error_code list_error;
  std::vector<fs::path> attempt_dirs = subdirectories(dir, collect::kAttemptDirPrefix, &problems, &list_error, true);
  if (list_error) return Error{fmt::format("{}: cannot list: {}", run_dir, list_error.message()), ErrorKind::kIo};

  RunData first = read_attempt(dir, options, local_host, parser);
  std::vector<RunData> attempts;
  if (first.info || !first.ranks.empty() || attempt_dirs.empty()) attempts.push_back(std::move(first));
  for (const fs::path& p : attempt_dirs) {
    auto n = parse_int64(
        std::string_view(p.filename().string()).substr(std::string_view(collect::kAttemptDirPrefix).size()));
    if (!n || *n <= 0) continue;
    RunData a = read_attempt(p, options, local_host, parser);
    a.attempt = *n;
    attempts.push_back(std::move(a));
  }
  std::sort(attempts.begin(), attempts.end(), [](const RunData& a, const RunData& b) { return a.attempt < b.attempt; });
  // The latest attempt that completed (by its ranks, or by run.json for a command without ranks),
  // else the latest one.
  size_t chosen = attempts.size() - 1;
  for (size_t i = attempts.size(); i-- > 0;) {
    const RunData& a = attempts[i];
    if (a.status == collect::kStatusCompleted ||
        (a.status == collect::kStatusIncomplete && a.info && a.info->status == collect::kStatusCompleted)) {
      chosen = i;
      break;
    }
  }
  RunData run = std::move(attempts[chosen]);
  if (attempts.size() > 1) {
    std::string others;
    for (size_t i = 0; i < attempts.size(); ++i) {
      run.attempts.push_back({attempts[i].attempt, i == chosen ? run.dir : attempts[i].dir,
                              i == chosen ? run.status : attempts[i].status});
      if (i != chosen)
        others += fmt::format("{}attempt {} ({})", others.empty() ? "" : ", ", attempts[i].attempt, attempts[i].status);
    }
    run.warnings.push_back({Severity::kWarning, run_dir,
                            fmt::format("{} SLURM attempts; attempt {} ({}) is used, set aside: {}", attempts.size(),
                                        run.attempt, run.status, others)});
  }
  run.warnings.insert(run.warnings.end(), problems.begin(), problems.end());
  run.experiment = experiment;
  run.run = run_name;
  return run;
}

Result<std::vector<RunData>> read_runs(const std::string& root, const std::string& experiment,
                                       const ReadOptions& options, std::vector<std::string>* problems) {
  std::vector<std::string> ignored;
  if (problems == nullptr) problems = &ignored;
  std::error_code ec;
  if (!fs::is_directory(root, ec))
    return Error{fmt::format("{}: no such directory (nothing recorded yet?)", root), ErrorKind::kNotFound};
  std::vector<RunData> runs;
  std::error_code list_error;
  std::vector<Diagnostic> listing;  // entries that cannot be read, one line each in *problems
  auto report_listing = [&] {
    for (const Diagnostic& d : listing) problems->push_back(d.text());
    listing.clear();
  };
  std::vector<fs::path> experiments = subdirectories(root, "", &listing, &list_error);
  report_listing();
  if (list_error) return Error{fmt::format("{}: cannot list: {}", root, list_error.message()), ErrorKind::kIo};
  for (const fs::path& exp : experiments) {
    if (!experiment.empty() && exp.filename() != experiment) continue;
    std::error_code exp_error;
    std::vector<fs::path> runs_of_exp = subdirectories(exp, "", &listing, &exp_error);
    report_listing();
    for (const fs::path& dir : runs_of_exp) {
      bool is_run = fs::exists(dir / collect::kRunJson, ec);
      std::vector<Diagnostic> inner_problems;
      is_run = is_run || !subdirectories(dir, "rank-", &inner_problems, nullptr).empty() ||
               !subdirectories(dir, collect::kAttemptDirPrefix, &inner_problems, nullptr).empty();
      if (!is_run) continue;
      auto run = read_run(dir.string(), options);
      if (run) {
        runs.push_back(std::move(run.value()));
      } else {
        problems->push_back(run.error().message);
      }
    }
    if (exp_error) problems->push_back(fmt::format("{}: cannot list: {}", exp.string(), exp_error.message()));
  }
  auto start = [](const RunData& r) {
    if (r.info && r.info->start_unix_ns) return *r.info->start_unix_ns;
    int64_t s = std::numeric_limits<int64_t>::max();
    for (const RankData& rank : r.ranks) {
      if (rank.info && rank.info->start_unix_ns) s = std::min(s, *rank.info->start_unix_ns);
    }
    return s;
  };
  std::sort(runs.begin(), runs.end(), [&](const RunData& a, const RunData& b) {
    if (a.experiment != b.experiment) return a.experiment < b.experiment;
    if (start(a) != start(b)) return start(a) < start(b);
    return a.run < b.run;
  });
  return runs;
}

std::map<int64_t, int64_t> rank_samples_per_epoch(const RankData& rank, std::vector<std::string>* rejected) {
  // `where` is formatted only for a rejected count: a long run has millions of step records.
  auto checked = [&](int64_t samples, auto where) {
    const std::string why = implausible_value(Quantity::kSamples, "samples", static_cast<double>(samples));
    if (!why.empty() && rejected != nullptr) rejected->push_back(fmt::format("{}: {}; samples ignored", where(), why));
    return why.empty();
  };
  // Step sums, for epochs whose every step record gives a valid count.
  std::map<int64_t, int64_t> steps;
  std::set<int64_t> incomplete;
  for (const collect::StepRecord& st : rank.steps) {
    const bool valid = st.samples && checked(*st.samples, [&] {
                         return fmt::format("{}/{}: epoch {} step {}", rank.dir, collect::kStepsCsv, st.epoch, st.step);
                       });
    if (!valid || !add_checked(&steps[st.epoch], *st.samples)) incomplete.insert(st.epoch);
  }
  for (int64_t e : incomplete) steps.erase(e);
  std::map<int64_t, int64_t> out;
  std::set<int64_t> seen;
  for (const collect::EpochRecord& e : rank.epochs) {
    // The record the report keeps: the first with a duration it accepts (run_dir_importer.cc).
    if (std::isnan(e.duration_s) || !implausible_value(Quantity::kEpochSeconds, "duration_s", e.duration_s).empty()) {
      continue;
    }
    if (!seen.insert(e.epoch).second) continue;
    if (e.samples) {
      if (checked(*e.samples, [&] { return fmt::format("{}/{}:{}", rank.dir, collect::kEpochsCsv, e.line); })) {
        out[e.epoch] = *e.samples;
      }
    } else if (auto s = steps.find(e.epoch); s != steps.end()) {
      out[e.epoch] = s->second;
    }
  }
  return out;
}

}  // namespace scaleprof::importers
