// What `scaleprof slurm status` remembers of each job once SLURM has told it how the job ended:
// squeue and scontrol forget a finished job after MinJobAge (300 s by default) and sacct knows it only
// where accounting runs, so a cancelled job would otherwise turn into "unknown", or into what its run
// directory says. The file is <script_dir>/job-states.txt (docs/launch.md), one line per job that
// ended: "JOB_ID STATE ELAPSED_S EXIT_CODE", SLURM's state word, "-" where a value is unknown.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.h"

namespace scaleprof::launch {

inline constexpr std::string_view kJobStatesFile = "job-states.txt";

struct RememberedState {
  std::string slurm_state;  // SLURM's word: COMPLETED, FAILED, CANCELLED, ...
  std::optional<int64_t> elapsed_s;
  std::optional<int64_t> exit_code;
};

// The remembered states of `path`; a missing file is none. Lines that are not records (hand edits, a
// torn line) are skipped; a file that cannot be read is an error.
Result<std::map<std::string, RememberedState>> read_job_states(const std::string& path);

// The text of the file for `states`, by job id.
std::string job_states_text(const std::map<std::string, RememberedState>& states);

}  // namespace scaleprof::launch
