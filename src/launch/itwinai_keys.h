// itwinai's SLURM configuration in `scaleprof slurm -c`: the keys itwinai 0.4.2's builder reads
// (itwinai/slurm/configuration.py, MLSlurmBuilderConfig), its `{field}` placeholders in training_cmd
// and OmegaConf's `${key}` interpolations, each mapped to scaleprof's fields or reported with what to
// write instead. Every problem of a configuration is reported at once, so a user moving from itwinai
// sees the whole list of changes, not one per try.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "core/result.h"

namespace scaleprof::launch {

// The keys of itwinai's builder that are not scaleprof fields or aliases, as foreign fields
// (config::FieldSpec::foreign), with itwinai's defaults. Part of launch_fields().
std::vector<config::FieldSpec> itwinai_fields();

struct ItwinaiResolution {
  config::Config config;  // interpolations and placeholders filled, multi-line values joined
  // itwinai's submit_job / save_script keys, where a file or flag set them.
  std::optional<bool> submit_job, save_script;
};

// Maps itwinai's keys, fills `${key}` interpolations (any string value; `${itwinai.cwd:}` is `cwd`)
// and itwinai's placeholders in training_cmd (`{distributed_strategy}` becomes scaleprof's per-job
// `{strategy}`, ...), and refuses what a script would carry literally: `$(...)`, backticks and
// `$NAME` in training_cmd and pre_exec. The error lists every problem, one per line after the first.
// `training` false (the analysis jobs of `scaleprof slurm analyze`): training_cmd is not used, so its
// placeholders are not filled and its absence is no problem.
Result<ItwinaiResolution> resolve_itwinai(const config::Config& config, const std::string& cwd, bool training = true);

// Where `command` would have a shell expand something (outside single quotes, not after a
// backslash): `$(...)`, a backtick, `${...}` or `$NAME`; the text of the first one, or "".
std::string shell_expansion_in(std::string_view command);

}  // namespace scaleprof::launch
