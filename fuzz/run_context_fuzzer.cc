// libFuzzer target for the run context: the input is environment variables, one NAME=value per line
// (torchrun, SLURM, Open MPI, Horovod, DeepSpeed, PMI, SCALEPROF_*, CUDA_VISIBLE_DEVICES...). Whatever
// they say, detection gives a consistent context or a one-line error, the names that reach a path
// stay below the root, and the GPU interval, device indices and a torchrun command line parse
// without a crash.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "collect/environment.h"
#include "collect/gpu_library.h"
#include "collect/gpu_monitor.h"
#include "collect/run_context.h"
#include "collect/run_names.h"
#include "collect/run_records.h"
#include "launch/wrapper.h"

namespace {

bool one_line(const std::string& s) {
  return s.find('\n') == std::string::npos;
}

std::vector<std::string> words(std::string_view text) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t space = std::min(text.find(' ', pos), text.size());
    if (space > pos) out.emplace_back(text.substr(pos, space - pos));
    pos = space + 1;
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace scaleprof::collect;
  std::string_view input(reinterpret_cast<const char*>(data), size);
  Environment env;
  while (!input.empty()) {
    const size_t nl = std::min(input.find('\n'), input.size());
    std::string_view line = input.substr(0, nl);
    if (const size_t eq = line.find('='); eq != std::string_view::npos && eq > 0) {
      env.set(std::string(line.substr(0, eq)), std::string(line.substr(eq + 1)));
    }
    input.remove_prefix(std::min(nl + 1, input.size()));
  }
  env.set("SCALEPROF_ROOT", "/fuzz-root");
  auto detected = detect_run_context(env);
  if (!detected.ok()) {
    if (!one_line(detected.error().message)) __builtin_trap();
    return 0;
  }
  RunContext ctx = detected.value();
  if (ctx.rank < 0 || ctx.rank >= ctx.world_size || ctx.node_rank < 0 || ctx.node_rank >= ctx.nodes ||
      ctx.attempt < 0 || ctx.local_rank < 0) {
    __builtin_trap();
  }
  if (ctx.run.empty()) ctx.run = derived_run_name(ctx, env);
  if (ctx.run.empty()) ctx.run = generated_run_name(ctx.strategy, ctx.world_size, 0, 0);
  if (scaleprof::Status names = check_context_names(ctx); names.ok()) {
    // Checked names keep every path below the root.
    const std::string dir = run_dir_path(ctx.root, ctx.experiment, ctx.run, ctx.attempt);
    if (dir.rfind("/fuzz-root/", 0) != 0 || dir.find("/../") != std::string::npos ||
        node_dir_name(ctx.host).find('/') != std::string::npos) {
      __builtin_trap();
    }
  } else if (!one_line(names.error().message)) {
    __builtin_trap();
  }
  for (const std::string& id : ctx.visible_devices) {
    auto index = numeric_device_index(id, 8, "fuzz");
    if (index.ok() && index.value() && (*index.value() < 0 || *index.value() >= 8)) __builtin_trap();
  }
  if (auto interval = env.get(kEnvGpuInterval)) {
    auto parsed = parse_interval(*interval);
    if (parsed.ok() && parsed.value() < kMinGpuInterval) __builtin_trap();
  }
  if (auto command = env.get("COMMAND")) {
    auto [world, nodes] = scaleprof::launch::torchrun_world(words(*command));
    if (world < 0 || nodes < 0) __builtin_trap();
  }
  return 0;
}
