// The records of a run directory (docs/run-directory.md), shared by the writers and the reader.
//
// One struct per file kind: run.json -> RunInfo, rank.json -> RankInfo, epochs.csv -> EpochRecord,
// steps.csv -> StepRecord, gpu.csv -> GpuSample. Values a writer did not know are std::nullopt (null in
// JSON, an empty CSV field), so readers can tell "unknown" from zero.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace scaleprof::collect {

inline constexpr int kSchemaVersion = 1;

// File and folder names of the contract, in one place so writer and reader cannot drift apart.
inline constexpr const char* kRunJson = "run.json";
inline constexpr const char* kRankJson = "rank.json";
inline constexpr const char* kEpochsCsv = "epochs.csv";
inline constexpr const char* kStepsCsv = "steps.csv";
inline constexpr const char* kGpuCsv = "gpu.csv";
inline constexpr const char* kTracesDir = "traces";
inline constexpr const char* kDefaultRoot = "scalability-metrics";

inline constexpr const char* kEpochsHeader = "epoch,start_unix_ns,end_unix_ns,duration_s,samples";
inline constexpr const char* kStepsHeader = "epoch,step,start_unix_ns,duration_s,samples";
inline constexpr const char* kGpuHeader =
    "time_unix_ns,device,utilization_pct,power_w,memory_used_bytes,energy_j,sm_clock_mhz,throttle_reasons";

// Status strings of run.json and rank.json.
inline constexpr const char* kStatusRunning = "running";
inline constexpr const char* kStatusCompleted = "completed";
inline constexpr const char* kStatusFailed = "failed";
inline constexpr const char* kStatusIncomplete = "incomplete";
// Derived by readers only: the file says running, but the process that wrote it is gone without
// recording an end (kill -9, a crashed node, a requeue that killed the wrapper).
inline constexpr const char* kStatusInterrupted = "interrupted";
// Derived by readers only: launched as W > 1 ranks, but the training of some rank was never seen in a
// process group of W (RankInfo::process_group_size): the ranks trained independently, so the run is
// no W-rank measurement (importers: not_one_process_group).
inline constexpr const char* kStatusNotDistributed = "not_distributed";

// A SLURM requeue restarts a job with the same job id, hence the same derived run name; attempt N > 0
// (SLURM_RESTART_COUNT) is recorded in the run folder's "attempt-N/" subfolder, beside attempt 0.
inline constexpr const char* kAttemptDirPrefix = "attempt-";

// "rank-00042": five digits so a plain sort lists ranks in order up to 99999.
std::string rank_dir_name(int64_t rank);
// "node-<host>" for the GPU samples `scaleprof run` takes of a whole node.
std::string node_dir_name(const std::string& host);
// <root>/<experiment>/<run>, plus /attempt-N for attempt N > 0. Callers check the names first
// (check_context_names in run_names.h).
std::string run_dir_path(const std::string& root, const std::string& experiment, const std::string& run,
                         int64_t attempt);

struct RunInfo {
  int schema_version = kSchemaVersion;
  std::string experiment;
  std::string run;
  std::string strategy;
  std::optional<int64_t> world_size;
  std::optional<int64_t> nodes;
  std::optional<int64_t> gpus_per_node;
  std::string launcher;  // torchrun, slurm, openmpi, horovod, deepspeed, single, or "" when unknown
  std::string job_id;
  std::vector<std::string> command;
  std::vector<std::string> hosts;
  std::optional<int64_t> start_unix_ns;
  std::optional<int64_t> end_unix_ns;
  std::optional<int64_t> exit_status;  // the command's exit code; 128+N when killed by signal N
  std::string status = kStatusRunning;
  std::string scaleprof_version;
  std::string torch_version;
  std::string writer;  // "wrapper" (scaleprof run) or "rank0" (the Python API of rank 0)
  std::string writer_host;
  std::optional<int64_t> writer_pid;  // lets a reader on the same host see that a "running" run is gone
  int64_t attempt = 0;                // 0, or N in <run>/attempt-N/ after the Nth SLURM requeue
  int64_t write_errors = 0;           // failed metrics writes of the writer (monitoring never kills training)
  std::string last_write_error;
  // The sampling interval of the wrapper's node GPU monitor (`scaleprof run --gpu-interval`); unset
  // when it samples no GPUs. Synced to MLflow as itwinai's `probing_interval`.
  std::optional<int64_t> gpu_interval_ns;
};

struct RankInfo {
  int schema_version = kSchemaVersion;
  int64_t rank = 0;
  std::optional<int64_t> local_rank;
  std::optional<int64_t> world_size;
  std::optional<int64_t> node_rank;
  std::optional<int64_t> nodes;
  std::string host;
  std::optional<int64_t> pid;
  std::optional<int64_t> start_unix_ns;
  std::optional<int64_t> end_unix_ns;
  std::string status = kStatusRunning;
  std::vector<std::string> devices;  // visible accelerator ids as the launcher gave them
  std::string strategy;
  std::string experiment;
  std::string run;
  std::string launcher;
  std::string job_id;
  std::string torch_version;
  int64_t attempt = 0;
  int64_t write_errors = 0;  // failed writes of this rank's CSV files, each retried at the next record
  std::string last_write_error;
  // The sampling interval of this rank's own GPU monitor; unset when the rank samples no GPUs.
  std::optional<int64_t> gpu_interval_ns;
  // The largest process group this rank's training was seen in (the Python API looks at each epoch's
  // end and at finish): torch.distributed's or Horovod's world size, by "torch.distributed" or
  // "horovod"; 1 by "none" when neither was initialised. Unset when nothing looked (the wrapper alone,
  // an older writer).
  std::optional<int64_t> process_group_size;
  std::string process_group_by;
};

struct EpochRecord {
  int64_t epoch = 0;
  int64_t start_unix_ns = 0;
  int64_t end_unix_ns = 0;
  double duration_s = 0;  // from the monotonic clock, not end - start
  std::optional<int64_t> samples;
  int64_t line = 0;  // 1-based line in the file it was read from, for messages (0: not read from a file)
};

struct StepRecord {
  int64_t epoch = 0;
  int64_t step = 0;
  int64_t start_unix_ns = 0;
  double duration_s = 0;
  std::optional<int64_t> samples;
};

struct GpuSample {
  int64_t time_unix_ns = 0;
  int64_t device = 0;  // index as the driver numbers it
  std::optional<double> utilization_pct;
  std::optional<double> power_w;
  std::optional<int64_t> memory_used_bytes;
  std::optional<double> energy_j;  // driver counter relative to the device's first sample
  // The SM clock and NVML's clock event ("throttle") reasons mask (core/clock_event_reasons.h);
  // written as a readable list. Unknown where the driver has no such call (ROCm SMI, old NVML).
  std::optional<int64_t> sm_clock_mhz;
  std::optional<uint64_t> throttle_reasons;
  int64_t line = 0;  // 1-based line in the file it was read from, for messages (0: not read)
};

// One CSV line (with its '\n') per record, exactly as the writers append them.
std::string csv_line(const EpochRecord& r);
std::string csv_line(const StepRecord& r);
std::string csv_line(const GpuSample& s);
// The same line appended to *out without temporaries: the GPU monitor's hot path.
void append_csv_line(std::string* out, const GpuSample& s);

// The JSON documents, one object on one line plus '\n'.
std::string to_json(const RunInfo& info);
std::string to_json(const RankInfo& info);

}  // namespace scaleprof::collect
