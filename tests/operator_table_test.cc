#include "analysis/operator_table.h"

#include <gtest/gtest.h>

#include <cmath>

#include "host_trace_builder.h"

namespace scaleprof::analysis {
namespace {

using testing::HostTraceBuilder;
using trace::Category;

const OperatorRow& row(const OperatorTable& t, std::string_view name, OpSide side = OpSide::kHost,
                       bool user_annotation = false) {
  for (const OperatorRow& r : t.rows) {
    if (r.name == name && r.side == side && r.user_annotation == user_annotation) return r;
  }
  static const OperatorRow missing{.name = "<missing>", .calls = -1};
  ADD_FAILURE() << "no row " << name;
  return missing;
}

bool has_row(const OperatorTable& t, std::string_view name) {
  for (const OperatorRow& r : t.rows) {
    if (r.name == name) return true;
  }
  return false;
}

TEST(OperatorTable, EmptyTraceHasNoRowsAndZeroTotals) {
  OperatorTable t = compute_operator_table(HostTraceBuilder().take());
  EXPECT_TRUE(t.rows.empty());
  EXPECT_EQ(t.sum_self_cpu_ns, 0);
  EXPECT_FALSE(t.has_device_time);
  EXPECT_FALSE(t.has_memory);
}

// A[0,100] holds B[10,40] and C[50,90]; C holds D[60,70].
TEST(OperatorTable, SelfAndTotalTimesFollowNesting) {
  HostTraceBuilder b;
  b.op("A", 0, 100);
  b.op("B", 10, 30);
  b.op("C", 50, 40);
  b.op("D", 60, 10);
  OperatorTable t = compute_operator_table(b.take());
  EXPECT_EQ(row(t, "A").self_cpu_ns, 30);
  EXPECT_EQ(row(t, "A").cpu_total_ns, 100);
  EXPECT_EQ(row(t, "B").self_cpu_ns, 30);
  EXPECT_EQ(row(t, "C").self_cpu_ns, 30);
  EXPECT_EQ(row(t, "C").cpu_total_ns, 40);
  EXPECT_EQ(row(t, "D").self_cpu_ns, 10);
  EXPECT_EQ(t.sum_self_cpu_ns, 100);
  // torch: Self CPU % = self / sum_self_cpu; CPU total % = total / sum_self_cpu (not a share of 100).
  EXPECT_DOUBLE_EQ(row(t, "A").self_cpu_pct, 30.0);
  EXPECT_DOUBLE_EQ(row(t, "A").cpu_total_pct, 100.0);
  EXPECT_DOUBLE_EQ(row(t, "C").cpu_total_pct, 40.0);
  EXPECT_DOUBLE_EQ(row(t, "D").self_cpu_pct, 10.0);
  EXPECT_TRUE(std::isnan(row(t, "A").self_device_pct));  // no device time: torch prints NaN
}

TEST(OperatorTable, FileOrderDoesNotMatterForNesting) {
  HostTraceBuilder b;
  b.op("D", 60, 10);
  b.op("C", 50, 40);
  b.op("A", 0, 100);
  b.op("B", 10, 30);
  OperatorTable t = compute_operator_table(b.take());
  EXPECT_EQ(row(t, "A").self_cpu_ns, 30);
  EXPECT_EQ(row(t, "C").self_cpu_ns, 30);
  EXPECT_EQ(t.rows.front().name, "D");  // rows keep the order of first appearance in the file
}

// The pop rule: a child must start before the parent's end and end no later than it.
TEST(OperatorTable, PartialOverlapAndTouchingIntervalsAreNotNested) {
  HostTraceBuilder b;
  b.op("A", 0, 50);
  b.op("B", 40, 40);  // [40,80] sticks out of A
  b.op("C", 100, 50);
  b.op("D", 150, 10);  // starts at C's end
  b.op("E", 150, 0);   // zero length at C's end: nests in D (150 < D's end), not in C
  OperatorTable t = compute_operator_table(b.take());
  EXPECT_EQ(row(t, "A").self_cpu_ns, 50);
  EXPECT_EQ(row(t, "B").self_cpu_ns, 40);
  EXPECT_EQ(row(t, "C").self_cpu_ns, 50);
  EXPECT_EQ(row(t, "D").self_cpu_ns, 10);
  EXPECT_EQ(row(t, "E").self_cpu_ns, 0);
  EXPECT_EQ(t.sum_self_cpu_ns, 150);
}

// `child.start >= parent.end` pops: a zero-length call at the parent's end is not its child (had it
// been, the dup rule would fold it and there would be one call).
TEST(OperatorTable, ZeroLengthCallAtTheParentsEndIsNotAChild) {
  HostTraceBuilder b;
  b.op("f", 0, 50);
  b.op("f", 50, 0);
  b.op("f", 20, 0);  // zero length strictly inside: a child, folded
  OperatorTable t = compute_operator_table(b.take());
  EXPECT_EQ(row(t, "f").calls, 2);
  EXPECT_EQ(t.dup_nodes_removed, 1);
}

TEST(OperatorTable, ThreadsNestSeparately) {
  HostTraceBuilder b;
  b.op("A", 0, 100, /*tid=*/1);
  b.op("B", 10, 20, /*tid=*/2);  // inside A's interval but on another thread
  OperatorTable t = compute_operator_table(b.take());
  EXPECT_EQ(row(t, "A").self_cpu_ns, 100);
  EXPECT_EQ(row(t, "B").self_cpu_ns, 20);
}

// torch's _remove_dup_nodes: a same-named only child is folded into its parent.
TEST(OperatorTable, DupNodeIsFoldedIntoSameNamedParent) {
  HostTraceBuilder b;
  b.op("aten::add", 0, 100);
  b.op("aten::add", 10, 80);
  b.op("aten::empty", 20, 10);
  OperatorTable t = compute_operator_table(b.take());
  const OperatorRow& add = row(t, "aten::add");
  EXPECT_EQ(add.calls, 1);
  EXPECT_EQ(add.cpu_total_ns, 100);
  EXPECT_EQ(add.self_cpu_ns, 90);  // the folded child's own time is now the parent's
  EXPECT_EQ(row(t, "aten::empty").self_cpu_ns, 10);
  EXPECT_EQ(t.dup_nodes_removed, 1);
  EXPECT_EQ(t.sum_self_cpu_ns, 100);
}

TEST(OperatorTable, DupChainsCollapseCompletely) {
  HostTraceBuilder b;
  b.op("f", 0, 100);
  b.op("f", 10, 80);
  b.op("f", 20, 60);
  OperatorTable t = compute_operator_table(b.take());
  EXPECT_EQ(row(t, "f").calls, 1);
  EXPECT_EQ(row(t, "f").self_cpu_ns, 100);
  EXPECT_EQ(t.dup_nodes_removed, 2);
}

TEST(OperatorTable, SameNamedChildWithSiblingIsKept) {
  HostTraceBuilder b;
  b.op("f", 0, 100);
  b.op("f", 10, 20);
  b.op("g", 40, 20);
  OperatorTable t = compute_operator_table(b.take());
  EXPECT_EQ(row(t, "f").calls, 2);
  EXPECT_EQ(row(t, "f").self_cpu_ns, 60 + 20);
  EXPECT_EQ(t.dup_nodes_removed, 0);
}

// torch lifts the folded child's kernels *replacing* the parent's own ones.
TEST(OperatorTable, DupNodeKernelsReplaceTheParentsKernels) {
  HostTraceBuilder b;
  b.op("aten::copy_", 0, 100, 1, /*external_id=*/1);
  b.op("aten::copy_", 10, 50, 1, /*external_id=*/2);
  b.kernel("k_parent", 200, 5, /*external_id=*/1);
  b.kernel("k_child", 210, 7, /*external_id=*/2);
  OperatorTable t = compute_operator_table(b.take());
  const OperatorRow& copy = row(t, "aten::copy_");
  EXPECT_EQ(copy.calls, 1);
  EXPECT_EQ(copy.self_device_ns, 7);
  EXPECT_EQ(copy.device_total_ns, 7);
  EXPECT_EQ(row(t, "k_parent", OpSide::kDevice).self_device_ns, 5);  // the kernel's own row is intact
}

TEST(OperatorTable, KernelsAreAttributedByExternalIdAndSummedUpTheTree) {
  HostTraceBuilder b;
  b.annotation("ProfilerStep#3", 0, 1000, 1, 1);
  b.op("aten::linear", 100, 400, 1, 2);
  b.op("aten::mm", 150, 300, 1, 3);
  b.runtime("cudaLaunchKernel", 200, 20, /*correlation=*/77, /*external_id=*/3);
  b.kernel("sgemm", 400, 30, /*external_id=*/3, /*correlation=*/77);
  b.kernel("Memcpy HtoD (Pageable -> Device)", 500, 10, /*external_id=*/2, 78, Category::kGpuMemcpy);
  b.kernel("orphan", 600, 4);  // no External id: a row of its own, no op gets it
  b.kernel("ProfilerStep#3", 390, 300, /*external_id=*/1, trace::kNone, Category::kGpuUserAnnotation);
  OperatorTable t = compute_operator_table(b.take());

  EXPECT_EQ(row(t, "aten::mm").self_device_ns, 30);
  EXPECT_EQ(row(t, "aten::mm").device_total_ns, 30);
  EXPECT_EQ(row(t, "aten::linear").self_device_ns, 10);
  EXPECT_EQ(row(t, "aten::linear").device_total_ns, 40);
  // The host ProfilerStep gets its children's device time, not its device annotation span.
  EXPECT_EQ(row(t, "ProfilerStep*", OpSide::kHost, true).self_device_ns, 0);
  EXPECT_EQ(row(t, "ProfilerStep*", OpSide::kHost, true).device_total_ns, 40);
  // The runtime call nests under aten::mm: mm self CPU = 300 - 20.
  EXPECT_EQ(row(t, "aten::mm").self_cpu_ns, 280);
  EXPECT_EQ(row(t, "cudaLaunchKernel").self_cpu_ns, 20);

  EXPECT_EQ(row(t, "sgemm", OpSide::kDevice).self_device_ns, 30);
  EXPECT_EQ(row(t, "sgemm", OpSide::kDevice).cpu_total_ns, 0);
  const OperatorRow& gpu_step = row(t, "ProfilerStep*", OpSide::kDevice, true);
  EXPECT_EQ(gpu_step.self_device_ns, 300);
  // sum_self_device: device rows without device annotations = 30 + 10 + 4.
  EXPECT_EQ(t.sum_self_device_ns, 44);
  EXPECT_DOUBLE_EQ(row(t, "sgemm", OpSide::kDevice).self_device_pct, 100.0 * 30 / 44);
  EXPECT_DOUBLE_EQ(gpu_step.self_device_pct, 100.0 * 300 / 44);  // torch also prints > 100% here
  EXPECT_DOUBLE_EQ(row(t, "aten::mm").self_device_pct, 100.0 * 30 / 44);
  EXPECT_TRUE(t.has_device_time);
  EXPECT_EQ(t.attributed_device_events, 2);
  EXPECT_EQ(t.unattributed_device_events, 1);
}

// MTIA's layout (issue 23 item 5): the kernels carry a correlation id, the runtime calls that launched
// them no External id. Each kernel belongs to the innermost op its launch is nested in on its thread,
// as torch's key_averages() puts it; a launch outside every op, or a kernel whose correlation id
// points nowhere, stays unattributed.
TEST(OperatorTable, KernelsOfLaunchesWithoutExternalIdGoToTheOpAroundTheLaunch) {
  HostTraceBuilder b;
  b.op("aten::linear", 100, 400, 1, 2);
  b.op("aten::mm", 150, 300, 1, 3);
  b.runtime("runFunction", 200, 20, /*correlation=*/91);  // inside aten::mm, itself inside aten::linear
  b.runtime("runFunction", 470, 10, /*correlation=*/92);  // inside aten::linear only
  b.runtime("runFunction", 700, 10, /*correlation=*/93);  // outside every op
  b.kernel("mtia_gemm", 400, 30, trace::kNone, /*correlation=*/91);
  b.kernel("mtia_add", 520, 8, trace::kNone, /*correlation=*/92);
  b.kernel("mtia_late", 800, 5, trace::kNone, /*correlation=*/93);
  b.kernel("mtia_lost", 900, 3, trace::kNone, /*correlation=*/94);
  OperatorTable t = compute_operator_table(b.take());
  EXPECT_EQ(row(t, "aten::mm").self_device_ns, 30);
  EXPECT_EQ(row(t, "aten::mm").device_total_ns, 30);
  EXPECT_EQ(row(t, "aten::linear").self_device_ns, 8);
  EXPECT_EQ(row(t, "aten::linear").device_total_ns, 38);
  EXPECT_EQ(row(t, "mtia_gemm", OpSide::kDevice).self_device_ns, 30);  // the kernel's own row is intact
  EXPECT_EQ(t.attributed_device_events, 2);
  EXPECT_EQ(t.unattributed_device_events, 2);
}

TEST(OperatorTable, FilteredNamesAreNeitherRowsNorChildren) {
  HostTraceBuilder b;
  b.op("aten::add_", 0, 100);
  b.op("aten::is_leaf", 10, 30);
  b.op("aten::_version", 50, 10);
  b.op("profiler::_record_function_enter_new", 70, 5);
  OperatorTable t = compute_operator_table(b.take());
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_EQ(row(t, "aten::add_").self_cpu_ns, 100);
  EXPECT_FALSE(has_row(t, "aten::is_leaf"));
}

TEST(OperatorTable, ProfilerStepsShareOneRowAndAnnotationsKeyApartFromOps) {
  HostTraceBuilder b;
  b.annotation("ProfilerStep#1", 0, 100);
  b.annotation("ProfilerStep#2", 100, 50);
  b.annotation("aten::mm", 200, 30);  // record_function("aten::mm"): a separate row in torch
  b.op("aten::mm", 210, 10);
  b.op("aten::empty", 222, 5);
  OperatorTable t = compute_operator_table(b.take());
  EXPECT_EQ(row(t, "ProfilerStep*", OpSide::kHost, true).calls, 2);
  EXPECT_EQ(row(t, "ProfilerStep*", OpSide::kHost, true).self_cpu_ns, 150);
  EXPECT_EQ(row(t, "aten::mm", OpSide::kHost, true).self_cpu_ns, 15);
  EXPECT_EQ(row(t, "aten::mm", OpSide::kHost, false).self_cpu_ns, 10);
  EXPECT_EQ(t.dup_nodes_removed, 0);
}

// The dup rule compares names only: an op that is the only child of a same-named annotation folds.
TEST(OperatorTable, DupRuleIgnoresTheAnnotationFlag) {
  HostTraceBuilder b;
  b.annotation("aten::mm", 200, 30);
  b.op("aten::mm", 210, 10);
  OperatorTable t = compute_operator_table(b.take());
  EXPECT_EQ(row(t, "aten::mm", OpSide::kHost, true).calls, 1);
  EXPECT_EQ(row(t, "aten::mm", OpSide::kHost, true).self_cpu_ns, 30);
  EXPECT_EQ(t.rows.size(), 1u);
}

TEST(OperatorTable, DupRuleComparesDisplayNames) {
  HostTraceBuilder b;
  b.annotation("outer", 0, 100);
  b.annotation("ProfilerStep#1", 0, 100);  // steps never nest in practice; if they did, torch compares
  b.annotation("ProfilerStep#2", 10, 50);  // the rewritten name "ProfilerStep*" and folds #2 into #1
  OperatorTable t = compute_operator_table(b.take());
  EXPECT_EQ(row(t, "ProfilerStep*", OpSide::kHost, true).calls, 1);
  EXPECT_EQ(t.dup_nodes_removed, 1);
}

// gloo:* spans on the gloo worker thread are async in torch: no self time, not a parent.
TEST(OperatorTable, BackendCollectivesAreAsync) {
  auto build = [] {
    HostTraceBuilder b;
    b.annotation("ProfilerStep#2", 0, 1000, 1, 1);
    b.op("c10d::allreduce_", 100, 50, 1, 2);
    b.annotation("gloo:all_reduce", 120, 800, /*tid=*/2, 513);
    b.op("aten::view", 200, 100, /*tid=*/2, 514);
    return b.take();
  };
  OperatorTable t = compute_operator_table(build());
  const OperatorRow& gloo = row(t, "gloo:all_reduce", OpSide::kHost, true);
  EXPECT_TRUE(gloo.async);
  EXPECT_EQ(gloo.self_cpu_ns, 0);
  EXPECT_EQ(gloo.cpu_total_ns, 800);
  EXPECT_DOUBLE_EQ(gloo.cpu_total_pct, 0.0);  // torch prints 0 for async rows
  EXPECT_EQ(row(t, "aten::view").self_cpu_ns, 100);
  EXPECT_EQ(row(t, "ProfilerStep*", OpSide::kHost, true).self_cpu_ns, 950);
  EXPECT_EQ(t.sum_self_cpu_ns, 950 + 50 + 100);
  EXPECT_EQ(t.async_calls, 1);

  OperatorTable plain = compute_operator_table(build(), {.backend_collectives_async = false});
  EXPECT_FALSE(row(plain, "gloo:all_reduce", OpSide::kHost, true).async);
  EXPECT_EQ(row(plain, "gloo:all_reduce", OpSide::kHost, true).self_cpu_ns, 700);
  EXPECT_EQ(plain.sum_self_cpu_ns, 950 + 50 + 700 + 100);
}

// Kineto writes a call still open at the profiler's stop as ending at "Record Window End"; torch ends
// it at the stop, the end of the Trace span.
TEST(OperatorTable, CallsOpenAtStopEndAtTheTraceSpanEnd) {
  HostTraceBuilder b;
  b.op("PyTorch Profiler (0)", 0, 1000, 1, trace::kNone, Category::kTrace);
  b.annotation("ProfilerStep#3", 100, 800);
  b.annotation("gloo:all_reduce", 500, 1200, /*tid=*/2);  // extended to 1700 by Kineto
  b.op("aten::view", 600, 600, /*tid=*/3);                // a synchronous call cut the same way
  b.op("aten::add", 700, 100, /*tid=*/3);
  OperatorTable t = compute_operator_table(b.take());
  EXPECT_EQ(row(t, "gloo:all_reduce", OpSide::kHost, true).cpu_total_ns, 500);
  EXPECT_EQ(row(t, "aten::view").cpu_total_ns, 400);
  EXPECT_EQ(row(t, "aten::view").self_cpu_ns, 300);
  EXPECT_EQ(t.calls_ended_at_stop, 2);
  EXPECT_FALSE(has_row(t, "PyTorch Profiler (0)"));
}

TEST(OperatorTable, MemoryIsAttributedByClosedIntervalOnAnyThread) {
  HostTraceBuilder b;
  b.op("A", 0, 100);
  b.op("B", 10, 10);
  b.memory(10, 64);                // in B (its start) and A
  b.memory(100, 32);               // A's end: inclusive
  b.memory(50, 1000, /*CUDA*/ 1);  // device memory inside A
  b.memory(5, 16, 0, /*tid=*/9);   // another thread, still inside A's interval
  b.memory(150, 8);                // inside no op: a top-level [memory] row
  b.memory(160, -8);
  OperatorTable t = compute_operator_table(b.take());
  ASSERT_TRUE(t.has_memory);
  EXPECT_EQ(row(t, "A").cpu_memory_bytes, 64 + 32 + 16);
  EXPECT_EQ(row(t, "A").self_cpu_memory_bytes, 32 + 16);
  EXPECT_EQ(row(t, "A").device_memory_bytes, 1000);
  EXPECT_EQ(row(t, "A").self_device_memory_bytes, 1000);
  EXPECT_EQ(row(t, "B").cpu_memory_bytes, 64);
  EXPECT_EQ(row(t, "B").self_cpu_memory_bytes, 64);
  const OperatorRow& mem = row(t, "[memory]");
  EXPECT_EQ(mem.calls, 2);
  EXPECT_EQ(mem.cpu_memory_bytes, 0);
  EXPECT_EQ(mem.cpu_total_ns, 0);
  EXPECT_TRUE(t.has_device_memory);
  EXPECT_EQ(t.rows.back().name, "[memory]");
}

TEST(OperatorTable, AsyncCallsKeepTheirMemoryButNoSelfMemory) {
  HostTraceBuilder b;
  b.annotation("gloo:broadcast", 0, 100, 2);
  b.memory(50, 40, 0, 2);
  OperatorTable t = compute_operator_table(b.take());
  const OperatorRow& gloo = row(t, "gloo:broadcast", OpSide::kHost, true);
  EXPECT_EQ(gloo.cpu_memory_bytes, 40);
  EXPECT_EQ(gloo.self_cpu_memory_bytes, 0);
  EXPECT_FALSE(has_row(t, "[memory]"));
}

TEST(OperatorTable, LegacyEventsWithoutCategoryAreCpuOps) {
  HostTraceBuilder b;
  b.op("aten::mm", 0, 10, 1, trace::kNone, Category::kNone);
  // with_stack=True: key_averages() lists the Python frames too, nesting the ops under them (issue 31).
  b.op("python_frame", 0, 50, 1, trace::kNone, Category::kPythonFunction);
  OperatorTable t = compute_operator_table(b.take());
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(row(t, "aten::mm").self_cpu_ns, 10);
  EXPECT_EQ(row(t, "python_frame").self_cpu_ns, 40);
}

TEST(OperatorTable, TopOperatorsSortsDescendingAndKeepsTraceOrderOnTies) {
  HostTraceBuilder b;
  b.op("a", 0, 10);
  b.op("b", 20, 30);
  b.op("c", 60, 10);
  b.op("c", 80, 10);
  OperatorTable t = compute_operator_table(b.take());
  auto by_self = top_operators(t, OperatorSortKey::kSelfCpu, 0);
  ASSERT_EQ(by_self.size(), 3u);
  EXPECT_EQ(by_self[0].name, "b");
  EXPECT_EQ(by_self[1].name, "c");
  EXPECT_EQ(by_self[2].name, "a");
  auto by_calls = top_operators(t, OperatorSortKey::kCalls, 2);
  ASSERT_EQ(by_calls.size(), 2u);
  EXPECT_EQ(by_calls[0].name, "c");
  EXPECT_EQ(by_calls[1].name, "a");  // tie with b at 1 call: first in the trace wins
}

TEST(OperatorTable, ParsesSortKeysAndTorchAttributeNames) {
  EXPECT_EQ(parse_operator_sort_key("self_cpu"), OperatorSortKey::kSelfCpu);
  EXPECT_EQ(parse_operator_sort_key("cpu_time_total"), OperatorSortKey::kCpuTotal);
  EXPECT_EQ(parse_operator_sort_key("self_cuda_time_total"), OperatorSortKey::kSelfDevice);
  EXPECT_EQ(parse_operator_sort_key("device_total"), OperatorSortKey::kDeviceTotal);
  EXPECT_EQ(parse_operator_sort_key("count"), OperatorSortKey::kCalls);
  EXPECT_FALSE(parse_operator_sort_key("Self CPU"));
}

TEST(OperatorTable, NamesHelpers) {
  EXPECT_EQ(operator_display_name("ProfilerStep#12"), "ProfilerStep*");
  EXPECT_EQ(operator_display_name("aten::mm"), "aten::mm");
  EXPECT_TRUE(is_backend_collective_name("gloo:all_reduce"));
  EXPECT_TRUE(is_backend_collective_name("nccl:broadcast"));
  EXPECT_FALSE(is_backend_collective_name("c10d::allreduce_"));
  EXPECT_FALSE(is_backend_collective_name("record_param_comms"));
}

}  // namespace
}  // namespace scaleprof::analysis
