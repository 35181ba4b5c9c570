// What `scaleprof slurm` and `slurm analyze` do with the scripts they make, and how they write them:
// the save/submit decision from the flags and the configuration, the set written whole or not at all,
// and the configuration's --FIELD VALUE overrides and effective text.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "config/config.h"
#include "core/result.h"
#include "launch/launch_config.h"

namespace scaleprof::launch {

// The command line's say on saving and submitting.
struct ScriptFlags {
  bool no_submit = false, no_save = false;
  // itwinai's flags (itwinai generate-slurm -j/--submit-job, -s/--save-script) and --preview.
  bool submit = false, save = false, preview = false;
};

// What the call does: save the scripts, submit them, both, or neither (print them).
struct ScriptAction {
  bool save = true, submit = true;
};

// scaleprof's own rule: both unless --no-save-script / --no-submit-job. itwinai's rule, as soon as
// -j, -s or a submit_job / save_script key is given: only what is asked for (a flag over a key), and
// a preview when neither is. --preview: print only. Contradicting flags: an error of kind kUsage.
Result<ScriptAction> decide_action(const ScriptFlags& flags, const LaunchConfig& c);

// Writes every script or none: each goes into a hidden staging folder inside script_dir first, and
// only when all are written are they renamed into place (a rename replaces a file, never follows a
// link). `files`: (path, text) pairs whose paths were checked before (write_refusal.h).
Status write_script_set(const std::string& script_dir, const std::vector<std::pair<std::string, std::string>>& files);

// `--field value` and `--field=value` pairs, in the order given, set on `config` as overrides.
Status apply_overrides(const std::vector<std::string>& args, config::Config* config);

// The effective configuration, one field a line, with where each value came from after '#' (and,
// for the user's shell code, that the job's shell expands it): `scaleprof slurm --print-config`.
std::string effective_config_text(const config::Config& config);

}  // namespace scaleprof::launch
