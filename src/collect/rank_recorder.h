// What one rank records: its rank.json, epochs.csv, steps.csv and (in "rank" GPU mode) gpu.csv, all
// below <root>/<experiment>/<run>/rank-NNNNN/, which no other process writes. This is the engine behind
// the Python API; the binding only forwards calls.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "collect/environment.h"
#include "collect/gpu_monitor.h"
#include "collect/run_context.h"
#include "collect/run_records.h"
#include "collect/timers.h"
#include "core/file_io.h"
#include "core/result.h"

namespace scaleprof::collect {

struct RankRecorderOptions {
  std::string torch_version;
  std::vector<std::string> command;  // argv of the training, for run.json when rank 0 writes it
  std::chrono::nanoseconds gpu_interval = std::chrono::seconds(1);
  FILE* messages = stderr;  // where failing writes are reported (once each; see MetricsFile)
};

// The one check of a record's arguments, for every front-end, before the record starts (the Python
// API calls it before the training's block runs, so a bad value is never found after the work): an
// epoch or step index and a sample count are never negative. `what` is "epoch" or "step".
Status check_record_arguments(const char* what, std::optional<int64_t> index, std::optional<int64_t> samples);

class RankRecorder {
 public:
  // Creates the rank folder (the context must have its run name), claims rank.json ("running") with an
  // exclusive create, and run.json likewise when this is rank 0 and no `scaleprof run` wrapper owns
  // it. Refuses, writing nothing and changing nothing, a rank.json or run.json that exists already (a
  // reused run name would mix two launches); of several processes starting the same rank at once,
  // exactly one opens it. Records go to <run>/attempt-N/ for a SLURM requeue (context.attempt).
  static Result<std::unique_ptr<RankRecorder>> open(const RunContext& context, const RankRecorderOptions& options,
                                                    const Environment& env);
  RankRecorder(const RankRecorder&) = delete;
  RankRecorder& operator=(const RankRecorder&) = delete;
  ~RankRecorder();  // finishes as "failed" if finish() was not called

  // Usage errors (an epoch ended that was not started, ...) and bad arguments (check_record_arguments,
  // checked before anything starts) are errors; a write that fails is not: monitoring never kills
  // training. It is reported once on `messages`, counted in rank.json ("write_errors",
  // "last_write_error"), and the record is kept and written with the next one.
  // `samples` given at the beginning is what the record gets unless end_epoch() gives another.
  Status begin_epoch(int64_t epoch, std::optional<int64_t> samples = std::nullopt);
  // Appends the epoch line (one write) and returns what was recorded. The epoch is over whatever
  // happens: a bad `samples` here is an error and the epoch is dropped, never left running (the next
  // begin_epoch works).
  Result<EpochRecord> end_epoch(std::optional<int64_t> samples = std::nullopt);
  // Steps inside an epoch; `step` defaults to the next index within the current epoch.
  Status begin_step(std::optional<int64_t> step = std::nullopt, std::optional<int64_t> samples = std::nullopt);
  Result<StepRecord> end_step(std::optional<int64_t> samples = std::nullopt);

  // Drops a running epoch or step without writing it (the training raised inside it).
  void abandon_epoch();
  void abandon_step();

  // Marks the rank completed (success) or failed, stops the GPU monitor and updates run.json when
  // this rank owns it. Later calls do nothing. Write failures are reported on `messages` and
  // returned, for callers that want them; the Python API does not raise them.
  Status finish(bool success);

  int64_t write_errors() const;

  // Notes the process group the training was seen in (`size` ranks, found by `by`: "torch.distributed",
  // "horovod", or "none" with size 1); the largest seen is written to rank.json at finish(), so a reader
  // can tell ranks that trained together from ones that each trained alone (RankInfo::process_group_size).
  void note_process_group(int64_t size, const std::string& by);

  const RunContext& context() const { return context_; }
  std::string run_dir() const;
  std::string rank_dir() const;
  std::string traces_dir() const;  // created on open
  // Why no GPU is sampled by this rank ("" when it samples): the wrapper does it, or no library.
  const std::string& gpu_note() const { return gpu_note_; }
  const GpuMonitor* gpu_monitor() const { return gpu_.get(); }

 private:
  RankRecorder(RunContext context, RankRecorderOptions options, RankInfo info);
  Status write_rank_json();
  Status write_run_json();
  void after_append(bool written);  // records a failed write in rank.json
  bool owns_run_json() const { return context_.rank == 0 && !context_.wrapper_pid; }

  RunContext context_;
  RankRecorderOptions options_;
  std::mutex mutex_;  // the Python side may call from several threads; records must not interleave
  RankInfo info_;
  RunInfo run_info_;
  MetricsFile epochs_;
  MetricsFile steps_;
  IntervalTimer epoch_timer_;
  IntervalTimer step_timer_;
  int64_t current_epoch_ = -1;
  int64_t current_step_ = -1;
  std::optional<int64_t> epoch_samples_;  // given at begin_epoch / begin_step
  std::optional<int64_t> step_samples_;
  int64_t next_step_ = 0;
  bool finished_ = false;
  std::unique_ptr<GpuMonitor> gpu_;
  std::string gpu_note_;
};

}  // namespace scaleprof::collect
