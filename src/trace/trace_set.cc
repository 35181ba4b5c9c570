#include "trace/trace_set.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "core/number_text.h"
#include "core/task_group.h"
#include "trace/event_importer.h"
#include "trace/streamed_order.h"
#include "trace/trace_file.h"

namespace scaleprof::trace {

namespace fs = std::filesystem;

namespace {

bool is_trace_file_name(const std::string& name) {
  auto ends_with = [&](std::string_view suffix) {
    return name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  // Nsight Systems exports and reports too (trace_file.h).
  return ends_with(".json") || ends_with(".json.gz") || ends_with(".sqlite") || ends_with(".nsys-rep") ||
         ends_with(".qdrep");
}

// The trace files in `dir`/rank-*/traces/, sorted; empty when `dir` has no such folder.
std::vector<std::string> run_directory_traces(const std::string& dir) {
  std::vector<std::string> found;
  std::error_code ec;
  for (const auto& rank : fs::directory_iterator(dir, ec)) {
    if (!rank.path().filename().string().starts_with("rank-")) continue;
    std::error_code sub_ec;
    const fs::path traces = rank.path() / "traces";
    if (!fs::is_directory(traces, sub_ec)) continue;
    for (const auto& entry : fs::directory_iterator(traces, sub_ec)) {
      std::error_code entry_ec;
      if (is_trace_file_name(entry.path().filename().string()) && (entry.is_regular_file(entry_ec) || entry_ec)) {
        found.push_back(entry.path().string());
      }
    }
  }
  std::sort(found.begin(), found.end());
  return found;
}

}  // namespace

bool TraceSet::partial() const {
  if (!errors.empty()) return true;
  return std::any_of(ranks.begin(), ranks.end(), [](const RankTrace& r) { return r.stats.rejected_events > 0; });
}

std::optional<int64_t> rank_from_file_name(std::string_view path) {
  std::string name = fs::path(std::string(path)).filename().string();
  // "rank-3" (scaleprof, torchrun users) and "worker_10" (itwinai's tensorboard_trace_handler names).
  for (std::string_view key : {std::string_view("rank"), std::string_view("worker")}) {
    for (size_t pos = name.find(key); pos != std::string::npos; pos = name.find(key, pos + 1)) {
      size_t i = pos + key.size();
      if (i < name.size() && (name[i] == '-' || name[i] == '_')) ++i;
      size_t start = i;
      while (i < name.size() && name[i] >= '0' && name[i] <= '9' && i - start < 9) ++i;
      if (i > start) {
        return scaleprof::parse_int64(std::string_view(name).substr(start, i - start));  // at most 9 digits
      }
    }
  }
  return std::nullopt;
}

Result<std::vector<std::string>> expand_trace_paths(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const std::string& p : paths) {
    std::error_code ec;
    fs::file_status status = fs::status(p, ec);
    if (ec || !fs::exists(status)) {
      const bool other = ec && ec != std::errc::no_such_file_or_directory;
      return Error{fmt::format("{}: {}", p, other ? ec.message() : std::string("no such file or directory")),
                   other ? ErrorKind::kIo : ErrorKind::kNotFound};
    }
    if (fs::is_directory(status)) {
      std::vector<std::string> found;
      // A scaleprof run directory (docs/run-directory.md): its ranks' traces are in rank-*/traces/, and
      // its own run.json is no trace. Read as the run's ranks, as `trace diff` and `slurm analyze` do.
      if (auto ranks = run_directory_traces(p); !ranks.empty()) {
        files.insert(files.end(), ranks.begin(), ranks.end());
        continue;
      }
      for (const auto& entry : fs::directory_iterator(p, ec)) {
        if (!is_trace_file_name(entry.path().filename().string())) continue;
        // A trace-named entry whose type cannot be found (a symlink loop, a dangling link) is kept:
        // reading it then fails with its own one-line error while the other files are analysed.
        std::error_code entry_ec;
        if (entry.is_regular_file(entry_ec) || entry_ec) found.push_back(entry.path().string());
      }
      if (ec) return Error{fmt::format("{}: cannot list directory: {}", p, ec.message()), ErrorKind::kIo};
      if (found.empty())
        return Error{fmt::format("{}: no trace files (*.json, *.json.gz, *.sqlite, *.nsys-rep) in this directory", p),
                     ErrorKind::kNotFound};
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else {
      files.push_back(p);
    }
  }
  return files;
}

unsigned threads_per_file(const LoadOptions& options, size_t files) {
  const unsigned threads = options.threads ? options.threads : std::max(1U, std::thread::hardware_concurrency());
  const unsigned divided = std::max(1U, threads / static_cast<unsigned>(std::max<size_t>(1, files)));
  return std::max(options.parse.threads, divided);
}

Result<StreamedSet> stream_traces(const std::vector<std::string>& paths, const LoadOptions& options,
                                  const std::function<void(size_t, RankTrace&&)>& consume) {
  auto expanded = expand_trace_paths(paths);
  if (!expanded) return expanded.error();
  StreamedSet set;
  set.files = std::move(expanded).value();
  const std::vector<std::string>& files = set.files;

  // Per file, filled by whichever thread reads it; merged in file order at the end.
  std::vector<std::optional<std::string>> error_of(files.size());
  std::vector<std::vector<Diagnostic>> warnings_of(files.size());
  std::vector<std::optional<int64_t>> rank_of(files.size());
  std::vector<char> skipped(files.size(), 0);
  // `--rank FILE=N`: a FILE with a folder in it names that file alone (two traces of one name in two
  // folders are two ranks); a bare file name matches the file of that name wherever it was found.
  // Paths are compared lexically, made absolute and normal, so `./x/a.json` is `x/a.json`.
  std::vector<std::pair<fs::path, int64_t>> overrides;
  overrides.reserve(options.rank_overrides.size());
  for (const auto& [path, value] : options.rank_overrides) {
    const fs::path p(path);
    overrides.emplace_back(p.has_parent_path() ? fs::absolute(p).lexically_normal() : p, value);
  }
  auto override_of = [&](const std::string& file) {
    std::optional<int64_t> rank;
    const fs::path f = fs::absolute(fs::path(file)).lexically_normal();
    for (const auto& [path, value] : overrides) {
      if (path.has_parent_path() ? path == f : path == f.filename()) rank = value;
    }
    return rank;
  };
  std::atomic<size_t> next{0};
  std::atomic<size_t> done{0};
  std::atomic<uint64_t> bytes_done{0};
  std::atomic<uint64_t> rejected{0};
  uint64_t bytes_total = 0;
  for (const std::string& f : files) {
    std::error_code ec;
    const uintmax_t size = fs::file_size(f, ec);
    if (!ec) bytes_total += size;
  }
  unsigned threads = options.threads ? options.threads : std::max(1U, std::thread::hardware_concurrency());
  // Fewer files than threads give each file several threads to parse its windows with.
  const unsigned per_file = threads_per_file(options, files.size());
  threads = std::min<unsigned>(threads, static_cast<unsigned>(files.size()));
  TaskGroup group;
  auto worker = [&] {
    for (size_t i = next++; i < files.size() && !group.failed(); i = next++) {
      ParseOptions parse = options.parse;
      parse.threads = per_file;
      uint64_t reported = 0;  // this file's bytes already added to bytes_done
      if (options.progress) {
        parse.on_bytes_read = [&](uint64_t bytes) {
          const uint64_t all = bytes_done += bytes - reported;
          reported = bytes;
          options.progress(done.load(), files.size(), all, bytes_total);
        };
      }
      if (options.wanted_rank) {
        std::optional<int64_t> before = override_of(files[i]);
        if (!before) before = rank_from_file_name(files[i]);
        if (before && !options.wanted_rank(*before)) {
          skipped[i] = 1;
          ++done;
          continue;
        }
      }
      Result<RankTrace> r = read_trace_file(files[i], parse);
      if (r.ok()) {
        RankTrace trace = std::move(r).value();
        std::optional<int64_t> rank = override_of(files[i]);
        if (!rank && trace.metadata.distributed && trace.metadata.distributed->rank)
          rank = trace.metadata.distributed->rank;
        if (!rank) rank = rank_from_file_name(files[i]);
        trace.rank = rank.value_or(-1);  // -1: numbered once every file is read
        rank_of[i] = rank;
        warnings_of[i] = trace.warnings;
        rejected += trace.stats.rejected_events;
        consume(i, std::move(trace));
      } else {
        error_of[i] = r.error().message;
      }
      size_t finished = ++done;
      if (options.progress) {
        std::error_code ec;
        const uintmax_t size = fs::file_size(files[i], ec);
        const uint64_t all = bytes_done += (ec ? reported : size) - reported;
        options.progress(finished, files.size(), all, bytes_total);
      }
    }
  };
  // An exception in any reader or reduction (out of memory) comes back here as an error, on one
  // thread or many alike.
  group.run_on(threads, worker);
  if (Status joined = group.join("reading the traces"); !joined) return joined.error();

  set.rejected_events = rejected.load();
  set.rank_of_file.assign(files.size(), -1);
  std::map<int64_t, std::string> owner;  // rank -> path
  std::vector<size_t> unranked;
  for (size_t i = 0; i < files.size(); ++i) {
    if (skipped[i]) {
      set.rank_of_file[i] = -2;
      continue;
    }
    if (error_of[i]) {
      set.errors.push_back(diagnostic(Severity::kError, std::move(*error_of[i])));
      continue;
    }
    for (Diagnostic& w : warnings_of[i]) set.warnings.push_back(std::move(w));
    if (rank_of[i]) {
      set.rank_of_file[i] = *rank_of[i];
      if (auto [it, inserted] = owner.emplace(*rank_of[i], files[i]); !inserted) {
        return Error{fmt::format("rank {} is claimed by two files: {} and {} (use --rank FILE=N to say which is which)",
                                 *rank_of[i], it->second, files[i])};
      }
    } else {
      unranked.push_back(i);
    }
  }
  // Files with no rank anywhere get the lowest free numbers, in file order.
  int64_t candidate = 0;
  for (size_t i : unranked) {
    while (owner.count(candidate)) ++candidate;
    set.rank_of_file[i] = candidate;
    owner.emplace(candidate, files[i]);
    set.warnings.push_back(Diagnostic{Severity::kNote, files[i],
                                      fmt::format("no rank in the trace or its name; numbered rank {}", candidate)});
  }
  return set;
}

Result<TraceSet> load_traces(const std::vector<std::string>& paths, const LoadOptions& options) {
  std::mutex mutex;
  std::vector<RankTrace> read;
  StreamedOrder order;
  auto streamed = stream_traces(paths, options, [&](size_t i, RankTrace&& trace) {
    // Kept until every file is read: no reserved rows left over, on the thread that read it.
    shrink_event_rows(&trace);
    std::lock_guard<std::mutex> lock(mutex);
    order.add(i);
    read.push_back(std::move(trace));
  });
  if (!streamed) return streamed.error();
  StreamedSet& s = streamed.value();
  TraceSet set;
  set.errors = std::move(s.errors);
  set.warnings = std::move(s.warnings);
  order.apply(
      s, [](int64_t) { return true; }, &read);
  set.ranks = std::move(read);
  return set;
}

}  // namespace scaleprof::trace
