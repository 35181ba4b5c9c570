// The jobs of `scaleprof slurm` that never ran their configuration, recorded for the report: after
// `slurm status` has asked SLURM, every job (not superseded) that wrote no run directory and is
// cancelled, failed or still pending is written into <root>/<experiment>/jobs-not-run.txt
// (importers/jobs_not_run.h), and a job that wrote one since is taken out. The report job runs
// `slurm status` before the report, so a job cancelled while pending is in its report.
#pragma once

#include <string>
#include <vector>

#include "launch/job_status.h"

namespace scaleprof::launch {

// Updates the file of each experiment the statuses' jobs belong to; lines of jobs not among
// `statuses` (another script folder's) are kept. A file that cannot be read or written is a line of
// *notes; nothing else fails.
void record_jobs_not_run(const std::vector<JobStatus>& statuses, std::vector<std::string>* notes);

}  // namespace scaleprof::launch
