// Reads the text DeepSpeed's flops profiler writes (`FlopsProfiler.print_model_profile(output_file=...)`,
// `deepspeed/profiling/flops_profiler/profiler.py`; the DeepSpeed engine writes it at `flops_profiler.
// profile_step` to the config's `output_file`, e.g. `profiler_ds.txt`), checked against DeepSpeed 0.19.8.
//
// The file, in order (docs/flops.md, "DeepSpeed's flops profiler"):
//   ---- DeepSpeed Flops Profiler ----              banner
//   Profile Summary at step N:
//   Notations: ...                                   up to a blank line
//   label:<spaces>value                              the summary, up to a blank line ("params per GPU",
//                                                    "fwd MACs per GPU", "fwd flops per GPU", "fwd latency"
//                                                    required; world size, bwd/step/iter latency with an engine)
//   ---- Aggregated Profile per GPU ----             top modules per depth (not kept: the tree has them)
//   ---- Detailed Profile per GPU ----               optional (detailed=False leaves it out): notes, then
//   Root(                                            the model's repr, each module's extra_repr replaced by
//     P = x% Params, M MACs = y% MACs, D = z% latency, R FLOPS[, the module's own extra_repr]
//     (name): Leaf(P = ..., R FLOPS[, extra])
//     (0-11): 12 x Block(                            torch's ModuleList folds equal consecutive reprs
//   )
//   ------------                                     closing rule
//
// Every figure is printed rounded to two decimals of its unit ("3.33 M", "8.61 ms"); each is kept with
// that rounding (Figure::rounding), so a comparison can say what "equal" may mean. A module's FLOPs are
// not printed: only its FLOP/s (FLOPs over its latency), so they are known as FLOP/s × latency, within
// both roundings.
//
// Bad input is a one-line error naming the file and line; the file is read whole with a cap, nesting
// and name lengths are bounded (a module's dotted path is built when asked, never stored per module).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace scaleprof::trace {

// A figure as DeepSpeed printed it: the value in base units (parameters, MACs, FLOPs, seconds, FLOP/s)
// and the most the true value may differ from it (half of the printed rounding step).
struct DsFigure {
  double value = 0;
  double rounding = 0;
};

struct DsModule {
  std::string name;          // the attribute name in its parent ("fc", "0", "0-11" for a folded run); "" root
  std::string cls;           // the class name ("Linear")
  int64_t parent = -1;       // index in DsProfile::modules; -1 for the root
  int32_t depth = 0;         // 0 for the root
  int64_t repeat = 1;        // "(0-11): 12 x Block(": 12 modules, each with these figures
  bool has_figures = false;  // false for a container whose repr prints none (ModuleList, ModuleDict)
  DsFigure params;
  DsFigure macs;
  DsFigure latency_s;
  DsFigure flops_per_s;
  int64_t line = 0;  // where the module starts in the file (1-based)
  // FLOPs of one of the `repeat` modules: FLOP/s × latency, and how far that may be off.
  DsFigure flops() const;
};

struct DsProfile {
  std::string path;
  int64_t profile_step = 0;  // "Profile Summary at step N"
  // The summary's figures (per GPU, i.e. this process).
  DsFigure params;
  DsFigure fwd_macs;
  DsFigure fwd_flops;
  DsFigure fwd_latency_s;
  // With the DeepSpeed engine only.
  std::optional<int64_t> world_size;
  std::optional<int64_t> data_parallel_size;
  std::optional<int64_t> model_parallel_size;
  std::optional<int64_t> batch_size_per_gpu;
  std::optional<DsFigure> bwd_latency_s;
  std::optional<DsFigure> step_latency_s;
  std::optional<DsFigure> iter_latency_s;
  // The detailed tree in the file's (pre-)order, root first; empty when detailed=False.
  std::vector<DsModule> modules;
  // Modules the tree stands for: folded runs counted as their `repeat` (ancestors' repeats included).
  int64_t module_count = 0;
};

// The module's dotted path as torch's named_modules() spells it ("2.fc"; "" for the root; a folded run
// "layers.0-11").
std::string ds_module_path(const DsProfile& profile, size_t index);

// Limits the reader keeps to.
inline constexpr size_t kMaxDsProfileBytes = size_t{64} << 20;
inline constexpr int32_t kMaxDsDepth = 64;
inline constexpr size_t kMaxDsNameBytes = 256;

// Parses `text` (named `name` in errors).
Result<DsProfile> parse_deepspeed_profile(std::string_view text, const std::string& name);
// Reads and parses the file at `path` (at most kMaxDsProfileBytes).
Result<DsProfile> read_deepspeed_profile(const std::string& path);

}  // namespace scaleprof::trace
