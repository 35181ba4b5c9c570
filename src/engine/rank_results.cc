#include "engine/rank_results.h"

#include <algorithm>
#include <atomic>
#include <functional>
#include <vector>

#include "analysis/analysis_window.h"
#include "core/task_group.h"

namespace scaleprof::engine {

bool rank_selected(const TraceReportOptions& options, int64_t rank) {
  return options.ranks.empty() || std::find(options.ranks.begin(), options.ranks.end(), rank) != options.ranks.end();
}

std::vector<const trace::RankTrace*> selected_ranks(const trace::TraceSet& set, const TraceReportOptions& options) {
  std::vector<const trace::RankTrace*> out;
  for (const trace::RankTrace& r : set.ranks) {
    if (rank_selected(options, r.rank)) out.push_back(&r);
  }
  return out;
}

ReportSections sections_of(std::string_view report, const TraceReportOptions& options) {
  ReportSections s;
  if (report == "summary") {
    auto wanted = [&](std::string_view name) {
      return options.only.empty() || std::find(options.only.begin(), options.only.end(), name) != options.only.end();
    };
    s.inputs = true;
    s.breakdown = wanted("breakdown");
    s.kernels = wanted("kernels");
    s.idle = wanted("idle");
    s.overlap = wanted("overlap");
    s.launch = wanted("launch");
    s.ops = wanted("ops");
    s.steps = wanted("steps");
    s.collectives = wanted("collectives");
    s.stragglers = wanted("stragglers");
    s.memory = wanted("memory");
    s.critical_path = wanted("critical-path");
    s.counters = wanted("counters");
    s.flops = wanted("flops");
    return s;
  }
  s.breakdown = report == "breakdown";
  s.kernels = report == "kernels";
  s.idle = report == "idle";
  s.overlap = report == "overlap";
  s.launch = report == "launch";
  s.ops = report == "ops";
  s.steps = report == "steps";
  s.collectives = report == "collectives";
  s.stragglers = report == "stragglers";
  s.phases = report == "phases";
  s.decompose = report == "decompose";
  s.memory = report == "memory";
  s.critical_path = report == "critical-path";
  s.counters = report == "counters" || report == "counters_series";
  s.counter_series = report == "counters_series";
  s.flops = report == "flops";
  s.fsdp = report == "fsdp";
  s.pipeline = report == "pipeline";
  return s;
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

RankOperators operators_of(const trace::RankTrace& t, const TraceReportOptions& options) {
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

RankResults reduce_rank(const trace::RankTrace& trace, const ReportSections& sections,
                        const TraceReportOptions& options, unsigned threads,
                        std::optional<analysis::RankCollectives>* collectives) {
  RankResults out;
  out.rank = trace.rank;
  if (sections.inputs) out.inputs = inputs_of(trace);
  // Independent analyses of the rank, each writing its own part of `out`, longest first so that
  // threads finishing early take the shorter ones (on a 400 MB trace: the operator table and the
  // collectives about 0.1-0.15 s of CPU each, the HTA group and the steps less; the steps and the
  // collectives together the most).
  std::vector<std::function<void()>> tasks;
  // The collectives need the ProfilerStep windows the steps section lists: found once, in one task.
  const bool steps_with_collectives = sections.steps && collectives != nullptr;
  if (steps_with_collectives) {
    tasks.emplace_back([&] {
      out.steps = analysis::find_profiler_steps(trace);
      *collectives = analysis::extract_collectives(trace, *out.steps);
    });
  }
  if (sections.ops) tasks.emplace_back([&] { out.ops = operators_of(trace, options); });
  if (collectives != nullptr && !steps_with_collectives) {
    tasks.emplace_back([&] { *collectives = analysis::extract_collectives(trace); });
  }
  // The HTA-style analyses share one window per rank, computed once.
  if (sections.breakdown || sections.kernels || sections.idle || sections.overlap || sections.launch ||
      sections.counters) {
    tasks.emplace_back([&] {
      analysis::WindowOptions window_options;
      window_options.include_last_step = options.include_last_step;
      const analysis::AnalysisWindow window = analysis::compute_analysis_window(trace, window_options);
      if (sections.breakdown) out.breakdown = analysis::temporal_breakdown(trace, window.rows);
      if (sections.kernels) out.kernels = kernels_of(trace, window, options.top, options.kernel_duration_ratio);
      if (sections.idle) {
        analysis::IdleOptions idle_options;
        idle_options.consecutive_kernel_delay_ns = options.consecutive_kernel_delay_ns;
        out.idle = analysis::idle_time_breakdown(trace, window.rows, idle_options);
      }
      if (sections.overlap) out.overlap = analysis::comm_comp_overlap(trace, window.rows);
      if (sections.launch) {
        out.launch = launches_of(trace, window, options.launch_top < 0 ? options.top : options.launch_top);
      }
      // Counters (issue 23), in HTA's window as HTA's; the series are kept only when asked for.
      if (sections.counters) {
        analysis::RankCounterSeries series = analysis::counter_series(trace, window.rows);
        out.counters = analysis::summarize_counters(series, options.max_queue_length);
        if (sections.counter_series) out.counter_series = std::move(series);
      }
    });
  }
  // Every step is listed: the last-step rule of the HTA reports is about their analysis window.
  if (sections.steps && !steps_with_collectives) {
    tasks.emplace_back([&] { out.steps = analysis::find_profiler_steps(trace); });
  }
  // Phases and the step decomposition (issue 20): their own windows of steps (phases.h).
  if (sections.phases) {
    tasks.emplace_back([&] { out.phases = analysis::compute_phases(trace, options.include_last_step); });
  }
  if (sections.decompose) {
    tasks.emplace_back([&] { out.decomposition = analysis::decompose_steps(trace, options.include_last_step); });
  }
  // Memory (issue 23): its own step windows, found again (a few ms) so it depends on no other section.
  if (sections.memory) {
    tasks.emplace_back([&] {
      analysis::MemoryOptions memory_options;
      memory_options.points = options.memory_points;
      memory_options.top = options.top;
      out.memory = analysis::memory_timeline(trace, analysis::find_profiler_steps(trace), memory_options);
    });
  }
  // The critical path of each step (issue 23).
  if (sections.critical_path) {
    tasks.emplace_back([&] {
      out.critical_path =
          analysis::critical_path(trace, analysis::path_windows(trace, options.path_window), options.top,
                                  options.path_events || !options.path_overlay_dir.empty());
    });
  }
  if (sections.flops) {
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
      if (options.deepspeed) out.flops->modules = analysis::module_flops(trace);
    });
  }
  // Exposed collectives per process group, phase and FSDP layer (issue 33): the phases' steps.
  if (sections.fsdp) {
    tasks.emplace_back(
        [&] { out.exposed = analysis::exposed_collectives(trace, options.include_last_step, options.top); });
  }
  // Pipeline bubbles (issue 33): the rank's P2P calls and waits per step; stages are found across ranks.
  if (sections.pipeline) {
    tasks.emplace_back([&] { out.pipeline = analysis::rank_pipeline(trace, options.include_last_step); });
  }
  run_tasks(tasks, threads);
  return out;
}

}  // namespace scaleprof::engine
