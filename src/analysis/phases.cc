#include "analysis/phases.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <functional>
#include <map>
#include <set>
#include <utility>

#include "analysis/device_events.h"
#include "analysis/intervals.h"
#include "core/run_sort.h"

namespace scaleprof::analysis {

namespace {

using trace::Category;

// Whether the lower-cased words of `name` (split at every character that is not a letter or digit)
// include one of `words`. Words, not substrings: "DistributedDataParallel.forward" is forward, not data.
bool has_word(std::string_view name, std::initializer_list<std::string_view> words) {
  std::string word;
  auto matches = [&] { return std::find(words.begin(), words.end(), word) != words.end(); };
  for (char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c)) != 0) {
      word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      continue;
    }
    if (!word.empty() && matches()) return true;
    word.clear();
  }
  return !word.empty() && matches();
}

// Top-level user annotations of one thread: [start, end) and name, by start, none inside another.
struct Region {
  int64_t start = 0;
  int64_t end = 0;
  trace::StringId name = 0;
};

// The index of the region of `regions` (by start, disjoint) holding t, or -1.
int64_t region_at(const std::vector<Region>& regions, int64_t t) {
  auto it = std::upper_bound(regions.begin(), regions.end(), t, [](int64_t x, const Region& r) { return x < r.start; });
  if (it == regions.begin()) return -1;
  --it;
  return t < it->end ? it - regions.begin() : -1;
}

// The step whose window [start, end) holds t, or -1 (steps by start).
int64_t step_at(const std::vector<ProfilerStepWindow>& steps, int64_t t) {
  auto it = std::upper_bound(steps.begin(), steps.end(), t,
                             [](int64_t x, const ProfilerStepWindow& w) { return x < w.start_ns; });
  if (it == steps.begin()) return -1;
  --it;
  return t < it->end_ns ? it - steps.begin() : -1;
}

// An autograd backward node run as an op: its name ends with "Backward" and a version number
// (`AddmmBackward0`) or with "Backward" alone (a custom Function's node, `CheckpointFunctionBackward`).
// A custom Function's forward is named by its class and may contain the word
// (`RegisterPostBackwardFunction`, FSDP2's; `BackwardHookFunction`, full backward hooks'): it runs in
// forward, so a name merely containing "Backward" would start the backward span there.
bool is_backward_node(std::string_view name) {
  while (!name.empty() && std::isdigit(static_cast<unsigned char>(name.back())) != 0) name.remove_suffix(1);
  return name.ends_with("Backward");
}

bool is_step_annotation(const trace::RankTrace& t, size_t i) {
  return profiler_step_number(t.name(i)).has_value();
}

}  // namespace

std::string_view step_phase_name(StepPhase phase) {
  switch (phase) {
    case StepPhase::kDataLoading:
      return "data_loading";
    case StepPhase::kForward:
      return "forward";
    case StepPhase::kBackward:
      return "backward";
    case StepPhase::kOptimizer:
      return "optimizer";
    case StepPhase::kOther:
      break;
  }
  return "other";
}

HostRole host_role(std::string_view name, Category category) {
  if (!trace::is_cpu_op_category(category)) return HostRole::kNone;
  // Collectives: the c10d op that enqueues (and, on gloo, often waits for) one, gloo's own span on
  // its worker thread, the NCCL host op, and the op carrying the collective's metadata.
  if (name.starts_with("c10d::") || name.starts_with("gloo:") || name.starts_with("nccl:") ||
      name == "record_param_comms") {
    return HostRole::kCommunication;
  }
  const bool annotation = category == Category::kUserAnnotation;
  if (name.find("DataLoader") != std::string_view::npos) return HostRole::kDataLoading;
  if (annotation && has_word(name, {"data", "loader", "dataloader", "batch"})) return HostRole::kDataLoading;
  if (name.starts_with("Optimizer.")) return HostRole::kOptimizer;
  if (annotation && has_word(name, {"optimizer", "optim"})) return HostRole::kOptimizer;
  if (name.starts_with("autograd::engine::evaluate_function")) return HostRole::kBackward;
  if (!annotation && is_backward_node(name)) return HostRole::kBackward;
  if (annotation && has_word(name, {"backward"})) return HostRole::kBackward;
  if (annotation && has_word(name, {"forward"})) return HostRole::kForward;
  return HostRole::kNone;
}

std::vector<ProfilerStepWindow> analysed_steps(const trace::RankTrace& trace, bool include_last_step) {
  std::vector<ProfilerStepWindow> steps = find_profiler_steps(trace).steps;
  std::set<int64_t> distinct;
  for (const auto& w : steps) distinct.insert(w.step);
  // analysis_window.h's rule: with two or more step numbers the last-starting step is cut off by the
  // profiler's stop, so the HTA reports leave it out; so do these, for the same steps everywhere.
  if (distinct.size() >= 2 && !include_last_step && !steps.empty()) {
    const int64_t last_start = steps.back().start_ns;
    std::erase_if(steps, [&](const ProfilerStepWindow& w) { return w.start_ns >= last_start; });
  }
  return steps;
}

std::vector<int64_t> launch_rows(const trace::RankTrace& trace) {
  const trace::EventTable& ev = trace.events;
  const size_t n = ev.size();
  std::vector<std::pair<int64_t, uint32_t>> by_correlation, by_external;
  for (size_t i = 0; i < n; ++i) {
    if (ev.phase[i] == trace::Phase::kComplete && trace::is_runtime_category(ev.cat[i]) &&
        ev.correlation[i] != trace::kNone) {
      by_correlation.emplace_back(ev.correlation[i], static_cast<uint32_t>(i));
    }
  }
  // Both lists come almost in order from Kineto; the pairs are distinct (one per row), so the
  // stable sort gives what std::sort would, in a pass and a merge or two.
  stable_sort_runs(by_correlation.begin(), by_correlation.end(), std::less<>());
  auto find = [](const std::vector<std::pair<int64_t, uint32_t>>& v, int64_t id) -> int64_t {
    if (id == trace::kNone) return -1;
    auto it = std::lower_bound(v.begin(), v.end(), std::make_pair(id, uint32_t{0}));
    return it != v.end() && it->first == id ? static_cast<int64_t>(it->second) : int64_t{-1};
  };
  std::vector<int64_t> out(n, -1);
  std::vector<uint32_t> unmatched;  // device work no runtime call's correlation id names
  for (size_t i = 0; i < n; ++i) {
    if (ev.phase[i] != trace::Phase::kComplete || !is_stream_work(ev.cat[i])) continue;
    out[i] = find(by_correlation, ev.correlation[i]);
    if (out[i] < 0 && ev.external_id[i] != trace::kNone) unmatched.push_back(static_cast<uint32_t>(i));
  }
  // The ops by External id only for work the runtime calls left unmatched (none on most CUDA
  // traces, where every kernel has its launch): a list of every cpu_op less to make and sort.
  if (unmatched.empty()) return out;
  for (size_t i = 0; i < n; ++i) {
    if (ev.phase[i] == trace::Phase::kComplete && trace::is_cpu_op_category(ev.cat[i]) &&
        ev.external_id[i] != trace::kNone) {
      by_external.emplace_back(ev.external_id[i], static_cast<uint32_t>(i));
    }
  }
  stable_sort_runs(by_external.begin(), by_external.end(), std::less<>());
  for (const uint32_t i : unmatched) out[i] = find(by_external, ev.external_id[i]);
  return out;
}

RankPhases compute_phases(const trace::RankTrace& trace, bool include_last_step) {
  return compute_phases(trace, include_last_step, nullptr);
}

StepPhase StepPhaseSpans::phase_at(int64_t t) const {
  constexpr std::array<StepPhase, 4> kOrder = {StepPhase::kDataLoading, StepPhase::kOptimizer, StepPhase::kBackward,
                                               StepPhase::kForward};
  for (size_t p = 0; p < kOrder.size(); ++p) {
    if (covers(sets[p], t)) return kOrder[p];
  }
  return StepPhase::kOther;
}

RankPhases compute_phases(const trace::RankTrace& trace, bool include_last_step, std::vector<StepPhaseSpans>* spans) {
  const trace::EventTable& ev = trace.events;
  const size_t n = ev.size();
  RankPhases out;
  out.path = trace.path;
  const std::vector<ProfilerStepWindow> steps = analysed_steps(trace, include_last_step);
  for (size_t i = 0; i < n && !out.has_kernels; ++i) out.has_kernels = is_stream_work(ev.cat[i]);
  if (spans != nullptr) spans->clear();
  if (steps.empty()) return out;

  // Host intervals by role over the whole trace, and per thread the operators other than data
  // loading and optimizer (the forward span's start) and the top-level user annotations (regions).
  std::vector<Interval> data, optimizer, backward, forward_annotations, communication;
  std::map<uint32_t, std::vector<Interval>> thread_ops;      // not data loading or optimizer
  std::map<uint32_t, std::vector<Interval>> after_backward;  // what the step thread does once backward returns
  std::map<uint32_t, std::vector<Region>> annotations;
  std::set<uint32_t> step_threads;
  for (const auto& w : steps) step_threads.insert(ev.track[w.event]);
  HostRoles roles(trace.strings);
  for (size_t i = 0; i < n; ++i) {
    if (ev.phase[i] != trace::Phase::kComplete || !trace::is_cpu_op_category(ev.cat[i])) continue;
    if (is_step_annotation(trace, i)) continue;
    const Interval iv{ev.ts[i], ev.end(i)};
    const HostRole role = roles.of(ev.name[i], ev.cat[i]);
    if (role == HostRole::kDataLoading) data.push_back(iv);
    if (role == HostRole::kOptimizer) optimizer.push_back(iv);
    if (role == HostRole::kBackward) backward.push_back(iv);
    if (role == HostRole::kForward) forward_annotations.push_back(iv);
    if (role == HostRole::kCommunication) communication.push_back(iv);
    if (step_threads.contains(ev.track[i])) {
      if (role != HostRole::kDataLoading && role != HostRole::kOptimizer) thread_ops[ev.track[i]].push_back(iv);
      if (role != HostRole::kBackward && role != HostRole::kCommunication) after_backward[ev.track[i]].push_back(iv);
    }
    if (ev.cat[i] == Category::kUserAnnotation) annotations[ev.track[i]].push_back({iv.start, iv.end, ev.name[i]});
  }
  data = union_intervals(std::move(data));
  optimizer = union_intervals(std::move(optimizer));
  backward = union_intervals(std::move(backward));
  forward_annotations = union_intervals(std::move(forward_annotations));
  communication = union_intervals(std::move(communication));
  for (auto& [track, ops] : thread_ops) ops = union_intervals(std::move(ops));
  for (auto& [track, ops] : after_backward) ops = union_intervals(std::move(ops));
  // Keep the outermost annotations of each thread: sorted by start (longer first at one start), an
  // annotation starting before the current outer one ends is inside it (or crosses it) and is dropped.
  for (auto& [track, list] : annotations) {
    std::sort(list.begin(), list.end(),
              [](const Region& a, const Region& b) { return a.start != b.start ? a.start < b.start : a.end > b.end; });
    std::vector<Region> outer;
    for (const Region& r : list) {
      if (outer.empty() || r.start >= outer.back().end) outer.push_back(r);
    }
    list = std::move(outer);
  }

  // Per step: the phase sets clipped to the window, in priority order.
  std::vector<std::array<std::vector<Interval>, 4>> phase_sets(steps.size());
  constexpr std::array<StepPhase, 4> kOrder = {StepPhase::kDataLoading, StepPhase::kOptimizer, StepPhase::kBackward,
                                               StepPhase::kForward};
  out.steps.resize(steps.size());
  for (size_t k = 0; k < steps.size(); ++k) {
    const ProfilerStepWindow& w = steps[k];
    StepPhases& sp = out.steps[k];
    sp.step = w.step;
    sp.start_ns = w.start_ns;
    sp.end_ns = w.end_ns;
    auto& sets = phase_sets[k];
    sets[0] = clip_intervals(data, w.start_ns, w.end_ns);
    sets[1] = clip_intervals(optimizer, w.start_ns, w.end_ns);
    const std::vector<Interval> back = clip_intervals(backward, w.start_ns, w.end_ns);
    if (!back.empty()) {
      // The backward span also covers the host collectives started from its start until the step
      // thread's next operator: DDP's gradient all-reduce (gloo runs it on its own thread, after
      // the last backward op), which the training thread waits for before loss.backward() returns.
      Interval span{back.front().start, back.back().end};
      const std::vector<Interval> next = clip_intervals(after_backward[ev.track[w.event]], span.end, w.end_ns);
      const int64_t until = next.empty() ? w.end_ns : next.front().start;
      for (const Interval& c : clip_intervals(communication, span.start, until)) span.end = std::max(span.end, c.end);
      sets[2] = {span};
    }
    std::vector<Interval> forward = clip_intervals(forward_annotations, w.start_ns, w.end_ns);
    // The forward span: from the first instant the step thread runs an operator outside data loading
    // and the optimizer, to the backward span (or the last such instant without one).
    const std::vector<Interval> ops =
        subtract_intervals(clip_intervals(thread_ops[ev.track[w.event]], w.start_ns, w.end_ns), union_intervals([&] {
                             std::vector<Interval> both = sets[0];
                             both.insert(both.end(), sets[1].begin(), sets[1].end());
                             return both;
                           }()));
    if (!ops.empty()) {
      const int64_t end = back.empty() ? ops.back().end : back.front().start;
      if (ops.front().start < end) forward.push_back({ops.front().start, end});
    }
    sets[3] = union_intervals(std::move(forward));
    int64_t covered = 0;
    sweep_coverage(sets, [&](uint32_t mask, int64_t start, int64_t end) {
      const int first = std::countr_zero(mask);
      sp.host_ns[static_cast<size_t>(kOrder[first])] += end - start;
      covered += end - start;
    });
    sp.host_ns[static_cast<size_t>(StepPhase::kOther)] = w.duration_ns() - covered;
  }
  if (spans != nullptr) {
    for (size_t k = 0; k < steps.size(); ++k)
      spans->push_back({steps[k].step, steps[k].start_ns, steps[k].end_ns, phase_sets[k]});
  }

  // Regions per step: calls and the union of their intervals, by name in order of first start.
  std::vector<std::map<trace::StringId, size_t>> region_index(steps.size());
  std::vector<std::vector<std::vector<Interval>>> region_intervals(steps.size());
  auto region_of = [&](size_t k, trace::StringId name, std::string_view text) -> RegionTime& {
    auto [it, added] = region_index[k].try_emplace(name, out.steps[k].regions.size());
    if (added) {
      out.steps[k].regions.push_back({std::string(text)});
      region_intervals[k].emplace_back();
    }
    return out.steps[k].regions[it->second];
  };
  for (const auto& [track, list] : annotations) {
    for (const Region& r : list) {
      for (auto k = static_cast<size_t>(std::max<int64_t>(0, step_at(steps, r.start))); k < steps.size(); ++k) {
        if (steps[k].start_ns >= r.end) break;
        const int64_t lo = std::max(r.start, steps[k].start_ns), hi = std::min(r.end, steps[k].end_ns);
        const bool starts_in = r.start >= steps[k].start_ns && r.start < steps[k].end_ns;
        if (lo >= hi && !starts_in) continue;
        RegionTime& rt = region_of(k, r.name, trace.strings.view(r.name));
        if (starts_in) ++rt.calls;
        if (lo < hi) region_intervals[k][region_index[k][r.name]].push_back({lo, hi});
      }
    }
  }
  // Regions on different threads were visited thread by thread: order them by first start.
  for (size_t k = 0; k < steps.size(); ++k) {
    auto& regions = out.steps[k].regions;
    std::vector<std::pair<int64_t, size_t>> order;
    for (size_t r = 0; r < regions.size(); ++r) {
      std::vector<Interval> merged = union_intervals(std::move(region_intervals[k][r]));
      regions[r].host_ns = total_length(merged);
      order.emplace_back(merged.empty() ? 0 : merged.front().start, r);
    }
    std::stable_sort(order.begin(), order.end());
    std::vector<RegionTime> sorted;
    sorted.reserve(regions.size());
    for (const auto& [start, r] : order) sorted.push_back(std::move(regions[r]));
    regions = std::move(sorted);
  }

  // Device work through its launch: step, phase and region of the launch instant.
  const std::vector<int64_t> launches = launch_rows(trace);
  std::vector<std::map<std::string_view, size_t>> by_name(steps.size());
  for (size_t k = 0; k < steps.size(); ++k) {
    for (size_t r = 0; r < out.steps[k].regions.size(); ++r) by_name[k].emplace(out.steps[k].regions[r].name, r);
  }
  std::vector<RegionTime> outside(steps.size());
  for (size_t i = 0; i < n; ++i) {
    if (launches[i] < 0) continue;
    const auto l = static_cast<size_t>(launches[i]);
    const int64_t t = ev.ts[l];
    const int64_t k = step_at(steps, t);
    if (k < 0) continue;
    StepPhases& sp = out.steps[static_cast<size_t>(k)];
    auto phase = StepPhase::kOther;
    for (size_t p = 0; p < kOrder.size(); ++p) {
      if (covers(phase_sets[static_cast<size_t>(k)][p], t)) {
        phase = kOrder[p];
        break;
      }
    }
    ++sp.kernels[static_cast<size_t>(phase)];
    sp.device_ns[static_cast<size_t>(phase)] += ev.dur[i];
    RegionTime* region = &outside[static_cast<size_t>(k)];
    if (auto a = annotations.find(ev.track[l]); a != annotations.end()) {
      if (const int64_t r = region_at(a->second, t); r >= 0) {
        const auto& names = by_name[static_cast<size_t>(k)];
        if (auto it = names.find(trace.strings.view(a->second[static_cast<size_t>(r)].name)); it != names.end()) {
          region = &sp.regions[it->second];
        }
      }
    }
    ++region->kernels;
    region->device_ns += ev.dur[i];
  }
  for (size_t k = 0; k < steps.size(); ++k) {
    if (outside[k].kernels > 0) out.steps[k].regions.push_back(std::move(outside[k]));
  }
  return out;
}

}  // namespace scaleprof::analysis
