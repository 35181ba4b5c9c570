// `scaleprof trace critical-path` (issue 23): per rank and step, the critical path's time by
// scaleprof's category and by HTA's bound_by (analysis/critical_path.h), its longest items, and
// across ranks, per step, the path through the matched collectives: at each one it continues on the
// rank that arrived last, so the step's path names its straggler and how late it was.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <utility>

#include "analysis/collective_match.h"
#include "analysis/profiler_steps.h"
#include "report/trace_cells.h"
#include "report/trace_report.h"

namespace scaleprof::report {

namespace {

using analysis::PathCategory;

std::string title_case(std::string_view name) {
  std::string header(name);
  std::replace(header.begin(), header.end(), '_', ' ');
  if (!header.empty()) header[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(header[0])));
  return header;
}

double pct(int64_t part, int64_t whole) {
  return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : std::nan("");
}

// One rank's part of the cross-rank path of a step.
struct RankOnPath {
  int64_t last_arrivals = 0;  // matched collectives of the step it arrived at last
  int64_t lag_ns = 0;         // summed: its arrival − the arrival before it, where it was last
  int64_t on_path_ns = 0;     // the cross-rank path's time on this rank
};

// The matched collectives of each step and what they say across ranks.
struct CrossRank {
  std::map<std::pair<int64_t, int64_t>, int64_t> waits;    // (rank, step) -> summed wait
  std::map<int64_t, std::map<int64_t, RankOnPath>> steps;  // step -> rank -> its part
  std::map<int64_t, int64_t> collectives;                  // step -> matched calls
};

// Each rank's step windows on the collectives' aligned clock (the host offsets subtracted).
using StepTimes = std::map<int64_t, std::map<int64_t, std::pair<int64_t, int64_t>>>;  // step -> rank -> [start, end)

CrossRank cross_rank(const analysis::CollectiveRows& rows, const StepTimes& times, const TraceReportOptions& options) {
  CrossRank out;
  if (rows.ranks().size() < 2) return out;
  analysis::MatchOptions match;
  match.gpus_per_node = options.gpus_per_node;
  match.align = options.align_clocks;  // --no-align: offsets estimated, every rank on its raw clock
  const analysis::CollectiveAnalysis analysis = analysis::match_collectives(rows, match);
  std::map<int64_t, int64_t> offset;  // rank -> ns subtracted from its times
  for (const analysis::HostClock& c : analysis.clocks) {
    for (int64_t r : c.ranks) offset[r] = c.offset_ns;
  }
  // step -> calls in the order of their last arrival
  std::map<int64_t, std::vector<const analysis::MatchedCollective*>> by_step;
  for (const analysis::MatchedCollective& call : analysis.calls) {
    if (call.status != analysis::MatchStatus::kMatched || call.step < 0 || call.ranks.size() < 2) continue;
    if (!times.contains(call.step)) continue;  // a step outside the windows asked for
    for (const analysis::RankTiming& t : call.ranks) out.waits[{t.rank, call.step}] += t.wait_ns;
    by_step[call.step].push_back(&call);
  }
  auto latest_start = [](const analysis::MatchedCollective* c) {
    int64_t latest = c->ranks.front().start_ns;
    for (const auto& t : c->ranks) latest = std::max(latest, t.start_ns);
    return latest;
  };
  for (auto& [step, calls] : by_step) {
    std::stable_sort(calls.begin(), calls.end(),
                     [&](const auto* a, const auto* b) { return latest_start(a) < latest_start(b); });
    auto& ranks = out.steps[step];
    out.collectives[step] = static_cast<int64_t>(calls.size());
    const auto step_it = times.find(step);
    // The path enters the step on the first call's last rank, at that rank's own step start.
    int64_t from = -1;
    for (const analysis::MatchedCollective* call : calls) {
      int64_t latest = latest_start(call), before = std::numeric_limits<int64_t>::min(), earliest_end = -1;
      for (const auto& t : call->ranks) {
        if (t.rank != call->last_rank) before = std::max(before, t.start_ns);
        earliest_end = earliest_end < 0 ? t.end_ns : std::min(earliest_end, t.end_ns);
      }
      RankOnPath& last = ranks[call->last_rank];
      ++last.last_arrivals;
      last.lag_ns += latest - before;
      if (from < 0 && step_it != times.end()) {
        if (auto r = step_it->second.find(call->last_rank); r != step_it->second.end()) {
          from = r->second.first - offset[call->last_rank];
        }
      }
      if (from >= 0) last.on_path_ns += std::max<int64_t>(0, latest - from);
      from = std::max(latest, earliest_end);
    }
    // After the last call the path ends on the rank whose step ends last.
    if (step_it != times.end() && from >= 0) {
      int64_t end_rank = -1, end = std::numeric_limits<int64_t>::min();
      for (const auto& [rank, window] : step_it->second) {
        if (window.second - offset[rank] > end) end = window.second - offset[rank], end_rank = rank;
      }
      if (end_rank >= 0) ranks[end_rank].on_path_ns += std::max<int64_t>(0, end - from);
    }
    for (const auto& [rank, window] :
         step_it != times.end() ? step_it->second : std::map<int64_t, std::pair<int64_t, int64_t>>{}) {
      ranks[rank];  // every rank of the step gets a row, on the path or not
    }
  }
  return out;
}

}  // namespace

TraceReport critical_path_tables(const engine::RankStore& ranks, const analysis::CollectiveRows& rows,
                                 const TraceReportOptions& options) {
  StepTimes times;
  std::vector<std::pair<int64_t, std::string>> missing;
  ranks->for_each([&](const engine::RankResults& r) {
    if (r.critical_path->steps.empty()) missing.emplace_back(r.rank, r.critical_path->path);
    for (const auto& s : r.critical_path->steps) times[s.step][r.rank] = {s.start_ns, s.end_ns};
  });
  // Across ranks the path goes through the matched collectives of ProfilerSteps: other windows have
  // no step to match them by.
  const analysis::PathWindowSpec& window = options.path_window;
  const bool step_windows = analysis::names_profiler_steps(window.annotation);
  auto cross = std::make_shared<const CrossRank>(step_windows ? cross_rank(rows, times, options) : CrossRank{});
  auto with_waits = [cross](const engine::RankResults& r, analysis::StepCriticalPath s) {
    if (auto it = cross->waits.find({r.rank, s.step}); it != cross->waits.end()) {
      analysis::move_rank_wait(&s, it->second);
    }
    return s;
  };

  Table t;
  t.title =
      "Critical path per rank and step: its time by category (adds up to the step) and by HTA's bound_by "
      "(no_weight: the time HTA weighs 0, idle gaps and waits); HTA length: the path's length by HTA's weights";
  t.columns = {{"rank", "Rank"}, {"step", "Step"}, {"step_us", "Step (us)"}};
  for (int c = 0; c < analysis::kPathCategoryCount; ++c) {
    const std::string_view name = analysis::path_category_name(static_cast<PathCategory>(c));
    t.columns.push_back({fmt::format("{}_us", name), fmt::format("{} (us)", title_case(name))});
  }
  t.columns.push_back({"hta_length_us", "HTA length (us)"});
  for (int b = 0; b < analysis::kBoundByCount; ++b) {
    std::string_view name = analysis::bound_by_name(static_cast<analysis::BoundBy>(b));
    if (name.empty()) name = "no_weight";
    t.columns.push_back({fmt::format("{}_us", name), fmt::format("{} (us)", name)});
  }
  // HTA's summary(): the HTA length by bound_by (the shares HTA prints are these over the length).
  for (int b = 1; b < analysis::kBoundByCount; ++b) {
    const std::string_view name = analysis::bound_by_name(static_cast<analysis::BoundBy>(b));
    t.columns.push_back({fmt::format("hta_{}_us", name), fmt::format("HTA {} (us)", name)});
  }
  t.columns.push_back({"segments", "Segments"});
  t.set_importance(Importance::kKey, {"rank", "step"});
  t.set_importance(Importance::kDetail,
                   {"hta_length_us", "no_weight_us", "cpu_bound_us", "gpu_compute_bound_us",
                    "gpu_communication_bound_us", "gpu_kernel_kernel_overhead_us", "gpu_kernel_launch_overhead_us",
                    "hta_cpu_bound_us", "hta_gpu_compute_bound_us", "hta_gpu_communication_bound_us",
                    "hta_gpu_kernel_kernel_overhead_us", "hta_gpu_kernel_launch_overhead_us", "segments"});
  t.row_source = [ranks, with_waits](const RowVisitor& visit) {
    ranks->for_each([&](const engine::RankResults& r) {
      for (const auto& raw : r.critical_path->steps) {
        const analysis::StepCriticalPath s = with_waits(r, raw);
        std::vector<Cell> row = {r.rank, s.step, us_cell(s.duration_ns())};
        for (int64_t ns : s.category_ns) row.push_back(us_cell(ns));
        row.push_back(us_cell(s.hta_length_ns));
        for (int64_t ns : s.bound_by_ns) row.push_back(us_cell(ns));
        for (size_t b = 1; b < s.hta_bound_by_ns.size(); ++b) row.push_back(us_cell(s.hta_bound_by_ns[b]));
        row.emplace_back(s.segments);
        visit(row);
      }
    });
  };

  Table top;
  top.title = fmt::format(
      "The critical path's longest items per rank and step (--top {}): operators, kernels, "
      "waits for the GPU named by the device work waited for, idle gaps",
      options.top);
  top.columns = {{"rank", "Rank"}, {"step", "Step"},         {"category", "Category"}, {"bound_by", "Bound by"},
                 {"name", "Name"}, {"path_us", "Path (us)"}, {"step_pct", "Step %"},   {"segments", "Segments"}};
  top.set_importance(Importance::kKey, {"rank", "step", "name"});
  top.set_importance(Importance::kDetail, {"segments", "bound_by"});
  top.row_source = [ranks](const RowVisitor& visit) {
    ranks->for_each([&](const engine::RankResults& r) {
      for (const auto& s : r.critical_path->steps) {
        for (const analysis::PathItem& item : s.top) {
          visit({r.rank, s.step, analysis::path_category_name(item.category), analysis::bound_by_name(item.bound_by),
                 item.name, us_cell(item.ns), pct_cell(pct(item.ns, s.duration_ns())), item.segments});
        }
      }
    });
  };

  Table across;
  across.title =
      "Cross-rank critical path per step: at each matched collective the path continues on the rank that arrived "
      "last; lag: how much later it arrived than the rank before it; straggler: the rank with the most lag";
  across.columns = {{"step", "Step"},
                    {"rank", "Rank"},
                    {"straggler", "Straggler"},
                    {"lag_us", "Lag (us)"},
                    {"last_arrivals", "Last arrivals"},
                    {"collectives", "Collectives"},
                    {"on_path_us", "On path (us)"}};
  across.set_importance(Importance::kKey, {"step", "rank"});
  across.row_source = [cross](const RowVisitor& visit) {
    for (const auto& [step, ranks] : cross->steps) {
      int64_t straggler = -1, most = 0;
      for (const auto& [rank, part] : ranks) {
        if (part.lag_ns > most) most = part.lag_ns, straggler = rank;
      }
      for (const auto& [rank, part] : ranks) {
        visit({step, rank, rank == straggler ? "yes" : "no", us_cell(part.lag_ns), part.last_arrivals,
               cross->collectives.at(step), us_cell(part.on_path_ns)});
      }
    }
  };

  Table left;
  left.title =
      missing.empty() ? "Ranks left out for want of a profiled step: none" : "Ranks left out: no profiled step";
  left.columns = {{"rank", "Rank"}, {"file", "File"}, {"missing", "Missing"}};
  const analysis::PathWindowSpec& spec = options.path_window;
  const bool steps = step_windows;
  const std::string why =
      steps && spec.first < 0   ? "no ProfilerStep#N annotation: profile with a torch.profiler schedule and call "
                                  "prof.step() once per step"
      : steps                   ? fmt::format("no ProfilerStep {} to {}", spec.first, std::max(spec.first, spec.last))
      : spec.annotation.empty() ? std::string("no event")
      : spec.first < 0 ? fmt::format("no host annotation or operator whose name contains '{}'", spec.annotation)
                       : fmt::format("no instance {} to {} of '{}' (instances count from 0)", spec.first,
                                     std::max(spec.first, spec.last), spec.annotation);
  for (const auto& [rank, path] : missing) left.add_row({rank, path, why});

  // Every edge of each path, in order (--events; HTA's get_critical_path_breakdown, with real times).
  Table events;
  events.title =
      "The critical path's edges in order per rank and window: offset from the window's start, real duration, "
      "HTA's weight (HTA's `duration`), HTA's edge type and bound_by, the event (for a wait: the device work "
      "waited for) and its position in traceEvents (-1: none)";
  events.columns = {{"rank", "Rank"},
                    {"step", "Step"},
                    {"seq", "Seq"},
                    {"offset_us", "Offset (us)"},
                    {"ts_us", "Ts (us)"},
                    {"duration_us", "Duration (us)"},
                    {"hta_weight_us", "HTA weight (us)"},
                    {"type", "Type"},
                    {"category", "Category"},
                    {"bound_by", "Bound by"},
                    {"s_name", "Name"},
                    {"cat", "Cat"},
                    {"stream", "Stream"},
                    {"event_index", "Event index"}};
  events.set_importance(Importance::kKey, {"rank", "step", "seq", "s_name"});
  events.set_importance(Importance::kDetail, {"ts_us", "type", "cat", "stream", "event_index"});
  events.row_source = [ranks](const RowVisitor& visit) {
    ranks->for_each([&](const engine::RankResults& r) {
      for (const auto& s : r.critical_path->steps) {
        int64_t seq = 0;
        for (const analysis::PathEvent& e : s.events) {
          visit({r.rank, s.step, seq++, us_cell(e.start_ns - s.start_ns),
                 us_cell(e.start_ns - r.critical_path->base_time_ns), us_cell(e.end_ns - e.start_ns),
                 us_cell(e.hta_weight_ns), analysis::path_edge_type_name(e.type),
                 analysis::path_category_name(e.category), analysis::bound_by_name(e.bound_by), e.name, e.cat, e.stream,
                 e.file_index});
        }
      }
    });
  };

  TraceReport report;
  report.add("critical_path", std::move(t));
  report.add("critical_path_top", std::move(top));
  report.add("cross_rank_path", std::move(across));
  report.add("critical_path_missing", std::move(left));
  if (options.path_events) report.add("critical_path_events", std::move(events));
  return report;
}

}  // namespace scaleprof::report
