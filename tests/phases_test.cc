// Phases (analysis/phases.h) and the step decomposition (analysis/step_decomposition.h): exact values
// on small hand-written traces, and on every shared trace the property that the parts add up to each
// step exactly with none negative.
#include <gtest/gtest.h>

#include <filesystem>
#include <numeric>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/deepspeed_frames.h"
#include "analysis/exposed_collectives.h"
#include "analysis/phases.h"
#include "analysis/step_decomposition.h"
#include "host_trace_builder.h"
#include "test_paths.h"
#include "trace/kineto_reader.h"

namespace scaleprof::analysis {
namespace {

namespace fs = std::filesystem;
using testing::HostTraceBuilder;

// A CPU-only DDP step over gloo, [0, 1000): data loading, zero_grad, forward, backward with the
// gradient all-reduce (c10d op on the training thread, gloo's span on its worker thread), optimizer.
trace::RankTrace cpu_ddp_step() {
  HostTraceBuilder b;
  b.annotation("ProfilerStep#7", 0, 1000);
  b.annotation("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 10, 300);
  b.op("aten::stack", 100, 50);  // collate, inside the data loading
  b.annotation("Optimizer.zero_grad#SGD.zero_grad", 320, 20);
  b.annotation("DistributedDataParallel.forward", 350, 100);
  b.op("aten::linear", 360, 80);
  b.op("autograd::engine::evaluate_function: AddmmBackward0", 500, 100);
  b.op("autograd::engine::evaluate_function: torch::autograd::AccumulateGrad", 605, 100);
  b.op("c10d::allreduce_", 610, 90);
  b.annotation("gloo:all_reduce", 620, 230, /*tid=*/2);
  b.annotation("Optimizer.step#SGD.step", 900, 80);
  b.op("aten::add_", 910, 60);
  trace::RankTrace t = b.take();
  t.path = "cpu.json";
  return t;
}

// A GPU step, [0, 1000): a forward kernel, an NCCL all-reduce launched in backward, an optimizer kernel.
trace::RankTrace gpu_step() {
  HostTraceBuilder b;
  b.annotation("ProfilerStep#3", 0, 1000);
  b.annotation("enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", 10, 80);
  b.annotation("## forward ##", 100, 200);
  b.runtime("cudaLaunchKernel", 150, 5, /*correlation=*/1);
  b.kernel("sm90_gemm", 200, 200, trace::kNone, 1);
  b.op("autograd::engine::evaluate_function: AddmmBackward0", 450, 100);
  b.runtime("cudaLaunchKernel", 500, 5, 3);
  b.kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 520, 120, trace::kNone, 3);
  b.annotation("Optimizer.step#Adam.step", 600, 100);
  b.runtime("cudaLaunchKernel", 620, 5, 2);
  b.kernel("multi_tensor_apply_kernel", 650, 100, trace::kNone, 2);
  return b.take();
}

int64_t sum(const auto& values) {
  return std::accumulate(values.begin(), values.end(), int64_t{0});
}

TEST(HostRole, NamesTellThePhase) {
  using trace::Category;
  EXPECT_EQ(host_role("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", Category::kUserAnnotation),
            HostRole::kDataLoading);
  EXPECT_EQ(host_role("load_data", Category::kUserAnnotation), HostRole::kDataLoading);
  // Words, not substrings: DistributedDataParallel is no data loading.
  EXPECT_EQ(host_role("DistributedDataParallel.forward", Category::kUserAnnotation), HostRole::kForward);
  EXPECT_EQ(host_role("data", Category::kCpuOp), HostRole::kNone);  // a word rule is for annotations only
  EXPECT_EQ(host_role("Optimizer.step#SGD.step", Category::kUserAnnotation), HostRole::kOptimizer);
  EXPECT_EQ(host_role("AddmmBackward0", Category::kCpuOp), HostRole::kBackward);
  EXPECT_EQ(host_role("CheckpointFunctionBackward", Category::kCpuOp), HostRole::kBackward);
  // A custom autograd Function's forward, run in forward (FSDP2's, full backward hooks'): not backward.
  EXPECT_EQ(host_role("RegisterPostBackwardFunction", Category::kCpuOp), HostRole::kNone);
  EXPECT_EQ(host_role("BackwardHookFunction", Category::kCpuOp), HostRole::kNone);
  EXPECT_EQ(host_role("## backward ##", Category::kUserAnnotation), HostRole::kBackward);
  EXPECT_EQ(host_role("c10d::allreduce_", Category::kCpuOp), HostRole::kCommunication);
  EXPECT_EQ(host_role("gloo:all_reduce", Category::kUserAnnotation), HostRole::kCommunication);
  EXPECT_EQ(host_role("aten::mm", Category::kCpuOp), HostRole::kNone);
  EXPECT_EQ(host_role("Optimizer.step#SGD.step", Category::kCudaRuntime), HostRole::kNone);
}

TEST(Phases, CpuStepSplitsExactly) {
  const RankPhases p = compute_phases(cpu_ddp_step());
  EXPECT_EQ(p.path, "cpu.json");
  EXPECT_FALSE(p.has_kernels);
  ASSERT_EQ(p.steps.size(), 1u);
  const StepPhases& s = p.steps[0];
  EXPECT_EQ(s.step, 7);
  auto at = [&](StepPhase phase) { return s.host_ns[static_cast<size_t>(phase)]; };
  EXPECT_EQ(at(StepPhase::kDataLoading), 300);
  EXPECT_EQ(at(StepPhase::kOptimizer), 100);  // zero_grad 20 + step 80
  // First to last backward op, [500, 705), and on to the end of the all-reduce started inside: [500, 850).
  EXPECT_EQ(at(StepPhase::kBackward), 350);
  EXPECT_EQ(at(StepPhase::kForward), 150);  // first other op of the step thread to the backward: [350, 500)
  EXPECT_EQ(at(StepPhase::kOther), 100);
  EXPECT_EQ(sum(s.host_ns), 1000);
  ASSERT_EQ(s.regions.size(), 5u);
  EXPECT_EQ(s.regions[0].name, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__");
  EXPECT_EQ(s.regions[0].host_ns, 300);
  EXPECT_EQ(s.regions[2].name, "DistributedDataParallel.forward");
  EXPECT_EQ(s.regions[3].name, "gloo:all_reduce");  // a top-level region of the gloo thread
  EXPECT_EQ(s.regions[3].host_ns, 230);
  EXPECT_EQ(s.regions[4].name, "Optimizer.step#SGD.step");
  EXPECT_EQ(s.regions[4].calls, 1);
}

TEST(Phases, DeviceWorkCountsInThePhaseAndRegionOfItsLaunch) {
  const RankPhases p = compute_phases(gpu_step());
  EXPECT_TRUE(p.has_kernels);
  ASSERT_EQ(p.steps.size(), 1u);
  const StepPhases& s = p.steps[0];
  auto at = [&](StepPhase phase) { return s.host_ns[static_cast<size_t>(phase)]; };
  EXPECT_EQ(at(StepPhase::kDataLoading), 80);
  EXPECT_EQ(at(StepPhase::kForward), 350);  // the annotation and on to the backward op: [100, 450)
  EXPECT_EQ(at(StepPhase::kBackward), 100);
  EXPECT_EQ(at(StepPhase::kOptimizer), 100);
  EXPECT_EQ(at(StepPhase::kOther), 370);
  EXPECT_EQ(s.device_ns[static_cast<size_t>(StepPhase::kForward)], 200);
  EXPECT_EQ(s.device_ns[static_cast<size_t>(StepPhase::kBackward)], 120);
  EXPECT_EQ(s.device_ns[static_cast<size_t>(StepPhase::kOptimizer)], 100);
  EXPECT_EQ(sum(s.kernels), 3);
  // Regions: data loading, forward (its kernel), optimizer (its kernel), and the all-reduce launched
  // from a backward op outside every annotation.
  ASSERT_EQ(s.regions.size(), 4u);
  EXPECT_EQ(s.regions[1].name, "## forward ##");
  EXPECT_EQ(s.regions[1].kernels, 1);
  EXPECT_EQ(s.regions[1].device_ns, 200);
  EXPECT_EQ(s.regions[2].name, "Optimizer.step#Adam.step");
  EXPECT_EQ(s.regions[2].device_ns, 100);
  EXPECT_EQ(s.regions[3].name, "");
  EXPECT_EQ(s.regions[3].kernels, 1);
  EXPECT_EQ(s.regions[3].device_ns, 120);
}

TEST(Phases, TheLastOfSeveralStepsIsLeftOutUnlessAsked) {
  HostTraceBuilder b;
  b.annotation("ProfilerStep#1", 0, 100);
  b.annotation("ProfilerStep#2", 100, 100);
  const trace::RankTrace t = b.take();
  ASSERT_EQ(compute_phases(t).steps.size(), 1u);
  EXPECT_EQ(compute_phases(t).steps[0].host_ns[static_cast<size_t>(StepPhase::kOther)], 100);
  EXPECT_EQ(compute_phases(t, /*include_last_step=*/true).steps.size(), 2u);
  EXPECT_EQ(decompose_steps(t).steps.size(), 1u);
}

TEST(StepDecomposition, CpuStepSplitsExactly) {
  const RankDecomposition d = decompose_steps(cpu_ddp_step());
  EXPECT_FALSE(d.device);
  ASSERT_EQ(d.steps.size(), 1u);
  const StepDecomposition& s = d.steps[0];
  EXPECT_EQ(s.part(StepPart::kDataLoading), 300);
  EXPECT_EQ(s.part(StepPart::kOptimizer), 100);
  // Operators outside the collective: linear 80, AddmmBackward 100, AccumulateGrad around the c10d op 5 + 5.
  EXPECT_EQ(s.part(StepPart::kCompute), 190);
  // c10d and gloo [610, 850) less the 5 ns AccumulateGrad computes after the c10d op.
  EXPECT_EQ(s.part(StepPart::kExposedCommunication), 235);
  EXPECT_EQ(s.part(StepPart::kCollectiveWait), 0);
  EXPECT_EQ(s.part(StepPart::kHostOverhead), 20);  // the forward annotation around aten::linear
  EXPECT_EQ(s.part(StepPart::kIdle), 155);
  EXPECT_EQ(sum(s.part_ns), s.duration_ns());
}

// FSDP's own all-gather label (exposed_collectives.h: fsdp_collective_label) is communication where no
// operator runs in it, as `trace fsdp` counts it exposed; its copy-in operator stays compute, and a hook
// label around it (FSDP::pre_forward) is not communication.
TEST(StepDecomposition, FsdpAllGatherLabelIsCommunication) {
  HostTraceBuilder b;
  b.annotation("ProfilerStep#2", 0, 1000);
  b.annotation("FSDP::pre_forward (layers.2)", 100, 400);
  b.annotation("FSDP::all_gather (layers.2)", 120, 300);  // [120, 420): a sleep, then copy-in, then the op
  b.op("aten::cat", 300, 40);                             // the copy-in: compute
  b.op("c10d::_allgather_base_", 380, 40);
  b.annotation("gloo:all_gather", 390, 60, /*tid=*/2);  // gloo's work until 450
  b.op("aten::linear", 600, 100);
  trace::RankTrace t = b.take();
  const RankDecomposition d = decompose_steps(t);
  ASSERT_EQ(d.steps.size(), 1u);
  const StepDecomposition& s = d.steps[0];
  EXPECT_EQ(s.part(StepPart::kCompute), 140);  // cat 40 + linear 100
  // [120, 300) and [340, 450): the label without an operator, then the c10d op and gloo's span.
  EXPECT_EQ(s.part(StepPart::kExposedCommunication), 180 + 110);
  EXPECT_EQ(s.part(StepPart::kHostOverhead), 20 + 50);  // the pre_forward hook outside the all-gather
  EXPECT_EQ(sum(s.part_ns), s.duration_ns());
  EXPECT_TRUE(fsdp_collective_label("FSDP::post_backward_reduce (layers.0)"));
  EXPECT_FALSE(fsdp_collective_label("FSDP::all_gather_copy_out (layers.0)"));
  EXPECT_FALSE(fsdp_collective_label("FSDP::pre_forward (layers.0)"));
}

// DeepSpeed ZeRO-3's collective frames (deepspeed_frames.h: deepspeed_collective_frame, Python frames of
// with_stack=True) are communication where no operator runs in them, as FSDP's labels: the wrapper
// all_gather_coalesced (a sleep, the copy-in, the c10d op) and the wait on its handle (then the copy-out).
// In backward the fetch runs inside an autograd node, an operator enclosing the frames: the frames' time
// outside their own operators is still communication, not that node's compute. Other Python frames, a
// DeepSpeed one around the fetch or a `wait` outside DeepSpeed, stay no activity.
TEST(StepDecomposition, DeepSpeedCollectiveFramesAreCommunication) {
  HostTraceBuilder b;
  auto py = [&](std::string_view name, int64_t ts, int64_t dur) {
    b.op(name, ts, dur, 1, trace::kNone, trace::Category::kPythonFunction);
  };
  b.annotation("ProfilerStep#1", 0, 2000);
  py("nn.Module: Linear_2", 100, 1000);
  py("deepspeed/runtime/zero/partition_parameters.py(1539): all_gather_coalesced", 200, 400);  // [200, 600)
  b.op("aten::cat", 250, 50);                                                                  // the copy-in: compute
  b.op("c10d::_allgather_base_", 550, 30);
  b.annotation("gloo:all_gather", 560, 340, /*tid=*/2);                       // until 900
  py("deepspeed/runtime/zero/partition_parameters.py(760): wait", 620, 330);  // [620, 950)
  b.op("aten::cat", 900, 40);                                                 // the copy-out: compute
  b.op("aten::linear", 1000, 100);
  b.op("autograd::engine::evaluate_function: PreBackwardFunctionForModuleBackward", 1200, 500);
  py("deepspeed/runtime/zero/partitioned_param_coordinator.py(307): fetch_sub_module", 1210, 480);
  py("/src/DeepSpeed/deepspeed/runtime/zero/partition_parameters.py(1539): all_gather_coalesced", 1220, 180);
  b.op("c10d::_allgather_base_", 1300, 20);
  b.annotation("gloo:all_gather", 1310, 190, /*tid=*/2);                       // until 1500
  py("deepspeed/runtime/zero/partition_parameters.py(760): wait", 1420, 180);  // [1420, 1600)
  b.op("aten::cat", 1550, 40);
  py("threading.py(320): wait", 1800, 100);
  trace::RankTrace t = b.take();
  const RankDecomposition d = decompose_steps(t);
  ASSERT_EQ(d.steps.size(), 1u);
  const StepDecomposition& s = d.steps[0];
  // Forward: the copy-in 50, the copy-out 40, linear 100. Backward: the autograd node outside the frames,
  // [1200, 1220), [1400, 1420) and [1600, 1700), and the copy-out 40.
  EXPECT_EQ(s.part(StepPart::kCompute), 190 + 20 + 20 + 100 + 40);
  // Forward [200, 950) and backward [1220, 1600), the frames and gloo's spans, less the copies in them
  // and the autograd node between the frames.
  EXPECT_EQ(s.part(StepPart::kExposedCommunication), (750 - 50 - 40) + (380 - 40 - 20));
  EXPECT_EQ(s.part(StepPart::kHostOverhead), 0);
  // [0, 200) with the module's frame before the fetch, [950, 1000), [1100, 1200), [1700, 2000) with the
  // other wait.
  EXPECT_EQ(s.part(StepPart::kIdle), 200 + 50 + 100 + 300);
  EXPECT_EQ(sum(s.part_ns), s.duration_ns());
  EXPECT_TRUE(
      deepspeed_collective_frame("deepspeed/runtime/comm/coalesced_collectives.py(79): reduce_scatter_coalesced"));
  EXPECT_TRUE(deepspeed_collective_frame("deepspeed/runtime/zero/stage_1_and_2.py(2359): allreduce_bucket"));
  EXPECT_FALSE(deepspeed_collective_frame("deepspeed/runtime/pipe/p2p.py(87): wait"));
  EXPECT_FALSE(
      deepspeed_collective_frame("deepspeed/runtime/zero/partitioned_param_coordinator.py(307): fetch_sub_module"));
  EXPECT_FALSE(deepspeed_collective_frame("all_gather_coalesced"));
}

TEST(StepDecomposition, GpuStepPutsDeviceWorkFirst) {
  const RankDecomposition d = decompose_steps(gpu_step());
  EXPECT_TRUE(d.device);
  ASSERT_EQ(d.steps.size(), 1u);
  const StepDecomposition& s = d.steps[0];
  EXPECT_EQ(s.part(StepPart::kCompute), 200);
  EXPECT_EQ(s.part(StepPart::kExposedCommunication), 120);
  EXPECT_EQ(s.part(StepPart::kDataLoading), 80);
  // The optimizer's kernel (100) and the optimizer annotation while the device is idle, [640, 650).
  EXPECT_EQ(s.part(StepPart::kOptimizer), 110);
  // The forward annotation before its kernel starts [100, 200), the backward op before NCCL [450, 520).
  EXPECT_EQ(s.part(StepPart::kHostOverhead), 170);
  EXPECT_EQ(s.part(StepPart::kIdle), 320);
  EXPECT_EQ(sum(s.part_ns), 1000);
}

TEST(StepDecomposition, CollectiveWaitComesOutOfExposedCommunication) {
  StepDecomposition s;
  s.end_ns = 100;
  s.part_ns[static_cast<size_t>(StepPart::kExposedCommunication)] = 30;
  s.part_ns[static_cast<size_t>(StepPart::kIdle)] = 70;
  EXPECT_EQ(move_collective_wait(&s, 20), 20);
  EXPECT_EQ(s.part(StepPart::kCollectiveWait), 20);
  EXPECT_EQ(s.part(StepPart::kExposedCommunication), 10);
  EXPECT_EQ(move_collective_wait(&s, 50), 10);  // never more than what is exposed
  EXPECT_EQ(s.part(StepPart::kCollectiveWait), 30);
  EXPECT_EQ(sum(s.part_ns), 100);
}

TEST(StepDecomposition, NoStepsNoRows) {
  HostTraceBuilder b;
  b.op("aten::mm", 0, 10);
  trace::RankTrace t = b.take();
  EXPECT_TRUE(decompose_steps(t).steps.empty());
  EXPECT_TRUE(compute_phases(t).steps.empty());
}

// A real CUDA trace this project recorded (DDP over gloo, rank 0 of 2, tests/data/gpu-h200): step 2's
// exact split. gloo moves the gradients on the host, so its span is the exposed communication, and
// the training thread waits in backward until it ends.
TEST(StepDecomposition, RealGlooTraceOnAGpu) {
  const fs::path path =
      fs::path(SCALEPROF_SOURCE_DIR) / "tests" / "data" / "gpu-h200" / "traces" / "ddp_gloo_w2_rank0.pt.trace.json.gz";
  auto read = trace::read_kineto_trace(path.string());
  ASSERT_TRUE(read) << read.error().message;
  const RankDecomposition d = decompose_steps(read.value());
  ASSERT_EQ(d.steps.size(), 2u);  // steps 2 and 3; 4, the last, is left out
  const StepDecomposition& s = d.steps[0];
  EXPECT_EQ(s.step, 2);
  EXPECT_EQ(s.duration_ns(), 6'811'447);
  EXPECT_EQ(s.part(StepPart::kCompute), 1'270'049);
  EXPECT_EQ(s.part(StepPart::kExposedCommunication), 2'998'118);
  EXPECT_EQ(s.part(StepPart::kDataLoading), 0);
  EXPECT_EQ(s.part(StepPart::kOptimizer), 256'880);
  EXPECT_EQ(s.part(StepPart::kHostOverhead), 1'064'800);
  EXPECT_EQ(s.part(StepPart::kIdle), 1'221'600);

  const RankPhases p = compute_phases(read.value());
  ASSERT_EQ(p.steps.size(), 2u);
  const StepPhases& ph = p.steps[0];
  EXPECT_EQ(ph.host_ns[static_cast<size_t>(StepPhase::kForward)], 1'211'254);
  EXPECT_EQ(ph.host_ns[static_cast<size_t>(StepPhase::kBackward)], 4'571'101);
  EXPECT_EQ(ph.host_ns[static_cast<size_t>(StepPhase::kOptimizer)], 242'448);
  EXPECT_EQ(ph.device_ns[static_cast<size_t>(StepPhase::kBackward)], 1'015'776);
  ASSERT_EQ(ph.regions.size(), 5u);
  EXPECT_EQ(ph.regions[1].name, "DistributedDataParallel.forward");
  EXPECT_EQ(ph.regions[1].kernels, 10);
  EXPECT_EQ(ph.regions[1].device_ns, 234'305);
  EXPECT_EQ(ph.regions[3].name, "Optimizer.step#SGD.step");
  EXPECT_EQ(ph.regions[3].kernels, 3);
  EXPECT_EQ(ph.regions[4].name, "");  // backward's kernels: launched from autograd's thread, in no region
  EXPECT_EQ(ph.regions[4].kernels, 45);
}

// Every shared trace and every trace this project recorded: the parts add up to each step exactly.
std::vector<fs::path> shared_traces() {
  std::vector<fs::path> out;
  for (const fs::path& root : {fs::path(SCALEPROF_SHARED_DIR) / "traces" / "hta",
                               fs::path(SCALEPROF_SOURCE_DIR) / "tests" / "data" / "gpu-h200" / "traces"}) {
    if (!fs::is_directory(root)) continue;
    for (const auto& e : fs::recursive_directory_iterator(root)) {
      const std::string name = e.path().filename().string();
      if (e.is_regular_file() && (name.ends_with(".json") || name.ends_with(".json.gz"))) out.push_back(e.path());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(StepDecomposition, PartsAddUpOnEverySharedTrace) {
  const std::vector<fs::path> traces = shared_traces();
  if (traces.size() < 5) GTEST_SKIP() << "shared traces not found at " << SCALEPROF_SHARED_DIR;
  int64_t steps = 0, kernels = 0;
  for (const fs::path& path : traces) {
    SCOPED_TRACE(path.string());
    trace::ParseOptions options;
    options.lenient = true;
    auto read = trace::read_kineto_trace(path.string(), options);
    ASSERT_TRUE(read) << read.error().message;
    const trace::RankTrace& t = read.value();
    for (bool last : {false, true}) {
      const RankDecomposition d = decompose_steps(t, last);
      const RankPhases p = compute_phases(t, last);
      ASSERT_EQ(d.steps.size(), p.steps.size());
      for (size_t k = 0; k < d.steps.size(); ++k) {
        const StepDecomposition& s = d.steps[k];
        EXPECT_EQ(sum(s.part_ns), s.duration_ns()) << "step " << s.step;
        for (int64_t v : s.part_ns) EXPECT_GE(v, 0) << "step " << s.step;
        const StepPhases& ph = p.steps[k];
        EXPECT_EQ(sum(ph.host_ns), ph.duration_ns()) << "step " << ph.step;
        for (int64_t v : ph.host_ns) EXPECT_GE(v, 0) << "step " << ph.step;
        // Every device event launched in the step is in one phase and one region (or in none: "").
        int64_t in_regions = 0;
        for (const RegionTime& r : ph.regions) in_regions += r.kernels;
        EXPECT_EQ(in_regions, sum(ph.kernels));
        steps += last ? 0 : 1;
        kernels += last ? 0 : sum(ph.kernels);
      }
    }
  }
  EXPECT_GT(steps, 20);
  EXPECT_GT(kernels, 1000);
}

}  // namespace
}  // namespace scaleprof::analysis
