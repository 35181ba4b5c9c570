// The throughput plot (report/throughput_report.h): measured samples/s per strategy beside its ideal.
#include <cmath>
#include <map>
#include <set>

#include "report/throughput_report.h"

namespace scaleprof::report {

void add_throughput_plot(const ScalabilityAnalysis& a, const std::map<std::string, int>& colors,
                         std::vector<PlotSpec>* out) {
  std::map<std::string, std::vector<const ScaleGroup*>> measured;
  std::set<int64_t> workers;
  for (const ScaleGroup& g : a.groups) {
    if (g.epoch.count == 0 || !std::isfinite(g.throughput.samples_per_s) || g.throughput.samples_per_s <= 0) continue;
    measured[g.series].push_back(&g);  // groups are ordered by series, then workers
    workers.insert(g.workers);
  }
  if (measured.empty()) return;
  PlotSpec p;
  p.stem = "throughput";
  p.title = "Throughput vs. number of workers (dashed: ideal, the smallest scale's throughput x n/n0)";
  p.xlabel = "Number of workers";
  p.ylabel = "Throughput (samples/s, all workers)";
  p.log_x = 2;
  p.log_y = 2;
  for (int64_t w : workers) p.x_ticks.push_back(static_cast<double>(w));
  int layer = 0;
  for (const auto& [name, groups] : measured) {
    PlotSeries m;
    PlotSeries ideal;
    m.name = name;
    ideal.name = name + " (ideal)";
    m.color = ideal.color = colors.count(name) != 0 ? colors.at(name) : 0;
    ideal.dashed = true;
    ideal.layer = layer++;
    for (const ScaleGroup* g : groups) {
      m.x.push_back(static_cast<double>(g->workers));
      m.y.push_back(g->throughput.samples_per_s);
      if (std::isfinite(g->throughput.ideal_samples_per_s)) {
        ideal.x.push_back(static_cast<double>(g->workers));
        ideal.y.push_back(g->throughput.ideal_samples_per_s);
      }
    }
    p.series.push_back(std::move(m));
    if (ideal.x.size() > 1) p.series.push_back(std::move(ideal));
  }
  out->push_back(std::move(p));
}

}  // namespace scaleprof::report
