#include "analysis/kernel_sequences.h"

#include <algorithm>
#include <limits>
#include <map>
#include <string_view>
#include <tuple>

#include "analysis/analysis_window.h"
#include "analysis/device_events.h"
#include "analysis/operator_table.h"
#include "analysis/phases.h"
#include "analysis/profiler_steps.h"

namespace scaleprof::analysis {

std::string KernelSequence::pattern() const {
  std::string out = root;
  for (const std::string& k : kernels) out += "|" + k;
  return out;
}

namespace {

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// HTA's link of the backward thread (hta/common/trace_call_graph.py, _link_main_and_bwd_stacks): with
// exactly one thread running ProfilerSteps ("main") and one other running autograd:: ("bwd"), each
// top-level call of bwd inside a "## backward ##" annotation of main (else a ProfilerStep) is put under
// the first such annotation that holds it. `parent` is indexed by EventTable row.
void link_backward_thread(const trace::RankTrace& trace, const std::vector<OperatorCall>& calls,
                          std::vector<int64_t>* parent) {
  const trace::EventTable& ev = trace.events;
  std::map<uint32_t, int> label;  // track -> 1 main, 2 bwd (main wins)
  for (const OperatorCall& c : calls) {
    const std::string_view name = trace.strings.view(ev.name[c.event]);
    int& l = label[ev.track[c.event]];
    if (is_profiler_step_name(name)) {
      l = 1;
    } else if (l != 1 && name.find("autograd::") != std::string_view::npos) {
      l = 2;
    }
  }
  int64_t main = -1, bwd = -1, mains = 0, bwds = 0;
  for (const auto& [track, l] : label) {
    if (l == 1) {
      main = track;
      ++mains;
    } else if (l == 2) {
      bwd = track;
      ++bwds;
    }
  }
  if (mains != 1 || bwds != 1) return;
  std::vector<uint32_t> anchors;
  // The "## backward ##" annotations, else the ProfilerSteps.
  for (int pass = 0; pass < 2 && anchors.empty(); ++pass) {
    for (const OperatorCall& c : calls) {
      const std::string_view name = trace.strings.view(ev.name[c.event]);
      const bool anchor = pass == 0 ? starts_with(name, "## backward ##") : is_profiler_step_name(name);
      if (ev.track[c.event] == main && anchor) anchors.push_back(c.event);
    }
  }
  for (uint32_t a : anchors) {
    for (const OperatorCall& c : calls) {
      if (ev.track[c.event] != bwd || (*parent)[c.event] != -1) continue;
      if (ev.ts[c.event] >= ev.ts[a] && ev.end(c.event) <= ev.end(a)) (*parent)[c.event] = a;
    }
  }
}

}  // namespace

RankKernelSequences frequent_kernel_sequences(const trace::RankTrace& trace, const KernelSequenceOptions& options) {
  const trace::EventTable& ev = trace.events;
  const size_t n = ev.size();
  RankKernelSequences out;
  out.rank = trace.rank;
  if (options.operator_name.empty()) return out;

  std::vector<bool> kept(n, false);
  WindowOptions window;
  window.include_last_step = options.include_last_step;
  for (uint32_t r : compute_analysis_window(trace, window).rows) kept[r] = true;

  std::vector<OperatorCall> calls;
  OperatorTableOptions host_only;
  host_only.host_times_only = true;
  compute_operator_table(trace, host_only, &calls);
  std::vector<int64_t> parent(n, -2);  // -2: not a call
  for (const OperatorCall& c : calls) parent[c.event] = c.parent;
  link_backward_thread(trace, calls, &parent);

  // Depth of each call (top level 0), following the parents (a call's parent precedes it in `calls`
  // only on its own thread, so depths are found by walking up, memoised).
  std::vector<int32_t> depth(n, -1);
  auto depth_of = [&](uint32_t e) {
    std::vector<uint32_t> chain;
    int64_t x = e;
    while (x >= 0 && depth[static_cast<size_t>(x)] < 0) {
      chain.push_back(static_cast<uint32_t>(x));
      x = parent[static_cast<size_t>(x)];
      if (x == -2) x = -1;  // an enclosing event that is not a call (cannot happen; be safe)
    }
    int32_t d = x >= 0 ? depth[static_cast<size_t>(x)] : -1;
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) depth[*it] = ++d;
    return depth[e];
  };

  // Candidates and the smallest depth among them.
  int32_t min_depth = std::numeric_limits<int32_t>::max();
  std::vector<uint32_t> candidates;
  for (const OperatorCall& c : calls) {
    if (!kept[c.event]) continue;
    if (trace.strings.view(ev.name[c.event]).find(options.operator_name) == std::string_view::npos) continue;
    candidates.push_back(c.event);
    min_depth = std::min(min_depth, depth_of(c.event));
  }
  out.candidates = static_cast<int64_t>(candidates.size());
  if (candidates.empty()) return out;
  // Candidates at the smallest depth do not nest in one another: each device event belongs to at most one.
  std::vector<int32_t> root_of(n, -1);  // call row -> index into `tops`, once known; -1 none/unknown
  std::vector<bool> top(n, false);
  std::vector<uint32_t> tops;
  for (uint32_t e : candidates) {
    if (depth[e] == min_depth) {
      top[e] = true;
      tops.push_back(e);
    }
  }
  std::vector<std::vector<uint32_t>> work(tops.size());  // device rows under each top candidate
  std::vector<int32_t> top_index(n, -1);
  for (size_t i = 0; i < tops.size(); ++i) top_index[tops[i]] = static_cast<int32_t>(i);
  std::vector<int8_t> resolved(n, 0);  // 0 unknown, 1 resolved (root_of holds the answer)
  auto top_above = [&](int64_t call) -> int32_t {
    std::vector<uint32_t> chain;
    int64_t x = call;
    int32_t found = -1;
    while (x >= 0) {
      const auto u = static_cast<size_t>(x);
      if (resolved[u]) {
        found = root_of[u];
        break;
      }
      chain.push_back(static_cast<uint32_t>(u));
      if (top[u]) {
        found = top_index[u];
        break;
      }
      x = parent[u];
    }
    for (uint32_t c : chain) {
      resolved[c] = 1;
      root_of[c] = found;
    }
    return found;
  };
  const std::vector<int64_t> launches = launch_rows(trace);
  for (size_t i = 0; i < n; ++i) {
    if (!kept[i] || !is_stream_work(ev.cat[i])) continue;
    const int64_t launch = launches[i];
    if (launch < 0 || parent[static_cast<size_t>(launch)] == -2) continue;
    const int32_t t = top_above(launch);
    if (t >= 0) work[static_cast<size_t>(t)].push_back(static_cast<uint32_t>(i));
  }

  // Patterns: (root name, kernel names in start order) -> count and times.
  struct Sums {
    int64_t count = 0, gpu = 0, cpu = 0;
  };
  std::map<std::vector<trace::StringId>, Sums> patterns;
  for (size_t t = 0; t < tops.size(); ++t) {
    std::vector<uint32_t>& rows = work[t];
    if (static_cast<int64_t>(rows.size()) < options.min_pattern_len) continue;
    ++out.roots;
    std::sort(rows.begin(), rows.end(), [&](uint32_t a, uint32_t b) {
      return std::tie(ev.ts[a], ev.file_index[a]) < std::tie(ev.ts[b], ev.file_index[b]);
    });
    std::vector<trace::StringId> key = {ev.name[tops[t]]};
    int64_t gpu = 0;
    for (uint32_t r : rows) {
      key.push_back(ev.name[r]);
      gpu += ev.dur[r];
    }
    Sums& sums = patterns[std::move(key)];
    ++sums.count;
    sums.gpu += gpu;
    sums.cpu += ev.dur[tops[t]];
  }
  for (const auto& [key, sums] : patterns) {
    KernelSequence seq;
    seq.root = std::string(trace.strings.view(key[0]));
    for (size_t i = 1; i < key.size(); ++i) seq.kernels.emplace_back(trace.strings.view(key[i]));
    seq.count = sums.count;
    seq.gpu_ns = sums.gpu;
    seq.cpu_ns = sums.cpu;
    out.sequences.push_back(std::move(seq));
  }
  std::vector<std::string> texts;
  std::vector<size_t> order(out.sequences.size());
  for (size_t i = 0; i < order.size(); ++i) {
    order[i] = i;
    texts.push_back(out.sequences[i].pattern());
  }
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (out.sequences[a].count != out.sequences[b].count) return out.sequences[a].count > out.sequences[b].count;
    return texts[a] < texts[b];
  });
  std::vector<KernelSequence> sorted;
  sorted.reserve(order.size());
  for (size_t i : order) sorted.push_back(std::move(out.sequences[i]));
  out.sequences = std::move(sorted);
  return out;
}

}  // namespace scaleprof::analysis
