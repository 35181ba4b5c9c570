#include "analysis/run_trace_metrics.h"

#include <fmt/format.h>

#include "analysis/analysis_window.h"
#include "analysis/collective_calls.h"
#include "analysis/collective_match.h"
#include "analysis/computation_fraction.h"
#include "analysis/kernel_breakdown.h"
#include "analysis/operator_table.h"
#include "analysis/stragglers.h"
#include "analysis/temporal_breakdown.h"
#include "core/checked_sum.h"
#include "trace/trace_set.h"

namespace scaleprof::analysis {

namespace {

// Communication vs. waiting for stragglers, from the collectives matched across the run's ranks:
// only calls launched inside a ProfilerStep count, so that the sums are parts of the step time.
// Sums across ranks are checked (core/checked_sum.h): false when one would pass int64, and then
// nothing is added (the figures are left out, never wrapped).
bool add_collective_metrics(const std::vector<RankCollectives>& rows, importers::RunData* run,
                            importers::TraceSums* sums) {
  importers::TraceSums s = *sums;
  bool exact = true;
  for (const RankCollectives& r : rows) {
    for (const StepRow& st : r.steps) exact = add_checked(&s.step_ns, st.end_ns - st.start_ns) && exact;
  }
  const CollectiveRows compact = compact_rows(rows);
  const CollectiveAnalysis matched = match_collectives(compact);
  std::vector<importers::CollectiveSample> samples;
  for (const MatchedCollective& m : matched.calls) {
    if (m.step < 0) continue;
    ++s.collective_calls;
    if (m.status != MatchStatus::kMatched) continue;
    ++s.collectives_matched;
    for (const RankTiming& t : m.ranks) {
      exact = add_checked(&s.collective_latency_ns, m.latency_ns) && exact;
      exact = add_checked(&s.collective_wait_ns, t.wait_ns) && exact;
    }
    samples.push_back({m.type, m.bytes, m.busbw_gbps});
  }
  std::vector<importers::RankWait> waits;
  if (s.collectives_matched > 0) {
    for (const RankStraggling& r : find_stragglers(compact, matched).ranks) {
      exact = exact && r.own_wait_exact && r.wait_imposed_exact;
      waits.push_back({r.rank, r.calls, r.own_wait_ns, r.wait_imposed_ns, r.arrived_last});
    }
  }
  if (!exact) return false;
  *sums = s;
  run->collectives.insert(run->collectives.end(), samples.begin(), samples.end());
  run->rank_waits.insert(run->rank_waits.end(), waits.begin(), waits.end());
  return true;
}

}  // namespace

void add_trace_metrics(importers::ScalabilityData* data, const TraceStageOptions& options) {
  for (importers::RunData& run : data->runs) {
    if (run.trace_files.empty()) continue;
    trace::LoadOptions load;
    load.threads = options.threads;
    load.parse.lenient = true;
    auto loaded = trace::load_traces(run.trace_files, load);
    if (!loaded) {
      data->errors.push_back(fmt::format("{}: traces not used: {}", run.path, loaded.error().message));
      continue;
    }
    const trace::TraceSet& set = loaded.value();
    for (const std::string& e : set.errors) data->errors.push_back(e);
    if (set.ranks.empty()) continue;
    importers::TraceSums sums;
    bool exact = true;
    std::vector<OperatorTable> tables;
    tables.reserve(set.ranks.size());
    std::vector<RankCollectives> collectives;
    collectives.reserve(set.ranks.size());
    for (const trace::RankTrace& rank : set.ranks) {
      const AnalysisWindow window = compute_analysis_window(rank);
      const TemporalBreakdown t = temporal_breakdown(rank, window.rows);
      const KernelBreakdown k = kernel_breakdown(rank, window.rows);
      int64_t comm = 0;
      int64_t memory = 0;
      for (const TypeShare& s : k.partition) {
        if ((s.types & kCommunicationBit) != 0 && (s.types & kComputationBit) == 0) comm += s.ns;
        if (s.types == kMemoryBit) memory += s.ns;
      }
      // One rank's parts are within the reader's bounds; their sum over ranks is checked.
      importers::TraceSums one;
      one.ranks = 1;
      one.span_ns = t.kernel_time_ns;
      one.idle_ns = t.idle_ns;
      one.computation_ns = t.compute_ns;
      one.communication_ns = comm;
      one.memory_ns = memory;
      one.other_ns = t.kernel_time_ns - t.idle_ns - t.compute_ns - comm - memory;
      exact = importers::add_checked(&sums, one) && exact;
      tables.push_back(compute_operator_table(rank));
      collectives.push_back(extract_collectives(rank));
    }
    if (!exact) {
      data->errors.push_back(
          fmt::format("{}: traces not used: the {} ranks' times summed exceed 292 years of nanoseconds (int64)",
                      run.path, set.ranks.size()));
      continue;
    }
    if (!add_collective_metrics(collectives, &run, &sums)) {
      data->errors.push_back(fmt::format(
          "{}: collectives across ranks left out: their times summed over ranks pass int64 nanoseconds (292 years)",
          run.path));
    }
    run.traces = sums;
    if (!run.computation) {
      std::vector<const OperatorTable*> ptrs;
      ptrs.reserve(tables.size());
      for (const auto& t : tables) ptrs.push_back(&t);
      const ComputationFraction f = computation_fraction(ptrs);
      if (f.exact) {
        importers::ComputationSums c;
        c.basis = f.basis;
        c.computation_ns = f.computation_ns;
        c.total_ns = f.total_ns;
        c.profiler_step_ns = f.profiler_step_ns;
        c.communication_ns = f.communication_ns;
        c.ranks = static_cast<int64_t>(tables.size());
        run.computation = c;
      } else {
        data->errors.push_back(fmt::format(
            "{}: computation fraction not used: the {} ranks' self times summed exceed 292 years of nanoseconds",
            run.path, tables.size()));
      }
    }
    if (set.ranks.size() < static_cast<size_t>(run.workers)) {
      data->warnings.push_back(fmt::format("{}: traces of {} of {} ranks; fractions are over those ranks", run.path,
                                           set.ranks.size(), run.workers));
    }
  }
}

}  // namespace scaleprof::analysis
