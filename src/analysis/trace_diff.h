// `scaleprof trace diff A B`: two sets of ranks (each reduced to DiffRankSummary, diff_summary.h)
// compared figure by figure.
//
// Every figure of a side is a per-step value on each (rank, kept step) of that side: its median over
// them is the side's figure, and its spread is the interquartile range over them (p75 - p25, linear
// interpolation as numpy), so one slow rank or step moves neither. A change (B - A) is significant
// only when it is non-zero and larger than the larger of the two spreads: identical sides have no
// significant change, and a change inside the noise of either side is shown but not flagged.
//
// When both sides know their samples per step and these differ, every time is divided by them
// (per sample), so a run with twice the batch is not reported as twice as slow; counts stay per step.
//
// Rows:
// * steps: the step's wall time, and (where a side has device work) the GPU busy time of the work
//   launched in it;
// * operators: matched by name, self time per step (they add up to the step on the step's thread);
// * kernels: matched by what launched them before their names: first the same launch path, kernel
//   type and name; then, of what is left, the same launch path and type (the same GEMM under another
//   implementation); then, of what is left, the same name from another path; the rest is only in A
//   or only in B. Groups matched at the second and third level are summed per side.
// Rows are ordered significant first, then by the size of the change, then by name.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/diff_summary.h"
#include "core/diagnostic.h"

namespace scaleprof::analysis {

struct DiffSide {
  std::vector<DiffRankSummary> ranks;  // in rank order
  double samples_per_step = 0;         // 0: unknown
};

enum class DiffMatch : uint8_t { kSame, kLaunch, kName, kOnlyA, kOnlyB };
// "launch+name" (operators: "name"), "launch", "name", "only A", "only B"
std::string_view diff_match_name(DiffMatch match, bool kernel);

struct DiffFigure {
  double median = std::numeric_limits<double>::quiet_NaN();  // ns (per sample when normalised)
  double spread = std::numeric_limits<double>::quiet_NaN();  // p75 - p25, same unit
  double count = std::numeric_limits<double>::quiet_NaN();   // median calls / events per step
};

struct DiffRow {
  std::string name;    // A's name (B's for a row only in B); several names: the first and "(+N)"
  std::string name_b;  // B's name where it differs
  std::string path;    // kernels: A's launch path (B's for a row only in B)
  std::string path_b;  // kernels: B's launch path where it differs
  KernelType type = KernelType::kComputation;
  DiffMatch match = DiffMatch::kSame;
  DiffFigure a, b;                                               // a side without the row has 0 on every step
  double delta = 0;                                              // b.median - a.median
  double change_pct = std::numeric_limits<double>::quiet_NaN();  // delta / a.median; NaN when a is 0
  bool significant = false;
};

struct TraceDiff {
  bool per_sample = false;  // times divided by samples per step (both known and different)
  std::vector<DiffRow> steps;
  std::vector<DiffRow> operators;
  std::vector<DiffRow> kernels;
  // What the two sides do not share, one sentence each, naming the side: a rank without ProfilerSteps
  // (kError: its figures are not per step), different ranks or step numbers (kWarning). The figures
  // are computed all the same.
  std::vector<Diagnostic> problems;
};

TraceDiff diff_traces(const DiffSide& a, const DiffSide& b);

}  // namespace scaleprof::analysis
