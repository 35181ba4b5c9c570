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
#include "collect/file_io.h"
#include "collect/gpu_monitor.h"
#include "collect/run_context.h"
#include "collect/run_records.h"
#include "collect/timers.h"
#include "core/result.h"

namespace scaleprof::collect {

struct RankRecorderOptions {
  std::string torch_version;
  std::vector<std::string> command;  // argv of the training, for run.json when rank 0 writes it
  std::chrono::nanoseconds gpu_interval = std::chrono::seconds(1);
};

class RankRecorder {
 public:
  // Creates the rank folder (the context must have its run name), writes rank.json ("running"), and
  // run.json when this is rank 0 and no `scaleprof run` wrapper owns it. Refuses a rank folder that
  // another process already wrote (a reused run name would mix two launches).
  static Result<std::unique_ptr<RankRecorder>> open(const RunContext& context, const RankRecorderOptions& options,
                                                    const Environment& env);
  RankRecorder(const RankRecorder&) = delete;
  RankRecorder& operator=(const RankRecorder&) = delete;
  ~RankRecorder();  // finishes as "failed" if finish() was not called

  Status begin_epoch(int64_t epoch);
  // Appends the epoch line (one write) and returns what was recorded.
  Result<EpochRecord> end_epoch(std::optional<int64_t> samples = std::nullopt);
  // Steps inside an epoch; `step` defaults to the next index within the current epoch.
  Status begin_step(std::optional<int64_t> step = std::nullopt);
  Result<StepRecord> end_step(std::optional<int64_t> samples = std::nullopt);

  // Drops a running epoch or step without writing it (the training raised inside it).
  void abandon_epoch();
  void abandon_step();

  // Marks the rank completed (success) or failed, stops the GPU monitor and updates run.json when
  // this rank owns it. Later calls do nothing.
  Status finish(bool success);

  const RunContext& context() const { return context_; }
  std::string run_dir() const;
  std::string rank_dir() const;
  std::string traces_dir() const;  // created on open
  // Why no GPU is sampled by this rank ("" when it samples): the wrapper does it, or no library.
  const std::string& gpu_note() const { return gpu_note_; }
  const GpuMonitor* gpu_monitor() const { return gpu_.get(); }

 private:
  RankRecorder(RunContext context, RankRecorderOptions options);
  Status write_rank_json();
  Status write_run_json();
  bool owns_run_json() const { return context_.rank == 0 && !context_.wrapper_pid; }

  RunContext context_;
  RankRecorderOptions options_;
  std::mutex mutex_;  // the Python side may call from several threads; records must not interleave
  RankInfo info_;
  RunInfo run_info_;
  CsvAppender epochs_;
  CsvAppender steps_;
  IntervalTimer epoch_timer_;
  IntervalTimer step_timer_;
  int64_t current_epoch_ = -1;
  int64_t current_step_ = -1;
  int64_t next_step_ = 0;
  bool finished_ = false;
  std::unique_ptr<GpuMonitor> gpu_;
  std::string gpu_note_;
};

}  // namespace scaleprof::collect
