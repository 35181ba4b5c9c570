#include "collect/rank_recorder.h"

#include <fmt/format.h>
#include <simdjson.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "collect/run_names.h"

namespace scaleprof::collect {

namespace fs = std::filesystem;

RankRecorder::RankRecorder(RunContext context, RankRecorderOptions options)
    : context_(std::move(context)), options_(std::move(options)) {}

RankRecorder::~RankRecorder() {
  (void)finish(false);
}

std::string RankRecorder::run_dir() const {
  return (fs::path(context_.root) / context_.experiment / context_.run).string();
}

std::string RankRecorder::rank_dir() const {
  return (fs::path(run_dir()) / rank_dir_name(context_.rank)).string();
}

std::string RankRecorder::traces_dir() const {
  return (fs::path(rank_dir()) / kTracesDir).string();
}

Result<std::unique_ptr<RankRecorder>> RankRecorder::open(const RunContext& context, const RankRecorderOptions& options,
                                                         const Environment& env) {
  for (auto [what, name] :
       {std::pair<const char*, const std::string&>{"experiment", context.experiment}, {"run name", context.run}}) {
    if (Status s = check_name(what, name); !s) return s.error();
  }
  if (!context.strategy.empty()) {
    if (Status s = check_name("strategy", context.strategy); !s) return s.error();
  }
  std::unique_ptr<RankRecorder> r(new RankRecorder(context, options));
  std::error_code ec;
  // Absolute, so traces and later files land in the same place if the training changes directory.
  r->context_.root = fs::absolute(context.root, ec).lexically_normal().string();
  const std::string dir = r->rank_dir();
  const std::string rank_json = (fs::path(dir) / kRankJson).string();
  if (fs::exists(rank_json, ec)) {
    return Error{
        fmt::format("{} exists already: run '{}' of experiment '{}' already has rank {}; give this launch "
                    "its own run name",
                    rank_json, context.run, context.experiment, context.rank)};
  }
  if (Status s = make_directories(r->traces_dir()); !s) return s.error();

  RankInfo& info = r->info_;
  info.rank = context.rank;
  info.local_rank = context.local_rank;
  info.world_size = context.world_size;
  info.node_rank = context.node_rank;
  info.nodes = context.nodes;
  info.host = context.host;
  info.pid = static_cast<int64_t>(::getpid());
  info.start_unix_ns = unix_now_ns();
  info.devices = context.visible_devices;
  info.strategy = context.strategy;
  info.experiment = context.experiment;
  info.run = context.run;
  info.launcher = context.launcher;
  info.job_id = context.job_id;
  info.torch_version = options.torch_version;
  if (Status s = r->write_rank_json(); !s) return s.error();

  auto epochs = CsvAppender::open((fs::path(dir) / kEpochsCsv).string(), kEpochsHeader);
  if (!epochs) return epochs.error();
  r->epochs_ = std::move(epochs.value());

  if (r->owns_run_json()) {
    RunInfo& run = r->run_info_;
    run.experiment = context.experiment;
    run.run = context.run;
    run.strategy = context.strategy;
    run.world_size = context.world_size;
    run.nodes = context.nodes;
    run.launcher = context.launcher;
    run.job_id = context.job_id;
    run.command = options.command;
    run.hosts = {context.host};
    run.start_unix_ns = info.start_unix_ns;
    run.scaleprof_version = SCALEPROF_VERSION;
    run.torch_version = options.torch_version;
    run.writer = "rank0";
    run.writer_host = context.host;
    run.writer_pid = info.pid;
    if (Status s = r->write_run_json(); !s) return s.error();
  }

  if (context.gpu_monitor == "rank") {
    auto library = load_gpu_library(env);
    if (!library) {
      r->gpu_note_ = library.error().message;
    } else {
      auto devices = choose_devices(*library.value(), context, "rank");
      if (!devices) return devices.error();
      if (devices.value().empty()) {
        r->gpu_note_ = "no GPU visible to this process";
      } else {
        GpuMonitorOptions gpu_options;
        gpu_options.interval = options.gpu_interval;
        gpu_options.devices = devices.value();
        gpu_options.csv_path = (fs::path(dir) / kGpuCsv).string();
        auto monitor = GpuMonitor::start(std::move(library.value()), gpu_options);
        if (!monitor) return monitor.error();
        r->gpu_ = std::move(monitor.value());
      }
    }
  } else {
    r->gpu_note_ =
        context.gpu_monitor == "node" ? "the node's GPUs are sampled by `scaleprof run`" : "GPU sampling is off";
  }
  return r;
}

Status RankRecorder::write_rank_json() {
  return replace_file((fs::path(rank_dir()) / kRankJson).string(), to_json(info_));
}

Status RankRecorder::write_run_json() {
  return replace_file((fs::path(run_dir()) / kRunJson).string(), to_json(run_info_));
}

Status RankRecorder::begin_epoch(int64_t epoch) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (finished_) return Error{"the run has finished; no more epochs can be recorded"};
  if (epoch_timer_.running()) {
    return Error{fmt::format("epoch {} started while epoch {} is still running", epoch, current_epoch_)};
  }
  current_epoch_ = epoch;
  next_step_ = 0;
  epoch_timer_.start();
  return Ok{};
}

Result<EpochRecord> RankRecorder::end_epoch(std::optional<int64_t> samples) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!epoch_timer_.running()) return Error{"end of an epoch that was not started"};
  Interval t = epoch_timer_.stop();
  EpochRecord record{current_epoch_, t.start_unix_ns, t.end_unix_ns, t.duration_s, samples};
  if (Status s = epochs_.append(csv_line(record)); !s) return s.error();
  return record;
}

Status RankRecorder::begin_step(std::optional<int64_t> step) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (finished_) return Error{"the run has finished; no more steps can be recorded"};
  if (step_timer_.running()) return Error{fmt::format("step started while step {} is still running", current_step_)};
  current_step_ = step.value_or(next_step_);
  next_step_ = current_step_ + 1;
  step_timer_.start();
  return Ok{};
}

Result<StepRecord> RankRecorder::end_step(std::optional<int64_t> samples) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!step_timer_.running()) return Error{"end of a step that was not started"};
  Interval t = step_timer_.stop();
  if (!steps_.is_open()) {
    // Opened on the first step: runs that time only epochs get no empty steps.csv.
    auto opened = CsvAppender::open((fs::path(rank_dir()) / kStepsCsv).string(), kStepsHeader);
    if (!opened) return opened.error();
    steps_ = std::move(opened.value());
  }
  StepRecord record{std::max<int64_t>(current_epoch_, 0), current_step_, t.start_unix_ns, t.duration_s, samples};
  if (Status s = steps_.append(csv_line(record)); !s) return s.error();
  return record;
}

void RankRecorder::abandon_epoch() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (epoch_timer_.running()) (void)epoch_timer_.stop();
  if (step_timer_.running()) (void)step_timer_.stop();
}

void RankRecorder::abandon_step() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (step_timer_.running()) (void)step_timer_.stop();
}

Status RankRecorder::finish(bool success) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (finished_) return Ok{};
  finished_ = true;
  Status gpu_status = gpu_ ? gpu_->stop() : Status(Ok{});
  info_.status = success ? kStatusCompleted : kStatusFailed;
  info_.end_unix_ns = unix_now_ns();
  Status rank_status = write_rank_json();
  if (owns_run_json()) {
    run_info_.status = info_.status;
    run_info_.end_unix_ns = info_.end_unix_ns;
    // The hosts of the ranks that have started, from their rank.json files (rank 0 knows no more).
    std::set<std::string> hosts(run_info_.hosts.begin(), run_info_.hosts.end());
    std::error_code ec;
    simdjson::dom::parser parser;
    for (const auto& entry : fs::directory_iterator(run_dir(), ec)) {
      simdjson::dom::element doc;
      std::string_view host;
      if (parser.load((entry.path() / kRankJson).string()).get(doc) == simdjson::SUCCESS &&
          doc["host"].get_string().get(host) == simdjson::SUCCESS) {
        hosts.emplace(host);
      }
    }
    run_info_.hosts.assign(hosts.begin(), hosts.end());
    if (Status s = write_run_json(); !s) return s;
  }
  if (!rank_status) return rank_status;
  return gpu_status;
}

}  // namespace scaleprof::collect
