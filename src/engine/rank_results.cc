#include "engine/rank_results.h"

#include <algorithm>
#include <atomic>
#include <functional>
#include <vector>

#include "analysis/analysis_window.h"
#include "core/task_group.h"

namespace scaleprof::engine {

bool rank_selected(const std::vector<int64_t>& ranks, int64_t rank) {
  return ranks.empty() || std::find(ranks.begin(), ranks.end(), rank) != ranks.end();
}

namespace {

RankInputs inputs_of(const trace::RankTrace& t) {
  RankInputs in;
  in.path = t.path;
  in.stats = t.stats;
  for (const auto& d : t.metadata.devices) in.devices += (in.devices.empty() ? "" : ", ") + d.name;
  return in;
}

RankKernels kernels_of(const trace::RankTrace& t, const analysis::AnalysisWindow& w, int top, double duration_ratio) {
  analysis::KernelBreakdown b = analysis::kernel_breakdown(t, w.rows);
  RankKernels out;
  out.partition = std::move(b.partition);
  for (int type = 0; type < analysis::kKernelTypeCount; ++type) {
    out.top[type] = analysis::top_kernels(b.kernels, static_cast<analysis::KernelType>(type), top, duration_ratio);
  }
  return out;
}

RankLaunches launches_of(const trace::RankTrace& t, const analysis::AnalysisWindow& w, int top) {
  const std::vector<analysis::KernelLaunch> launches = analysis::kernel_launches(t, w.rows);
  RankLaunches out;
  out.summary = analysis::summarize_launches(launches);
  std::vector<const analysis::KernelLaunch*> order;
  order.reserve(launches.size());
  for (const auto& l : launches) order.push_back(&l);
  // --top 0 lists every launch, as in the other tables.
  const size_t n = top <= 0 ? order.size() : std::min<size_t>(order.size(), static_cast<size_t>(top));
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(n), order.end(),
                    [](const auto* a, const auto* b) { return a->launch_delay_ns > b->launch_delay_ns; });
  out.slowest.reserve(n);
  for (size_t k = 0; k < n; ++k) {
    const analysis::KernelLaunch& l = *order[k];
    out.slowest.push_back({l.correlation, l.launch_delay_ns, l.cpu_duration_ns, l.gpu_duration_ns,
                           std::string(t.name(l.launch_row)), std::string(t.name(l.device_row))});
  }
  return out;
}

RankOperators operators_of(const trace::RankTrace& t, const ReduceOptions& options) {
  // Like torch, the table covers the whole trace, not the analysis window of the HTA reports.
  const analysis::OperatorTable table = analysis::compute_operator_table(t);
  // The CLI validates --sort; an unknown key here falls back to torch's usual Self CPU order.
  const analysis::OperatorSortKey sort =
      analysis::parse_operator_sort_key(options.sort_by).value_or(analysis::OperatorSortKey::kSelfCpu);
  RankOperators out;
  out.top = analysis::top_operators(table, sort, options.top);
  out.has_device_time = table.has_device_time;
  out.has_memory = table.has_memory;
  out.has_device_memory = table.has_device_memory;
  out.rows = static_cast<int64_t>(table.rows.size());
  for (const analysis::OperatorRow& row : table.rows) out.calls += row.calls;
  out.sum_self_cpu_ns = table.sum_self_cpu_ns;
  out.sum_self_device_ns = table.sum_self_device_ns;
  out.async_calls = table.async_calls;
  out.dup_nodes_removed = table.dup_nodes_removed;
  out.calls_ended_at_stop = table.calls_ended_at_stop;
  out.unattributed_device_events = table.unattributed_device_events;
  out.fraction_parts = analysis::fraction_parts(table);
  out.fraction = analysis::pooled_fraction(std::span<const analysis::FractionParts>(&out.fraction_parts, 1));
  return out;
}

// Runs `tasks` on up to `threads` threads, the calling thread among them, each task once. A task's
// exception is thrown again here, on the calling thread, once all have stopped: the reading pool
// that runs this reduction turns it into its error (core/task_group.h).
void run_tasks(const std::vector<std::function<void()>>& tasks, unsigned threads) {
  std::atomic<size_t> next{0};
  TaskGroup group;
  auto work = [&] {
    for (size_t i = next++; i < tasks.size() && !group.failed(); i = next++) tasks[i]();
  };
  group.run_on(static_cast<unsigned>(std::min<size_t>(std::max(1U, threads), std::max<size_t>(1, tasks.size()))), work);
  group.join_or_rethrow();
}

}  // namespace

RankResults reduce_rank(const trace::RankTrace& trace, const RankAnalyses& analyses, const ReduceOptions& options,
                        unsigned threads, std::optional<analysis::RankCollectives>* collectives) {
  RankResults out;
  out.rank = trace.rank;
  if (analyses.inputs) out.inputs = inputs_of(trace);
  // Independent analyses of the rank, each writing its own part of `out`, longest first so that
  // threads finishing early take the shorter ones (on a 400 MB trace: the operator table and the
  // collectives about 0.1-0.15 s of CPU each, the HTA group and the steps less; the steps and the
  // collectives together the most).
  std::vector<std::function<void()>> tasks;
  // The collectives need the ProfilerStep windows the steps section lists: found once, in one task.
  const bool steps_with_collectives = analyses.steps && collectives != nullptr;
  if (steps_with_collectives) {
    tasks.emplace_back([&] {
      out.steps = analysis::find_profiler_steps(trace);
      *collectives = analysis::extract_collectives(trace, *out.steps);
    });
  }
  if (analyses.ops) tasks.emplace_back([&] { out.ops = operators_of(trace, options); });
  if (collectives != nullptr && !steps_with_collectives) {
    tasks.emplace_back([&] { *collectives = analysis::extract_collectives(trace); });
  }
  // The HTA-style analyses share one window per rank, computed once.
  if (analyses.breakdown || analyses.kernels || analyses.idle || analyses.overlap || analyses.launch ||
      analyses.counters) {
    tasks.emplace_back([&] {
      analysis::WindowOptions window_options;
      window_options.include_last_step = options.include_last_step;
      const analysis::AnalysisWindow window = analysis::compute_analysis_window(trace, window_options);
      if (analyses.breakdown) out.breakdown = analysis::temporal_breakdown(trace, window.rows);
      if (analyses.kernels) out.kernels = kernels_of(trace, window, options.top, options.kernel_duration_ratio);
      if (analyses.idle) {
        analysis::IdleOptions idle_options;
        idle_options.consecutive_kernel_delay_ns = options.consecutive_kernel_delay_ns;
        out.idle = analysis::idle_time_breakdown(trace, window.rows, idle_options);
      }
      if (analyses.overlap) out.overlap = analysis::comm_comp_overlap(trace, window.rows);
      if (analyses.launch) {
        out.launch = launches_of(trace, window, options.launch_top < 0 ? options.top : options.launch_top);
      }
      // Counters (issue 23), in HTA's window as HTA's; the series are kept only when asked for.
      if (analyses.counters) {
        analysis::RankCounterSeries series = analysis::counter_series(trace, window.rows);
        out.counters = analysis::summarize_counters(series, options.max_queue_length);
        if (analyses.counter_series) out.counter_series = std::move(series);
      }
    });
  }
  // Every step is listed: the last-step rule of the HTA reports is about their analysis window.
  if (analyses.steps && !steps_with_collectives) {
    tasks.emplace_back([&] { out.steps = analysis::find_profiler_steps(trace); });
  }
  // Phases and the step decomposition (issue 20): their own windows of steps (phases.h).
  if (analyses.phases) {
    tasks.emplace_back([&] { out.phases = analysis::compute_phases(trace, options.include_last_step); });
  }
  if (analyses.decomposition) {
    tasks.emplace_back([&] { out.decomposition = analysis::decompose_steps(trace, options.include_last_step); });
  }
  // Memory (issue 23): its own step windows, found again (a few ms) so it depends on no other section.
  if (analyses.memory) {
    tasks.emplace_back([&] {
      analysis::MemoryOptions memory_options;
      memory_options.points = options.memory_points;
      memory_options.top = options.top;
      out.memory = analysis::memory_timeline(trace, analysis::find_profiler_steps(trace), memory_options);
    });
  }
  // The critical path of each step (issue 23).
  if (analyses.critical_path) {
    tasks.emplace_back([&] {
      out.critical_path = analysis::critical_path(trace, analysis::path_windows(trace, options.path_window),
                                                  options.top, options.path_edges);
    });
  }
  if (analyses.flops) {
    tasks.emplace_back([&] {
      out.flops = RankFlopsResult{analysis::compute_flops(trace),
                                  trace.metadata.devices.empty() ? std::string() : trace.metadata.devices[0].name,
                                  std::nullopt};
      // Only --top rows per rank are shown: keeping no more bounds memory over ranks (totals are kept).
      if (options.top > 0) {
        auto& f = out.flops->flops;
        if (f.operators.size() > static_cast<size_t>(options.top)) f.operators.resize(static_cast<size_t>(options.top));
        if (f.kernels.size() > static_cast<size_t>(options.top)) f.kernels.resize(static_cast<size_t>(options.top));
      }
      if (options.module_flops) out.flops->modules = analysis::module_flops(trace);
    });
  }
  // Exposed collectives per process group, phase and FSDP layer (issue 33): the phases' steps.
  if (analyses.exposed_collectives) {
    tasks.emplace_back(
        [&] { out.exposed = analysis::exposed_collectives(trace, options.include_last_step, options.top); });
  }
  // Pipeline bubbles (issue 33): the rank's P2P calls and waits per step; stages are found across ranks.
  if (analyses.pipeline) {
    tasks.emplace_back([&] { out.pipeline = analysis::rank_pipeline(trace, options.include_last_step); });
  }
  run_tasks(tasks, threads);
  return out;
}

}  // namespace scaleprof::engine
