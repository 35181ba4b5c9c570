#include "collect/rank_recorder.h"

#include <fmt/format.h>
#include <simdjson.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <set>

#include "collect/run_names.h"
#include "core/file_size_signal.h"
#include "core/terminal_text.h"

namespace scaleprof::collect {

namespace fs = std::filesystem;

RankRecorder::RankRecorder(RunContext context, RankRecorderOptions options, RankInfo info)
    : context_(std::move(context)), options_(std::move(options)), info_(std::move(info)) {}

RankRecorder::~RankRecorder() {
  (void)finish(false);
}

std::string RankRecorder::run_dir() const {
  return run_dir_path(context_.root, context_.experiment, context_.run, context_.attempt);
}

std::string RankRecorder::rank_dir() const {
  return (fs::path(run_dir()) / rank_dir_name(context_.rank)).string();
}

std::string RankRecorder::traces_dir() const {
  return (fs::path(rank_dir()) / kTracesDir).string();
}

Result<std::unique_ptr<RankRecorder>> RankRecorder::open(const RunContext& context, const RankRecorderOptions& options,
                                                         const Environment& env) {
  const FileSizeSignalBlock no_sigxfsz;  // its claims and its warnings: past `ulimit -f`, errors only
  if (Status s = check_context_names(context); !s) return s.error();
  if (context.rank < 0) return Error{fmt::format("rank {} is negative", context.rank)};
  RunContext ctx = context;
  std::error_code ec;
  // Absolute, so traces and later files land in the same place if the training changes directory.
  ctx.root = fs::absolute(context.root, ec).lexically_normal().string();
  const std::string run_dir = run_dir_path(ctx.root, ctx.experiment, ctx.run, ctx.attempt);
  const std::string dir = (fs::path(run_dir) / rank_dir_name(ctx.rank)).string();
  // The rank folder now, its traces/ only once the claims below hold: a refused launch leaves no
  // folder of its own behind in another launch's run.
  const bool rank_dir_existed = fs::is_directory(dir, ec);
  if (Status s = make_directories(dir); !s) return s.error();

  RankInfo info;
  info.rank = ctx.rank;
  info.local_rank = ctx.local_rank;
  info.world_size = ctx.world_size;
  info.node_rank = ctx.node_rank;
  info.nodes = ctx.nodes;
  info.host = ctx.host;
  info.pid = static_cast<int64_t>(::getpid());
  info.start_unix_ns = unix_now_ns();
  info.devices = ctx.visible_devices;
  info.strategy = ctx.strategy;
  info.experiment = ctx.experiment;
  info.run = ctx.run;
  info.launcher = ctx.launcher;
  info.job_id = ctx.job_id;
  info.torch_version = options.torch_version;
  info.attempt = ctx.attempt;
  // The claim: one exclusive create, so a reused name or a second start of this rank changes nothing.
  const std::string rank_json = (fs::path(dir) / kRankJson).string();
  auto claimed = create_new_file(rank_json, to_json(info));
  if (!claimed) return claimed.error();
  if (!claimed.value()) {
    return Error{
        fmt::format("{} exists already: run '{}' of experiment '{}' already has rank {}; give this launch "
                    "its own run name (nothing was changed)",
                    rank_json, ctx.run, ctx.experiment, ctx.rank)};
  }

  RunInfo run;
  const bool owns_run_json = ctx.rank == 0 && !ctx.wrapper_pid;
  if (owns_run_json) {
    run.experiment = ctx.experiment;
    run.run = ctx.run;
    run.strategy = ctx.strategy;
    run.world_size = ctx.world_size;
    run.nodes = ctx.nodes;
    run.launcher = ctx.launcher;
    run.job_id = ctx.job_id;
    run.command = options.command;
    run.hosts = {ctx.host};
    run.start_unix_ns = info.start_unix_ns;
    run.scaleprof_version = SCALEPROF_VERSION;
    run.torch_version = options.torch_version;
    run.writer = "rank0";
    run.writer_host = ctx.host;
    run.writer_pid = info.pid;
    run.attempt = ctx.attempt;
    const std::string run_json = (fs::path(run_dir) / kRunJson).string();
    auto run_claimed = create_new_file(run_json, to_json(run));
    if (!run_claimed || !run_claimed.value()) {
      // Our own claim and folder, made a moment ago, go again; the run is another launch's. remove()
      // takes a folder only when it is empty, so nothing anyone else wrote there is touched.
      std::remove(rank_json.c_str());
      if (!rank_dir_existed) fs::remove(dir, ec);
      if (!run_claimed) return run_claimed.error();
      return Error{
          fmt::format("{} exists already: run '{}' was recorded before; give this launch its own run "
                      "name (nothing was changed)",
                      run_json, ctx.run)};
    }
  }

  if (Status s = make_directories((fs::path(dir) / kTracesDir).string()); !s) return s.error();

  std::unique_ptr<RankRecorder> r(new RankRecorder(ctx, options, std::move(info)));
  r->run_info_ = std::move(run);
  r->epochs_ = MetricsFile((fs::path(dir) / kEpochsCsv).string(), kEpochsHeader, options.messages);
  r->steps_ = MetricsFile((fs::path(dir) / kStepsCsv).string(), kStepsHeader, options.messages);
  r->after_append(r->epochs_.append(""));  // the header now: a rank without epochs still shows its columns

  if (ctx.gpu_monitor == "rank") {
    auto library = load_gpu_library(env);
    if (!library) {
      r->gpu_note_ = library.error().message;
    } else {
      std::vector<std::string> warnings;
      auto devices = choose_devices(*library.value(), ctx, "rank", &warnings);
      for (const std::string& w : warnings) print_message(options.messages, "scaleprof: warning", w);
      if (devices.empty()) {
        r->gpu_note_ = "no GPU visible to this process";
      } else {
        GpuMonitorOptions gpu_options;
        gpu_options.interval = options.gpu_interval;
        gpu_options.devices = devices;
        gpu_options.csv_path = (fs::path(dir) / kGpuCsv).string();
        gpu_options.messages = options.messages;
        auto monitor = GpuMonitor::start(std::move(library.value()), gpu_options);
        if (!monitor) return monitor.error();
        r->gpu_ = std::move(monitor.value());
        // Recorded at once (not only at the end) so a rank killed later still says how it sampled.
        r->info_.gpu_interval_ns = static_cast<int64_t>(options.gpu_interval.count());
        (void)r->write_rank_json();  // a failure here is retried by finish()
      }
    }
  } else {
    r->gpu_note_ = ctx.gpu_monitor == "node" ? "the node's GPUs are sampled by `scaleprof run`" : "GPU sampling is off";
  }
  return r;
}

void RankRecorder::after_append(bool written) {
  if (written) return;
  info_.write_errors = epochs_.failed_writes() + steps_.failed_writes();
  info_.last_write_error = !steps_.last_error().empty() && steps_.failed_writes() > 0 && !epochs_.failed_writes()
                               ? steps_.last_error()
                               : epochs_.last_error();
  (void)write_rank_json();  // may fail on the same full disk; finish() tries again
}

void RankRecorder::note_process_group(int64_t size, const std::string& by) {
  if (size < 1 || (by != "torch.distributed" && by != "horovod" && by != "none")) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (finished_ || (info_.process_group_size && *info_.process_group_size >= size)) return;
  info_.process_group_size = size;
  info_.process_group_by = by;
}

int64_t RankRecorder::write_errors() const {
  return epochs_.failed_writes() + steps_.failed_writes();
}

Status RankRecorder::write_rank_json() {
  return replace_file((fs::path(rank_dir()) / kRankJson).string(), to_json(info_));
}

Status RankRecorder::write_run_json() {
  return replace_file((fs::path(run_dir()) / kRunJson).string(), to_json(run_info_));
}

Status check_record_arguments(const char* what, std::optional<int64_t> index, std::optional<int64_t> samples) {
  if (index && *index < 0) return Error{fmt::format("{} {} is negative", what, *index)};
  if (samples && *samples < 0) return Error{fmt::format("samples {} is negative", *samples)};
  return Ok{};
}

Status RankRecorder::begin_epoch(int64_t epoch, std::optional<int64_t> samples) {
  if (Status s = check_record_arguments("epoch", epoch, samples); !s) return s;
  std::lock_guard<std::mutex> lock(mutex_);
  if (finished_) return Error{"the run has finished; no more epochs can be recorded"};
  if (epoch_timer_.running()) {
    return Error{fmt::format("epoch {} started while epoch {} is still running", epoch, current_epoch_)};
  }
  current_epoch_ = epoch;
  epoch_samples_ = samples;
  next_step_ = 0;
  epoch_timer_.start();
  return Ok{};
}

Result<EpochRecord> RankRecorder::end_epoch(std::optional<int64_t> samples) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!epoch_timer_.running()) return Error{"end of an epoch that was not started"};
  Interval t = epoch_timer_.stop();  // first: whatever follows, the epoch is over
  if (Status s = check_record_arguments("epoch", std::nullopt, samples); !s) {
    return Error{fmt::format("epoch {} not recorded: {}", current_epoch_, s.error().message), s.error().kind};
  }
  EpochRecord record{current_epoch_, t.start_unix_ns, t.end_unix_ns, t.duration_s, samples ? samples : epoch_samples_};
  after_append(epochs_.append(csv_line(record)));
  return record;
}

Status RankRecorder::begin_step(std::optional<int64_t> step, std::optional<int64_t> samples) {
  if (Status s = check_record_arguments("step", step, samples); !s) return s;
  std::lock_guard<std::mutex> lock(mutex_);
  if (finished_) return Error{"the run has finished; no more steps can be recorded"};
  if (step_timer_.running()) return Error{fmt::format("step started while step {} is still running", current_step_)};
  current_step_ = step.value_or(next_step_);
  step_samples_ = samples;
  // Saturating: a step numbered INT64_MAX must not overflow into a negative default for the next one.
  next_step_ = current_step_ < std::numeric_limits<int64_t>::max() ? current_step_ + 1 : current_step_;
  step_timer_.start();
  return Ok{};
}

Result<StepRecord> RankRecorder::end_step(std::optional<int64_t> samples) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!step_timer_.running()) return Error{"end of a step that was not started"};
  Interval t = step_timer_.stop();  // first: whatever follows, the step is over
  if (Status s = check_record_arguments("step", std::nullopt, samples); !s) {
    return Error{fmt::format("step {} not recorded: {}", current_step_, s.error().message), s.error().kind};
  }
  // steps.csv is created on the first step: runs that time only epochs get no empty steps.csv.
  StepRecord record{std::max<int64_t>(current_epoch_, 0), current_step_, t.start_unix_ns, t.duration_s,
                    samples ? samples : step_samples_};
  after_append(steps_.append(csv_line(record)));
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
  const FileSizeSignalBlock no_sigxfsz;  // its files and its message: past `ulimit -f`, errors only
  std::lock_guard<std::mutex> lock(mutex_);
  if (finished_) return Ok{};
  finished_ = true;
  Status gpu_status = gpu_ ? gpu_->stop() : Status(Ok{});
  // A last try for records kept after failed writes (the disk may have been freed since).
  for (MetricsFile* f : {&epochs_, &steps_}) {
    if (f->pending_bytes() > 0) (void)f->append("");
  }
  info_.status = success ? kStatusCompleted : kStatusFailed;
  info_.end_unix_ns = unix_now_ns();
  info_.write_errors = write_errors();
  if (info_.write_errors > 0 && info_.last_write_error.empty()) info_.last_write_error = epochs_.last_error();
  if (gpu_ && gpu_->write_errors() > 0) {
    info_.write_errors += gpu_->write_errors();
    info_.last_write_error = gpu_->last_write_error();
  }
  Status status = write_rank_json();
  for (const MetricsFile* f : {&epochs_, &steps_}) {
    if (f->pending_bytes() > 0 && status) {
      status = Error{fmt::format("{}: {} bytes of records could not be written: {}", f->path(), f->pending_bytes(),
                                 f->last_error()),
                     ErrorKind::kIo};
    }
  }
  if (owns_run_json()) {
    run_info_.status = info_.status;
    run_info_.end_unix_ns = info_.end_unix_ns;
    run_info_.write_errors = info_.write_errors;
    run_info_.last_write_error = info_.last_write_error;
    // The hosts of the ranks that have started, from their rank.json files (rank 0 knows no more).
    std::set<std::string> hosts(run_info_.hosts.begin(), run_info_.hosts.end());
    std::error_code ec;
    simdjson::dom::parser parser;
    for (const auto& entry : fs::directory_iterator(run_dir(), ec)) {
      simdjson::dom::element doc;
      std::string_view host;
      if (parser.load((entry.path() / kRankJson).string()).get(doc) == simdjson::SUCCESS &&
          doc["host"].get_string().get(host) == simdjson::SUCCESS && check_name("host", std::string(host))) {
        hosts.emplace(host);
      }
    }
    run_info_.hosts.assign(hosts.begin(), hosts.end());
    if (Status s = write_run_json(); !s && status) status = s;
  }
  if (status && !gpu_status) status = gpu_status;
  if (!status) {
    print_message(options_.messages, "scaleprof", status.error().message);
    std::fflush(options_.messages);
  }
  return status;
}

}  // namespace scaleprof::collect
