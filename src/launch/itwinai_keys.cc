#include "launch/itwinai_keys.h"

#include <fmt/format.h>

#include "launch/shell_text.h"

#include <algorithm>
#include <array>
#include <filesystem>
#include <utility>

namespace scaleprof::launch {

using config::FieldSpec;
using config::Kind;

std::vector<FieldSpec> itwinai_fields() {
  std::vector<FieldSpec> f;
  auto add = [&f](std::string name, Kind kind, config::Value def, std::string help) -> FieldSpec& {
    FieldSpec spec;
    spec.name = std::move(name);
    spec.kind = kind;
    spec.default_value = std::move(def);
    spec.help = std::move(help);
    spec.foreign = true;
    f.push_back(std::move(spec));
    return f.back();
  };
  // itwinai 0.4.2 (SlurmScriptConfiguration, MLSlurmBuilderConfig), at its defaults.
  add("num_tasks_per_node", Kind::kInt, int64_t{1}, "itwinai: #SBATCH --ntasks-per-node");
  add("num_tasks", Kind::kInt, int64_t{0}, "itwinai: #SBATCH --ntasks");
  add("exec_command", Kind::kString, std::string(), "itwinai: the launch line");
  add("exec_file", Kind::kString, std::string(), "itwinai: a file or URL holding the launch line");
  add("pre_exec_file", Kind::kString, std::string(), "itwinai: a file or URL holding pre_exec_command");
  add("use_ray", Kind::kBool, false, "itwinai: launch with Ray");
  add("py_spy", Kind::kBool, false, "itwinai: profile with py-spy");
  add("profiling_sampling_rate", Kind::kInt, int64_t{10}, "itwinai: py-spy's sampling rate");
  add("config_name", Kind::kString, std::string("config"), "itwinai: exec-pipeline --config-name");
  add("config_path", Kind::kString, std::string("."), "itwinai: exec-pipeline --config-path");
  add("pipe_key", Kind::kString, std::string("training_pipeline"), "itwinai: exec-pipeline +pipe_key");
  add("run_name", Kind::kString, std::string("main-run"), "itwinai: exec-pipeline --run-name");
  add("submit_job", Kind::kBool, false, "itwinai: submit the script (-j)");
  add("save_script", Kind::kBool, false, "itwinai: save the script (-s)");
  // itwinai 0.3's names, still in some of its tutorials' configs (0.4.2 itself refuses them).
  add("cpus_per_gpu", Kind::kInt, int64_t{0}, "itwinai 0.3: #SBATCH --cpus-per-gpu");
  add("itwinai_trainer", Kind::kBool, false, "itwinai 0.3: tutorial switch");
  add("config_file", Kind::kString, std::string(), "itwinai 0.3: exec-pipeline --config");
  add("exp_name", Kind::kString, std::string(), "itwinai 0.3: the experiment's name");
  return f;
}

namespace {

// The field `name` names, by its own name or an alias (itwinai's spellings), or nullptr.
const FieldSpec* field_named(const config::Config& c, std::string_view name) {
  for (const FieldSpec& f : c.schema()) {
    if (f.name == name || std::find(f.aliases.begin(), f.aliases.end(), name) != f.aliases.end()) return &f;
  }
  return nullptr;
}

// A scalar value as the text an interpolation or placeholder stands for; nullopt for lists and maps.
std::optional<std::string> scalar_text(const config::Value& v) {
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  if (const auto* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  if (const auto* b = std::get_if<bool>(&v)) return std::string(*b ? "true" : "false");
  return std::nullopt;
}

// The fields that hold one value per job: in training_cmd they become scaleprof's per-job
// placeholders; elsewhere they are one value for every job, right only in single mode.
std::optional<std::string> per_job_placeholder(const std::string& field) {
  if (field == "dist_strategy") return job_placeholder("strategy");
  if (field == "num_nodes") return job_placeholder("num_nodes");
  return std::nullopt;
}

bool is_identifier(std::string_view name) {
  return !name.empty() && (std::isalpha(static_cast<unsigned char>(name[0])) != 0 || name[0] == '_') &&
         std::all_of(name.begin(), name.end(),
                     [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) != 0 || ch == '_'; });
}

// itwinai 0.4.2's training command when the configuration has none (DEFAULT_TRAINING_CMD).
constexpr const char* kItwinaiDefaultTrainingCmd =
    "{itwinai_launcher} exec-pipeline --config-name={config_name} --config-path={config_path} "
    "--strategy={distributed_strategy} --run-name={run_name} +pipe_key={pipe_key}";

// The keys of itwinai's that only matter through a placeholder of training_cmd.
constexpr std::array<const char*, 4> kCommandKeys = {"config_name", "config_path", "pipe_key", "config_file"};

class Resolver {
 public:
  Resolver(const config::Config& c, std::string cwd) : in_(c), out_(c), cwd_(std::move(cwd)) {}

  Result<ItwinaiResolution> run(bool training) {
    check_keys();
    if (training) default_training_cmd();
    interpolate_all(training);
    if (training) check_training_cmd();
    if (!problems_.empty()) {
      if (problems_.size() == 1) return Error{problems_.front()};
      std::string message = fmt::format("{} things to change in the configuration:", problems_.size());
      for (const std::string& p : problems_) message += "\n  - " + p;
      return Error{message};
    }
    ItwinaiResolution r{out_, std::nullopt, std::nullopt, warnings_, notes_};
    if (in_.is_set("submit_job")) r.submit_job = in_.boolean("submit_job");
    if (in_.is_set("save_script")) r.save_script = in_.boolean("save_script");
    return r;
  }

 private:
  std::string src(const std::string& name) const { return in_.entry(name).source; }
  void problem(std::string text) { problems_.push_back(std::move(text)); }
  void warning(std::string text) { warnings_.push_back(std::move(text)); }
  bool any_itwinai_key() const {
    return std::any_of(in_.schema().begin(), in_.schema().end(),
                       [&](const FieldSpec& f) { return f.foreign && in_.is_set(f.name); });
  }
  std::string venv_itwinai() const {
    const std::string venv = in_.str("python_venv");
    if (venv.empty()) return "itwinai";
    std::filesystem::path p(venv);
    if (p.is_relative()) p = std::filesystem::path(cwd_) / p;
    return (p.lexically_normal() / "bin" / "itwinai").string();
  }

  void check_keys() {
    auto set = [&](const char* name) { return in_.is_set(name); };
    if (set("num_tasks_per_node") && in_.integer("num_tasks_per_node") != 1) {
      const int64_t n = in_.integer("num_tasks_per_node");
      problem(
          fmt::format("{}: itwinai's 'num_tasks_per_node: {}': scaleprof starts one task per node that runs "
                      "torchrun with gpus_per_node processes (horovod: gpus_per_node tasks per node); write "
                      "'gpus_per_node: {}' for {} processes per node and remove num_tasks_per_node",
                      src("num_tasks_per_node"), n, n, n));
    }
    if (set("num_tasks")) {
      problem(
          fmt::format("{}: itwinai's 'num_tasks: {}' (sbatch --ntasks): scaleprof gives each job its tasks "
                      "from num_nodes and gpus_per_node; remove num_tasks",
                      src("num_tasks"), in_.integer("num_tasks")));
    }
    for (const char* name : {"exec_command", "exec_file"}) {
      if (set(name) && !in_.str(name).empty()) {
        problem(
            fmt::format("{}: itwinai's '{}' replaces the launch line, which scaleprof writes itself (srun and "
                        "torchrun or Horovod, under scaleprof run); write what each rank runs as 'training_cmd: "
                        "...' and remove {}",
                        src(name), name, name));
      }
    }
    if (set("pre_exec_file") && !in_.str("pre_exec_file").empty()) {
      const std::string& file = in_.str("pre_exec_file");
      const bool url = file.rfind("http://", 0) == 0 || file.rfind("https://", 0) == 0;
      problem(fmt::format(
          "{}: itwinai's 'pre_exec_file: {}' (itwinai copies the file's text into the script{}); write "
          "'pre_exec: [\"source {}\"]' (the job sources it when it starts; the compute nodes must see it) and "
          "remove pre_exec_file",
          src("pre_exec_file"), file, url ? ", downloading it; scaleprof reads no URLs: download it first" : "",
          url ? "FILE" : file));
    }
    if (set("use_ray") && in_.boolean("use_ray")) {
      problem(
          fmt::format("{}: itwinai's 'use_ray: true': scaleprof launches torchrun or Horovod, not Ray; remove "
                      "use_ray",
                      src("use_ray")));
    }
    if (set("py_spy") && in_.boolean("py_spy")) {
      problem(
          fmt::format("{}: itwinai's 'py_spy: true': scaleprof does not run py-spy; remove py_spy (for a "
                      "profile write 'profiler: true', torch.profiler traces, or 'nsys: true')",
                      src("py_spy")));
    }
    if (set("cpus_per_gpu")) {
      const int64_t n = in_.integer("cpus_per_gpu"), gpus = std::max<int64_t>(1, in_.integer("gpus_per_node"));
      problem(
          fmt::format("{}: 'cpus_per_gpu: {}' is itwinai 0.3's (0.4.2 reads cpus_per_task): scaleprof's ddp, "
                      "fsdp and deepspeed jobs run one task per node, so write 'cpus_per_task: {}' ({} x "
                      "gpus_per_node {}); horovod runs one task per GPU: 'cpus_per_task: {}'",
                      src("cpus_per_gpu"), n, n * gpus, n, gpus, n));
    }
    // Keys that change nothing here: a warning each, and the scripts are made.
    if (set("profiling_sampling_rate")) {
      warning(
          fmt::format("{}: itwinai's 'profiling_sampling_rate' (py-spy's sampling rate) has no effect: "
                      "scaleprof does not run py-spy",
                      src("profiling_sampling_rate")));
    }
    if (set("exp_name")) {
      warning(
          fmt::format("{}: 'exp_name' is itwinai 0.3's and has no effect (0.4.2 no longer reads it); the runs "
                      "are recorded under 'experiment: {}'",
                      src("exp_name"), in_.str("experiment")));
    }
    if (set("itwinai_trainer")) {
      warning(
          fmt::format("{}: 'itwinai_trainer' is itwinai 0.3's tutorial switch and has no effect (0.4.2 no "
                      "longer reads it)",
                      src("itwinai_trainer")));
    }
  }

  // itwinai's DEFAULT_TRAINING_CMD for an itwinai configuration without training_cmd.
  void default_training_cmd() {
    if (!out_.str("training_cmd").empty() || !any_itwinai_key()) return;
    out_.set("training_cmd", std::string(kItwinaiDefaultTrainingCmd), "itwinai's default training_cmd");
    notes_.push_back(fmt::format("training_cmd is not set: itwinai's default, \"{}\"", kItwinaiDefaultTrainingCmd));
  }

  // OmegaConf's ${key} in every string value (itwinai's loader fills them from the same file), and in
  // training_cmd itwinai's str.format placeholders {key}. In shell code a ${NAME} that is not a key
  // of the configuration is the shell's: left for the job's shell to expand.
  void interpolate_all(bool training) {
    const bool single = in_.str("mode") == "single";
    for (const FieldSpec& f : in_.schema()) {
      if (f.foreign || (f.name == "training_cmd" && !training)) continue;
      const config::Value& v = out_.entry(f.name).value;
      if (const auto* s = std::get_if<std::string>(&v)) {
        std::optional<std::string> filled = interpolate(f.name, *s, single);
        if (filled && *filled != *s) out_.set(f.name, *filled, out_.entry(f.name).source);
      } else if (const auto* list = std::get_if<std::vector<std::string>>(&v)) {
        std::vector<std::string> filled = *list;
        for (std::string& e : filled) e = interpolate(f.name, e, single).value_or(e);
        if (filled != *list) out_.set(f.name, filled, src(f.name));
      } else if (const auto* map = std::get_if<config::StringMap>(&v)) {
        config::StringMap filled = *map;
        for (auto& kv : filled) kv.second = interpolate(f.name, kv.second, single).value_or(kv.second);
        if (filled != *map) out_.set(f.name, filled, src(f.name));
      }
    }
  }

  // The value `text` of `field` with its interpolations (and in training_cmd its placeholders)
  // filled; nullopt after a problem was named, or when a per-job value reset the field to its default.
  std::optional<std::string> interpolate(const std::string& field, const std::string& text, bool single) {
    const bool shell = is_shell_code_field(field);
    const bool command = field == "training_cmd";
    if (!command && text.find("${") == std::string::npos) return text;
    const std::string where = fmt::format("{} ({})", field, out_.entry(field).source);
    size_t problems_before = problems_.size();
    bool reset = false;
    auto find = [&](std::string_view t, size_t from) -> std::optional<Placeholder> {
      while (from < t.size()) {
        const size_t at = t.find_first_of(command ? "{}$" : "$", from);
        if (at == std::string_view::npos) return std::nullopt;
        const char c = t[at];
        if (c == '}') {  // str.format's "}}" is one literal brace
          if (at + 1 < t.size() && t[at + 1] == '}') return Placeholder{at, 2, "}", false};
          from = at + 1;
          continue;
        }
        if (c == '{' && at + 1 < t.size() && t[at + 1] == '{') return Placeholder{at, 2, "{", false};
        if (c == '$' && (at + 1 >= t.size() || t[at + 1] != '{')) {
          from = at + 1;
          continue;
        }
        const size_t open = c == '$' ? at + 1 : at;
        const size_t end = t.find('}', open);
        if (end == std::string_view::npos) return std::nullopt;
        const std::string inner(t.substr(open + 1, end - open - 1));
        const std::string whole(t.substr(at, end - at + 1));
        std::optional<Placeholder> p =
            c == '$' ? interpolation(field, inner, whole, single, shell, &reset) : placeholder(inner, whole);
        if (p) {
          p->at = at;
          p->length = end - at + 1;
          return p;
        }
        from = c == '$' ? end + 1 : open + 1;
      }
      return std::nullopt;
    };
    if (!shell) {
      // Data: the values are written in as they are (the field's own checks follow).
      std::string out;
      size_t from = 0;
      for (std::optional<Placeholder> p = find(text, 0); p; p = find(text, from)) {
        out.append(text, from, p->at - from);
        out += p->value;
        from = p->at + p->length;
      }
      out.append(text, from, std::string::npos);
      if (reset) {
        out_.set(field, default_of(field), fmt::format("default (itwinai resets {} per job)", field));
        return std::nullopt;
      }
      return problems_.size() == problems_before ? std::optional<std::string>(out) : std::nullopt;
    }
    auto filled = fill_shell_placeholders(text, find);
    if (!filled) {
      problem(fmt::format("{}: {}", where, filled.error().message));
      return std::nullopt;
    }
    if (problems_.size() != problems_before) return std::nullopt;
    return filled.value();
  }

  config::Value default_of(const std::string& field) const {
    for (const FieldSpec& f : in_.schema()) {
      if (f.name == field) return f.default_value;
    }
    return std::string();
  }

  // ${inner} in `field`: a key's value, itwinai's cwd, a per-job value, or (shell code, not a key)
  // the shell's own ${NAME}: nullopt, left as written.
  std::optional<Placeholder> interpolation(const std::string& field, const std::string& inner, const std::string& whole,
                                           bool single, bool shell, bool* reset) {
    if (inner == "itwinai.cwd:") return Placeholder{0, 0, cwd_, true};
    if (inner.rfind("oc.env:", 0) == 0 && is_identifier(inner.substr(7))) {
      // OmegaConf's environment resolver: the job's shell has the environment sbatch copied from the
      // submitting shell.
      if (shell) return Placeholder{0, 0, "${" + inner.substr(7) + "}", false};
      problem(fmt::format("{}: {}: '{}' reads the environment of the submitting shell; write the value itself",
                          src(field), field, whole));
      return std::nullopt;
    }
    const FieldSpec* named = is_identifier(inner) ? field_named(in_, inner) : nullptr;
    if (named == nullptr) {
      if (shell) return std::nullopt;  // the shell's ${NAME}
      problem(
          fmt::format("{}: {}: '{}' is an OmegaConf interpolation of a key this configuration does not have "
                      "(and SLURM does not expand shell variables in {}): write the value itself",
                      src(field), field, whole, field));
      return std::nullopt;
    }
    const std::optional<std::string> per_job = per_job_placeholder(named->name);
    if (per_job && field == "training_cmd") return Placeholder{0, 0, *per_job, false};
    if (per_job && !single) {
      if (field == "std_out" || field == "std_err" || field == "job_name") {
        if (*reset) return Placeholder{0, 0, whole, false};  // named once per field
        *reset = true;
        const std::string def = scalar_text(default_of(field)).value_or("");
        warning(fmt::format(
            "{}: {}: '{}' differs per job in mode {}; as itwinai does for runall and scaling-test, every job "
            "gets the default {} instead{}",
            src(field), field, whole, in_.str("mode"), def,
            field == "job_name" ? " (and -<strategy>-n<nodes>-r<repetition> after it)"
                                : " (%x: the job's name, which holds strategy, nodes and repetition)"));
        return Placeholder{0, 0, whole, false};
      }
      problem(fmt::format(
          "{}: {}: '{}' is this file's {} ({}), the same for every job of mode {}; write the value "
          "itself",
          src(field), field, whole, named->name, *scalar_text(in_.entry(named->name).value), in_.str("mode")));
      return std::nullopt;
    }
    const std::optional<std::string> value = scalar_text(out_.entry(named->name).value);
    if (!value) {
      problem(fmt::format("{}: {}: '{}' names a list; write the value itself", src(field), field, whole));
      return std::nullopt;
    }
    return Placeholder{0, 0, *value, true};
  }

  // {name} in training_cmd (itwinai fills it with str.format over every field of its configuration).
  std::optional<Placeholder> placeholder(const std::string& name, const std::string& whole) {
    if (!is_identifier(name)) return std::nullopt;  // a brace of the shell's: {a,b}, {} of find -exec
    static const std::vector<std::string> kOwn = {"strategy",   "num_nodes", "gpus_per_node", "repetition",
                                                  "experiment", "run_name",  "job_name"};
    if (std::find(kOwn.begin(), kOwn.end(), name) != kOwn.end()) return Placeholder{0, 0, job_placeholder(name), false};
    if (name == "distributed_strategy" || name == "dist_strat")
      return Placeholder{0, 0, job_placeholder("strategy"), false};
    if (name == "itwinai_launcher") return Placeholder{0, 0, venv_itwinai(), true};
    const FieldSpec* named = field_named(in_, name);
    if (named != nullptr) {
      if (const std::optional<std::string> v = scalar_text(out_.entry(named->name).value)) {
        return Placeholder{0, 0, *v, true};
      }
    }
    problem(fmt::format(
        "{}: training_cmd: {} is not a placeholder scaleprof fills (a key of the configuration, "
        "{{strategy}}, {{num_nodes}}, {{gpus_per_node}}, {{repetition}}, {{experiment}}, {{run_name}}, "
        "{{job_name}}, {{itwinai_launcher}}); write its value instead, or {{{{ and }}}} for a literal brace",
        src("training_cmd"), whole));
    return std::nullopt;
  }

  // What the launch line would not survive, and the itwinai keys that have no effect without a
  // placeholder of theirs in training_cmd.
  void check_training_cmd() {
    const std::string& cmd = out_.str("training_cmd");
    if (cmd.empty()) {
      problem(
          std::string("training_cmd is not set: give the command each rank runs, e.g. training_cmd: python "
                      "train.py --epochs 5 (in a -c file or --training_cmd)"));
      return;
    }
    if (auto sep = command_separator_in(cmd)) {
      problem(fmt::format(
          "training_cmd ({}): '{}' at character {} would end the command the launcher starts (torchrun or srun "
          "run training_cmd as one program with its arguments); put the commands in a script and run that, or "
          "the ones that prepare the job in pre_exec",
          src("training_cmd"), sep->first, sep->second));
    }
    // As written (out_'s has its placeholders filled by now), or itwinai's default.
    const std::string written =
        in_.str("training_cmd").empty() ? std::string(kItwinaiDefaultTrainingCmd) : in_.str("training_cmd");
    for (const char* key : kCommandKeys) {
      if (!in_.is_set(key)) continue;
      const bool used = written.find(fmt::format("{{{}}}", key)) != std::string::npos ||
                        written.find(fmt::format("${{{}}}", key)) != std::string::npos;
      if (!used) {
        warning(fmt::format("{}: itwinai's '{}' has no effect: training_cmd has no {{{}}} placeholder", src(key), key,
                            key));
      }
    }
    if (in_.is_set("run_name")) {
      warning(
          fmt::format("{}: itwinai's 'run_name: {}' has no effect: scaleprof names each run "
                      "<strategy>-n<nodes>-r<repetition>-slurm<job id>, and {{run_name}} in training_cmd "
                      "stands for <strategy>-n<nodes>-r<repetition>; to name the whole set write 'experiment: NAME'",
                      src("run_name"), in_.str("run_name")));
    }
  }

  const config::Config& in_;
  config::Config out_;
  std::string cwd_;
  std::vector<std::string> problems_;
  std::vector<std::string> warnings_;
  std::vector<std::string> notes_;
};

}  // namespace

std::string job_placeholder(std::string_view name) {
  return "\x01" + std::string(name) + "\x02";
}

Result<ItwinaiResolution> resolve_itwinai(const config::Config& config, const std::string& cwd, bool training) {
  return Resolver(config, cwd).run(training);
}

}  // namespace scaleprof::launch
