// What the `scaleprof trace` reports keep of one rank: the small results its tables need, computed
// from the rank's trace while it is in memory (on the thread that read it), so the trace can be freed
// before the next is read. Thousands of ranks are then reported with (threads × one trace) in memory
// plus these results and the compact collective rows (docs/scale.md). The tables are assembled from
// them in rank order (trace_report.h: report_tables).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/collective_calls.h"
#include "analysis/comm_comp_overlap.h"
#include "analysis/computation_fraction.h"
#include "analysis/counters.h"
#include "analysis/critical_path.h"
#include "analysis/deepspeed_compare.h"
#include "analysis/exposed_collectives.h"
#include "analysis/flops.h"
#include "analysis/idle_time.h"
#include "analysis/kernel_breakdown.h"
#include "analysis/launch_stats.h"
#include "analysis/memory_timeline.h"
#include "analysis/operator_table.h"
#include "analysis/phases.h"
#include "analysis/pipeline_bubbles.h"
#include "analysis/profiler_steps.h"
#include "analysis/step_decomposition.h"
#include "analysis/temporal_breakdown.h"
#include "trace/event_table.h"
#include "trace/trace_set.h"

namespace scaleprof::engine {

// How the per-rank analyses run (reduce_rank): which ranks, and the parameters of each analysis. The
// report's options (report/trace_report.h: TraceReportOptions) add what only the tables need.
struct ReduceOptions {
  std::vector<int64_t> ranks;  // empty: all ranks
  int top = 10;                // rows per group in kernel and operator tables
  // Rows of the launch-delay table; -1: `top`. The Python API asks for every launch (0) in the same
  // pass as the rest of the summary, since HTA's launch statistics list each one.
  int launch_top = -1;
  // HTA's duration_ratio for the kernel table (analysis::top_kernels); 1.0 folds no kernel by it (the CLI).
  double kernel_duration_ratio = 1.0;
  int64_t consecutive_kernel_delay_ns = 30'000;  // idle-time breakdown threshold (HTA default 30 us)
  bool include_last_step = false;                // HTA drops the last ProfilerStep by default
  std::string sort_by = "self_cpu";              // operator table sort key
  // Memory timeline buckets per device (analysis::MemoryOptions::points).
  int memory_points = 50;
  // The critical path's windows (HTA's annotation and instance_id), and whether each path's edges
  // are kept (they are listed, or drawn on an overlay trace).
  analysis::PathWindowSpec path_window;
  bool path_edges = false;
  // The queue length at which a stream counts as full (analysis/counters.h).
  int64_t max_queue_length = analysis::kDefaultMaxQueueLength;
  // FLOPs per nn.Module and forward pass too (analysis::module_flops), for a comparison with
  // DeepSpeed's flops profile.
  bool module_flops = false;
};

// Whether `ranks` (empty: all) selects `rank`.
bool rank_selected(const std::vector<int64_t>& ranks, int64_t rank);

// What reduce_rank keeps of a rank: one flag per per-rank analysis, and whether the rank's compact
// collective rows are extracted too (the analyses across ranks match them).
struct RankAnalyses {
  bool inputs = false;  // what was read: the file, its events, its devices
  bool breakdown = false;
  bool kernels = false;
  bool idle = false;
  bool overlap = false;
  bool launch = false;
  bool ops = false;
  bool steps = false;
  bool phases = false;
  bool decomposition = false;  // each step split into compute, communication, waits, ...
  bool memory = false;
  bool critical_path = false;
  bool counters = false;
  bool counter_series = false;  // the counters' step functions themselves, besides their summary
  bool flops = false;
  bool exposed_collectives = false;  // per process group, phase and FSDP layer
  bool pipeline = false;             // P2P waits per step, for the stages across ranks
  bool collective_rows = false;
  // Whether any per-rank result (RankResults) is kept.
  bool per_rank() const {
    return inputs || breakdown || kernels || idle || overlap || launch || ops || steps || phases || decomposition ||
           memory || critical_path || counters || flops || exposed_collectives || pipeline;
  }
};

struct RankInputs {
  std::string path;
  trace::ReadStats stats;
  std::string devices;  // device names, ", "-separated; "" none
};

struct RankKernels {
  std::vector<analysis::TypeShare> partition;
  // Per kernel type: its --top kernels and the "others" row (analysis::top_kernels).
  std::array<std::vector<analysis::KernelStats>, analysis::kKernelTypeCount> top;
};

// One of the longest launch delays, its names copied out of the freed trace.
struct SlowLaunch {
  int64_t correlation = 0;
  int64_t launch_delay_ns = 0;
  int64_t cpu_duration_ns = 0;
  int64_t gpu_duration_ns = 0;
  std::string launch;
  std::string kernel;
};

struct RankLaunches {
  analysis::LaunchSummary summary;
  std::vector<SlowLaunch> slowest;  // --top longest delays, longest first (--top 0: all)
};

struct RankOperators {
  std::vector<analysis::OperatorRow> top;  // analysis::top_operators(table, --sort, --top)
  bool has_device_time = false;
  bool has_memory = false;
  bool has_device_memory = false;
  // The totals row of the table.
  int64_t rows = 0;
  int64_t calls = 0;
  int64_t sum_self_cpu_ns = 0;
  int64_t sum_self_device_ns = 0;
  int64_t async_calls = 0;
  int64_t dup_nodes_removed = 0;
  int64_t calls_ended_at_stop = 0;
  int64_t unattributed_device_events = 0;
  analysis::ComputationFraction fraction;  // this rank's own
  analysis::FractionParts fraction_parts;  // for the fraction pooled over ranks
};

// `trace flops`: the rank's FLOPs and the device its peaks are looked up for.
struct RankFlopsResult {
  analysis::RankFlops flops;
  std::string device;  // the first deviceProperties name, "" for none
  // Per nn.Module and forward FLOPs, for the comparison with DeepSpeed's profile (only with one).
  std::optional<analysis::ModuleFlops> modules;
};

struct RankResults {
  int64_t rank = 0;
  RankInputs inputs;
  std::optional<analysis::TemporalBreakdown> breakdown;
  std::optional<RankKernels> kernels;
  std::optional<std::vector<analysis::StreamIdle>> idle;
  std::optional<analysis::CommCompOverlap> overlap;
  std::optional<RankLaunches> launch;
  std::optional<RankOperators> ops;
  std::optional<analysis::ProfilerSteps> steps;
  std::optional<analysis::RankPhases> phases;
  std::optional<analysis::RankDecomposition> decomposition;
  std::optional<analysis::RankMemory> memory;
  std::optional<analysis::RankCriticalPath> critical_path;
  std::optional<analysis::RankCounters> counters;
  std::optional<analysis::RankCounterSeries> counter_series;  // the Python API's time series only
  std::optional<RankFlopsResult> flops;
  std::optional<analysis::RankExposedCollectives> exposed;  // `trace fsdp`
  std::optional<analysis::RankPipeline> pipeline;
};

// Runs the per-rank analyses of `analyses` on one rank (inside its analysis window where the HTA
// reports use one) and keeps their results. With `threads` > 1 the independent analyses (the HTA
// group, the operator table, the steps, and the collectives when `collectives` is given) run at once
// on that many threads, the calling thread among them; the results do not depend on it.
RankResults reduce_rank(const trace::RankTrace& trace, const RankAnalyses& analyses, const ReduceOptions& options,
                        unsigned threads = 1, std::optional<analysis::RankCollectives>* collectives = nullptr);

}  // namespace scaleprof::engine
