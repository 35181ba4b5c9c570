#include "analysis/diff_summary.h"

#include <algorithm>
#include <limits>
#include <unordered_map>
#include <utility>

#include "analysis/device_events.h"
#include "analysis/intervals.h"
#include "analysis/operator_table.h"
#include "analysis/phases.h"
#include "analysis/profiler_steps.h"

namespace scaleprof::analysis {

namespace {

constexpr std::string_view kPathSeparator = " > ";

// The kept step whose host window [start, end) holds t, or -1. Windows are by start and do not
// overlap on one rank (they are one thread's annotations).
int64_t step_holding(const std::vector<int64_t>& starts, const std::vector<int64_t>& ends, int64_t t) {
  auto it = std::upper_bound(starts.begin(), starts.end(), t);
  if (it == starts.begin()) return -1;
  const auto k = static_cast<size_t>(it - starts.begin() - 1);
  return t < ends[k] ? static_cast<int64_t>(k) : -1;
}

}  // namespace

DiffRankSummary summarize_for_diff(const trace::RankTrace& trace, const DiffSummaryOptions& options) {
  const trace::EventTable& ev = trace.events;
  const size_t n = ev.size();
  DiffRankSummary out;
  out.rank = trace.rank;
  out.path = trace.path;
  for (size_t i = 0; i < n && !out.has_device_work; ++i) out.has_device_work = is_stream_work(ev.cat[i]);

  // 1. The steps kept.
  std::vector<ProfilerStepWindow> steps = analysed_steps(trace, options.include_last_step);
  std::sort(steps.begin(), steps.end(),
            [](const ProfilerStepWindow& a, const ProfilerStepWindow& b) { return a.start_ns < b.start_ns; });
  out.has_steps = !steps.empty();
  if (out.has_steps && static_cast<int64_t>(steps.size()) > options.warmup_steps && options.warmup_steps > 0) {
    steps.erase(steps.begin(), steps.begin() + options.warmup_steps);
    out.warmup_skipped = options.warmup_steps;
  }
  std::vector<int64_t> starts, ends;
  if (out.has_steps) {
    for (const ProfilerStepWindow& w : steps) {
      out.steps.push_back(w.step);
      out.step_ns.push_back(w.duration_ns());
      out.gpu_busy_ns.push_back(w.gpu_busy_ns);
      starts.push_back(w.start_ns);
      ends.push_back(w.end_ns);
    }
  } else {
    // No ProfilerStep: the whole trace (every event but the profiler's own span) is one step.
    int64_t lo = std::numeric_limits<int64_t>::max();
    int64_t hi = std::numeric_limits<int64_t>::min();
    std::vector<Interval> device;
    for (size_t i = 0; i < n; ++i) {
      if (ev.phase[i] != trace::Phase::kComplete || ev.cat[i] == trace::Category::kTrace) continue;
      lo = std::min(lo, ev.ts[i]);
      hi = std::max(hi, ev.end(i));
      if (is_stream_work(ev.cat[i])) device.push_back({ev.ts[i], ev.end(i)});
    }
    if (lo > hi) lo = hi = 0;
    out.steps.push_back(-1);
    out.step_ns.push_back(hi - lo);
    out.gpu_busy_ns.push_back(total_length(union_intervals(std::move(device))));
    starts.push_back(lo);
    ends.push_back(hi + 1);  // the window is half-open; the last event's end belongs to it
  }
  const size_t step_count = out.steps.size();
  auto series = [&] {
    StepSeries s;
    s.count.assign(step_count, 0);
    s.ns.assign(step_count, 0);
    return s;
  };

  // 2. Operators: each host call in the step holding its start, with its self time.
  std::vector<OperatorCall> calls;
  OperatorTableOptions host_only;
  host_only.host_times_only = true;  // the kernels are keyed below by their launch instead
  const OperatorTable table = compute_operator_table(trace, host_only, &calls);
  std::vector<int64_t> op_of_row(table.rows.size(), -1);
  std::vector<int32_t> call_of_event(n, -1);
  for (size_t c = 0; c < calls.size(); ++c) {
    const OperatorCall& call = calls[c];
    call_of_event[call.event] = static_cast<int32_t>(c);
    const int64_t k = step_holding(starts, ends, ev.ts[call.event]);
    if (k < 0) continue;
    int64_t& op = op_of_row[call.row];
    if (op < 0) {
      op = static_cast<int64_t>(out.operators.size());
      out.operators.push_back({table.rows[call.row].name, series()});
    }
    StepSeries& s = out.operators[static_cast<size_t>(op)].per_step;
    ++s.count[static_cast<size_t>(k)];
    s.ns[static_cast<size_t>(k)] += call.self_ns;
  }

  // 3. Device work by what launched it. A path is made once per enclosing call and numbered once per
  // text, so the key of a device event is three integers (a string key per event was a third of
  // this function's time on df_index_resolver).
  std::unordered_map<int64_t, uint32_t> path_of_parent;  // EventTable row of the parent call -> path id
  std::unordered_map<std::string, uint32_t> path_ids;
  std::vector<const std::string*> path_texts;
  auto path_of = [&](int64_t parent) -> uint32_t {
    auto [it, inserted] = path_of_parent.try_emplace(parent, 0);
    if (!inserted) return it->second;
    std::vector<int64_t> chain;
    for (int64_t e = parent; e >= 0;) {
      chain.push_back(e);
      const int32_t c = call_of_event[static_cast<size_t>(e)];
      e = c < 0 ? -1 : calls[static_cast<size_t>(c)].parent;
    }
    std::string path;
    for (auto r = chain.rbegin(); r != chain.rend(); ++r) {
      const int32_t c = call_of_event[static_cast<size_t>(*r)];
      if (c < 0) continue;
      const std::string& name = table.rows[calls[static_cast<size_t>(c)].row].name;
      if (name == kAllProfilerStepsName) continue;
      if (!path.empty()) path += kPathSeparator;
      path += name;
    }
    auto [id, added] = path_ids.try_emplace(std::move(path), static_cast<uint32_t>(path_texts.size()));
    if (added) path_texts.push_back(&id->first);
    it->second = id->second;
    return id->second;
  };
  const std::vector<int64_t> launches = launch_rows(trace);
  KernelNameTypes types(trace.strings);
  std::unordered_map<uint64_t, size_t> kernel_index;  // (path id, type, name id) -> kernels entry
  for (size_t i = 0; i < n; ++i) {
    const int64_t launch = launches[i];
    if (launch < 0) continue;
    const int64_t k = step_holding(starts, ends, ev.ts[static_cast<size_t>(launch)]);
    if (k < 0) continue;
    const int32_t launch_call = call_of_event[static_cast<size_t>(launch)];
    // A runtime call's path is that of the op around it; an op found by External id launched it itself.
    int64_t parent = -1;
    if (launch_call >= 0) {
      parent = trace::is_runtime_category(ev.cat[static_cast<size_t>(launch)])
                   ? calls[static_cast<size_t>(launch_call)].parent
                   : static_cast<int64_t>(launch);
    }
    const uint32_t path = path_of(parent);
    // Copies and sets are memory whatever their names; other work by its name, classified once per name.
    const bool copy = ev.cat[i] == trace::Category::kGpuMemcpy || ev.cat[i] == trace::Category::kGpuMemset;
    const KernelType kind = copy ? KernelType::kMemory : types.of(ev.name[i]);
    const uint64_t key = (uint64_t{path} << 34) | (uint64_t{static_cast<uint8_t>(kind)} << 32) | ev.name[i];
    auto [it, inserted] = kernel_index.try_emplace(key, out.kernels.size());
    if (inserted) {
      out.kernels.push_back({*path_texts[path], kind, std::string(trace.strings.view(ev.name[i])), series()});
    }
    StepSeries& s = out.kernels[it->second].per_step;
    ++s.count[static_cast<size_t>(k)];
    s.ns[static_cast<size_t>(k)] += ev.dur[i];
  }
  return out;
}

}  // namespace scaleprof::analysis
