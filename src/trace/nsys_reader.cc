#include "trace/nsys_reader.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/time_bounds.h"
#include "trace/event_importer.h"

namespace scaleprof::trace {

namespace {

// nsys' globalTid: (vm id << 56) | (pid << 24) | tid.
int64_t pid_of(int64_t global_tid) {
  return (global_tid >> 24) & 0xFFFFFF;
}
int64_t tid_of(int64_t global_tid) {
  return global_tid & 0xFFFFFF;
}

// ENUM_CUDA_MEMCPY_OPER, in Kineto's short words.
std::string_view copy_kind_name(int64_t kind) {
  static constexpr std::array<std::string_view, 14> kNames = {"Unknown", "HtoD", "DtoH", "HtoA", "AtoH",
                                                              "AtoA",    "AtoD", "DtoA", "DtoD", "HtoH",
                                                              "PtoP",    "HtoD", "DtoH", "DtoD"};
  return kind >= 0 && kind < static_cast<int64_t>(kNames.size()) ? kNames[static_cast<size_t>(kind)] : "Unknown";
}

// ENUM_CUDA_MEM_KIND as nsys numbers it (0 is Pageable there, unlike CUPTI's own enum).
std::string_view memory_kind_name(int64_t kind) {
  static constexpr std::array<std::string_view, 8> kNames = {"Pageable", "Pinned",        "Device",         "Array",
                                                             "Managed",  "Device Static", "Managed Static", "Unknown"};
  return kind >= 0 && kind < static_cast<int64_t>(kNames.size()) ? kNames[static_cast<size_t>(kind)] : "Unknown";
}

// ENUM_CUPTI_SYNC_TYPE, as Kineto names the cuda_sync events.
std::string_view sync_name(int64_t type) {
  switch (type) {
    case 1:
      return "Event Sync";
    case 2:
      return "Stream Wait Event";
    case 3:
      return "Stream Sync";
    case 4:
      return "Context Sync";
    default:
      return "Unknown Sync";
  }
}

// cudaLaunchKernel_v7000 -> cudaLaunchKernel, cuGetProcAddress_v2 -> cuGetProcAddress.
std::string_view strip_version(std::string_view name) {
  const size_t v = name.rfind("_v");
  if (v == std::string_view::npos || v + 2 >= name.size()) return name;
  for (size_t i = v + 2; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return name;
  }
  return name.substr(0, v);
}

// A small id that fits the sparse tables' int32 columns, else -1.
int32_t small_id(int64_t v) {
  return v >= 0 && v <= std::numeric_limits<int32_t>::max() ? static_cast<int32_t>(v) : -1;
}

// One table read: its name, the columns it must have, and the query over them.
struct TableQuery {
  const char* table;
  std::vector<const char*> columns;
  const char* sql;
};

class NsysReader {
 public:
  NsysReader(SqliteFile* file, RankTrace* out) : file_(file), t_(*out) {}

  Status read() {
    if (Status s = require_string_ids(); !s) return s;
    if (Status s = read_string_ids(); !s) return s;
    read_session_start();
    read_devices();
    if (Status s = read_nvtx(); !s) return s;
    if (Status s = read_runtime(); !s) return s;
    if (Status s = read_kernels(); !s) return s;
    if (Status s = read_memcpy(); !s) return s;
    if (Status s = read_memset(); !s) return s;
    if (Status s = read_sync(); !s) return s;
    if (tables_read_ == 0) {
      t_.warnings.push_back(Diagnostic{Severity::kWarning, std::string(path()),
                                       "no CUDA or NVTX table in this nsys export; nothing to analyse"});
    }
    if (processes_.size() > 1) {
      t_.warnings.push_back(Diagnostic{
          Severity::kWarning, std::string(path()),
          fmt::format("device work of {} processes in one file, read as one rank (export one file per rank to tell "
                      "them apart)",
                      processes_.size())});
    }
    for (const auto& [key, count] : problems_) {
      if (t_.warnings.size() >= kMaxWarningsPerFile) break;
      t_.warnings.push_back(Diagnostic{Severity::kWarning, std::string(path()),
                                       fmt::format("table {}: {} row(s) {}", key.first, count, key.second)});
    }
    return Ok{};
  }

 private:
  const std::string& path() const { return file_->path(); }

  Error failure(std::string_view table) const {
    if (file_->expired()) {
      const auto limit = file_->file_deadline().value_or(file_->deadline());
      return Error{fmt::format("{}: reading the file took longer than {} s; stopped at table {} {}", path(),
                               std::chrono::duration_cast<std::chrono::seconds>(limit).count(), table, kNsysExportHint),
                   ErrorKind::kTooLarge};
    }
    return Error{fmt::format("{}: cannot read table {}: {} {}", path(), table, file_->message(), kNsysExportHint)};
  }

  // Whether `q.table` is there to read: absent is fine (nsys creates tables only for what it
  // recorded); present but not a real table with the columns read fails the file.
  Result<bool> usable(const TableQuery& q) {
    std::string type;
    switch (file_->check_table(q.table, &type)) {
      case SqliteTableCheck::kMissing:
        return false;
      case SqliteTableCheck::kFailed:
        return failure(q.table);
      case SqliteTableCheck::kVirtual:
        return Error{fmt::format("{}: {} is a virtual table, not a table {}", path(), q.table, kNsysExportHint)};
      case SqliteTableCheck::kView:
      case SqliteTableCheck::kOther:
        return Error{fmt::format("{}: {} is a {}, not a table {}", path(), q.table,
                                 type == "view" ? "view" : "schema object", kNsysExportHint)};
      case SqliteTableCheck::kTable:
        break;
    }
    const std::set<std::string> columns = file_->columns(q.table);
    if (columns.empty()) return failure(q.table);
    for (const char* c : q.columns) {
      if (columns.count(c) == 0) {
        return Error{fmt::format("{}: table {} has no column {} {}", path(), q.table, c, kNsysExportHint)};
      }
    }
    ++tables_read_;
    return true;
  }

  Status require_string_ids() {
    const TableQuery q{"StringIds", {"id", "value"}, nullptr};
    auto ok = usable(q);
    if (!ok) return ok.error();
    if (!ok.value()) {
      return Error{
          fmt::format("{}: no table StringIds: not an Nsight Systems export (nsys export --type sqlite)", path())};
    }
    --tables_read_;  // not an activity table
    return Ok{};
  }

  // StringIds, read once into a table sorted by id: names are looked up here, never joined in SQL.
  // A join trusts the file to keep ids unique (300 rows sharing an id made 300 kernels 90,000) and
  // lets its statistics (a forged sqlite_stat1) choose a plan that scans StringIds once per row.
  // Duplicate ids are refused: which of two names an id means cannot be known.
  Status read_string_ids() {
    SqliteStatement s(*file_, "SELECT id, value FROM StringIds NOT INDEXED");
    if (!s.ok()) return failure("StringIds");
    int rc = 0;
    while ((rc = s.step()) == SQLITE_ROW) {
      if (s.type(0) != SQLITE_INTEGER) {
        problem("StringIds", "without an integer id skipped");
        continue;
      }
      if (s.type(1) != SQLITE_TEXT) {
        problem("StringIds", "without a text value skipped");
        continue;
      }
      if (strings_.size() >= kMaxRows) {
        return Error{fmt::format("{}: table StringIds: more than {} strings; not read", path(), kMaxRows),
                     ErrorKind::kTooLarge};
      }
      const std::string_view value = s.view(1);
      strings_.push_back({s.integer(0), string_bytes_.size(), value.size()});
      string_bytes_ += value;
    }
    if (rc != SQLITE_DONE) return failure("StringIds");
    std::sort(strings_.begin(), strings_.end(), [](const StringEntry& a, const StringEntry& b) { return a.id < b.id; });
    const auto twice = std::adjacent_find(strings_.begin(), strings_.end(),
                                          [](const StringEntry& a, const StringEntry& b) { return a.id == b.id; });
    if (twice != strings_.end()) {
      return Error{fmt::format("{}: table StringIds: id {} appears more than once; an id must name one string {}",
                               path(), twice->id, kNsysExportHint)};
    }
    return Ok{};
  }

  // The string of StringIds id `id`; nullopt when no row has it.
  std::optional<std::string_view> string_of(int64_t id) const {
    const auto it = std::lower_bound(strings_.begin(), strings_.end(), id,
                                     [](const StringEntry& e, int64_t v) { return e.id < v; });
    if (it == strings_.end() || it->id != id) return std::nullopt;
    return std::string_view(string_bytes_).substr(it->offset, it->size);
  }

  void read_session_start() {
    const TableQuery q{"TARGET_INFO_SESSION_START_TIME", {"utcEpochNs"}, nullptr};
    auto ok = usable(q);
    if (!ok || !ok.value()) return;
    --tables_read_;
    SqliteStatement s(*file_, "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME NOT INDEXED LIMIT 1");
    if (!s.ok() || s.step() != SQLITE_ROW || s.type(0) != SQLITE_INTEGER) return;
    const int64_t base = s.integer(0);
    if (base < 0 || base > kMaxTimeNs / 2) {
      problem("TARGET_INFO_SESSION_START_TIME", "with a session start out of range; times kept relative to it");
      return;
    }
    base_ = base;
    t_.metadata.base_time_ns = base;
  }

  void read_devices() {
    const TableQuery q{
        "TARGET_INFO_GPU", {"id", "name", "totalMemory", "smCount", "computeMajor", "computeMinor"}, nullptr};
    auto ok = usable(q);
    if (!ok || !ok.value()) return;
    --tables_read_;
    SqliteStatement s(*file_,
                      "SELECT id, name, totalMemory, smCount, computeMajor, computeMinor FROM TARGET_INFO_GPU NOT "
                      "INDEXED LIMIT 1024");
    if (!s.ok()) return;
    auto number = [&](int c) { return s.type(c) == SQLITE_INTEGER ? s.integer(c) : int64_t{-1}; };
    while (s.step() == SQLITE_ROW) {
      DeviceProperties d;
      d.id = number(0);
      d.name = s.bytes(1) <= 256 ? s.text(1) : std::string();
      d.total_global_mem = number(2);
      d.num_sms = number(3);
      d.compute_major = number(4);
      d.compute_minor = number(5);
      t_.metadata.devices.push_back(std::move(d));
    }
  }

  void problem(const char* table, std::string what) { ++problems_[{table, std::move(what)}]; }

  // ts and dur of a row from its start and end columns, or nullptr-free failure: the row is
  // skipped and counted.
  bool span(const SqliteStatement& s, int start_col, const char* table, int64_t* ts, int64_t* dur) {
    ++t_.stats.events_total;
    const char* why = nullptr;
    if (s.type(start_col) != SQLITE_INTEGER || s.type(start_col + 1) != SQLITE_INTEGER) {
      why = "without integer start and end skipped";
    } else {
      const int64_t start = s.integer(start_col);
      const int64_t end = s.integer(start_col + 1);
      int64_t a = 0;
      int64_t b = 0;
      if (end < start) {
        why = "ending before they start skipped";
      } else if (__builtin_add_overflow(start, base_, &a) || __builtin_add_overflow(end, base_, &b) ||
                 !time_in_bounds(a) || !time_in_bounds(b)) {
        why = "with times out of range skipped";
      } else if (b - a > kMaxSummedNs - summed_ns_) {
        why = "past the durations a rank may sum to skipped";
      } else {
        *ts = a;
        *dur = b - a;
        summed_ns_ += b - a;
      }
    }
    if (why != nullptr) {
      ++t_.stats.rejected_events;
      problem(table, why);
      return false;
    }
    return true;
  }

  // The StringIds string of the id in column `id_col`, or a placeholder naming the id when it points
  // nowhere.
  std::string_view name(const SqliteStatement& s, int id_col, const char* table) {
    const bool integer = s.type(id_col) == SQLITE_INTEGER;
    if (integer) {
      if (auto found = string_of(s.integer(id_col))) return *found;
    }
    problem(table, "with a name id that points nowhere kept as \"nsys string <id>\"");
    placeholder_ = fmt::format("nsys string {}", integer ? s.integer(id_col) : -1);
    return placeholder_;
  }

  static int64_t id_or_none(const SqliteStatement& s, int c) {
    return s.type(c) == SQLITE_INTEGER && s.integer(c) >= 0 ? s.integer(c) : kNone;
  }

  uint32_t track(int64_t pid, int64_t tid) {
    auto [it, inserted] = tracks_.try_emplace({pid, tid}, static_cast<uint32_t>(t_.tracks.size()));
    if (inserted) {
      t_.tracks.pid.push_back(pid);
      t_.tracks.tid.push_back(tid);
      t_.tracks.pid_label.push_back(0);
      t_.tracks.tid_label.push_back(0);
    }
    return it->second;
  }

  StringId category(Category c) {
    auto& id = category_ids_[static_cast<size_t>(c)];
    if (id == 0) id = t_.strings.intern(category_name(c));
    return id;
  }

  // Appends one complete event; returns its row.
  uint32_t add(int64_t ts, int64_t dur, std::string_view name, Category cat, uint32_t track, int64_t correlation,
               int64_t stream) {
    EventTable& ev = t_.events;
    const auto row = static_cast<uint32_t>(ev.size());
    ev.ts.push_back(ts);
    ev.dur.push_back(dur);
    ev.name.push_back(t_.strings.intern(name));
    ev.cat_name.push_back(category(cat));
    ev.cat.push_back(cat);
    ev.phase.push_back(Phase::kComplete);
    ev.track.push_back(track);
    ev.correlation.push_back(correlation);
    ev.external_id.push_back(kNone);
    ev.stream.push_back(stream);
    ev.file_index.push_back(static_cast<uint32_t>(t_.stats.events_total - 1));
    ++t_.stats.events_kept;
    return row;
  }

  struct Launch {
    int64_t grid[3] = {-1, -1, -1};
    int64_t block[3] = {-1, -1, -1};
    int64_t registers = -1;
    int64_t shared_memory = -1;
  };

  void add_device_args(uint32_t row, int64_t device, int64_t bytes, int64_t dur, const Launch& launch) {
    DeviceArgsTable& d = t_.device_args;
    d.event.push_back(row);
    d.device.push_back(small_id(device));
    d.bytes.push_back(bytes);
    // Kineto's "memory bandwidth (GB/s)": bytes per nanosecond.
    d.bandwidth_gbps.push_back(bytes >= 0 && dur > 0 ? static_cast<double>(bytes) / static_cast<double>(dur)
                                                     : std::numeric_limits<double>::quiet_NaN());
    d.grid_x.push_back(small_id(launch.grid[0]));
    d.grid_y.push_back(small_id(launch.grid[1]));
    d.grid_z.push_back(small_id(launch.grid[2]));
    d.block_x.push_back(small_id(launch.block[0]));
    d.block_y.push_back(small_id(launch.block[1]));
    d.block_z.push_back(small_id(launch.block[2]));
    d.registers_per_thread.push_back(small_id(launch.registers));
    d.shared_memory.push_back(launch.shared_memory);
    d.blocks_per_sm.push_back(std::numeric_limits<float>::quiet_NaN());
    d.warps_per_sm.push_back(std::numeric_limits<float>::quiet_NaN());
    d.occupancy_pct.push_back(std::numeric_limits<float>::quiet_NaN());
  }

  // Runs `q` if its table is there, calling `row(s)` for each row.
  template <class Row>
  Status each_row(const TableQuery& q, Row&& row) {
    auto ok = usable(q);
    if (!ok) return ok.error();
    if (!ok.value()) return Ok{};
    SqliteStatement s(*file_, q.sql);
    if (!s.ok()) return failure(q.table);
    int rc = 0;
    while ((rc = s.step()) == SQLITE_ROW) {
      if (t_.events.size() >= kMaxRows) {
        return Error{fmt::format("{}: table {}: more than {} events; not read", path(), q.table, kMaxRows),
                     ErrorKind::kTooLarge};
      }
      row(s);
    }
    if (rc != SQLITE_DONE) return failure(q.table);
    return Ok{};
  }

  Status read_nvtx() {
    // 59: push/pop range, 60: start/end range (ENUM_NSYS_EVENT_TYPE); marks (34) have no duration.
    const TableQuery q{"NVTX_EVENTS",
                       {"start", "end", "eventType", "text", "textId", "globalTid"},
                       "SELECT start, end, eventType, text, textId, globalTid FROM NVTX_EVENTS NOT INDEXED"};
    return each_row(q, [&](const SqliteStatement& s) {
      const int64_t type = s.type(2) == SQLITE_INTEGER ? s.integer(2) : -1;
      if (type != 59 && type != 60) {
        ++t_.stats.other_events;
        return;
      }
      int64_t ts = 0;
      int64_t dur = 0;
      if (!span(s, 0, q.table, &ts, &dur)) return;
      std::string_view text;
      if (s.type(3) == SQLITE_TEXT) {
        text = s.view(3);
      } else if (s.type(4) == SQLITE_INTEGER) {
        text = name(s, 4, q.table);
      } else {
        text = "(unnamed NVTX range)";
      }
      const int64_t tid = s.type(5) == SQLITE_INTEGER ? s.integer(5) : 0;
      add(ts, dur, text, Category::kUserAnnotation, track(pid_of(tid), tid_of(tid)), kNone, kNone);
    });
  }

  Status read_runtime() {
    const TableQuery q{"CUPTI_ACTIVITY_KIND_RUNTIME",
                       {"start", "end", "globalTid", "correlationId", "nameId"},
                       "SELECT start, end, globalTid, correlationId, nameId FROM CUPTI_ACTIVITY_KIND_RUNTIME "
                       "NOT INDEXED"};
    return each_row(q, [&](const SqliteStatement& s) {
      int64_t ts = 0;
      int64_t dur = 0;
      if (!span(s, 0, q.table, &ts, &dur)) return;
      const std::string_view n = strip_version(name(s, 4, q.table));
      // The driver API (cu*) and the runtime (cuda*) share this table; Kineto tells them apart.
      const bool driver = n.starts_with("cu") && !n.starts_with("cuda");
      const int64_t tid = s.type(2) == SQLITE_INTEGER ? s.integer(2) : 0;
      add(ts, dur, n, driver ? Category::kCudaDriver : Category::kCudaRuntime, track(pid_of(tid), tid_of(tid)),
          id_or_none(s, 3), kNone);
    });
  }

  Status read_kernels() {
    const TableQuery q{
        "CUPTI_ACTIVITY_KIND_KERNEL",
        {"start", "end", "deviceId", "streamId", "correlationId", "globalPid", "demangledName", "gridX", "gridY",
         "gridZ", "blockX", "blockY", "blockZ", "registersPerThread", "staticSharedMemory", "dynamicSharedMemory"},
        "SELECT start, end, deviceId, streamId, correlationId, globalPid, demangledName, gridX, gridY, gridZ, "
        "blockX, blockY, blockZ, registersPerThread, staticSharedMemory, dynamicSharedMemory "
        "FROM CUPTI_ACTIVITY_KIND_KERNEL NOT INDEXED"};
    return each_row(q, [&](const SqliteStatement& s) {
      int64_t ts = 0;
      int64_t dur = 0;
      if (!span(s, 0, q.table, &ts, &dur)) return;
      Launch launch;
      auto value = [&](int c) { return s.type(c) == SQLITE_INTEGER ? s.integer(c) : int64_t{-1}; };
      for (int i = 0; i < 3; ++i) {
        launch.grid[i] = value(7 + i);
        launch.block[i] = value(10 + i);
      }
      launch.registers = value(13);
      const int64_t st = value(14);
      const int64_t dyn = value(15);
      launch.shared_memory =
          st >= 0 && dyn >= 0 && st <= (int64_t{1} << 40) && dyn <= (int64_t{1} << 40) ? st + dyn : -1;
      device_row(s, q.table, ts, dur, name(s, 6, q.table), Category::kKernel, -1, launch);
    });
  }

  // A kernel, copy, set or sync row: columns 2-5 are deviceId, streamId, correlationId, globalPid.
  void device_row(const SqliteStatement& s, const char* table, int64_t ts, int64_t dur, std::string_view n,
                  Category cat, int64_t bytes, const Launch& launch) {
    (void)table;
    const int64_t device = id_or_none(s, 2);
    const int64_t stream = id_or_none(s, 3);
    if (s.type(5) == SQLITE_INTEGER && cat != Category::kCudaSync) processes_.insert(s.integer(5));
    const uint32_t row = add(ts, dur, n, cat, track(device, stream), id_or_none(s, 4), stream);
    if (cat != Category::kCudaSync) add_device_args(row, device, bytes, dur, launch);
  }

  Status read_memcpy() {
    const TableQuery q{"CUPTI_ACTIVITY_KIND_MEMCPY",
                       {"start", "end", "deviceId", "streamId", "correlationId", "globalPid", "bytes", "copyKind",
                        "srcKind", "dstKind"},
                       "SELECT start, end, deviceId, streamId, correlationId, globalPid, bytes, copyKind, srcKind, "
                       "dstKind FROM CUPTI_ACTIVITY_KIND_MEMCPY NOT INDEXED"};
    return each_row(q, [&](const SqliteStatement& s) {
      int64_t ts = 0;
      int64_t dur = 0;
      if (!span(s, 0, q.table, &ts, &dur)) return;
      auto value = [&](int c) { return s.type(c) == SQLITE_INTEGER ? s.integer(c) : int64_t{-1}; };
      const std::string n = fmt::format("Memcpy {} ({} -> {})", copy_kind_name(value(7)), memory_kind_name(value(8)),
                                        memory_kind_name(value(9)));
      const int64_t bytes = value(6) >= 0 ? value(6) : -1;
      device_row(s, q.table, ts, dur, n, Category::kGpuMemcpy, bytes, Launch{});
    });
  }

  Status read_memset() {
    const TableQuery q{"CUPTI_ACTIVITY_KIND_MEMSET",
                       {"start", "end", "deviceId", "streamId", "correlationId", "globalPid", "bytes", "memKind"},
                       "SELECT start, end, deviceId, streamId, correlationId, globalPid, bytes, memKind "
                       "FROM CUPTI_ACTIVITY_KIND_MEMSET NOT INDEXED"};
    return each_row(q, [&](const SqliteStatement& s) {
      int64_t ts = 0;
      int64_t dur = 0;
      if (!span(s, 0, q.table, &ts, &dur)) return;
      const int64_t kind = s.type(7) == SQLITE_INTEGER ? s.integer(7) : -1;
      const int64_t bytes = s.type(6) == SQLITE_INTEGER && s.integer(6) >= 0 ? s.integer(6) : -1;
      device_row(s, q.table, ts, dur, fmt::format("Memset ({})", memory_kind_name(kind)), Category::kGpuMemset, bytes,
                 Launch{});
    });
  }

  Status read_sync() {
    const TableQuery q{"CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
                       {"start", "end", "deviceId", "streamId", "correlationId", "globalPid", "syncType"},
                       "SELECT start, end, deviceId, streamId, correlationId, globalPid, syncType "
                       "FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION NOT INDEXED"};
    return each_row(q, [&](const SqliteStatement& s) {
      int64_t ts = 0;
      int64_t dur = 0;
      if (!span(s, 0, q.table, &ts, &dur)) return;
      const int64_t type = s.type(6) == SQLITE_INTEGER ? s.integer(6) : 0;
      device_row(s, q.table, ts, dur, sync_name(type), Category::kCudaSync, -1, Launch{});
    });
  }

  // The event table's row numbers are 32-bit.
  static constexpr size_t kMaxRows = size_t{1} << 31;

  struct PairHash {
    size_t operator()(const std::pair<int64_t, int64_t>& p) const {
      return std::hash<int64_t>()(p.first) * 0x9E3779B97F4A7C15ULL ^ std::hash<int64_t>()(p.second);
    }
  };

  // One StringIds row: its id and where its text lies in string_bytes_.
  struct StringEntry {
    int64_t id;
    size_t offset;
    size_t size;
  };

  SqliteFile* file_;
  RankTrace& t_;
  std::vector<StringEntry> strings_;  // sorted by id once read
  std::string string_bytes_;
  int64_t base_ = 0;
  int64_t summed_ns_ = 0;
  int tables_read_ = 0;
  std::string placeholder_;
  std::set<int64_t> processes_;
  std::array<StringId, kCategoryCount> category_ids_{};
  std::unordered_map<std::pair<int64_t, int64_t>, uint32_t, PairHash> tracks_;
  std::map<std::pair<std::string, std::string>, uint64_t> problems_;
};

}  // namespace

Result<RankTrace> read_nsys_sqlite(const std::string& path, const NsysReadOptions& options) {
  // One deadline for the whole file: every query of the reader together, not each one.
  SqliteLimits limits = options.limits;
  if (!limits.file_deadline) limits.file_deadline = limits.query_deadline;
  auto file = SqliteFile::open(path, limits);
  if (!file) return file.error();
  RankTrace trace;
  trace.path = path;
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (!ec) trace.stats.json_bytes = size;  // the input's bytes, shown as the summary's input size
  NsysReader reader(file.value().get(), &trace);
  if (Status s = reader.read(); !s) return s.error();
  return trace;
}

}  // namespace scaleprof::trace
