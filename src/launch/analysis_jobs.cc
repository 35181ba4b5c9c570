#include "launch/analysis_jobs.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

#include "config/config.h"
#include "core/file_io.h"
#include "core/terminal_text.h"
#include "launch/slurm_script.h"
#include "launch/write_refusal.h"

namespace scaleprof::launch {

namespace {

constexpr std::string_view kShardsFolder = "shards";
constexpr std::string_view kLogsFolder = "logs";

bool is_analysis(std::string_view name) {
  return name == "collectives" || name == "stragglers";
}

std::string extension_of(const std::string& format) {
  return format == "table" ? "txt" : format;
}

// The config of one of the two jobs: logs in OUT/logs/ (%A_%a: array job and task; %j: the job).
LaunchConfig job_config(const LaunchConfig& c, const AnalysisPlan& plan, bool array) {
  LaunchConfig j = c;
  const std::string logs = plan.output_dir + "/" + std::string(kLogsFolder) + "/%x-" + (array ? "%A_%a" : "%j");
  j.std_out = logs + ".out";
  j.std_err = logs + ".err";
  return j;
}

void resources(std::string& s, const LaunchConfig& c) {
  s += "#SBATCH --nodes=1\n#SBATCH --ntasks=1\n";
  if (c.cpus_per_task > 0) s += fmt::format("#SBATCH --cpus-per-task={}\n", c.cpus_per_task);
  if (!c.mem.empty()) s += fmt::format("#SBATCH --mem={}\n", sbatch_value(c.mem));
  if (!c.constraint.empty()) s += fmt::format("#SBATCH --constraint={}\n", sbatch_value(c.constraint));
}

std::string gpus_option(const AnalysisPlan& plan) {
  return plan.gpus_per_node > 0 ? fmt::format(" --gpus-per-node={}", plan.gpus_per_node) : std::string();
}

std::string words(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& w : items) out += (out.empty() ? "" : " ") + shell_quote(w);
  return out;
}

int64_t now_unix_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

std::vector<AnalysisShard> plan_shards(const std::vector<ShardInput>& ranks, int64_t per_task) {
  std::vector<AnalysisShard> shards;
  const size_t step = static_cast<size_t>(std::max<int64_t>(1, per_task));
  for (size_t first = 0; first < ranks.size(); first += step) {
    const size_t end = std::min(ranks.size(), first + step);
    AnalysisShard shard;
    const bool consecutive = ranks[end - 1].rank - ranks[first].rank == static_cast<int64_t>(end - first - 1);
    if (end - first == 1) {
      shard.ranks = std::to_string(ranks[first].rank);
    } else if (consecutive) {
      shard.ranks = fmt::format("{}-{}", ranks[first].rank, ranks[end - 1].rank);
    }
    for (size_t i = first; i < end; ++i) {
      if (!consecutive && end - first > 1) shard.ranks += (i == first ? "" : ",") + std::to_string(ranks[i].rank);
      shard.paths.insert(shard.paths.end(), ranks[i].files.begin(), ranks[i].files.end());
    }
    shards.push_back(std::move(shard));
  }
  return shards;
}

Status check_analysis_plan(const AnalysisPlan& plan) {
  if (plan.analyses.empty()) return Error{std::string("--analysis: name at least one analysis"), ErrorKind::kUsage};
  for (const std::string& a : plan.analyses) {
    if (!is_analysis(a)) {
      return Error{fmt::format("--analysis: '{}' cannot be split into shards; choose collectives or stragglers "
                               "(the reports made from the collective rows alone, docs/scale.md)",
                               a),
                   ErrorKind::kUsage};
    }
    if (std::count(plan.analyses.begin(), plan.analyses.end(), a) > 1) {
      return Error{fmt::format("--analysis: '{}' is named twice", a), ErrorKind::kUsage};
    }
  }
  if (plan.format != "table" && plan.format != "csv" && plan.format != "json") {
    return Error{fmt::format("--format must be table, csv or json (got '{}')", plan.format), ErrorKind::kUsage};
  }
  if (plan.shards.empty()) return Error{std::string("no rank to analyse"), ErrorKind::kUsage};
  if (static_cast<int64_t>(plan.shards.size()) > kMaxShards) {
    return Error{fmt::format("{} ranks in shards of this size make {} array tasks; at most {}: give a larger "
                             "--ranks-per-task",
                             plan.rank_count, plan.shards.size(), kMaxShards),
                 ErrorKind::kTooLarge};
  }
  const std::string& out = plan.output_dir;
  if (out.empty() || out.front() != '/') {
    return Error{fmt::format("the output folder '{}' is not an absolute path", out), ErrorKind::kUsage};
  }
  // It reaches #SBATCH --output (sbatch's own parser: no '"' or '\'; '%' is a SLURM pattern there).
  if (out.find_first_of("\"\\%") != std::string::npos) {
    return Error{fmt::format("the output folder {} holds '\"', '\\' or '%', which an #SBATCH line cannot carry", out),
                 ErrorKind::kUsage};
  }
  // Paths are quoted in commands, but the input is also named in a comment line: no line breaks or
  // other characters that would make the script read differently from what it runs.
  std::vector<std::string> paths = {out, plan.input};
  paths.insert(paths.end(), plan.common_paths.begin(), plan.common_paths.end());
  for (const AnalysisShard& shard : plan.shards) paths.insert(paths.end(), shard.paths.begin(), shard.paths.end());
  for (const std::string& path : paths) {
    if (std::string problem = config::control_character_problem(path); !problem.empty()) {
      return Error{fmt::format("the path '{}': {}", terminal_safe(path), problem), ErrorKind::kUsage};
    }
  }
  return Ok{};
}

std::string shard_file(const AnalysisPlan& plan, const std::string& analysis, const std::string& task) {
  return fmt::format("{}/{}/{}-{}.json", plan.output_dir, kShardsFolder, analysis, task);
}

std::string result_file(const AnalysisPlan& plan, const std::string& analysis) {
  return fmt::format("{}/{}.{}", plan.output_dir, analysis, extension_of(plan.format));
}

std::string render_shard_script(const LaunchConfig& config, const AnalysisPlan& plan) {
  const LaunchConfig c = job_config(config, plan, true);
  const size_t tasks = plan.shards.size();
  std::string s;
  sbatch_header(s, c, c.job_name + "-analyze");
  s += fmt::format("#SBATCH --array=0-{}\n", tasks - 1);
  resources(s, c);
  s += fmt::format(
      "\n# scaleprof slurm analyze: {} of {} rank(s) of {}, in {} array task(s) of at most {} rank(s);\n"
      "# task i writes {}; merge.sh, which waits for every task to succeed, makes the result.\n",
      fmt::join(plan.analyses, " and "), plan.rank_count, plan.input, tasks, plan.ranks_per_task,
      shard_file(plan, "<analysis>", "i"));
  job_environment(s, c);
  s += "\n# This task's ranks";
  if (!plan.common_paths.empty()) {
    s += fmt::format(" (every task lists {} and reads only the files of its ranks)\npaths=({})\n",
                     fmt::join(plan.common_paths, " "), words(plan.common_paths));
  } else {
    s += " and their trace files\n";
  }
  s += "case \"$SLURM_ARRAY_TASK_ID\" in\n";
  for (size_t i = 0; i < tasks; ++i) {
    const AnalysisShard& shard = plan.shards[i];
    s += fmt::format("  {}) ranks={}", i, shell_quote(shard.ranks));
    if (plan.common_paths.empty()) s += fmt::format("; paths=({})", words(shard.paths));
    s += " ;;\n";
  }
  s += fmt::format(
      "  *) echo \"scaleprof slurm analyze: no task $SLURM_ARRAY_TASK_ID in this array (0-{})\" >&2; exit 2 ;;\n"
      "esac\n",
      tasks - 1);
  s += "echo \"scaleprof slurm analyze: task $SLURM_ARRAY_TASK_ID of array job $SLURM_ARRAY_JOB_ID on "
       "${SLURMD_NODENAME:-$(hostname -s)}, ranks $ranks, cpus per task ${SLURM_CPUS_PER_TASK:-not set}\"\n";
  const std::string threads = c.cpus_per_task > 0 ? fmt::format(" --threads={}", c.cpus_per_task) : std::string();
  s += "\n# A failing shard fails its task (exit 3: some trace unreadable), so the merge never runs on a part.\n";
  for (const std::string& a : plan.analyses) {
    const std::string shard = shard_file(plan, a, "@");
    const size_t at = shard.find('@');
    s += fmt::format("{} trace {} \"${{paths[@]}}\" --ranks=\"$ranks\"{}{} --partial={}\"$SLURM_ARRAY_TASK_ID\"{}\n",
                     shell_quote(c.scaleprof_bin), a, threads, gpus_option(plan), shell_quote(shard.substr(0, at)),
                     shell_quote(shard.substr(at + 1)));
  }
  return s;
}

std::string render_merge_script(const LaunchConfig& config, const AnalysisPlan& plan) {
  const LaunchConfig c = job_config(config, plan, false);
  const size_t tasks = plan.shards.size();
  std::string s;
  sbatch_header(s, c, c.job_name + "-analyze-merge");
  resources(s, c);
  s += fmt::format(
      "\n# scaleprof slurm analyze: merges the {} shard(s) of shards.sh (submitted with --dependency=afterok\n"
      "# on its array) into the output of one run over all {} rank(s).\n",
      tasks, plan.rank_count);
  job_environment(s, c);
  s += "\necho \"scaleprof slurm analyze: merge job $SLURM_JOB_ID on ${SLURMD_NODENAME:-$(hostname -s)}\"\n";
  for (const std::string& a : plan.analyses) {
    const std::string shard = shard_file(plan, a, "@");
    const size_t at = shard.find('@');
    s += fmt::format("\n# {}: every task's shard, by task number\nshards=()\n", a);
    s += fmt::format("for task in $(seq 0 {}); do shards+=({}\"$task\"{}); done\n", tasks - 1,
                     shell_quote(shard.substr(0, at)), shell_quote(shard.substr(at + 1)));
    s += fmt::format("{} trace merge \"${{shards[@]}}\" --format={}{} --output={}\n", shell_quote(c.scaleprof_bin),
                     plan.format, gpus_option(plan), shell_quote(result_file(plan, a)));
  }
  return s;
}

Status prepare_output_dir(const AnalysisPlan& plan, bool force, std::vector<std::string>* notes) {
  const std::string& out = plan.output_dir;
  const std::string record = out + "/" + std::string(kSubmittedFile);
  std::vector<std::string> ours = {out + "/" + std::string(kShardScriptName), out + "/" + std::string(kMergeScriptName),
                                   record};
  for (const std::string& a : {std::string("collectives"), std::string("stragglers")}) {
    for (const char* ext : {"txt", "csv", "json"}) ours.push_back(fmt::format("{}/{}.{}", out, a, ext));
  }
  // Shards of an earlier analysis: every regular file of shards/ named <analysis>-<n>.json.
  const std::string shards_dir = out + "/" + std::string(kShardsFolder);
  std::error_code ec;
  if (std::filesystem::is_directory(shards_dir, ec)) {
    for (const auto& entry : std::filesystem::directory_iterator(shards_dir, ec)) {
      const std::string name = entry.path().filename().string();
      if ((name.starts_with("collectives-") || name.starts_with("stragglers-")) && name.ends_with(".json")) {
        ours.push_back(entry.path().string());
      }
    }
  }
  for (const std::string& path : ours) {
    // Exit code 1, as `scaleprof slurm` refuses an existing script.
    const std::string earlier = fmt::format(": an earlier analysis went to {}; --force replaces it",
                                            std::filesystem::path(path).parent_path().string());
    if (std::string why = write_refusal(path, force, earlier); !why.empty()) return Error{why, ErrorKind::kRefused};
  }
  if (!force) return Ok{};
  // Earlier records: marked superseded, so `slurm status` tells them from the new jobs.
  struct stat st {};
  if (::lstat(record.c_str(), &st) == 0) {
    std::vector<std::string> warnings;
    auto recorded = read_submitted(record, &warnings);
    if (!recorded) return recorded.error();
    std::string text, ids;
    for (SubmittedJob j : recorded.value()) {
      if (!j.superseded) ids += (ids.empty() ? "" : ", ") + j.job_id;
      j.superseded = true;
      text += submitted_line(j);
    }
    if (auto ok = replace_file(record, text); !ok) return ok.error();
    if (!ids.empty()) {
      notes->push_back(
          fmt::format("superseded the earlier analysis in {}: job(s) {}; they are not cancelled: "
                      "scancel them if they are still queued or running (they write into the same folder)",
                      out, ids));
    }
  }
  int64_t removed = 0;
  for (const std::string& path : ours) {
    if (path == record || path.ends_with(".sh")) continue;  // the record is kept, the scripts replaced
    if (::unlink(path.c_str()) == 0) ++removed;
  }
  if (removed > 0)
    notes->push_back(fmt::format("removed {} shard and result file(s) of the earlier analysis", removed));
  return Ok{};
}

Status make_analysis_folders(const AnalysisPlan& plan) {
  for (std::string_view sub : {kLogsFolder, kShardsFolder}) {
    if (auto ok = make_directories(plan.output_dir + "/" + std::string(sub)); !ok) return ok.error();
  }
  return Ok{};
}

Status submit_analysis(const LaunchConfig& c, const AnalysisPlan& plan, const std::string& shard_path,
                       const std::string& shard_script, const std::string& merge_path, const std::string& merge_script,
                       std::vector<SubmittedJob>* submitted, const std::function<void(const SubmittedJob&)>& progress) {
  if (auto ok = make_analysis_folders(plan); !ok) return ok;
  const std::string record_path = plan.output_dir + "/" + std::string(kSubmittedFile);
  CaptureLimits limits;
  limits.deadline = std::chrono::seconds(c.slurm_timeout_s);
  auto record = [&](SubmittedJob job) -> Status {
    job.submitted_unix_ns = now_unix_ns();
    if (auto ok = append_line(record_path, submitted_line(job)); !ok) return ok.error();
    if (progress) progress(job);
    submitted->push_back(std::move(job));
    return Ok{};
  };
  std::string array_id;
  const std::string shard_what = shard_path.empty() ? std::string(kShardScriptName) : shard_path;
  if (auto ok = submit_script({}, shard_path, shard_script, shard_what, limits, &array_id); !ok) return ok.error();
  SubmittedJob shards;
  shards.kind = std::string(kShardsKind);
  shards.job_id = array_id;
  shards.job_name = c.job_name + "-analyze";
  shards.script = shard_path;
  shards.array_tasks = static_cast<int64_t>(plan.shards.size());
  shards.output = shard_file(plan, plan.analyses.back(), "%a");
  if (auto ok = record(std::move(shards)); !ok) return ok.error();
  std::string merge_id;
  const std::string merge_what = merge_path.empty() ? std::string(kMergeScriptName) : merge_path;
  if (auto ok =
          submit_script({"--dependency=afterok:" + array_id}, merge_path, merge_script, merge_what, limits, &merge_id);
      !ok) {
    return ok.error();
  }
  SubmittedJob merge;
  merge.kind = std::string(kMergeKind);
  merge.job_id = merge_id;
  merge.job_name = c.job_name + "-analyze-merge";
  merge.script = merge_path;
  merge.output = result_file(plan, plan.analyses.back());
  return record(std::move(merge));
}

std::vector<SubmittedJob> expand_array_tasks(const std::vector<SubmittedJob>& recorded) {
  std::vector<SubmittedJob> out;
  for (const SubmittedJob& j : recorded) {
    if (j.array_tasks <= 0) {
      out.push_back(j);
      continue;
    }
    for (int64_t task = 0; task < j.array_tasks; ++task) {
      SubmittedJob t = j;
      t.array_tasks = 0;
      t.job_id = fmt::format("{}_{}", j.job_id, task);
      if (j.kind == kShardsKind) t.kind = std::string(kShardKind);
      if (const size_t at = t.output.find("%a"); at != std::string::npos) {
        t.output.replace(at, 2, std::to_string(task));
      }
      out.push_back(std::move(t));
    }
  }
  return out;
}

void outcome_from_output(JobStatus* st) {
  if (st->job.output.empty()) return;
  st->run = std::filesystem::path(st->job.output).filename().string();
  struct stat info {};
  const bool written = ::stat(st->job.output.c_str(), &info) == 0 && S_ISREG(info.st_mode);
  st->run_status = written ? "written" : "";
  // A superseded job's file may be the new job's: it says nothing about the old one.
  if (written && st->state == "unknown" && !st->job.superseded) {
    st->state = "completed";
    st->source = "output file";
  }
}

}  // namespace scaleprof::launch
