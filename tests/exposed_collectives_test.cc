// Exposed collectives (analysis/exposed_collectives.h): exact values on small hand-written traces, CPU
// (gloo: the c10d op, FSDP's label, gloo's span on its worker thread) and GPU (communication kernels
// against computation kernels), fully hidden, partly hidden and fully exposed; and input that lacks
// what the analysis uses (no gloo span, no label, no step).
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "analysis/exposed_collectives.h"
#include "engine/rank_results_store.h"
#include "host_trace_builder.h"

namespace scaleprof::analysis {
namespace {

using testing::HostTraceBuilder;

const ExposedRow* exposed_row_of(const std::vector<ExposedRow>& rows, StepPhase phase, std::string_view type,
                                 std::string_view layer) {
  for (const ExposedRow& r : rows) {
    if (r.phase == phase && r.type == type && r.layer == layer) return &r;
  }
  return nullptr;
}

// One FSDP step on gloo, [0, 10000): layers.0's all-gather in forward, fully exposed (the training
// thread waits for gloo's work); its reduce-scatter in backward, partly hidden under the autograd op
// that runs on; a DDP-style all-reduce without an FSDP label and without gloo work recorded.
trace::RankTrace cpu_fsdp_step() {
  HostTraceBuilder b;
  b.annotation("ProfilerStep#1", 0, 10000);
  b.annotation("FSDP::pre_forward (layers.0)", 100, 1000);
  b.annotation("FSDP::all_gather (layers.0)", 100, 900);
  b.op("c10d::_allgather_base_", 200, 100);
  b.op("record_param_comms", 210, 50);  // nested in the c10d op: not a call of its own
  b.annotation("gloo:all_gather", 250, 700, /*tid=*/2);
  b.op("aten::linear", 1200, 800);
  b.op("autograd::engine::evaluate_function: AddmmBackward0", 3000, 2000);
  b.annotation("FSDP::post_backward_reduce (layers.0)", 3000, 200);
  b.op("aten::div_", 3000, 50);
  b.op("c10d::_reduce_scatter_base_", 3050, 50);
  b.annotation("gloo:all_reduce", 3100, 900, /*tid=*/2);
  b.op("aten::mm", 3300, 400);
  b.op("c10d::allreduce_", 6000, 100);  // no gloo span after it: ends with the op
  b.annotation("Optimizer.step#SGD.step", 8000, 1000);
  b.op("aten::add_", 8100, 500);
  trace::RankTrace t = b.take();
  t.path = "cpu.json";
  return t;
}

TEST(ExposedCollectives, CpuFullyExposedAllGatherFromFsdpLabelToGlooEnd) {
  const RankExposedCollectives e = exposed_collectives(cpu_fsdp_step(), false, 0);
  EXPECT_FALSE(e.gpu);
  EXPECT_EQ(e.steps, 1);
  EXPECT_EQ(e.calls, 3);
  EXPECT_EQ(e.labelled, 2);
  const ExposedRow* ag = exposed_row_of(e.layers, StepPhase::kForward, "allgather", "layers.0");
  ASSERT_NE(ag, nullptr);
  EXPECT_EQ(ag->calls, 1);
  EXPECT_EQ(ag->span_ns, 850);      // FSDP::all_gather's start (100) to gloo's end (950)
  EXPECT_EQ(ag->exposed_ns, 850);   // the thread runs no operator but the c10d op in it
  EXPECT_EQ(ag->duration_ns, 700);  // gloo's span
}

TEST(ExposedCollectives, CpuPartlyHiddenReduceScatterInBackward) {
  const RankExposedCollectives e = exposed_collectives(cpu_fsdp_step(), false, 0);
  const ExposedRow* rs = exposed_row_of(e.layers, StepPhase::kBackward, "reduce_scatter", "layers.0");
  ASSERT_NE(rs, nullptr);
  EXPECT_EQ(rs->span_ns, 1000);  // [3000, 4000)
  // Computing: aten::div_ [3000, 3050), then the autograd op and aten::mm from 3200 on; exposed: the
  // c10d op [3050, 3100) and FSDP's label with no operator in it [3100, 3200).
  EXPECT_EQ(rs->exposed_ns, 150);
  EXPECT_EQ(rs->duration_ns, 900);
}

TEST(ExposedCollectives, CpuCallWithoutGlooWorkOrLabelIsKeptWithANote) {
  const RankExposedCollectives e = exposed_collectives(cpu_fsdp_step(), false, 0);
  // In backward: phases.h extends the backward span over the host collectives until the next operator.
  const ExposedRow* ar = exposed_row_of(e.layers, StepPhase::kBackward, "allreduce", "");
  ASSERT_NE(ar, nullptr);
  EXPECT_EQ(ar->exposed_ns, 100);  // the op alone
  ASSERT_EQ(e.notes.size(), 1U);
  EXPECT_NE(e.notes[0].find("1 c10d call(s) without gloo work"), std::string::npos);
}

TEST(ExposedCollectives, TotalsAddUpOverLayersAndPhases) {
  const RankExposedCollectives e = exposed_collectives(cpu_fsdp_step(), false, 0);
  int64_t layers = 0, totals = 0, calls = 0;
  for (const ExposedRow& r : e.layers) layers += r.exposed_ns;
  for (const ExposedRow& r : e.totals) {
    totals += r.exposed_ns;
    calls += r.calls;
    EXPECT_TRUE(r.layer.empty());
  }
  EXPECT_EQ(layers, e.exposed_ns);
  EXPECT_EQ(totals, e.exposed_ns);
  EXPECT_EQ(calls, e.calls);
  EXPECT_EQ(e.exposed_ns, 850 + 150 + 100);
  EXPECT_EQ(e.totals.size(), 3U);
  for (const ExposedRow& r : e.totals) {
    EXPECT_EQ(r.group, "");  // no distributedInfo in the trace
  }
}

TEST(ExposedCollectives, OverlappingSpansShareNoInstant) {
  // Two all-gathers in flight at once on one thread: [100, 600) and [300, 900). The second is given
  // only what the first does not hold, so the rank's exposed time is the union, 800. FSDP's hook label
  // names the layer but does not start the spans (it is not FSDP's all-gather call).
  HostTraceBuilder b;
  b.annotation("ProfilerStep#1", 0, 2000);
  b.annotation("FSDP::pre_forward (a)", 50, 1000);
  b.op("c10d::_allgather_base_", 100, 10);
  b.annotation("gloo:all_gather", 110, 490, 2);
  b.op("c10d::_allgather_base_", 300, 10);
  b.annotation("gloo:all_gather", 310, 590, 3);
  const RankExposedCollectives e = exposed_collectives(b.take(), false, 0);
  ASSERT_EQ(e.calls, 2);
  EXPECT_EQ(e.exposed_ns, 800);
  const ExposedRow* row = exposed_row_of(e.layers, StepPhase::kForward, "allgather", "a");
  ASSERT_NE(row, nullptr);
  EXPECT_EQ(row->span_ns, 500 + 600);
}

// GPU: one computation kernel [0, 1000); an all-gather kernel inside it (hidden), a reduce-scatter
// crossing its end (partly), an all-reduce after it (exposed), each launched under its own label.
trace::RankTrace gpu_fsdp_step() {
  HostTraceBuilder b;
  b.annotation("ProfilerStep#2", 0, 3000);
  b.runtime("cudaLaunchKernel", 1, 2, /*correlation=*/1);
  b.kernel("sm90_xmma_gemm", 0, 1000, trace::kNone, 1);
  b.annotation("FSDP::pre_forward (layers.1)", 10, 100);
  b.annotation("FSDP::all_gather (layers.1)", 20, 80);
  b.runtime("cudaLaunchKernel", 50, 5, 2);
  b.kernel("ncclDevKernel_AllGather_RING_LL", 100, 300, trace::kNone, 2);
  b.op("autograd::engine::evaluate_function: AddmmBackward0", 800, 100);
  b.annotation("FSDP::post_backward_reduce (layers.1)", 820, 60);
  b.runtime("cudaLaunchKernel", 850, 5, 3);
  b.kernel("ncclDevKernel_ReduceScatter_Sum_f32_RING_LL", 900, 400, trace::kNone, 3);
  b.annotation("Optimizer.step#Adam.step", 1400, 100);
  b.runtime("cudaLaunchKernel", 1450, 5, 4);
  b.kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 1500, 200, trace::kNone, 4);
  return b.take();
}

TEST(ExposedCollectives, GpuHiddenPartlyHiddenAndExposedKernels) {
  const RankExposedCollectives e = exposed_collectives(gpu_fsdp_step(), false, 0);
  EXPECT_TRUE(e.gpu);
  EXPECT_EQ(e.calls, 3);
  const ExposedRow* ag = exposed_row_of(e.layers, StepPhase::kForward, "allgather", "layers.1");
  const ExposedRow* rs = exposed_row_of(e.layers, StepPhase::kBackward, "reduce_scatter", "layers.1");
  const ExposedRow* ar = exposed_row_of(e.layers, StepPhase::kOptimizer, "allreduce", "");
  ASSERT_NE(ag, nullptr);
  ASSERT_NE(rs, nullptr);
  ASSERT_NE(ar, nullptr);
  EXPECT_EQ(ag->exposed_ns, 0);
  EXPECT_EQ(ag->duration_ns, 300);
  EXPECT_EQ(rs->exposed_ns, 300);
  EXPECT_EQ(ar->exposed_ns, 200);
  EXPECT_EQ(e.exposed_ns, 500);
  // Most exposed first.
  EXPECT_EQ(e.layers.front().type, "reduce_scatter");
  // --top 1 keeps the most exposed layer row only; the totals stay whole.
  const RankExposedCollectives top = exposed_collectives(gpu_fsdp_step(), false, 1);
  ASSERT_EQ(top.layers.size(), 1U);
  EXPECT_EQ(top.layers[0].exposed_ns, 300);
  EXPECT_EQ(top.totals.size(), 3U);
}

TEST(ExposedCollectives, NoStepsIsANoteNotACrash) {
  HostTraceBuilder b;
  b.op("c10d::_allgather_base_", 100, 10);
  b.annotation("gloo:all_gather", 110, 490, 2);
  const RankExposedCollectives e = exposed_collectives(b.take(), false, 0);
  EXPECT_EQ(e.steps, 0);
  EXPECT_EQ(e.calls, 0);
  EXPECT_TRUE(e.totals.empty());
  ASSERT_EQ(e.notes.size(), 1U);
  EXPECT_NE(e.notes[0].find("no ProfilerStep#N"), std::string::npos);
}

TEST(ExposedCollectives, StepWithoutCollectivesSaysSo) {
  HostTraceBuilder b;
  b.annotation("ProfilerStep#1", 0, 100);
  b.op("aten::mm", 10, 50);
  const RankExposedCollectives e = exposed_collectives(b.take(), false, 0);
  EXPECT_EQ(e.calls, 0);
  ASSERT_EQ(e.notes.size(), 1U);
  EXPECT_EQ(e.notes[0], "no collective call in the analysed steps");
}

// One DeepSpeed ZeRO-3 step on gloo with the Python frames with_stack=True records, named as DeepSpeed
// 0.19.8 names them (docs/fsdp.md): Linear_2's forward fetch, a backward fetch (its pre-backward hook,
// no module frame), the gradients' reduce-scatter at the end of engine.backward after the autograd
// engine's last op, and the norm's all-reduce in engine.step before the torch optimizer's step.
trace::RankTrace zero3_step(bool python_frames) {
  HostTraceBuilder b;
  auto py = [&](std::string_view name, int64_t ts, int64_t dur) {
    if (python_frames) b.op(name, ts, dur, 1, trace::kNone, trace::Category::kPythonFunction);
  };
  b.annotation("ProfilerStep#1", 0, 20000);
  py("nn.Module: DeepSpeedEngine_0", 100, 7900);
  py("deepspeed/runtime/engine.py(2982): forward", 110, 7800);
  py("nn.Module: Linear_2", 200, 2000);
  py("deepspeed/runtime/zero/parameter_offload.py(358): _pre_forward_module_hook", 210, 1300);
  py("deepspeed/runtime/zero/partitioned_param_coordinator.py(307): fetch_sub_module", 220, 1280);
  py("deepspeed/runtime/zero/partition_parameters.py(1539): all_gather_coalesced", 300, 400);
  b.op("aten::cat", 310, 50);
  b.op("c10d::_allgather_base_", 400, 100);
  b.annotation("gloo:all_gather", 450, 1000, 2);
  py("deepspeed/runtime/zero/partition_parameters.py(760): wait", 800, 650);
  b.op("LinearFunctionForZeroStage3", 1600, 300);
  py("deepspeed/runtime/engine.py(3381): backward", 8000, 8000);
  b.op("autograd::engine::evaluate_function: PreBackwardFunctionForModuleBackward", 8100, 1000);
  py("deepspeed/runtime/zero/partitioned_param_coordinator.py(307): fetch_sub_module", 8150, 800);
  b.op("c10d::_allgather_base_", 8200, 50);
  b.annotation("gloo:all_gather", 8250, 500, 2);
  b.op("autograd::engine::evaluate_function: LinearFunctionForZeroStage3Backward", 9200, 500);
  b.op("aten::copy_", 11000, 100);  // the epilogue's gradient copies: the autograd engine is done
  py("deepspeed/runtime/zero/stage3.py(1911): __avg_scatter_grads", 12000, 1000);
  py("/src/DeepSpeed/deepspeed/runtime/comm/coalesced_collectives.py(79): reduce_scatter_coalesced", 12050, 900);
  b.op("c10d::_reduce_scatter_base_", 12100, 100);
  b.annotation("gloo:all_reduce", 12200, 600, 2);
  py("deepspeed/runtime/engine.py(3567): step", 16000, 3000);
  b.op("c10d::allreduce_", 16100, 50);
  b.annotation("gloo:all_reduce", 16150, 200, 2);
  b.annotation("Optimizer.step#SGD.step", 17000, 1000);
  b.op("aten::add_", 17100, 500);
  return b.take();
}

TEST(ExposedCollectives, DeepSpeedZero3PhaseAndLayerFromItsFrames) {
  const RankExposedCollectives e = exposed_collectives(zero3_step(true), false, 0);
  EXPECT_EQ(e.calls, 4);
  EXPECT_EQ(e.labelled, 0);  // no FSDP label
  const ExposedRow* fwd = exposed_row_of(e.layers, StepPhase::kForward, "allgather", "Linear_2");
  ASSERT_NE(fwd, nullptr);
  EXPECT_EQ(fwd->span_ns, 1150);     // all_gather_coalesced's start (300) to gloo's end (1450)
  EXPECT_EQ(fwd->exposed_ns, 1100);  // less aten::cat, the copy-in
  const ExposedRow* bwd = exposed_row_of(e.layers, StepPhase::kBackward, "allgather", "");
  ASSERT_NE(bwd, nullptr);
  EXPECT_EQ(bwd->span_ns, 550);  // no wrapper frame: the c10d op (8200) to gloo's end (8750)
  // After the autograd engine's last op and another op: phases.h alone says other; engine.backward says backward.
  const ExposedRow* rs = exposed_row_of(e.layers, StepPhase::kBackward, "reduce_scatter", "");
  ASSERT_NE(rs, nullptr);
  EXPECT_EQ(rs->span_ns, 750);  // reduce_scatter_coalesced (12050) to gloo's end (12800)
  EXPECT_EQ(rs->exposed_ns, 750);
  const ExposedRow* ar = exposed_row_of(e.layers, StepPhase::kOptimizer, "allreduce", "");
  ASSERT_NE(ar, nullptr);
  EXPECT_EQ(ar->span_ns, 250);
  ASSERT_EQ(e.notes.size(), 1U);
  EXPECT_EQ(e.notes[0].rfind("1 DeepSpeed ZeRO-3 parameter fetch(es) outside any nn.Module call", 0), 0U);
}

TEST(ExposedCollectives, DeepSpeedZero3WithoutPythonFramesSaysWhatIsMissing) {
  const RankExposedCollectives e = exposed_collectives(zero3_step(false), false, 0);
  EXPECT_EQ(e.calls, 4);
  for (const ExposedRow& r : e.layers) EXPECT_EQ(r.layer, "");
  // By phases.h's rule alone: the epilogue's reduce-scatter and engine.step's all-reduce are other.
  EXPECT_NE(exposed_row_of(e.layers, StepPhase::kOther, "reduce_scatter", ""), nullptr);
  EXPECT_NE(exposed_row_of(e.layers, StepPhase::kOther, "allreduce", ""), nullptr);
  ASSERT_EQ(e.notes.size(), 1U);
  EXPECT_NE(e.notes[0].find("DeepSpeed ZeRO-3 without Python frames"), std::string::npos);
  EXPECT_NE(e.notes[0].find("with_stack=True"), std::string::npos);
}

TEST(ExposedCollectives, FsdpLayerFromLabels) {
  EXPECT_EQ(fsdp_layer("FSDP::all_gather (layers.3)"), "layers.3");
  EXPECT_EQ(fsdp_layer("FSDP::post_backward_reduce (model.blocks.0.attn)"), "model.blocks.0.attn");
  EXPECT_EQ(fsdp_layer("FSDP::backward_prefetch for layers.2"), "layers.2");
  EXPECT_EQ(fsdp_layer("FSDP::all_gather"), "(root)");
  EXPECT_EQ(fsdp_layer("DistributedDataParallel.forward"), "");
  EXPECT_EQ(fsdp_layer("FSDP::x ("), "(root)");
}

TEST(ExposedCollectives, ComeBackWholeFromTheSpillingStore) {
  engine::RankResults in;
  in.rank = 3;
  in.exposed = exposed_collectives(cpu_fsdp_step(), false, 0);
  in.exposed->totals[0].group = "a process group name longer than the small-string buffer";
  in.exposed->totals[0].group_ranks = "0-1023";
  const std::string bytes = engine::encode_rank_results(in);
  engine::RankResults out;
  ASSERT_TRUE(engine::decode_rank_results(bytes, &out));
  EXPECT_EQ(engine::encode_rank_results(out), bytes);
  ASSERT_TRUE(out.exposed.has_value());
  const RankExposedCollectives& a = *in.exposed;
  const RankExposedCollectives& b = *out.exposed;
  EXPECT_EQ(b.path, "cpu.json");
  EXPECT_EQ(std::tie(b.steps, b.step_ns, b.calls, b.labelled, b.exposed_ns, b.gpu),
            std::tie(a.steps, a.step_ns, a.calls, a.labelled, a.exposed_ns, a.gpu));
  EXPECT_EQ(b.notes, a.notes);
  ASSERT_EQ(b.totals.size(), a.totals.size());
  ASSERT_EQ(b.layers.size(), a.layers.size());
  EXPECT_EQ(b.totals[0].group, a.totals[0].group);
  EXPECT_EQ(b.totals[0].group_ranks, "0-1023");
  for (size_t k = 0; k < a.layers.size(); ++k) {
    EXPECT_EQ(std::tie(b.layers[k].layer, b.layers[k].type, b.layers[k].phase, b.layers[k].calls,
                       b.layers[k].duration_ns, b.layers[k].span_ns, b.layers[k].exposed_ns, b.layers[k].bytes),
              std::tie(a.layers[k].layer, a.layers[k].type, a.layers[k].phase, a.layers[k].calls,
                       a.layers[k].duration_ns, a.layers[k].span_ns, a.layers[k].exposed_ns, a.layers[k].bytes));
  }
}

}  // namespace
}  // namespace scaleprof::analysis
