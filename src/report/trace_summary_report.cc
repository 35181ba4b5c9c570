#include <fmt/format.h>

#include <algorithm>

#include "report/rank_analysis.h"
#include "report/trace_report.h"

namespace scaleprof::report {

std::vector<const trace::RankTrace*> selected_ranks(const trace::TraceSet& set, const TraceReportOptions& options) {
  std::vector<const trace::RankTrace*> out;
  for (const trace::RankTrace& r : set.ranks) {
    bool wanted = options.ranks.empty();
    for (int64_t want : options.ranks) wanted |= (want == r.rank);
    if (wanted) out.push_back(&r);
  }
  return out;
}

namespace {

Table inputs_table(const std::vector<const trace::RankTrace*>& ranks) {
  Table t;
  t.title = "Inputs";
  t.columns = {{"rank", "Rank"},         {"file", "File"},       {"events", "Events"},     {"kept", "Kept"},
               {"rejected", "Rejected"}, {"repairs", "Repairs"}, {"json_mb", "JSON (MB)"}, {"devices", "Devices"}};
  for (const trace::RankTrace* r : ranks) {
    std::string devices;
    for (const auto& d : r->metadata.devices) devices += (devices.empty() ? "" : ", ") + d.name;
    t.add_row({r->rank, r->path, r->stats.events_total, r->stats.events_kept, r->stats.rejected_events,
               r->stats.repairs, Cell(static_cast<double>(r->stats.json_bytes) / 1e6, 1),
               devices.empty() ? Cell("none") : Cell(devices)});
  }
  return t;
}

void append(TraceReport* into, TraceReport from) {
  for (size_t i = 0; i < from.tables.size(); ++i) into->add(std::move(from.keys[i]), std::move(from.tables[i]));
}

}  // namespace

const std::vector<std::string>& summary_analysis_names() {
  static const std::vector<std::string> kNames = {"breakdown", "kernels", "idle",        "overlap",   "launch",
                                                  "ops",       "steps",   "collectives", "stragglers"};
  return kNames;
}

TraceReport summary_report(const trace::TraceSet& set, const TraceReportOptions& options) {
  // Every report below works inside the same per-rank analysis window: compute it once.
  const std::vector<analysis::AnalysisWindow> windows =
      analyse_ranks(set, options, [](const trace::RankTrace&, const analysis::AnalysisWindow& w) { return w; });
  TraceReportOptions shared = options;
  shared.windows = &windows;
  TraceReport report;
  report.add("inputs", inputs_table(selected_ranks(set, options)));
  using ReportFn = TraceReport (*)(const trace::TraceSet&, const TraceReportOptions&);
  constexpr ReportFn kReports[] = {breakdown_report, kernels_report,     idle_report,
                                   overlap_report,   launch_report,      ops_report,
                                   steps_report,     collectives_report, stragglers_report};
  const std::vector<std::string>& names = summary_analysis_names();
  for (size_t i = 0; i < names.size(); ++i) {
    const bool wanted =
        options.only.empty() || std::find(options.only.begin(), options.only.end(), names[i]) != options.only.end();
    if (wanted) append(&report, kReports[i](set, shared));
  }
  return report;
}

}  // namespace scaleprof::report
