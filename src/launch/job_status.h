// The state of recorded jobs, from every source there is: squeue (pending and running jobs, and
// finished ones the controller still remembers), scontrol show job, sacct where accounting exists,
// and the run directories the jobs wrote (the lasting outcome once SLURM has forgotten a job).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/captured_command.h"
#include "launch/submission.h"

namespace scaleprof::launch {

struct SlurmJobInfo {
  std::string state;                 // SLURM's word: PENDING, RUNNING, COMPLETED, FAILED, ...
  std::optional<int64_t> elapsed_s;  // time used so far
  std::string source;                // squeue, scontrol or sacct
  std::optional<int64_t> exit_code;  // of a job that ended (scontrol, sacct): 128+N when signal N ended it
};

struct JobStatus {
  SubmittedJob job;
  std::string state;        // a state_class(): pending | running | suspended | completed | failed | cancelled | unknown
  std::string slurm_state;  // SLURM's own word, "" when SLURM does not know the job any more
  std::optional<int64_t> elapsed_s;
  std::string run;                   // run directory name when the job wrote one
  std::string run_status;            // its status (completed, failed, running, incomplete)
  std::string source;                // where the state came from
  std::optional<int64_t> exit_code;  // the batch script's exit code once the job ended, where SLURM said it
  std::string outcome;               // report jobs: what became of the report (report_outcome)
};

// Parsers of the SLURM clients' output (pure; tested on captured text).
// squeue --noheader --array --states=all --format=%i|%T|%M (array tasks one per line: <job>_<task>)
std::map<std::string, SlurmJobInfo> parse_squeue(const std::string& out);
// scontrol show job ID (one job)
std::optional<SlurmJobInfo> parse_scontrol_job(const std::string& out);
// scontrol --oneliner show job (every job the controller remembers; each record starts at JobId=;
// an array task is also listed as <ArrayJobId>_<ArrayTaskId>)
std::map<std::string, SlurmJobInfo> parse_scontrol_jobs(const std::string& out);
// sacct --noheader --parsable2 --format=JobID,State,Elapsed,ExitCode (steps like 12.batch are ignored;
// ExitCode may be absent)
std::map<std::string, SlurmJobInfo> parse_sacct(const std::string& out);
// SLURM's "CODE:SIGNAL" exit code: CODE, or 128+SIGNAL when a signal ended the job; nullopt if malformed.
std::optional<int64_t> parse_slurm_exit_code(const std::string& text);
// What became of a report job (`scaleprof report` after the scaling jobs), from its state class and
// exit code (docs/cli.md's exit codes): "report written", "report written, partial (exit 3): ...", ...
std::string report_outcome(const std::string& state, const std::optional<int64_t>& exit_code);
// SLURM durations: [D-]HH:MM:SS, [D-]HH:MM, MM:SS, M:SS, D-HH; nullopt for INVALID or malformed text
// (minutes and seconds after the first field must be below 60).
std::optional<int64_t> parse_slurm_duration(const std::string& text);
// The class of a SLURM job state, long name (squeue %T, sacct, scontrol) or short code (squeue %t),
// after SLURM's list of base states and state flags (slurm.schedmd.com/job_state_codes.html):
//   pending    PENDING REQUEUED REQUEUE_HOLD REQUEUE_FED RESV_DEL_HOLD SPECIAL_EXIT EXPEDITING
//   running    RUNNING CONFIGURING POWER_UP_NODE COMPLETING STAGE_OUT SIGNALING RESIZING
//   suspended  SUSPENDED STOPPED (resources kept, not executing)
//   completed  COMPLETED
//   failed     FAILED TIMEOUT NODE_FAIL OUT_OF_MEMORY BOOT_FAIL DEADLINE PREEMPTED LAUNCH_FAILED RECONFIG_FAIL
//   cancelled  CANCELLED REVOKED (a federation sibling runs it elsewhere)
//   unknown    UPDATE_DB (a transient flag that hides the state), "" and any word SLURM may add later
// A word this does not know is never called failed.
std::string state_class(const std::string& slurm_state);

// Elapsed seconds between two times of a run.json, or nullopt when either is outside the times any
// input may carry (core/time_bounds.h) or the end is before the start.
std::optional<int64_t> elapsed_between(std::optional<int64_t> start_unix_ns, std::optional<int64_t> end_unix_ns);

struct StatusQuery {
  CaptureLimits limits;       // for each squeue, scontrol and sacct call
  size_t sacct_batch = 1000;  // job ids per sacct call: the argument list stays short whatever the job count
  // Where the states of jobs that ended are remembered (launch/job_state_memory.h; "" none): a job
  // SLURM has forgotten keeps the state SLURM last gave it (a cancelled job stays cancelled).
  std::string state_file;
};

// Asks SLURM (and the run directories) about every job: one squeue, one scontrol (when squeue
// answered and missed some), sacct in batches for those still missing. `notes` receives one line per
// source that could not answer (e.g. "sacct: Slurm accounting storage is disabled"); a source that
// failed once is not asked again. A job array's record (slurm analyze's shards) gives one status per
// task (<job id>_<task>); an analysis job SLURM has forgotten is completed when its output file exists.
std::vector<JobStatus> job_statuses(const std::vector<SubmittedJob>& jobs, std::vector<std::string>* notes,
                                    const StatusQuery& query = {});

}  // namespace scaleprof::launch
