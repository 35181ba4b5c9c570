#include "trace/kineto_reader.h"

#include <fmt/format.h>

#include <bit>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <future>
#include <limits>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <utility>

#include "core/time_bounds.h"
#include "trace/byte_stream.h"
#include "trace/envelope_scanner.h"
#include "trace/json_repair.h"
#include "trace/number_parse.h"
#include "trace/window_cut.h"

namespace scaleprof::trace {

namespace {

namespace od = simdjson::ondemand;

constexpr size_t kMaxWarningsPerFile = 20;

// Bounds the reader enforces on every rank so analyses can add and subtract input values without
// overflowing int64 (issue 7): every time (ts and ts + dur, after baseTimeNanoseconds) lies in
// [kMinTimeNs, kMaxTimeNs], so any two differ by less than 2^63 / 8 * 7; the durations of all rows
// sum to at most kMaxSummedNs (18 years) and the memory events' |Bytes| to at most kMaxSummedBytes.
// An event that would break them is rejected with a warning naming its offset.
// kMinTimeNs, kMaxTimeNs: core/time_bounds.h (shard files are held to the same).
constexpr int64_t kMaxSummedNs = int64_t{1} << 59;     // about 18 years
constexpr int64_t kMaxSummedBytes = int64_t{1} << 59;  // 512 PiB

// What the importer has added up so far against the bounds above (saved and restored with
// ReadStats when a window cuts an event short).
struct Summed {
  int64_t dur_ns = 0;
  int64_t memory_bytes = 0;
};
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

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
    int64_t in_nelems = -1, out_nelems = -1, group_size = -1, seq = -1;
  };
  // Memory instants.
  struct Memory {
    int64_t bytes = 0, total_allocated = -1, total_reserved = -1, device_type = -1, device_id = -1;
  };
  struct Shapes {
    std::string_view input_dims, input_types;
  };

  int64_t correlation = kNone;
  int64_t external_id = kNone;
  int64_t stream = kNone;
  bool has_device_args = false;
  bool has_collective = false;
  Device device;
  Collective collective;
  Memory memory;
  Shapes shapes;

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
  // As if freshly constructed.
  void reset() {
    correlation = kNone;
    external_id = kNone;
    stream = kNone;
    has_device_args = false;
    has_collective = false;
    if (written_ & kDevice) device = Device{};
    if (written_ & kCollective) collective = Collective{};
    if (written_ & kMemory) memory = Memory{};
    if (written_ & kShapes) shapes = Shapes{};
    written_ = 0;
  }

 private:
  enum Group : uint8_t { kDevice = 1, kCollective = 2, kMemory = 4, kShapes = 8 };
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

std::string_view trim_token(std::string_view t) {
  while (!t.empty() && (t.back() == ' ' || t.back() == '\n' || t.back() == '\r' || t.back() == '\t')) {
    t.remove_suffix(1);
  }
  return t;
}

// The raw text of a field's key (Kineto keys have no escapes; an escaped quote still ends correctly).
std::string_view raw_key(od::field& field) {
  const char* p = field.key().raw();
  size_t n = 0;
  while (p[n] != '"') n += (p[n] == '\\' && p[n + 1] != '\0') ? 2 : 1;
  return {p, n};
}

// True if the raw key text at `raw` (just after the opening quote) is exactly `expected`.
template <size_t N>
bool key_is(const char* raw, const char (&expected)[N]) {
  return std::memcmp(raw, expected, N - 1) == 0 && raw[N - 1] == '"';
}

bool read_string(od::value& v, std::string_view* out);

// Reads a value that should hold an integer; a numeric string or an integral decimal is accepted.
bool read_int(od::value& v, int64_t* out) {
  // Nearly every integer is a plain number: try that first, without asking for the type. A failed
  // get_int64() leaves the value unread (On-Demand advances only on success), so the slow path
  // below sees it as before.
  if (!v.get_int64().get(*out)) return true;
  od::json_type type;
  if (v.type().get(type)) return false;
  if (type == od::json_type::number) {
    // simdjson's integer parser is the fast path; decimals like "7.0" fall back to the exact parser.
    if (!v.get_int64().get(*out)) return true;
    return parse_int64(trim_token(v.raw_json_token()), out) == NumberParse::kOk;
  }
  if (type == od::json_type::string) {
    std::string_view s;
    if (!read_string(v, &s)) return false;
    return parse_int64(s, out) == NumberParse::kOk;
  }
  return false;
}

// Reads a float; strings such as "N/A" or "inf" give NaN or infinity instead of failing.
bool read_double(od::value& v, double* out) {
  od::json_type type;
  if (v.type().get(type)) return false;
  if (type == od::json_type::number) return !v.get_double().get(*out);
  if (type == od::json_type::string) {
    std::string_view s;
    if (!read_string(v, &s)) return false;
    if (s == "inf" || s == "Infinity") {
      *out = std::numeric_limits<double>::infinity();
    } else {
      *out = kNaN;
    }
    return true;
  }
  return false;
}

// A string without escapes (nearly every string in a Kineto trace) is returned as a view of the JSON
// text itself, valid while its window is: simdjson would otherwise copy it byte by byte into its
// string buffer (the header-inlined On-Demand code is built for the generic target, see
// docs/architecture.md), and that buffer's pages count in the peak memory. Stage 1 has already
// checked the text (UTF-8, no raw control characters), so the view holds exactly what get_string()
// would return. A string with a backslash is unescaped by simdjson as before.
bool read_string(od::value& v, std::string_view* out) {
  od::json_type type;
  if (v.type().get(type) || type != od::json_type::string) return false;
  // The token runs from the opening quote to the next structural character: the string, then any
  // white space before the ',' or '}'.
  const std::string_view token = trim_token(v.raw_json_token());
  if (token.size() >= 2 && token.back() == '"' && std::memchr(token.data() + 1, '\\', token.size() - 2) == nullptr) {
    *out = token.substr(1, token.size() - 2);
    return true;
  }
  return !v.get_string().get(*out);
}

// Raw JSON text of an array/object/scalar value (for shapes and process-group ranks).
bool read_raw(od::value& v, std::string_view* out) {
  od::json_type type;
  if (v.type().get(type)) return false;
  if (type == od::json_type::string) return read_string(v, out);
  return !simdjson::to_json_string(v).get(*out);
}

// A ts or dur: the number's text, parsed exactly later (a double would lose digits), or a quoted
// number as some exporters write; *bad when it is neither.
simdjson::error_code read_time_token(od::value& v, std::string_view* token, bool* bad) {
  od::json_type type;
  if (auto e = v.type().get(type)) return e;
  bool is_number = type == od::json_type::number;
  *token = {};
  if (is_number) {
    *token = trim_token(v.raw_json_token());
  } else if (type == od::json_type::string) {
    is_number = read_string(v, token);
  }
  *bad = !is_number;
  return simdjson::SUCCESS;
}

bool read_triple(od::value& v, int64_t out[3]) {
  od::array arr;
  if (v.get_array().get(arr)) return false;
  int k = 0;
  for (auto element : arr) {
    od::value item;
    if (std::move(element).get(item)) return false;
    if (k < 3 && !read_int(item, &out[k])) return false;
    ++k;
  }
  return true;
}

// True if `text` (trailing white space allowed) is exactly one JSON value: an object or array by
// bracket balance, strings and escapes respected; a scalar always (windows are cut at a ',' or just
// after the array's ']', outside strings: never inside a scalar token).
bool whole_value(std::string_view text) {
  while (!text.empty() && (text.back() == ' ' || text.back() == '\n' || text.back() == '\r' || text.back() == '\t')) {
    text.remove_suffix(1);
  }
  if (text.empty()) return false;
  if (text.front() != '{' && text.front() != '[') return true;
  if (text.back() != '}' && text.back() != ']') return false;
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      if (--depth == 0) return i + 1 == text.size();
    }
  }
  return false;
}

class Importer {
 public:
  Importer(std::string_view path, const simdjson::padded_string& text, RankTrace* out)
      : path_(path), base_(text.data()), size_(text.size()), out_(out) {}
  // For the streaming reader: the text arrives window by window through set_window().
  Importer(std::string_view path, RankTrace* out) : path_(path), base_(nullptr), size_(0), out_(out) {}

  // Returns an empty string on success, else the error message.
  std::string import(od::document& doc);

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
  bool append_part(RankTrace& part, size_t part_dropped_warnings, const Summed& part_summed);
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

void Importer::warn(size_t offset, std::string_view message) {
  if (out_->warnings.size() < kMaxWarningsPerFile) {
    out_->warnings.push_back(fmt::format("{}:{}: {}", path_, offset, message));
  } else {
    ++warnings_dropped_;
  }
}

std::string Importer::structural_error(od::document& doc, simdjson::error_code e) const {
  const char* loc = nullptr;
  size_t offset = size_;
  if (!doc.current_location().get(loc)) offset = offset_of(loc);
  if (e == simdjson::INCOMPLETE_ARRAY_OR_OBJECT || e == simdjson::TAPE_ERROR || e == simdjson::EMPTY ||
      e == simdjson::OUT_OF_BOUNDS) {
    return fmt::format("{}:{}: invalid or truncated JSON ({})", path_, offset, simdjson::error_message(e));
  }
  return fmt::format("{}:{}: invalid JSON ({})", path_, offset, simdjson::error_message(e));
}

uint32_t Importer::track_for(const PidOrTid& pid, const PidOrTid& tid) {
  // Consecutive events usually share a thread: skip the hash lookup then.
  const bool numeric = pid.label.empty() && tid.label.empty();
  if (numeric && last_track_ != kNoTrack && pid.number == last_pid_ && tid.number == last_tid_) return last_track_;
  TrackKey key{pid.number, tid.number, pid.label.empty() ? 0 : out_->strings.intern(pid.label),
               tid.label.empty() ? 0 : out_->strings.intern(tid.label)};
  auto [it, inserted] = tracks_.try_emplace(key, static_cast<uint32_t>(out_->tracks.size()));
  if (inserted) {
    out_->tracks.pid.push_back(key.pid);
    out_->tracks.tid.push_back(key.tid);
    out_->tracks.pid_label.push_back(key.pid_label);
    out_->tracks.tid_label.push_back(key.tid_label);
  }
  if (numeric) {
    last_pid_ = pid.number;
    last_tid_ = tid.number;
    last_track_ = it->second;
  }
  return it->second;
}

bool Importer::read_pid_or_tid(od::value& v, PidOrTid* out) {
  if (!v.get_int64().get(out->number)) return true;  // the common case first, as in read_int
  od::json_type type;
  if (v.type().get(type)) return false;
  if (type == od::json_type::number) {
    if (!v.get_int64().get(out->number)) return true;
    return parse_int64(trim_token(v.raw_json_token()), &out->number) == NumberParse::kOk;
  }
  if (type == od::json_type::string) {
    std::string_view s;
    if (!read_string(v, &s)) return false;
    if (parse_int64(s, &out->number) != NumberParse::kOk) {
      out->number = kNone;
      out->label = s.empty() ? std::string_view("\"\"") : s;
    }
    return true;
  }
  return type == od::json_type::null;
}

simdjson::error_code Importer::import_args(od::object args, EventArgs* a) {
  for (auto field_result : args) {
    if (auto e = field_result.error()) return e;
    // Used in place: moving the field out copies it through the stack in pieces that the next
    // 16-byte load cannot forward from (a store-forwarding stall on every field, seen with perf).
    od::field& field = field_result.value_unsafe();
    const char* k = field.key().raw();
    od::value& v = field.value();
    // Dispatch on the first character, then compare in place; unknown keys are skipped unread.
    switch (k[0]) {
      case 'E':
        if (key_is(k, "External id")) read_int(v, &a->external_id);
        break;
      case 'e':
        if (key_is(k, "external id")) {
          read_int(v, &a->external_id);
        } else if (key_is(k, "est. achieved occupancy %")) {
          a->has_device_args |= read_double(v, &a->write_device().occupancy);
        }
        break;
      case 'c':
        if (key_is(k, "correlation")) read_int(v, &a->correlation);
        break;
      case 's':
        if (key_is(k, "stream")) {
          read_int(v, &a->stream);
        } else if (key_is(k, "shared memory")) {
          a->has_device_args |= read_int(v, &a->write_device().shared_memory);
        }
        break;
      case 'd':
        if (key_is(k, "device")) {
          a->has_device_args |= read_int(v, &a->write_device().device);
        } else if (key_is(k, "dtype")) {
          a->has_collective |= read_string(v, &a->write_collective().dtype);
        }
        break;
      case 'b':
        if (key_is(k, "bytes")) {
          a->has_device_args |= read_int(v, &a->write_device().bytes);
        } else if (key_is(k, "blocks per SM")) {
          a->has_device_args |= read_double(v, &a->write_device().blocks_per_sm);
        } else if (key_is(k, "block")) {
          a->has_device_args |= read_triple(v, a->write_device().block);
        }
        break;
      case 'm':
        if (key_is(k, "memory bandwidth (GB/s)")) a->has_device_args |= read_double(v, &a->write_device().bandwidth);
        break;
      case 'g':
        if (key_is(k, "grid")) a->has_device_args |= read_triple(v, a->write_device().grid);
        break;
      case 'r':
        if (key_is(k, "registers per thread")) a->has_device_args |= read_int(v, &a->write_device().registers);
        break;
      case 'w':
        if (key_is(k, "warps per SM")) a->has_device_args |= read_double(v, &a->write_device().warps_per_sm);
        break;
      case 'C':
        if (key_is(k, "Collective name")) a->has_collective |= read_string(v, &a->write_collective().name);
        break;
      case 'I':
        if (key_is(k, "In msg nelems") || key_is(k, "In msg size")) {
          a->has_collective |= read_int(v, &a->write_collective().in_nelems);
        } else if (key_is(k, "Input Dims")) {
          read_raw(v, &a->write_shapes().input_dims);
        } else if (key_is(k, "Input type")) {
          read_raw(v, &a->write_shapes().input_types);
        } else if (key_is(k, "In split size")) {
          read_raw(v, &a->write_collective().in_split);
        }
        break;
      case 'O':
        if (key_is(k, "Out msg nelems") || key_is(k, "Out msg size")) {
          a->has_collective |= read_int(v, &a->write_collective().out_nelems);
        } else if (key_is(k, "Out split size")) {
          read_raw(v, &a->write_collective().out_split);
        }
        break;
      case 'S':
        if (key_is(k, "Seq")) read_int(v, &a->write_collective().seq);
        break;
      case 'G':
        if (key_is(k, "Group size")) a->has_collective |= read_int(v, &a->write_collective().group_size);
        break;
      case 'P':
        if (key_is(k, "Process Group Name")) {
          read_raw(v, &a->write_collective().pg_name);
        } else if (key_is(k, "Process Group Description")) {
          read_raw(v, &a->write_collective().pg_desc);
        } else if (key_is(k, "Process Group Ranks")) {
          read_raw(v, &a->write_collective().pg_ranks);
        }
        break;
      case 'B':
        if (key_is(k, "Bytes")) read_int(v, &a->write_memory().bytes);
        break;
      case 'T':
        if (key_is(k, "Total Allocated")) {
          read_int(v, &a->write_memory().total_allocated);
        } else if (key_is(k, "Total Reserved")) {
          read_int(v, &a->write_memory().total_reserved);
        }
        break;
      case 'D':
        if (key_is(k, "Device Type")) {
          read_int(v, &a->write_memory().device_type);
        } else if (key_is(k, "Device Id")) {
          read_int(v, &a->write_memory().device_id);
        }
        break;
      default:
        break;
    }
  }
  return simdjson::SUCCESS;
}

simdjson::error_code Importer::import_event(od::value& v) {
  RankTrace& t = *out_;
  ++t.stats.events_total;
  const size_t offset = offset_of(v.raw_json_token().data());
  od::object obj;
  if (v.get_object().get(obj)) {
    // Not even the start of a JSON value: invalid JSON, which fails the document.
    od::json_type type;
    if (auto e = v.type().get(type)) return e;
    ++t.stats.rejected_events;
    warn(offset, "event is not a JSON object; skipped");
    // Left unread: the iterator skips it when it moves to the next element, and until then a window
    // may have cut it short (see import_window).
    left_early_ = true;
    return simdjson::SUCCESS;
  }
  std::string_view ph, cat, name, ts_tok, dur_tok;
  bool has_ph = false, has_cat = false, has_name = false, has_ts = false, has_dur = false;
  bool bad_name = false, bad_pid = false, bad_ts_type = false, bad_dur_type = false;
  PidOrTid pid, tid;
  EventArgs& args = args_;
  args.reset();
  for (auto field_result : obj) {
    if (auto e = field_result.error()) return e;
    od::field& field = field_result.value_unsafe();  // in place, as in import_args
    const char* key = field.key().raw();
    od::value& fv = field.value();
    // Keys are compared in place (text then the closing quote), after a switch on the first
    // character: this loop runs for every field of every event, so it avoids measuring or copying
    // keys and tries at most two of them.
    switch (key[0]) {
      case 'p':
        if (key_is(key, "ph")) {
          has_ph = read_string(fv, &ph);
          // Flow and metadata events (a third of a typical trace) are only counted: leave them at
          // once and let the iterator skip their other fields.
          if (has_ph && ph.size() == 1 && (ph[0] == 's' || ph[0] == 'f' || ph[0] == 't' || ph[0] == 'M')) {
            ++(ph[0] == 'M' ? t.stats.metadata_events : t.stats.flow_events);
            left_early_ = true;
            return simdjson::SUCCESS;
          }
        } else if (key_is(key, "pid")) {
          bad_pid |= !read_pid_or_tid(fv, &pid);
        }
        break;
      case 'c':
        if (key_is(key, "cat")) has_cat = read_string(fv, &cat);
        break;
      case 'n':
        if (key_is(key, "name")) {
          has_name = read_string(fv, &name);
          bad_name = !has_name;
        }
        break;
      case 't':
        if (key_is(key, "ts")) {
          if (auto e = read_time_token(fv, &ts_tok, &bad_ts_type)) return e;
          has_ts = true;
        } else if (key_is(key, "tid")) {
          bad_pid |= !read_pid_or_tid(fv, &tid);
        }
        break;
      case 'd':
        if (key_is(key, "dur")) {
          if (auto e = read_time_token(fv, &dur_tok, &bad_dur_type)) return e;
          has_dur = true;
        }
        break;
      case 'a':
        if (key_is(key, "args")) {
          od::object args_obj;
          if (!fv.get_object().get(args_obj)) {
            if (auto e = import_args(args_obj, &args)) return e;
          }
        }
        break;
      default:
        break;
    }
  }

  // Only complete events and memory instants become rows; the rest are counted.
  bool complete = has_ph && ph == "X";
  bool instant = has_ph && (ph == "i" || ph == "I");
  if (!complete) {
    if (!has_ph) {
      ++t.stats.other_events;
    } else if (ph == "M") {
      ++t.stats.metadata_events;
    } else if (ph == "s" || ph == "f" || ph == "t") {
      ++t.stats.flow_events;
    } else if (ph == "C") {
      ++t.stats.counter_events;
    } else if (!instant || !has_name || (name != "[memory]" && name != "[OutOfMemory]")) {
      ++t.stats.other_events;
    }
    if (!instant || !has_name || (name != "[memory]" && name != "[OutOfMemory]")) return simdjson::SUCCESS;
  }

  auto reject = [&](std::string_view why) {
    ++t.stats.rejected_events;
    warn(offset, fmt::format("event '{}' {}; skipped", has_name ? name.substr(0, 80) : "?", why));
    return simdjson::SUCCESS;
  };
  if (bad_name) return reject("has a name that is not a string");
  if (bad_pid) return reject("has a pid or tid that is neither a number nor a string");
  if (!has_ts || bad_ts_type) return reject(has_ts ? "has a ts that is not a number" : "has no ts");
  int64_t ts = 0;
  int64_t dur = 0;
  int64_t summed_dur = summed_.dur_ns;
  int64_t summed_bytes = summed_.memory_bytes;
  bool fractional = false;
  switch (parse_microseconds_as_ns(ts_tok, &ts, &fractional)) {
    case NumberParse::kOk:
      break;
    case NumberParse::kOverflow:
      return reject(fmt::format("has a ts that overflows int64 nanoseconds ({})", ts_tok.substr(0, 40)));
    case NumberParse::kInvalid:
      return reject(fmt::format("has an invalid ts ({})", ts_tok.substr(0, 40)));
  }
  if (complete) {
    if (!has_dur || bad_dur_type) return reject(has_dur ? "has a dur that is not a number" : "has no dur");
    switch (parse_microseconds_as_ns(dur_tok, &dur, &fractional)) {
      case NumberParse::kOk:
        break;
      case NumberParse::kOverflow:
        return reject(fmt::format("has a dur that overflows int64 nanoseconds ({})", dur_tok.substr(0, 40)));
      case NumberParse::kInvalid:
        return reject(fmt::format("has an invalid dur ({})", dur_tok.substr(0, 40)));
    }
    if (dur < 0) return reject(fmt::format("has a negative dur ({} us)", dur_tok.substr(0, 40)));
    int64_t end = 0;
    if (__builtin_add_overflow(ts, dur, &end)) return reject("ends beyond the int64 nanosecond range");
    if (end > kMaxTimeNs) {
      return reject(fmt::format("ends beyond the supported time range ({} us + {} us)", ts_tok.substr(0, 40),
                                dur_tok.substr(0, 40)));
    }
    if (__builtin_add_overflow(summed_.dur_ns, dur, &summed_dur) || summed_dur > kMaxSummedNs) {
      return reject(fmt::format("has a dur ({} us) that makes the durations of this trace sum to more than {} s",
                                dur_tok.substr(0, 40), kMaxSummedNs / 1'000'000'000));
    }
  }
  if (ts < kMinTimeNs || ts > kMaxTimeNs) {
    return reject(fmt::format("has a ts outside the supported time range ({} us)", ts_tok.substr(0, 40)));
  }
  if (instant) {
    const int64_t magnitude = args.memory.bytes == INT64_MIN ? INT64_MAX : std::abs(args.memory.bytes);
    if (__builtin_add_overflow(summed_bytes, magnitude, &summed_bytes) || summed_bytes > kMaxSummedBytes) {
      return reject("has Bytes that make the memory events of this trace sum to more than 512 PiB");
    }
  }
  summed_.dur_ns = summed_dur;
  summed_.memory_bytes = summed_bytes;
  t.stats.fractional_timestamps |= fractional;

  add_rows(ts, dur, has_name ? &name : nullptr, has_cat ? &cat : nullptr, instant, pid, tid);
  return simdjson::SUCCESS;
}

// The row of one accepted event and its rows in the argument tables. A function of its own, kept
// out of import_event and flattened (see its declaration): inside import_event, amid simdjson's
// inlined iteration, GCC left most column appends as calls to push_back (about 30 per kernel row,
// 4 % of the reader's time on df_index_resolver).
void Importer::add_rows(int64_t ts, int64_t dur, const std::string_view* name, const std::string_view* cat,
                        bool instant, const PidOrTid& pid, const PidOrTid& tid) {
  RankTrace& t = *out_;
  const EventArgs& args = args_;
  const auto row = static_cast<uint32_t>(t.events.size());
  Category category = Category::kNone;
  StringId cat_id = 0;
  if (cat != nullptr) {
    // A trace has a handful of categories, mostly in runs: reuse the last one's id and category
    // rather than hashing the text again (compared with the pool's copy, which outlives windows).
    if (last_cat_id_ == 0 || *cat != t.strings.view(last_cat_id_)) {
      last_cat_id_ = t.strings.intern(*cat);
      last_category_ = category_from_name(*cat);
    }
    cat_id = last_cat_id_;
    category = last_category_;
  }
  EventTable& ev = t.events;
  ev.ts.push_back(ts);
  ev.dur.push_back(dur);
  ev.name.push_back(name != nullptr ? t.strings.intern(*name) : 0);
  ev.cat_name.push_back(cat_id);
  ev.cat.push_back(category);
  ev.phase.push_back(instant ? Phase::kInstant : Phase::kComplete);
  ev.track.push_back(track_for(pid, tid));
  ev.correlation.push_back(args.correlation);
  ev.external_id.push_back(args.external_id);
  ev.stream.push_back(args.stream);
  ev.file_index.push_back(static_cast<uint32_t>(t.stats.events_total - 1));

  if (instant) {
    MemoryTable& m = t.memory;
    m.event.push_back(row);
    m.bytes.push_back(args.memory.bytes);
    m.total_allocated.push_back(args.memory.total_allocated);
    m.total_reserved.push_back(args.memory.total_reserved);
    m.device_type.push_back(static_cast<int32_t>(args.memory.device_type));
    m.device_id.push_back(static_cast<int32_t>(args.memory.device_id));
    return;
  }
  if (args.has_device_args || is_device_category(category)) {
    DeviceArgsTable& d = t.device_args;
    d.event.push_back(row);
    d.device.push_back(static_cast<int32_t>(args.device.device));
    d.bytes.push_back(args.device.bytes);
    d.bandwidth_gbps.push_back(args.device.bandwidth);
    d.grid_x.push_back(static_cast<int32_t>(args.device.grid[0]));
    d.grid_y.push_back(static_cast<int32_t>(args.device.grid[1]));
    d.grid_z.push_back(static_cast<int32_t>(args.device.grid[2]));
    d.block_x.push_back(static_cast<int32_t>(args.device.block[0]));
    d.block_y.push_back(static_cast<int32_t>(args.device.block[1]));
    d.block_z.push_back(static_cast<int32_t>(args.device.block[2]));
    d.registers_per_thread.push_back(static_cast<int32_t>(args.device.registers));
    d.shared_memory.push_back(args.device.shared_memory);
    d.blocks_per_sm.push_back(static_cast<float>(args.device.blocks_per_sm));
    d.warps_per_sm.push_back(static_cast<float>(args.device.warps_per_sm));
    d.occupancy_pct.push_back(static_cast<float>(args.device.occupancy));
  }
  if (args.has_collective) {
    CollectiveTable& c = t.collectives;
    c.event.push_back(row);
    c.collective_name.push_back(t.strings.intern(args.collective.name));
    c.dtype.push_back(t.strings.intern(args.collective.dtype));
    c.in_msg_nelems.push_back(args.collective.in_nelems);
    c.out_msg_nelems.push_back(args.collective.out_nelems);
    c.group_size.push_back(args.collective.group_size);
    c.process_group_name.push_back(t.strings.intern(args.collective.pg_name));
    c.process_group_desc.push_back(t.strings.intern(args.collective.pg_desc));
    c.process_group_ranks.push_back(t.strings.intern(args.collective.pg_ranks));
    c.seq.push_back(args.collective.seq);
    c.in_split_sizes.push_back(t.strings.intern(args.collective.in_split));
    c.out_split_sizes.push_back(t.strings.intern(args.collective.out_split));
  }
  if (!args.shapes.input_dims.empty() || !args.shapes.input_types.empty()) {
    ShapesTable& s = t.shapes;
    s.event.push_back(row);
    s.input_dims.push_back(t.strings.intern(args.shapes.input_dims));
    s.input_types.push_back(t.strings.intern(args.shapes.input_types));
  }
}

simdjson::error_code Importer::import_events(od::array events) {
  for (auto element : events) {
    od::value v;
    if (auto e = std::move(element).get(v)) return e;
    if (auto e = import_event(v)) return e;
  }
  return simdjson::SUCCESS;
}

simdjson::error_code Importer::import_distributed_info(od::value& v) {
  od::object obj;
  if (v.get_object().get(obj)) return simdjson::SUCCESS;  // not an object: ignore
  DistributedInfo info;
  for (auto field_result : obj) {
    od::field field;
    if (auto e = std::move(field_result).get(field)) return e;
    std::string_view k = raw_key(field);
    od::value fv = field.value();
    int64_t n = 0;
    std::string_view s;
    if (k == "backend" && read_string(fv, &s)) {
      info.backend = s;
    } else if (k == "rank" && read_int(fv, &n)) {
      info.rank = n;
    } else if (k == "world_size" && read_int(fv, &n)) {
      info.world_size = n;
    } else if (k == "nccl_version" && read_string(fv, &s)) {
      info.nccl_version = s;
    } else if (k == "pg_config") {
      od::array groups;
      if (fv.get_array().get(groups)) continue;
      for (auto group_result : groups) {
        od::object group;
        if (group_result.get_object().get(group)) continue;
        ProcessGroupConfig pg;
        for (auto gf_result : group) {
          od::field gf;
          if (auto e = std::move(gf_result).get(gf)) return e;
          std::string_view gk = raw_key(gf);
          od::value gv = gf.value();
          if (gk == "pg_name" && read_string(gv, &s)) {
            pg.name = s;
          } else if (gk == "pg_desc" && read_string(gv, &s)) {
            pg.desc = s;
          } else if (gk == "pg_size" && read_int(gv, &n)) {
            pg.size = n;
          } else if (gk == "ranks") {
            od::array ranks;
            if (gv.get_array().get(ranks)) continue;
            for (auto r : ranks) {
              od::value rv;
              if (!std::move(r).get(rv) && read_int(rv, &n)) pg.ranks.push_back(n);
            }
          }
        }
        info.pg_config.push_back(std::move(pg));
      }
    }
  }
  out_->metadata.distributed = std::move(info);
  return simdjson::SUCCESS;
}

simdjson::error_code Importer::import_device_properties(od::value& v) {
  od::array devices;
  if (v.get_array().get(devices)) return simdjson::SUCCESS;
  for (auto device_result : devices) {
    od::object device;
    if (device_result.get_object().get(device)) continue;
    DeviceProperties p;
    for (auto field_result : device) {
      od::field field;
      if (auto e = std::move(field_result).get(field)) return e;
      std::string_view k = raw_key(field);
      od::value fv = field.value();
      std::string_view s;
      if (k == "id") {
        read_int(fv, &p.id);
      } else if (k == "name" && read_string(fv, &s)) {
        p.name = s;
      } else if (k == "totalGlobalMem") {
        read_int(fv, &p.total_global_mem);
      } else if (k == "computeMajor") {
        read_int(fv, &p.compute_major);
      } else if (k == "computeMinor") {
        read_int(fv, &p.compute_minor);
      } else if (k == "numSms" || k == "multiProcessorCount") {
        read_int(fv, &p.num_sms);
      } else if (k == "maxThreadsPerMultiprocessor") {
        read_int(fv, &p.max_threads_per_multiprocessor);
      }
    }
    out_->metadata.devices.push_back(std::move(p));
  }
  return simdjson::SUCCESS;
}

std::string Importer::import(od::document& doc) {
  od::json_type type;
  if (auto e = doc.type().get(type)) return structural_error(doc, e);
  if (type == od::json_type::array) {
    out_->metadata.legacy_array = true;
    od::array events;
    if (auto e = doc.get_array().get(events)) return structural_error(doc, e);
    if (auto e = import_events(events)) return structural_error(doc, e);
  } else if (type == od::json_type::object) {
    od::object top;
    if (auto e = doc.get_object().get(top)) return structural_error(doc, e);
    bool saw_events = false;
    for (auto field_result : top) {
      od::field field;
      if (auto e = std::move(field_result).get(field)) return structural_error(doc, e);
      std::string_view k = raw_key(field);
      od::value v = field.value();
      simdjson::error_code e = simdjson::SUCCESS;
      if (k == "traceEvents") {
        od::array events;
        if (v.get_array().get(events)) {
          return fmt::format("{}:{}: traceEvents is not an array", path_, offset_of(v.raw_json_token().data()));
        }
        saw_events = true;
        e = import_events(events);
      } else {
        e = import_member(k, v);
      }
      if (e) return structural_error(doc, e);
    }
    if (!saw_events) return fmt::format("{}:0: no traceEvents array in the trace", path_);
  } else {
    return fmt::format("{}:0: the trace is neither a JSON object nor an array", path_);
  }
  // Anything after the top-level value is an error (e.g. two documents concatenated).
  const char* loc = nullptr;
  if (!doc.current_location().get(loc) && offset_of(loc) < size_) {
    return fmt::format("{}:{}: unexpected content after the end of the JSON document", path_, offset_of(loc));
  }
  finish_warnings();
  return {};
}

simdjson::error_code Importer::import_member(std::string_view k, od::value& v) {
  if (k == "baseTimeNanoseconds") {
    int64_t base = 0;
    if (read_int(v, &base)) out_->metadata.base_time_ns = base;
  } else if (k == "schemaVersion") {
    int64_t version = 0;
    if (read_int(v, &version)) out_->metadata.schema_version = version;
  } else if (k == "displayTimeUnit") {
    std::string_view s;
    if (read_string(v, &s)) out_->metadata.display_time_unit = s;
  } else if (k == "distributedInfo") {
    return import_distributed_info(v);
  } else if (k == "deviceProperties") {
    return import_device_properties(v);
  } else {
    std::string_view raw;
    if (auto e = simdjson::to_json_string(v).get(raw)) return e;
    out_->metadata.other.emplace_back(std::string(k), std::string(raw));
  }
  return simdjson::SUCCESS;
}

std::string Importer::import_envelope_member(std::string_view key, const simdjson::padded_string& bracketed,
                                             uint64_t offset, od::parser& parser) {
  set_window(bracketed.data(), bracketed.size(), offset - 1);
  od::document doc;
  // A failed iterate leaves the document without a position (asking it for one reads a null
  // pointer): name the member's own offset instead.
  if (auto e = parser.iterate(bracketed).get(doc)) {
    return fmt::format("{}:{}: invalid JSON ({})", path_, offset, simdjson::error_message(e));
  }
  od::array one;
  if (auto e = doc.get_array().get(one)) return structural_error(doc, e);
  for (auto element : one) {
    od::value v;
    if (auto e = std::move(element).get(v)) return structural_error(doc, e);
    if (key == "traceEvents") return fmt::format("{}:{}: traceEvents is not an array", path_, offset);
    if (auto e = import_member(key, v)) return structural_error(doc, e);
  }
  return {};
}

template <class T>
void append_column(std::vector<T>& into, const std::vector<T>& from) {
  into.insert(into.end(), from.begin(), from.end());
}

// Appends `from` with each value passed through `map`: a part's string ids and row numbers made the
// rank's. Sized once and written in place (push_back per value was a measurable share of the thread
// that merges).
template <class T, class Map>
void append_mapped(std::vector<T>& into, const std::vector<T>& from, Map map) {
  const size_t at = into.size();
  into.resize(at + from.size());
  T* out = into.data() + at;
  for (size_t i = 0; i < from.size(); ++i) out[i] = map(from[i]);
}

bool Importer::append_part(RankTrace& p, size_t part_dropped_warnings, const Summed& part_summed) {
  RankTrace& t = *out_;
  int64_t summed_dur = 0;
  int64_t summed_bytes = 0;
  if (__builtin_add_overflow(summed_.dur_ns, part_summed.dur_ns, &summed_dur) || summed_dur > kMaxSummedNs ||
      __builtin_add_overflow(summed_.memory_bytes, part_summed.memory_bytes, &summed_bytes) ||
      summed_bytes > kMaxSummedBytes) {
    return false;
  }
  // Strings and tracks in the part's first-seen order, which is the order the serial reader meets
  // them in: the ids come out the same.
  std::vector<StringId> sid(p.strings.size(), 0);
  for (size_t i = 1; i < p.strings.size(); ++i) sid[i] = t.strings.intern(p.strings.view(static_cast<StringId>(i)));
  std::vector<uint32_t> track(p.tracks.size(), 0);
  for (size_t i = 0; i < p.tracks.size(); ++i) {
    TrackKey key{p.tracks.pid[i], p.tracks.tid[i], sid[p.tracks.pid_label[i]], sid[p.tracks.tid_label[i]]};
    auto [it, inserted] = tracks_.try_emplace(key, static_cast<uint32_t>(t.tracks.size()));
    if (inserted) {
      t.tracks.pid.push_back(key.pid);
      t.tracks.tid.push_back(key.tid);
      t.tracks.pid_label.push_back(key.pid_label);
      t.tracks.tid_label.push_back(key.tid_label);
    }
    track[i] = it->second;
  }
  last_track_ = kNoTrack;

  const auto row0 = static_cast<uint32_t>(t.events.size());
  const auto index0 = static_cast<uint32_t>(t.stats.events_total);
  const auto rank_string = [&](StringId id) { return sid[id]; };
  const auto rank_row = [row0](uint32_t r) { return r + row0; };
  EventTable& e = t.events;
  const EventTable& q = p.events;
  append_column(e.ts, q.ts);
  append_column(e.dur, q.dur);
  append_mapped(e.name, q.name, rank_string);
  append_mapped(e.cat_name, q.cat_name, rank_string);
  append_column(e.cat, q.cat);
  append_column(e.phase, q.phase);
  append_mapped(e.track, q.track, [&](uint32_t tr) { return track[tr]; });
  append_column(e.correlation, q.correlation);
  append_column(e.external_id, q.external_id);
  append_column(e.stream, q.stream);
  append_mapped(e.file_index, q.file_index, [&](uint32_t fi) { return fi + index0; });

  DeviceArgsTable& d = t.device_args;
  const DeviceArgsTable& pd = p.device_args;
  append_mapped(d.event, pd.event, rank_row);
  append_column(d.device, pd.device);
  append_column(d.bytes, pd.bytes);
  append_column(d.bandwidth_gbps, pd.bandwidth_gbps);
  append_column(d.grid_x, pd.grid_x);
  append_column(d.grid_y, pd.grid_y);
  append_column(d.grid_z, pd.grid_z);
  append_column(d.block_x, pd.block_x);
  append_column(d.block_y, pd.block_y);
  append_column(d.block_z, pd.block_z);
  append_column(d.registers_per_thread, pd.registers_per_thread);
  append_column(d.shared_memory, pd.shared_memory);
  append_column(d.blocks_per_sm, pd.blocks_per_sm);
  append_column(d.warps_per_sm, pd.warps_per_sm);
  append_column(d.occupancy_pct, pd.occupancy_pct);

  CollectiveTable& c = t.collectives;
  const CollectiveTable& pc = p.collectives;
  append_mapped(c.event, pc.event, rank_row);
  append_mapped(c.collective_name, pc.collective_name, rank_string);
  append_mapped(c.dtype, pc.dtype, rank_string);
  append_column(c.in_msg_nelems, pc.in_msg_nelems);
  append_column(c.out_msg_nelems, pc.out_msg_nelems);
  append_column(c.group_size, pc.group_size);
  append_mapped(c.process_group_name, pc.process_group_name, rank_string);
  append_mapped(c.process_group_desc, pc.process_group_desc, rank_string);
  append_mapped(c.process_group_ranks, pc.process_group_ranks, rank_string);
  append_column(c.seq, pc.seq);
  append_mapped(c.in_split_sizes, pc.in_split_sizes, rank_string);
  append_mapped(c.out_split_sizes, pc.out_split_sizes, rank_string);

  MemoryTable& m = t.memory;
  const MemoryTable& pm = p.memory;
  append_mapped(m.event, pm.event, rank_row);
  append_column(m.bytes, pm.bytes);
  append_column(m.total_allocated, pm.total_allocated);
  append_column(m.total_reserved, pm.total_reserved);
  append_column(m.device_type, pm.device_type);
  append_column(m.device_id, pm.device_id);

  ShapesTable& sh = t.shapes;
  const ShapesTable& ps = p.shapes;
  append_mapped(sh.event, ps.event, rank_row);
  append_mapped(sh.input_dims, ps.input_dims, rank_string);
  append_mapped(sh.input_types, ps.input_types, rank_string);

  ReadStats& st = t.stats;
  const ReadStats& ps_ = p.stats;
  st.events_total += ps_.events_total;
  st.metadata_events += ps_.metadata_events;
  st.flow_events += ps_.flow_events;
  st.counter_events += ps_.counter_events;
  st.other_events += ps_.other_events;
  st.rejected_events += ps_.rejected_events;
  st.fractional_timestamps |= ps_.fractional_timestamps;
  summed_.dur_ns = summed_dur;
  summed_.memory_bytes = summed_bytes;
  for (std::string& w : p.warnings) {
    if (t.warnings.size() < kMaxWarningsPerFile) {
      t.warnings.push_back(std::move(w));
    } else {
      ++warnings_dropped_;
    }
  }
  warnings_dropped_ += part_dropped_warnings;
  return true;
}

void Importer::finish_warnings() {
  if (warnings_dropped_ > 0) {
    out_->warnings.push_back(fmt::format("{}: {} more warnings like the above not shown", path_, warnings_dropped_));
    warnings_dropped_ = 0;
  }
}

Result<size_t> Importer::import_window(od::document& doc, size_t cut, size_t* array_end) {
  auto cut_induced = [&](simdjson::error_code) {
    const char* loc = nullptr;
    size_t at = doc.current_location().get(loc) ? size_ : static_cast<size_t>(loc - base_);
    return at + 1 >= cut;
  };
  auto fail = [&](simdjson::error_code e) -> Error { return Error{structural_error(doc, e)}; };
  od::array events;
  if (auto e = doc.get_array().get(events)) return fail(e);
  size_t next = 1;  // where the next window starts: after the last element imported whole
  // An element left early (a flow or metadata event, or one that is not an object: see
  // import_event) is skipped by the iterator only when the next element is reached; until then it
  // may still turn out to be cut short, and what importing it counted and warned is taken back.
  bool pending = false;
  size_t pending_start = 0;
  Counted pending_counted;
  for (auto element : events) {
    od::value v;
    if (auto e = std::move(element).get(v)) {
      if (!cut_induced(e)) return fail(e);
      if (pending) {
        restore(pending_counted);
        return pending_start;
      }
      return next;
    }
    const auto start = static_cast<size_t>(v.raw_json_token().data() - base_);
    // After a trailing comma the iterator yields the sentinel ']' itself as a value. It does so
    // too after an element left early that the window cut short (`{"ph": "s", "ts": 1,` then the
    // sentinel: skipping counts brackets, so the sentinel closed it): that element starts the next
    // window unless its text is one whole object.
    if (start + 1 >= cut) {
      if (!pending) return next;
      std::string_view left = trim_token(std::string_view(base_ + pending_start, start - pending_start));
      if (!left.empty() && left.back() == ',') left.remove_suffix(1);
      if (whole_value(left)) return start;
      restore(pending_counted);
      return pending_start;
    }
    // The array's real end after a trailing comma (`{...},` then `]`): the end, as the streaming
    // reader takes it between two windows. An element left early before it was skipped whole.
    if (base_[start] == ']') {
      *array_end = start + 1;
      return size_;
    }
    if (pending) {
      next = start;
      pending = false;
    }
    const Counted before = counted();
    left_early_ = false;
    if (auto e = import_event(v)) {
      // The element was cut short by the window: forget it; the next window starts with it.
      restore(before);
      if (cut_induced(e)) return start;
      return fail(e);
    }
    if (left_early_) {
      pending = true;
      pending_start = start;
      pending_counted = before;
      continue;
    }
    const char* after = nullptr;
    if (!doc.current_location().get(after)) next = static_cast<size_t>(after - base_);
  }
  // The array closed: either at the window's sentinel (the location runs off the end) or at the real
  // closing bracket, the last non-space byte before the current location.
  const char* loc = nullptr;
  *array_end = size_;
  if (!doc.current_location().get(loc)) {
    size_t at = static_cast<size_t>(loc - base_);
    while (at > 0 &&
           (base_[at - 1] == ' ' || base_[at - 1] == '\n' || base_[at - 1] == '\r' || base_[at - 1] == '\t')) {
      --at;
    }
    if (at > 0 && base_[at - 1] == ']') *array_end = at;
  }
  // The last element was left early and only skipped: the iterator skips by counting brackets, so a
  // flow or metadata event cut by the window (`{"ph": "f", "ts": 1,` then the sentinel) looks closed.
  // Check its text; if it is not one whole value, the next window starts with it.
  if (pending && !whole_value(std::string_view(base_ + pending_start, *array_end - 1 - pending_start))) {
    restore(pending_counted);
    return pending_start;
  }
  return size_;
}

// Gives back reserved rows only when many were never used: large reservations that were not
// touched cost address space, not memory, while shrinking copies every column.
void shrink(RankTrace* t) {
  EventTable& e = t->events;
  if (e.ts.capacity() - e.ts.size() < (1U << 20)) return;
  auto fit = [](auto&... columns) { (columns.shrink_to_fit(), ...); };
  fit(e.ts, e.dur, e.name, e.cat_name, e.cat, e.phase, e.track, e.correlation, e.external_id, e.stream, e.file_index);
}

void reserve_for(size_t json_bytes, RankTrace* t) {
  // Kineto events average 200-300 bytes of JSON; reserving avoids repeated regrowth of every column.
  size_t rows = json_bytes / 150 + 16;
  EventTable& e = t->events;
  auto reserve = [rows](auto&... columns) { (columns.reserve(rows), ...); };
  reserve(e.ts, e.dur, e.name, e.cat_name, e.cat, e.phase, e.track, e.correlation, e.external_id, e.stream,
          e.file_index);
}

// Work done once every event is in: absolute times, the rank, and tight columns.
Status finalize(RankTrace* trace) {
  if (trace->metadata.base_time_ns) {
    const int64_t base = *trace->metadata.base_time_ns;
    EventTable& ev = trace->events;
    for (size_t i = 0; i < ev.size(); ++i) {
      int64_t ts = 0;
      int64_t end = 0;
      if (__builtin_add_overflow(ev.ts[i], base, &ts) || __builtin_add_overflow(ts, ev.dur[i], &end) ||
          ts < kMinTimeNs || end > kMaxTimeNs) {
        return Error{fmt::format(
            "{}: baseTimeNanoseconds {} puts event {} of traceEvents (ts {} ns) outside the supported time range",
            trace->path, base, ev.file_index[i], ev.ts[i])};
      }
      ev.ts[i] = ts;
    }
  }
  trace->stats.events_kept = trace->events.size();
  const auto& dist = trace->metadata.distributed;
  if (dist && dist->rank) trace->rank = *dist->rank;
  shrink(trace);
  return Ok{};
}

Result<RankTrace> parse_once(std::string_view path, const simdjson::padded_string& text) {
  RankTrace trace;
  trace.path = std::string(path);
  trace.stats.json_bytes = text.size();
  reserve_for(text.size(), &trace);
  od::parser parser;
  od::document doc;
  // A UTF-8 byte order mark is skipped (HTA accepts it); offsets stay offsets into the file.
  const size_t bom = text.size() >= 3 && std::memcmp(text.data(), "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
  if (auto e = parser.iterate(text.data() + bom, text.size() - bom, text.size() - bom + simdjson::SIMDJSON_PADDING)
                   .get(doc)) {
    if (e == simdjson::UTF8_ERROR) {
      auto bad = first_invalid_utf8(std::string_view(text.data(), text.size()));
      return Error{fmt::format("{}:{}: invalid UTF-8", path, bad.value_or(0))};
    }
    if (e == simdjson::EMPTY) return Error{fmt::format("{}:0: empty file (no JSON value)", path)};
    return Error{fmt::format("{}:0: invalid JSON ({})", path, simdjson::error_message(e))};
  }
  Importer importer(path, text, &trace);
  if (std::string error = importer.import(doc); !error.empty()) return Error{std::move(error)};
  if (auto status = finalize(&trace); !status) return status.error();
  return trace;
}

}  // namespace

Result<RankTrace> parse_kineto_trace(std::string_view path, const simdjson::padded_string& text,
                                     const ParseOptions& options) {
  auto first = parse_once(path, text);
  if (first.ok() || !options.lenient) return first;
  const std::string& message = first.error().message;
  if (message.find("invalid UTF-8") != std::string::npos || message.find("empty file") != std::string::npos ||
      message.find("no traceEvents") != std::string::npos) {
    return first;
  }
  // Lenient mode: repair the known Kineto defects and try once more; report the original error if
  // the repaired text still does not parse.
  std::string repaired;
  size_t repairs = repair_kineto_json(std::string_view(text.data(), text.size()), &repaired);
  if (repairs == 0) return first;
  simdjson::padded_string repaired_text(repaired);
  repaired.clear();
  repaired.shrink_to_fit();
  auto second = parse_once(path, repaired_text);
  if (!second.ok()) return first;
  second.value().stats.repairs = repairs;
  second.value().stats.json_bytes = text.size();
  return second;
}

namespace {

bool is_json_space(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

// Makes `parser` hold windows of `size` bytes, growing its buffers to a power of two: simdjson
// otherwise reallocates them for every window a few bytes longer than the last, and freeing those
// multi-MB blocks raises glibc's mmap threshold, so later window buffers stay on the heap after
// use (issue 12: peak memory). Only the pages a window uses are touched.
void reserve_parser(od::parser& parser, size_t size) {
  if (parser.capacity() >= size) return;
  // A failure here is met again, and reported, by iterate().
  const simdjson::error_code ignored = parser.allocate(std::bit_ceil(size));
  (void)ignored;
}

// Raised by the streaming reader when one element of the array is larger than the largest window
// (kMaxWindow); the caller then parses the whole document at once.
constexpr std::string_view kNeedsWholeDocument = "needs whole-document parse";

// Raised by the parallel phase when a window did not parse on its own: the caller reads the file
// again serially (which then reports any error exactly as it always does).
constexpr std::string_view kNeedsSerial = "needs serial parse";

// One window of whole events for a parsing thread: `text[begin, begin + size)` is `[e1,...,en]`,
// followed inside `text` by simdjson's padding, zeroed as a padded string's (On-Demand reads its
// first byte). The buffer is the one the window was inflated into, handed over rather than copied.
struct WindowText {
  std::vector<char> text;
  size_t begin = 0;
  size_t size = 0;
  uint64_t offset = 0;  // file offset of text[begin]
};

// What a thread made of one window.
struct ParsedWindow {
  RankTrace part;
  // The window's buffer, handed back to be filled again.
  std::vector<char> text;
  size_t dropped_warnings = 0;
  Summed summed;
  bool ok = false;  // every byte was whole events and the array closed exactly at the window's end
};

ParsedWindow parse_window(std::string_view path, od::parser& parser, WindowText window) {
  ParsedWindow out;
  const char* start = window.text.data() + window.begin;
  reserve_parser(parser, window.size);
  // The part's columns sized once for the window, not regrown from empty in every window.
  reserve_for(window.size, &out.part);
  Importer importer(path, &out.part);
  importer.set_window(start, window.size, window.offset);
  od::document doc;
  if (!parser.iterate(start, window.size, window.text.size() - window.begin).get(doc)) {
    size_t array_end = 0;
    auto resume = importer.import_window(doc, window.size - 1, &array_end);
    out.ok = resume.ok() && resume.value() == window.size && array_end == window.size;
  }
  out.dropped_warnings = importer.warnings_dropped();
  out.summed = importer.summed();
  out.text = std::move(window.text);
  return out;
}

// Threads that parse windows of one file beside the calling thread. Results come back as futures
// in the order the windows were given.
class WindowWorkers {
 public:
  WindowWorkers(std::string_view path, unsigned threads) : path_(path) {
    for (unsigned i = 0; i < threads; ++i) threads_.emplace_back([this] { run(); });
  }
  ~WindowWorkers() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (std::thread& t : threads_) t.join();
  }
  WindowWorkers(const WindowWorkers&) = delete;
  WindowWorkers& operator=(const WindowWorkers&) = delete;

  // Parses `window` on a worker, or on the calling thread at once when the workers already have
  // enough windows waiting to stay busy meanwhile: the calling thread then parses the text it has
  // just inflated, still in its cache, and never sits waiting on a worker while a core idles.
  std::future<ParsedWindow> parse(WindowText window) {
    std::promise<ParsedWindow> result;
    std::future<ParsedWindow> future = result.get_future();
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (threads_.empty() || jobs_.size() >= backlog()) {
        lock.unlock();
        result.set_value(parse_window(path_, own_parser_, std::move(window)));
        return future;
      }
      jobs_.push_back(Job{std::move(window), std::move(result)});
    }
    cv_.notify_one();
    return future;
  }

  // Parses the oldest waiting window on the calling thread, rather than have it wait for a worker to
  // reach it. False when none is waiting.
  bool help() {
    Job job;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (jobs_.empty()) return false;
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    job.result.set_value(parse_window(path_, own_parser_, std::move(job.window)));
    return true;
  }

 private:
  struct Job {
    WindowText window;
    std::promise<ParsedWindow> result;
  };
  // Windows waiting per worker before the calling thread parses one itself: two keep a worker busy
  // for longer than the calling thread takes to parse one and inflate the next.
  size_t backlog() const { return 2 * threads_.size(); }

  void run() {
    od::parser parser;  // one per thread, reused across windows
    while (true) {
      Job job;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return stop_ || !jobs_.empty(); });
        if (jobs_.empty()) return;
        job = std::move(jobs_.front());
        jobs_.pop_front();
      }
      job.result.set_value(parse_window(path_, parser, std::move(job.window)));
    }
  }

  std::string_view path_;
  od::parser own_parser_;  // the calling thread's
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> jobs_;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

// Reads the traceEvents array in windows of 512 KiB cut at a ',' outside strings, found from the
// JSON's structure (trace/window_cut.h), each parsed in place as `[e1, e2, ...]` by writing '['
// before it and ']' over that ','. Memory stays bounded by the window whatever the trace's size
// and layout.
class StreamingParser {
 public:
  // `parallel`: the caller can read the input again if the parallel phase gives up (kNeedsSerial).
  StreamingParser(std::string_view path, ByteStream& in, const ParseOptions& options, uint64_t size_hint,
                  bool parallel = false)
      : path_(path),
        in_(in),
        options_(options),
        size_hint_(size_hint),
        parallel_(parallel && options.threads > 1),
        kWindow(options.window_bytes ? options.window_bytes : kDefaultWindow) {}

  Result<RankTrace> parse();
  // After a failed parse(): the data ended before the document did (no repair can help).
  bool ended_early() const { return ended_early_; }

 private:
  bool ended_early_ = false;
  static constexpr size_t kDefaultWindow = 512 << 10;
  static constexpr size_t kMaxWindow = 256 << 20;

  // Makes buf_[1..] hold the unread bytes from pos_ and reads until `want` bytes are there or EOF.
  // False once the stream has failed.
  bool fill(size_t want);
  // The middle of the events array on options_.threads worker threads: this thread inflates and
  // cuts windows between two events, workers parse them, rows are appended in file order. The
  // window the data ends in is left to the serial loop. False: a window did not parse on its own,
  // or the stream failed, and the file must be read serially.
  bool parse_windows_in_parallel(Importer& importer);
  // Where the serial loop cuts the unread bytes (pos_ at an element): just after the array's ']' if
  // it is there, else at the last ',' between two elements; 0 if none (the first element is longer
  // than the bytes read). Found from the JSON's structure, so windows stay bounded whatever the
  // layout, and a window never ends inside an element (issue 18: cut at a line break inside an
  // event, a window whose ']' closed a list spread over lines read as the end of traceEvents, and
  // the file was read again whole).
  size_t serial_cut() const;
  // Feeds the bytes from pos_ to `scanner`, importing each top-level member as it ends, until the
  // events array opens (*events_found, pos_ just after its '[') or the data ends.
  Status scan_envelope(EnvelopeScanner& scanner, Importer& importer, od::parser& parser, RankTrace* trace,
                       bool* events_found);
  // Values of keys outside traceEvents larger than this are skipped (with a warning), not kept.
  static constexpr size_t kMaxEnvelopeValue = 16 << 20;
  Error stream_error() const { return Error{in_.error()}; }

  std::string_view path_;
  ByteStream& in_;
  const ParseOptions& options_;
  uint64_t size_hint_;  // expected JSON bytes (0: unknown), to reserve the columns once
  bool parallel_;
  std::vector<char> buf_;
  size_t pos_ = 1;           // next unread byte in buf_
  size_t len_ = 1;           // bytes valid in buf_ (buf_[0] is headroom for the '[')
  uint64_t buf_offset_ = 0;  // stream offset of buf_[0]
  // The file offset of buf_[i] (buf_[0] is headroom and holds no data).
  uint64_t stream_offset(size_t i) const { return buf_offset_ + i - 1; }

  bool eof_ = false;
  const size_t kWindow;  // NOLINT(readability-identifier-naming): a constant per parser
};

bool StreamingParser::fill(size_t want) {
  if (pos_ > 1) {
    std::memmove(buf_.data() + 1, buf_.data() + pos_, len_ - pos_);
    buf_offset_ += pos_ - 1;
    len_ -= pos_ - 1;
    pos_ = 1;
  }
  if (buf_.size() < want + 2 + simdjson::SIMDJSON_PADDING) buf_.resize(want + 2 + simdjson::SIMDJSON_PADDING);
  while (!eof_ && len_ - pos_ < want) {
    size_t got = in_.read(buf_.data() + len_, want - (len_ - pos_));
    if (got == 0) {
      eof_ = true;
      if (!in_.error().empty()) return false;
    }
    len_ += got;
  }
  // A stream that failed stays failed: a later call (the serial loop after the parallel phase met
  // the error) must report it too, not take the data for ended (the fuzzer found a gzip checksum
  // error read as success on two threads).
  return in_.error().empty();
}

Status StreamingParser::scan_envelope(EnvelopeScanner& scanner, Importer& importer, od::parser& parser,
                                      RankTrace* trace, bool* events_found) {
  *events_found = false;
  while (true) {
    if (pos_ == len_) {
      if (eof_) return Ok{};
      if (!fill(kWindow)) return stream_error();
      continue;
    }
    const uint64_t offset = stream_offset(pos_);
    EnvelopeScanner::Event event = scanner.feed(buf_[pos_], offset);
    if (scanner.consumed()) ++pos_;
    switch (event) {
      case EnvelopeScanner::Event::kNone:
      case EnvelopeScanner::Event::kDocumentEnd:
        break;
      case EnvelopeScanner::Event::kEventsArray:
        *events_found = true;
        return Ok{};
      case EnvelopeScanner::Event::kSyntaxError:
        return Error{fmt::format("{}:{}: {}", path_, offset, scanner.error())};
      case EnvelopeScanner::Event::kMember: {
        if (!scanner.value_kept()) {
          trace->warnings.push_back(fmt::format("{}:{}: the value of '{}' ({} bytes) is larger than {} MiB; skipped",
                                                path_, scanner.value_offset(), scanner.key().substr(0, 80),
                                                scanner.value_bytes(), kMaxEnvelopeValue >> 20));
          break;
        }
        std::string bracketed;
        bracketed.reserve(scanner.value().size() + 2);
        bracketed.push_back('[');
        bracketed.append(scanner.value());
        bracketed.push_back(']');
        simdjson::padded_string text(bracketed);
        if (std::string error = importer.import_envelope_member(scanner.key(), text, scanner.value_offset(), parser);
            !error.empty()) {
          return Error{std::move(error)};
        }
        break;
      }
    }
  }
}

size_t StreamingParser::serial_cut() const {
  const WindowCut c = find_window_cut(std::string_view(buf_.data() + pos_, len_ - pos_));
  if (c.array_closed) return pos_ + c.array_close + 1;
  if (c.element_end != 0) return pos_ + c.element_end;
  return 0;
}

bool StreamingParser::parse_windows_in_parallel(Importer& importer) {
  // The calling thread is one of the threads: it inflates, cuts, merges, and parses when the
  // workers are ahead.
  WindowWorkers workers(path_, options_.threads - 1);
  std::deque<std::future<ParsedWindow>> pending;
  // Windows in flight, bounding memory: more than the workers' backlog, so the calling thread
  // waits on a worker only when it is far ahead.
  const size_t max_pending = 3 * static_cast<size_t>(options_.threads) + 2;
  bool ok = true;
  // Window buffers are reused, one per window in flight: allocating one per window let glibc's
  // moving mmap threshold keep the freed ones on the heap (issue 12: 2-thread peak memory).
  std::vector<std::vector<char>> spare;
  auto merge_front = [&] {
    // Waiting on a worker: first parse the windows still queued, so this core does not idle.
    while (pending.front().wait_for(std::chrono::seconds(0)) != std::future_status::ready && workers.help()) {
    }
    ParsedWindow w = pending.front().get();
    pending.pop_front();
    if (ok && !(w.ok && importer.append_part(w.part, w.dropped_warnings, w.summed))) ok = false;
    spare.push_back(std::move(w.text));
  };
  while (ok) {
    // One window of text, cut after its last whole event. The last window (the data ends in it) is
    // left to the serial loop, which reports any error. A window with no boundary (an event longer
    // than it) is read on, up to 8 windows, until one comes; past that the serial loop reads the
    // rest. A read error: the serial reader, reading again, reports it where it is (the serial loop
    // would take the failed stream for ended).
    // The cut is the last ',' between two elements, found from the JSON's structure (depth and
    // strings), so it is exact whatever the layout; once the array's ']' is in the bytes read, the
    // rest is the serial loop's.
    size_t comma = 0;
    bool array_closed = false;
    for (size_t want = kWindow; ok && comma == 0 && !array_closed && want <= 8 * kWindow; want *= 2) {
      if (!fill(want)) {
        ok = false;
      } else if (!eof_) {
        const WindowCut c = find_window_cut(std::string_view(buf_.data() + pos_, len_ - pos_));
        if (c.element_end != 0) comma = pos_ + c.element_end;
        array_closed = c.array_closed;
      } else {
        break;
      }
    }
    if (!ok || comma == 0 || eof_) break;
    // The buffer itself becomes the window `[e1,...,en]` (written over the byte before pos_ and the
    // comma after the last event); only what follows the comma, part of one event, is copied to the
    // next buffer.
    std::vector<char> next;
    if (!spare.empty()) {
      next = std::move(spare.back());
      spare.pop_back();
    }
    const size_t tail = len_ - (comma + 1);
    if (next.size() < tail + 2 + simdjson::SIMDJSON_PADDING) next.resize(tail + 2 + simdjson::SIMDJSON_PADDING);
    std::memcpy(next.data() + 1, buf_.data() + comma + 1, tail);
    WindowText window;
    window.begin = pos_ - 1;
    window.size = comma - pos_ + 2;
    window.offset = stream_offset(pos_) - 1;
    buf_[window.begin] = '[';
    buf_[comma] = ']';
    std::memset(buf_.data() + comma + 1, 0, simdjson::SIMDJSON_PADDING);
    buf_offset_ += comma;  // next[1] is the byte after the comma
    window.text = std::exchange(buf_, std::move(next));
    pos_ = 1;
    len_ = 1 + tail;
    pending.push_back(workers.parse(std::move(window)));
    if (options_.on_bytes_read) options_.on_bytes_read(in_.compressed_bytes());
    while (!pending.empty() && (pending.size() >= max_pending ||
                                pending.front().wait_for(std::chrono::seconds(0)) == std::future_status::ready)) {
      merge_front();
    }
  }
  while (!pending.empty()) merge_front();
  return ok;
}

Result<RankTrace> StreamingParser::parse() {
  RankTrace trace;
  trace.path = std::string(path_);
  buf_.resize(kWindow + 2 + simdjson::SIMDJSON_PADDING);

  // 1. The envelope before the events: each key is imported as soon as its value ends, so text
  // outside traceEvents is never kept whole (a value over kMaxEnvelopeValue is skipped).
  od::parser parser;
  Importer importer(path_, &trace);
  EnvelopeScanner scanner(kMaxEnvelopeValue);
  if (!fill(3)) return stream_error();
  // A UTF-8 byte order mark, as some editors and exporters write (HTA accepts it too).
  if (len_ - pos_ >= 3 && std::memcmp(buf_.data() + pos_, "\xEF\xBB\xBF", 3) == 0) pos_ += 3;
  bool found_events = false;
  if (auto status = scan_envelope(scanner, importer, parser, &trace, &found_events); !status) return status.error();
  if (!found_events) {
    if (!scanner.started()) return Error{fmt::format("{}:0: empty file (no JSON value)", path_)};
    if (!scanner.document_ended()) {
      ended_early_ = true;
      return Error{fmt::format("{}:{}: invalid or truncated JSON (the top-level object is not closed)", path_,
                               stream_offset(pos_))};
    }
    return Error{fmt::format("{}:0: no traceEvents array in the trace", path_)};
  }
  const bool legacy = scanner.legacy_array();
  trace.metadata.legacy_array = legacy;
  reserve_for(size_hint_ ? size_hint_ : kWindow * 4, &trace);

  // 2. The events, window by window (most of them on worker threads when allowed).
  if (parallel_ && !parse_windows_in_parallel(importer)) return Error{std::string(kNeedsSerial)};
  size_t window = kWindow;
  size_t array_end = 0;  // position in buf_ just after the closing bracket
  // Whether the text before pos_ ends with an element, so exactly one comma must come before the
  // next: the separator between two windows is checked as On-Demand checks it inside one (a missing
  // or doubled comma fails the same way wherever the window is cut). False after the '[' and after
  // the parallel phase, which stops just after a comma.
  bool comma_due = false;
  auto separator_error = [&] {
    return Error{fmt::format("{}:{}: invalid or truncated JSON ({})", path_, stream_offset(pos_),
                             simdjson::error_message(simdjson::TAPE_ERROR))};
  };
  while (true) {
    // Skip the separator between two elements.
    while (true) {
      if (pos_ == len_) {
        if (eof_) {
          ended_early_ = true;
          return Error{fmt::format("{}:{}: invalid or truncated JSON (the traceEvents array is not closed)", path_,
                                   stream_offset(pos_))};
        }
        if (!fill(window)) return stream_error();
        continue;
      }
      if (buf_[pos_] == ',') {
        if (!comma_due) return separator_error();
        comma_due = false;
      } else if (!is_json_space(buf_[pos_])) {
        break;
      }
      ++pos_;
    }
    // The end of the array; after a trailing comma too, as inside a window (see import_window).
    if (buf_[pos_] == ']') {
      array_end = pos_ + 1;
      break;
    }
    if (comma_due) return separator_error();
    if (len_ - pos_ < window && !eof_ && !fill(window)) return stream_error();
    // At the end of the data the whole rest is one window.
    size_t cut = len_;
    if (!eof_) {
      cut = serial_cut();
      if (cut == 0) {
        if (window >= kMaxWindow) return Error{std::string(kNeedsWholeDocument)};
        window *= 2;
        if (!fill(window)) return stream_error();
        continue;
      }
    }
    // The window is parsed in place as `[...]`. The byte after its ']' is set as a padded copy's
    // would be: On-Demand reads it (a ']' there makes it check the brackets' balance, issue 1834 of
    // simdjson), so the file's next byte would make garbage parse differently with each window size.
    const char saved_open = buf_[pos_ - 1];
    const char saved_cut = buf_[cut];
    const char saved_after = buf_[cut + 1];
    buf_[pos_ - 1] = '[';
    buf_[cut] = ']';
    buf_[cut + 1] = '\0';
    const char* start = buf_.data() + pos_ - 1;
    const size_t size = cut - (pos_ - 1) + 1;
    importer.set_window(start, size, stream_offset(pos_ - 1));
    od::document doc;
    reserve_parser(parser, size);
    simdjson::error_code e = parser.iterate(start, size, buf_.size() - (pos_ - 1)).get(doc);
    Result<size_t> resume = size_t{0};
    size_t window_array_end = size;
    if (e == simdjson::UTF8_ERROR) {
      auto bad = first_invalid_utf8(std::string_view(start, size));
      resume = Error{fmt::format("{}:{}: invalid UTF-8", path_, stream_offset(pos_ - 1) + bad.value_or(0))};
    } else if (e) {
      resume = Error{fmt::format("{}:{}: {} ({})", path_, stream_offset(pos_),
                                 eof_ ? "invalid or truncated JSON" : "invalid JSON", simdjson::error_message(e))};
    } else {
      resume = importer.import_window(doc, size - 1, &window_array_end);
    }
    buf_[pos_ - 1] = saved_open;
    buf_[cut] = saved_cut;
    buf_[cut + 1] = saved_after;
    if (!resume) return resume.error();
    if (options_.on_bytes_read) options_.on_bytes_read(in_.compressed_bytes());
    // Whether the window's text up to `next` ends with an element (rather than a comma).
    auto ends_with_element = [&](size_t next) {
      size_t at = next;
      while (at > pos_ && is_json_space(buf_[at - 1])) --at;
      return at > pos_ ? buf_[at - 1] != ',' : comma_due;
    };
    if (resume.value() == size) {
      if (window_array_end < size) {  // the real closing bracket was inside the window
        array_end = pos_ - 1 + window_array_end;
        break;
      }
      comma_due = ends_with_element(cut);
      pos_ = cut;
      window = kWindow;
      continue;
    }
    size_t next = pos_ - 1 + resume.value();
    if (next > pos_) {
      comma_due = ends_with_element(next);
      pos_ = next;
      window = kWindow;
      continue;
    }
    // Not even one element fits: a very long event, or the data ends inside it.
    if (eof_) {
      ended_early_ = true;
      return Error{fmt::format("{}:{}: invalid or truncated JSON (an event is cut short)", path_, stream_offset(pos_))};
    }
    if (window >= kMaxWindow) return Error{std::string(kNeedsWholeDocument)};
    window *= 2;
    if (!fill(window)) return stream_error();
  }
  importer.finish_warnings();

  // 3. The keys after the events, and nothing but white space after the document.
  pos_ = array_end;
  scanner.events_array_closed();
  bool second_events = false;
  if (auto status = scan_envelope(scanner, importer, parser, &trace, &second_events); !status) return status.error();
  if (second_events) {
    return Error{
        fmt::format("{}:{}: a second traceEvents array (only one is supported)", path_, stream_offset(pos_ - 1))};
  }
  if (!scanner.document_ended()) {
    ended_early_ = true;
    return Error{fmt::format("{}:{}: invalid or truncated JSON (the top-level object is not closed)", path_,
                             stream_offset(pos_))};
  }
  importer.finish_warnings();
  if (!in_.warning().empty()) trace.warnings.push_back(in_.warning());
  trace.stats.json_bytes = stream_offset(len_);
  trace.stats.compressed_bytes = in_.compressed_bytes();
  if (auto status = finalize(&trace); !status) return status.error();
  return trace;
}

}  // namespace

Result<RankTrace> parse_kineto_stream(std::string_view path, ByteStream& in, const ParseOptions& options) {
  StreamingParser streaming(path, in, options, in.size_hint());
  return streaming.parse();
}

Result<RankTrace> parse_kineto_stream(std::string_view path, const StreamOpener& open, const ParseOptions& options) {
  std::string error;
  std::unique_ptr<ByteStream> in = open(&error);
  if (!in) return Error{std::move(error)};
  StreamingParser parallel(path, *in, options, in->size_hint(), /*parallel=*/true);
  auto parsed = parallel.parse();
  // Any failure is read again serially, so an error names the same place and words whatever the
  // thread count (the parallel phase can meet a defect in a different window first); errors are rare.
  if (parsed.ok()) return parsed;
  in = open(&error);
  if (!in) return Error{std::move(error)};
  return parse_kineto_stream(path, *in, options);
}

namespace {
Result<RankTrace> finish_read(const std::string& path, const ParseOptions& options, bool replayable,
                              const StreamingParser& streaming, std::unique_ptr<ByteStream> in,
                              Result<RankTrace> streamed);
}  // namespace

Result<RankTrace> read_kineto_trace(const std::string& path, const ParseOptions& options) {
  std::string error;
  std::unique_ptr<ByteStream> in = open_trace_stream(path, &error);
  if (!in) return Error{std::move(error)};
  // A pipe cannot be opened twice: its text is recorded (to disk) for the whole-document retry.
  const bool replayable = is_regular_file(path);
  if (!replayable) {
    if (auto recording = recording_stream(std::move(in))) {
      in = std::move(recording);
    } else {
      return Error{fmt::format("{}: cannot create a temporary file to read a non-regular input", path)};
    }
  }
  StreamingParser streaming(path, *in, options, in->size_hint(), /*parallel=*/replayable);
  auto streamed = streaming.parse();
  if (!streamed.ok() && streamed.error().message == kNeedsSerial) {
    // A window did not parse on its own: read again on this thread alone.
    in = open_trace_stream(path, &error);
    if (!in) return Error{std::move(error)};
    StreamingParser serial(path, *in, options, in->size_hint());
    return finish_read(path, options, replayable, serial, std::move(in), serial.parse());
  }
  return finish_read(path, options, replayable, streaming, std::move(in), std::move(streamed));
}

namespace {

// After a streaming read of `path`: the result, or when that failed with JSON lenient mode may
// repair (or an element larger than the largest window), the whole-document parse.
Result<RankTrace> finish_read(const std::string& path, const ParseOptions& options, bool replayable,
                              const StreamingParser& streaming, std::unique_ptr<ByteStream> in,
                              Result<RankTrace> streamed) {
  std::string error;
  if (streamed.ok()) return streamed;
  const std::string& message = streamed.error().message;
  const bool json_problem = message == kNeedsWholeDocument || message.find("invalid JSON") != std::string::npos ||
                            message.find("truncated JSON") != std::string::npos;
  // Nothing to repair in data that ends too soon: retrying would only hold the whole text in memory.
  if (!json_problem || streaming.ended_early() || (message != kNeedsWholeDocument && !options.lenient)) {
    return streamed;
  }
  // An element over 256 MiB, or JSON lenient mode may repair: parse the whole document at once.
  if (replayable) {
    in = open_trace_stream(path, &error);
  } else if (in = replay_recording(std::move(in), &error); !in) {
    error = fmt::format("{}: {}", path, error);
  }
  if (!in) return Error{std::move(error)};
  auto text = read_whole_stream(*in);
  if (!text) return text.error();
  auto whole = parse_kineto_trace(path, text.value(), options);
  if (whole) {
    whole.value().stats.compressed_bytes = in->compressed_bytes();
    if (!in->warning().empty()) whole.value().warnings.push_back(in->warning());
  }
  if (!whole && message != kNeedsWholeDocument) return streamed;  // the streaming error has the better offset
  return whole;
}

}  // namespace

}  // namespace scaleprof::trace
