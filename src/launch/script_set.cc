#include "launch/script_set.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "core/output_file.h"
#include "core/terminal_text.h"

namespace scaleprof::launch {

Result<ScriptAction> decide_action(const ScriptFlags& opt, const LaunchConfig& c) {
  if ((opt.submit && opt.no_submit) || (opt.save && opt.no_save)) {
    return Error{
        std::string("--submit-job/-j and --no-submit-job, or --save-script/-s and --no-save-script, contradict "
                    "each other"),
        ErrorKind::kUsage};
  }
  if (opt.preview) {
    if (opt.submit || opt.save) {
      return Error{std::string("--preview prints the scripts only; it does not go with -j/--submit-job or "
                               "-s/--save-script"),
                   ErrorKind::kUsage};
    }
    return ScriptAction{false, false};
  }
  const bool itwinai_rule = opt.submit || opt.save || c.submit_job.has_value() || c.save_script.has_value();
  if (!itwinai_rule) return ScriptAction{!opt.no_save, !opt.no_submit};
  ScriptAction a;
  a.submit = opt.submit || (!opt.no_submit && c.submit_job.value_or(false));
  a.save = opt.save || (!opt.no_save && c.save_script.value_or(false));
  return a;
}

Status write_script_set(const std::string& script_dir, const std::vector<std::pair<std::string, std::string>>& files) {
  std::string staging = script_dir + "/.scaleprof-staging-XXXXXX";
  if (::mkdtemp(staging.data()) == nullptr) {
    return Error{fmt::format("{}: cannot create a staging folder: {}", script_dir, std::strerror(errno)),
                 ErrorKind::kIo};
  }
  std::vector<std::string> staged;
  auto clean = [&] {
    for (const std::string& f : staged) ::unlink(f.c_str());
    ::rmdir(staging.c_str());
  };
  for (size_t i = 0; i < files.size(); ++i) {
    const std::string path = fmt::format("{}/{}", staging, i);
    if (auto ok = write_output_file(path, files[i].second); !ok) {
      clean();
      return Error{fmt::format("{} (writing {}); nothing was written", ok.error().message, files[i].first),
                   ok.error().kind};
    }
    staged.push_back(path);
  }
  for (size_t i = 0; i < files.size(); ++i) {
    if (::rename(staged[i].c_str(), files[i].first.c_str()) != 0) {
      const std::string why = std::strerror(errno);
      clean();
      return Error{fmt::format("{}: cannot write: {} ({} of {} scripts were written before)", files[i].first, why, i,
                               files.size()),
                   ErrorKind::kIo};
    }
  }
  staged.clear();
  clean();
  return Ok{};
}

Status apply_overrides(const std::vector<std::string>& args, config::Config* config) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.size() < 3 || a.rfind("--", 0) != 0) {
      return Error{fmt::format("unexpected argument '{}' (fields are given as --FIELD VALUE)", a), ErrorKind::kUsage};
    }
    if (const size_t eq = a.find('='); eq != std::string::npos) {
      if (auto ok = config->set_override(a.substr(0, eq), a.substr(eq + 1)); !ok) return ok;
      continue;
    }
    if (i + 1 >= args.size()) return Error{fmt::format("{} needs a value", a), ErrorKind::kUsage};
    if (auto ok = config->set_override(a, args[i + 1]); !ok) return ok;
    ++i;
  }
  return Ok{};
}

// Values are aligned in a column up to this width; a longer line gets its comment two spaces after
// it, so one long value never pads every other line.
constexpr size_t kPrintConfigColumn = 48;

std::string effective_config_text(const config::Config& config) {
  std::string out =
      "# effective configuration of scaleprof slurm; after '#' where each value came from, and for shell code\n"
      "# (training_cmd, pre_exec, env) that the job's shell expands it: $VAR, $(...) and ~ are the job's\n";
  size_t width = 0;
  std::vector<std::string> lines;
  std::vector<std::string> comments;
  for (const config::FieldSpec& f : config.schema()) {
    // itwinai's keys are shown where a file or flag set them: they fill placeholders, or are mapped,
    // warned about or refused when the scripts are made.
    if (f.foreign && !config.is_set(f.name)) continue;
    // Values hold no control characters (the configuration refuses them); the sanitiser is the
    // guarantee for the terminal all the same.
    lines.push_back(terminal_safe(fmt::format("{}: {}", f.name, config::format_value(config.entry(f.name).value))));
    if (lines.back().size() <= kPrintConfigColumn) width = std::max(width, lines.back().size());
    std::string comment = config.entry(f.name).source;
    if (f.name == "training_cmd") {
      comment += "; shell code: each task's shell expands it, {placeholders} filled per job";
    } else if (f.name == "pre_exec") {
      comment += "; shell code: the job's shell runs each line as written";
    } else if (f.name == "env") {
      comment += "; shell code: the job's shell expands each value (NAME=value)";
    } else if (f.foreign) {
      comment += "; itwinai's key";
    }
    comments.push_back(terminal_safe(comment));
  }
  for (size_t i = 0; i < lines.size(); ++i) out += fmt::format("{:<{}}  # {}\n", lines[i], width, comments[i]);
  return out;
}

}  // namespace scaleprof::launch
