// `scaleprof trace phases` and `scaleprof trace decompose` (issue 20): per rank and step, the time in
// each phase and record_function region with the device work each launched (analysis/phases.h), and
// the step split into exclusive parts (analysis/step_decomposition.h), each with a last row holding
// the median over the rows above it (rank and step null). A rank without ProfilerStep windows gets a
// row in the `missing` table (always present, so the JSON is one object whatever the input) naming
// its file and what is missing; the other ranks are still reported.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <limits>
#include <map>
#include <memory>
#include <utility>

#include "analysis/collective_match.h"
#include "report/trace_cells.h"
#include "report/trace_report.h"

namespace scaleprof::report {

namespace {

constexpr const char* kNoSteps =
    "no ProfilerStep#N annotation: profile with a torch.profiler schedule and call prof.step() once per step";

// The median of `values` in ns (the mean of the two middle ones for an even count); NaN when empty.
double median_ns(std::vector<int64_t> values) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  const size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid), values.end());
  const auto upper = static_cast<double>(values[mid]);
  if (values.size() % 2 == 1) return upper;
  const int64_t lower = *std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid));
  return (static_cast<double>(lower) + upper) / 2.0;
}

// Per column of ns values, every row's value: for the median row.
struct Columns {
  std::vector<std::vector<int64_t>> values;
  void add(const std::vector<int64_t>& row) {
    values.resize(row.size());
    for (size_t c = 0; c < row.size(); ++c) values[c].push_back(row[c]);
  }
  std::vector<Cell> median_row(size_t leading_nulls) const {
    std::vector<Cell> row(leading_nulls, Cell::null());
    for (const auto& column : values) row.push_back(us_stat_cell(median_ns(column)));
    return row;
  }
};

std::vector<Cell> ns_row(Cell rank, Cell step, const std::vector<int64_t>& values) {
  std::vector<Cell> row = {std::move(rank), std::move(step)};
  for (int64_t v : values) row.push_back(us_cell(v));
  return row;
}

// The ranks whose trace has no step in the window, with their file.
Table missing_table(const std::vector<std::pair<int64_t, std::string>>& missing) {
  Table t;
  t.title = missing.empty() ? "Ranks left out for want of a profiled step: none" : "Ranks left out: no profiled step";
  t.columns = {{"rank", "Rank"}, {"file", "File"}, {"missing", "Missing"}};
  for (const auto& [rank, path] : missing) t.add_row({rank, path, kNoSteps});
  return t;
}

std::vector<int64_t> phase_values(const analysis::StepPhases& s, bool kernels) {
  std::vector<int64_t> v = {s.duration_ns()};
  constexpr analysis::StepPhase kShown[] = {analysis::StepPhase::kDataLoading, analysis::StepPhase::kForward,
                                            analysis::StepPhase::kBackward, analysis::StepPhase::kOptimizer,
                                            analysis::StepPhase::kOther};
  for (analysis::StepPhase p : kShown) v.push_back(s.host_ns[static_cast<size_t>(p)]);
  if (kernels) {
    for (analysis::StepPhase p : kShown) v.push_back(s.device_ns[static_cast<size_t>(p)]);
  }
  return v;
}

}  // namespace

TraceReport phases_tables(const engine::RankStore& ranks) {
  bool kernels = false;
  Columns columns;
  std::vector<std::pair<int64_t, std::string>> missing;
  ranks->for_each([&](const engine::RankResults& r) { kernels |= r.phases->has_kernels; });
  ranks->for_each([&](const engine::RankResults& r) {
    if (r.phases->steps.empty()) missing.emplace_back(r.rank, r.phases->path);
    for (const auto& s : r.phases->steps) columns.add(phase_values(s, kernels));
  });
  Table phases;
  phases.title = "Time per phase and step (the phases add up to the step); last row: median";
  phases.columns = {{"rank", "Rank"},
                    {"step", "Step"},
                    {"step_us", "Step (us)"},
                    {"data_loading_us", "Data loading (us)"},
                    {"forward_us", "Forward (us)"},
                    {"backward_us", "Backward (us)"},
                    {"optimizer_us", "Optimizer (us)"},
                    {"other_us", "Other (us)"}};
  if (kernels) {
    phases.title += "; device time by the phase of its launch";
    phases.columns.insert(phases.columns.end(), {{"data_loading_device_us", "Data loading device (us)"},
                                                 {"forward_device_us", "Forward device (us)"},
                                                 {"backward_device_us", "Backward device (us)"},
                                                 {"optimizer_device_us", "Optimizer device (us)"},
                                                 {"other_device_us", "Other device (us)"}});
  }
  phases.set_importance(Importance::kKey, {"rank", "step"});
  phases.set_importance(Importance::kUseful, {"other_us", "other_device_us"});
  const bool any_step = !columns.values.empty();
  phases.row_source = [ranks, kernels, columns = std::move(columns), any_step](const RowVisitor& visit) {
    ranks->for_each([&](const engine::RankResults& r) {
      for (const auto& s : r.phases->steps) visit(ns_row(r.rank, s.step, phase_values(s, kernels)));
    });
    if (any_step) visit(columns.median_row(2));
  };

  Table regions;
  regions.title = "Top-level record_function regions per step (host time: union of their intervals in the step)";
  regions.columns = {
      {"rank", "Rank"}, {"step", "Step"}, {"region", "Region"}, {"calls", "Calls"}, {"host_us", "Host (us)"}};
  if (kernels) {
    regions.title += "; device work by the region enclosing its launch, (none): launched outside every region";
    regions.columns.insert(regions.columns.end(), {{"kernels", "Kernels"}, {"device_us", "Device (us)"}});
  }
  regions.set_importance(Importance::kKey, {"rank", "step", "region"});
  regions.set_importance(Importance::kUseful, {"kernels"});
  regions.row_source = [ranks, kernels](const RowVisitor& visit) {
    ranks->for_each([&](const engine::RankResults& r) {
      for (const auto& s : r.phases->steps) {
        for (const auto& region : s.regions) {
          std::vector<Cell> row = {r.rank, s.step, region.name.empty() ? Cell("(none)") : Cell(region.name),
                                   region.calls, us_cell(region.host_ns)};
          if (kernels) row.insert(row.end(), {Cell(region.kernels), us_cell(region.device_ns)});
          visit(row);
        }
      }
    });
  };
  TraceReport report;
  report.add("phases", std::move(phases));
  report.add("regions", std::move(regions));
  report.add("missing", missing_table(missing));
  return report;
}

TraceReport decompose_tables(const engine::RankStore& ranks, const analysis::CollectiveRows& rows,
                             const TraceReportOptions& options) {
  // Each rank's wait at the matched collectives of each step (collective_match.h: latest start − its
  // start), moved from its exposed communication below.
  auto waits = std::make_shared<std::map<std::pair<int64_t, int64_t>, int64_t>>();
  if (rows.ranks().size() > 1) {
    analysis::MatchOptions match;
    match.gpus_per_node = options.gpus_per_node;
    match.align = options.align_clocks;  // --no-align: the waits on each host's raw clock
    for (const analysis::MatchedCollective& call : analysis::match_collectives(rows, match).calls) {
      if (call.status != analysis::MatchStatus::kMatched || call.step < 0) continue;
      for (const analysis::RankTiming& t : call.ranks) (*waits)[{t.rank, call.step}] += t.wait_ns;
    }
  }
  auto parts = [waits](const engine::RankResults& r, analysis::StepDecomposition s) {
    if (auto it = waits->find({r.rank, s.step}); it != waits->end()) analysis::move_collective_wait(&s, it->second);
    std::vector<int64_t> v = {s.duration_ns()};
    for (int64_t ns : s.part_ns) v.push_back(ns);
    return v;
  };
  Columns columns;
  std::vector<std::pair<int64_t, std::string>> missing;
  bool device = false;
  ranks->for_each([&](const engine::RankResults& r) {
    device |= r.decomposition->device;
    if (r.decomposition->steps.empty()) missing.emplace_back(r.rank, r.decomposition->path);
    for (const auto& s : r.decomposition->steps) columns.add(parts(r, s));
  });
  Table t;
  t.title = fmt::format(
      "Step time split by what the rank waited on at each instant (the parts add up to the step; {}); last row: "
      "median",
      device ? "device work first, then the host" : "CPU-only: host operators are the computation");
  t.columns = {{"rank", "Rank"}, {"step", "Step"}, {"step_us", "Step (us)"}};
  for (int p = 0; p < analysis::kStepPartCount; ++p) {
    const std::string_view name = analysis::step_part_name(static_cast<analysis::StepPart>(p));
    std::string header(name);
    std::replace(header.begin(), header.end(), '_', ' ');
    header[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(header[0])));
    t.columns.push_back({fmt::format("{}_us", name), fmt::format("{} (us)", header)});
  }
  t.set_importance(Importance::kKey, {"rank", "step"});
  const bool any_step = !columns.values.empty();
  t.row_source = [ranks, parts, columns = std::move(columns), any_step](const RowVisitor& visit) {
    ranks->for_each([&](const engine::RankResults& r) {
      for (const auto& s : r.decomposition->steps) visit(ns_row(r.rank, s.step, parts(r, s)));
    });
    if (any_step) visit(columns.median_row(2));
  };
  TraceReport report;
  report.add("decompose", std::move(t));
  // Always there, so that the JSON is one object whatever the input.
  report.add("missing", missing_table(missing));
  return report;
}

}  // namespace scaleprof::report
