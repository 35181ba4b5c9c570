#include "launch/job_status.h"

#include <fmt/format.h>

#include <set>
#include <sstream>

#include "collect/run_reader.h"
#include "launch/captured_command.h"

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

std::string first_line(const std::string& s) {
  return trim(s.substr(0, s.find('\n')));
}

}  // namespace

std::optional<int64_t> parse_slurm_duration(const std::string& text) {
  std::string t = trim(text);
  int64_t days = 0;
  if (const size_t dash = t.find('-'); dash != std::string::npos) {
    const std::string d = t.substr(0, dash);
    if (d.empty() || d.find_first_not_of("0123456789") != std::string::npos || d.size() > 6) return std::nullopt;
    days = std::stoll(d);
    t = t.substr(dash + 1);
  }
  const std::vector<std::string> parts = split(t, ':');
  if (parts.empty() || parts.size() > 3) return std::nullopt;
  int64_t total = 0;
  for (const std::string& p : parts) {
    if (p.empty() || p.size() > 6 || p.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
    total = total * 60 + std::stoll(p);
  }
  if (parts.size() == 1) total *= 60;  // a lone number is minutes in SLURM's formats... except M:SS
  return days * 86400 + total;
}

std::string state_class(const std::string& s) {
  // SLURM may append a reason (e.g. "CANCELLED by 0"); the first word decides.
  const std::string w = s.substr(0, s.find(' '));
  if (w == "PENDING" || w == "REQUEUED" || w == "REQUEUE_HOLD" || w == "RESV_DEL_HOLD" || w == "SUSPENDED") {
    return "pending";
  }
  if (w == "RUNNING" || w == "CONFIGURING" || w == "COMPLETING" || w == "STAGE_OUT" || w == "SIGNALING" ||
      w == "RESIZING") {
    return "running";
  }
  if (w == "COMPLETED") return "completed";
  if (w.empty()) return "unknown";
  return "failed";  // FAILED, TIMEOUT, CANCELLED, NODE_FAIL, OUT_OF_MEMORY, PREEMPTED, BOOT_FAIL, DEADLINE
}

std::map<std::string, SlurmJobInfo> parse_squeue(const std::string& out) {
  std::map<std::string, SlurmJobInfo> jobs;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    const std::vector<std::string> f = split(trim(line), '|');
    if (f.size() < 3 || f[0].empty()) continue;
    SlurmJobInfo info{trim(f[1]), parse_slurm_duration(f[2]), "squeue"};
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
  }
  if (info.state.empty()) return std::nullopt;
  return info;
}

std::map<std::string, SlurmJobInfo> parse_sacct(const std::string& out) {
  std::map<std::string, SlurmJobInfo> jobs;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    const std::vector<std::string> f = split(trim(line), '|');
    if (f.size() < 3 || f[0].empty() || f[0].find('.') != std::string::npos) continue;
    jobs[f[0]] = SlurmJobInfo{trim(f[1]), parse_slurm_duration(f[2]), "sacct"};
  }
  return jobs;
}

std::vector<JobStatus> job_statuses(const std::vector<SubmittedJob>& jobs, std::vector<std::string>* notes) {
  std::vector<JobStatus> out;
  if (jobs.empty()) return out;
  std::string ids;
  for (const SubmittedJob& j : jobs) ids += (ids.empty() ? "" : ",") + j.job_id;

  std::map<std::string, SlurmJobInfo> known;
  if (auto q = run_captured({"squeue", "--noheader", "--states=all", "--format=%i|%T|%M"}); !q) {
    notes->push_back(fmt::format("squeue: {}", q.error().message));
  } else if (q.value().exit_code != 0) {
    notes->push_back(fmt::format("squeue: {}", first_line(q.value().err)));
  } else {
    known = parse_squeue(q.value().out);
  }
  // Jobs squeue did not list: the controller may still have them (scontrol), accounting may (sacct).
  std::vector<std::string> missing;
  for (const SubmittedJob& j : jobs) {
    if (known.count(j.job_id) == 0) missing.push_back(j.job_id);
  }
  for (const std::string& id : missing) {
    auto s = run_captured({"scontrol", "show", "job", id});
    if (s && s.value().exit_code == 0) {
      if (auto info = parse_scontrol_job(s.value().out)) known[id] = *info;
    }
  }
  bool need_sacct = false;
  for (const std::string& id : missing) need_sacct = need_sacct || known.count(id) == 0;
  if (need_sacct) {
    auto a = run_captured({"sacct", "--noheader", "--parsable2", "--format=JobID,State,Elapsed", "--jobs=" + ids});
    if (!a) {
      notes->push_back(fmt::format("sacct: {}", a.error().message));
    } else if (a.value().exit_code != 0 || a.value().out.empty()) {
      const std::string why = first_line(a.value().err.empty() ? a.value().out : a.value().err);
      notes->push_back(fmt::format("sacct: {}", why.empty() ? "no records" : why));
    } else {
      for (auto& [id, info] : parse_sacct(a.value().out)) known.emplace(id, info);
    }
  }

  // Run directories: <root>/<experiment>/<run_prefix>-slurm<job id>.
  std::map<std::pair<std::string, std::string>, std::vector<collect::RunData>> runs_by_place;
  for (const SubmittedJob& j : jobs) {
    JobStatus st;
    st.job = j;
    if (auto it = known.find(j.job_id); it != known.end()) {
      st.slurm_state = it->second.state;
      st.state = state_class(it->second.state);
      st.elapsed_s = it->second.elapsed_s;
      st.source = it->second.source;
    } else {
      st.state = "unknown";
    }
    if (j.kind == "job" && !j.root.empty()) {
      auto key = std::make_pair(j.root, j.experiment);
      if (runs_by_place.count(key) == 0) {
        collect::ReadOptions read;
        read.read_steps = false;
        read.read_gpu = false;
        auto runs = collect::read_runs(j.root, j.experiment, read);
        runs_by_place[key] = runs ? std::move(runs).value() : std::vector<collect::RunData>{};
      }
      const std::string name = j.run_prefix + "-slurm" + j.job_id;
      for (const collect::RunData& r : runs_by_place[key]) {
        if (r.run != name) continue;
        st.run = r.run;
        st.run_status = r.status;
        if (st.state == "unknown" && (r.status == "completed" || r.status == "failed")) {
          st.state = r.status;
          st.source = "run directory";
          if (r.info && r.info->start_unix_ns && r.info->end_unix_ns) {
            st.elapsed_s = (*r.info->end_unix_ns - *r.info->start_unix_ns) / 1'000'000'000;
          }
        }
      }
    }
    out.push_back(std::move(st));
  }
  return out;
}

}  // namespace scaleprof::launch
