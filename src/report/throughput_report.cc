// The throughput section, the scaling-mode columns and the sentences (report/throughput_report.h).
#include "report/throughput_report.h"

#include <fmt/format.h>

#include <cmath>

#include "core/seconds_text.h"

namespace scaleprof::report {

using analysis::ScalingMode;
using analysis::SeriesThroughput;

namespace {

Cell num(double v, int digits) {
  return std::isfinite(v) ? Cell(v, digits) : Cell::null();
}

// The series' scaling mode as the tables name it ("unknown" for a series the analysis did not reach).
std::string mode_of(const ScalabilityAnalysis& a, const std::string& series) {
  for (const SeriesThroughput& s : a.throughput) {
    if (s.series == series) return analysis::scaling_mode_name(s.mode);
  }
  return analysis::scaling_mode_name(ScalingMode::kUnknown);
}

// Samples are counts, but a mean over epochs may not be whole: "640", "1,280.5" is not needed here.
std::string samples_text(double v) {
  return std::isfinite(v) ? fmt::format("{:.6g}", v) : "n/a";
}

std::string rate_text(double v) {
  return std::isfinite(v) ? fmt::format("{:.1f} samples/s", v) : "n/a";
}

std::string workers_text(int64_t n) {
  return fmt::format("{} worker{}", n, n == 1 ? "" : "s");
}

std::string tolerance_text() {
  return fmt::format("{:g}%", analysis::kScalingModeTolerance * 100.0);
}

// "throughput went from A at n0 workers to B at n1, 1.90x where 2.00x is ideal"
std::string throughput_change(const SeriesThroughput& s) {
  return fmt::format("throughput went from {} at {} to {} at {}, {:.2f}x where {:.2f}x is ideal",
                     rate_text(s.throughput0), workers_text(s.n0), rate_text(s.throughput1), workers_text(s.n1),
                     s.throughput1 / s.throughput0, static_cast<double>(s.n1) / static_cast<double>(s.n0));
}

std::string series_sentence(const SeriesThroughput& s) {
  const double n0 = static_cast<double>(s.n0);
  const double n1 = static_cast<double>(s.n1);
  switch (s.mode) {
    case ScalingMode::kWeak:
      return fmt::format(
          "{}: weak scaling (the same samples per worker at every scale, within {}: {} per epoch at {}, {} at {}); "
          "{}: weak-scaling efficiency T({})/T({}) = {} / {} = {:.1f}%. The speedup and parallel efficiency of the "
          "scaling table assume a fixed total of work (strong scaling) and understate a weak scaling test; where "
          "scaling is lost is measured against this weak-scaling ideal (the same epoch time at every scale).",
          s.series, tolerance_text(), samples_text(s.per_worker0), workers_text(s.n0), samples_text(s.per_worker1),
          s.n1, throughput_change(s), s.n0, s.n1, seconds_text(s.t0), seconds_text(s.t1), s.t0 / s.t1 * 100.0);
    case ScalingMode::kStrong:
      return fmt::format(
          "{}: strong scaling (the same samples per epoch at every scale, within {}: {} at {}, {} at {}); {}: "
          "parallel efficiency T({})·{}/(T({})·{}) = {:.1f}%, as in the tables.",
          s.series, tolerance_text(), samples_text(s.per_epoch0), workers_text(s.n0), samples_text(s.per_epoch1), s.n1,
          throughput_change(s), s.n0, s.n0, s.n1, s.n1, s.t0 * n0 / (s.t1 * n1) * 100.0);
    case ScalingMode::kNeither:
      return fmt::format(
          "{}: neither weak nor strong scaling: samples per worker went from {} to {} and samples per epoch from {} "
          "to {} between {} and {} (more than {} apart); {}. The efficiency in the tables is computed as for "
          "strong scaling.",
          s.series, samples_text(s.per_worker0), samples_text(s.per_worker1), samples_text(s.per_epoch0),
          samples_text(s.per_epoch1), workers_text(s.n0), s.n1, tolerance_text(), throughput_change(s));
    case ScalingMode::kUnknown:
      break;
  }
  if (s.n0 == 0) {
    return fmt::format("{}: no samples recorded; no throughput, and weak or strong scaling cannot be told.", s.series);
  }
  return fmt::format("{}: weak or strong scaling cannot be told ({}); throughput {} at {}{}.", s.series, s.why,
                     rate_text(s.throughput0), workers_text(s.n0),
                     s.n1 != s.n0 ? fmt::format(", {} at {}", rate_text(s.throughput1), workers_text(s.n1)) : "");
}

}  // namespace

std::optional<ReportSection> throughput_section(const ScalabilityAnalysis& a) {
  if (!analysis::has_throughput(a)) return std::nullopt;
  ReportSection s;
  s.key = "throughput";
  s.title = "Throughput Report";
  s.notes.push_back(fmt::format(
      "Samples from run.epoch(samples=N) (else the epoch's run.step(samples=N)), summed over the ranks, over the kept "
      "epochs whose every rank gave them; throughput = samples / epoch time (the slowest rank's), per worker = that "
      "/ workers; ideal = the smallest scale's throughput x n / n0. Scaling mode per strategy: weak when the samples "
      "per worker, strong when the samples per epoch are the same at every scale within {}.",
      tolerance_text()));
  for (const std::string& line : throughput_sentences(a)) s.notes.push_back(line);
  Table t;
  t.title = "Throughput per strategy and number of workers";
  t.columns = {{"strategy", "Strategy"},
               {"workers", "Workers"},
               {"nodes", "Nodes"},
               {"epochs", "Epochs with samples"},
               {"samples_per_epoch", "Samples per epoch"},
               {"samples_per_worker", "Samples per worker"},
               {"throughput_sps", "Throughput (samples/s)"},
               {"throughput_per_worker_sps", "Per worker (samples/s)"},
               {"ideal_throughput_sps", "Ideal (samples/s)"},
               {"scaling_mode", "Scaling mode"}};
  t.set_importance(Importance::kKey, {"strategy", "workers"});
  t.set_importance(Importance::kUseful, {"samples_per_epoch", "samples_per_worker", "ideal_throughput_sps"});
  t.set_importance(Importance::kDetail, {"nodes", "epochs"});
  for (const ScaleGroup& g : a.groups) {
    if (g.epoch.count == 0) continue;
    const analysis::GroupThroughput& tp = g.throughput;
    t.add_row({g.series, g.workers, g.nodes > 0 ? Cell(g.nodes) : Cell::null(), tp.epochs, num(tp.samples_per_epoch, 1),
               num(tp.samples_per_worker, 1), num(tp.samples_per_s, 3), num(tp.samples_per_s_per_worker, 3),
               num(tp.ideal_samples_per_s, 3), mode_of(a, g.series)});
  }
  s.table_keys = {"throughput"};
  s.tables = {std::move(t)};
  return s;
}

void add_scaling_mode_columns(const ScalabilityAnalysis& a, Table* scaling) {
  if (!analysis::has_throughput(a)) return;
  scaling->columns.push_back({"scaling_mode", "Scaling mode"});
  scaling->columns.push_back({"weak_efficiency_pct", "Weak-scaling efficiency (%)"});
  scaling->set_importance(Importance::kUseful, {"weak_efficiency_pct"});
  size_t row = 0;
  for (const ScaleGroup& g : a.groups) {
    if ((g.epoch.count == 0 && !g.failed) || row >= scaling->rows.size()) continue;
    if (g.failed) {  // a FAILED configuration's row (report/scalability_report.cc): nothing measured
      scaling->rows[row].push_back(Cell::null());
      scaling->rows[row].push_back(Cell::null());
      ++row;
      continue;
    }
    scaling->rows[row].emplace_back(mode_of(a, g.series));
    const double weak = g.throughput.weak_efficiency;
    scaling->rows[row].push_back(std::isfinite(weak) ? Cell(weak * 100.0, 2) : Cell::null());
    ++row;
  }
}

std::vector<std::string> throughput_sentences(const ScalabilityAnalysis& a) {
  std::vector<std::string> out;
  for (const SeriesThroughput& s : a.throughput) out.push_back(series_sentence(s));
  return out;
}

}  // namespace scaleprof::report
