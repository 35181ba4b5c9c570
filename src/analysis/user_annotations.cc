#include "analysis/user_annotations.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <string_view>
#include <unordered_map>

#include "analysis/device_events.h"

namespace scaleprof::analysis {

namespace {

using trace::Category;

}  // namespace

RankAnnotatedKernels gpu_kernels_with_user_annotations(const trace::RankTrace& trace, std::span<const uint32_t> rows) {
  const trace::EventTable& ev = trace.events;
  RankAnnotatedKernels out;
  out.rank = trace.rank;
  std::vector<uint32_t> spans;
  std::vector<uint32_t> work;
  for (const uint32_t i : rows) {
    if (ev.cat[i] == Category::kGpuUserAnnotation && ev.phase[i] == trace::Phase::kComplete) {
      spans.push_back(i);
    } else if (is_device_work(ev.cat[i])) {
      work.push_back(i);
    }
  }
  out.spans = static_cast<int64_t>(spans.size());
  // Work by start (file order among equal starts): the output order, and the order searched.
  std::stable_sort(work.begin(), work.end(), [&](uint32_t a, uint32_t b) { return ev.ts[a] < ev.ts[b]; });
  // Per track: the positions in `work` of its work, by start, and the longest of them.
  std::unordered_map<uint32_t, std::vector<uint32_t>> by_track;
  std::unordered_map<uint32_t, int64_t> longest;
  for (uint32_t k = 0; k < work.size(); ++k) {
    const uint32_t i = work[k];
    by_track[ev.track[i]].push_back(k);
    int64_t& l = longest[ev.track[i]];
    l = std::max(l, static_cast<int64_t>(ev.dur[i]));
  }
  // HTA's order: spans longest first (stable: file order among equal durations); each overwrites the
  // work it holds, so the shortest holding span is the one left.
  std::stable_sort(spans.begin(), spans.end(), [&](uint32_t a, uint32_t b) { return ev.dur[a] > ev.dur[b]; });
  std::vector<int32_t> assigned(work.size(), -1);
  std::unordered_map<trace::StringId, int32_t> name_index;
  std::vector<trace::StringId> span_names;
  for (const uint32_t s : spans) {
    auto found = by_track.find(ev.track[s]);
    if (found == by_track.end()) continue;
    const std::vector<uint32_t>& positions = found->second;
    const int64_t s_start = ev.ts[s];
    const int64_t s_end = ev.end(s);
    // Work starting before s_start - longest cannot reach past s_start.
    const int64_t from = s_start - longest[ev.track[s]];
    auto it = std::lower_bound(positions.begin(), positions.end(), from,
                               [&](uint32_t k, int64_t t) { return ev.ts[work[k]] < t; });
    int32_t index = -1;
    for (; it != positions.end() && ev.ts[work[*it]] < s_end; ++it) {
      const uint32_t i = work[*it];
      if (!(s_start < ev.end(i))) continue;
      if (index < 0) {
        auto [slot, added] = name_index.try_emplace(ev.name[s], static_cast<int32_t>(span_names.size()));
        if (added) span_names.push_back(ev.name[s]);
        index = slot->second;
      }
      assigned[*it] = index;
    }
  }
  // Names in order of first use by the output rows.
  std::vector<int32_t> renumber(span_names.size(), -1);
  out.kernels.reserve(work.size());
  for (uint32_t k = 0; k < work.size(); ++k) {
    const uint32_t i = work[k];
    AnnotatedKernel a;
    a.name = std::string(trace.name(i));
    a.cat = ev.cat[i] == Category::kUnknown ? std::string(trace.strings.view(ev.cat_name[i]))
                                            : std::string(trace::category_name(ev.cat[i]));
    a.pid = trace.tracks.pid[ev.track[i]];
    a.tid = trace.tracks.tid[ev.track[i]];
    a.ts_ns = ev.ts[i];
    a.dur_ns = ev.dur[i];
    a.stream = ev.stream[i];
    a.correlation = ev.correlation[i];
    a.external_id = ev.external_id[i];
    if (assigned[k] >= 0) {
      int32_t& r = renumber[static_cast<size_t>(assigned[k])];
      if (r < 0) {
        r = static_cast<int32_t>(out.annotation_names.size());
        out.annotation_names.emplace_back(trace.strings.view(span_names[static_cast<size_t>(assigned[k])]));
      }
      a.annotation = r;
    }
    out.kernels.push_back(std::move(a));
  }
  return out;
}

std::vector<AnnotationSpan> user_annotation_spans(const trace::RankTrace& trace, std::span<const uint32_t> rows,
                                                  bool gpu) {
  const trace::EventTable& ev = trace.events;
  const Category wanted = gpu ? Category::kGpuUserAnnotation : Category::kUserAnnotation;
  std::vector<AnnotationSpan> out;
  for (const uint32_t i : rows) {
    if (ev.cat[i] != wanted || ev.phase[i] != trace::Phase::kComplete) continue;
    out.push_back({std::string(trace.name(i)), ev.dur[i]});
  }
  return out;
}

bool has_user_annotations(const trace::RankTrace& trace, bool gpu) {
  const Category wanted = gpu ? Category::kGpuUserAnnotation : Category::kUserAnnotation;
  return std::find(trace.events.cat.begin(), trace.events.cat.end(), wanted) != trace.events.cat.end();
}

RankAnnotationBreakdown aggregate_user_annotations(int64_t rank, std::span<const AnnotationSpan> spans,
                                                   const AnnotationBreakdownOptions& options) {
  RankAnnotationBreakdown out;
  out.rank = rank;
  out.spans = static_cast<int64_t>(spans.size());
  std::map<std::string, RunningStats, std::less<>> by_name;
  for (const AnnotationSpan& s : spans) by_name[s.name].add(s.dur_ns);
  std::vector<AnnotationStats> named;
  named.reserve(by_name.size());
  for (auto& [name, stats] : by_name) named.push_back({name, false, 1, stats});
  // HTA orders by sum, largest first (here stable over the names' order, so ties go by name).
  std::stable_sort(named.begin(), named.end(),
                   [](const AnnotationStats& a, const AnnotationStats& b) { return a.dur.sum > b.dur.sum; });
  const size_t k = options.num_kernels < 0 ? 0 : static_cast<size_t>(options.num_kernels);
  if (named.size() > k) {
    std::vector<int64_t> running(named.size());
    int64_t total = 0;
    for (size_t i = 0; i < named.size(); ++i) running[i] = total += named[i].dur.sum;
    std::vector<int64_t> sorted = running;
    std::sort(sorted.begin(), sorted.end());
    const double limit = quantile_sorted(sorted, std::clamp(options.duration_ratio, 0.0, 1.0));
    auto allowed = [&](const std::string& name) {
      if (!options.has_allowlist) return false;
      if (options.allowlist.empty()) return true;  // HTA: re.compile("") matches every name
      return std::any_of(options.allowlist.begin(), options.allowlist.end(),
                         [&](const std::string& p) { return name.find(p) != std::string::npos; });
    };
    AnnotationStats others{"others", true, 0, {}};
    std::vector<AnnotationStats> kept;
    for (size_t i = 0; i < named.size(); ++i) {
      const bool fold = !allowed(named[i].name) && (static_cast<double>(running[i]) > limit || i >= k);
      if (fold) {
        others.dur.merge(named[i].dur);
        others.names += 1;
      } else {
        kept.push_back(std::move(named[i]));
      }
    }
    if (others.names > 0) {
      // A name "others" of the trace's own is folded into HTA's row of that name too.
      auto same = std::find_if(kept.begin(), kept.end(), [](const AnnotationStats& s) { return s.name == "others"; });
      if (same != kept.end()) {
        others.dur.merge(same->dur);
        others.names += 1;
        kept.erase(same);
      }
      kept.push_back(std::move(others));
    }
    named = std::move(kept);
  }
  std::stable_sort(named.begin(), named.end(),
                   [](const AnnotationStats& a, const AnnotationStats& b) { return a.name < b.name; });
  out.rows = std::move(named);
  return out;
}

}  // namespace scaleprof::analysis
