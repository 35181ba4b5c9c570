// FLOPs of one rank's trace, from the shapes the profiler recorded (flop_formulas.h), with the time
// they took: `scaleprof trace flops`.
//
// Which calls count. FlopCounterMode counts the aten operators the dispatcher runs, once each; the
// trace holds every level of the call tree (aten::linear > aten::addmm; aten::conv2d >
// aten::convolution > aten::_convolution > aten::cudnn_convolution). Calls nest by time on their
// thread (as in the operator table), and among the calls that have a formula:
// * a matmul, convolution or attention call counts when no other such call is nested in it (the
//   innermost: aten::addmm in aten::linear, aten::mm in aten::matmul, the bmm's of a math SDPA);
// * an elementwise or normalisation call counts when no call with a formula is nested in it and it is
//   not inside a counted matmul/convolution/attention call (a bias add inside a convolution is the
//   convolution's, which, like FlopCounterMode, does not count it).
// So no FLOP is counted twice, and a level whose shapes do not fit its formula (an old trace without
// Concrete Inputs) falls back to the next level up.
//
// Time. A call's device time is the summed duration of the kernels launched inside it (the runtime
// call with the kernel's correlation id lies within the call on the call's thread; without a runtime
// call, the host op with the kernel's External id); copies, sets and sync records are left out. Its
// host time is its duration. Achieved FLOP/s divide by device time where the trace has kernels, by
// host time otherwise (CPU traces). A kernel gets FLOPs only from calls that launched exactly that
// one kernel (a call with several cannot say how its FLOPs split between them).
//
// Steps. A call belongs to the ProfilerStep#N window (profiler_steps.h) that contains its start; the
// step's achieved FLOP/s are its FLOPs over its wall time.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/flop_formulas.h"
#include "trace/event_table.h"

namespace scaleprof::analysis {

// FLOPs split by the dtype of the calls' main input: what MFU weighs against each dtype's peak.
using DtypeFlops = std::array<int64_t, kFlopDtypeCount>;

struct FlopOperator {
  std::string name;
  FlopClass cls = FlopClass::kMatmul;
  FlopDtype dtype = FlopDtype::kOther;
  int64_t calls = 0;
  int64_t flops = 0;
  int64_t host_ns = 0;
  int64_t device_ns = 0;
  int64_t kernels = 0;  // device events attributed
};

struct FlopKernel {
  std::string name;
  FlopClass cls = FlopClass::kMatmul;
  FlopDtype dtype = FlopDtype::kOther;
  int64_t calls = 0;
  int64_t flops = 0;
  int64_t device_ns = 0;
};

struct FlopStep {
  int64_t step = -1;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t calls = 0;
  int64_t flops = 0;           // every counted call
  DtypeFlops compute_flops{};  // matmul, convolution and attention calls, by dtype (for MFU)
  int64_t duration_ns() const { return end_ns - start_ns; }
};

struct RankFlops {
  std::vector<FlopOperator> operators;  // per (name, dtype), by FLOPs, largest first
  std::vector<FlopKernel> kernels;      // per (kernel name, dtype), by FLOPs, largest first
  std::vector<FlopStep> steps;          // by start time
  bool has_device = false;              // the trace has kernels: times are device times
  int64_t shaped_calls = 0;             // cpu_op calls with Input Dims
  int64_t counted_calls = 0;            // calls whose FLOPs count
  int64_t unmodelled_calls = 0;         // calls with a formula's name whose shapes did not fit it
  int64_t flops = 0;                    // every counted call
  DtypeFlops compute_flops{};           // matmul/convolution/attention, by dtype
  int64_t flop_counter_flops = 0;       // the same summed: what FlopCounterMode counts
  int64_t span_ns = 0;                  // first event start to last event end (the time without steps)
};

RankFlops compute_flops(const trace::RankTrace& trace);

// The calls compute_flops counts, one each, in event order: what other views of the same FLOPs sum
// (per nn.Module for the comparison with DeepSpeed's flops profiler, module_flops.h).
struct CountedFlopCall {
  uint32_t event = 0;
  int64_t flops = 0;
  FlopClass cls = FlopClass::kMatmul;
};
std::vector<CountedFlopCall> counted_flop_calls(const trace::RankTrace& trace);

}  // namespace scaleprof::analysis
