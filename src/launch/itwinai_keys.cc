#include "launch/itwinai_keys.h"

#include <fmt/format.h>

#include <algorithm>
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

std::string shell_expansion_in(std::string_view s) {
  bool in_double = false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '\\') {
      ++i;  // the next character is literal (in double quotes too, for the ones that matter here)
      continue;
    }
    if (c == '\'' && !in_double) {
      const size_t end = s.find('\'', i + 1);
      if (end == std::string_view::npos) return {};
      i = end;
      continue;
    }
    if (c == '"') {
      in_double = !in_double;
      continue;
    }
    if (c == '`') {
      const size_t end = s.find('`', i + 1);
      return std::string(s.substr(i, end == std::string_view::npos ? std::string_view::npos : end - i + 1));
    }
    if (c != '$' || i + 1 >= s.size()) continue;
    const char n = s[i + 1];
    if (n == '(' || n == '{') {
      // To the matching bracket (nested ones counted), or the end.
      const char open = n, close = n == '(' ? ')' : '}';
      int depth = 0;
      size_t j = i + 1;
      for (; j < s.size(); ++j) {
        if (s[j] == open) ++depth;
        if (s[j] == close && --depth == 0) break;
      }
      return std::string(s.substr(i, j < s.size() ? j - i + 1 : std::string_view::npos));
    }
    if (std::isalpha(static_cast<unsigned char>(n)) != 0 || n == '_') {
      size_t j = i + 1;
      while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) != 0 || s[j] == '_')) ++j;
      return std::string(s.substr(i, j - i));
    }
  }
  return {};
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
  if (field == "dist_strategy") return "{strategy}";
  if (field == "num_nodes") return "{num_nodes}";
  return std::nullopt;
}

class Resolver {
 public:
  Resolver(const config::Config& c, std::string cwd) : in_(c), out_(c), cwd_(std::move(cwd)) {}

  Result<ItwinaiResolution> run(bool training) {
    check_keys();
    interpolate_all();
    if (training) fill_training_placeholders();
    check_expansions();
    if (!problems_.empty()) {
      if (problems_.size() == 1) return Error{problems_.front()};
      std::string message = fmt::format("{} things to change in the configuration:", problems_.size());
      for (const std::string& p : problems_) message += "\n  - " + p;
      return Error{message};
    }
    ItwinaiResolution r{out_, std::nullopt, std::nullopt};
    if (in_.is_set("submit_job")) r.submit_job = in_.boolean("submit_job");
    if (in_.is_set("save_script")) r.save_script = in_.boolean("save_script");
    return r;
  }

 private:
  std::string src(const std::string& name) const { return in_.entry(name).source; }
  void problem(std::string text) { problems_.push_back(std::move(text)); }
  // A problem of a field's interpolation: its text still holds "${...}", named once already.
  void interpolation_problem(const std::string& field, std::string text) {
    flagged_.push_back(field);
    problem(std::move(text));
  }
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
    const std::vector<std::pair<const char*, const char*>> command_parts = {{"config_name", "--config-name={}"},
                                                                            {"config_path", "--config-path={}"},
                                                                            {"pipe_key", "+pipe_key={}"},
                                                                            {"config_file", "--config {}"}};
    for (const auto& [name, form] : command_parts) {
      if (!set(name)) continue;
      problem(
          fmt::format("{}: itwinai's '{}: {}' is part of its training command; scaleprof has only "
                      "training_cmd: write '{}' there and remove {}",
                      src(name), name, in_.str(name), fmt::format(fmt::runtime(form), in_.str(name)), name));
    }
    if (set("run_name")) {
      problem(
          fmt::format("{}: itwinai's 'run_name: {}': scaleprof names each run <strategy>-n<nodes>-r<repetition>-"
                      "slurm<job id> itself; to name the whole set of runs write 'experiment: {}' and remove "
                      "run_name",
                      src("run_name"), in_.str("run_name"), in_.str("run_name")));
    }
    if (set("exp_name")) {
      problem(
          fmt::format("{}: 'exp_name' is itwinai 0.3's (0.4.2 no longer reads it); write 'experiment: {}' and "
                      "remove exp_name",
                      src("exp_name"), in_.str("exp_name")));
    }
    if (set("itwinai_trainer")) {
      problem(fmt::format("{}: 'itwinai_trainer' is itwinai 0.3's (0.4.2 no longer reads it); remove it",
                          src("itwinai_trainer")));
    }
    if (set("cpus_per_gpu")) {
      const int64_t n = in_.integer("cpus_per_gpu"), gpus = std::max<int64_t>(1, in_.integer("gpus_per_node"));
      problem(
          fmt::format("{}: 'cpus_per_gpu: {}' is itwinai 0.3's (0.4.2 reads cpus_per_task): scaleprof's ddp, "
                      "fsdp and deepspeed jobs run one task per node, so write 'cpus_per_task: {}' ({} x "
                      "gpus_per_node {}); horovod runs one task per GPU: 'cpus_per_task: {}'",
                      src("cpus_per_gpu"), n, n * gpus, n, gpus, n));
    }
  }

  // OmegaConf's ${key} in every string value: itwinai's loader fills them from the same file.
  void interpolate_all() {
    const bool single = in_.str("mode") == "single";
    for (const FieldSpec& f : in_.schema()) {
      if (f.foreign) continue;
      const config::Value& v = in_.entry(f.name).value;
      if (const auto* s = std::get_if<std::string>(&v)) {
        std::string filled = interpolate(f.name, *s, single);
        if (filled != *s) out_.set(f.name, filled, src(f.name));
      } else if (const auto* list = std::get_if<std::vector<std::string>>(&v)) {
        std::vector<std::string> filled = *list;
        for (std::string& e : filled) e = interpolate(f.name, e, single);
        if (filled != *list) out_.set(f.name, filled, src(f.name));
      } else if (const auto* map = std::get_if<config::StringMap>(&v)) {
        config::StringMap filled = *map;
        for (auto& kv : filled) kv.second = interpolate(f.name, kv.second, single);
        if (filled != *map) out_.set(f.name, filled, src(f.name));
      }
    }
  }

  std::string interpolate(const std::string& field, const std::string& text, bool single) {
    std::string out;
    size_t from = 0;
    for (size_t at = text.find("${"); at != std::string::npos; at = text.find("${", from)) {
      const size_t end = text.find('}', at);
      if (end == std::string::npos) break;
      out.append(text, from, at - from);
      from = end + 1;
      const std::string inner = text.substr(at + 2, end - at - 2);
      const std::string whole = text.substr(at, end - at + 1);
      if (inner == "itwinai.cwd:") {
        out += cwd_;
        continue;
      }
      const FieldSpec* named = field_named(in_, inner);
      if (named == nullptr) {
        interpolation_problem(
            field, fmt::format("{}: {}: '{}' is an OmegaConf interpolation of a key this configuration does not have "
                               "(and the scripts never expand shell variables): write the value itself",
                               src(field), field, whole));
        out += whole;
        continue;
      }
      const std::optional<std::string> per_job = per_job_placeholder(named->name);
      if (per_job && field == "training_cmd") {
        out += *per_job;  // the same as the file's value in single mode, each job's own otherwise
        continue;
      }
      if (per_job && !single) {
        interpolation_problem(
            field, fmt::format("{}: {}: '{}' is this file's {} ({}), the same for every job of mode {}; {}", src(field),
                               field, whole, named->name, *scalar_text(in_.entry(named->name).value), in_.str("mode"),
                               field == "job_name" ? "scaleprof appends -<strategy>-n<nodes>-r<repetition> to job_name "
                                                     "itself: leave it out"
                                                   : "in std_out and std_err write %x (the job name, which holds "
                                                     "strategy, nodes and repetition) instead"));
        out += whole;
        continue;
      }
      const std::optional<std::string> value = scalar_text(in_.entry(named->name).value);
      if (!value) {
        interpolation_problem(
            field, fmt::format("{}: {}: '{}' names a list; write the value itself", src(field), field, whole));
        out += whole;
        continue;
      }
      out += *value;
    }
    out.append(text, from, std::string::npos);
    return out;
  }

  // itwinai fills training_cmd with str.format over every field of its configuration.
  void fill_training_placeholders() {
    const std::string text = out_.str("training_cmd");
    if (text.empty()) {
      std::string message =
          "training_cmd is not set: give the command each rank runs, e.g. training_cmd: python train.py --epochs 5 "
          "(in a -c file or --training_cmd)";
      if (any_itwinai_key()) {
        message += fmt::format(
            "; itwinai's default, with this configuration's values, would be: training_cmd: \"{} exec-pipeline "
            "--config-name={} --config-path={} --strategy={{strategy}} --run-name={{strategy}}-n{{num_nodes}}-"
            "r{{repetition}} +pipe_key={}\"",
            venv_itwinai(), in_.str("config_name"), in_.str("config_path"), in_.str("pipe_key"));
      }
      problem(message);
      return;
    }
    std::string filled, suggested;
    bool unfilled = false;
    size_t from = 0;
    for (size_t at = text.find('{'); at != std::string::npos; at = text.find('{', from)) {
      const size_t end = text.find('}', at);
      if (end == std::string::npos) break;
      const std::string name = text.substr(at + 1, end - at - 1);
      const bool identifier =
          !name.empty() && (std::isalpha(static_cast<unsigned char>(name[0])) != 0 || name[0] == '_') &&
          std::all_of(name.begin(), name.end(),
                      [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) != 0 || ch == '_'; });
      // "{{" is str.format's literal brace; "${" an interpolation named already.
      const bool escaped = at > 0 && (text[at - 1] == '{' || text[at - 1] == '$');
      filled.append(text, from, at - from);
      suggested.append(text, from, at - from);
      from = end + 1;
      const std::string whole = text.substr(at, end - at + 1);
      if (!identifier || escaped) {
        filled += whole;
        suggested += whole;
        continue;
      }
      std::optional<std::string> value = placeholder(name);
      if (value) {
        filled += *value;
        suggested += *value;
        continue;
      }
      const FieldSpec* named = field_named(in_, name);
      if (named != nullptr && named->foreign && (named->kind == Kind::kString || named->kind == Kind::kInt)) {
        const std::string v = *scalar_text(in_.entry(named->name).value);
        problem(
            fmt::format("{}: training_cmd: itwinai's placeholder {} ({}'s value: {}) has no scaleprof field; "
                        "write the value in its place",
                        src("training_cmd"), whole, named->name, v));
        suggested += v;
      } else {
        problem(
            fmt::format("{}: training_cmd: {} is not a placeholder scaleprof fills ({{strategy}}, {{num_nodes}}, "
                        "{{gpus_per_node}}, {{repetition}}, {{experiment}} and itwinai's "
                        "{{distributed_strategy}}, {{run_name}}, {{job_name}}, {{itwinai_launcher}}, "
                        "{{python_venv}}); write its value instead",
                        src("training_cmd"), whole));
        suggested += whole;
      }
      filled += whole;
      unfilled = true;
    }
    filled.append(text, from, std::string::npos);
    suggested.append(text, from, std::string::npos);
    if (unfilled && suggested != text) {
      problem(fmt::format("training_cmd with itwinai's values written in: \"{}\"", suggested));
    }
    if (filled != text) out_.set("training_cmd", filled, src("training_cmd"));
  }

  // The text a placeholder of training_cmd stands for, or nullopt when scaleprof has no value.
  std::optional<std::string> placeholder(const std::string& name) const {
    static const std::vector<std::string> kOwn = {"strategy", "num_nodes", "gpus_per_node", "repetition", "experiment"};
    if (std::find(kOwn.begin(), kOwn.end(), name) != kOwn.end()) return "{" + name + "}";  // filled per job
    if (name == "distributed_strategy" || name == "dist_strat") return "{strategy}";
    // itwinai's run name in a scaling test holds strategy and size; scaleprof's is this, then -slurm<job id>.
    if (name == "run_name") return "{strategy}-n{num_nodes}-r{repetition}";
    if (name == "job_name") return in_.str("job_name") + "-{strategy}-n{num_nodes}-r{repetition}";
    if (name == "itwinai_launcher") return venv_itwinai();
    const FieldSpec* named = field_named(in_, name);
    if (named == nullptr || named->foreign) return std::nullopt;
    if (named->name == "python_venv" && in_.str("python_venv").empty()) return std::nullopt;
    return scalar_text(out_.entry(named->name).value);
  }

  // What a shell would expand reaches the program literally: the scripts quote every word.
  void check_expansions() {
    auto check = [&](const std::string& field, const std::string& command) {
      if (std::find(flagged_.begin(), flagged_.end(), field) != flagged_.end()) return;
      const std::string found = shell_expansion_in(command);
      if (found.empty()) return;
      std::string advice = "write the value itself, or put the command in a file and 'source FILE' in pre_exec";
      if (found.rfind("$(which ", 0) == 0 && found.back() == ')') {
        const std::string program = found.substr(8, found.size() - 9);
        advice =
            fmt::format("write '{}' (found on the job's PATH{})", program,
                        program == "itwinai" && !in_.str("python_venv").empty() ? fmt::format(", or {}", venv_itwinai())
                                                                                : std::string());
      }
      problem(
          fmt::format("{}: {}: '{}' would reach the command as that literal text (every word of the script is "
                      "quoted and no shell expands it); {}",
                      src(field), field, found, advice));
    };
    if (!out_.str("training_cmd").empty()) check("training_cmd", out_.str("training_cmd"));
    for (const std::string& line : out_.string_list("pre_exec")) check("pre_exec", line);
  }

  const config::Config& in_;
  config::Config out_;
  std::string cwd_;
  std::vector<std::string> problems_;
  std::vector<std::string> flagged_;
};

}  // namespace

Result<ItwinaiResolution> resolve_itwinai(const config::Config& config, const std::string& cwd, bool training) {
  return Resolver(config, cwd).run(training);
}

}  // namespace scaleprof::launch
