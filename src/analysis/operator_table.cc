#include "analysis/operator_table.h"

#include <algorithm>
#include <array>
#include <numeric>
#include <unordered_map>

#include "analysis/device_events.h"
#include "analysis/profiler_steps.h"
#include "core/run_sort.h"

namespace scaleprof::analysis {

namespace {

using trace::Category;
using trace::RankTrace;
using trace::StringId;

// How an event takes part in the table.
enum class EventKind : uint8_t { kSkip, kHost, kDevice };

EventKind kind_of(Category c) {
  // Device work as every analysis classifies it, plus the device rows torch also lists: device
  // annotations and CUPTI range-profiler records.
  if (is_device_work(c) || c == Category::kGpuUserAnnotation || c == Category::kCudaProfilerRange) {
    return EventKind::kDevice;
  }
  switch (c) {
    case Category::kCpuOp:
    case Category::kUserAnnotation:
    case Category::kCudaRuntime:
    case Category::kCudaDriver:
    case Category::kCollectiveComm:
    case Category::kPythonFunction:  // with_stack=True: torch's key_averages() lists and nests them too
    case Category::kNone:            // PyTorch's legacy exporter writes no `cat`; its events are all CPU ops
    case Category::kUnknown:         // torch maps activity types it does not know to the CPU
      return EventKind::kHost;
    default:  // instants ([memory] goes through MemoryTable),
              // the Trace span and CUPTI overhead (never torch events)
      return EventKind::kSkip;
  }
}

// Host ops that own a correlation id kernels can point at (torch's "frontend" events); runtime and
// driver calls are themselves linked to such an op.
bool is_frontend(Category c) {
  return c == Category::kCpuOp || c == Category::kUserAnnotation || c == Category::kNone || c == Category::kUnknown;
}

constexpr std::array<std::string_view, 8> kFilteredNames = {
    "[memory]",
    "[OutOfMemory]",
    "profiler::_record_function_enter",
    "profiler::_record_function_enter_new",
    "profiler::_record_function_exit",
    "aten::is_leaf",
    "aten::output_nr",
    "aten::_version",
};

// c10::DeviceType values torch counts as CPU or device memory (profiler.py `_cpu_memory_usage`).
bool is_cpu_memory(int32_t device_type) {
  return device_type == 0 || device_type == 2 || device_type == 5;
}
bool is_device_memory(int32_t device_type) {
  return device_type == 1 || device_type == 6 || device_type == 12 || device_type == 20;
}

// Facts about a name, computed once per distinct string.
struct NameInfo {
  bool known = false;
  bool filtered = false;
  bool backend_collective = false;
  StringId canonical = 0;  // every ProfilerStep#N maps to one id, so they share a row
};

struct MemoryRecord {
  int64_t ts;
  int64_t cpu_bytes;
  int64_t device_bytes;
};

}  // namespace

bool is_backend_collective_name(std::string_view name) {
  for (std::string_view prefix : {"gloo:", "nccl:", "mpi:", "ucc:", "xccl:", "mccl:"}) {
    if (name.starts_with(prefix)) return true;
  }
  return false;
}

std::string_view operator_display_name(std::string_view name) {
  return is_profiler_step_name(name) ? kAllProfilerStepsName : name;
}

OperatorTable compute_operator_table(const RankTrace& trace, const OperatorTableOptions& options,
                                     std::vector<OperatorCall>* calls) {
  const trace::EventTable& ev = trace.events;
  const size_t n = ev.size();
  OperatorTable table;

  std::vector<NameInfo> names(trace.strings.size());
  StringId profiler_step_id = 0;
  bool have_profiler_step_id = false;
  auto name_info = [&](StringId id) -> const NameInfo& {
    NameInfo& info = names[id];
    if (info.known) return info;
    std::string_view s = trace.strings.view(id);
    info.known = true;
    info.filtered = std::find(kFilteredNames.begin(), kFilteredNames.end(), s) != kFilteredNames.end();
    info.backend_collective = is_backend_collective_name(s);
    info.canonical = id;
    if (is_profiler_step_name(s)) {
      if (!have_profiler_step_id) profiler_step_id = id;
      have_profiler_step_id = true;
      info.canonical = profiler_step_id;
    }
    return info;
  };

  // Host calls still open when the profiler stopped are written by Kineto as ending at "Record Window
  // End" (when the trace was written), while torch ends them at the stop time, the end of the
  // profiler's Trace span ("PyTorch Profiler (0)"); async gloo/nccl work is the usual case.
  int64_t stop_ns = std::numeric_limits<int64_t>::max();
  for (size_t i = 0; i < n; ++i) {
    if (ev.cat[i] == Category::kTrace && ev.phase[i] == trace::Phase::kComplete) {
      stop_ns = stop_ns == std::numeric_limits<int64_t>::max() ? ev.end(i) : std::max(stop_ns, ev.end(i));
    }
  }
  // 1. Which events count, and which host calls are async.
  std::vector<EventKind> kind(n, EventKind::kSkip);
  std::vector<uint8_t> async(n, 0);
  // Host durations as torch sees them: computed where used rather than copied (8 bytes per event).
  auto ended_at_stop = [&](size_t i) {
    return kind[i] == EventKind::kHost && ev.end(i) > stop_ns && ev.ts[i] <= stop_ns;
  };
  auto dur = [&](size_t i) { return ended_at_stop(i) ? stop_ns - ev.ts[i] : ev.dur[i]; };
  auto end = [&](size_t i) { return ev.ts[i] + dur(i); };
  for (size_t i = 0; i < n; ++i) {
    if (ev.phase[i] != trace::Phase::kComplete) continue;
    const NameInfo& info = name_info(ev.name[i]);
    if (info.filtered) continue;
    kind[i] = kind_of(ev.cat[i]);
    if (ended_at_stop(i)) ++table.calls_ended_at_stop;
    if (kind[i] == EventKind::kHost && options.backend_collectives_async && info.backend_collective &&
        ev.cat[i] == Category::kUserAnnotation) {
      async[i] = 1;
      ++table.async_calls;
    }
  }

  // 2. Kernel attribution by External id, before nesting (torch appends kernels while parsing).
  // Per event only once a device event is attributed: where none reaches an op (MTIA runtime calls
  // without an External id) the array would be all zeros, 8 bytes per event at this function's peak.
  std::vector<int64_t> kernel_ns;
  // Device events no External id linked to an op, but with a correlation id: step 3b tries their
  // launch's place in the host call tree.
  std::vector<uint32_t> launched_unlinked;
  if (!options.host_times_only) {
    std::vector<std::pair<int64_t, uint32_t>> frontend_by_id;
    for (size_t i = 0; i < n; ++i) {
      if (kind[i] == EventKind::kHost && !async[i] && is_frontend(ev.cat[i]) && ev.external_id[i] != trace::kNone) {
        frontend_by_id.emplace_back(ev.external_id[i], static_cast<uint32_t>(i));
      }
    }
    std::sort(frontend_by_id.begin(), frontend_by_id.end());
    // Device events without an External id (MTIA writes only `correlation` on its device events;
    // Kineto also omits it on unlinked CUDA work) reach their op through the launching runtime call:
    // the runtime/driver event with the same correlation id carries the op's External id.
    std::unordered_map<int64_t, int64_t> external_by_correlation;
    for (size_t i = 0; i < n; ++i) {
      if (ev.phase[i] == trace::Phase::kComplete && trace::is_runtime_category(ev.cat[i]) &&
          ev.correlation[i] != trace::kNone && ev.external_id[i] != trace::kNone) {
        external_by_correlation.try_emplace(ev.correlation[i], ev.external_id[i]);
      }
    }
    auto external_id_of = [&](size_t i) {
      if (ev.external_id[i] != trace::kNone || ev.correlation[i] == trace::kNone) return ev.external_id[i];
      auto it = external_by_correlation.find(ev.correlation[i]);
      return it == external_by_correlation.end() ? trace::kNone : it->second;
    };
    for (size_t i = 0; i < n; ++i) {
      if (kind[i] != EventKind::kDevice || ev.cat[i] == Category::kGpuUserAnnotation) continue;
      const int64_t external_id = external_id_of(i);
      auto it =
          std::lower_bound(frontend_by_id.begin(), frontend_by_id.end(), std::make_pair(external_id, uint32_t{0}));
      bool matched = false;
      for (; external_id != trace::kNone && it != frontend_by_id.end() && it->first == external_id; ++it) {
        if (kernel_ns.empty()) kernel_ns.assign(n, 0);
        kernel_ns[it->second] += ev.dur[i];
        matched = true;
      }
      if (!matched && ev.correlation[i] != trace::kNone) launched_unlinked.push_back(static_cast<uint32_t>(i));
      ++(matched ? table.attributed_device_events : table.unattributed_device_events);
    }
  }

  // 3. Nesting per thread: pre-order = sorted by (track, start, -end), file order breaking ties.
  // The threads' events interleave in the file but each thread's come almost in order: placed by
  // track first (a counting sort keeps file order), each track's calls are a run or a few to merge
  // (a stable_sort of the whole list was a sixth of the table's time on df_index_resolver).
  std::vector<uint32_t> order;
  {
    std::vector<uint32_t> track_begin;  // track t's calls are order[track_begin[t], track_begin[t + 1])
    uint32_t tracks = 0;
    for (size_t i = 0; i < n; ++i) {
      if (kind[i] == EventKind::kHost && !async[i]) tracks = std::max(tracks, ev.track[i] + 1);
    }
    track_begin.assign(size_t{tracks} + 1, 0);
    for (size_t i = 0; i < n; ++i) {
      if (kind[i] == EventKind::kHost && !async[i]) ++track_begin[ev.track[i] + 1];
    }
    for (size_t t = 0; t < tracks; ++t) track_begin[t + 1] += track_begin[t];
    order.resize(track_begin[tracks]);
    std::vector<uint32_t> next(track_begin.begin(), track_begin.end() - 1);
    for (size_t i = 0; i < n; ++i) {
      if (kind[i] == EventKind::kHost && !async[i]) order[next[ev.track[i]]++] = static_cast<uint32_t>(i);
    }
    auto earlier = [&](uint32_t a, uint32_t b) {
      if (ev.ts[a] != ev.ts[b]) return ev.ts[a] < ev.ts[b];
      return end(a) > end(b);
    };
    for (size_t t = 0; t < tracks; ++t) {
      stable_sort_runs(order.begin() + track_begin[t], order.begin() + track_begin[t + 1], earlier);
    }
  }
  std::vector<int32_t> parent(n, -1);
  std::vector<int32_t> child_count(n, 0);
  {
    std::vector<uint32_t> stack;
    uint32_t track = 0;
    for (uint32_t i : order) {
      if (stack.empty() || ev.track[i] != track) {
        stack.clear();
        track = ev.track[i];
      }
      while (!stack.empty()) {
        uint32_t top = stack.back();
        if (ev.ts[i] >= end(top) || end(i) > end(top)) {
          stack.pop_back();
        } else {
          parent[i] = static_cast<int32_t>(top);
          ++child_count[top];
          break;
        }
      }
      stack.push_back(i);
    }
  }

  // 3b. A device event whose launching runtime call (same correlation id) carries no External id
  // belongs to the innermost host op the call is nested in on its thread, as torch's tree puts it
  // there: MTIA writes no External id on its runtime calls, so without this every MTIA kernel stays
  // unattributed. The call is a host event of the nesting above (runtime categories are host).
  if (!launched_unlinked.empty()) {
    std::unordered_map<int64_t, uint32_t> runtime_by_correlation;
    for (size_t i = 0; i < n; ++i) {
      if (kind[i] == EventKind::kHost && trace::is_runtime_category(ev.cat[i]) && ev.correlation[i] != trace::kNone) {
        runtime_by_correlation.try_emplace(ev.correlation[i], static_cast<uint32_t>(i));
      }
    }
    for (uint32_t d : launched_unlinked) {
      const auto launch = runtime_by_correlation.find(ev.correlation[d]);
      if (launch == runtime_by_correlation.end()) continue;
      int32_t op = parent[launch->second];
      while (op >= 0 && !is_frontend(ev.cat[static_cast<size_t>(op)])) op = parent[static_cast<size_t>(op)];
      if (op < 0) continue;
      if (kernel_ns.empty()) kernel_ns.assign(n, 0);
      kernel_ns[static_cast<size_t>(op)] += ev.dur[d];
      --table.unattributed_device_events;
      ++table.attributed_device_events;
    }
  }

  // 4. The dup-node rule. In pre-order a parent is final when its children are visited, so one pass
  // reaches torch's fixpoint; removed nodes forward their children to their own parent.
  std::vector<uint8_t> removed(n, 0);
  for (uint32_t i : order) {
    int32_t p = parent[i];
    while (p >= 0 && removed[p]) p = parent[p];
    parent[i] = p;
    if (p >= 0 && child_count[p] == 1 && name_info(ev.name[p]).canonical == name_info(ev.name[i]).canonical) {
      removed[i] = 1;
      child_count[p] = child_count[i];
      if (!kernel_ns.empty()) kernel_ns[p] = kernel_ns[i];  // torch replaces the parent's kernels by the child's
      ++table.dup_nodes_removed;
    }
  }

  // What only steps 3-4 needed is freed before the per-event arrays of steps 5-6 are allocated (step
  // 2's lookups went with its block): the peak of this function is the operator table's share of
  // `trace summary`'s peak memory. (swap with an empty one: `= {}` would assign an empty list and keep
  // the memory.)
  std::vector<int32_t>().swap(child_count);

  // 5. Memory records inside each host call's closed interval, on any thread.
  std::vector<MemoryRecord> records;
  std::vector<MemoryRecord> oom_records;
  for (size_t m = 0; m < (options.host_times_only ? 0 : trace.memory.size()); ++m) {
    const uint32_t e = trace.memory.event[m];
    const int32_t type = trace.memory.device_type[m];
    MemoryRecord r{ev.ts[e], is_cpu_memory(type) ? trace.memory.bytes[m] : 0,
                   is_device_memory(type) ? trace.memory.bytes[m] : 0};
    (trace.name(e) == "[OutOfMemory]" ? oom_records : records).push_back(r);
  }
  table.has_memory = !records.empty();
  std::stable_sort(records.begin(), records.end(),
                   [](const MemoryRecord& a, const MemoryRecord& b) { return a.ts < b.ts; });
  std::vector<int64_t> cpu_prefix(records.size() + 1, 0), device_prefix(records.size() + 1, 0);
  for (size_t r = 0; r < records.size(); ++r) {
    cpu_prefix[r + 1] = cpu_prefix[r] + records[r].cpu_bytes;
    device_prefix[r + 1] = device_prefix[r] + records[r].device_bytes;
  }
  std::vector<int32_t> covered(records.size() + 1, 0);  // difference array: records inside some host call
  // The memory records inside host call i's closed interval, as CPU and device bytes: computed where
  // they are summed rather than kept per event (16 bytes per event less at this function's peak).
  struct Bytes {
    int64_t cpu = 0;
    int64_t device = 0;
  };
  auto memory_of = [&](size_t i) {
    auto ts_less = [](const MemoryRecord& r, int64_t t) { return r.ts < t; };
    auto less_ts = [](int64_t t, const MemoryRecord& r) { return t < r.ts; };
    const size_t lo = std::lower_bound(records.begin(), records.end(), ev.ts[i], ts_less) - records.begin();
    const size_t hi = std::upper_bound(records.begin(), records.end(), end(i), less_ts) - records.begin();
    if (lo >= hi) return Bytes{};
    ++covered[lo];
    --covered[hi];
    return Bytes{cpu_prefix[hi] - cpu_prefix[lo], device_prefix[hi] - device_prefix[lo]};
  };

  // 6. Rows, keyed like torch's key_averages, in order of first appearance: each counted event's row
  // first, so that a call can take its children's times off its parent's row whatever their order
  // in the file.
  // By (canonical name id, side, annotation): a flat index rather than a hash map, since every
  // counted event looks its row up.
  std::vector<int32_t> row_of(4 * trace.strings.size(), -1);
  std::vector<int64_t> row_async_calls;
  auto row_for = [&](StringId canonical, std::string_view name, OpSide side, bool user_annotation) -> uint32_t {
    int32_t& index =
        row_of[(size_t{canonical} << 2) | (side == OpSide::kDevice ? 2u : 0u) | (user_annotation ? 1u : 0u)];
    if (index < 0) {
      index = static_cast<int32_t>(table.rows.size());
      OperatorRow& row = table.rows.emplace_back();
      row.name = std::string(operator_display_name(name));
      row.side = side;
      row.user_annotation = user_annotation;
      row_async_calls.push_back(0);
    }
    return static_cast<uint32_t>(index);
  };
  std::vector<uint32_t> row_index(n, 0);
  for (size_t i = 0; i < n; ++i) {
    if (kind[i] == EventKind::kSkip || removed[i]) continue;
    const NameInfo& info = name_info(ev.name[i]);
    row_index[i] =
        kind[i] == EventKind::kDevice
            ? row_for(info.canonical, trace.name(i), OpSide::kDevice, ev.cat[i] == Category::kGpuUserAnnotation)
            : row_for(info.canonical, trace.name(i), OpSide::kHost, ev.cat[i] == Category::kUserAnnotation);
  }

  // 7. Each event's own times into its row, and (self times being a call's own less its children's)
  // a call's times out of its parent's row: sums per row, not per event (the children's sums were
  // four arrays of 8 bytes per event).
  // Per call only when asked: the index of each host call's entry in *calls.
  std::vector<int32_t> call_of;
  if (calls != nullptr) {
    call_of.assign(n, -1);
    calls->reserve(calls->size() + order.size());
  }
  for (size_t i = 0; i < n; ++i) {
    if (kind[i] == EventKind::kSkip || removed[i]) continue;
    OperatorRow& row = table.rows[row_index[i]];
    if (calls != nullptr && kind[i] == EventKind::kHost) {
      call_of[i] = static_cast<int32_t>(calls->size());
      calls->push_back({static_cast<uint32_t>(i), row_index[i], parent[i], async[i] ? 0 : dur(i)});
    }
    if (kind[i] == EventKind::kDevice) {
      ++row.calls;
      row.self_device_ns += ev.dur[i];
      row.device_total_ns += ev.dur[i];
      continue;
    }
    ++row.calls;
    row.cpu_total_ns += dur(i);
    const Bytes bytes = records.empty() ? Bytes{} : memory_of(i);
    row.cpu_memory_bytes += bytes.cpu;
    row.device_memory_bytes += bytes.device;
    if (async[i]) {
      ++row_async_calls[row_index[i]];
      continue;
    }
    row.self_cpu_ns += dur(i);
    if (!kernel_ns.empty()) row.self_device_ns += kernel_ns[i];
    row.self_cpu_memory_bytes += bytes.cpu;
    row.self_device_memory_bytes += bytes.device;
    if (parent[i] < 0) continue;
    OperatorRow& parent_row = table.rows[row_index[parent[i]]];
    parent_row.self_cpu_ns -= dur(i);
    parent_row.self_cpu_memory_bytes -= bytes.cpu;
    parent_row.self_device_memory_bytes -= bytes.device;
  }

  // A call's children come off its own self time too; its entry may come later in event order than
  // theirs, so this is a pass of its own.
  if (calls != nullptr) {
    for (const OperatorCall& c : *calls) {
      if (c.parent < 0 || async[c.event]) continue;
      (*calls)[static_cast<size_t>(call_of[static_cast<size_t>(c.parent)])].self_ns -= dur(c.event);
    }
  }

  // 8. Device time of each call's subtree, bottom-up (reverse pre-order visits children before
  // parents): kernel_ns, already in the rows as self time, becomes the subtree's total in place.
  for (auto it = order.rbegin(); it != order.rend() && !kernel_ns.empty(); ++it) {
    const uint32_t i = *it;
    if (removed[i]) continue;
    table.rows[row_index[i]].device_total_ns += kernel_ns[i];
    if (parent[i] >= 0) kernel_ns[parent[i]] += kernel_ns[i];
  }
  for (size_t r = 0; r < table.rows.size(); ++r) table.rows[r].async = row_async_calls[r] == table.rows[r].calls;

  // Memory records no host call contains: torch lists them as top-level "[memory]" events, and
  // every out-of-memory record as an "[OutOfMemory]" event.
  auto add_memory_row = [&](std::string_view name, const MemoryRecord& r) {
    OperatorRow* row = nullptr;
    for (OperatorRow& existing : table.rows) {
      if (existing.name == name && existing.side == OpSide::kHost && !existing.user_annotation) row = &existing;
    }
    if (row == nullptr) {
      row = &table.rows.emplace_back();
      row->name = std::string(name);
    }
    ++row->calls;
    row->cpu_memory_bytes += r.cpu_bytes;
    row->self_cpu_memory_bytes += r.cpu_bytes;
    row->device_memory_bytes += r.device_bytes;
    row->self_device_memory_bytes += r.device_bytes;
  };
  int32_t depth = 0;
  for (size_t r = 0; r < records.size(); ++r) {
    depth += covered[r];
    if (depth == 0) add_memory_row("[memory]", records[r]);
  }
  for (const MemoryRecord& r : oom_records) add_memory_row("[OutOfMemory]", r);

  // 9. Totals and percentages, as torch's _build_table computes them.
  for (const OperatorRow& row : table.rows) {
    table.sum_self_cpu_ns += row.self_cpu_ns;
    if (row.side == OpSide::kDevice && !row.user_annotation) table.sum_self_device_ns += row.self_device_ns;
    table.has_device_time |= row.self_device_ns > 0;
    table.has_device_memory |= row.self_device_memory_bytes > 0;
  }
  auto share = [](int64_t part, int64_t whole) {
    return whole == 0 ? std::numeric_limits<double>::quiet_NaN()
                      : 100.0 * static_cast<double>(part) / static_cast<double>(whole);
  };
  for (OperatorRow& row : table.rows) {
    row.self_cpu_pct = share(row.self_cpu_ns, table.sum_self_cpu_ns);
    row.cpu_total_pct = row.async ? 0.0 : share(row.cpu_total_ns, table.sum_self_cpu_ns);
    row.self_device_pct = share(row.self_device_ns, table.sum_self_device_ns);
  }
  return table;
}

std::optional<OperatorSortKey> parse_operator_sort_key(std::string_view text) {
  struct Alias {
    std::string_view name;
    OperatorSortKey key;
  };
  static constexpr Alias kAliases[] = {
      {"self_cpu", OperatorSortKey::kSelfCpu},
      {"self_cpu_time_total", OperatorSortKey::kSelfCpu},
      {"cpu_total", OperatorSortKey::kCpuTotal},
      {"cpu_time_total", OperatorSortKey::kCpuTotal},
      {"self_device", OperatorSortKey::kSelfDevice},
      {"self_cuda", OperatorSortKey::kSelfDevice},
      {"self_device_time_total", OperatorSortKey::kSelfDevice},
      {"self_cuda_time_total", OperatorSortKey::kSelfDevice},
      {"device_total", OperatorSortKey::kDeviceTotal},
      {"cuda_total", OperatorSortKey::kDeviceTotal},
      {"device_time_total", OperatorSortKey::kDeviceTotal},
      {"cuda_time_total", OperatorSortKey::kDeviceTotal},
      {"calls", OperatorSortKey::kCalls},
      {"count", OperatorSortKey::kCalls},
  };
  for (const Alias& a : kAliases) {
    if (a.name == text) return a.key;
  }
  return std::nullopt;
}

std::vector<OperatorRow> top_operators(const OperatorTable& table, OperatorSortKey key, int top) {
  auto value = [key](const OperatorRow& r) {
    switch (key) {
      case OperatorSortKey::kSelfCpu:
        return r.self_cpu_ns;
      case OperatorSortKey::kCpuTotal:
        return r.cpu_total_ns;
      case OperatorSortKey::kSelfDevice:
        return r.self_device_ns;
      case OperatorSortKey::kDeviceTotal:
        return r.device_total_ns;
      case OperatorSortKey::kCalls:
        return r.calls;
    }
    return int64_t{0};
  };
  std::vector<size_t> index(table.rows.size());
  std::iota(index.begin(), index.end(), size_t{0});
  std::stable_sort(index.begin(), index.end(),
                   [&](size_t a, size_t b) { return value(table.rows[a]) > value(table.rows[b]); });
  if (top > 0 && index.size() > static_cast<size_t>(top)) index.resize(static_cast<size_t>(top));
  std::vector<OperatorRow> out;
  out.reserve(index.size());
  for (size_t i : index) out.push_back(table.rows[i]);
  return out;
}

}  // namespace scaleprof::analysis
