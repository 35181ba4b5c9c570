#include "engine/rank_results_store.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <utility>

namespace scaleprof::engine {

namespace {

// Heap bytes beyond the objects themselves.
size_t heap_bytes(const std::string& s) {
  static const size_t kInline = std::string().capacity();  // the small-string buffer
  return s.capacity() > kInline ? s.capacity() + 1 : 0;
}
template <class T>
size_t heap_bytes(const std::vector<T>& v) {
  size_t n = v.capacity() * sizeof(T);
  if constexpr (std::is_same_v<T, analysis::KernelStats> || std::is_same_v<T, analysis::OperatorRow>) {
    for (const T& x : v) n += heap_bytes(x.name);
  } else if constexpr (std::is_same_v<T, analysis::FlopOperator> || std::is_same_v<T, analysis::FlopKernel>) {
    for (const T& x : v) n += heap_bytes(x.name);
  } else if constexpr (std::is_same_v<T, SlowLaunch>) {
    for (const T& x : v) n += heap_bytes(x.launch) + heap_bytes(x.kernel);
  }
  return n;
}

}  // namespace

size_t resident_bytes(const RankResults& r) {
  size_t n = sizeof(RankResults) + heap_bytes(r.inputs.path) + heap_bytes(r.inputs.devices);
  if (r.kernels) {
    n += heap_bytes(r.kernels->partition);
    for (const auto& top : r.kernels->top) n += heap_bytes(top);
  }
  if (r.idle) n += heap_bytes(*r.idle);
  if (r.launch) n += heap_bytes(r.launch->slowest);
  if (r.ops) n += heap_bytes(r.ops->top);
  if (r.steps) n += heap_bytes(r.steps->steps);
  if (r.phases) {
    n += heap_bytes(r.phases->path) + heap_bytes(r.phases->steps);
    for (const auto& s : r.phases->steps) {
      n += heap_bytes(s.regions);
      for (const auto& region : s.regions) n += heap_bytes(region.name);
    }
  }
  if (r.decomposition) n += heap_bytes(r.decomposition->path) + heap_bytes(r.decomposition->steps);
  if (r.memory) {
    n += heap_bytes(r.memory->devices);
    for (const auto& d : r.memory->devices) {
      n += heap_bytes(d.holders) + heap_bytes(d.timeline) + heap_bytes(d.steps);
      for (const auto& h : d.holders) n += heap_bytes(h.name);
    }
  }
  if (r.critical_path) {
    n += heap_bytes(r.critical_path->path) + heap_bytes(r.critical_path->steps);
    for (const auto& s : r.critical_path->steps) {
      n += heap_bytes(s.top);
      for (const auto& item : s.top) n += heap_bytes(item.name);
    }
  }
  if (r.counters) {
    n += heap_bytes(r.counters->queues) + heap_bytes(r.counters->bandwidth);
    for (const auto& b : r.counters->bandwidth) n += heap_bytes(b.name);
  }
  if (r.counter_series) {
    for (const auto* list : {&r.counter_series->queues, &r.counter_series->bandwidth}) {
      n += heap_bytes(*list);
      for (const auto& c : *list) n += heap_bytes(c.points) + heap_bytes(c.call_ns);
    }
    n += heap_bytes(r.counter_series->names) + heap_bytes(r.counter_series->copies) +
         heap_bytes(r.counter_series->bytes);
  }
  if (r.pipeline) n += heap_bytes(r.pipeline->path) + heap_bytes(r.pipeline->steps) + heap_bytes(r.pipeline->peers);
  if (r.flops) {
    n += heap_bytes(r.flops->device) + heap_bytes(r.flops->flops.operators) + heap_bytes(r.flops->flops.kernels) +
         heap_bytes(r.flops->flops.steps);
    if (r.flops->modules) {
      n += heap_bytes(r.flops->modules->modules);
      for (const auto& t : r.flops->modules->modules) n += heap_bytes(t.name) + heap_bytes(t.cls);
    }
  }
  if (r.exposed) {
    n += heap_bytes(r.exposed->path) + heap_bytes(r.exposed->totals) + heap_bytes(r.exposed->layers) +
         heap_bytes(r.exposed->notes);
    for (const auto* rows : {&r.exposed->totals, &r.exposed->layers}) {
      for (const auto& row : *rows) {
        n += heap_bytes(row.group) + heap_bytes(row.group_ranks) + heap_bytes(row.type) + heap_bytes(row.layer);
      }
    }
    for (const auto& note : r.exposed->notes) n += heap_bytes(note);
  }
  return n;
}

std::shared_ptr<RankResultsStore> RankResultsStore::spilling(size_t memory_budget) {
  auto store = std::make_shared<RankResultsStore>();
  store->memory_budget_ = memory_budget;
  return store;
}

RankResultsStore::~RankResultsStore() {
  if (fd_ >= 0) ::close(fd_);
}

bool RankResultsStore::write(const RankResults& results, Entry* entry) {
  const std::string bytes = encode_rank_results(results);
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::pwrite(fd_, bytes.data() + done, bytes.size() - done, static_cast<off_t>(file_size_ + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  entry->offset = file_size_;
  entry->size = bytes.size();
  entry->memory = -1;
  file_size_ += bytes.size();
  return true;
}

void RankResultsStore::spill() {
  memory_budget_ = SIZE_MAX;  // one try: whatever happens, the rest stays where it is
  const char* dir = std::getenv("TMPDIR");
  std::string name = fmt::format("{}/scaleprof-ranks-XXXXXX", dir != nullptr && *dir != '\0' ? dir : "/tmp");
  const int fd = ::mkstemp(name.data());
  if (fd < 0) return;      // no file: in memory, as a store without one
  ::unlink(name.c_str());  // gone when closed, whatever happens to the process
  fd_ = fd;
  for (Entry& e : entries_) {
    if (e.memory < 0) continue;
    RankResults& results = memory_[static_cast<size_t>(e.memory)];
    if (!write(results, &e)) return;  // a full disk: these results and the rest stay in memory
    memory_bytes_ -= resident_bytes(results);
    results = RankResults{};  // free it
  }
  memory_.clear();  // every entry is in the file
  memory_bytes_ = 0;
}

void RankResultsStore::add(RankResults results) {
  Entry entry;
  entry.rank = results.rank;
  // After a failed write (a full disk), this rank and the rest stay in memory.
  if (fd_ >= 0 && memory_.empty() && write(results, &entry)) {
    entries_.push_back(entry);
    return;
  }
  entry.memory = static_cast<int64_t>(memory_.size());
  memory_bytes_ += resident_bytes(results);
  memory_.push_back(std::move(results));
  entries_.push_back(entry);
  if (memory_bytes_ > memory_budget_) spill();
}

void RankResultsStore::set_rank(size_t k, int64_t rank) {
  Entry& e = entries_.at(k);
  e.rank = rank;
  if (e.memory >= 0) memory_[static_cast<size_t>(e.memory)].rank = rank;
}

void RankResultsStore::keep_sorted(const std::function<bool(int64_t)>& keep) {
  std::vector<Entry> kept;
  kept.reserve(entries_.size());
  for (const Entry& e : entries_) {
    if (keep(e.rank)) {
      kept.push_back(e);
    } else if (e.memory >= 0) {
      RankResults& results = memory_[static_cast<size_t>(e.memory)];
      memory_bytes_ -= resident_bytes(results);
      results = RankResults{};  // free it
    }
  }
  std::stable_sort(kept.begin(), kept.end(), [](const Entry& a, const Entry& b) { return a.rank < b.rank; });
  entries_ = std::move(kept);
}

void RankResultsStore::for_each(const std::function<void(const RankResults&)>& visit) const {
  RankResults results;
  std::string bytes;
  for (const Entry& e : entries_) {
    if (e.memory >= 0) {
      visit(memory_[static_cast<size_t>(e.memory)]);  // set_rank keeps its rank current
      continue;
    }
    bytes.resize(e.size);
    size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::pread(fd_, bytes.data() + done, bytes.size() - done, static_cast<off_t>(e.offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    // The file is this process's own, unlinked and written just before: failing to read it back is
    // a failing disk, and no table could be completed without it.
    if (done != bytes.size() || !decode_rank_results(bytes, &results)) {
      fmt::print(stderr, "scaleprof: cannot read back the per-rank results from the temporary file: {}\n",
                 done != bytes.size() ? std::strerror(errno) : "corrupt");
      std::abort();
    }
    results.rank = e.rank;
    visit(results);
  }
}

}  // namespace scaleprof::engine
