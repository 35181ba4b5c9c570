// The scalability report's throughput (analysis/throughput.h): its section and table, the scaling
// mode columns of the scaling table, the sentences, and the throughput plot. Everything here is
// absent when no run recorded samples, so such reports (itwinai's CSVs, MLflow runs) are unchanged.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "report/plot_specs.h"
#include "report/scalability_report.h"

namespace scaleprof::report {

// "Throughput Report": samples per epoch and per second per configuration, in total and per worker,
// with the ideal throughput and the strategy's scaling mode; its notes are the sentences below.
std::optional<ReportSection> throughput_section(const ScalabilityAnalysis& analysis);

// Appends `scaling_mode` and `weak_efficiency_pct` to the scaling table, whose rows are the groups
// with epoch times in order; nothing without samples.
void add_scaling_mode_columns(const ScalabilityAnalysis& analysis, Table* scaling);

// One sentence per strategy: its scaling mode and why, its throughput at the smallest and largest
// scale, and the efficiency that mode calls for (weak: T(n0)/T(n); strong: T(n0) n0/(T(n) n)).
std::vector<std::string> throughput_sentences(const ScalabilityAnalysis& analysis);

// `throughput`: samples/s vs. workers per strategy (log2 axes), each with its ideal line (dashed, the
// smallest scale's throughput times n/n0); colours as the other plots'. Not drawn without samples.
void add_throughput_plot(const ScalabilityAnalysis& analysis, const std::map<std::string, int>& colors,
                         std::vector<PlotSpec>* out);

}  // namespace scaleprof::report
