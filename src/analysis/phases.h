// Phases and record_function regions of each profiled step of one rank (`scaleprof trace phases`).
//
// Per ProfilerStep of the analysis window (the last step dropped as in the HTA reports unless
// include_last_step; every step when the rank has fewer than two), the step's wall time is split
// into five phases that add up to it exactly (integer nanoseconds). Each instant of the step is given
// to the first of these that covers it, on any host thread of the rank:
//   1. data loading: host events named like data loading (host_role() below: `enumerate(DataLoader)#…`,
//      any name containing "DataLoader", user annotations with a word "data", "loader", "batch");
//   2. optimizer: `Optimizer.step#…`, `Optimizer.zero_grad#…` and user annotations with a word
//      "optimizer" / "optim";
//   3. backward: from the first to the last backward event of the step (`autograd::engine::
//      evaluate_function: …`, ops named `…Backward0` or `…Backward` (backward nodes, not a custom
//      Function's forward such as FSDP2's `RegisterPostBackwardFunction`), annotations with a word "backward"), one
//      span (the training thread is blocked in `loss.backward()` between them), extended over the host collectives that
//      start from its start until the step thread's next other operator (DDP's gradient all-reduce, which gloo runs on
//      its own thread and backward waits for);
//   4. forward: annotations with a word "forward", and the span from the step thread's first other
//      host operator to the start of the backward span (to its last operator without one);
//   5. other: the rest (time before the first operator, after the optimizer, between phases).
// A record_function region is a user annotation that no other user annotation encloses on its thread
// (ProfilerStep#N itself excepted): per step and name, its calls and the length of the union of its
// intervals inside the step (host time; regions on different threads may overlap).
// Device work is attributed through its launch: the host runtime/driver call with the event's
// correlation id (else the host op with its External id, as profiler_steps.h does). A device event
// counts in the step whose window holds its launch, in the phase covering the launch instant, and in
// the region that encloses the launch on the launching thread ("" when none does). This works on every
// trace that records launches, whether or not it has gpu_user_annotation spans (HTA needs those).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/intervals.h"
#include "analysis/profiler_steps.h"
#include "trace/event_table.h"

namespace scaleprof::analysis {

enum class StepPhase : uint8_t { kDataLoading, kForward, kBackward, kOptimizer, kOther };
inline constexpr int kStepPhaseCount = 5;
// "data_loading", "forward", "backward", "optimizer", "other"
std::string_view step_phase_name(StepPhase phase);

// What a host event says about the step by its name alone (the rules above).
enum class HostRole : uint8_t { kNone, kDataLoading, kOptimizer, kBackward, kForward, kCommunication };
HostRole host_role(std::string_view name, trace::Category category);

// host_role by name id and category, each pair decided once: a trace repeats a few thousand names
// millions of times.
class HostRoles {
 public:
  explicit HostRoles(const trace::StringPool& strings) : strings_(strings), roles_(2 * strings.size(), kUnset) {}
  HostRole of(trace::StringId name, trace::Category category) {
    if (!trace::is_cpu_op_category(category)) return HostRole::kNone;
    uint8_t& role = roles_[2 * static_cast<size_t>(name) + (category == trace::Category::kUserAnnotation ? 1 : 0)];
    if (role == kUnset) role = static_cast<uint8_t>(host_role(strings_.view(name), category));
    return static_cast<HostRole>(role);
  }

 private:
  static constexpr uint8_t kUnset = 0xFF;
  const trace::StringPool& strings_;
  std::vector<uint8_t> roles_;  // by 2 × name id + (annotation ? 1 : 0)
};

// The ProfilerStep windows the phases and the decomposition report: the analysis window's steps.
std::vector<ProfilerStepWindow> analysed_steps(const trace::RankTrace& trace, bool include_last_step);

// For each event row, the row of the host call that launched it (device work only), or -1.
std::vector<int64_t> launch_rows(const trace::RankTrace& trace);

struct RegionTime {
  std::string name;       // "" collects the device work launched outside every region
  int64_t calls = 0;      // annotations of this name starting in the step
  int64_t host_ns = 0;    // union of their intervals inside the step
  int64_t kernels = 0;    // device events launched inside them
  int64_t device_ns = 0;  // plain sum of those events' durations
};

struct StepPhases {
  int64_t step = -1;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  std::array<int64_t, kStepPhaseCount> host_ns{};    // adds up to end_ns - start_ns
  std::array<int64_t, kStepPhaseCount> kernels{};    // device events launched in each phase
  std::array<int64_t, kStepPhaseCount> device_ns{};  // their summed durations
  std::vector<RegionTime> regions;                   // by first start in the step; "" last

  int64_t duration_ns() const { return end_ns - start_ns; }
};

struct RankPhases {
  std::string path;  // the trace file, for messages
  std::vector<StepPhases> steps;
  bool has_kernels = false;  // the rank has device work at all
};

RankPhases compute_phases(const trace::RankTrace& trace, bool include_last_step = false);

// The instants of one analysed step by phase, as compute_phases assigns them: for analyses that place
// an event of the step in its phase (exposed_collectives.h).
struct StepPhaseSpans {
  int64_t step = -1;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  // Data loading, optimizer, backward, forward: the first set holding an instant gives its phase.
  std::array<std::vector<Interval>, 4> sets;
  StepPhase phase_at(int64_t t) const;
};
// compute_phases, and each analysed step's phase sets into `spans` (by start, one per step).
RankPhases compute_phases(const trace::RankTrace& trace, bool include_last_step, std::vector<StepPhaseSpans>* spans);

}  // namespace scaleprof::analysis
