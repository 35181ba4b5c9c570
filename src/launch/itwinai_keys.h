// itwinai's SLURM configuration in `scaleprof slurm -c`: the keys itwinai 0.4.2's builder reads
// (itwinai/slurm/configuration.py, MLSlurmBuilderConfig), its `{field}` placeholders in training_cmd
// and OmegaConf's `${key}` interpolations, each mapped to scaleprof's fields or reported with what to
// write instead. Every problem of a configuration is reported at once, so a user moving from itwinai
// sees the whole list of changes, not one per try.
#pragma once

#include <optional>
#include <string>
#include <string_view>
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
  // Keys that have no effect here (itwinai 0.3's, py-spy's, a config_name no placeholder uses, ...).
  std::vector<std::string> warnings;
  // What was filled in that the user should know (itwinai's default training_cmd).
  std::vector<std::string> notes;
};

// Maps itwinai's keys, fills OmegaConf's `${key}` interpolations in every string value (`${itwinai.cwd:}`
// is `cwd`; in shell code `${oc.env:NAME}` becomes the job shell's `${NAME}`, and a `${NAME}` that is no
// key of the configuration is left for the job's shell) and itwinai's str.format placeholders `{key}`
// in training_cmd (`{{`/`}}` are literal braces). Values scaleprof knows now are written into shell
// code quoted for their place (launch/shell_text.h); the values of each job (strategy, node count,
// run and job name, ...) become job_placeholder()s that the script generator fills the same way.
// training_cmd without a value in an itwinai configuration is itwinai's default. Refuses what would
// break the launch line (an unclosed quote, a ';' that ends the command). The error lists every
// problem, one per line after the first. `training` false (the analysis jobs of `scaleprof slurm
// analyze`): training_cmd is not used, so its placeholders are not filled and its absence is no problem.
Result<ItwinaiResolution> resolve_itwinai(const config::Config& config, const std::string& cwd, bool training = true);

// A value of one job in the resolved training_cmd, filled per job by the script generator: `name`
// between \x01 and \x02 (control characters, which no configuration value can hold). Names:
// strategy, num_nodes, gpus_per_node, repetition, experiment, run_name, job_name.
std::string job_placeholder(std::string_view name);

}  // namespace scaleprof::launch
