// The event importer: turns the elements of a Kineto trace's traceEvents array (and the members
// around it) into the rows of a RankTrace, one window of JSON text at a time, enforcing the bounds
// analyses rely on. The streaming reader (streaming_parser.h), the window workers of the parallel
// reader (window_workers.h) and the whole-document parse (kineto_reader.cc) all import through it.
#pragma once

#include <simdjson.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>

#include "core/result.h"
#include "trace/event_table.h"
#include "trace/json_value_read.h"

namespace scaleprof::trace {

inline constexpr size_t kMaxWarningsPerFile = 20;

// Bounds the reader enforces on every rank so analyses can add and subtract input values without
// overflowing int64 (issue 7): every time (ts and ts + dur, after baseTimeNanoseconds) lies in
// [kMinTimeNs, kMaxTimeNs], so any two differ by less than 2^63 / 8 * 7; the durations of all rows
// sum to at most kMaxSummedNs (18 years) and the memory events' |Bytes| to at most kMaxSummedBytes.
// An event that would break them is rejected with a warning naming its offset.
// kMinTimeNs, kMaxTimeNs: core/time_bounds.h (shard files are held to the same).
inline constexpr int64_t kMaxSummedNs = int64_t{1} << 59;     // about 18 years
inline constexpr int64_t kMaxSummedBytes = int64_t{1} << 59;  // 512 PiB

// What the importer has added up so far against the bounds above (saved and restored with
// ReadStats when a window cuts an event short).
struct Summed {
  int64_t dur_ns = 0;
  int64_t memory_bytes = 0;
};

// A pid or tid as written: a number, or a string kept as a label.
struct PidOrTid {
  int64_t number = kNone;
  std::string_view label;
};

// Arguments collected from one event's `args` object before its category is known. One instance is
// reused from event to event: reset() restores the few fields every event may set, and the groups
// below only when the last event wrote to them (through write_*()). Building a fresh one for each
// event copied its 368 bytes of defaults (`rep movsq`), 3 % of the reader's time on
// df_index_resolver, where most events carry only ids.
struct EventArgs {
  struct Device {
    int64_t device = -1;
    int64_t bytes = -1;
    double bandwidth = kNaN;
    int64_t grid[3] = {-1, -1, -1};
    int64_t block[3] = {-1, -1, -1};
    int64_t registers = -1;
    int64_t shared_memory = -1;
    double blocks_per_sm = kNaN;
    double warps_per_sm = kNaN;
    double occupancy = kNaN;
  };
  struct Collective {
    std::string_view name, dtype, pg_name, pg_desc, pg_ranks, in_split, out_split;
    int64_t in_nelems = -1, out_nelems = -1, group_size = -1, seq = -1, peer_rank = -1;
  };
  // Memory instants.
  struct Memory {
    int64_t bytes = 0, total_allocated = -1, total_reserved = -1, device_type = -1, device_id = -1, addr = kNone;
  };
  struct Shapes {
    std::string_view input_dims, input_types, concrete_inputs;
  };
  // cuda_sync records of event waits (Event Sync, Stream Wait Event).
  struct SyncWait {
    int64_t record_correlation = kNone, wait_on_stream = kNone;
  };

  int64_t correlation = kNone;
  int64_t external_id = kNone;
  int64_t stream = kNone;
  bool has_device_args = false;
  bool has_collective = false;
  // cuda_profiler_range events (the category read before `args`): every numeric argument is a CUPTI
  // counter, kept here (key as written, value) and nothing else is read from their args.
  bool collect_counters = false;
  std::vector<std::pair<std::string_view, double>> counters;
  Device device;
  Collective collective;
  Memory memory;
  Shapes shapes;
  SyncWait sync_wait;

  Device& write_device() {
    written_ |= kDevice;
    return device;
  }
  Collective& write_collective() {
    written_ |= kCollective;
    return collective;
  }
  Memory& write_memory() {
    written_ |= kMemory;
    return memory;
  }
  Shapes& write_shapes() {
    written_ |= kShapes;
    return shapes;
  }
  SyncWait& write_sync_wait() {
    written_ |= kSyncWait;
    return sync_wait;
  }
  // As if freshly constructed.
  void reset() {
    correlation = kNone;
    external_id = kNone;
    stream = kNone;
    has_device_args = false;
    has_collective = false;
    collect_counters = false;
    counters.clear();
    if (written_ & kDevice) device = Device{};
    if (written_ & kCollective) collective = Collective{};
    if (written_ & kMemory) memory = Memory{};
    if (written_ & kShapes) shapes = Shapes{};
    if (written_ & kSyncWait) sync_wait = SyncWait{};
    written_ = 0;
  }

 private:
  enum Group : uint8_t { kDevice = 1, kCollective = 2, kMemory = 4, kShapes = 8, kSyncWait = 16 };
  uint8_t written_ = 0;
};

struct TrackKey {
  int64_t pid;
  int64_t tid;
  StringId pid_label;
  StringId tid_label;
  bool operator==(const TrackKey&) const = default;
};

struct TrackKeyHash {
  size_t operator()(const TrackKey& k) const {
    uint64_t h = static_cast<uint64_t>(k.pid) * 0x9E3779B97F4A7C15ULL;
    h ^= static_cast<uint64_t>(k.tid) + 0x632BE59BD9B4E019ULL + (h << 6) + (h >> 2);
    h ^= (static_cast<uint64_t>(k.pid_label) << 32) ^ k.tid_label;
    return static_cast<size_t>(h);
  }
};

class EventImporter {
 public:
  EventImporter(std::string_view path, const simdjson::padded_string& text, RankTrace* out)
      : path_(path), base_(text.data()), size_(text.size()), out_(out) {}
  // For the streaming reader: the text arrives window by window through set_window().
  EventImporter(std::string_view path, RankTrace* out) : path_(path), base_(nullptr), size_(0), out_(out) {}

  // Returns an empty string on success, else the error message.
  std::string import(od::document& doc);
  // After import() failed: whether the document was an object without a traceEvents array (no repair
  // of the text can give it one).
  bool found_no_events() const { return no_events_; }

  // Streaming: the text now being parsed is `size` bytes at `base`, which is byte `stream_offset`
  // of the whole document (so messages give offsets into the file's JSON text).
  void set_window(const char* base, size_t size, uint64_t stream_offset) {
    base_ = base;
    size_ = size;
    stream_offset_ = stream_offset;
  }
  // Imports the elements of a window `[e1, e2, ...` whose last element may be cut short by the
  // window's end. Returns the offset (in the window) where the next window must start, or
  // `window_size` when the array ended inside the window; sets *array_end to the offset just
  // after the real closing bracket in that case. Fails only for errors not caused by the cut.
  Result<size_t> import_window(od::document& doc, size_t cut, size_t* array_end);
  // Streaming: one top-level member outside traceEvents, its value given as `[value]` (padded)
  // whose value starts at byte `offset` of the file's JSON text. Returns an error message or "".
  std::string import_envelope_member(std::string_view key, const simdjson::padded_string& bracketed, uint64_t offset,
                                     od::parser& parser);
  void finish_warnings();
  size_t warnings_dropped() const { return warnings_dropped_; }
  // Parallel reading: appends the rows a worker imported from the next window in file order, as if
  // this importer had imported them itself (same string ids, tracks, row numbers and warnings).
  // Returns false, appending nothing, when the rank's summed bounds would be exceeded (the serial
  // reader then decides which event to reject).
  // `rank_ids`: the rank's id of each of part.strings' ids merged before (a reused part keeps its
  // strings); extended to all of them.
  bool append_part(RankTrace& part, std::vector<StringId>* rank_ids, size_t part_dropped_warnings,
                   const Summed& part_summed);
  const Summed& summed() const { return summed_; }

 private:
  size_t offset_of(const char* p) const {
    return stream_offset_ + ((p >= base_ && p <= base_ + size_) ? static_cast<size_t>(p - base_) : size_);
  }
  std::string structural_error(od::document& doc, simdjson::error_code e) const;
  simdjson::error_code import_member(std::string_view k, od::value& v);
  void warn(size_t offset, std::string_view message);
  simdjson::error_code import_events(od::array events);
  simdjson::error_code import_event(od::value& v);
  simdjson::error_code import_args(od::object args, EventArgs* a);
  simdjson::error_code import_distributed_info(od::value& v);
  simdjson::error_code import_device_properties(od::value& v);
  uint32_t track_for(const PidOrTid& pid, const PidOrTid& tid);
  bool read_pid_or_tid(od::value& v, PidOrTid* out);
  // noinline: inlined back into import_event, its appends would be calls again; flatten: every
  // push_back inlined (their growth paths are cold).
  [[gnu::noinline, gnu::flatten]] void add_rows(int64_t ts, int64_t dur, const std::string_view* name,
                                                const std::string_view* cat, bool instant, const PidOrTid& pid,
                                                const PidOrTid& tid);

  // What importing elements adds to besides rows, saved before an element a window may have cut
  // short and restored if it did (rows are added only for elements read whole).
  struct Counted {
    ReadStats stats;
    Summed summed;
    size_t warnings = 0;
    size_t warnings_dropped = 0;
  };
  Counted counted() const { return {out_->stats, summed_, out_->warnings.size(), warnings_dropped_}; }
  void restore(const Counted& c) {
    out_->stats = c.stats;
    summed_ = c.summed;
    out_->warnings.resize(c.warnings);
    warnings_dropped_ = c.warnings_dropped;
  }

  std::string_view path_;
  const char* base_;
  size_t size_;
  uint64_t stream_offset_ = 0;
  RankTrace* out_;
  bool left_early_ = false;  // the last import_event returned before reading the whole event
  bool no_events_ = false;   // import(): the top-level object had no traceEvents
  size_t warnings_dropped_ = 0;
  Summed summed_;
  std::unordered_map<TrackKey, uint32_t, TrackKeyHash> tracks_;
  static constexpr uint32_t kNoTrack = UINT32_MAX;
  int64_t last_pid_ = 0;
  int64_t last_tid_ = 0;
  uint32_t last_track_ = kNoTrack;
  StringId last_cat_id_ = 0;  // the category of the last row (0: none yet)
  Category last_category_ = Category::kNone;
  EventArgs args_;  // the event being imported's, reused (see EventArgs::reset)
};

// Reserves the event columns for a trace of about `json_bytes` of JSON (one row per 150 bytes).
void reserve_event_rows(size_t json_bytes, RankTrace* t);

// Once the first `bytes_read` of about `total_bytes` of JSON gave `t` its rows so far: reserves the
// event columns for the rows the whole file will have at that density, if more than they hold
// (reserve_event_rows guesses 150 bytes a row; a trace of short events has more rows, and every
// column then grew when it filled, a copy of all rows so far, with two threads on the calling
// thread). Early in the file, there are few rows to copy.
void reserve_rows_at_density(RankTrace* t, uint64_t bytes_read, uint64_t total_bytes);

// How far each table of a rank has been asked to be mapped ahead of its rows (rows_to_map), and
// where its first column was then.
struct RowsMapped {
  size_t rows = 0;
  const void* at = nullptr;
};
struct RowsAhead {
  RowsMapped events, device_args, collectives, memory, shapes;
};

// The memory the next `windows` windows like `part` will write into `t`'s tables when merged: for
// each table, its columns' bytes past their rows and within their capacity (reserved, not yet
// written), for `windows` times the rows `part` brought, less what `marks` says was asked for
// already; appended to `out` (see WindowWorkers::prefault). A table is asked again once fewer than
// half of those rows are left.
void rows_to_map(RankTrace* t, const RankTrace& part, size_t windows, RowsAhead* marks,
                 std::vector<std::span<char>>* out);

// Empties `t` for the rows of another window, keeping every column's capacity: the parallel reader
// fills the same few parts again rather than allocating a part's columns for every window. With
// `keep_strings` the string pool stays too: the next window's names are then found, not added, and
// merging maps only the strings the part had not seen (see append_part).
void clear_for_reuse(RankTrace* t, bool keep_strings);

// Gives back the event rows reserved but never used, when there are many (over a million). This
// copies every event column, so it is left to callers that keep traces: a trace reduced and freed
// at once (the engine's streaming) has no use for it, and on one thread it was 4-5 % of `trace
// summary`'s CPU time on a 474 MB trace, serial beside a second thread (38 ms of 0.85 s).
void shrink_event_rows(RankTrace* t);

// Work done once every event is in: absolute times and the rank. The columns keep their reserved
// rows (see shrink_event_rows).
Status finalize_trace(RankTrace* trace);

}  // namespace scaleprof::trace
