// Fuzzes the parsers of what SLURM's clients print (`scaleprof slurm status`, submission): squeue,
// scontrol (one job and --oneliner lists), sacct, durations, job states and sbatch's answer. The
// input's first byte picks the parser, the rest is the client's output. Whatever it is, the result
// is jobs with states of the documented classes and durations within range, never a crash or a hang.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "launch/job_status.h"
#include "launch/submission.h"

namespace {

using scaleprof::launch::SlurmJobInfo;

void check(const SlurmJobInfo& info) {
  const std::string cls = scaleprof::launch::state_class(info.state);
  if (cls != "pending" && cls != "running" && cls != "suspended" && cls != "completed" && cls != "failed" &&
      cls != "cancelled" && cls != "unknown") {
    std::abort();
  }
  // At most 999,999 days of 23:59:59: never negative, never wrapped.
  if (info.elapsed_s && (*info.elapsed_s < 0 || *info.elapsed_s > int64_t{1'000'000} * 86'400)) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 6) {
    case 0:
      for (const auto& [id, info] : scaleprof::launch::parse_squeue(text)) check(info);
      break;
    case 1:
      if (auto info = scaleprof::launch::parse_scontrol_job(text)) check(*info);
      break;
    case 2:
      for (const auto& [id, info] : scaleprof::launch::parse_scontrol_jobs(text)) {
        // A job id, or an array task's <array job id>_<task id>: digits on both sides of one '_'.
        const size_t under = id.find('_');
        const std::string job = id.substr(0, under);
        const std::string task = under == std::string::npos ? "0" : id.substr(under + 1);
        if (job.empty() || job.find_first_not_of("0123456789") != std::string::npos) std::abort();
        if (task.empty() || task.find_first_not_of("0123456789") != std::string::npos) std::abort();
        check(info);
      }
      break;
    case 3:
      for (const auto& [id, info] : scaleprof::launch::parse_sacct(text)) {
        if (id.find('.') != std::string::npos) std::abort();  // steps are never jobs
        check(info);
      }
      break;
    case 4: {
      SlurmJobInfo info;
      info.state = text;
      info.elapsed_s = scaleprof::launch::parse_slurm_duration(text);
      check(info);
      break;
    }
    default: {
      const std::string id = scaleprof::launch::parse_job_id(text);
      if (id.find_first_not_of("0123456789") != std::string::npos) std::abort();
      break;
    }
  }
  return 0;
}
