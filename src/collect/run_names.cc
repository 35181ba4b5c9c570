#include "collect/run_names.h"

#include <fmt/format.h>

#include <ctime>

namespace scaleprof::collect {

namespace {

std::string prefix(const std::string& strategy, int64_t world_size) {
  return fmt::format("{}-w{}", strategy.empty() ? "run" : strategy, world_size);
}

// Keeps launcher-provided ids usable as part of a folder name.
std::string sanitized(const std::string& text) {
  std::string out;
  for (char c : text) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
              c == '-' || c == '+';
    out += ok ? c : '_';
  }
  return out;
}

}  // namespace

Status check_name(const std::string& what, const std::string& name) {
  if (name.empty()) return Error{fmt::format("{} is empty", what)};
  if (name.size() > 128) return Error{fmt::format("{} '{}' is longer than 128 characters", what, name)};
  if (name[0] == '.') return Error{fmt::format("{} '{}' must not start with '.'", what, name)};
  if (sanitized(name) != name) {
    return Error{
        fmt::format("{} '{}' may only use letters, digits, '.', '_', '-' and '+' (it names a folder)", what, name)};
  }
  return Ok{};
}

Status check_context_names(const RunContext& context) {
  if (Status s = check_name("experiment", context.experiment); !s) return s;
  if (Status s = check_name("run name", context.run); !s) return s;
  if (!context.strategy.empty()) {
    if (Status s = check_name("strategy", context.strategy); !s) return s;
  }
  if (context.host.empty()) return Ok{};  // no node-<host>/ folder is named then
  return check_name("host (SCALEPROF_HOST or the machine's name)", context.host);
}

std::string derived_run_name(const RunContext& context, const Environment& env) {
  const std::string head = prefix(context.strategy, context.world_size);
  auto step = env.non_empty("SLURM_STEP_ID");
  if (auto job = env.non_empty("SLURM_JOB_ID"); job && step) {
    // Inside an srun step every task of the launch shares job and step; the batch script itself has no
    // step id, and two torchrun calls in one script would collide, so they fall through.
    return sanitized(fmt::format("{}-slurm{}.{}", head, *job, *step));
  }
  auto rdzv = env.non_empty("TORCHELASTIC_RUN_ID");
  if (rdzv && *rdzv != "none") {
    std::string name = fmt::format("{}-{}", head, *rdzv);
    auto restart = env.non_empty("TORCHELASTIC_RESTART_COUNT");
    if (restart && *restart != "0") name += "-r" + *restart;
    return sanitized(name);
  }
  return {};
}

std::string generated_run_name(const std::string& strategy, int64_t world_size, int64_t unix_ns, uint32_t random16) {
  std::time_t seconds = static_cast<std::time_t>(unix_ns / 1'000'000'000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &utc);
  return sanitized(fmt::format("{}-{}-{:04x}", prefix(strategy, world_size), stamp, random16 & 0xffffu));
}

std::string slurm_job_of_run(std::string_view run_name) {
  const size_t at = run_name.rfind("-slurm");
  if (at == std::string_view::npos) return {};
  const std::string_view id = run_name.substr(at + 6);
  if (id.empty() || id.find_first_not_of("0123456789") != std::string_view::npos) return {};
  return std::string(id);
}

}  // namespace scaleprof::collect
