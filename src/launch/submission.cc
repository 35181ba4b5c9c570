#include "launch/submission.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <simdjson.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <tuple>

#include "collect/run_names.h"
#include "core/captured_command.h"
#include "core/file_io.h"
#include "core/json_string.h"

namespace scaleprof::launch {

namespace {

int64_t now_unix_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The folder part of an --output/--error pattern, for creating it before the job starts (SLURM
// does not, and a job whose output folder is missing fails without a word). "" when there is none
// or when it contains a pattern SLURM fills in per job.
std::string log_folder(const std::string& pattern) {
  const size_t slash = pattern.rfind('/');
  if (slash == std::string::npos || slash == 0) return {};
  std::string folder = pattern.substr(0, slash);
  if (folder.find('%') != std::string::npos) return {};
  return folder;
}

// At most the first 2,000 bytes of a client's message, without trailing blanks.
std::string message_of(const std::string& text) {
  std::string m = text.substr(0, 2000);
  while (!m.empty() && (m.back() == '\n' || m.back() == ' ')) m.pop_back();
  if (text.size() > 2000) m += "...";
  return m;
}

}  // namespace

// One write() with O_APPEND: a crash loses at most this line, never an earlier one.
Status append_line(const std::string& path, const std::string& line) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0)
    return Error{fmt::format("{}: cannot open for appending: {}", path, std::strerror(errno)), ErrorKind::kIo};
  size_t done = 0;
  while (done < line.size()) {
    const ssize_t w = ::write(fd, line.data() + done, line.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      const std::string why = std::strerror(errno);
      ::close(fd);
      return Error{fmt::format("{}: cannot append: {}", path, why), ErrorKind::kIo};
    }
    done += static_cast<size_t>(w);
  }
  ::close(fd);
  return Ok{};
}

Status submit_script(const std::vector<std::string>& args, const std::string& path, const std::string& text,
                     const std::string& what, const CaptureLimits& limits, std::string* job_id) {
  std::vector<std::string> argv = {"sbatch", "--parsable"};
  argv.insert(argv.end(), args.begin(), args.end());
  if (!path.empty()) argv.push_back(path);
  auto r = run_captured(argv, path.empty() ? text : std::string(), limits);
  if (!r) {
    // Stopped (no answer, endless output): the controller may have queued the job all the same.
    return Error{fmt::format("{} (submitting {}); the job may be queued all the same: check with squeue --me",
                             r.error().message, what),
                 r.error().kind};
  }
  *job_id = parse_job_id(r.value().out);
  if (r.value().exit_code != 0 || job_id->empty()) {
    std::string err = message_of(r.value().err);
    if (err.empty()) err = r.value().out.empty() ? "no output" : message_of(r.value().out);
    return Error{fmt::format("sbatch failed for {} (exit code {}): {}", what, r.value().exit_code, err)};
  }
  return Ok{};
}

std::string submitted_line(const SubmittedJob& j) {
  return fmt::format(
      "{{\"kind\": {}, \"job_id\": {}, \"job_name\": {}, \"script\": {}, \"strategy\": {}, \"nodes\": {}, "
      "\"repetition\": {}, \"experiment\": {}, \"root\": {}, \"run_prefix\": {}, \"submitted_unix_ns\": {}{}{}{}{}}}\n",
      json_quote(j.kind), json_quote(j.job_id), json_quote(j.job_name), json_quote(j.script), json_quote(j.strategy),
      j.nodes, j.repetition, json_quote(j.experiment), json_quote(j.root), json_quote(j.run_prefix),
      j.submitted_unix_ns,
      j.processes_per_node > 0 ? fmt::format(", \"processes_per_node\": {}", j.processes_per_node) : std::string(),
      j.array_tasks > 0 ? fmt::format(", \"array_tasks\": {}", j.array_tasks) : std::string(),
      j.output.empty() ? std::string() : fmt::format(", \"output\": {}", json_quote(j.output)),
      j.superseded ? ", \"superseded\": true" : "");
}

Result<std::vector<SubmittedJob>> read_submitted(const std::string& path, std::vector<std::string>* warnings) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{fmt::format("{}: cannot read: {}", path, std::strerror(errno)), ErrorKind::kIo};
  std::vector<SubmittedJob> jobs;
  simdjson::dom::parser parser;
  int64_t number = 0;
  int64_t rows = 0;      // jobs, an array counting as its tasks: the rows `slurm status` makes
  std::string too_many;  // set once rows passed kMaxSubmittedRows: the file is refused
  auto take = [&](const std::string& line) {
    ++number;
    if (line.empty() || !too_many.empty()) return;
    simdjson::dom::object o;
    if (parser.parse(line).get_object().get(o) != simdjson::SUCCESS) {
      warnings->push_back(fmt::format("{}:{}: not a JSON object; line skipped", path, number));
      return;
    }
    SubmittedJob j;
    auto str = [&o](const char* key) {
      std::string_view v;
      return o[key].get_string().get(v) == simdjson::SUCCESS ? std::string(v) : std::string();
    };
    auto num = [&o](const char* key) {
      int64_t v = 0;
      return o[key].get_int64().get(v) == simdjson::SUCCESS ? v : int64_t{0};
    };
    j.kind = str("kind");
    j.job_id = str("job_id");
    j.job_name = str("job_name");
    j.script = str("script");
    j.strategy = str("strategy");
    j.experiment = str("experiment");
    j.root = str("root");
    j.run_prefix = str("run_prefix");
    j.nodes = num("nodes");
    j.repetition = num("repetition");
    j.processes_per_node = num("processes_per_node");
    j.submitted_unix_ns = num("submitted_unix_ns");
    j.array_tasks = num("array_tasks");
    j.output = str("output");
    // Every count is bounded by what a submission can write: `slurm status` makes a row per array
    // task, and one line with "array_tasks": 10^12 grew it until memory ran out.
    for (const auto& [key, value, most] :
         {std::tuple{"nodes", j.nodes, kMaxRecordedNodes},
          std::tuple{"repetition", j.repetition, kMaxRecordedRepetition},
          std::tuple{"array_tasks", j.array_tasks, kMaxRecordedArrayTasks},
          std::tuple{"submitted_unix_ns", j.submitted_unix_ns, std::numeric_limits<int64_t>::max()}}) {
      if (value < 0 || value > most) {
        warnings->push_back(
            fmt::format("{}:{}: {} {} is outside 0 to {}; line skipped", path, number, key, value, most));
        return;
      }
    }
    bool superseded = false;
    j.superseded = o["superseded"].get_bool().get(superseded) == simdjson::SUCCESS && superseded;
    if (j.job_id.empty() || j.job_id.find_first_not_of("0123456789") != std::string::npos) {
      warnings->push_back(fmt::format("{}:{}: no valid job_id; line skipped", path, number));
      return;
    }
    rows += std::max<int64_t>(1, j.array_tasks);  // at most 2,001 a line: no overflow before the check below
    if (rows > static_cast<int64_t>(kMaxSubmittedRows)) {
      too_many = fmt::format("{}:{}: more than {} jobs and array tasks recorded; not read (move old records away)",
                             path, number, kMaxSubmittedRows);
      return;
    }
    jobs.push_back(std::move(j));
  };
  // Read in blocks, so a line never grows past kMaxSubmittedLine (a record is a few hundred bytes):
  // a longer one is skipped with a warning instead of being held whole.
  std::string line;
  bool too_long = false;
  std::vector<char> block(1 << 16);
  while (in) {
    in.read(block.data(), static_cast<std::streamsize>(block.size()));
    const auto got = static_cast<size_t>(in.gcount());
    for (size_t i = 0; i < got;) {
      const char* start = block.data() + i;
      const auto* newline = static_cast<const char*>(std::memchr(start, '\n', got - i));
      const size_t piece = newline != nullptr ? static_cast<size_t>(newline - start) : got - i;
      const size_t room = kMaxSubmittedLine - std::min(line.size(), kMaxSubmittedLine);
      line.append(start, std::min(piece, room));
      too_long = too_long || piece > room;
      i += piece;
      if (newline == nullptr) break;
      ++i;  // the line break
      if (too_long) {
        ++number;
        warnings->push_back(fmt::format("{}:{}: longer than {} bytes; line skipped", path, number, kMaxSubmittedLine));
      } else {
        take(line);
      }
      line.clear();
      too_long = false;
    }
  }
  if (in.bad()) return Error{fmt::format("{}: read error after line {}", path, number), ErrorKind::kIo};
  if (!too_many.empty()) return Error{too_many, ErrorKind::kTooLarge};
  if (too_long) {
    warnings->push_back(fmt::format("{}:{}: longer than {} bytes; line skipped", path, number + 1, kMaxSubmittedLine));
  } else if (!line.empty()) {
    take(line);  // a last line without its line break (a torn write): parsed like the others
  }
  if (!too_many.empty()) return Error{too_many, ErrorKind::kTooLarge};
  return jobs;
}

std::vector<SubmittedJob> earlier_submission(const std::vector<SubmittedJob>& recorded, const LaunchConfig& c) {
  std::vector<SubmittedJob> out;
  for (const SubmittedJob& j : recorded) {
    if (!j.superseded && j.experiment == c.experiment && j.root == c.root) out.push_back(j);
  }
  return out;
}

int64_t last_repetition(const std::vector<SubmittedJob>& recorded, const LaunchConfig& c) {
  int64_t last = 0;
  for (const SubmittedJob& j : recorded) {
    if (j.kind == "job" && j.experiment == c.experiment && j.root == c.root) last = std::max(last, j.repetition);
  }
  return last;
}

Status supersede(const LaunchConfig& c, const std::vector<SubmittedJob>& earlier, const std::vector<std::string>& kept,
                 std::vector<std::string>* notes) {
  if (earlier.empty()) return Ok{};
  // The report's record first: were the call to stop after it, the old runs are left out of the
  // report, never pooled with the new ones.
  const std::string experiment_dir = c.root + "/" + c.experiment;
  if (auto ok = make_directories(experiment_dir); !ok) return ok.error();
  std::string ids;
  std::vector<std::string> job_ids;
  for (const SubmittedJob& j : earlier) {
    ids += j.job_id + "\n";
    job_ids.push_back(j.job_id);
  }
  const std::string marker = experiment_dir + "/" + std::string(collect::kSupersededJobsFile);
  if (auto ok = append_line(marker, ids); !ok) return ok.error();
  // submitted.jsonl, rewritten whole and atomically with the flag on the earlier jobs.
  const std::string record_path = c.script_dir + "/" + std::string(kSubmittedFile);
  std::vector<std::string> warnings;
  auto recorded = read_submitted(record_path, &warnings);
  if (!recorded) return recorded.error();
  std::string text;
  for (SubmittedJob j : recorded.value()) {
    if (std::find(job_ids.begin(), job_ids.end(), j.job_id) != job_ids.end()) j.superseded = true;
    text += submitted_line(j);
  }
  if (auto ok = replace_file(record_path, text); !ok) return ok.error();
  // Their scripts that the new set does not replace.
  int64_t removed = 0;
  for (const SubmittedJob& j : earlier) {
    if (j.script.empty() || std::find(kept.begin(), kept.end(), j.script) != kept.end()) continue;
    struct stat st {};
    if (::lstat(j.script.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;  // gone, or not ours to remove
    if (::unlink(j.script.c_str()) == 0) ++removed;
  }
  notes->push_back(
      fmt::format("superseded the earlier submission of experiment {}: job(s) {} (recorded in {}; "
                  "the report leaves their runs out; {} script(s) of it removed); they are not "
                  "cancelled: scancel them if they are still queued",
                  c.experiment, fmt::join(job_ids, ", "), marker, removed));
  return Ok{};
}

std::string job_log_path(const std::string& pattern, const std::string& job_name, const std::string& job_id) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%') {
      out += pattern[i];
      continue;
    }
    const char next = i + 1 < pattern.size() ? pattern[i + 1] : '\0';
    if (next == 'j' || next == 'J') {
      out += job_id;
    } else if (next == 'x') {
      out += job_name;
    } else if (next == '%') {
      out += '%';
    } else {
      return {};  // %N, %t, %a, a width ...: not known before the job runs
    }
    ++i;
  }
  if (out.empty()) return {};
  if (out.front() == '/') return out;
  std::error_code ec;
  const std::filesystem::path cwd = std::filesystem::current_path(ec);
  return ec ? out : (cwd / out).string();
}

std::string parse_job_id(const std::string& out) {
  size_t i = 0;
  while (i < out.size() && (out[i] == ' ' || out[i] == '\n')) ++i;
  size_t j = i;
  while (j < out.size() && out[j] >= '0' && out[j] <= '9') ++j;
  if (j == i || (j < out.size() && out[j] != ';' && out[j] != '\n' && out[j] != ' ')) return {};
  return out.substr(i, j - i);
}

Status submit_all(const LaunchConfig& c, const SubmitPlan& plan, std::vector<SubmittedJob>* submitted,
                  const std::function<void(const SubmittedJob&)>& progress) {
  if (auto ok = make_directories(c.script_dir); !ok) return ok.error();
  for (const std::string& pattern : {c.std_out, c.std_err}) {
    if (std::string folder = log_folder(pattern); !folder.empty()) {
      if (auto ok = make_directories(folder); !ok) return ok.error();
    }
  }
  const std::string record_path = c.script_dir + "/" + std::string(kSubmittedFile);
  CaptureLimits limits;
  limits.deadline = std::chrono::seconds(c.slurm_timeout_s);
  std::vector<std::string> ids;
  auto record = [&](SubmittedJob job) -> Status {
    job.experiment = c.experiment;
    job.root = c.root;
    job.submitted_unix_ns = now_unix_ns();
    if (auto ok = append_line(record_path, submitted_line(job)); !ok) return ok.error();
    if (progress) progress(job);
    submitted->push_back(std::move(job));
    return Ok{};
  };
  for (size_t i = 0; i < plan.jobs.size(); ++i) {
    const JobPlan& p = plan.jobs[i];
    std::string id;
    const std::string what = plan.script_paths[i].empty() ? p.script_name : plan.script_paths[i];
    if (auto ok = submit_script({}, plan.script_paths[i], plan.scripts[i], what, limits, &id); !ok) return ok.error();
    ids.push_back(id);
    SubmittedJob job;
    job.job_id = id;
    job.job_name = p.job_name;
    job.script = plan.script_paths[i];
    job.strategy = p.strategy;
    job.nodes = p.nodes;
    job.repetition = p.repetition;
    job.run_prefix = p.run_prefix;
    job.processes_per_node = std::max<int64_t>(1, c.gpus_per_node);  // torchrun's per node, or Horovod's tasks
    if (auto ok = record(std::move(job)); !ok) return ok.error();
    // Where the job's standard error goes, for the report to name beside a run that failed.
    const std::string log = job_log_path(c.std_err, p.job_name, id);
    if (!log.empty() && !c.root.empty() && !c.experiment.empty()) {
      const std::string experiment_dir = c.root + "/" + c.experiment;
      if (auto ok = make_directories(experiment_dir); !ok) return ok.error();
      const std::string logs = experiment_dir + "/" + std::string(collect::kJobLogsFile);
      if (auto ok = append_line(logs, fmt::format("{} {}\n", id, log)); !ok) return ok.error();
    }
  }
  if (c.report && !ids.empty()) {
    std::string dependency = "--dependency=afterany";
    for (const std::string& id : ids) dependency += ":" + id;
    std::string id;
    const std::string what = plan.report_path.empty() ? std::string(kReportScriptName) : plan.report_path;
    if (auto ok = submit_script({dependency}, plan.report_path, plan.report_script, what, limits, &id); !ok)
      return ok.error();
    SubmittedJob job;
    job.kind = "report";
    job.job_id = id;
    job.job_name = c.job_name + "-report";
    job.script = plan.report_path;
    if (auto ok = record(std::move(job)); !ok) return ok.error();
  }
  return Ok{};
}

}  // namespace scaleprof::launch
