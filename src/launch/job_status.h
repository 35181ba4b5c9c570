// The state of recorded jobs, from every source there is: squeue (pending and running jobs, and
// finished ones the controller still remembers), scontrol show job, sacct where accounting exists,
// and the run directories the jobs wrote (the lasting outcome once SLURM has forgotten a job).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "launch/submission.h"

namespace scaleprof::launch {

struct SlurmJobInfo {
  std::string state;                 // SLURM's word: PENDING, RUNNING, COMPLETED, FAILED, ...
  std::optional<int64_t> elapsed_s;  // time used so far
  std::string source;                // squeue, scontrol or sacct
};

struct JobStatus {
  SubmittedJob job;
  std::string state;        // pending | running | completed | failed | unknown
  std::string slurm_state;  // SLURM's own word, "" when SLURM does not know the job any more
  std::optional<int64_t> elapsed_s;
  std::string run;         // run directory name when the job wrote one
  std::string run_status;  // its status (completed, failed, running, incomplete)
  std::string source;      // where the state came from
};

// Parsers of the SLURM clients' output (pure; tested on captured text).
// squeue --noheader --states=all --format=%i|%T|%M
std::map<std::string, SlurmJobInfo> parse_squeue(const std::string& out);
// scontrol show job ID (one job)
std::optional<SlurmJobInfo> parse_scontrol_job(const std::string& out);
// sacct --noheader --parsable2 --format=JobID,State,Elapsed (steps like 12.batch are ignored)
std::map<std::string, SlurmJobInfo> parse_sacct(const std::string& out);
// SLURM durations: [D-]HH:MM:SS, MM:SS, M:SS; nullopt for INVALID or malformed text.
std::optional<int64_t> parse_slurm_duration(const std::string& text);
// pending | running | completed | failed for a SLURM state word.
std::string state_class(const std::string& slurm_state);

// Asks SLURM (and the run directories) about every job; `notes` receives one line per source that
// could not answer (e.g. "sacct: Slurm accounting storage is disabled").
std::vector<JobStatus> job_statuses(const std::vector<SubmittedJob>& jobs, std::vector<std::string>* notes);

}  // namespace scaleprof::launch
