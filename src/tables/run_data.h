// What the scalability report reads, as plain in-memory tables: one RunData per run, whatever the
// layout it came from (scaleprof run directories or itwinai's CSV layout).
//
// Data flows one way: files -> importers (importers/run_data_reader.h) -> ScalabilityData -> trace
// stage (engine/run_trace_metrics.h) -> analyses (analysis/scalability.h, analysis/scaling.h) ->
// renderers (report/: tables, plots, HTML). Importers fill this struct and format nothing; the
// report reads no files.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "core/checked_sum.h"
#include "core/diagnostic.h"
#include "tables/epoch_time.h"
#include "tables/rank_activity.h"
#include "tables/self_time_sums.h"
#include "tables/step_timeline.h"

namespace scaleprof::tables {

// Samples of one GPU, in time order. Empty CSV fields are NaN.
struct GpuSeries {
  std::string source;  // file the samples came from
  std::string device;  // device id as the file names it (with the rank/node for itwinai files)
  std::vector<double> time_s;
  std::vector<double> utilization_pct;
  std::vector<double> power_w;
  std::vector<double> energy_j;  // cumulative counter (scaleprof gpu.csv), NaN where absent
  // itwinai's layout has no times, only a sample index and a probing interval: its energy is the
  // rectangle rule (power x interval), as itwinai computes it. NaN for scaleprof files.
  double probing_interval_s = tables::kNaN;
};

// itwinai's computation fraction inputs (the operator self-time sums of
// analysis/computation_fraction.h), summed over the ranks of a run. Nanoseconds.
struct ComputationSums : tables::SelfTimeSums {
  tables::FractionBasis basis = tables::FractionBasis::kDeviceSelf;
  int64_t ranks = 0;
};

// GPU time of the profiled steps split into parts that add up to the span, summed over ranks
// (nanoseconds). Filled from traces by the trace engine (engine/run_trace_metrics.h).
struct TraceSums {
  int64_t ranks = 0;
  int64_t span_ns = 0;           // first to last device event, per rank, summed
  int64_t idle_ns = 0;           // no device work at all
  int64_t computation_ns = 0;    // union of computation kernels
  int64_t communication_ns = 0;  // communication not hidden under computation
  int64_t memory_ns = 0;         // copies/sets hidden under neither
  int64_t other_ns = 0;          // the rest of the span (sync records, other work)
  // Collectives matched across the run's ranks (GPU kernels, or gloo ops on CPU runs), inside the
  // profiled steps, ranks summed (analysis/collective_match.h):
  int64_t step_ns = 0;                // ProfilerStep time
  int64_t collective_calls = 0;       // calls launched in a step (one per call, not per rank)
  int64_t collectives_matched = 0;    // of those, matched on every rank of their group
  int64_t collective_latency_ns = 0;  // each matched call's latency, once per rank taking part
  int64_t collective_wait_ns = 0;     // the ranks' waits for the last rank to arrive
  // The profiled steps of one rank per run split into exclusive parts that add up to its steps
  // (analysis/step_decomposition.h, waits at matched collectives moved out of exposed communication),
  // seen from the rank that waited longest at the matched collectives (the lowest rank when none
  // waited): in synchronous training every rank's step lasts as long, and the rank that waited shows
  // what the stragglers cost where the straggler's own view would show it as its slower work. Runs summed.
  int64_t decomposed_runs = 0;        // runs whose view is added
  int64_t decomposed_step_ns = 0;     // the viewed rank's profiled steps
  int64_t step_compute_ns = 0;        // computation
  int64_t step_communication_ns = 0;  // exposed communication
  int64_t step_wait_ns = 0;           // waiting at collectives for the last rank to arrive
  int64_t step_data_loading_ns = 0;   // data loading
  int64_t step_optimizer_ns = 0;      // optimizer
  int64_t step_host_overhead_ns = 0;  // other host work
  int64_t step_idle_ns = 0;           // nothing recorded
  // Of step_communication_ns: what the imbalance of the viewed rank's all-to-alls cost (latency x (1 -
  // mean / max) over the pairs, analysis/all_to_all_cost.h), per step at most its exposed communication.
  int64_t step_alltoall_imbalance_ns = 0;
  // Of step_communication_ns: the viewed rank's pipeline bubble, its wait for a neighbouring stage at the
  // P2P sends and receives (analysis/pipeline_bubbles.h), per step at most its exposed communication; and
  // the ideal bubble of its pipeline's schedule, (p-1)/(m+p-1) of the same steps (0 where m is unknown).
  // Both 0 without a pipeline.
  int64_t step_pipeline_bubble_ns = 0;
  int64_t step_pipeline_ideal_ns = 0;
};

// `*into += from`, field by field, all or nothing: false (and *into unchanged) when a sum would leave
// int64, so that sums over many ranks or runs are exact or absent, never wrapped (core/checked_sum.h).
inline bool add_checked(TraceSums* into, const TraceSums& from) {
  TraceSums s = *into;
  const bool exact = scaleprof::add_checked(&s.ranks, from.ranks) && scaleprof::add_checked(&s.span_ns, from.span_ns) &&
                     scaleprof::add_checked(&s.idle_ns, from.idle_ns) &&
                     scaleprof::add_checked(&s.computation_ns, from.computation_ns) &&
                     scaleprof::add_checked(&s.communication_ns, from.communication_ns) &&
                     scaleprof::add_checked(&s.memory_ns, from.memory_ns) &&
                     scaleprof::add_checked(&s.other_ns, from.other_ns) &&
                     scaleprof::add_checked(&s.step_ns, from.step_ns) &&
                     scaleprof::add_checked(&s.collective_calls, from.collective_calls) &&
                     scaleprof::add_checked(&s.collectives_matched, from.collectives_matched) &&
                     scaleprof::add_checked(&s.collective_latency_ns, from.collective_latency_ns) &&
                     scaleprof::add_checked(&s.collective_wait_ns, from.collective_wait_ns) &&
                     scaleprof::add_checked(&s.decomposed_runs, from.decomposed_runs) &&
                     scaleprof::add_checked(&s.decomposed_step_ns, from.decomposed_step_ns) &&
                     scaleprof::add_checked(&s.step_compute_ns, from.step_compute_ns) &&
                     scaleprof::add_checked(&s.step_communication_ns, from.step_communication_ns) &&
                     scaleprof::add_checked(&s.step_wait_ns, from.step_wait_ns) &&
                     scaleprof::add_checked(&s.step_data_loading_ns, from.step_data_loading_ns) &&
                     scaleprof::add_checked(&s.step_optimizer_ns, from.step_optimizer_ns) &&
                     scaleprof::add_checked(&s.step_host_overhead_ns, from.step_host_overhead_ns) &&
                     scaleprof::add_checked(&s.step_idle_ns, from.step_idle_ns) &&
                     scaleprof::add_checked(&s.step_alltoall_imbalance_ns, from.step_alltoall_imbalance_ns) &&
                     scaleprof::add_checked(&s.step_pipeline_bubble_ns, from.step_pipeline_bubble_ns) &&
                     scaleprof::add_checked(&s.step_pipeline_ideal_ns, from.step_pipeline_ideal_ns);
  if (exact) *into = s;
  return exact;
}

inline bool add_checked(ComputationSums* into, const ComputationSums& from) {
  ComputationSums s = *into;
  const bool exact = s.add_checked(from) && scaleprof::add_checked(&s.ranks, from.ranks);
  if (exact) *into = s;
  return exact;
}

// One matched collective call of a run (for the bandwidth vs. message size plot).
struct CollectiveSample {
  std::string type;  // canonical: allreduce, allgather, ...
  int64_t bytes = -1;
  double busbw_gbps = -1;  // nccl-tests' bus bandwidth, GB/s; < 0 unknown
};

// One rank's waiting at the run's matched collectives (for the per-rank wait chart).
struct RankWait {
  int64_t rank = 0;
  int64_t calls = 0;            // matched calls it took part in
  int64_t own_wait_ns = 0;      // it waited for the last rank to arrive
  int64_t wait_imposed_ns = 0;  // the others waited for it (at the calls it arrived last at)
  int64_t arrived_last = 0;
};

// One operator's self time on the rank whose step decomposition a run keeps (TraceSums), for the
// operators whose time grew most between two scales: device self time where the trace has device work,
// else host self time. Nanoseconds over the whole trace.
struct OperatorTime {
  std::string name;
  int64_t self_ns = 0;
};

// A named part of the decomposed rank's exposed communication (TraceSums::step_communication_ns), over its
// decomposed steps: FSDP/ZeRO's exposed collectives per process group, phase and type
// (analysis/exposed_collectives.h), e.g. "allgather, forward, group 0 [0, 1]". Nanoseconds.
struct CommunicationPart {
  std::string name;
  int64_t ns = 0;
};

struct RunData {
  std::string layout;  // "scaleprof", "itwinai" or "mlflow"
  std::string experiment;
  std::string name;  // run name (run.json "run", else the folder; itwinai: run id folder)
  std::string strategy;
  int64_t workers = 0;  // world size (GPUs for itwinai)
  int64_t nodes = 0;    // 0 when unknown
  std::string path;     // the run folder (itwinai: the folder of its CSV files)
  std::string status;   // completed, failed, running, incomplete, or "" when unknown
  // The training command's exit code where the run recorded one (run.json's exit_status), and the
  // log of the SLURM job that ran it where known ("" otherwise): what a failed run is shown with.
  std::optional<int64_t> exit_code;
  std::string log;
  // A SLURM job of `scaleprof slurm` that never ran this configuration (status "not_run", read from the
  // experiment's jobs-not-run.txt, importers/jobs_not_run.h): why, with SLURM's state and the job id,
  // e.g. "cancelled before it ran (SLURM state CANCELLED, job 4711)". It has no data.
  std::string not_run;
  // Epoch times of the run, one per epoch: the slowest rank's duration (the epoch ends when the last
  // rank finishes it). Unordered; analyses sort by epoch.
  std::vector<tables::EpochTime> epochs;
  std::vector<GpuSeries> gpus;
  std::optional<ComputationSums> computation;
  std::vector<std::string> trace_files;  // profiler traces of the ranks, sorted
  std::optional<TraceSums> traces;
  std::vector<CollectiveSample> collectives;  // matched calls in the profiled steps, by group and position
  std::vector<RankWait> rank_waits;           // by rank; empty without matched calls
  std::vector<OperatorTime> operators;        // the decomposed rank's operators, most self time first (at most 64)
  // Peak bytes allocated on one device other than the CPU ([memory] events, analysis/memory_timeline.h),
  // the largest and the smallest over the run's ranks; -1 where no trace has such events (issue 23).
  int64_t peak_device_memory_bytes = -1;
  int64_t min_peak_device_memory_bytes = -1;
  // FLOPs of the profiled steps from recorded shapes (analysis/flops.h), summed over the ranks that
  // have them: counted FLOPs, the steps' wall time (rank-seconds, ns), and the time their matmul,
  // convolution and attention FLOPs would take at the device's peak (NaN where a rank's device or
  // dtype has no peak). step_flops is NaN where no rank recorded shapes (issue 23). Doubles: a large
  // run's FLOPs pass int64.
  double step_flops = std::numeric_limits<double>::quiet_NaN();
  double flop_step_ns = 0;
  double flop_ideal_ns = 0;
  // Every rank's profiled steps between its arrivals at the matched collectives, for the what-if
  // model (tables/step_timeline.h, analysis/whatif.h); empty without traces with ProfilerSteps.
  RunTimeline timeline;
  // Each rank's steps beside its GPU's samples (steps.csv, gpu.csv), for the straggler-causes join
  // (analysis/straggler_causes.h); empty for layouts without per-rank steps.
  std::vector<RankActivity> rank_activity;
  // Per profiled step, the rank the others waited for at the matched collectives (profiler traces);
  // empty without traces or waits.
  std::vector<WaitedForStep> waited_for;
  // The pipeline the decomposed rank is a stage of (analysis/pipeline_bubbles.h): p stages and m
  // micro-batches per step (-1 unknown); 0 stages where its traces show no pipeline schedule.
  int64_t pipeline_stages = 0;
  int64_t pipeline_micro_batches = -1;
  // Parts of the decomposed rank's exposed communication named apart (CommunicationPart); empty without
  // FSDP/ZeRO collectives.
  std::vector<CommunicationPart> communication_parts;
};

// A run that failed (status failed, or interrupted: its process ended without recording an end) is no
// measurement of its configuration, whatever epochs it finished before it ended; a SLURM job that never
// ran it (status not_run) is none either, and shown beside the failed ones.
inline bool run_failed(const RunData& run) {
  return run.status == "failed" || run.status == "interrupted" || run.status == "not_run";
}

struct ScalabilityData {
  std::vector<RunData> runs;
  std::vector<Diagnostic> warnings;  // one each: missing pieces, notes
  std::vector<Diagnostic> errors;    // data that was rejected, with its place ("file:line") where known
  std::vector<Diagnostic> notes;     // what the importer did that the reader should know (runs it joined)
};

}  // namespace scaleprof::tables
