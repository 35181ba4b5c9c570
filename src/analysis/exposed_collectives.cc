#include "analysis/exposed_collectives.h"

#include <fmt/format.h>
#include <algorithm>
#include <map>
#include <numeric>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "analysis/collective_calls.h"
#include "analysis/deepspeed_frames.h"
#include "analysis/device_events.h"
#include "analysis/intervals.h"
#include "core/checked_sum.h"

namespace scaleprof::analysis {

namespace {

using trace::Category;

bool is_wait(std::string_view name) {
  return name.find("wait") != std::string_view::npos;
}

// The op that issues a collective on the host (CPU runs): c10d's, or the functional collectives'.
bool is_issue_op(std::string_view name, Category category) {
  if (category != Category::kCpuOp || is_wait(name)) return false;
  if (!name.starts_with("c10d::") && !name.starts_with("_c10d_functional::")) return false;
  return !canonical_collective_type(name).empty();
}

// An instant in which a thread's innermost event is this one counts as the thread computing.
bool computes_on_thread(const trace::RankTrace& t, size_t i, HostRoles& roles) {
  const trace::EventTable& ev = t.events;
  return ev.cat[i] == Category::kCpuOp && roles.of(ev.name[i], ev.cat[i]) != HostRole::kCommunication &&
         !is_wait(t.name(i));
}

bool is_host_event(Category c) {
  return trace::is_cpu_op_category(c) || c == Category::kPythonFunction || trace::is_runtime_category(c);
}

// Sorted disjoint intervals with the prefix sums of their lengths: covered length of any [a, b) in
// O(log n).
struct BusyCoverage {
  std::vector<Interval> intervals;
  std::vector<int64_t> before;  // summed lengths of intervals[0..k)

  void finish() {
    before.assign(intervals.size() + 1, 0);
    for (size_t k = 0; k < intervals.size(); ++k) before[k + 1] = before[k] + intervals[k].length();
  }
  int64_t length_until(int64_t t) const {  // covered length of (-inf, t)
    auto it = std::upper_bound(intervals.begin(), intervals.end(), t,
                               [](int64_t x, const Interval& iv) { return x < iv.start; });
    const auto k = static_cast<size_t>(it - intervals.begin());
    if (k == 0) return 0;
    return before[k - 1] + std::min(t, intervals[k - 1].end) - intervals[k - 1].start;
  }
  int64_t covered(int64_t a, int64_t b) const { return a < b ? length_until(b) - length_until(a) : 0; }
};

// What encloses a row of interest on its thread: the innermost FSDP label, else the innermost other
// user annotation (-1 none); and whether an issue op encloses it (a nested one is not a call).
struct IssueContext {
  int64_t label = -1;
  bool fsdp = false;
  bool calls_collective = false;  // the FSDP label is FSDP's own all-gather or reduce: the call's span starts there
  bool inside_issue = false;
  // DeepSpeed ZeRO, from the Python frames with_stack=True records (docs/fsdp.md):
  int64_t ds_call = -1;    // the innermost DeepSpeed collective wrapper (copy-in included): the span starts there
  int64_t ds_module = -1;  // the `nn.Module: …` frame enclosing a ZeRO parameter fetch: the layer
  bool ds_fetch = false;   // issued by ZeRO-3's fetch_sub_module (forward or backward)
  int ds_phase = -1;       // StepPhase of the innermost DeepSpeedEngine forward/backward/step frame
};

}  // namespace

bool fsdp_collective_label(std::string_view label) {
  if (!label.starts_with("FSDP::")) return false;
  const std::string_view what = label.substr(std::string_view("FSDP::").size());
  const bool gather =
      what.find("all_gather") != std::string_view::npos && what.find("copy_out") == std::string_view::npos;
  const bool reduce = what.find("reduce") != std::string_view::npos && what.find("wait") == std::string_view::npos;
  return gather || reduce;
}

namespace {

// One thread's host events swept as a stack: the instants its innermost event computes, and the
// context of each row in `wanted`.
BusyCoverage sweep_thread(const trace::RankTrace& t, std::vector<uint32_t> rows, const std::vector<char>& wanted,
                          std::unordered_map<uint32_t, IssueContext>* contexts, HostRoles& roles) {
  const trace::EventTable& ev = t.events;
  std::sort(rows.begin(), rows.end(), [&](uint32_t a, uint32_t b) {
    if (ev.ts[a] != ev.ts[b]) return ev.ts[a] < ev.ts[b];
    if (ev.dur[a] != ev.dur[b]) return ev.dur[a] > ev.dur[b];
    return ev.file_index[a] < ev.file_index[b];
  });
  struct Frame {
    int64_t end;
    uint32_t row;
    bool compute;
  };
  std::vector<Frame> stack;
  BusyCoverage out;
  int64_t cursor = 0;
  auto emit = [&](int64_t until) {
    if (!stack.empty() && stack.back().compute && cursor < until) {
      if (!out.intervals.empty() && out.intervals.back().end == cursor) {
        out.intervals.back().end = until;
      } else {
        out.intervals.push_back({cursor, until});
      }
    }
    cursor = std::max(cursor, until);
  };
  for (const uint32_t r : rows) {
    const int64_t start = ev.ts[r];
    while (!stack.empty() && stack.back().end <= start) {
      emit(stack.back().end);
      stack.pop_back();
    }
    emit(start);
    cursor = start;
    if (wanted[r] != 0) {
      IssueContext c;
      for (auto f = stack.rbegin(); f != stack.rend(); ++f) {
        const std::string_view name = t.name(f->row);
        if (is_issue_op(name, ev.cat[f->row])) c.inside_issue = true;
        if (ev.cat[f->row] == Category::kPythonFunction) {
          if (c.ds_fetch && c.ds_module < 0 && name.starts_with("nn.Module: ")) c.ds_module = f->row;
          const DeepSpeedFrame py = deepspeed_frame(name);
          if (py.function.empty()) continue;
          if (c.ds_call < 0 && deepspeed_wraps_collective(py.function)) c.ds_call = f->row;
          if (py.function == "fetch_sub_module") c.ds_fetch = true;
          if (c.ds_phase < 0) c.ds_phase = deepspeed_engine_phase(py);
          continue;
        }
        if (ev.cat[f->row] != Category::kUserAnnotation || profiler_step_number(name).has_value()) continue;
        if (name.starts_with("FSDP::") && !c.fsdp) {
          c.label = f->row;
          c.fsdp = true;
          c.calls_collective = fsdp_collective_label(name);
        } else if (c.label < 0) {
          c.label = f->row;
        }
      }
      (*contexts)[r] = c;
    }
    // An event crossing its parent's end is cut there, so the stack stays nested.
    const int64_t end = stack.empty() ? ev.end(r) : std::min(ev.end(r), stack.back().end);
    stack.push_back({end, r, computes_on_thread(t, r, roles)});
  }
  while (!stack.empty()) {
    emit(stack.back().end);
    stack.pop_back();
  }
  out.finish();
  return out;
}

struct ExposedCall {
  int64_t issue_ns = 0;
  int64_t lane = 0;  // CPU: the issuing track; GPU: 0 (the device as a whole)
  int64_t span_start = 0;
  int64_t span_end = 0;
  int64_t duration_ns = 0;
  int64_t exposed_ns = 0;
  std::string type;
  const CollectiveCall* meta = nullptr;
  IssueContext context;
};

// Each instant of the calls' spans to the earliest-started call holding it; exposed = that part
// minus what `busy` covers.
void attribute_instants(std::vector<ExposedCall>* calls, const std::map<int64_t, BusyCoverage>& busy) {
  std::sort(calls->begin(), calls->end(), [](const ExposedCall& a, const ExposedCall& b) {
    return std::tie(a.lane, a.span_start, a.issue_ns) < std::tie(b.lane, b.span_start, b.issue_ns);
  });
  int64_t lane = -1;
  int64_t frontier = INT64_MIN;
  for (ExposedCall& c : *calls) {
    if (c.lane != lane) {
      lane = c.lane;
      frontier = INT64_MIN;
    }
    const int64_t a = std::max(c.span_start, frontier), b = c.span_end;
    frontier = std::max(frontier, b);
    if (a >= b) continue;
    auto it = busy.find(c.lane);
    c.exposed_ns = (b - a) - (it == busy.end() ? 0 : it->second.covered(a, b));
  }
}

// ZeRO-3's autograd functions, which every ZeRO-3 trace has, whether or not it has Python frames.
bool zero_ops_without_stack(const trace::RankTrace& t) {
  const trace::EventTable& ev = t.events;
  bool zero3 = false;
  for (size_t i = 0; i < ev.size(); ++i) {
    if (ev.cat[i] == Category::kPythonFunction) return false;
    if (!zero3 && ev.cat[i] == Category::kCpuOp) {
      const std::string_view name = t.name(i);
      zero3 = name == "PreBackwardFunctionForModule" || name.starts_with("LinearFunctionForZeroStage3");
    }
  }
  return zero3;
}

}  // namespace

std::string fsdp_layer(std::string_view label) {
  if (!label.starts_with("FSDP::")) return "";
  if (label.ends_with(")")) {
    const size_t open = label.rfind(" (");
    if (open != std::string_view::npos) return std::string(label.substr(open + 2, label.size() - open - 3));
  }
  if (const size_t f = label.rfind(" for "); f != std::string_view::npos) return std::string(label.substr(f + 5));
  return "(root)";
}

RankExposedCollectives exposed_collectives(const trace::RankTrace& trace, bool include_last_step, int top,
                                           const ExposedOptions& options) {
  const bool keep_calls = options.keep_calls;
  const trace::EventTable& ev = trace.events;
  const size_t n = ev.size();
  RankExposedCollectives out;
  out.path = trace.path;
  std::vector<StepPhaseSpans> steps;
  compute_phases(trace, include_last_step, &steps);
  out.steps = static_cast<int64_t>(steps.size());
  for (const StepPhaseSpans& s : steps) add_or_unknown(&out.step_ns, s.end_ns - s.start_ns);
  if (steps.empty()) {
    out.notes.emplace_back(
        "no ProfilerStep#N annotation: profile with a torch.profiler schedule and call prof.step() once per step");
    return out;
  }
  auto step_of = [&](int64_t t) -> const StepPhaseSpans* {
    auto it = std::upper_bound(steps.begin(), steps.end(), t,
                               [](int64_t x, const StepPhaseSpans& s) { return x < s.start_ns; });
    if (it == steps.begin()) return nullptr;
    --it;
    return t < it->end_ns ? &*it : nullptr;
  };

  // The collectives' metadata (type, group, size) by the start of their gloo span or kernel.
  const RankCollectives meta = extract_collectives(trace);
  std::unordered_map<int64_t, const CollectiveCall*> meta_at;
  for (const CollectiveCall& c : meta.calls) meta_at.try_emplace(c.start_ns, &c);

  std::vector<uint32_t> all(n);
  std::iota(all.begin(), all.end(), 0U);
  const DeviceEvents dev = select_device_events(trace, all);
  std::vector<uint32_t> comm_kernels;
  std::vector<Interval> compute_kernels;
  for (size_t k = 0; k < dev.size(); ++k) {
    if (dev.type[k] == KernelType::kCommunication) comm_kernels.push_back(dev.rows[k]);
    if (dev.type[k] == KernelType::kComputation) compute_kernels.push_back({ev.ts[dev.rows[k]], ev.end(dev.rows[k])});
  }
  out.gpu = !comm_kernels.empty();

  // Rows whose context is needed: the issue ops (CPU) or the comm kernels' launches (GPU).
  std::vector<char> wanted(n, 0);
  std::vector<int64_t> launches;
  std::vector<uint32_t> issues;
  if (out.gpu) {
    launches = launch_rows(trace);
    for (const uint32_t r : comm_kernels) {
      if (launches[r] >= 0) wanted[static_cast<size_t>(launches[r])] = 1;
    }
  } else {
    for (size_t i = 0; i < n; ++i) {
      if (ev.phase[i] == trace::Phase::kComplete && is_issue_op(trace.name(i), ev.cat[i])) {
        wanted[i] = 1;
        issues.push_back(static_cast<uint32_t>(i));
      }
    }
  }
  std::map<int64_t, std::vector<uint32_t>> thread_rows;
  std::map<int64_t, char> threads_wanted;
  for (size_t i = 0; i < n; ++i) {
    if (wanted[i] != 0) threads_wanted[ev.track[i]] = 1;
  }
  for (size_t i = 0; i < n; ++i) {
    if (ev.phase[i] == trace::Phase::kComplete && is_host_event(ev.cat[i]) && threads_wanted.contains(ev.track[i])) {
      thread_rows[ev.track[i]].push_back(static_cast<uint32_t>(i));
    }
  }
  HostRoles roles(trace.strings);
  std::unordered_map<uint32_t, IssueContext> contexts;
  std::map<int64_t, BusyCoverage> busy;
  for (auto& [track, rows] : thread_rows) busy[track] = sweep_thread(trace, std::move(rows), wanted, &contexts, roles);

  std::vector<ExposedCall> calls;
  if (out.gpu) {
    BusyCoverage compute;
    compute.intervals = union_intervals(std::move(compute_kernels));
    compute.finish();
    busy.clear();
    busy[0] = std::move(compute);
    for (const uint32_t r : comm_kernels) {
      const int64_t l = launches[r];
      ExposedCall c;
      c.issue_ns = l >= 0 ? ev.ts[static_cast<size_t>(l)] : ev.ts[r];
      c.span_start = ev.ts[r];
      c.span_end = ev.end(r);
      c.duration_ns = ev.dur[r];
      if (auto it = meta_at.find(ev.ts[r]); it != meta_at.end()) c.meta = it->second;
      c.type = c.meta != nullptr ? c.meta->type : canonical_collective_type(trace.name(r));
      if (l >= 0) c.context = contexts[static_cast<uint32_t>(l)];
      calls.push_back(std::move(c));
    }
  } else {
    // gloo's work, in the order it starts, paired with the c10d ops in the order they were issued.
    std::vector<uint32_t> work;
    for (size_t i = 0; i < n; ++i) {
      if (ev.phase[i] == trace::Phase::kComplete && trace::is_cpu_op_category(ev.cat[i]) &&
          trace.name(i).starts_with("gloo:")) {
        work.push_back(static_cast<uint32_t>(i));
      }
    }
    auto by_start = [&](uint32_t a, uint32_t b) {
      return std::tie(ev.ts[a], ev.file_index[a]) < std::tie(ev.ts[b], ev.file_index[b]);
    };
    std::sort(work.begin(), work.end(), by_start);
    std::sort(issues.begin(), issues.end(), by_start);
    size_t next = 0;
    int64_t unmatched = 0;
    for (const uint32_t r : issues) {
      const IssueContext context = contexts[r];
      if (context.inside_issue) continue;
      while (next < work.size() && ev.ts[work[next]] < ev.ts[r]) ++next;  // work issued outside the trace
      ExposedCall c;
      c.issue_ns = ev.ts[r];
      c.lane = ev.track[r];
      c.context = context;
      c.span_start = ev.ts[r];
      if (context.calls_collective) c.span_start = std::min(ev.ts[static_cast<size_t>(context.label)], c.span_start);
      if (context.ds_call >= 0) c.span_start = std::min(ev.ts[static_cast<size_t>(context.ds_call)], c.span_start);
      c.span_end = ev.end(r);
      c.duration_ns = ev.dur[r];
      c.type = canonical_collective_type(trace.name(r));
      if (next < work.size()) {
        const uint32_t w = work[next++];
        c.span_end = std::max(c.span_end, ev.end(w));
        c.duration_ns = ev.dur[w];
        if (auto it = meta_at.find(ev.ts[w]); it != meta_at.end()) c.meta = it->second;
      } else {
        ++unmatched;
      }
      calls.push_back(std::move(c));
    }
    if (unmatched > 0) {
      out.notes.push_back(
          fmt::format("{} c10d call(s) without gloo work recorded after them: their span ends with the "
                      "call",
                      unmatched));
    }
  }
  if (options.any_thread_hides && !out.gpu) {
    BusyCoverage any;
    for (auto& [track, b] : busy) any.intervals.insert(any.intervals.end(), b.intervals.begin(), b.intervals.end());
    any.intervals = union_intervals(std::move(any.intervals));
    any.finish();
    for (auto& [track, b] : busy) b = any;
    for (const ExposedCall& c : calls) busy.try_emplace(c.lane, any);
  }
  attribute_instants(&calls, busy);

  // Totals and layers over the analysed steps.
  using Key = std::tuple<std::string, std::string, int, std::string, std::string>;
  std::map<Key, ExposedRow> totals, layers;
  int64_t unnamed_fetches = 0, deepspeed_calls = 0;
  std::vector<std::pair<Key, ExposedCallEnd>> call_keys;  // keep_calls
  auto add = [](ExposedRow& row, const ExposedCall& c) {
    ++row.calls;
    add_or_unknown(&row.duration_ns, c.duration_ns);
    add_or_unknown(&row.span_ns, c.span_end - c.span_start);
    add_or_unknown(&row.exposed_ns, c.exposed_ns);
    if (c.meta != nullptr && c.meta->bytes > 0) add_or_unknown(&row.bytes, c.meta->bytes);
  };
  for (const ExposedCall& c : calls) {
    const StepPhaseSpans* step = step_of(c.issue_ns);
    if (step == nullptr) continue;
    // DeepSpeed's engine says which of its calls issued the collective: ZeRO reduces gradients at the
    // end of engine.backward, after the autograd engine's last op, and all-reduces norms and gathers
    // parameters in engine.step before and after the torch optimizer's own step.
    const StepPhase phase =
        c.context.ds_phase >= 0 ? static_cast<StepPhase>(c.context.ds_phase) : step->phase_at(c.issue_ns);
    const std::string group = c.meta != nullptr ? c.meta->group : "";
    const std::string ranks = c.meta != nullptr ? c.meta->group_ranks : "";
    std::string layer;
    if (c.context.fsdp) {
      layer = fsdp_layer(trace.name(static_cast<size_t>(c.context.label)));
    } else if (c.context.ds_module >= 0) {
      layer = trace.name(static_cast<size_t>(c.context.ds_module)).substr(std::string_view("nn.Module: ").size());
    } else if (c.context.ds_fetch) {
      ++unnamed_fetches;
    }
    if (c.context.ds_phase >= 0) ++deepspeed_calls;
    ++out.calls;
    if (c.context.fsdp) ++out.labelled;
    add_or_unknown(&out.exposed_ns, c.exposed_ns);
    ExposedRow& t = totals[{group, ranks, static_cast<int>(phase), c.type, ""}];
    const Key key{group, ranks, static_cast<int>(phase), c.type, layer};
    ExposedRow& l = layers[key];
    if (keep_calls) call_keys.emplace_back(key, ExposedCallEnd{c.span_end, c.exposed_ns, 0});
    for (ExposedRow* row : {&t, &l}) {
      row->group = group;
      row->group_ranks = ranks;
      row->phase = phase;
      row->type = c.type;
      add(*row, c);
    }
    l.layer = layer;
  }
  if (out.calls == 0) out.notes.emplace_back("no collective call in the analysed steps");
  if (unnamed_fetches > 0) {
    out.notes.push_back(fmt::format(
        "{} DeepSpeed ZeRO-3 parameter fetch(es) outside any nn.Module call (backward: DeepSpeed's pre-backward "
        "hook runs in the autograd engine): layer (none), the trace does not name the module",
        unnamed_fetches));
  }
  if (deepspeed_calls == 0 && zero_ops_without_stack(trace)) {
    out.notes.emplace_back(
        "DeepSpeed ZeRO-3 without Python frames: no layers, and the gradient reduction at the end of "
        "engine.backward and the collectives of engine.step fall in phase other; profile with with_stack=True");
  }
  for (auto& [key, row] : totals) out.totals.push_back(std::move(row));
  for (auto& [key, row] : layers) out.layers.push_back(std::move(row));
  std::stable_sort(out.layers.begin(), out.layers.end(),
                   [](const ExposedRow& a, const ExposedRow& b) { return a.exposed_ns > b.exposed_ns; });
  if (top > 0 && out.layers.size() > static_cast<size_t>(top)) out.layers.resize(static_cast<size_t>(top));
  if (keep_calls) {
    std::map<Key, size_t> index;
    for (size_t i = 0; i < out.layers.size(); ++i) {
      const ExposedRow& r = out.layers[i];
      index[{r.group, r.group_ranks, static_cast<int>(r.phase), r.type, r.layer}] = i;
    }
    for (auto& [key, call] : call_keys) {
      auto it = index.find(key);
      if (it == index.end()) continue;
      call.layer = it->second;
      out.call_ends.push_back(call);
    }
    std::sort(out.call_ends.begin(), out.call_ends.end(),
              [](const ExposedCallEnd& a, const ExposedCallEnd& b) { return a.end_ns < b.end_ns; });
  }
  return out;
}

}  // namespace scaleprof::analysis
