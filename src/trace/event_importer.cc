#include "trace/event_importer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <tuple>
#include <type_traits>

#include "core/time_bounds.h"
#include "trace/category.h"
#include "trace/number_parse.h"

namespace scaleprof::trace {

namespace {

bool fits_int32(int64_t v) {
  return v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max();
}

// A launch argument (device, grid, block, registers) for the 32-bit device-args columns: one past
// 32 bits is absent (-1), never truncated to a wrong small number.
int32_t int32_or_absent(int64_t v) {
  return fits_int32(v) ? static_cast<int32_t>(v) : -1;
}

}  // namespace

void EventImporter::warn(size_t offset, std::string_view message) {
  if (out_->warnings.size() < kMaxWarningsPerFile) {
    out_->warnings.push_back(Diagnostic{Severity::kError, fmt::format("{}:{}", path_, offset), std::string(message)});
  } else {
    ++warnings_dropped_;
  }
}

std::string EventImporter::structural_error(od::document& doc, simdjson::error_code e) const {
  const char* loc = nullptr;
  size_t offset = size_;
  if (!doc.current_location().get(loc)) offset = offset_of(loc);
  if (e == simdjson::INCOMPLETE_ARRAY_OR_OBJECT || e == simdjson::TAPE_ERROR || e == simdjson::EMPTY ||
      e == simdjson::OUT_OF_BOUNDS) {
    return fmt::format("{}:{}: invalid or truncated JSON ({})", path_, offset, simdjson::error_message(e));
  }
  return fmt::format("{}:{}: invalid JSON ({})", path_, offset, simdjson::error_message(e));
}

uint32_t EventImporter::track_for(const PidOrTid& pid, const PidOrTid& tid) {
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

bool EventImporter::read_pid_or_tid(od::value& v, PidOrTid* out) {
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

simdjson::error_code EventImporter::import_args(od::object args, EventArgs* a) {
  for (auto field_result : args) {
    if (auto e = field_result.error()) return e;
    // Used in place: moving the field out copies it through the stack in pieces that the next
    // 16-byte load cannot forward from (a store-forwarding stall on every field, seen with perf).
    od::field& field = field_result.value_unsafe();
    const char* k = field.key().raw();
    od::value& v = field.value();
    if (a->collect_counters) {
      // A CUPTI counter: the key up to its closing quote (stage 1 found one; counter names have no
      // escapes, and one with escapes keeps them as written), the value if it is a number.
      double x = 0;
      od::json_type type;
      if (!v.type().get(type) && type == od::json_type::number && !v.get_double().get(x)) {
        a->counters.emplace_back(std::string_view(k, std::strchr(k, '"') - k), x);
      }
      continue;
    }
    // Dispatch on the first character, then compare in place; unknown keys are skipped unread.
    switch (k[0]) {
      case 'E':
        if (key_is(k, "External id")) read_int(v, &a->external_id);
        break;
      case 'A':
        if (key_is(k, "Addr")) read_int(v, &a->write_memory().addr);
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
        if (key_is(k, "warps per SM")) {
          a->has_device_args |= read_double(v, &a->write_device().warps_per_sm);
        } else if (key_is(k, "wait_on_cuda_event_record_corr_id")) {
          read_int(v, &a->write_sync_wait().record_correlation);
        } else if (key_is(k, "wait_on_stream")) {
          read_int(v, &a->write_sync_wait().wait_on_stream);
        }
        break;
      case 'C':
        if (key_is(k, "Collective name")) {
          a->has_collective |= read_string(v, &a->write_collective().name);
        } else if (key_is(k, "Concrete Inputs")) {
          read_raw(v, &a->write_shapes().concrete_inputs);  // scalars of the call (stride, groups, ...)
        }
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
        if (key_is(k, "Seq")) {
          read_int(v, &a->write_collective().seq);
        } else if (key_is(k, "Src Rank")) {
          read_int(v, &a->write_collective().peer_rank);
        }
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
        } else if (key_is(k, "Dst Rank")) {
          read_int(v, &a->write_collective().peer_rank);
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

simdjson::error_code EventImporter::import_event(od::value& v) {
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
            args.collect_counters = has_cat && cat == "cuda_profiler_range";
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
  if (instant && (!fits_int32(args.memory.device_type) || !fits_int32(args.memory.device_id))) {
    // The memory table keeps them in 32 bits: a Device Id of 2^32 would have become device 0.
    return reject("has a Device Type or Device Id outside the 32-bit range");
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
void EventImporter::add_rows(int64_t ts, int64_t dur, const std::string_view* name, const std::string_view* cat,
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
    m.addr.push_back(args.memory.addr);
    return;
  }
  // Only events that carry a device argument: nothing reads a row of absent values, which cost 72
  // bytes per kernel of traces whose kernels have no args (issue 18, finding 20).
  if (args.has_device_args) {
    DeviceArgsTable& d = t.device_args;
    d.event.push_back(row);
    d.device.push_back(int32_or_absent(args.device.device));
    d.bytes.push_back(args.device.bytes);
    d.bandwidth_gbps.push_back(args.device.bandwidth);
    d.grid_x.push_back(int32_or_absent(args.device.grid[0]));
    d.grid_y.push_back(int32_or_absent(args.device.grid[1]));
    d.grid_z.push_back(int32_or_absent(args.device.grid[2]));
    d.block_x.push_back(int32_or_absent(args.device.block[0]));
    d.block_y.push_back(int32_or_absent(args.device.block[1]));
    d.block_z.push_back(int32_or_absent(args.device.block[2]));
    d.registers_per_thread.push_back(int32_or_absent(args.device.registers));
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
    c.peer_rank.push_back(args.collective.peer_rank);
    c.in_split_sizes.push_back(t.strings.intern(args.collective.in_split));
    c.out_split_sizes.push_back(t.strings.intern(args.collective.out_split));
  }
  if (args.sync_wait.record_correlation != kNone && category == Category::kCudaSync) {
    SyncWaitTable& w = t.sync_waits;
    w.event.push_back(row);
    w.record_correlation.push_back(args.sync_wait.record_correlation);
    w.wait_on_stream.push_back(args.sync_wait.wait_on_stream);
  }
  if (!args.shapes.input_dims.empty() || !args.shapes.input_types.empty()) {
    ShapesTable& s = t.shapes;
    s.event.push_back(row);
    s.input_dims.push_back(t.strings.intern(args.shapes.input_dims));
    s.input_types.push_back(t.strings.intern(args.shapes.input_types));
    s.concrete_inputs.push_back(t.strings.intern(args.shapes.concrete_inputs));
  }
  if (!args.counters.empty() && category == Category::kCudaProfilerRange) {
    CounterArgsTable& k = t.counter_args;
    for (const auto& [key, value] : args.counters) {
      k.event.push_back(row);
      k.name.push_back(t.strings.intern(key));
      k.value.push_back(value);
    }
  }
}

simdjson::error_code EventImporter::import_events(od::array events) {
  for (auto element : events) {
    od::value v;
    if (auto e = std::move(element).get(v)) return e;
    if (auto e = import_event(v)) return e;
  }
  return simdjson::SUCCESS;
}

void EventImporter::finish_warnings() {
  if (warnings_dropped_ > 0) {
    out_->warnings.push_back(Diagnostic{Severity::kNote, std::string(path_),
                                        fmt::format("{} more warnings like the above not shown", warnings_dropped_)});
    warnings_dropped_ = 0;
  }
}

Result<size_t> EventImporter::import_window(od::document& doc, size_t cut, size_t* array_end) {
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
void shrink_event_rows(RankTrace* t) {
  EventTable& e = t->events;
  if (e.ts.capacity() - e.ts.size() < (1U << 20)) return;
  auto fit = [](auto&... columns) { (columns.shrink_to_fit(), ...); };
  fit(e.ts, e.dur, e.name, e.cat_name, e.cat, e.phase, e.track, e.correlation, e.external_id, e.stream, e.file_index);
}

void reserve_event_rows(size_t json_bytes, RankTrace* t) {
  // Kineto events average 200-300 bytes of JSON; reserving avoids repeated regrowth of every column.
  size_t rows = json_bytes / 150 + 16;
  EventTable& e = t->events;
  auto reserve = [rows](auto&... columns) { (columns.reserve(rows), ...); };
  reserve(e.ts, e.dur, e.name, e.cat_name, e.cat, e.phase, e.track, e.correlation, e.external_id, e.stream,
          e.file_index);
}

void reserve_rows_at_density(RankTrace* t, uint64_t bytes_read, uint64_t total_bytes) {
  EventTable& e = t->events;
  if (bytes_read == 0 || total_bytes <= bytes_read || e.ts.empty()) return;
  // 5 % over the density seen; at most a row per 16 bytes (no event is shorter), whatever a
  // wrong size hint says.
  const double at_density =
      static_cast<double>(e.ts.size()) * static_cast<double>(total_bytes) / static_cast<double>(bytes_read) * 1.05;
  const auto rows = std::min(static_cast<size_t>(at_density), static_cast<size_t>(total_bytes / 16));
  if (rows <= e.ts.capacity()) return;
  auto reserve = [rows](auto&... columns) { (columns.reserve(rows), ...); };
  reserve(e.ts, e.dur, e.name, e.cat_name, e.cat, e.phase, e.track, e.correlation, e.external_id, e.stream,
          e.file_index);
}

namespace {

// One table's part of rows_to_map: `rows` more rows of its columns, past what `mark` covers.
template <class... Columns>
void table_rows_to_map(size_t rows, RowsMapped* mark, std::vector<std::span<char>>* out, Columns&... columns) {
  const auto& first = std::get<0>(std::tie(columns...));
  const size_t size = first.size();
  // A column that grew past its capacity moved: what was mapped was the old block's.
  if (first.data() != mark->at) mark->rows = size;
  // Asked again once fewer than half of `rows` are left mapped: a request every few merges.
  if (rows == 0 || mark->rows >= size + rows / 2) return;
  const size_t from = std::max(mark->rows, size);
  auto one = [&](auto& column) {
    using T = typename std::remove_reference_t<decltype(column)>::value_type;
    const size_t end = std::min(size + rows, column.capacity());
    if (from >= end) return;
    // Past size(), within capacity: allocated, not yet constructed; only its pages are mapped.
    char* base = reinterpret_cast<char*>(column.data());
    out->emplace_back(base + from * sizeof(T), (end - from) * sizeof(T));
  };
  (one(columns), ...);
  mark->rows = size + rows;
  mark->at = first.data();
}

}  // namespace

void rows_to_map(RankTrace* t, const RankTrace& part, size_t windows, RowsAhead* marks,
                 std::vector<std::span<char>>* out) {
  EventTable& e = t->events;
  // At least a few rows, so a window without events does not make every merge ask again.
  table_rows_to_map(windows * std::max<size_t>(part.events.size(), 64), &marks->events, out, e.ts, e.dur.slots(),
                    e.name, e.cat_name, e.cat, e.phase, e.track, e.correlation.slots(), e.external_id.slots(),
                    e.stream.slots(), e.file_index);
  DeviceArgsTable& d = t->device_args;
  table_rows_to_map(windows * part.device_args.size(), &marks->device_args, out, d.event, d.device, d.bytes,
                    d.bandwidth_gbps, d.grid_x, d.grid_y, d.grid_z, d.block_x, d.block_y, d.block_z,
                    d.registers_per_thread, d.shared_memory, d.blocks_per_sm, d.warps_per_sm, d.occupancy_pct);
  CollectiveTable& c = t->collectives;
  table_rows_to_map(windows * part.collectives.size(), &marks->collectives, out, c.event, c.collective_name, c.dtype,
                    c.in_msg_nelems, c.out_msg_nelems, c.group_size, c.process_group_name, c.process_group_desc,
                    c.process_group_ranks, c.seq, c.peer_rank, c.in_split_sizes, c.out_split_sizes);
  MemoryTable& m = t->memory;
  table_rows_to_map(windows * part.memory.size(), &marks->memory, out, m.event, m.bytes, m.total_allocated,
                    m.total_reserved, m.device_type, m.device_id, m.addr);
  ShapesTable& sh = t->shapes;
  table_rows_to_map(windows * part.shapes.size(), &marks->shapes, out, sh.event, sh.input_dims, sh.input_types,
                    sh.concrete_inputs);
}

void clear_for_reuse(RankTrace* t, bool keep_strings) {
  auto clear = [](auto&... columns) { (columns.clear(), ...); };
  EventTable& e = t->events;
  clear(e.ts, e.dur, e.name, e.cat_name, e.cat, e.phase, e.track, e.correlation, e.external_id, e.stream, e.file_index);
  DeviceArgsTable& d = t->device_args;
  clear(d.event, d.device, d.bytes, d.bandwidth_gbps, d.grid_x, d.grid_y, d.grid_z, d.block_x, d.block_y, d.block_z,
        d.registers_per_thread, d.shared_memory, d.blocks_per_sm, d.warps_per_sm, d.occupancy_pct);
  CollectiveTable& c = t->collectives;
  clear(c.event, c.collective_name, c.dtype, c.in_msg_nelems, c.out_msg_nelems, c.group_size, c.process_group_name,
        c.process_group_desc, c.process_group_ranks, c.seq, c.peer_rank, c.in_split_sizes, c.out_split_sizes);
  MemoryTable& m = t->memory;
  clear(m.event, m.bytes, m.total_allocated, m.total_reserved, m.device_type, m.device_id, m.addr);
  clear(t->shapes.event, t->shapes.input_dims, t->shapes.input_types, t->shapes.concrete_inputs);
  clear(t->sync_waits.event, t->sync_waits.record_correlation, t->sync_waits.wait_on_stream);
  clear(t->counter_args.event, t->counter_args.name, t->counter_args.value);
  clear(t->tracks.pid, t->tracks.tid, t->tracks.pid_label, t->tracks.tid_label);
  // Whatever else a part holds is small: reset to a new trace's.
  if (!keep_strings) t->strings = StringPool();
  t->warnings.clear();
  t->rank = 0;
  t->path.clear();
  t->metadata = TraceMetadata{};
  t->stats = ReadStats{};
}

Status finalize_trace(RankTrace* trace) {
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
  return Ok{};
}

}  // namespace scaleprof::trace
