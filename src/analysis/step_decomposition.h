// Each profiled step of one rank split into exclusive parts that add up exactly to its wall time
// (integer nanoseconds): what the rank was waiting on at each instant, on its critical timeline,
// never sums over threads or streams (`scaleprof trace decompose`; rules also in docs/report.md).
//
// Steps: those of the analysis window (phases.h: analysed_steps). The activity of the rank is put in
// merged interval sets over the whole trace, each set is clipped to the step's window and the window
// is swept once (intervals.h: sweep_coverage); every instant goes to the first set covering it in the
// order below, and the instants no set covers are idle.
//
// Traces with device work (kernels, copies, sets on a stream; any device):
//   1. compute: device work that is not communication, launched outside the optimizer;
//   2. optimizer: device work launched inside an optimizer region (phases.h: host_role);
//   3. exposed communication: communication kernels (kernel_classify.h), and host collectives
//      (gloo's spans, c10d ops: gloo moves the data on the host even on GPU runs; FSDP's own all-gather
//      and reduce labels; DeepSpeed's collective frames) — only the instants
//      no device computation hides;
//   4. data loading: host data-loading regions, the device being idle;
//   5. optimizer: host optimizer regions, the device being idle;
//   6. host overhead: any other host event (operators, annotations, runtime and driver calls,
//      synchronisation), the device being idle;
//   7. idle: nothing recorded.
// CPU-only traces (no device work; gloo):
//   1. data loading; 2. optimizer (host regions, with everything inside them);
//   3. compute: host operators (cpu_op) other than collectives, on any thread, without the time a
//      thread spends inside a collective op (c10d::allreduce_ waits inside AccumulateGrad) or inside
//      DeepSpeed's collective frames outside the operators that start in them (a ZeRO-3 backward fetch
//      waits inside the autograd node that runs DeepSpeed's hook);
//   4. exposed communication: host collectives when no thread computes (and FSDP's own all-gather and
//      reduce labels, exposed_collectives.h: fsdp_collective_label, and DeepSpeed's Python frames around
//      its collectives and its wait for a ZeRO-3 all-gather, deepspeed_frames.h:
//      deepspeed_collective_frame, where no operator runs in them);
//   5. host overhead: other host events (user annotations that enclose no operator, ...);
//   6. idle.
// python_function events (with_stack) are not activity, DeepSpeed's collective frames excepted: a
// Python frame encloses the waits below it.
// Waiting at a collective for the last rank needs the other ranks: `collective_wait_ns` starts at 0
// and the report moves into it, per rank and step, min(exposed communication, the rank's summed wait
// at the step's matched collectives: collective_match.h's latest start − its start) with
// move_collective_wait(); a rank loaded alone keeps all of it as exposed communication.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "trace/event_table.h"

namespace scaleprof::analysis {

enum class StepPart : uint8_t {
  kCompute,
  kExposedCommunication,
  kCollectiveWait,
  kDataLoading,
  kOptimizer,
  kHostOverhead,
  kIdle,
};
inline constexpr int kStepPartCount = 7;
// "compute", "exposed_communication", "collective_wait", "data_loading", "optimizer", "host_overhead", "idle"
std::string_view step_part_name(StepPart part);

// The parts of a step from its start up to an instant inside it (decompose_steps' `cuts`).
struct StepCut {
  int64_t time_ns = 0;
  size_t step = 0;                                // index into RankDecomposition::steps
  std::array<int64_t, kStepPartCount> part_ns{};  // adds up to time_ns - the step's start
};

struct StepDecomposition {
  int64_t step = -1;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  std::array<int64_t, kStepPartCount> part_ns{};  // adds up to end_ns - start_ns

  int64_t duration_ns() const { return end_ns - start_ns; }
  int64_t part(StepPart p) const { return part_ns[static_cast<size_t>(p)]; }
};

struct RankDecomposition {
  std::string path;
  bool device = false;  // the rank has device work (the first order above)
  std::vector<StepDecomposition> steps;
  // The cuts inside the steps, in time order (decompose_steps' `cuts`; used where the rank is reduced,
  // never stored with the rank's results).
  std::vector<StepCut> cuts;
};

// `cuts`: sorted instants (the rank's own clock) at which each step's parts so far are also wanted
// (RankDecomposition::cuts; those in [start, end) of a step): the what-if model splits a step at the
// rank's arrivals at collectives (tables/step_timeline.h). One pass, as without them.
RankDecomposition decompose_steps(const trace::RankTrace& trace, bool include_last_step = false,
                                  std::span<const int64_t> cuts = {});

// Moves min(wait_ns, exposed communication) of the step from exposed communication to waiting at a
// collective; the parts still add up to the step. Returns the time moved.
int64_t move_collective_wait(StepDecomposition* step, int64_t wait_ns);

}  // namespace scaleprof::analysis
