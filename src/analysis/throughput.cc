#include "analysis/throughput.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "analysis/scalability.h"

namespace scaleprof::analysis {

namespace {

// Every value within the tolerance of the first (relative to the first).
bool all_close(const std::vector<double>& values) {
  for (double v : values) {
    if (!(std::abs(v - values.front()) <= kScalingModeTolerance * values.front())) return false;
  }
  return true;
}

// Samples and time of the kept epochs (warm-up skipped as for the epoch times) that have samples.
void fill_group(const ScalabilityAnalysis& a, ScaleGroup* g) {
  double samples = 0;
  double seconds = 0;
  int64_t epochs = 0;
  for (size_t i : g->runs) {
    for (const tables::EpochTime& e : skip_warmup(a.runs[i]->epochs, a.options.skip_epochs)) {
      if (std::isnan(e.samples)) continue;
      samples += e.samples;
      seconds += e.seconds;
      ++epochs;
    }
  }
  if (epochs == 0 || g->workers <= 0) return;
  GroupThroughput& t = g->throughput;
  t.epochs = epochs;
  t.samples_per_epoch = samples / static_cast<double>(epochs);
  t.samples_per_worker = t.samples_per_epoch / static_cast<double>(g->workers);
  if (seconds > 0) {
    t.samples_per_s = samples / seconds;
    t.samples_per_s_per_worker = t.samples_per_s / static_cast<double>(g->workers);
  }
}

// One series' groups with epoch times, by workers then nodes: its scaling mode, ideal throughput and
// (weak scaling) weak efficiency; a warning per configuration without samples.
SeriesThroughput analyse_series(const std::string& name, const std::vector<ScaleGroup*>& timed,
                                std::vector<Diagnostic>* warnings) {
  SeriesThroughput s;
  s.series = name;
  std::vector<ScaleGroup*> with;
  std::string missing;
  for (ScaleGroup* g : timed) {
    if (g->throughput.epochs > 0) {
      with.push_back(g);
      continue;
    }
    warnings->push_back(diagnostic(
        Severity::kWarning,
        fmt::format("{} at {} workers: no epoch has samples from every rank (run.epoch(samples=N) or "
                    "run.step(samples=N)); no throughput there, and weak or strong scaling cannot be told for {}",
                    name, g->workers, name)));
    if (missing.empty()) missing = fmt::format("no samples at {} workers", g->workers);
  }
  if (with.empty()) {
    s.why = "no samples recorded";
    return s;
  }
  const ScaleGroup& base = *with.front();
  const ScaleGroup& last = *with.back();
  s.n0 = base.workers;
  s.n1 = last.workers;
  s.per_worker0 = base.throughput.samples_per_worker;
  s.per_worker1 = last.throughput.samples_per_worker;
  s.per_epoch0 = base.throughput.samples_per_epoch;
  s.per_epoch1 = last.throughput.samples_per_epoch;
  s.throughput0 = base.throughput.samples_per_s;
  s.throughput1 = last.throughput.samples_per_s;
  s.t0 = base.epoch.mean;
  s.t1 = last.epoch.mean;
  for (ScaleGroup* g : with) {
    g->throughput.ideal_samples_per_s =
        base.throughput.samples_per_s * static_cast<double>(g->workers) / static_cast<double>(base.workers);
  }
  if (!missing.empty()) {
    s.why = missing;
    return s;
  }
  std::set<int64_t> workers;
  for (const ScaleGroup* g : with) workers.insert(g->workers);
  if (workers.size() < 2) {
    s.why = "one worker count";
    return s;
  }
  std::vector<double> per_worker;
  std::vector<double> per_epoch;
  for (const ScaleGroup* g : with) {
    per_worker.push_back(g->throughput.samples_per_worker);
    per_epoch.push_back(g->throughput.samples_per_epoch);
  }
  // Both cannot hold: the worker counts differ by at least 2x, far beyond the tolerance.
  s.mode = all_close(per_worker)  ? ScalingMode::kWeak
           : all_close(per_epoch) ? ScalingMode::kStrong
                                  : ScalingMode::kNeither;
  if (s.mode == ScalingMode::kWeak) {
    for (ScaleGroup* g : with) g->throughput.weak_efficiency = base.epoch.mean / g->epoch.mean;
  }
  return s;
}

}  // namespace

const char* scaling_mode_name(ScalingMode mode) {
  switch (mode) {
    case ScalingMode::kStrong:
      return "strong";
    case ScalingMode::kWeak:
      return "weak";
    case ScalingMode::kNeither:
      return "neither";
    case ScalingMode::kUnknown:
      break;
  }
  return "unknown";
}

void analyse_throughput(ScalabilityAnalysis* analysis) {
  for (ScaleGroup& g : analysis->groups) fill_group(*analysis, &g);
  if (!has_throughput(*analysis)) return;
  std::map<std::string, std::vector<ScaleGroup*>> by_series;
  for (ScaleGroup& g : analysis->groups) {
    if (g.epoch.count > 0) by_series[g.series].push_back(&g);
  }
  for (auto& [name, timed] : by_series) {
    std::stable_sort(timed.begin(), timed.end(), [](const ScaleGroup* a, const ScaleGroup* b) {
      return std::tie(a->workers, a->nodes) < std::tie(b->workers, b->nodes);
    });
    analysis->throughput.push_back(analyse_series(name, timed, &analysis->warnings));
  }
}

bool has_throughput(const ScalabilityAnalysis& analysis) {
  return std::any_of(analysis.groups.begin(), analysis.groups.end(),
                     [](const ScaleGroup& g) { return g.throughput.epochs > 0; });
}

}  // namespace scaleprof::analysis
