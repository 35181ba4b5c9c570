// Device work of every backend counts in every analysis. The traces are written here in the shape
// Kineto gives each backend (libkineto output_json.cpp, RocprofActivity*.h; MTIA's through the same
// generic writer), read by the real reader, and analysed:
//  * MTIA: device events are `mtia_ccp_events` with a `correlation` arg and NO `External id`; the
//    launching `mtia_runtime` call ("runFunction - job_prep_and_submit_for_execution") carries
//    both; `dma_request` copies carry no stream.
//  * ROCm: `kernel` / `gpu_memcpy` under the CUDA category names, args device/stream/correlation/
//    kind, launched by `cuda_runtime` hip* calls, kernels on stream 0.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "analysis/analysis_window.h"
#include "analysis/computation_fraction.h"
#include "analysis/device_events.h"
#include "analysis/idle_time.h"
#include "analysis/kernel_breakdown.h"
#include "analysis/operator_table.h"
#include "analysis/profiler_steps.h"
#include "analysis/temporal_breakdown.h"
#include "trace/trace_set.h"

namespace scaleprof::analysis {
namespace {

namespace fs = std::filesystem;

std::string x_event(std::string_view cat, std::string_view name, int64_t pid, int64_t tid, int64_t ts_us,
                    int64_t dur_us, const std::string& args) {
  return "{\"ph\":\"X\",\"cat\":\"" + std::string(cat) + "\",\"name\":\"" + std::string(name) +
         "\",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid) + ",\"ts\":" + std::to_string(ts_us) +
         ",\"dur\":" + std::to_string(dur_us) + ",\"args\":{" + args + "}}";
}

trace::RankTrace load_one(const std::string& name, const std::string& json) {
  const fs::path path = fs::temp_directory_path() / (name + "-" + std::to_string(::getpid()) + ".json");
  std::ofstream(path, std::ios::binary) << json;
  auto set = trace::load_traces({path.string()});
  fs::remove(path);
  if (!set.ok()) {
    ADD_FAILURE() << set.error().message;
    return {};
  }
  EXPECT_EQ(set.value().ranks.size(), 1u);
  EXPECT_TRUE(set.value().errors.empty());
  return std::move(set.value().ranks.at(0));
}

// Two ProfilerSteps of 4 ms. In each, 4 aten::mul ops launch one MTIA job each: a kernel of 95 us
// on stream 1 and a 5 us dma_request without a stream. The second and later kernels of a step start
// 10 us before the previous kernel ends (3 overlaps per step), the others leave 100 us gaps.
std::string mtia_trace() {
  std::string ev;
  auto add = [&](const std::string& e) { ev += (ev.empty() ? "" : ",\n") + e; };
  add(R"({"ph":"M","name":"process_name","pid":1,"tid":0,"args":{"name":"python"}})");
  int64_t external = 100, correlation = 5000;
  for (int step = 0; step < 2; ++step) {
    const int64_t step_start = 1000 + step * 4000;
    add(x_event("user_annotation", "ProfilerStep#" + std::to_string(step + 1), 1, 1, step_start, 4000,
                "\"External id\":" + std::to_string(external++)));
    int64_t device_t = step_start + 500;
    for (int op = 0; op < 4; ++op) {
      const int64_t op_ts = step_start + 10 + op * 200;
      const std::string ext = std::to_string(external++);
      const std::string corr = std::to_string(correlation++);
      add(x_event("cpu_op", "aten::mul", 1, 1, op_ts, 150, fmt::format("\"External id\":{0},\"Ev Idx\":{0}", ext)));
      add(x_event("mtia_runtime", "runFunction - job_prep_and_submit_for_execution", 1, 1, op_ts + 20, 100,
                  fmt::format("\"External id\":{},\"correlation\":{}", ext, corr)));
      add(x_event("mtia_ccp_events", "customized_fba_mul_const-dtype_Float", 0, 1, device_t, 95,
                  "\"correlation\":" + corr + ",\"stream\":1"));
      add(x_event("mtia_ccp_events", "dma_request", 0, 2, device_t + 95, 5, "\"correlation\":" + corr));
      device_t += op == 0 ? 85 : 195;  // the 2nd kernel overlaps the 1st by 10 us; then gaps of 100 us
    }
  }
  return R"({"distributedInfo":{"backend":"mtia:hccl","rank":0,"world_size":1},"traceEvents":[)" + ev + "]}";
}

TEST(MtiaTrace, StepsCountTheDeviceWorkEachStepLaunched) {
  const trace::RankTrace t = load_one("mtia", mtia_trace());
  const ProfilerSteps steps = find_profiler_steps(t);
  ASSERT_TRUE(steps.has_kernels);
  ASSERT_EQ(steps.steps.size(), 2u);
  EXPECT_EQ(steps.kernels_outside_steps, 0);
  for (const ProfilerStepWindow& w : steps.steps) {
    EXPECT_EQ(w.kernels, 8) << w.step;                  // 4 kernels + 4 dma_requests
    EXPECT_EQ(w.kernel_sum_ns, 4 * 100'000) << w.step;  // 4 x (95 + 5) us
    // Busy: job 1 [0, 100) and job 2 [85, 185) overlap by 15 us; jobs 3 and 4 stand alone.
    EXPECT_EQ(w.gpu_busy_ns, 400'000 - 15'000) << w.step;
  }
}

TEST(MtiaTrace, OperatorsGetTheirDeviceTimeThroughTheLaunchingCall) {
  const trace::RankTrace t = load_one("mtia", mtia_trace());
  const OperatorTable table = compute_operator_table(t);
  EXPECT_EQ(table.attributed_device_events, 16);
  EXPECT_EQ(table.unattributed_device_events, 0);
  const OperatorRow* mul = nullptr;
  for (const OperatorRow& row : table.rows) {
    if (row.name == "aten::mul" && row.side == OpSide::kHost) mul = &row;
  }
  ASSERT_NE(mul, nullptr);
  EXPECT_EQ(mul->calls, 8);
  EXPECT_EQ(mul->self_device_ns, 8 * 100'000);
  EXPECT_EQ(mul->device_total_ns, 8 * 100'000);
  EXPECT_EQ(table.sum_self_device_ns, 8 * 100'000);  // the device rows: kernels and dma_requests
  EXPECT_NEAR(mul->self_device_pct, 100.0, 1e-9);

  // itwinai's rule over torch's rows: the aten::mul row holds all device time; the device rows
  // (customized_fba_mul..., dma_request) hold it again and match no ATen pattern. So half of the
  // pooled self device time is "computation"; before the join it was none (0 %).
  const ComputationFraction f = computation_fraction(table);
  EXPECT_EQ(f.basis, tables::FractionBasis::kDeviceSelf);
  EXPECT_EQ(f.computation_ns, 8 * 100'000);
  EXPECT_EQ(f.total_ns, 2 * 8 * 100'000);
  EXPECT_NEAR(f.fraction, 0.5, 1e-12);
}

TEST(MtiaTrace, EveryAnalysisCountsTheSameDeviceEvents) {
  const trace::RankTrace t = load_one("mtia", mtia_trace());
  const AnalysisWindow w = compute_analysis_window(t);
  const DeviceEvents dev = select_device_events(t, w.rows);
  const TemporalBreakdown tb = temporal_breakdown(t, w.rows);
  EXPECT_EQ(tb.device_events, static_cast<int64_t>(dev.size()));
  int64_t dma = 0, computation = 0;
  for (size_t i = 0; i < dev.size(); ++i) {
    if (t.name(dev.rows[i]) == "dma_request") {
      ++dma;
      EXPECT_EQ(dev.type[i], KernelType::kMemory);
    } else {
      ++computation;
      EXPECT_EQ(dev.type[i], KernelType::kComputation);
    }
  }
  EXPECT_GT(dma, 0);  // dma_request has no stream and is still device work (HTA drops it)
  EXPECT_EQ(dma, computation);
  // 95 % of the busy device time is computation (95 of every 100 us), as the kernel breakdown says.
  const KernelBreakdown kb = kernel_breakdown(t, w.rows);
  int64_t comp_ns = 0;
  for (const TypeShare& s : kb.partition) comp_ns += s.types == kComputationBit ? s.ns : 0;
  EXPECT_NEAR(static_cast<double>(comp_ns) / static_cast<double>(kb.busy_ns()), 0.95, 0.02);
}

TEST(MtiaTrace, OverlapsAreNotGaps) {
  const trace::RankTrace t = load_one("mtia", mtia_trace());
  const AnalysisWindow w = compute_analysis_window(t, WindowOptions{.include_last_step = true});
  const std::vector<StreamIdle> idle = idle_time_breakdown(t, w.rows);
  const StreamIdle* s1 = nullptr;
  for (const StreamIdle& s : idle) {
    if (s.stream == 1) s1 = &s;
  }
  ASSERT_NE(s1, nullptr);
  EXPECT_EQ(s1->events, 8);
  EXPECT_EQ(s1->overlaps, 2);  // the second kernel of each step
  int64_t gaps = 0;
  for (const Distribution& d : s1->gaps) {
    gaps += d.count;
    if (d.count > 0) {  // no zero-length gap stands in for an overlap
      EXPECT_GT(d.min, 0);
    }
  }
  EXPECT_EQ(gaps, 8 - 1 - 2);
  // Every true gap here is 100 us or more: no kernel wait at all (HTA would count 2 of 0 us).
  EXPECT_EQ(s1->gaps[static_cast<int>(IdleCategory::kKernelWait)].count, 0);
}

// ROCm: one step; hipLaunchKernel launches a kernel on stream 0, hipMemcpyAsync a copy.
std::string rocm_trace() {
  std::string ev;
  auto add = [&](const std::string& e) { ev += (ev.empty() ? "" : ",\n") + e; };
  add(x_event("user_annotation", "ProfilerStep#3", 10, 10, 0, 1000, "\"External id\":1"));
  add(x_event("cpu_op", "aten::add", 10, 10, 10, 100, "\"External id\":2"));
  add(x_event("cuda_runtime", "hipLaunchKernel", 10, 10, 20, 10, "\"External id\":2,\"correlation\":7"));
  add(x_event("kernel", "void at::native::elementwise_kernel<128, 4>(int)", 2, 0, 200, 50,
              "\"External id\":2,\"device\":2,\"stream\":0,\"correlation\":7,\"kind\":\"Dispatch Kernel\""));
  add(x_event("cpu_op", "aten::copy_", 10, 10, 150, 100, "\"External id\":3"));
  add(x_event("cuda_runtime", "hipMemcpyWithStream", 10, 10, 160, 50, "\"External id\":3,\"correlation\":8"));
  add(x_event("gpu_memcpy", "Memcpy DtoH (Device -> Host)", 2, 0, 300, 20,
              "\"device\":2,\"stream\":0,\"correlation\":8,\"kind\":\"CopyDeviceToHost\""));
  return R"({"deviceProperties":[{"id":2,"name":"AMD Instinct MI250X"}],"traceEvents":[)" + ev + "]}";
}

TEST(RocmTrace, StepsCountKernelsAndCopiesOnStreamZero) {
  const trace::RankTrace t = load_one("rocm", rocm_trace());
  const ProfilerSteps steps = find_profiler_steps(t);
  ASSERT_EQ(steps.steps.size(), 1u);
  EXPECT_EQ(steps.steps[0].kernels, 2);
  EXPECT_EQ(steps.steps[0].gpu_busy_ns, 70'000);
  EXPECT_EQ(steps.steps[0].last_kernel_end_ns - steps.steps[0].first_kernel_start_ns, 120'000);
  // The copy reaches aten::copy_ through its hipMemcpyWithStream call (it has no External id).
  const OperatorTable table = compute_operator_table(t);
  EXPECT_EQ(table.unattributed_device_events, 0);
  for (const OperatorRow& row : table.rows) {
    if (row.name == "aten::copy_" && row.side == OpSide::kHost) {
      EXPECT_EQ(row.self_device_ns, 20'000);
    }
    if (row.name == "aten::add" && row.side == OpSide::kHost) {
      EXPECT_EQ(row.self_device_ns, 50'000);
    }
  }
}

TEST(DeviceEventKind, OneClassifierForEveryBackend) {
  using trace::Category;
  EXPECT_EQ(device_event_kind(Category::kKernel), DeviceEventKind::kKernel);
  EXPECT_EQ(device_event_kind(Category::kGpuMemcpy), DeviceEventKind::kMemcpy);
  EXPECT_EQ(device_event_kind(Category::kGpuMemset), DeviceEventKind::kMemset);
  EXPECT_EQ(device_event_kind(Category::kMtiaCcpEvents), DeviceEventKind::kMtia);
  EXPECT_EQ(device_event_kind(Category::kCudaSync), DeviceEventKind::kSync);
  EXPECT_EQ(device_event_kind(Category::kGpuUserAnnotation), DeviceEventKind::kNotDevice);
  EXPECT_EQ(device_event_kind(Category::kCudaRuntime), DeviceEventKind::kNotDevice);  // incl. mtia_runtime
  EXPECT_EQ(trace::category_from_name("mtia_ccp_events"), Category::kMtiaCcpEvents);
  EXPECT_EQ(trace::category_from_name("mtia_runtime"), Category::kCudaRuntime);
  EXPECT_TRUE(is_stream_work(Category::kMtiaCcpEvents));
  EXPECT_FALSE(is_stream_work(Category::kCudaSync));
}

}  // namespace
}  // namespace scaleprof::analysis
