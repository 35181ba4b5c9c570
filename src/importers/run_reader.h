// Reading run directories back (docs/run-directory.md): `scaleprof runs`, and `scaleprof report`.
//
// The reader is tolerant the way the writers need it to be: a CSV whose last line has no '\n' was cut
// by a crash; that line is skipped and reported as a warning "file:line: torn last line ...", never an
// error. A bad line in the middle, an unreadable rank.json or a missing run.json are diagnostics too;
// the rest of the run is still read. Only a run directory that cannot be listed at all is an error.
// Each diagnostic says its severity: Severity::kError for input rejected (a line skipped, a file that
// cannot be opened or parsed, a rank.json naming another rank), Severity::kWarning for the rest (a
// torn last line, a rank that never wrote, a symbolic link not followed, a file over its size limit).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collect/run_records.h"
#include "core/diagnostic.h"
#include "core/result.h"

namespace scaleprof::importers {

// A CSV file as text cells, addressed by column name (columns a reader does not know are kept).
struct CsvTable {
  std::string path;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<int64_t> line_numbers;  // 1-based line of each row in the file, for messages

  // Index of the named column, or -1 when the file has none.
  int column(std::string_view name) const;
};

// Reads a CSV written by scaleprof with the one CSV reader (core/csv_reader.h, RFC 4180). A torn last
// line is dropped and reported through *warnings; a row with the wrong number of fields is dropped and
// reported too.
Result<CsvTable> read_csv(const std::string& path, std::vector<std::string>* warnings);

struct RankData {
  std::string dir;
  std::optional<collect::RankInfo> info;  // nullopt when rank.json is missing or unreadable
  int64_t rank = 0;                       // from rank.json, else from the folder name
  std::vector<collect::EpochRecord> epochs;
  std::vector<collect::StepRecord> steps;
  std::vector<collect::GpuSample> gpu;
  std::vector<std::string> trace_files;  // traces/*.json[.gz], sorted
  std::string status;                    // derived: completed, failed, running, incomplete
};

struct NodeData {
  std::string dir;
  std::string host;
  std::vector<collect::GpuSample> gpu;
};

// One attempt of a run (a SLURM requeue records attempt N in <run>/attempt-N/).
struct AttemptSummary {
  int64_t attempt = 0;
  std::string dir;
  std::string status;
};

struct RunData {
  std::string dir;         // the attempt read: <run>/ or <run>/attempt-N/
  std::string experiment;  // folder names, used when run.json is absent
  std::string run;
  std::optional<collect::RunInfo> info;
  std::vector<RankData> ranks;           // by rank
  std::vector<NodeData> nodes;           // node-<host>/ folders of `scaleprof run`
  std::string status;                    // derived from run.json and the ranks, see derive_run_status
  std::string status_reason;             // why, for "interrupted" and "not_distributed"
  int64_t attempt = 0;                   // the attempt these data come from
  std::vector<AttemptSummary> attempts;  // every attempt found, when there is more than attempt 0
  std::vector<Diagnostic> warnings;      // what the reader met, in reading order, each with its severity

  // Facts preferring run.json, else what the ranks say.
  std::string strategy() const;
  int64_t world_size() const;        // 0 when nobody says
  int64_t node_count() const;        // distinct hosts of the ranks, else run.json's nodes, else 0
  int64_t epochs_completed() const;  // epochs every rank finished (the minimum over ranks)
};

struct ReadOptions {
  // Files not read are still checked for a torn last line (reported the same way).
  bool read_steps = true;
  bool read_gpu = true;
  // Host name of the machine reading, to check whether a "running" writer's pid is still alive;
  // empty means "this machine's name".
  std::string local_host;
};

// Reads one <root>/<experiment>/<run>/ folder. When it holds attempt-N/ folders (SLURM requeues), the
// data are those of the latest attempt that completed, else of the latest attempt; `attempts` lists
// them all and a warning names the attempts set aside.
Result<RunData> read_run(const std::string& run_dir, const ReadOptions& options = {});

// Every run below root (optionally of one experiment), ordered by experiment, then start time, then
// name. Folders that are not runs (no run.json, no rank-* or attempt-* folder) are skipped. Entries
// that cannot be read (a symbolic link loop, no permission) are one line each in *problems and are
// skipped; the other runs are still listed.
Result<std::vector<RunData>> read_runs(const std::string& root, const std::string& experiment = "",
                                       const ReadOptions& options = {}, std::vector<std::string>* problems = nullptr);

// The status rules of docs/run-directory.md: run.json's completed/failed wins when the wrapper wrote
// it with an exit status; a "running" run.json whose writer is gone makes the run interrupted; then
// any failed rank makes it failed, a "running" rank whose process is gone interrupted; ranks that
// never said anything make it incomplete. *reason (optional) says whose process is gone.
std::string derive_run_status(const RunData& run, const ReadOptions& options, std::string* reason = nullptr);

// Why a run launched as W > 1 ranks is no W-rank measurement: a rank whose training was seen in a
// process group of another size (rank.json's process_group_size; 1 when neither torch.distributed nor
// Horovod was initialised, e.g. two tasks started by srun that each trained alone). "" when every
// rank that looked was in a group of W, or none looked. Such a run's status is not_distributed.
std::string not_one_process_group(const RunData& run);

// The samples one rank processed per epoch, as the report takes them: its first epoch record's
// `samples`, else the sum of the epoch's step records' when every one of them gives a count (and the
// sum fits). Counts are checked as every reader checks them (importers/value_checks.h): a negative or
// absurd one is left out, the epoch then has none from the records it came from, and each is one line
// in *rejected (file, line or step). The report (run_dir_importer.cc) and `mlflow sync` (metric
// epoch_samples) both use it, so a report read back from MLflow has the run directory's throughput.
std::map<int64_t, int64_t> rank_samples_per_epoch(const RankData& rank, std::vector<std::string>* rejected = nullptr);

// Whether process `pid` on `host` may still be running: true when host is another machine (cannot
// tell) or the pid exists here.
bool writer_may_be_alive(const std::string& host, std::optional<int64_t> pid, const std::string& local_host);

}  // namespace scaleprof::importers
