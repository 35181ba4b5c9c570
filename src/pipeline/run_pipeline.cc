#include "pipeline/run_pipeline.h"

#include <fmt/format.h>

#include "collect/environment.h"
#include "collect/gpu_monitor.h"

namespace scaleprof::pipeline {

Result<launch::WrapperResult> run_training(const RunOptions& opt) {
  launch::WrapperOptions w;
  w.overrides.root = opt.root;
  w.overrides.experiment = opt.experiment;
  w.overrides.strategy = opt.strategy;
  w.overrides.run = opt.run_name;
  auto interval = collect::parse_interval(opt.gpu_interval);
  if (!interval) return Error{fmt::format("--gpu-interval: {}", interval.error().message), ErrorKind::kUsage};
  w.gpu_interval = interval.value();
  w.gpu = !opt.no_gpu;
  w.command = opt.command;
  if (w.command.empty()) {
    return Error{"no command given: scaleprof run [options] -- CMD ARGS...", ErrorKind::kUsage};
  }
  return launch::run_wrapped(w, collect::Environment::from_process());
}

}  // namespace scaleprof::pipeline
