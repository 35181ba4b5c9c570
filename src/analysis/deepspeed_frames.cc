#include "analysis/deepspeed_frames.h"

#include "analysis/phases.h"

namespace scaleprof::analysis {

DeepSpeedFrame deepspeed_frame(std::string_view name) {
  const size_t at = name.find("deepspeed/");
  const size_t paren = name.find(".py(");
  const size_t colon = name.find("): ");
  if (at == std::string_view::npos || paren == std::string_view::npos || colon == std::string_view::npos ||
      paren < at || colon < paren) {
    return {};
  }
  return {name.substr(at, paren + 3 - at), name.substr(colon + 3)};
}

bool deepspeed_wraps_collective(std::string_view function) {
  return function == "all_gather_coalesced" || function == "reduce_scatter_coalesced" ||
         function == "allreduce_bucket" || function == "all_gather_dp_groups";
}

int deepspeed_engine_phase(const DeepSpeedFrame& frame) {
  if (!frame.file.ends_with("deepspeed/runtime/engine.py")) return -1;
  if (frame.function == "forward") return static_cast<int>(StepPhase::kForward);
  if (frame.function == "backward") return static_cast<int>(StepPhase::kBackward);
  if (frame.function == "step") return static_cast<int>(StepPhase::kOptimizer);
  return -1;
}

bool deepspeed_collective_frame(std::string_view name) {
  const DeepSpeedFrame f = deepspeed_frame(name);
  if (f.function.empty()) return false;
  return deepspeed_wraps_collective(f.function) ||
         (f.function == "wait" && f.file.ends_with("deepspeed/runtime/zero/partition_parameters.py"));
}

}  // namespace scaleprof::analysis
