// The SLURM clients under faults (issue 18): fake squeue / scontrol / sacct / sbatch, written by the
// tests into a temporary folder put first on PATH, that hang, leave a grandchild holding their
// output, print without end, or answer for thousands of jobs; and every job state SLURM documents.
// Nothing here measures time: deadlines are short so that a hang ends, and only messages and
// states are asserted.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "collect/run_records.h"
#include "core/captured_command.h"
#include "launch/job_status.h"
#include "launch/launch_config.h"
#include "launch/submission.h"

namespace scaleprof::launch {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

// A temporary folder with fake clients, first on PATH while the object lives.
class FakeClients {
 public:
  FakeClients() : dir_(fs::temp_directory_path() / ("scaleprof-fake-slurm-" + std::to_string(::getpid()))) {
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "bin");
    const char* path = std::getenv("PATH");
    old_path_ = path != nullptr ? path : "";
    ::setenv("PATH", ((dir_ / "bin").string() + ":" + old_path_).c_str(), 1);
  }
  ~FakeClients() {
    ::setenv("PATH", old_path_.c_str(), 1);
    fs::remove_all(dir_);
  }
  FakeClients(const FakeClients&) = delete;
  FakeClients& operator=(const FakeClients&) = delete;

  void add(const std::string& name, const std::string& body) {
    std::ofstream(dir_ / "bin" / name) << "#!/bin/bash\n" << body;
    fs::permissions(dir_ / "bin" / name, fs::perms::owner_all);
  }
  fs::path dir() const { return dir_; }

 private:
  fs::path dir_;
  std::string old_path_;
};

// True once `pid` is gone (or a zombie nobody reaps yet: it no longer runs). Polled, not timed: the
// loop only bounds how long a broken fix could make the test wait.
bool process_gone(pid_t pid) {
  for (int i = 0; i < 1000; ++i) {
    if (::kill(pid, 0) != 0) return true;
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    const size_t paren = text.rfind(')');
    if (paren != std::string::npos && paren + 2 < text.size() && text[paren + 2] == 'Z') return true;
    std::this_thread::sleep_for(milliseconds(10));
  }
  return false;
}

pid_t read_pid(const fs::path& file) {
  for (int i = 0; i < 1000; ++i) {
    std::ifstream in(file);
    long pid = 0;
    if (in >> pid && pid > 0) return static_cast<pid_t>(pid);
    std::this_thread::sleep_for(milliseconds(10));
  }
  return -1;
}

CaptureLimits short_limits() {
  CaptureLimits limits;
  limits.deadline = milliseconds(300);
  limits.grace = milliseconds(200);
  return limits;
}

TEST(CapturedCommand, HungClientIsStoppedWithItsWholeGroupAtTheDeadline) {
  FakeClients fake;
  const fs::path pids = fake.dir() / "grandchild.pid";
  // A client that hangs, with a child of its own that ignores SIGTERM.
  fake.add("squeue", "(trap '' TERM; exec sleep 1000) & echo $! > " + pids.string() + "\nwait\n");
  auto r = run_captured({"squeue", "--noheader"}, {}, short_limits());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "squeue: no answer within 300 ms; stopped it");
  const pid_t grandchild = read_pid(pids);
  ASSERT_GT(grandchild, 0);
  EXPECT_TRUE(process_gone(grandchild)) << "the client's child survived";
}

TEST(CapturedCommand, ExitedClientIsNotWaitedForThroughAGrandchildHoldingItsOutput) {
  FakeClients fake;
  const fs::path pids = fake.dir() / "grandchild.pid";
  // Prints its answer, leaves a background child that inherited stdout and stderr, and exits.
  fake.add("scontrol",
           "echo 'JobId=7 JobState=RUNNING RunTime=00:00:05'\nsleep 1000 &\necho $! > " + pids.string() + "\nexit 0\n");
  CaptureLimits limits;
  limits.deadline = std::chrono::seconds(60);  // a regression would hang here, not pass
  auto r = run_captured({"scontrol", "show", "job"}, {}, limits);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r.value().exit_code, 0);
  EXPECT_EQ(r.value().out, "JobId=7 JobState=RUNNING RunTime=00:00:05\n");
  const pid_t grandchild = read_pid(pids);
  ASSERT_GT(grandchild, 0);
  EXPECT_TRUE(process_gone(grandchild));
}

TEST(CapturedCommand, EndlessOutputIsCappedOnEitherStream) {
  FakeClients fake;
  fake.add("squeue", "exec yes '12|RUNNING|0:01'\n");
  fake.add("sacct", "exec yes 'sacct: error' >&2\n");
  CaptureLimits limits = short_limits();
  limits.deadline = std::chrono::seconds(60);
  limits.max_output_bytes = size_t{1} << 20;
  auto out = run_captured({"squeue"}, {}, limits);
  ASSERT_FALSE(out);
  EXPECT_EQ(out.error().message, "squeue: printed more than 1 MiB; stopped it");
  auto err = run_captured({"sacct"}, {}, limits);
  ASSERT_FALSE(err);
  EXPECT_EQ(err.error().message, "sacct: printed more than 1 MiB; stopped it");
}

TEST(CapturedCommand, ClientGetsDefaultSignalsAndItsInput) {
  FakeClients fake;
  // With SIGPIPE ignored here, a client whose pipeline closes early would see write errors.
  fake.add("sbatch", "yes | head -c 3 >/dev/null\ncat\n");
  struct sigaction ignore {
  }, old{};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ignore, &old);
  auto r = run_captured({"sbatch"}, "#!/bin/bash\necho hi\n");
  ::sigaction(SIGPIPE, &old, nullptr);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r.value().err, "");  // no "yes: standard output: Broken pipe"
  EXPECT_EQ(r.value().out, "#!/bin/bash\necho hi\n");
  auto missing = run_captured({"no-such-slurm-client-xyz"});
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message,
            "cannot run no-such-slurm-client-xyz: No such file or directory (is SLURM installed and on PATH?)");
}

// --- slurm status with faulty clients ------------------------------------------------------------

std::vector<SubmittedJob> jobs_with_ids(int64_t first, size_t count) {
  std::vector<SubmittedJob> jobs(count);
  for (size_t i = 0; i < count; ++i) {
    jobs[i].job_id = std::to_string(first + static_cast<int64_t>(i));
    jobs[i].strategy = "ddp";
  }
  return jobs;
}

TEST(SlurmStatus, HungClientsEndInNotesNamingThem) {
  FakeClients fake;
  fake.add("squeue", "exec sleep 1000\n");
  fake.add("scontrol", "echo called >> " + (fake.dir() / "scontrol.calls").string() + "\nexec sleep 1000\n");
  fake.add("sacct", "exec sleep 1000\n");
  std::vector<std::string> notes;
  StatusQuery query;
  query.limits = short_limits();
  const std::vector<JobStatus> st = job_statuses(jobs_with_ids(100, 3), &notes, query);
  ASSERT_EQ(st.size(), 3u);
  for (const JobStatus& s : st) EXPECT_EQ(s.state, "unknown");
  EXPECT_EQ(notes, (std::vector<std::string>{"squeue: squeue: no answer within 300 ms; stopped it",
                                             "sacct: sacct: no answer within 300 ms; stopped it"}));
  // scontrol talks to the controller squeue could not reach: not asked.
  EXPECT_FALSE(fs::exists(fake.dir() / "scontrol.calls"));
}

TEST(SlurmStatus, HugeSqueueOutputIsANoteNotAnAbort) {
  FakeClients fake;
  fake.add("squeue", "exec yes '12|RUNNING|0:01'\n");
  fake.add("sacct", "echo 'Slurm accounting storage is disabled' >&2; exit 1\n");
  std::vector<std::string> notes;
  StatusQuery query;
  query.limits.max_output_bytes = size_t{1} << 20;
  const std::vector<JobStatus> st = job_statuses(jobs_with_ids(12, 1), &notes, query);
  ASSERT_EQ(st.size(), 1u);
  EXPECT_EQ(st[0].state, "unknown");
  EXPECT_EQ(notes, (std::vector<std::string>{"squeue: squeue: printed more than 1 MiB; stopped it",
                                             "sacct: Slurm accounting storage is disabled"}));
}

// 20,000 seven-digit job ids are 160 kB in one --jobs= argument, past Linux's 128 kB limit for a
// single argument ("Argument list too long"); in batches every job is answered.
TEST(SlurmStatus, SacctIsAskedInBatchesForManyJobs) {
  FakeClients fake;
  const fs::path log = fake.dir() / "sacct.args";
  fake.add("squeue", "exit 0\n");
  fake.add("scontrol", "exit 0\n");
  fake.add("sacct",
           "for a in \"$@\"; do case $a in --jobs=*) ids=${a#--jobs=};; esac; done\n"
           "echo ${#ids} >> " +
               log.string() +
               "\n"
               "IFS=, read -ra list <<< \"$ids\"\n"
               "for id in \"${list[@]}\"; do echo \"$id|COMPLETED|00:01:00\"; echo \"$id.batch|COMPLETED|00:01:00\"; "
               "done\n");
  std::vector<std::string> notes;
  const std::vector<JobStatus> st = job_statuses(jobs_with_ids(1'000'000, 20'000), &notes);
  EXPECT_TRUE(notes.empty()) << notes.front();
  ASSERT_EQ(st.size(), 20'000u);
  size_t completed = 0;
  for (const JobStatus& s : st) completed += s.state == "completed" && s.elapsed_s == 60 && s.source == "sacct";
  EXPECT_EQ(completed, 20'000u);
  std::ifstream calls(log);
  std::vector<size_t> lengths;
  for (size_t n = 0; calls >> n;) lengths.push_back(n);
  ASSERT_EQ(lengths.size(), 20u);  // 1,000 ids per call
  for (size_t n : lengths) EXPECT_EQ(n, 1000u * 8 - 1);
}

// Only the jobs squeue and scontrol did not know are asked of sacct.
TEST(SlurmStatus, SacctIsAskedOnlyForJobsTheControllerForgot) {
  FakeClients fake;
  const fs::path log = fake.dir() / "sacct.args";
  fake.add("squeue", "echo '10|RUNNING|1:00'\n");
  fake.add("scontrol", "echo 'JobId=11 JobName=x JobState=STOPPED RunTime=00:02:00'\n");
  fake.add("sacct", "echo \"$@\" >> " + log.string() + "\necho '12|REQUEUE_FED|00:00:00'\n");
  std::vector<std::string> notes;
  const std::vector<JobStatus> st = job_statuses(jobs_with_ids(10, 3), &notes);
  ASSERT_EQ(st.size(), 3u);
  EXPECT_EQ(st[0].state, "running");
  EXPECT_EQ(st[0].elapsed_s, 60);
  EXPECT_EQ(st[1].state, "suspended");
  EXPECT_EQ(st[1].slurm_state, "STOPPED");
  EXPECT_EQ(st[1].source, "scontrol");
  EXPECT_EQ(st[2].state, "pending");
  EXPECT_EQ(st[2].slurm_state, "REQUEUE_FED");
  std::ifstream in(log);
  std::string args((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(args, "--noheader --parsable2 --format=JobID,State,Elapsed,ExitCode --jobs=12\n");
}

// Every base state and flag of slurm.schedmd.com/job_state_codes.html, long names and squeue's codes.
TEST(SlurmStatus, EveryDocumentedJobStateHasItsClass) {
  const std::vector<std::pair<std::string, std::string>> expected = {{"PENDING", "pending"},
                                                                     {"PD", "pending"},
                                                                     {"REQUEUED", "pending"},
                                                                     {"REQUEUE_HOLD", "pending"},
                                                                     {"REQUEUE_FED", "pending"},
                                                                     {"RESV_DEL_HOLD", "pending"},
                                                                     {"SPECIAL_EXIT", "pending"},
                                                                     {"EXPEDITING", "pending"},
                                                                     {"RF", "pending"},
                                                                     {"RUNNING", "running"},
                                                                     {"R", "running"},
                                                                     {"CONFIGURING", "running"},
                                                                     {"POWER_UP_NODE", "running"},
                                                                     {"COMPLETING", "running"},
                                                                     {"STAGE_OUT", "running"},
                                                                     {"SIGNALING", "running"},
                                                                     {"RESIZING", "running"},
                                                                     {"CG", "running"},
                                                                     {"SUSPENDED", "suspended"},
                                                                     {"STOPPED", "suspended"},
                                                                     {"ST", "suspended"},
                                                                     {"COMPLETED", "completed"},
                                                                     {"CD", "completed"},
                                                                     {"FAILED", "failed"},
                                                                     {"TIMEOUT", "failed"},
                                                                     {"NODE_FAIL", "failed"},
                                                                     {"OUT_OF_MEMORY", "failed"},
                                                                     {"BOOT_FAIL", "failed"},
                                                                     {"DEADLINE", "failed"},
                                                                     {"PREEMPTED", "failed"},
                                                                     {"LAUNCH_FAILED", "failed"},
                                                                     {"RECONFIG_FAIL", "failed"},
                                                                     {"OOM", "failed"},
                                                                     {"CANCELLED", "cancelled"},
                                                                     {"CANCELLED by 0", "cancelled"},
                                                                     {"REVOKED", "cancelled"},
                                                                     {"CA", "cancelled"},
                                                                     {"UPDATE_DB", "unknown"},
                                                                     {"", "unknown"},
                                                                     {"SOME_FUTURE_STATE", "unknown"}};
  for (const auto& [word, cls] : expected) EXPECT_EQ(state_class(word), cls) << word;
}

TEST(SlurmStatus, DurationsAndElapsedTimesRejectBadValues) {
  EXPECT_EQ(parse_slurm_duration("1-02:03:04"), 93784);
  EXPECT_EQ(parse_slurm_duration("2-03"), 2 * 86400 + 3 * 3600);
  EXPECT_EQ(parse_slurm_duration("12:34"), 12 * 60 + 34);
  EXPECT_EQ(parse_slurm_duration("100:00:00"), 360000);
  EXPECT_EQ(parse_slurm_duration("99:99"), std::nullopt);
  EXPECT_EQ(parse_slurm_duration("1-25:00:00"), std::nullopt);
  EXPECT_EQ(parse_slurm_duration("-5"), std::nullopt);
  EXPECT_EQ(parse_slurm_duration("9999999:00"), std::nullopt);
  EXPECT_EQ(elapsed_between(1'000'000'000'000'000'000, 1'000'000'065'000'000'000), 65);
  EXPECT_EQ(elapsed_between(INT64_MIN, INT64_MAX), std::nullopt);  // wrapped to a small number before
  EXPECT_EQ(elapsed_between(INT64_MAX - 5, INT64_MIN + 5), std::nullopt);
  EXPECT_EQ(elapsed_between(2'000'000'000'000'000'000, 1'000'000'000'000'000'000), std::nullopt);
  EXPECT_EQ(elapsed_between(std::nullopt, 5), std::nullopt);
}

// A run.json with hostile times: the elapsed time is unknown, never a wrapped number.
TEST(SlurmStatus, HostileRunJsonTimesGiveNoElapsedTime) {
  FakeClients fake;
  fake.add("squeue", "exit 0\n");
  fake.add("scontrol", "exit 0\n");
  fake.add("sacct", "echo 'Slurm accounting storage is disabled' >&2; exit 1\n");
  collect::RunInfo info;
  info.experiment = "exp";
  info.run = "ddp-n1-r1-slurm42";
  info.strategy = "ddp";
  info.start_unix_ns = INT64_MIN + 1;
  info.end_unix_ns = INT64_MAX;
  info.exit_status = 0;
  info.status = "completed";
  info.writer = "wrapper";
  const fs::path run = fake.dir() / "root" / "exp" / info.run;
  fs::create_directories(run);
  std::ofstream(run / "run.json") << collect::to_json(info);
  collect::RankInfo rank;
  rank.rank = 0;
  rank.world_size = 1;
  rank.host = "n1";
  rank.start_unix_ns = 1'763'767'200'000'000'000;
  rank.end_unix_ns = *rank.start_unix_ns + 65'000'000'000;
  rank.status = "completed";
  rank.experiment = "exp";
  rank.run = info.run;
  fs::create_directories(run / collect::rank_dir_name(0));
  std::ofstream(run / collect::rank_dir_name(0) / "rank.json") << collect::to_json(rank);
  SubmittedJob job;
  job.job_id = "42";
  job.experiment = "exp";
  job.root = (fake.dir() / "root").string();
  job.run_prefix = "ddp-n1-r1";
  std::vector<std::string> notes;
  const std::vector<JobStatus> st = job_statuses({job}, &notes);
  ASSERT_EQ(st.size(), 1u);
  EXPECT_EQ(st[0].source, "run directory");
  EXPECT_EQ(st[0].state, "completed");
  EXPECT_EQ(st[0].elapsed_s, std::nullopt);
}

// A cancelled job stays cancelled once SLURM forgets it (issue 21): the first `slurm status` remembers
// SLURM's word in the submission folder's job-states.txt; later squeue and scontrol list nothing, sacct
// has no accounting, and the job's run directory says completed, which is what status showed before.
// The report job's exit code (scontrol's ExitCode=3:0) gives its outcome, remembered too.
TEST(SlurmStatus, CancelledJobStaysCancelledOnceSlurmForgetsIt) {
  FakeClients fake;
  fake.add("squeue", "echo '42|CANCELLED|0:07'\n");
  fake.add("scontrol", "echo 'JobId=43 JobName=x-report JobState=FAILED RunTime=00:00:03 ExitCode=3:0'\n");
  fake.add("sacct", "echo 'Slurm accounting storage is disabled' >&2; exit 1\n");
  collect::RunInfo info;
  info.experiment = "exp";
  info.run = "ddp-n1-r1-slurm42";
  info.strategy = "ddp";
  info.world_size = 1;
  info.start_unix_ns = 1'763'767'200'000'000'000;
  info.end_unix_ns = *info.start_unix_ns + 5'000'000'000;
  info.exit_status = 0;
  info.status = "completed";
  info.writer = "wrapper";
  const fs::path run = fake.dir() / "root" / "exp" / info.run;
  fs::create_directories(run);
  std::ofstream(run / "run.json") << collect::to_json(info);
  collect::RankInfo rank;
  rank.world_size = 1;
  rank.host = "n1";
  rank.status = "completed";
  rank.experiment = "exp";
  rank.run = info.run;
  fs::create_directories(run / collect::rank_dir_name(0));
  std::ofstream(run / collect::rank_dir_name(0) / "rank.json") << collect::to_json(rank);
  SubmittedJob job;
  job.job_id = "42";
  job.experiment = "exp";
  job.root = (fake.dir() / "root").string();
  job.run_prefix = "ddp-n1-r1";
  SubmittedJob report;
  report.kind = "report";
  report.job_id = "43";
  StatusQuery query;
  query.state_file = (fake.dir() / "job-states.txt").string();
  std::vector<std::string> notes;
  std::vector<JobStatus> st = job_statuses({job, report}, &notes, query);
  ASSERT_EQ(st.size(), 2u);
  EXPECT_EQ(st[0].state, "cancelled");
  EXPECT_EQ(st[0].source, "squeue");
  EXPECT_EQ(st[1].state, "failed");
  EXPECT_EQ(st[1].exit_code, 3);
  EXPECT_EQ(st[1].outcome, "report written, partial (exit 3): a configuration failed or some data was rejected");
  std::ifstream in(query.state_file);
  const std::string remembered((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(remembered, "42 CANCELLED 7 -\n43 FAILED 3 3\n");

  // SLURM forgets both jobs.
  fake.add("squeue", "exit 0\n");
  fake.add("scontrol", "exit 0\n");
  notes.clear();
  st = job_statuses({job, report}, &notes, query);
  ASSERT_EQ(st.size(), 2u);
  EXPECT_EQ(st[0].state, "cancelled");
  EXPECT_EQ(st[0].slurm_state, "CANCELLED");
  EXPECT_EQ(st[0].elapsed_s, 7);
  EXPECT_EQ(st[0].source, "job-states.txt");
  EXPECT_EQ(st[0].run_status, "completed");  // the run directory is still shown beside it
  EXPECT_EQ(st[1].state, "failed");
  EXPECT_EQ(st[1].exit_code, 3);
  EXPECT_EQ(st[1].source, "job-states.txt");
  EXPECT_EQ(st[1].outcome, "report written, partial (exit 3): a configuration failed or some data was rejected");

  // Without the remembered states, the same answers made it "completed" (what the run directory says).
  fs::remove(query.state_file);
  notes.clear();
  st = job_statuses({job, report}, &notes, query);
  EXPECT_EQ(st[0].state, "completed");
  EXPECT_EQ(st[0].source, "run directory");
  EXPECT_EQ(st[1].state, "unknown");
}

TEST(SlurmStatus, ExitCodesAndReportOutcomes) {
  EXPECT_EQ(parse_slurm_exit_code("0:0"), 0);
  EXPECT_EQ(parse_slurm_exit_code("3:0"), 3);
  EXPECT_EQ(parse_slurm_exit_code("0:15"), 143);  // ended by SIGTERM
  EXPECT_EQ(parse_slurm_exit_code("3"), std::nullopt);
  EXPECT_EQ(parse_slurm_exit_code("x:0"), std::nullopt);
  const auto a = parse_sacct("16|COMPLETED|00:01:00|0:0\n17|FAILED|00:00:02|1:0\n18|CANCELLED by 0|00:00:00\n");
  EXPECT_EQ(a.at("16").exit_code, 0);
  EXPECT_EQ(a.at("17").exit_code, 1);
  EXPECT_EQ(a.at("18").exit_code, std::nullopt);
  EXPECT_EQ(report_outcome("completed", 0), "report written");
  EXPECT_EQ(report_outcome("failed", 4), "tables written, plots failed (exit 4)");
  EXPECT_EQ(report_outcome("failed", 1), "no report (exit 1): see the job's log");
  EXPECT_EQ(report_outcome("cancelled", std::nullopt), "no report: the job was cancelled");
  EXPECT_EQ(report_outcome("pending", std::nullopt), "waits for the scaling jobs");
}

TEST(SlurmSubmit, JobLogPathFillsTheSlurmPattern) {
  EXPECT_EQ(job_log_path("/logs/%x-%j.err", "ddp-n1", "4711"), "/logs/ddp-n1-4711.err");
  EXPECT_EQ(job_log_path("/logs/100%%-%J.out", "x", "12"), "/logs/100%-12.out");
  EXPECT_EQ(job_log_path("logs/%x.err", "a", "1"), (fs::current_path() / "logs/a.err").string());
  EXPECT_EQ(job_log_path("/logs/%N-%j.err", "a", "1"), "");  // the node is known only when it runs
  EXPECT_EQ(job_log_path("/logs/%5j.err", "a", "1"), "");
}

// sbatch that hangs or floods: the submission stops with a message naming sbatch and the script,
// and the jobs submitted before stay recorded.
TEST(SlurmSubmit, HungSbatchEndsTheSubmissionWithAMessage) {
  FakeClients fake;
  const fs::path count = fake.dir() / "count";
  fake.add("sbatch", "n=$(cat " + count.string() + " 2>/dev/null || echo 0); echo $((n + 1)) > " + count.string() +
                         "\nif [ $n = 0 ]; then echo 4711; exit 0; fi\nexec sleep 1000\n");
  LaunchConfig c;
  c.script_dir = (fake.dir() / "scripts").string();
  c.std_out = "out";
  c.std_err = "err";
  c.report = false;
  c.slurm_timeout_s = 1;
  SubmitPlan plan;
  plan.jobs.resize(2);
  plan.jobs[0].script_name = "a.sh";
  plan.jobs[1].script_name = "b.sh";
  plan.scripts = {"#!/bin/bash\n", "#!/bin/bash\n"};
  plan.script_paths = {"", ""};
  std::vector<SubmittedJob> submitted;
  auto st = submit_all(c, plan, &submitted, nullptr);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().message,
            "sbatch: no answer within 1 s; stopped it (submitting b.sh); the job may be queued all the same: check "
            "with squeue --me");
  ASSERT_EQ(submitted.size(), 1u);
  EXPECT_EQ(submitted[0].job_id, "4711");
}

}  // namespace
}  // namespace scaleprof::launch
