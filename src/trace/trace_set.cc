#include "trace/trace_set.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <map>
#include <optional>
#include <thread>

namespace scaleprof::trace {

namespace fs = std::filesystem;

namespace {

bool is_trace_file_name(const std::string& name) {
  auto ends_with = [&](std::string_view suffix) {
    return name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return ends_with(".json") || ends_with(".json.gz");
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
      if (i > start) return std::stoll(name.substr(start, i - start));
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
      return Error{fmt::format("{}: {}", p, other ? ec.message() : std::string("no such file or directory"))};
    }
    if (fs::is_directory(status)) {
      std::vector<std::string> found;
      for (const auto& entry : fs::directory_iterator(p, ec)) {
        if (!is_trace_file_name(entry.path().filename().string())) continue;
        // A trace-named entry whose type cannot be found (a symlink loop, a dangling link) is kept:
        // reading it then fails with its own one-line error while the other files are analysed.
        std::error_code entry_ec;
        if (entry.is_regular_file(entry_ec) || entry_ec) found.push_back(entry.path().string());
      }
      if (ec) return Error{fmt::format("{}: cannot list directory: {}", p, ec.message())};
      if (found.empty()) return Error{fmt::format("{}: no trace files (*.json, *.json.gz) in this directory", p)};
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else {
      files.push_back(p);
    }
  }
  return files;
}

Result<TraceSet> load_traces(const std::vector<std::string>& paths, const LoadOptions& options) {
  auto expanded = expand_trace_paths(paths);
  if (!expanded) return expanded.error();
  const std::vector<std::string>& files = expanded.value();

  std::vector<std::optional<Result<RankTrace>>> results(files.size());
  std::atomic<size_t> next{0};
  std::atomic<size_t> done{0};
  std::atomic<uint64_t> bytes_done{0};
  uint64_t bytes_total = 0;
  for (const std::string& f : files) {
    std::error_code ec;
    const uintmax_t size = fs::file_size(f, ec);
    if (!ec) bytes_total += size;
  }
  unsigned threads = options.threads ? options.threads : std::max(1U, std::thread::hardware_concurrency());
  // Threads are divided, not multiplied: fewer files than threads give each file several threads
  // to parse its windows with (one file alone gets them all).
  const unsigned threads_per_file = std::max(1U, threads / static_cast<unsigned>(std::max<size_t>(1, files.size())));
  threads = std::min<unsigned>(threads, static_cast<unsigned>(files.size()));
  auto worker = [&] {
    for (size_t i = next++; i < files.size(); i = next++) {
      ParseOptions parse = options.parse;
      parse.threads = std::max(parse.threads, threads_per_file);
      uint64_t reported = 0;  // this file's bytes already added to bytes_done
      if (options.progress) {
        parse.on_bytes_read = [&](uint64_t bytes) {
          const uint64_t all = bytes_done += bytes - reported;
          reported = bytes;
          options.progress(done.load(), files.size(), all, bytes_total);
        };
      }
      results[i].emplace(read_kineto_trace(files[i], parse));
      size_t finished = ++done;
      if (options.progress) {
        std::error_code ec;
        const uintmax_t size = fs::file_size(files[i], ec);
        const uint64_t all = bytes_done += (ec ? reported : size) - reported;
        options.progress(finished, files.size(), all, bytes_total);
      }
    }
  };
  if (threads <= 1) {
    worker();
  } else {
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t) pool.emplace_back(worker);
    for (auto& t : pool) t.join();
  }

  TraceSet set;
  std::map<int64_t, std::string> owner;  // rank -> path
  std::vector<size_t> unranked;
  std::vector<RankTrace> loaded;
  for (size_t i = 0; i < files.size(); ++i) {
    Result<RankTrace>& r = *results[i];
    if (!r.ok()) {
      set.errors.push_back(r.error().message);
      continue;
    }
    RankTrace trace = std::move(r).value();
    std::optional<int64_t> rank;
    for (const auto& [path, value] : options.rank_overrides) {
      if (path == files[i] || fs::path(path).filename() == fs::path(files[i]).filename()) rank = value;
    }
    if (!rank && trace.metadata.distributed && trace.metadata.distributed->rank)
      rank = trace.metadata.distributed->rank;
    if (!rank) rank = rank_from_file_name(files[i]);
    for (const std::string& w : trace.warnings) set.warnings.push_back(w);
    if (rank) {
      trace.rank = *rank;
      if (auto [it, inserted] = owner.emplace(*rank, files[i]); !inserted) {
        return Error{fmt::format("rank {} is claimed by two files: {} and {} (use --rank FILE=N to say which is which)",
                                 *rank, it->second, files[i])};
      }
    } else {
      unranked.push_back(loaded.size());
    }
    loaded.push_back(std::move(trace));
  }
  // Files with no rank anywhere get the lowest free numbers, in file order.
  int64_t candidate = 0;
  for (size_t idx : unranked) {
    while (owner.count(candidate)) ++candidate;
    loaded[idx].rank = candidate;
    owner.emplace(candidate, loaded[idx].path);
    set.warnings.push_back(
        fmt::format("{}: no rank in the trace or its name; numbered rank {}", loaded[idx].path, candidate));
  }
  std::sort(loaded.begin(), loaded.end(), [](const RankTrace& a, const RankTrace& b) { return a.rank < b.rank; });
  set.ranks = std::move(loaded);
  return set;
}

}  // namespace scaleprof::trace
