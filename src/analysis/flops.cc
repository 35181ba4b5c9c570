#include "analysis/flops.h"

#include <algorithm>
#include <limits>
#include <map>
#include <unordered_map>
#include <utility>

#include "analysis/profiler_steps.h"
#include "core/checked_sum.h"

namespace scaleprof::analysis {

namespace {

using trace::Category;

// One call with a formula whose shapes fit it.
struct Candidate {
  uint32_t event = 0;
  OpFlops flops;
  int64_t parent = -1;         // index of the enclosing candidate on its thread, -1 for none
  bool compute_below = false;  // a matmul/convolution/attention candidate is nested in it
  bool formula_below = false;  // any candidate is nested in it
  bool counted = false;
  int64_t device_ns = 0;
  int64_t kernels = 0;
  uint32_t kernel_event = 0;  // the device event, when it launched exactly one
  bool tf32 = false;          // an fp32 call with a kernel on TF32 tensor cores
};

// cuBLAS/CUTLASS name their TF32 tensor-core kernels "..._tf32..." or, on sm80, "...tensorop_s1688gemm..."
// (single precision through the 16x8x8 TF32 MMA); `Input type` says "float" either way.
bool is_tf32_kernel(std::string_view name) {
  return name.find("tf32") != std::string_view::npos || name.find("s1688gemm") != std::string_view::npos;
}

bool is_compute(const Candidate& c) {
  return is_flop_counter_class(c.flops.cls);
}

// Candidates nest per thread as host ops do in the operator table: sorted by (start, -end), the
// enclosing one is the nearest still open. Returns that order: every candidate after its parent.
std::vector<uint32_t> nest(const trace::RankTrace& t, std::vector<Candidate>* cands) {
  const trace::EventTable& e = t.events;
  std::vector<uint32_t> order(cands->size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const uint32_t ea = (*cands)[a].event, eb = (*cands)[b].event;
    if (e.track[ea] != e.track[eb]) return e.track[ea] < e.track[eb];
    if (e.ts[ea] != e.ts[eb]) return e.ts[ea] < e.ts[eb];
    if (e.end(ea) != e.end(eb)) return e.end(ea) > e.end(eb);
    return ea < eb;
  });
  std::vector<uint32_t> open;
  for (size_t k = 0; k < order.size(); ++k) {
    const uint32_t i = order[k];
    const uint32_t ev = (*cands)[i].event;
    if (k > 0 && e.track[(*cands)[order[k - 1]].event] != e.track[ev]) open.clear();
    while (!open.empty()) {
      const uint32_t top = (*cands)[open.back()].event;
      if (e.ts[ev] >= e.end(top) || e.end(ev) > e.end(top)) {
        open.pop_back();
      } else {
        break;
      }
    }
    (*cands)[i].parent = open.empty() ? int64_t{-1} : static_cast<int64_t>(open.back());
    open.push_back(i);
  }
  return order;
}

// Which candidates count (flops.h). Linear in the candidates whatever the depth of nesting (issue
// 30: walking every candidate's ancestors was quadratic on deeply nested calls, 10.9 s on a 406 kB
// trace): what lies below a call is gathered children first (`order` reversed), whether a counted
// call lies above it parents first (`order`).
void choose_counted(std::vector<Candidate>* cands, const std::vector<uint32_t>& order) {
  std::vector<Candidate>& c = *cands;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const Candidate& x = c[*it];
    if (x.parent < 0) continue;
    Candidate& up = c[static_cast<size_t>(x.parent)];
    up.formula_below = true;
    if (is_compute(x) || x.compute_below) up.compute_below = true;
  }
  for (Candidate& x : c) {
    if (is_compute(x)) x.counted = !x.compute_below;
  }
  // inside[i]: some ancestor of candidate i is counted (a compute call: only those count above others).
  std::vector<uint8_t> inside(c.size(), 0);
  for (const uint32_t i : order) {
    Candidate& x = c[i];
    if (x.parent >= 0) {
      const auto p = static_cast<size_t>(x.parent);
      inside[i] = static_cast<uint8_t>(inside[p] != 0 || c[p].counted);
    }
    if (is_compute(x) || x.formula_below) continue;
    x.counted = inside[i] == 0;
  }
}

// Kernels (and MTIA device work): copies, sets and sync records are not the FLOPs' work (TraceLens
// also times an operator by its kernels).
bool is_kernel(Category c) {
  return c == Category::kKernel || c == Category::kMtiaCcpEvents;
}

// Device time of the counted calls: each kernel goes to the counted call its launch lies in.
void attribute_device_time(const trace::RankTrace& t, std::vector<Candidate>* cands, bool* has_device) {
  const trace::EventTable& e = t.events;
  struct Span {
    int64_t start, end;
    uint32_t cand;
  };
  std::unordered_map<uint32_t, std::vector<Span>> by_track;
  for (uint32_t i = 0; i < cands->size(); ++i) {
    const Candidate& c = (*cands)[i];
    if (c.counted) by_track[e.track[c.event]].push_back({e.ts[c.event], e.end(c.event), i});
  }
  for (auto& [track, spans] : by_track) {
    std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.start < b.start; });
  }
  std::unordered_map<int64_t, uint32_t> launch_by_correlation;
  std::unordered_map<int64_t, uint32_t> op_by_external;
  for (uint32_t i = 0; i < e.size(); ++i) {
    const Category c = e.cat[i];
    if (trace::is_runtime_category(c) && e.correlation[i] != trace::kNone) {
      launch_by_correlation.emplace(e.correlation[i], i);
    } else if (c == Category::kCpuOp && e.external_id[i] != trace::kNone) {
      op_by_external.emplace(e.external_id[i], i);
    } else if (is_kernel(c)) {
      *has_device = true;
    }
  }
  if (!*has_device || by_track.empty()) return;
  for (uint32_t i = 0; i < e.size(); ++i) {
    const Category c = e.cat[i];
    if (!is_kernel(c)) continue;
    int64_t launch = -1;
    if (auto it = launch_by_correlation.find(e.correlation[i]);
        e.correlation[i] != trace::kNone && it != launch_by_correlation.end()) {
      launch = it->second;
    } else if (auto op = op_by_external.find(e.external_id[i]);
               e.external_id[i] != trace::kNone && op != op_by_external.end()) {
      launch = op->second;
    }
    if (launch < 0) continue;
    const auto found = by_track.find(e.track[static_cast<size_t>(launch)]);
    if (found == by_track.end()) continue;
    const std::vector<Span>& spans = found->second;
    const int64_t at = e.ts[static_cast<size_t>(launch)];
    auto it = std::upper_bound(spans.begin(), spans.end(), at, [](int64_t v, const Span& s) { return v < s.start; });
    if (it == spans.begin()) continue;
    --it;
    if (at > it->end) continue;
    Candidate& call = (*cands)[it->cand];
    call.device_ns += e.dur[i];
    call.kernels += 1;
    call.kernel_event = i;
    if (call.flops.dtype == FlopDtype::kFp32 && is_tf32_kernel(t.name(i))) call.tf32 = true;
  }
}

template <typename Row>
void sort_by_flops(std::vector<Row>* rows) {
  // An unknown sum (past int64) is the largest.
  auto key = [](const Row& r) { return is_unknown_figure(r.flops) ? INT64_MAX : r.flops; };
  std::stable_sort(rows->begin(), rows->end(), [&](const Row& a, const Row& b) { return key(a) > key(b); });
}

// The calls with a formula whose shapes fit it, in event order, with which of them count (flops.h);
// out's shaped and unmodelled calls counted.
std::vector<Candidate> counted_candidates(const trace::RankTrace& t, RankFlops* out) {
  const trace::EventTable& e = t.events;
  const trace::ShapesTable& sh = t.shapes;
  // Which names have a formula, once per distinct name.
  std::unordered_map<trace::StringId, bool> formula_by_name;
  std::vector<Candidate> cands;
  for (size_t r = 0; r < sh.size(); ++r) {
    const uint32_t ev = sh.event[r];
    if (e.cat[ev] != Category::kCpuOp) continue;
    ++out->shaped_calls;
    auto [it, fresh] = formula_by_name.try_emplace(e.name[ev], false);
    if (fresh) it->second = has_flop_formula(t.strings.view(e.name[ev]));
    if (!it->second) continue;
    const auto inputs = parse_op_inputs(t.strings.view(sh.input_dims[r]), t.strings.view(sh.input_types[r]),
                                        t.strings.view(sh.concrete_inputs[r]));
    const auto flops = inputs ? op_flops(t.strings.view(e.name[ev]), *inputs) : std::nullopt;
    if (!flops) {
      ++out->unmodelled_calls;
      continue;
    }
    Candidate c;
    c.event = ev;
    c.flops = *flops;
    cands.push_back(c);
  }
  if (cands.empty()) return cands;
  choose_counted(&cands, nest(t, &cands));
  return cands;
}

}  // namespace

std::vector<CountedFlopCall> counted_flop_calls(const trace::RankTrace& t) {
  RankFlops counts;
  std::vector<CountedFlopCall> out;
  for (const Candidate& c : counted_candidates(t, &counts)) {
    if (c.counted) out.push_back({c.event, c.flops.flops, c.flops.cls});
  }
  return out;
}

RankFlops compute_flops(const trace::RankTrace& t) {
  RankFlops out;
  const trace::EventTable& e = t.events;
  std::vector<Candidate> cands = counted_candidates(t, &out);
  int64_t first = std::numeric_limits<int64_t>::max(), last = std::numeric_limits<int64_t>::min();
  for (size_t i = 0; i < e.size(); ++i) {
    first = std::min(first, e.ts[i]);
    last = std::max(last, e.end(i));
  }
  out.span_ns = e.size() > 0 ? last - first : 0;
  if (cands.empty()) return out;
  attribute_device_time(t, &cands, &out.has_device);

  // Steps: the ProfilerStep#N windows of every analysis (profiler_steps.h: by start, disjoint).
  for (const ProfilerStepWindow& w : find_profiler_steps(t).steps) out.steps.push_back({w.step, w.start_ns, w.end_ns});

  std::map<std::pair<trace::StringId, FlopDtype>, size_t> op_rows, kernel_rows;
  for (Candidate& c : cands) {
    if (!c.counted) continue;
    if (c.tf32) c.flops.dtype = FlopDtype::kTf32;
    ++out.counted_calls;
    // Each call's FLOPs fit int64 (op_flops); their sums may not: unknown then, never wrapped.
    add_or_unknown(&out.flops, c.flops.flops);
    const size_t dtype = static_cast<size_t>(c.flops.dtype);
    if (is_compute(c)) {
      add_or_unknown(&out.compute_flops[dtype], c.flops.flops);
      if (c.flops.flop_counter) add_or_unknown(&out.flop_counter_flops, c.flops.flops);
    }
    auto [row, fresh] = op_rows.try_emplace({e.name[c.event], c.flops.dtype}, out.operators.size());
    if (fresh) {
      out.operators.push_back({std::string(t.name(c.event)), c.flops.cls, c.flops.dtype});
    }
    FlopOperator& op = out.operators[row->second];
    ++op.calls;
    add_or_unknown(&op.flops, c.flops.flops);
    op.host_ns += e.dur[c.event];
    op.device_ns += c.device_ns;
    op.kernels += c.kernels;
    if (c.kernels == 1) {
      auto [k, kfresh] = kernel_rows.try_emplace({e.name[c.kernel_event], c.flops.dtype}, out.kernels.size());
      if (kfresh) out.kernels.push_back({std::string(t.name(c.kernel_event)), c.flops.cls, c.flops.dtype});
      FlopKernel& kr = out.kernels[k->second];
      ++kr.calls;
      add_or_unknown(&kr.flops, c.flops.flops);
      kr.device_ns += c.device_ns;
    }
    // The step whose window holds the call's start (the latest step starting at or before it).
    const int64_t at = e.ts[c.event];
    auto s = std::upper_bound(out.steps.begin(), out.steps.end(), at,
                              [](int64_t v, const FlopStep& w) { return v < w.start_ns; });
    if (s != out.steps.begin() && at < std::prev(s)->end_ns) {
      FlopStep& step = *std::prev(s);
      ++step.calls;
      add_or_unknown(&step.flops, c.flops.flops);
      if (is_compute(c)) add_or_unknown(&step.compute_flops[dtype], c.flops.flops);
    }
  }
  sort_by_flops(&out.operators);
  sort_by_flops(&out.kernels);
  return out;
}

}  // namespace scaleprof::analysis
