#include "launch/job_status.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <sstream>

#include "core/captured_command.h"
#include "core/number_text.h"
#include "core/output_file.h"
#include "core/time_bounds.h"
#include "importers/run_reader.h"
#include "launch/analysis_jobs.h"
#include "launch/job_state_memory.h"

namespace scaleprof::launch {

namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(s);
  while (std::getline(in, part, sep)) parts.push_back(part);
  if (!s.empty() && s.back() == sep) parts.emplace_back();
  return parts;
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\r')) s.pop_back();
  size_t i = 0;
  while (i < s.size() && s[i] == ' ') ++i;
  return s.substr(i);
}

// The first line of a client's message, at most 300 bytes of it: a note, not a flood.
std::string first_line(const std::string& s) {
  std::string line = trim(s.substr(0, std::min(s.find('\n'), size_t{300})));
  if (s.find('\n') > 300 && s.size() > 300) line += "...";
  return line;
}

// `s` when it is a number, else "".
std::string digits_only(const std::string& s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos ? s : std::string();
}

}  // namespace

std::optional<int64_t> parse_slurm_duration(const std::string& text) {
  std::string t = trim(text);
  int64_t days = 0;
  bool has_days = false;
  auto digits = [](const std::string& d) {
    return !d.empty() && d.size() <= 6 && d.find_first_not_of("0123456789") == std::string::npos;
  };
  if (const size_t dash = t.find('-'); dash != std::string::npos) {
    const std::string d = t.substr(0, dash);
    if (!digits(d)) return std::nullopt;
    days = parse_int64(d).value_or(0);  // at most 6 digits: always a number
    has_days = true;
    t = t.substr(dash + 1);
  }
  const std::vector<std::string> parts = split(t, ':');
  if (parts.empty() || parts.size() > 3) return std::nullopt;
  std::vector<int64_t> values;
  for (const std::string& p : parts) {
    if (!digits(p)) return std::nullopt;
    values.push_back(parse_int64(p).value_or(0));  // at most 6 digits
  }
  // Every field after the first is minutes or seconds; after days, the first is hours.
  for (size_t i = 1; i < values.size(); ++i) {
    if (values[i] >= 60) return std::nullopt;
  }
  if (has_days && values[0] >= 24) return std::nullopt;
  int64_t seconds = 0;
  if (has_days) {  // D-HH, D-HH:MM, D-HH:MM:SS
    const int64_t hms[3] = {3600, 60, 1};
    for (size_t i = 0; i < values.size(); ++i) seconds += values[i] * hms[i];
  } else if (values.size() == 3) {  // HH:MM:SS
    seconds = values[0] * 3600 + values[1] * 60 + values[2];
  } else if (values.size() == 2) {  // MM:SS (squeue's M:SS)
    seconds = values[0] * 60 + values[1];
  } else {  // a lone number is minutes
    seconds = values[0] * 60;
  }
  return days * 86400 + seconds;
}

std::optional<int64_t> parse_slurm_exit_code(const std::string& text) {
  const std::string t = trim(text);
  const size_t colon = t.find(':');
  if (colon == std::string::npos) return std::nullopt;
  auto small = [](const std::string& d) {
    return !d.empty() && d.size() <= 3 && d.find_first_not_of("0123456789") == std::string::npos;
  };
  const std::string code = t.substr(0, colon);
  const std::string signal = t.substr(colon + 1);
  if (!small(code) || !small(signal)) return std::nullopt;
  const int64_t signal_number = parse_int64(signal).value_or(0);  // at most 3 digits
  return signal_number != 0 ? 128 + signal_number : parse_int64(code).value_or(0);
}

std::string report_outcome(const std::string& state, const std::optional<int64_t>& exit_code) {
  if (state == "pending") return "waits for the scaling jobs";
  if (state == "running" || state == "suspended") return "writing the report";
  if (state == "cancelled") return "no report: the job was cancelled";
  if (state != "completed" && state != "failed") return "";
  if (!exit_code) return state == "completed" ? "report written" : "no report: the job failed (see its log)";
  switch (*exit_code) {
    case 0:
      return "report written";
    case 3:
      return "report written, partial (exit 3): a configuration failed or some data was rejected";
    case 4:
      return "tables written, plots failed (exit 4)";
    default:
      return fmt::format("no report (exit {}): see the job's log", *exit_code);
  }
}

std::string state_class(const std::string& s) {
  // SLURM may append a reason (sacct: "CANCELLED by 0") or a '+' (sacct's truncation mark).
  std::string w = s.substr(0, s.find(' '));
  while (!w.empty() && w.back() == '+') w.pop_back();
  static const std::map<std::string, std::string, std::less<>> kClasses = {
      // Base states (long names, then squeue's short codes).
      {"PENDING", "pending"},
      {"PD", "pending"},
      {"RUNNING", "running"},
      {"R", "running"},
      {"SUSPENDED", "suspended"},
      {"S", "suspended"},
      {"COMPLETED", "completed"},
      {"CD", "completed"},
      {"CANCELLED", "cancelled"},
      {"CA", "cancelled"},
      {"FAILED", "failed"},
      {"F", "failed"},
      {"TIMEOUT", "failed"},
      {"TO", "failed"},
      {"NODE_FAIL", "failed"},
      {"NF", "failed"},
      {"PREEMPTED", "failed"},
      {"PR", "failed"},
      {"BOOT_FAIL", "failed"},
      {"BF", "failed"},
      {"DEADLINE", "failed"},
      {"DL", "failed"},
      {"OUT_OF_MEMORY", "failed"},
      {"OOM", "failed"},
      // State flags, shown instead of the base state when set.
      {"COMPLETING", "running"},
      {"CG", "running"},
      {"CONFIGURING", "running"},
      {"CF", "running"},
      {"POWER_UP_NODE", "running"},
      {"PU", "running"},  // not in squeue's short list; harmless
      {"STAGE_OUT", "running"},
      {"SO", "running"},
      {"SIGNALING", "running"},
      {"SI", "running"},
      {"RESIZING", "running"},
      {"RS", "running"},
      {"STOPPED", "suspended"},
      {"ST", "suspended"},
      {"REQUEUED", "pending"},
      {"RQ", "pending"},
      {"REQUEUE_HOLD", "pending"},
      {"RH", "pending"},
      {"REQUEUE_FED", "pending"},
      {"RF", "pending"},
      {"RESV_DEL_HOLD", "pending"},
      {"RD", "pending"},
      {"SPECIAL_EXIT", "pending"},
      {"SE", "pending"},
      {"EXPEDITING", "pending"},
      {"LAUNCH_FAILED", "failed"},
      {"RECONFIG_FAIL", "failed"},
      {"REVOKED", "cancelled"},
      {"RV", "cancelled"},
      {"UPDATE_DB", "unknown"},
  };
  const auto it = kClasses.find(w);
  return it == kClasses.end() ? "unknown" : it->second;
}

std::optional<int64_t> elapsed_between(std::optional<int64_t> start_unix_ns, std::optional<int64_t> end_unix_ns) {
  if (!start_unix_ns || !end_unix_ns) return std::nullopt;
  // Both bounded, their difference cannot overflow.
  if (!time_in_bounds(*start_unix_ns) || !time_in_bounds(*end_unix_ns) || *end_unix_ns < *start_unix_ns) {
    return std::nullopt;
  }
  return (*end_unix_ns - *start_unix_ns) / 1'000'000'000;
}

std::map<std::string, SlurmJobInfo> parse_squeue(const std::string& out) {
  std::map<std::string, SlurmJobInfo> jobs;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    const std::vector<std::string> f = split(trim(line), '|');
    if (f.size() < 3 || f[0].empty()) continue;
    SlurmJobInfo info{trim(f[1]), parse_slurm_duration(f[2]), "squeue", std::nullopt};
    // "%M" counts M:SS as minutes:seconds; parse_slurm_duration reads a lone pair that way too.
    jobs[trim(f[0])] = info;
  }
  return jobs;
}

std::optional<SlurmJobInfo> parse_scontrol_job(const std::string& out) {
  SlurmJobInfo info;
  info.source = "scontrol";
  std::istringstream in(out);
  std::string word;
  while (in >> word) {
    if (word.rfind("JobState=", 0) == 0) info.state = word.substr(9);
    if (word.rfind("RunTime=", 0) == 0) info.elapsed_s = parse_slurm_duration(word.substr(8));
    if (word.rfind("ExitCode=", 0) == 0) info.exit_code = parse_slurm_exit_code(word.substr(9));
  }
  if (info.state.empty()) return std::nullopt;
  return info;
}

std::map<std::string, SlurmJobInfo> parse_scontrol_jobs(const std::string& out) {
  std::map<std::string, SlurmJobInfo> jobs;
  std::istringstream in(out);
  std::string word, id, array_job, array_task;
  SlurmJobInfo info;
  auto flush = [&] {
    if (!id.empty() && !info.state.empty()) jobs[id] = info;
    // An array task is known by <array job>_<task> too, the id `slurm status` asks about.
    if (!array_job.empty() && !array_task.empty() && !info.state.empty()) jobs[array_job + "_" + array_task] = info;
    id.clear();
    array_job.clear();
    array_task.clear();
    info = SlurmJobInfo{};
    info.source = "scontrol";
  };
  flush();
  while (in >> word) {
    if (word.rfind("JobId=", 0) == 0) {
      flush();
      id = word.substr(6);
      if (id.empty() || id.find_first_not_of("0123456789") != std::string::npos) id.clear();
    } else if (word.rfind("JobState=", 0) == 0) {
      info.state = word.substr(9);
    } else if (word.rfind("RunTime=", 0) == 0) {
      info.elapsed_s = parse_slurm_duration(word.substr(8));
    } else if (word.rfind("ArrayJobId=", 0) == 0) {
      array_job = digits_only(word.substr(11));
    } else if (word.rfind("ArrayTaskId=", 0) == 0) {
      // One task's number only: the pending rest of an array ("ArrayTaskId=5-15") names no one task.
      array_task = digits_only(word.substr(12));
    } else if (word.rfind("ExitCode=", 0) == 0) {
      info.exit_code = parse_slurm_exit_code(word.substr(9));
    }
  }
  flush();
  return jobs;
}

std::map<std::string, SlurmJobInfo> parse_sacct(const std::string& out) {
  std::map<std::string, SlurmJobInfo> jobs;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    const std::vector<std::string> f = split(trim(line), '|');
    if (f.size() < 3 || f[0].empty() || f[0].find('.') != std::string::npos) continue;
    jobs[f[0]] = SlurmJobInfo{trim(f[1]), parse_slurm_duration(f[2]), "sacct",
                              f.size() > 3 ? parse_slurm_exit_code(f[3]) : std::nullopt};
  }
  return jobs;
}

std::vector<JobStatus> job_statuses(const std::vector<SubmittedJob>& recorded, std::vector<std::string>* notes,
                                    const StatusQuery& query) {
  // A job array (slurm analyze's shards) is asked about, and shown, task by task.
  const std::vector<SubmittedJob> jobs = expand_array_tasks(recorded);
  std::vector<JobStatus> out;
  if (jobs.empty()) return out;
  // What a client said when it failed: its error, else the first line of what it printed.
  auto failure = [](const Result<Captured>& r) -> std::string {
    if (!r) return r.error().message;
    const std::string why = first_line(r.value().err.empty() ? r.value().out : r.value().err);
    return why.empty() ? fmt::format("exit code {}", r.value().exit_code) : why;
  };
  auto missing_ids = [&jobs](const std::map<std::string, SlurmJobInfo>& known) {
    std::vector<std::string> missing;
    std::set<std::string> seen;
    for (const SubmittedJob& j : jobs) {
      if (known.count(j.job_id) == 0 && seen.insert(j.job_id).second) missing.push_back(j.job_id);
    }
    return missing;
  };

  std::map<std::string, SlurmJobInfo> known;
  const auto q =
      run_captured({"squeue", "--noheader", "--array", "--states=all", "--format=%i|%T|%M"}, {}, query.limits);
  const bool controller_answered = q && q.value().exit_code == 0;
  if (controller_answered) {
    known = parse_squeue(q.value().out);
  } else {
    notes->push_back(fmt::format("squeue: {}", failure(q)));
  }
  // Jobs squeue did not list: the controller may still have them (scontrol; asked once, for every
  // job, and only when squeue reached the controller: both talk to it), accounting may (sacct).
  if (controller_answered && !missing_ids(known).empty()) {
    const auto s = run_captured({"scontrol", "--oneliner", "show", "job"}, {}, query.limits);
    if (s && s.value().exit_code == 0) {
      for (auto& [id, info] : parse_scontrol_jobs(s.value().out)) known.emplace(id, info);
    }
  }
  const std::vector<std::string> missing = missing_ids(known);
  const size_t batch = std::max<size_t>(1, query.sacct_batch);
  for (size_t first = 0; first < missing.size(); first += batch) {
    std::string ids;
    for (size_t i = first; i < std::min(missing.size(), first + batch); ++i) {
      ids += (ids.empty() ? "" : ",") + missing[i];
    }
    const auto a =
        run_captured({"sacct", "--noheader", "--parsable2", "--format=JobID,State,Elapsed,ExitCode", "--jobs=" + ids},
                     {}, query.limits);
    if (!a || a.value().exit_code != 0) {
      notes->push_back(fmt::format("sacct: {}", failure(a)));
      break;  // accounting is off or unreachable: the next batch would say the same
    }
    if (a.value().out.empty()) {
      const std::string why = first_line(a.value().err);
      notes->push_back(fmt::format("sacct: {}", why.empty() ? "no records" : why));
      break;
    }
    for (auto& [id, info] : parse_sacct(a.value().out)) known.emplace(id, info);
  }

  // What SLURM said of jobs that ended is remembered; what it no longer says is taken from there.
  std::map<std::string, RememberedState> remembered;
  bool remember_more = false;
  if (!query.state_file.empty()) {
    auto read = read_job_states(query.state_file);
    if (read) {
      remembered = std::move(read).value();
    } else {
      notes->push_back(read.error().message);
    }
  }
  for (const SubmittedJob& j : jobs) {
    const auto it = known.find(j.job_id);
    if (it == known.end()) continue;
    const std::string cls = state_class(it->second.state);
    if (cls != "completed" && cls != "failed" && cls != "cancelled") continue;
    const std::string word = it->second.state.substr(0, it->second.state.find(' '));
    RememberedState now{word, it->second.elapsed_s, it->second.exit_code};
    auto [at, fresh] = remembered.try_emplace(j.job_id, now);
    if (!fresh && (at->second.slurm_state != now.slurm_state || at->second.elapsed_s != now.elapsed_s ||
                   at->second.exit_code != now.exit_code)) {
      at->second = now;
      fresh = true;
    }
    remember_more |= fresh;
  }
  if (remember_more && !query.state_file.empty()) {
    if (Status ok = write_output_file(query.state_file, job_states_text(remembered)); !ok) {
      notes->push_back(fmt::format("the states of jobs that ended could not be remembered: {}", ok.error().message));
    }
  }

  // Run directories: <root>/<experiment>/<run_prefix>-slurm<job id>.
  std::map<std::pair<std::string, std::string>, std::vector<importers::RunData>> runs_by_place;
  for (const SubmittedJob& j : jobs) {
    JobStatus st;
    st.job = j;
    if (auto it = known.find(j.job_id); it != known.end()) {
      st.slurm_state = it->second.state;
      st.state = state_class(it->second.state);
      st.elapsed_s = it->second.elapsed_s;
      st.source = it->second.source;
      st.exit_code = it->second.exit_code;
    } else if (auto r = remembered.find(j.job_id); r != remembered.end()) {
      // SLURM forgot the job; it had ended, and how is what it said then.
      st.slurm_state = r->second.slurm_state;
      st.state = state_class(r->second.slurm_state);
      st.elapsed_s = r->second.elapsed_s;
      st.exit_code = r->second.exit_code;
      st.source = std::string(kJobStatesFile);
    } else {
      st.state = "unknown";
    }
    if (j.kind == kShardKind || j.kind == kMergeKind) outcome_from_output(&st);
    if (j.kind == "report") st.outcome = report_outcome(st.state, st.exit_code);
    if (j.kind == "job" && !j.root.empty()) {
      auto key = std::make_pair(j.root, j.experiment);
      if (runs_by_place.count(key) == 0) {
        importers::ReadOptions read;
        read.read_steps = false;
        read.read_gpu = false;
        auto runs = importers::read_runs(j.root, j.experiment, read);
        runs_by_place[key] = runs ? std::move(runs).value() : std::vector<importers::RunData>{};
      }
      const std::string name = j.run_prefix + "-slurm" + j.job_id;
      for (const importers::RunData& r : runs_by_place[key]) {
        if (r.run != name) continue;
        st.run = r.run;
        st.run_status = r.status;
        if (st.state == "unknown" && (r.status == "completed" || r.status == "failed")) {
          st.state = r.status;
          st.source = "run directory";
          if (r.info) st.elapsed_s = elapsed_between(r.info->start_unix_ns, r.info->end_unix_ns);
        }
      }
    }
    out.push_back(std::move(st));
  }
  return out;
}

}  // namespace scaleprof::launch
